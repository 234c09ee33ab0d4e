"""Tests of dpcore.auditing: validity, power, detection, scale-out equality, memory, bad input."""

from __future__ import annotations

import math
import tracemalloc
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import dpbook
import dpcore
from dpcore.auditing import ReleaseOutputs, audit_epsilon
from dpcore.mechanisms import GaussianMechanism, LaplaceMechanism
from dpcore.montecarlo import check_cdf, probability_result


def _discrete_laplace_outputs(data, size, rng):
    return dpcore.discrete_laplace_mechanism(np.full(size, int(data)), 1, 1, rng=rng)


def test_fast_laplace_outputs_follow_the_laplace_law():
    # DKW test (false alarm <= 1e-6) of the exponential-times-random-sign construction
    mech = LaplaceMechanism(2.0)
    cdf = lambda x: np.where(x < 3, 0.5 * np.exp((x - 3) / 2), 1 - 0.5 * np.exp(-(x - 3) / 2))  # noqa: E731
    res = check_cdf(lambda g, n: mech(3.0, n, g), 400_000, cdf, rng=11)
    assert res.passed, res
    wrong = lambda x: np.where(x < 3, 0.5 * np.exp((x - 3) / 2.2), 1 - 0.5 * np.exp(-(x - 3) / 2.2))  # noqa: E731
    assert not check_cdf(lambda g, n: mech(3.0, n, g), 400_000, wrong, rng=11).passed


def test_validity_and_power_on_correct_laplace_eps1():
    res = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 10**6, rng=2026)
    assert res.epsilon_lower <= 1.0  # validity
    assert res.epsilon_lower >= 0.9  # power with 1e6 samples per side
    assert res.n_selection + res.n_estimation == 10**6
    assert 1 <= len(res.events) <= 4 and res.best in res.events
    b = res.best
    assert b.hits_numerator <= res.n_estimation and b.p_lower < b.hits_numerator / res.n_estimation


def test_validity_rate_over_many_seeds():
    # 60 independent audits of an exactly 1-DP mechanism; each exceeds 1 with prob <= 5 %.
    over = sum(audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 20_000, rng=s).epsilon_lower > 1.0 for s in range(60))
    assert probability_result(over, 60, 0.05, alternative="less").passed


def test_detection_claims_eps1_has_eps2():
    # scale 1/2 where 1/eps = 1 was claimed: really 2-DP
    res = audit_epsilon(LaplaceMechanism(0.5), 0.0, 1.0, 10**6, rng=7)
    assert res.epsilon_lower > 1.0
    assert res.epsilon_lower <= 2.0


def test_stray_factor_two_is_caught_through_release_adapter():
    mech = ReleaseOutputs(dpbook.flawed.laplace_stray_factor_two, sensitivity=1.0, epsilon=1.0)
    assert audit_epsilon(mech, 0.0, 1.0, 400_000, rng=3).epsilon_lower > 1.0
    ok = ReleaseOutputs(dpcore.laplace_mechanism, sensitivity=1.0, epsilon=1.0)
    res = audit_epsilon(ok, 0.0, 1.0, 400_000, rng=3)
    assert 0.85 <= res.epsilon_lower <= 1.0


def test_epsilon_delta_variant_on_gaussian():
    eps, delta = 0.5, 1e-5
    sigma = math.sqrt(2 * math.log(1.25 / delta)) / eps  # classic calibration, valid for eps < 1
    res = audit_epsilon(GaussianMechanism(sigma), 0.0, 1.0, 400_000, rng=5, delta=delta)
    assert 0.0 <= res.epsilon_lower <= eps and res.delta == delta
    # too little noise (std = sigma^2 confusion with sigma = 0.5) is caught
    bad = audit_epsilon(GaussianMechanism(0.25), 0.0, 1.0, 400_000, rng=5, delta=delta)
    assert bad.epsilon_lower > eps


def test_integer_outputs_use_unit_bins_and_stay_valid():
    res = audit_epsilon(_discrete_laplace_outputs, 0, 1, 100_000, rng=9)
    lo, hi, bins = res.grid
    assert hi - lo == bins and lo % 1 == 0.5  # half-integer edges
    assert 0.8 <= res.epsilon_lower <= 1.0


def test_reproducible_and_independent_of_rng_form():
    a = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 50_000, rng=4)
    b = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 50_000, rng=np.random.SeedSequence(4))
    assert a == b
    c = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 50_000, rng=np.random.default_rng(4))
    assert c.epsilon_lower <= 1.0


