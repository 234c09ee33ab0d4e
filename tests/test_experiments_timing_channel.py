"""dpbook.experiments.timing_channel: the measurements' bookkeeping (word counts, rank tests, tables, the
attack's accounting) on inputs whose answer is known. Wall time is never asserted: it depends on the load."""

from __future__ import annotations

import numpy as np
import pytest

import dpcore
from dpbook.experiments import timing_channel as T

pytest.importorskip("opendp")


def _result(noise: list[int], cost: list[float], unit: str = "ns") -> T.TimingResult:
    n, c = np.array(noise, dtype=np.int64), np.array(cost)
    return T.TimingResult("toy", unit, n, c, *T._spearman(n, c))


def test_spearman_auc_and_buckets_on_known_inputs() -> None:
    rising = _result([0, 0, 1, 2, 3, 4, 5, 25], [1, 1, 2, 3, 4, 5, 6, 30])
    assert rising.rho > 0.95 and rising.pvalue < 0.01
    assert rising.auc() == 1.0  # every draw with |z| >= 3 took longer than every z = 0
    assert [b[0] for b in rising.buckets()] == ["0", "1-2", "3-5", ">= 21"]
    flat = _result([0, 3, 5, 0], [2, 2, 2, 2])
    assert (flat.rho, flat.pvalue) == (0.0, 1.0) and flat.auc() == 0.5
    assert np.isnan(_result([1, 2], [1, 2]).auc())  # no z = 0 draw
    table = T.timing_table([rising, flat])
    assert table.count("\n") == 3 and "magnitude >= 21" in table and "|noise|" not in table


def test_count_words_is_reproducible_and_matches_the_generator() -> None:
    a = T.count_words("laplace", 10, 200, seed=3)
    b = T.count_words("laplace", 10, 200, seed=3)
    assert np.array_equal(a.cost, b.cost) and np.array_equal(a.noise, b.noise)
    assert a.cost.min() >= 1 and a.unit == "words"
    # the words counted add up to the generator's advance over the same draws
    gen = dpcore.as_generator(3)
    dpcore.sample_discrete_laplace(10, size=1, rng=gen)
    start = gen.bit_generator.state
    for _ in range(200):
        dpcore.sample_discrete_laplace(10, size=1, rng=gen)
    ref = np.random.PCG64()
    ref.state = start
    ref.random_raw(int(a.cost.sum()))
    assert ref.state["state"]["state"] == gen.bit_generator.state["state"]["state"]
    g = T.count_words("gaussian", 100, 50, seed=4)
    assert g.noise.size == 50


def test_releases_and_time_releases() -> None:
    rel = T.dpcore_release("laplace", 10, rng=7)
    r = T.time_releases("dpcore", rel, 50, x=5)
    assert r.noise.size == 50 and np.all(r.cost > 0) and r.unit == "ns"
    assert np.unique(r.noise).size > 1  # one stream over the calls, not the same seed each time
    again = T.time_releases("dpcore", T.dpcore_release("laplace", 10, rng=7), 50, x=5)
    assert np.array_equal(r.noise, again.noise)
    odp = T.opendp_release("gaussian", 10.0)
    assert isinstance(odp(3), int)


def test_timing_attack_accounting() -> None:
    """A release whose noise alternates 1, 0, 1, 0, ...: the rates lie where they must, and the counts of
    disagreements match the two success rates."""
    state = {"i": 0}

    def release(x: int) -> int:
        state["i"] += 1
        return x + state["i"] % 2

    a = T.timing_attack("toy", release, 1.0, 200, 200, seed=1)
    assert 0.0 <= a.success_timed <= 1.0 and 0.0 <= a.sign_pvalue <= 1.0
    assert 0.5 <= a.success_output <= 1.0  # plain rule: right whenever x = 1, and when x = 0 with noise 0
    right, wrong = a.disagree
    assert right - wrong == round((a.success_timed - a.success_output) * a.n_test)


def test_plot_timing() -> None:
    import matplotlib

    matplotlib.use("Agg")
    fig = T.plot_timing([_result([0] * 30 + [1] * 30, [1.0] * 60), _result([0] * 30, [2.0] * 30, unit="words")])
    assert len(fig.axes) == 2
