"""Calibration of every statistical check: measured false-alarm rates, coverage and power.

Each test runs a real check R times on a TRUE claim at a loose alpha and
asserts ``calibrated`` (exact one-sided binomial test of "rate <= alpha": if
the check keeps its promise this assert fails with probability <= its level,
by the exactness of the binomial test). It then runs the check's
miscalibrated twin from :mod:`dpbook.flawed` on the same configuration and
asserts that it is NOT calibrated. R is chosen by
:func:`dpbook.calibration.replications_for` so that the miss probability
P(Bin(R, rho) < c) at the twin's true rate rho (computed exactly, or a lower
bound of it) is at most its share of the budget, and the test asserts that
computation too. The audit twins' rates have no closed form: a pilot run gives
a Clopper-Pearson lower bound, at its own share of the budget.

Budget: every test that can fail by chance splits 1e-6 evenly over its
chance asserts (``share(k)`` = 1e-6 / k), so each test's own false-alarm
probability is <= 1e-6 by the union bound.
"""

import ast
import pathlib

import numpy as np
import pytest
from scipy import stats

import dpcore
from dpbook import calibration as C
from dpbook import flawed as F
from dpcore.gaussian import gaussian_delta
from dpcore.montecarlo import clopper_pearson_bounds

LEVEL = 1e-6
ALPHA = 0.05


def share(k):
    """The level of each of k chance asserts of one test (union bound: total <= 1e-6)."""
    return LEVEL / k


def assert_pair(real, twin, twin_rate):
    """The real check is accepted, the twin rejected, and the twin's miss probability is <= its level."""
    assert real.calibrated, str(real)
    assert not twin.calibrated, str(twin)
    assert twin_rate > twin.alpha
    assert C.miss_probability(twin.replications, twin.alpha, twin_rate, twin.level) <= twin.level


def r_for(rate, level, alpha=ALPHA):
    """Replications for a miss <= level at the twin's rate, with the binomial test also at level."""
    return C.replications_for(alpha, rate, miss=level, level=level)


# --------------------------------------------------------------------------- probabilities


@pytest.mark.parametrize("n,p", [(100, 0.5), (40, 0.1)])
def test_probability_result_calibrated_and_unsplit_twin_rejected(n, p):
    lvl = share(4)  # real calibrated, twin caught, two consistency tests
    twin_rate = C.exact_probability_rate(n, p, 2 * ALPHA)
    R = max(r_for(twin_rate, lvl), 20_000)
    real = C.calibrate_probability_result(n, p, alpha=ALPHA, replications=R, rng=101, level=lvl)
    twin = C.calibrate_probability_result(
        n, p, alpha=ALPHA, replications=R, rng=102, check=F.probability_result_unsplit_alpha, level=lvl
    )
    assert_pair(real, twin, twin_rate)
    # the machinery itself: the measured rates agree with the exact ones (two-sided binomial tests)
    for res, exact in ((real, C.exact_probability_rate(n, p, ALPHA)), (twin, twin_rate)):
        assert stats.binomtest(res.rejections, R, exact).pvalue > lvl


@pytest.mark.parametrize("alternative", ["less", "greater"])
def test_probability_result_one_sided_calibrated(alternative):
    lvl = share(2)
    real = C.calibrate_probability_result(
        60, 0.3, alternative=alternative, alpha=ALPHA, replications=20_000, rng=103, level=lvl
    )
    assert real.calibrated, str(real)
    exact = C.exact_probability_rate(60, 0.3, ALPHA, alternative)
    assert exact <= ALPHA
    assert stats.binomtest(real.rejections, real.replications, exact).pvalue > lvl


def test_check_probability_chunked_path_calibrated_and_twin_rejected():
    lvl = share(2)
    n, p = 100, 0.5
    twin_rate = C.exact_probability_rate(n, p, 2 * ALPHA)
    R = r_for(twin_rate, lvl)
    real = C.calibrate_check_probability(n, p, alpha=ALPHA, replications=R, rng=104, chunk_size=37, level=lvl)
    twin = C.calibrate_check_probability(
        n, p, alpha=ALPHA, replications=R, rng=105, chunk_size=37, check=F.check_probability_unsplit_alpha, level=lvl
    )
    assert_pair(real, twin, twin_rate)