def test_process_pool_equals_serial():
    kw = dict(rng=123, chunk_size=1 << 14)
    serial = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 2_000_000, **kw)
    with ProcessPoolExecutor(2) as ex:
        parallel = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 2_000_000, executor=ex, **kw)
    assert parallel == serial
    with ProcessPoolExecutor(1) as ex:
        one = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 2_000_000, executor=ex, **kw)
    assert one == serial


def test_dask_sized_tasks_give_the_serial_result():
    # an executor that looks like Dask's gets tasks of up to 1024 chunks: with chunk_size 2^10 and 10^6
    # samples, the 195 selection chunks after the pilot and the 782 estimation chunks are one task per side
    # and phase (4 tasks; 2 x (ceil(195 / 64) + ceil(782 / 64)) = 34 on a plain pool), same result
    from concurrent.futures import ThreadPoolExecutor

    class Submits(ThreadPoolExecutor):
        def __init__(self, dask_like: bool) -> None:
            super().__init__(2)
            self.tasks = 0
            if dask_like:
                self._client = _NThreads()

        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.tasks += 1
            return super().submit(fn, *args, **kwargs)

    kw = dict(rng=7, chunk_size=1 << 10)
    serial = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 1_000_000, **kw)
    for dask_like, tasks in ((True, 4), (False, 34)):
        with Submits(dask_like) as ex:
            assert audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 1_000_000, executor=ex, **kw) == serial
        assert ex.tasks == tasks


class _NThreads:
    """The ``_client`` of a fake Dask executor: two threads."""

    def nthreads(self) -> dict[str, int]:
        return {"w": 2}


def test_dask_local_cluster_equals_serial():
    distributed = pytest.importorskip("dask.distributed")
    # chunks of 2^12: 48 selection and 196 estimation chunks per side, one Dask task each (4 per side on a pool)
    kw = dict(rng=99, chunk_size=1 << 12)
    serial = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 1_000_000, **kw)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        on_dask = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 1_000_000, executor=client.get_executor(), **kw)
    assert on_dask == serial


def test_memory_is_flat_in_n_samples():
    peaks = []
    for n in (1_000_000, 20_000_000):
        tracemalloc.start()
        audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, n, rng=1)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 1.5 * peaks[0] + 1e6
    assert peaks[1] < 20e6  # bytes; 20 million samples per side would be 320 MB if stored


def test_result_str_and_fields():
    res = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 10_000, rng=1, confidence=0.99)
    assert "epsilon >=" in str(res) and res.confidence == 0.99 and res.n_chunks >= 4


@pytest.mark.parametrize("n", [1, 0, -5, 2.5, "10"])
def test_bad_n_samples(n):
    with pytest.raises(ValueError, match="n_samples"):
        audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, n)


@pytest.mark.parametrize("c", [0.0, 1.0, 1.5, -0.1, float("nan")])
def test_bad_confidence(c):
    with pytest.raises(ValueError, match="confidence"):
        audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 100, confidence=c)


def test_bad_mechanism_outputs():
    with pytest.raises(ValueError, match="shape"):
        audit_epsilon(lambda d, n, g: np.zeros(n + 1), 0, 1, 100)
    with pytest.raises(ValueError, match="shape"):
        audit_epsilon(lambda d, n, g: np.zeros((n, 2)), 0, 1, 100)
    with pytest.raises(ValueError, match="NaN"):
        audit_epsilon(lambda d, n, g: np.where(g.random(n) < 0.5, np.nan, 0.0), 0, 1, 100)
    with pytest.raises(ValueError, match="NaN"):
        audit_epsilon(lambda d, n, g: np.full(n, np.inf), 0, 1, 100)
    with pytest.raises(ValueError, match="real numbers"):
        audit_epsilon(lambda d, n, g: np.array(["a"] * n), 0, 1, 100)
    with pytest.raises(ValueError, match="callable"):
        audit_epsilon(42, 0, 1, 100)


def test_bad_other_arguments():
    mech = LaplaceMechanism(1.0)
    with pytest.raises(ValueError, match="delta"):
        audit_epsilon(mech, 0, 1, 100, delta=1.0)
    with pytest.raises(ValueError, match="delta"):
        audit_epsilon(mech, 0, 1, 100, delta=-0.1)
    with pytest.raises(ValueError, match="rng"):
        audit_epsilon(mech, 0, 1, 100, rng=-1)
    with pytest.raises(ValueError, match="rng"):
        audit_epsilon(mech, 0, 1, 100, rng="seed")
    with pytest.raises(ValueError, match="selection_fraction"):
        audit_epsilon(mech, 0, 1, 100, selection_fraction=1.0)
    with pytest.raises(ValueError, match="scale"):
        LaplaceMechanism(0.0)
    with pytest.raises(ValueError, match="sigma"):
        GaussianMechanism(float("inf"))


