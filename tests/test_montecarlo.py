"""Unit tests for dpcore.montecarlo.

Besides power and validity on known laws, the false-alarm guarantee itself is
tested: each check is run at a loose alpha over many seeds on a TRUE claim, and
the number of rejections must be consistent with (at most) alpha, judged by an
exact binomial tail at level 1e-6 so that this test itself essentially never
fails by chance.
"""

import math

import numpy as np
import pytest
from scipy import special, stats

import dpcore
from dpcore.montecarlo import median_of_means_radius


def lap(loc=0.0, b=1.0):
    return lambda rng, n: rng.laplace(loc, b, n)


def max_allowed_rejections(trials: int, alpha: float, level: float = 1e-6) -> int:
    """Smallest k with P(Binomial(trials, alpha) > k) <= level."""
    return int(stats.binom.isf(level, trials, alpha))


ALPHA_LOOSE = 0.05
TRIALS = 300


@pytest.mark.parametrize(
    "run",
    [
        pytest.param(
            lambda seed: dpcore.check_probability(
                lap(), lambda v: v > 1, 2000, 0.5 * math.exp(-1), alpha=ALPHA_LOOSE, rng=seed
            ),
            id="probability",
        ),
        pytest.param(
            lambda seed: dpcore.check_bounded_mean(
                lambda r, n: r.random(n) ** 2, 2000, 1 / 3, lower=0, upper=1, alpha=ALPHA_LOOSE, rng=seed
            ),
            id="bounded-mean",
        ),
        pytest.param(
            lambda seed: dpcore.check_mean(lap(1.0, 2.0), 2000, 1.0, variance_bound=8.0, alpha=ALPHA_LOOSE, rng=seed),
            id="mean",
        ),
        pytest.param(
            lambda seed: dpcore.check_variance(lap(0.0, 1.0), 4000, 2.0, kurtosis_bound=6, alpha=ALPHA_LOOSE, rng=seed),
            id="variance",
        ),
        pytest.param(
            lambda seed: dpcore.check_cdf(lap(), 2000, stats.laplace().cdf, alpha=ALPHA_LOOSE, rng=seed),
            id="cdf",
        ),
    ],
)
def test_false_alarm_rate_is_at_most_alpha(run):
    rejections = sum(not run(seed).passed for seed in range(TRIALS))
    assert rejections <= max_allowed_rejections(TRIALS, ALPHA_LOOSE), rejections


def test_one_sided_probability_false_alarm():
    # claim p <= 0.3 where p = 0.3 exactly (the boundary): rejections must be rare.
    rej = sum(
        not dpcore.check_probability(
            lambda r, n: r.random(n), lambda v: v < 0.3, 1000, 0.3, alternative="less", alpha=ALPHA_LOOSE, rng=s
        ).passed
        for s in range(TRIALS)
    )
    assert rej <= max_allowed_rejections(TRIALS, ALPHA_LOOSE)


def test_power_each_check_rejects_wrong_claims():
    n = 200_000
    assert not dpcore.check_probability(lap(), lambda v: v > 1, n, 0.2, rng=1).passed
    assert not dpcore.check_bounded_mean(lambda r, k: r.random(k), n, 0.52, lower=0, upper=1, rng=1).passed
    assert not dpcore.check_mean(lap(), n, 0.1, variance_bound=2.0, rng=1).passed
    assert not dpcore.check_variance(lap(), n, 1.0, kurtosis_bound=6, rng=1).passed
    assert not dpcore.check_cdf(lap(), n, stats.norm(0, math.sqrt(2)).cdf, rng=1).passed


def test_one_sided_probability_directions():
    smp = lambda r, n: r.random(n)  # noqa: E731
    assert dpcore.check_probability(smp, lambda v: v < 0.3, 100_000, 0.35, alternative="less", rng=2).passed
    assert not dpcore.check_probability(smp, lambda v: v < 0.3, 100_000, 0.28, alternative="less", rng=2).passed
    assert dpcore.check_probability(smp, lambda v: v < 0.3, 100_000, 0.28, alternative="greater", rng=2).passed
    assert not dpcore.check_probability(smp, lambda v: v < 0.3, 100_000, 0.35, alternative="greater", rng=2).passed