@pytest.mark.parametrize("n,p", [(100, 0.5), (50, 0.2), (300, 0.9)])
def test_clopper_pearson_coverage(n, p):
    lvl = share(4)
    twin_rate = C.exact_probability_rate(n, p, 2 * ALPHA)  # non-coverage of [lo, hi] at alpha per side
    R = max(r_for(twin_rate, lvl), 100_000)
    real = C.calibrate_clopper_pearson(n, p, alpha=ALPHA, replications=R, rng=106, level=lvl)
    twin = C.calibrate_clopper_pearson(
        n, p, alpha=ALPHA, replications=R, rng=107, interval=F.clopper_pearson_interval_unsplit, level=lvl
    )
    assert_pair(real, twin, twin_rate)
    for side in ("lower", "upper"):
        one = C.calibrate_clopper_pearson(n, p, side=side, alpha=ALPHA, replications=100_000, rng=108, level=lvl)
        assert one.calibrated, str(one)


def test_clopper_pearson_coverage_near_zero():
    # p = 0.02, n = 50: discreteness makes even the unsplit twin conservative (rate 0.018 < alpha),
    # so no experiment at this configuration can reject it; the real interval must still cover
    assert C.exact_probability_rate(50, 0.02, 2 * ALPHA) < ALPHA
    real = C.calibrate_clopper_pearson(50, 0.02, alpha=ALPHA, replications=100_000, rng=129)
    assert real.calibrated, str(real)


# --------------------------------------------------------------------------- means, variances, CDFs


def test_check_mean_calibrated_and_alpha_in_numerator_twin_rejected():
    lvl = share(3)
    n = 100
    twin_rate = C.exact_gaussian_mean_rate(n, ALPHA, radius_scale=ALPHA)
    R = max(r_for(twin_rate, lvl), 500)
    real = C.calibrate_check_mean(n, alpha=ALPHA, replications=R, rng=109, level=lvl)
    twin = C.calibrate_check_mean(
        n, alpha=ALPHA, replications=R, rng=110, check=F.check_mean_alpha_in_numerator, level=lvl
    )
    assert_pair(real, twin, twin_rate)
    # Chebyshev is far from tight for a Gaussian: the exact real rate is 7.7e-6 at alpha = 0.05
    assert C.exact_gaussian_mean_rate(n, ALPHA) < 1e-5
    assert stats.binomtest(twin.rejections, R, twin_rate).pvalue > lvl  # the exact formula itself


def test_check_mean_several_blocks_exact_rate():
    # alpha = 0.01, n = 2000: 5 blocks; the exact Gaussian rate is far below alpha
    res = C.calibrate_check_mean(2000, alpha=0.01, replications=300, rng=130)
    assert res.calibrated, str(res)
    assert C.exact_gaussian_mean_rate(2000, 0.01) < 0.01 / 100


def test_check_mean_heavy_tail_calibrated():
    # Student t with 3 degrees of freedom: variance 3, heavy tails; 5 blocks at alpha = 0.01, n = 2000
    def t3(gen, size):
        return gen.standard_t(3, size)

    res = C.calibrate_check_mean(2000, sampler=t3, variance_bound=3.0, alpha=0.01, replications=500, rng=111)
    assert res.calibrated, str(res)


def test_check_bounded_mean_calibrated_and_hoeffding_without_sqrt_twin_rejected():
    lvl = share(2)
    n = 100
    # the twin's radius is <= R ln(4/alpha)/(2n), so its rate is >= P(|K/n - 1/2| > that) for a fair coin
    twin_rate = C.coin_hoeffding_without_sqrt_rate_lower(n, ALPHA)
    R = max(r_for(twin_rate, lvl), 500)
    real = C.calibrate_check_bounded_mean(n, alpha=ALPHA, replications=R, rng=112, level=lvl)
    twin = C.calibrate_check_bounded_mean(
        n, alpha=ALPHA, replications=R, rng=113, check=F.check_bounded_mean_hoeffding_without_sqrt, level=lvl
    )
    assert_pair(real, twin, twin_rate)


def test_check_variance_calibrated_and_pair_without_half_twin_rejected():
    lvl = share(3)
    n = 100
    twin_rate = C.exact_gaussian_variance_rate(n, ALPHA, scale2=2.0)  # the twin sees samples times sqrt(2)
    R = max(r_for(twin_rate, lvl), 500)
    real = C.calibrate_check_variance(n, alpha=ALPHA, replications=R, rng=114, level=lvl)
    twin = C.calibrate_check_variance(
        n, alpha=ALPHA, replications=R, rng=115, check=F.check_variance_pair_without_half, level=lvl
    )
    assert_pair(real, twin, twin_rate)
    assert C.exact_gaussian_variance_rate(n, ALPHA) < ALPHA / 10  # conservative, as expected of Chebyshev
    assert stats.binomtest(twin.rejections, R, twin_rate).pvalue > lvl  # the exact formula itself