def test_threshold_event_audit_power_is_computed_and_delta_is_honoured() -> None:
    """A fixed-event audit rejects the stray-factor mechanism with a computed miss bound, and
    the (eps, delta) check accepts a leak of probability delta that the pure check rejects."""
    import math

    from dpcore.auditing import audit_threshold_events
    from dpcore.event_ratios import event_detection_miss
    from dpcore.mechanisms import LaplaceMechanism

    t = np.linspace(-2, 3, 11)
    b = audit_threshold_events(LaplaceMechanism(0.5), 0.0, 1.0, 100_000, t, alpha=1e-7, rng=3)
    assert not b.check(1.0).passed  # true epsilon 2
    # the event {y <= 0}: P = 1/2 and e^-2/2
    miss = event_detection_miss(0.5, 0.5 * math.exp(-2.0), 100_000, 100_000, 1.0, events=2 * t.size, alpha=1e-7)
    assert miss < 1e-12
    ok = audit_threshold_events(LaplaceMechanism(1.0), 0.0, 1.0, 100_000, t, alpha=1e-7, rng=4)
    assert ok.check(1.0).passed

    def leak(data, size, rng):  # releases the data with probability 1e-3, else noise
        y = rng.laplace(0.0, 10.0, size)
        hit = rng.random(size) < 1e-3
        return np.where(hit, 100.0 * (1 + data), y)

    lb = audit_threshold_events(leak, 0.0, 1.0, 200_000, [150.0], alpha=1e-7, rng=5)
    assert not lb.check(0.5).passed and lb.check(0.5, delta=2e-3).passed
    assert lb.epsilon_lower_at(2e-3) <= lb.epsilon_lower


# --------------------------------------------------------------------------- bounded work (issue 15, section 2)


def _never_called(data, size, rng):
    raise AssertionError("the limits must be checked before any sample is drawn")


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(n_samples=10**12), "n_samples = 1,000,000,000,000 exceeds the limit max_samples = 1,000,000,000"),
        (dict(n_samples=2**63), "n_samples must be an integer <= 9223372036854775807"),  # beyond int64: refused first
        (dict(n_samples=1001, max_samples=1000), "pass max_samples=1001"),
        (dict(n_samples=100, bins=10**9), "bins = 1,000,000,000 exceeds the limit max_bins"),
        (dict(n_samples=100, bins=5000, max_bins=4096), "pass max_bins=5000"),
        (dict(n_samples=100, chunk_size=2**25), "chunk_size = 33,554,432 exceeds"),
        (dict(n_samples=10**6, chunk_size=1), "chunk_size = 1 makes about 1,000,001 chunks"),
        (dict(n_samples=100, max_samples=0), "max_samples must be an integer >= 1"),
        (dict(n_samples=100, max_bins=2.5), "max_bins must be an integer >= 1"),
        (dict(n_samples=100, progress="yes"), "progress must be True, False or None"),
    ],
)
def test_work_limits_are_checked_before_any_sample(kwargs, match):
    n = kwargs.pop("n_samples")
    with pytest.raises(ValueError, match=match):
        audit_epsilon(_never_called, 0.0, 1.0, n, **kwargs)


def test_raising_a_limit_explicitly_lets_the_audit_run():
    mech = LaplaceMechanism(1.0)
    a = audit_epsilon(mech, 0.0, 1.0, 1001, rng=3, max_samples=1001)
    assert a == audit_epsilon(mech, 0.0, 1.0, 1001, rng=3)  # the limit is no part of the result
    b = audit_epsilon(mech, 0.0, 1.0, 2000, rng=3, bins=5000, max_bins=5000)
    assert b.grid[2] == 5000
    c = audit_epsilon(mech, 0.0, 1.0, 3000, rng=3, chunk_size=1, max_samples=2**22)  # 3,001 chunks <= 2**22 // 1024
    assert c.n_chunks == 2 * 3000


def test_threshold_event_audit_refuses_samples_it_would_hold_in_memory():
    with pytest.raises(ValueError, match="n_samples = 10,000,001 exceeds the limit max_samples = 10,000,000"):
        dpcore.audit_threshold_events(_never_called, 0.0, 1.0, 10**7 + 1, [0.5])
    res = dpcore.audit_threshold_events(LaplaceMechanism(1.0), 0.0, 1.0, 200, [0.5], rng=1, max_samples=200)
    assert res.n == 200