def test_clopper_pearson_matches_scipy():
    res = dpcore.probability_result(37, 200, 0.2, alpha=0.05)
    ci = stats.binomtest(37, 200).proportion_ci(confidence_level=0.95, method="exact")
    assert res.ci_low == pytest.approx(ci.low, rel=1e-10)
    assert res.ci_high == pytest.approx(ci.high, rel=1e-10)
    edge = dpcore.probability_result(0, 50, 0.0, alpha=0.01)
    assert edge.ci_low == 0.0 and edge.passed
    assert edge.ci_high == pytest.approx(1 - 0.005 ** (1 / 50), rel=1e-12)


def test_median_of_means_radius_is_valid_and_beats_textbook_constant():
    n, var, alpha = 1_000_000, 1.0, 1e-6
    r, k = median_of_means_radius(n, var, alpha)
    assert k % 2 == 1
    # the binomial tail at the chosen radius is within alpha
    p = var / ((n // k) * r**2)
    h = (k + 1) // 2
    assert special.betainc(h, k - h + 1, p) <= alpha * (1 + 1e-9)
    assert r <= math.sqrt(32 * math.log(1 / alpha) / n)  # Lugosi-Mendelson's constant


def test_results_reproducible_and_chunking_does_not_change_means():
    a = dpcore.check_mean(lap(), 100_000, 0.0, variance_bound=2, rng=5, chunk_size=1000)
    b = dpcore.check_mean(lap(), 100_000, 0.0, variance_bound=2, rng=5, chunk_size=1000)
    assert a == b
    c = dpcore.check_cdf(lap(), 50_000, stats.laplace().cdf, rng=3, chunk_size=7_777)
    assert c.n == 50_000 and c.passed


def test_memory_flat_chunking_calls_sampler_with_bounded_sizes():
    sizes = []

    def smp(rng, n):
        sizes.append(n)
        return rng.random(n)

    dpcore.check_bounded_mean(smp, 1_000_000, 0.5, lower=0, upper=1, rng=0, chunk_size=50_000)
    assert max(sizes) <= 50_000 and sum(sizes) == 1_000_000


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: dpcore.check_probability(lap(), lambda v: v > 0, 100, 1.5), "claimed"),
        (lambda: dpcore.check_probability(lap(), lambda v: v > 0, 100, 0.5, alpha=0), "alpha"),
        (lambda: dpcore.check_probability(lap(), lambda v: v > 0, 0, 0.5), "n"),
        (lambda: dpcore.check_probability(lap(), lambda v: v > 0, 100, 0.5, alternative="both"), "alternative"),
        (lambda: dpcore.check_mean(lap(), 100, 0.0, variance_bound=0.0), "variance_bound"),
        (lambda: dpcore.check_mean(lap(), 100, 0.0, variance_bound=math.nan), "variance_bound"),
        (lambda: dpcore.check_variance(lap(), 100, 1.0, kurtosis_bound=0.5), "kurtosis_bound"),
        (lambda: dpcore.check_variance(lap(), 100, -1.0, kurtosis_bound=6), "claimed"),
        (lambda: dpcore.check_bounded_mean(lap(), 100, 0.0, lower=1, upper=0), "lower"),
        (lambda: dpcore.check_bounded_mean(lap(), 100, 0.0, lower=-1, upper=1, rng=0), "outside"),
        (lambda: dpcore.check_mean(lambda r, n: np.full(n, np.nan), 100, 0.0, variance_bound=1), "NaN"),
        (lambda: dpcore.check_mean(lambda r, n: np.zeros(n + 1), 100, 0.0, variance_bound=1), "length"),
        (lambda: dpcore.check_cdf(lap(), 100, lambda g: g * np.nan), "cdf"),
        (lambda: dpcore.probability_result(5, 3, 0.5), "hits"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_result_string_mentions_verdict_and_method():
    res = dpcore.check_mean(lap(), 10_000, 0.0, variance_bound=2, rng=0)
    text = str(res)
    assert "PASS" in text and "median of means" in text and "1.0e-06" in text


def test_clopper_pearson_bounds_vectorised_matches_scalar_and_refuses_bad_counts():
    from dpcore.montecarlo import clopper_pearson_bounds

    lo, hi = clopper_pearson_bounds(np.array([[0, 37], [200, 37]]), 200, 0.025)
    ci = stats.binomtest(37, 200).proportion_ci(confidence_level=0.95, method="exact")
    assert lo.shape == (2, 2) and lo[0, 0] == 0.0 and hi[1, 0] == 1.0
    assert lo[0, 1] == lo[1, 1] == pytest.approx(ci.low, rel=1e-10)
    assert hi[0, 1] == pytest.approx(ci.high, rel=1e-10)
    with pytest.raises(ValueError, match="hits"):
        clopper_pearson_bounds([201], 200, 0.025)
    with pytest.raises(ValueError, match="level"):
        clopper_pearson_bounds([1], 200, 1.5)


def test_probability_acceptance_matches_direct_sum() -> None:
    """Exact acceptance probability against a direct sum over every count (small n)."""
    from scipy import stats as st

    n, p, c, a = 60, 0.3, 0.45, 0.05
    k = np.arange(n + 1)
    lo, hi = dpcore.montecarlo.clopper_pearson_bounds(k, n, a / 2)
    direct = st.binom.pmf(k[(lo <= c) & (c <= hi)], n, p).sum()
    got = dpcore.probability_acceptance(n, p, c, alpha=a)
    assert abs(got - direct) < 1e-12
    # a true claim is accepted with probability >= 1 - alpha (the test's guarantee)
    assert dpcore.probability_acceptance(n, p, p, alpha=a) >= 1 - a
    # one-sided: "less" accepts every claim above the truth more often than the truth itself
    assert dpcore.probability_acceptance(n, p, 0.9, alternative="less", alpha=a) > 0.999
    with pytest.raises(ValueError, match="true_p"):
        dpcore.probability_acceptance(n, 1.5, c)
    with pytest.raises(ValueError, match="alternative"):
        dpcore.probability_acceptance(n, p, c, alternative="greter")  # type: ignore[arg-type]


def test_check_law_four_checks_pass_on_the_truth_and_each_fails_on_its_wrong_claim():
    lap = lambda g, n: dpcore.LaplaceMechanism(0.5).sample(3.0, n, g)  # noqa: E731
    truth = dict(
        cdf=stats.laplace(3.0, 0.5).cdf,
        mean=3.0,
        variance=0.5,
        variance_bound=0.5,
        kurtosis_bound=6,
        event=lambda v: np.abs(v - 3.0) > 1.0,
        event_probability=float(np.exp(-2)),
    )
    ok = dpcore.check_law(lap, 200_000, **truth, rng=5, name="Lap(3, 0.5)")
    assert [r.name for r in ok] == [f"{k} (Lap(3, 0.5))" for k in ("CDF", "mean", "variance", "event")]
    assert all(r.passed and r.alpha == 1e-6 / 4 for r in ok), ok
    wrong = {"cdf": stats.norm(3.0, 0.5).cdf, "mean": 3.1, "variance": 0.25, "event_probability": np.exp(-2) / 2}
    for i, (key, value) in enumerate(wrong.items()):
        res = dpcore.check_law(lap, 200_000, **{**truth, key: value}, rng=6)
        assert not res[i].passed, (key, res[i])
        assert all(r.passed for j, r in enumerate(res) if j != i), (key, res)
    # a Generator seeds the four streams (256 bits drawn from it)
    assert all(r.passed for r in dpcore.check_law(lap, 50_000, **truth, rng=np.random.default_rng(1)))


# --------------------------------------------------------------------------- issue 15: no wrong number at any input
def uniform(rng, n):
    return rng.random(n)


PROB_ARGS = {"hits": 3, "n": 10, "claimed": 0.3}


@pytest.mark.parametrize(
    "override,param",
    [
        ({"alternative": "greter"}, "alternative"),  # a typo ran a two-sided test: twice the promised false alarm
        ({"alternative": ["less"]}, "alternative"),
        ({"claimed": math.nan}, "claimed"),
        ({"claimed": 1.5}, "claimed"),
        ({"claimed": -1}, "claimed"),
        ({"claimed": "0.3"}, "claimed"),
        ({"claimed": 0.3 + 0j}, "claimed"),
        ({"claimed": True}, "claimed"),
        ({"hits": 2.5}, "hits"),
        ({"hits": True}, "hits"),
        ({"hits": -1}, "hits"),
        ({"n": 10**400}, "n"),
        ({"n": 2**53 + 1, "hits": 3}, "n"),
        ({"alpha": True}, "alpha"),
        ({"alpha": math.nan}, "alpha"),
    ],
)
def test_probability_result_refuses_each_bad_argument_by_name(override, param):
    with pytest.raises(ValueError, match=rf"^{param}\b"):
        dpcore.probability_result(**{**PROB_ARGS, **override})


def test_probability_result_alternatives_keep_their_false_alarm():
    # the one-sided bound at level alpha is the beta quantile (computed here with scipy.stats.beta, not the code)
    res = dpcore.probability_result(30, 100, 0.2, alternative="less", alpha=1e-3)
    assert res.ci_low == pytest.approx(stats.beta.ppf(1e-3, 30, 71), rel=1e-10)
    res = dpcore.probability_result(30, 100, 0.2, alternative="two-sided", alpha=1e-3)
    assert res.ci_low == pytest.approx(stats.beta.ppf(5e-4, 30, 71), rel=1e-10)


@pytest.mark.parametrize(
    "event",
    [
        pytest.param(lambda x: np.where(x > 0.5, np.nan, 0.0), id="nan-is-not-a-hit"),
        pytest.param(lambda x: x, id="floats"),
        pytest.param(lambda x: (x > 0.5).astype(int) * 2, id="integers-not-0-1"),
        pytest.param(lambda x: (x > 0.5).astype(str), id="strings"),
        pytest.param(lambda x: x[:1] > 0.5, id="wrong-length"),
    ],
)
def test_event_must_return_booleans(event):
    # bool(NaN) is True: a NaN used to count as a hit
    with pytest.raises(ValueError, match="event"):
        dpcore.check_probability(uniform, event, 1000, 0.5, rng=0)


def test_event_may_return_integers_zero_one():
    as_bool = dpcore.check_probability(uniform, lambda x: x > 0.25, 5000, 0.75, rng=4)
    as_int = dpcore.check_probability(uniform, lambda x: (x > 0.25).astype(np.int8), 5000, 0.75, rng=4)
    assert as_bool.details["hits"] == as_int.details["hits"]


@pytest.mark.parametrize(
    "call,param",
    [
        (lambda: dpcore.check_mean(uniform, 100, math.nan, variance_bound=1.0), "claimed"),
        (lambda: dpcore.check_mean(uniform, 100, math.inf, variance_bound=1.0), "claimed"),
        (lambda: dpcore.check_mean(uniform, 100, "0.5", variance_bound=1.0), "claimed"),
        (lambda: dpcore.check_bounded_mean(uniform, 100, math.nan, lower=0, upper=1), "claimed"),
        (lambda: dpcore.check_bounded_mean(uniform, 100, 0.5, lower=True, upper=1), "lower"),
        (lambda: dpcore.check_bounded_mean(uniform, 100, 0.5, lower=-1e308, upper=1e308), "lower"),
        (lambda: dpcore.check_probability(uniform, lambda x: x > 0.5, 100, math.nan), "claimed"),
        (lambda: dpcore.check_probability(uniform, lambda x: x > 0.5, 100, 0.5, alternative="greter"), "alternative"),
        (lambda: dpcore.check_probability(uniform, lambda x: x > 0.5, 10**400, 0.5), "n"),
        (lambda: dpcore.check_probability(uniform, lambda x: x > 0.5, True, 0.5), "n"),
        (lambda: dpcore.check_mean(uniform, 10, 0.5, variance_bound=1.0, chunk_size=10**12), "chunk_size"),
        (lambda: dpcore.check_cdf(uniform, 100, lambda g: np.clip(g, 0, 1), grid=[0.5, math.nan]), "grid"),
        (lambda: dpcore.check_cdf(uniform, 100, lambda g: np.clip(g, 0, 1), grid=[]), "grid"),
        (lambda: dpcore.check_cdf(uniform, 100, lambda g: np.clip(g, 0, 1), grid_size=10**10), "grid_size"),
        (lambda: dpcore.clopper_pearson_bounds([2.5], 10, 0.01), "hits"),
        (lambda: dpcore.clopper_pearson_bounds(np.array([True]), 10, 0.01), "hits"),
        (lambda: dpcore.clopper_pearson_bounds([3], 10**400, 0.01), "n"),
        (lambda: dpcore.probability_acceptance(10**15, 0.5, 0.5), "n"),
        (lambda: dpcore.probability_acceptance(100, math.nan, 0.5), "true_p"),
        (lambda: dpcore.probability_acceptance(100, 0.5, 0.5, alternative="lesser"), "alternative"),
        (lambda: median_of_means_radius(10**400, 1.0, 0.1), "n"),
    ],
)
def test_every_public_function_names_its_bad_argument(call, param):
    with pytest.raises(ValueError, match=rf"\b{param}\b"):
        call()


def test_limits_are_checked_before_any_draw():
    calls = []

    def spy(rng, n):
        calls.append(n)
        return rng.random(n)

    with pytest.raises(ValueError, match="MAX_SAMPLES"):
        dpcore.check_mean(spy, dpcore.montecarlo.MAX_SAMPLES + 1, 0.5, variance_bound=1.0)
    assert calls == []


def test_subnormal_alpha_gives_a_finite_radius():
    # log(4 / 5e-324) overflowed to inf (a test that passes everything); log 4 - log alpha is finite
    res = dpcore.check_bounded_mean(uniform, 1000, 0.5, lower=0, upper=1, alpha=5e-324, rng=1)
    expected = math.sqrt((math.log(4) + 744.44007192138126) / 2000)  # -log(5e-324) = 744.44 (mpmath)
    assert res.details["radius_hoeffding"] == pytest.approx(expected, rel=1e-12)
    res = dpcore.check_cdf(uniform, 1000, lambda g: np.clip(g, 0, 1), alpha=5e-324, rng=1)
    assert math.isfinite(res.details["dkw_radius"])


def test_a_two_sided_level_that_underflows_is_refused_by_name_and_small_splits_still_work():
    # issue 28: alpha 5e-324 halved to 0 and was refused as "level"; a one-sided test keeps it, and a
    # caller's split such as event_detection_miss's alpha / 4 (1e-300 / 4) is still a valid level
    with pytest.raises(ValueError, match="^alpha = 5e-324 is too small for a two-sided test"):
        dpcore.probability_result(5, 10, 0.5, alpha=5e-324)
    with pytest.raises(ValueError, match="^alpha = 5e-324 is too small for a two-sided test"):
        dpcore.probability_acceptance(10, 0.5, 0.5, alpha=5e-324)
    assert dpcore.probability_result(5, 10, 0.5, alpha=5e-324, alternative="less").passed
    assert dpcore.probability_result(5, 10, 0.5, alpha=1e-323).passed
    assert 0.0 <= dpcore.event_detection_miss(0.5, 0.1, 1000, 1000, 1.0, events=1, alpha=1e-300) <= 1.0
    r, _ = median_of_means_radius(1000, 1.0, 5e-324)  # p* = 5e-324 for one block: sigma^2 / (m p*) overflowed
    assert 0.0 < r < math.inf