def test_check_cdf_calibrated_and_dkw_without_two_twin_rejected():
    lvl = share(4)  # real calibrated, twin caught, the real rate's two bounds
    n = 100
    gap = 1 / 2000
    grid = stats.norm.ppf(np.arange(1, 2000) * gap)  # consecutive points (and the ends) <= gap apart in F
    twin_lo, _ = C.exact_cdf_rate_bounds(n, ALPHA, radius_alpha=2 * ALPHA, grid_gap=gap)
    real_lo, real_hi = C.exact_cdf_rate_bounds(n, ALPHA, grid_gap=gap)
    assert real_hi <= ALPHA < twin_lo
    R = r_for(twin_lo, lvl)
    real = C.calibrate_check_cdf(n, grid=grid, alpha=ALPHA, replications=R, rng=116, level=lvl)
    twin = C.calibrate_check_cdf(
        n, grid=grid, alpha=ALPHA, replications=R, rng=117, check=F.check_cdf_dkw_without_two, level=lvl
    )
    assert_pair(real, twin, twin_lo)
    # the measured real rate lies within the exact bounds (Clopper-Pearson at lvl each way)
    assert real.rate_lower <= real_hi and real.rate_upper >= real_lo


def test_check_cdf_default_grid_calibrated():
    res = C.calibrate_check_cdf(200, alpha=ALPHA, replications=1500, rng=118)
    assert res.calibrated, str(res)


@pytest.mark.parametrize(
    "run,kw",
    [
        (C.calibrate_check_mean, dict(n=300)),
        (C.calibrate_check_bounded_mean, dict(n=300)),
        (C.calibrate_check_variance, dict(n=301)),
        (C.calibrate_check_cdf, dict(n=300)),
    ],
)
def test_chunked_paths_calibrated(run, kw):
    # chunks of 37 samples (odd: the variance check rounds them to pairs); the CDF grid comes from the first chunk
    res = run(alpha=ALPHA, replications=600, rng=131, chunk_size=37, **kw)
    assert res.calibrated, str(res)
    assert "chunk=37" in res.check


# --------------------------------------------------------------------------- auditing


def _audit_pair(cfg, twin_check, seeds, pilot_runs):
    """Pilot lower bound on the twin's rate, then the real check and the twin at R chosen from it.

    The pilot's own assert (bound > alpha) has a computed failure probability only given a
    floor on the twin's rate: with the floors below (0.15 and 0.9, against measured rates
    0.22 and 0.998) it is < 1e-15 (binomial tail at the largest failing count).
    """
    lvl = share(3)  # the pilot's lower bound, real calibrated, twin caught
    pilot = C.calibrate_audit(replications=pilot_runs, rng=seeds[0], check=twin_check, level=lvl, **cfg)
    twin_lo = pilot.rate_lower  # <= the twin's true rate, except with probability <= lvl
    assert twin_lo > cfg["alpha"], str(pilot)
    R = max(r_for(twin_lo, lvl, alpha=cfg["alpha"]), 1000)
    real = C.calibrate_audit(replications=R, rng=seeds[1], level=lvl, **cfg)
    twin = C.calibrate_audit(replications=R, rng=seeds[2], check=twin_check, level=lvl, **cfg)
    assert_pair(real, twin, twin_lo)


def _pilot_failure(pilot_runs, alpha, rate_floor):
    k = np.arange(pilot_runs + 1)
    lo = clopper_pearson_bounds(k, pilot_runs, share(3))[0]
    return stats.binom.cdf(k[lo <= alpha].max(), pilot_runs, rate_floor)


def test_audit_pilot_failure_probabilities():
    assert _pilot_failure(1500, ALPHA, 0.15) < 1e-15
    assert _pilot_failure(100, 0.1, 0.9) < 1e-15


def test_audit_pure_dp_calibrated_and_confidence_as_alpha_twin_rejected():
    cfg = dict(epsilon=1.0, n_samples=2000, alpha=ALPHA)
    _audit_pair(cfg, F.audit_epsilon_confidence_as_alpha, (119, 120, 121), 1500)


def test_audit_with_delta_calibrated_and_ignoring_delta_twin_rejected():
    delta = float(gaussian_delta(1.0, 1.0, 1.0))  # N(., 1) between 0 and 1 is exactly (1, delta)-DP
    cfg = dict(epsilon=1.0, delta=delta, n_samples=2000, alpha=0.1)
    _audit_pair(cfg, F.audit_epsilon_ignoring_delta, (122, 123, 124), 100)