def test_event_detection_miss_refuses_sizes_beyond_its_budget():
    from dpcore.event_ratios import event_detection_miss

    with pytest.raises(ValueError, match="n = 1,000,000,000 exceeds the limit max_samples = 100,000,000"):
        event_detection_miss(0.5, 0.1, 10**9, 10, 1.0, events=1)
    with pytest.raises(ValueError, match="n_prime = 200 exceeds the limit max_samples = 100"):
        event_detection_miss(0.5, 0.1, 100, 200, 1.0, events=1, max_samples=100)


def test_memory_is_flat_in_n_samples_on_a_process_pool():
    """The driver holds a bounded window of tasks and one histogram per stream, whatever the sample count."""
    peaks = []
    with ProcessPoolExecutor(2) as ex:
        audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 10**5, rng=1, executor=ex)  # warm the workers
        for n in (2_000_000, 40_000_000):
            tracemalloc.start()
            audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, n, rng=1, executor=ex)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
    assert peaks[1] < 1.5 * peaks[0] + 1e6
    assert peaks[1] < 20e6  # 40 million samples per side would be 640 MB if stored


# --------------------------------------------------------------------------- progress bar


def test_progress_bar_changes_no_result_and_prints_only_when_asked(capsys):
    mech = LaplaceMechanism(1.0)
    kw = dict(rng=8, chunk_size=1 << 12)
    quiet = audit_epsilon(mech, 0.0, 1.0, 300_000, progress=False, **kw)
    assert capsys.readouterr().err == ""
    auto = audit_epsilon(mech, 0.0, 1.0, 300_000, **kw)  # stderr is captured here: not a terminal
    assert capsys.readouterr().err == ""
    shown = audit_epsilon(mech, 0.0, 1.0, 300_000, progress=True, **kw)
    err = capsys.readouterr().err
    assert "600k/600k" in err  # both sides' samples, every one counted once
    assert quiet == auto == shown
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as ex:
        on_threads = audit_epsilon(mech, 0.0, 1.0, 300_000, progress=True, executor=ex, **kw)
    assert "600k/600k" in capsys.readouterr().err and on_threads == quiet


def test_progress_auto_mode_follows_whether_stderr_is_a_terminal(monkeypatch):
    import dpcore.auditing as auditing

    class Terminal:
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(auditing.sys, "stderr", Terminal())
    assert auditing._stderr_is_terminal()
    monkeypatch.setattr(auditing.sys, "stderr", None)
    assert not auditing._stderr_is_terminal()


# --------------------------------------------------------------------------- scale-out


def test_one_and_two_processes_and_threads_give_the_serial_audit():
    """Tasks are sized for each executor's workers (1, 2, 3): the integer counts, and so the bound, do not move."""
    from concurrent.futures import ThreadPoolExecutor

    kw = dict(rng=321, chunk_size=1 << 13)
    n = 1_500_000  # 4096 bins: enough distinct selection counts to share the beta quantiles among workers
    serial = audit_epsilon(GaussianMechanism(1.0), 0.0, 1.0, n, delta=1e-6, **kw)
    runs = {}
    for name, make in [
        ("1 process", lambda: ProcessPoolExecutor(1)),
        ("2 processes", lambda: ProcessPoolExecutor(2)),
        ("2 threads", lambda: ThreadPoolExecutor(2)),
        ("3 threads", lambda: ThreadPoolExecutor(3)),
    ]:
        with make() as ex:
            runs[name] = audit_epsilon(GaussianMechanism(1.0), 0.0, 1.0, n, delta=1e-6, executor=ex, **kw)
    assert all(r == serial for r in runs.values()), {k: r.epsilon_lower for k, r in runs.items()}


def _random_histograms(gen: np.random.Generator, trials: int):
    """Selection histograms of every shape: spread or sparse, identical sides, Laplace- and Gaussian-like
    shifts, ties and empty tails, with and without delta, one to 10^6 samples."""
    for trial in range(trials):
        bins = int(gen.integers(3, 700))
        n = int(gen.choice([1, 2, 5, 50, 1000, 10**5, 10**6]))
        x = np.linspace(-6, 6, bins + 2)
        shape = trial % 5
        if shape == 0:
            p, q = (gen.dirichlet(np.full(bins + 2, gen.choice([0.05, 1.0, 10.0]))) for _ in range(2))
        elif shape == 1:
            p, q = np.exp(-np.abs(x)), np.exp(-np.abs(x - gen.uniform(0, 2)) * gen.uniform(0.1, 3))
        elif shape == 2:
            p = q = gen.dirichlet(np.ones(bins + 2))
        elif shape == 3:
            p, q = np.zeros(bins + 2), np.zeros(bins + 2)
            p[gen.integers(0, bins + 2, 3)] = 1.0
            q[gen.integers(0, bins + 2, 3)] = 1.0
        else:
            p, q = np.exp(-(x**2) / 2), np.exp(-((x - gen.uniform(0, 3)) ** 2) / 2)
        h = [gen.multinomial(n, p / p.sum()), gen.multinomial(n, q / q.sum())]
        yield h, n, float(gen.choice([0.05, 1e-6, 0.5])), float(gen.choice([0.0, 1e-6, 0.01, 0.3]))