def test_audit_of_zero_epsilon_mechanism_calibrated():
    # a mechanism whose output ignores its input is (0, 0)-DP: epsilon_lower > 0 is a false alarm
    def constant_noise(data, size, gen):
        return gen.standard_normal(size)

    res = C.calibrate_audit(
        mechanism=constant_noise, epsilon=1e-12, n_samples=1000, alpha=0.1, replications=400, rng=125
    )
    assert res.calibrated, str(res)


# --------------------------------------------------------------------------- power


def test_power_curve_probability_matches_exact_power():
    shifts = (0.0, 0.05, 0.1, 0.15, 0.2)
    lvl = share(len(shifts))
    R = 20_000
    curve = C.power_curve(C.calibrate_probability_result, shifts, rng=126, n=200, p=0.5, alpha=ALPHA, replications=R)
    assert curve.shifts == shifts and len(curve.rates) == len(shifts)
    for s, res in zip(shifts, curve.results, strict=True):
        exact = 1 - dpcore.probability_acceptance(200, 0.5, 0.5 + s, alpha=ALPHA)
        assert stats.binomtest(res.rejections, R, exact).pvalue > lvl, (s, res.rate, exact)
    # the largest error is caught almost surely: computed, not hoped
    exact_last = 1 - dpcore.probability_acceptance(200, 0.5, 0.7, alpha=ALPHA)
    assert exact_last > 0.9999


def test_power_curve_mean_at_large_shift():
    lvl = share(2)
    curve = C.power_curve(C.calibrate_check_mean, (0.0, 2.0), rng=127, n=100, alpha=ALPHA, replications=200, level=lvl)
    assert curve.results[0].calibrated
    # radius 1/sqrt(100 * 0.05) = 0.447 and the mean of 100 N(0, 1) is N(0, 0.01): the claim 2 passes
    # only if |mean - 2| <= 0.447, i.e. z >= 15.5; over 200 runs P(any pass) <= 200 * P(Z >= 15.5)
    assert 200 * stats.norm.sf(15.5) < lvl
    assert curve.results[1].rejections == 200


# --------------------------------------------------------------------------- machinery


def test_summarize_and_thresholds():
    res = C.summarize("x", 0, 100, 0.05)
    assert res.calibrated and res.p_value == 1.0 and res.rate == 0.0
    c = C.rejection_threshold(1000, 0.05)
    assert stats.binom.sf(c - 1, 1000, 0.05) <= LEVEL < stats.binom.sf(c - 2, 1000, 0.05)
    assert C.summarize("x", c, 1000, 0.05).calibrated is False
    assert C.summarize("x", c - 1, 1000, 0.05).calibrated is True
    R = C.replications_for(0.05, 0.1)
    assert C.miss_probability(R, 0.05, 0.1) <= LEVEL < C.miss_probability(R - 1, 0.05, 0.1) or R == 16


def test_reproducible_from_seed():
    a = C.calibrate_check_cdf(50, alpha=0.2, replications=50, rng=7)
    b = C.calibrate_check_cdf(50, alpha=0.2, replications=50, rng=7)
    assert a == b


@pytest.mark.parametrize(
    "call,param",
    [
        (lambda: C.summarize("x", 5, 4, 0.05), "rejections"),
        (lambda: C.summarize("x", 1, 4, 1.5), "alpha"),
        (lambda: C.summarize("x", 1, 0, 0.05), "replications"),
        (lambda: C.replications_for(0.05, 0.01), "true_rate"),
        (lambda: C.miss_probability(10, 0.05, 2.0), "true_rate"),
        (lambda: C.calibrate_probability_result(10, 0.9, shift=0.2, replications=5), "shift"),
        (lambda: C.calibrate_probability_result(10, 1.2, replications=5), "p"),
        (lambda: C.calibrate_clopper_pearson(10, 0.5, side="left", replications=5), "side"),
        (lambda: C.calibrate_check_variance(10, shift=-2.0, replications=5), "shift"),
        (lambda: C.calibrate_audit(epsilon=-1.0, replications=5), "epsilon"),
        (lambda: C.calibrate_audit(delta=1.0, replications=5), "delta"),
        (lambda: C.power_curve(C.calibrate_check_mean, (), n=10), "shifts"),
        (lambda: C.exact_cdf_rate_bounds(10, 0.05, grid_gap=-1.0), "grid_gap"),
        (lambda: F.check_cdf_dkw_without_two(lambda g, s: g.random(s), 10, lambda x: x, alpha=0.6), "alpha"),
    ],
)
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises(ValueError, match=param):
        call()


def test_library_does_not_import_sympy_matplotlib_or_ledger():
    src = pathlib.Path(C.__file__).read_text()
    names = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    assert not any(bad in n for n in names for bad in ("sympy", "matplotlib", "ledger"))