def _audit_histograms(gen: np.random.Generator, trials: int):
    """Selection histograms of real audits: Laplace and Gaussian pairs, 10^4 to 10^5 samples, 4096 bins."""
    from dpcore.auditing import _choose_grid

    for trial in range(trials):
        mech = LaplaceMechanism(1.0) if trial % 2 else GaussianMechanism(1.0)
        n = int(gen.choice([10**4, 10**5]))
        shift = float(gen.choice([0.03, 0.3, 1.0, 3.0]))
        grid = _choose_grid(np.concatenate([mech(0.0, 1 << 16, gen), mech(shift, 1 << 16, gen)]), 4096)
        h = [grid.counts(mech(0.0, n, gen)), grid.counts(mech(shift, n, gen))]
        yield h, n, float(gen.choice([0.05, 1e-6])), float(gen.choice([0.0, 1e-6]))


def _screen_check(h, n, alpha, delta):
    """(largest |screen - exact| score over the thresholds, exact best - exact score of the chosen events,
    whether a score is finite in one and not the other): exact scores from scipy.stats.beta, outside
    dpcore's code."""
    from scipy import stats

    from dpcore.auditing import _KINDS, _Bounds, _log_ratio, _select_events, _tails

    a = alpha / 8
    bounds, tails = _Bounds(n, a), [_tails(x) for x in h]

    def exact(k, kd):
        k, kd = np.asarray(k, float), np.asarray(kd, float)
        lo = np.where(k > 0, stats.beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0)
        hi = np.where(kd < n, stats.beta.isf(a, kd + 1, np.maximum(n - kd, 1)), 1.0)
        return _log_ratio(lo, hi, delta)

    err, mismatch, scores = 0.0, False, {}
    for tail, num in _KINDS:
        ti, s = int(tail == "upper"), int(num == "d_prime")
        k, kd = tails[s][ti], tails[1 - s][ti]
        ex = exact(k, kd)
        sc = _log_ratio(bounds.screen(0, k), bounds.screen(1, kd), delta)
        both = np.isfinite(ex) & np.isfinite(sc)
        mismatch |= bool(np.any(np.isfinite(ex) != np.isfinite(sc)))
        err = max(err, float(np.max(np.abs(ex[both] - sc[both]), initial=0.0)))
        scores[(tail, num)] = ex
    best = max(float(np.max(v)) for v in scores.values())
    chosen = max(float(scores[(t, m)][j]) for t, m, j in _select_events(h, n, alpha, delta))
    gap = best - chosen if np.isfinite(best) else 0.0
    return err, gap, mismatch


def test_screened_selection_is_within_twice_the_screens_error_of_the_best_event():
    # The selection ranks every threshold by interpolated Clopper-Pearson bounds and scores the best few
    # exactly. Whenever the screen's scores are finite exactly where the exact ones are, and within e of
    # them, the chosen event's exact score is within 2 e of the best threshold's (the screen's top event
    # is among the few scored exactly). Checked on histograms of every shape and of real audits; on the
    # audits the screen is accurate (e <= 0.02 nats; 0.0069 at most in 800 audits of 10^4 to 10^6 samples
    # when measured) and the loss of score small (<= 5e-3 nats; 5.7e-4 at most then)
    gen = np.random.default_rng()
    for h, n, alpha, delta in _random_histograms(gen, 60):
        err, gap, mismatch = _screen_check(h, n, alpha, delta)
        if not mismatch:
            assert gap <= 2 * err + 1e-12, (n, alpha, delta, err, gap)
    for h, n, alpha, delta in _audit_histograms(gen, 16):
        err, gap, mismatch = _screen_check(h, n, alpha, delta)
        assert not mismatch and gap <= 2 * err + 1e-12 and err <= 0.02 and gap <= 5e-3, (n, alpha, err, gap)
