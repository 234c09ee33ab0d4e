"""Tests for dpcore.gaussian against an independent 50-digit mpmath reference.

The reference solves Balle & Wang's (2018) Theorem 8 equation in the form of
Bao et al. (2021, Lemma 2.4), erfc(chi) - e^eps erfc(sqrt(chi^2+eps)) = 2 delta,
with mpmath at 50 significant digits (the subtraction loses at most ~7 of
them on the grid), on a bracket proven by erfc(x) <= exp(-x^2), and solves it
by mpmath's bracketing Illinois method. Nothing from dpcore is used in it.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import dpbook
import dpcore
from dpbook import reference as mpref
from dpcore import montecarlo
from dpcore.gaussian import (
    analytic_gaussian_sigma,
    analytic_gaussian_sigma_many,
    classic_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_log_delta,
    gaussian_mechanism,
)

DPS = 50


EPS_GRID = np.geomspace(1e-3, 1000.0, 17)
DELTA_GRID = np.concatenate([np.geomspace(1e-300, 1e-2, 16), [0.1, 0.3, 0.5, 0.9, 0.99]])


@pytest.fixture(scope="module")
def reference():
    """50-digit sigma over the whole issue grid (17 x 21 = 357 points)."""
    return {(e, d): mpref.analytic_sigma(e, d) for e in EPS_GRID for d in DELTA_GRID}


def test_analytic_sigma_matches_50_digit_reference_on_whole_grid(reference):
    worst = 0.0
    for (e, d), ref in reference.items():
        s = analytic_gaussian_sigma(1.0, e, d)
        rel = float(abs((mp.mpf(s) - ref) / ref))
        worst = max(worst, rel)
        assert rel <= 1e-9, (e, d, s, ref, rel)
    assert worst <= 1e-11  # what the implementation actually achieves (about 3e-13)


def test_analytic_sigma_never_violates_delta_in_exact_arithmetic(reference):
    for e, d in reference:
        s = analytic_gaussian_sigma(1.0, e, d)
        assert mpref.gaussian_log_delta(s, e) <= mp.log(mp.mpf(d)), (e, d)


def test_vectorised_path_agrees_with_scalar_and_reference(reference):
    E, D = np.meshgrid(EPS_GRID, DELTA_GRID, indexing="ij")
    many = analytic_gaussian_sigma_many(1.0, E, D)
    assert many.shape == E.shape
    for i, e in enumerate(EPS_GRID):
        for j, d in enumerate(DELTA_GRID):
            ref = reference[(e, d)]
            assert float(abs((mp.mpf(many[i, j]) - ref) / ref)) <= 1e-9
            assert mpref.gaussian_log_delta(many[i, j], e) <= mp.log(mp.mpf(d))
    scal = np.array([[analytic_gaussian_sigma(1.0, e, d) for d in DELTA_GRID] for e in EPS_GRID])
    np.testing.assert_allclose(many, scal, rtol=1e-13)


def test_sensitivity_scales_sigma_linearly():
    for sens in (1e-3, 0.7, 2.0, 1e4):
        assert analytic_gaussian_sigma(sens, 0.5, 1e-6) == pytest.approx(
            sens * analytic_gaussian_sigma(1.0, 0.5, 1e-6), rel=1e-14
        )
    many = analytic_gaussian_sigma_many([1.0, 3.0], 0.5, 1e-6)
    assert many[1] == pytest.approx(3 * many[0], rel=1e-14)


def test_known_value_balle_wang():
    # Balle & Wang (2018), Figure/Table: eps = 1, delta = 1e-5, Delta = 1 -> sigma ~ 3.73
    assert analytic_gaussian_sigma(1.0, 1.0, 1e-5) == pytest.approx(float(mpref.analytic_sigma(1.0, 1e-5)), rel=1e-12)
    assert 3.73 < analytic_gaussian_sigma(1.0, 1.0, 1e-5) < 3.731


@pytest.mark.parametrize("sigma", [0.05, 0.4, 1.0, 3.0, 40.0, 2000.0])
def test_gaussian_delta_matches_50_digit_theorem8(sigma):
    eps = np.array([0.0, 1e-6, 1e-3, 0.1, 1.0, 5.0, 30.0, 200.0])
    got = gaussian_log_delta(sigma, 1.0, eps)
    assert got.shape == eps.shape
    for e, g in zip(eps, got, strict=True):
        ref = mpref.gaussian_log_delta(sigma, e)
        # absolute error in log delta = relative error in delta, when delta is representable
        tol = 1e-12 * max(1.0, float(abs(ref)))
        assert abs(g - float(ref)) <= tol, (sigma, e, g, ref)
    d = gaussian_delta(sigma, 1.0, eps)
    assert np.all(d >= 0) and np.all(np.isfinite(d))
    assert np.all(np.diff(d) <= 0)  # decreasing in epsilon


def test_gaussian_delta_scalar_and_tiny_values():
    assert isinstance(gaussian_delta(1.0, 1.0, 1.0), float)
    assert gaussian_delta(1.0, 1.0, 0.0) == pytest.approx(math.erf(1 / (2 * math.sqrt(2))), rel=1e-14)
    # deep tail: delta far below the smallest double is 0.0, never NaN or negative; its log stays finite
    assert gaussian_delta(1.0, 1.0, 1e4) == 0.0
    ld = gaussian_log_delta(1.0, 1.0, 1e4)
    assert math.isfinite(ld) and ld < -1e6
    assert abs(ld - float(mpref.gaussian_log_delta(1.0, 1e4))) <= 1e-12 * abs(ld)


def test_profile_monotone_in_sigma_and_epsilon():
    sig = np.geomspace(0.05, 50, 40)
    for e in (0.01, 1.0, 10.0):
        d = [gaussian_delta(s, 1.0, e) for s in sig]
        assert np.all(np.diff(d) <= 0)
    for d in (1e-200, 1e-8, 0.3):
        s = [analytic_gaussian_sigma(1.0, e, d) for e in np.geomspace(1e-3, 1e3, 30)]
        assert np.all(np.diff(s) < 0)
    for e in (0.01, 1.0, 10.0):
        s = [analytic_gaussian_sigma(1.0, e, d) for d in np.geomspace(1e-300, 0.9, 30)]
        assert np.all(np.diff(s) < 0)


@pytest.mark.parametrize("sigma", [0.05, 0.5, 1.0, 3.0, 30.0, 1000.0])
@pytest.mark.parametrize("delta", [1e-300, 1e-10, 1e-5, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5])
def test_gaussian_epsilon_is_the_exact_inverse(sigma, delta):
    e = gaussian_epsilon(sigma, delta)
    assert e >= 0
    assert gaussian_delta(sigma, 1.0, e) <= delta
    assert mpref.gaussian_log_delta(sigma, e) <= mp.log(mp.mpf(delta))  # safe in exact arithmetic
    if e > 0:  # and tight: any epsilon 1e-9 smaller violates delta
        assert mpref.gaussian_log_delta(sigma, e * (1 - 1e-9)) > mp.log(mp.mpf(delta))
    else:
        assert gaussian_delta(sigma, 1.0, 0.0) <= delta


def test_gaussian_epsilon_round_trip_and_sensitivity():
    for e in (1e-3, 0.3, 1.0, 8.0, 200.0):
        for d in (1e-250, 1e-6, 0.2):
            s = analytic_gaussian_sigma(1.0, e, d)
            assert gaussian_epsilon(s, d) == pytest.approx(e, rel=1e-9)
    assert gaussian_epsilon(2.0, 1e-5, sensitivity=2.0) == pytest.approx(gaussian_epsilon(1.0, 1e-5), rel=1e-12)


def test_classic_sigma_formula_and_refusal():
    assert classic_gaussian_sigma(2.0, 0.5, 1e-5) == pytest.approx(
        2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-15
    )
    with pytest.raises(ValueError, match="epsilon < 1"):
        classic_gaussian_sigma(1.0, 1.0, 1e-5)
    with pytest.raises(ValueError, match="epsilon < 1"):
        classic_gaussian_sigma(1.0, 3.0, 1e-5)
    # for epsilon < 1 the classic sigma is valid (Dwork & Roth, Thm A.1) and looser than the analytic one
    for e in (0.01, 0.3, 0.9):
        for d in (1e-12, 1e-5, 0.01):
            sc = classic_gaussian_sigma(1.0, e, d)
            assert gaussian_delta(sc, 1.0, e) <= d
            assert sc > analytic_gaussian_sigma(1.0, e, d)


BAD = [0.0, -1.0, math.nan, math.inf, "x", True, [1.0, 2.0]]


@pytest.mark.parametrize("bad", BAD)
def test_bad_inputs_name_the_parameter(bad):
    with pytest.raises(ValueError, match="sensitivity"):
        analytic_gaussian_sigma(bad, 1.0, 1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        analytic_gaussian_sigma(1.0, bad, 1e-5)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_delta(bad, 1.0, 1.0)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_epsilon(bad, 1e-5)
    with pytest.raises(ValueError, match="sensitivity"):
        gaussian_epsilon(1.0, 1e-5, sensitivity=bad)
    with pytest.raises(ValueError, match="sensitivity"):
        classic_gaussian_sigma(bad, 0.5, 1e-5)


@pytest.mark.parametrize("bad", [0.0, 1.0, -1e-9, 1.5, math.nan, math.inf])
def test_bad_delta(bad):
    for call in (
        lambda: analytic_gaussian_sigma(1.0, 1.0, bad),
        lambda: classic_gaussian_sigma(1.0, 0.5, bad),
        lambda: gaussian_epsilon(1.0, bad),
        lambda: gaussian_mechanism(0.0, 1.0, 1.0, bad, rng=0),
        lambda: analytic_gaussian_sigma_many(1.0, [1.0, 2.0], [1e-5, bad]),
    ):
        with pytest.raises(ValueError, match="delta"):
            call()


def test_bad_epsilon_arrays_and_mechanism_inputs():
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_delta(1.0, 1.0, [0.5, -0.1])
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_delta(1.0, 1.0, [0.5, math.nan])
    with pytest.raises(ValueError, match="epsilon"):
        analytic_gaussian_sigma_many(1.0, [0.5, 0.0], 1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_mechanism(0.0, 1.0, 0.0, 1e-5)
    with pytest.raises(ValueError, match="value"):
        gaussian_mechanism([1.0, math.nan], 1.0, 1.0, 1e-5)
    with pytest.raises(ValueError, match="calibration"):
        gaussian_mechanism(0.0, 1.0, 0.5, 1e-5, calibration="optimal")
    with pytest.raises(ValueError, match="epsilon < 1"):
        gaussian_mechanism(0.0, 1.0, 2.0, 1e-5, calibration="classic")
    with pytest.raises(ValueError, match="rng"):
        gaussian_mechanism(0.0, 1.0, 1.0, 1e-5, rng=1.5)


def test_mechanism_reproducible_and_shaped():
    a = gaussian_mechanism([1.0, 2.0, 3.0], 1.0, 1.0, 1e-5, rng=42)
    b = gaussian_mechanism([1.0, 2.0, 3.0], 1.0, 1.0, 1e-5, rng=42)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3,)
    assert isinstance(gaussian_mechanism(1.0, 1.0, 1.0, 1e-5, rng=1), float)
    c = gaussian_mechanism([1.0, 2.0, 3.0], 1.0, 1.0, 1e-5, rng=43)
    assert not np.array_equal(a, c)


def test_mechanism_distribution_is_normal_with_calibrated_sigma():
    """DKW test of the released distribution (false alarm <= 1e-6), with a negative control."""
    from scipy import stats

    sigma = analytic_gaussian_sigma(1.0, 0.5, 1e-6)
    sampler = lambda rng, n: gaussian_mechanism(np.full(n, 2.0), 1.0, 0.5, 1e-6, rng=rng)  # noqa: E731
    res = montecarlo.check_cdf(sampler, 200_000, stats.norm(2.0, sigma).cdf, rng=7, name="gaussian mechanism")
    assert res.passed, str(res)
    # negative control: the seed's normal(0, sigma**2) (variance passed as the std)
    bad = lambda rng, n: dpbook.flawed.gaussian_variance_as_std(np.full(n, 2.0), sigma, rng=rng)  # noqa: E731
    res_bad = montecarlo.check_cdf(bad, 200_000, stats.norm(2.0, sigma).cdf, rng=7, name="variance as std")
    assert not res_bad.passed, str(res_bad)
    classic = lambda rng, n: gaussian_mechanism(np.full(n, 2.0), 1.0, 0.5, 1e-6, rng=rng, calibration="classic")  # noqa: E731
    sc = classic_gaussian_sigma(1.0, 0.5, 1e-6)
    assert montecarlo.check_cdf(classic, 200_000, stats.norm(2.0, sc).cdf, rng=8).passed


def test_vectorised_random_batch_safe_and_equal_to_scalar():
    rng = np.random.default_rng(3)
    e = 10 ** rng.uniform(-3, 3, 3000)
    d = 10 ** rng.uniform(-300, math.log10(0.99), 3000)
    many = analytic_gaussian_sigma_many(1.0, e, d)
    scal = np.array([analytic_gaussian_sigma(1.0, ei, di) for ei, di in zip(e, d, strict=True)])
    np.testing.assert_allclose(many, scal, rtol=1e-12)
    for s, ei, di in zip(many, e, d, strict=True):
        assert gaussian_log_delta(s, 1.0, ei) <= math.log(di)
    # exact-arithmetic spot check on a subsample, including the small-epsilon inflection region
    for i in range(0, 3000, 150):
        assert mpref.gaussian_log_delta(many[i], e[i]) <= mp.log(mp.mpf(d[i]))


@pytest.mark.parametrize("epsilon", [1e-12, 1e-6, 1e4, 1e7, 1e10, 1e300])
@pytest.mark.parametrize("delta", [5e-324, 1e-308, 1e-20, 0.5, 1 - 1e-12, 1 - 1e-16])
def test_extreme_inputs_stay_safe_and_finite(epsilon, delta):
    """Outside the accuracy grid: no error, no NaN, and delta is never exceeded (also at 50 digits)."""
    s = analytic_gaussian_sigma(1.0, epsilon, delta)
    assert math.isfinite(s) and s > 0
    assert gaussian_log_delta(s, 1.0, epsilon) <= math.log(delta)
    # a = 1/(2s) - eps s cancels about 2 log10(eps) digits: carry that many more
    dps = DPS + 2 * max(0, int(math.log10(epsilon)))
    assert mpref.gaussian_log_delta(s, epsilon, dps=dps) <= mp.log(mp.mpf(delta))
    many = analytic_gaussian_sigma_many(1.0, [epsilon] * 200, delta)  # > 150 pairs: the array path
    assert many[0] == pytest.approx(s, rel=1e-12)
    assert gaussian_log_delta(many[0], 1.0, epsilon) <= math.log(delta)


def test_gaussian_delta_limits_without_warnings():
    assert gaussian_delta(1e10, 1.0, 1e300) == 0.0  # chi overflows to +inf: delta = 0, no warning
    assert gaussian_log_delta(1e10, 1.0, 1e300) == -math.inf
    assert gaussian_delta(1e-10, 1.0, 1.0) == 1.0
    assert gaussian_epsilon(1.0, 1 - 1e-12) == 0.0  # delta(0) = erf(1/(2 sqrt 2)) < 1 - 1e-12
    e = gaussian_epsilon(1e-8, 1e-5)
    assert gaussian_delta(1e-8, 1.0, e) <= 1e-5 and e == pytest.approx(0.5e16, rel=1e-3)


def test_seed_002_code_is_exact_only_at_epsilon_one() -> None:
    seed = dpbook.flawed.seed_002_sigma
    # the seed's example: epsilon = 1 (where sqrt(x**2 + 1) = sqrt(x**2 + epsilon)), sensitivity sqrt 2
    assert seed(1.0, 1e-5, math.sqrt(2)) == pytest.approx(analytic_gaussian_sigma(math.sqrt(2), 1.0, 1e-5), rel=1e-9)
    # elsewhere the code solves another equation; with the equation's sqrt(x**2 + epsilon) it is right again
    exact = analytic_gaussian_sigma(1.0, 0.1, 1e-5)
    assert seed(0.1, 1e-5) / exact - 1 > 0.3  # 36 % too much noise
    assert seed(0.1, 1e-5, fixed=True) == pytest.approx(exact, rel=1e-6)
    sig, ier, msg = seed(2.0, 1e-5, full_output=True)
    assert ier != 1 and isinstance(msg, str)  # fsolve reports that it did not converge; the seed never looks


# --------------------------------------------------------------------------- issue 15


def _mp_delta(sigma, sens, eps):
    """Balle & Wang (2018, Thm 8) in 80-digit mpmath from the exact doubles given."""
    import mpmath as mp

    with mp.workdps(80):
        mu = mp.mpf(sens) / mp.mpf(sigma)
        e = mp.mpf(eps)
        return mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)


def test_issue15_gaussian_epsilon_tiny_sigma_matches_mpmath():
    """gaussian_epsilon(1e-13, 1e-5) was 5.19e25, 3.7 % above the root (5.0000000000043e25)."""
    import mpmath as mp

    eps = dpcore.gaussian_epsilon(1e-13, 1e-5)
    with mp.workdps(80):
        root = mp.findroot(lambda x: _mp_delta(1e-13, 1.0, x) - mp.mpf(1e-5), mp.mpf("5.00000000000043e25"))
    assert eps == pytest.approx(float(root), rel=1e-14)
    assert float(_mp_delta(1e-13, 1.0, eps)) <= 1e-5 * (1 + 1e-9)
    assert dpcore.gaussian_delta(1e-13, 1.0, eps) == pytest.approx(float(_mp_delta(1e-13, 1.0, eps)), rel=1e-9)


@pytest.mark.parametrize("sigma", [1e-9, 1e-12, 1e-13, 1e-15])
def test_issue15_composition_epsilon_never_above_rdp_bound(sigma):
    """Below sigma ~1e-12 the exact composition epsilon came out above the RDP bound."""
    exact = dpcore.exact_gaussian_composition_epsilon(sigma, 4, 1e-5)
    a = 1.0 + np.geomspace(1e-3, 1e6, 4000)
    bound, _ = dpcore.rdp_to_dp(a, a * 4 / (2 * sigma**2), 1e-5)
    assert exact <= bound


def test_issue15_extreme_profiles_are_the_true_answers():
    """ZeroDivisionError and NaN at the ends of the double range; the true answers are 1, 0 and erf(tiny)."""
    assert dpcore.gaussian_delta(1e-300, 1e300, 1.0) == 1.0
    assert dpcore.gaussian_epsilon(1e300, 1e-5) == 0.0
    d = dpcore.gaussian_delta(1e10, 1e-300, 0.0)  # erf(1e-310 / (2 sqrt 2)): a subnormal
    assert 0.0 < d < 1e-309 and not math.isnan(d)
    assert dpcore.gaussian_delta(1.0, 5e-324, 0.0) >= 0.0
    with pytest.raises(ValueError, match="beyond 1e\\+300"):
        dpcore.gaussian_epsilon(1e-300, 1e-5, sensitivity=1e300)


def test_issue15_calibrations_refuse_results_outside_the_double_range():
    with pytest.raises(ValueError, match="sigma"):
        dpcore.analytic_gaussian_sigma(1.0, 5e-324, 5e-324)  # sigma ~ 1e323: was an endless loop
    with pytest.raises(ValueError, match="sigma"):
        dpcore.analytic_gaussian_sigma(5e-324, 1.0, 0.5)
    with pytest.raises(ValueError, match="sigma"):
        dpcore.classic_gaussian_sigma(1e300, 1e-10, 0.5)
    with pytest.raises(ValueError):
        dpcore.exact_gaussian_composition_epsilon(1.0, 10**400, 1e-5)


_CLASSIC_SCALES = [5e-324, 1e-320, 1e-310, 2.2250738585072014e-308, 1e-300, 1e-150, 1.0, 1e150, 1e300, 1.7e308]
_CLASSIC_EPSILONS = [5e-324, 1e-320, 1e-310, 1e-300, 1e-150, 1e-8, 0.5, 0.9999999999999999]
_CLASSIC_DELTAS = [5e-324, 1e-320, 1e-310, 1e-300, 1e-5, 0.5, 0.9999999999999999]


@pytest.mark.parametrize("epsilon", _CLASSIC_EPSILONS)
def test_classic_sigma_at_every_scale_against_mpmath(epsilon):
    """Issue 15: sigma = Delta sqrt(2 ln(1.25/delta))/eps at 50 digits, for inputs down to subnormal.

    Where the exact sigma is a normal double it is returned to 1e-14 relative
    (it was refused as inf when 1.25/delta or Delta/eps overflowed, or
    inaccurate when Delta*root went subnormal); where it is not, the refusal
    names sigma. Answers within 1e-12 of either end of the range are skipped.
    """
    mp.mp.dps = DPS
    top, tiny = mp.mpf(np.finfo(np.float64).max), mp.mpf(np.finfo(np.float64).tiny)
    returned = 0
    for sens in _CLASSIC_SCALES:
        for delta in _CLASSIC_DELTAS:
            exact = mp.mpf(sens) * mp.sqrt(2 * mp.log(mp.mpf(1.25) / mp.mpf(delta))) / mp.mpf(epsilon)
            if tiny * (1 + mp.mpf(1e-12)) <= exact <= top * (1 - mp.mpf(1e-12)):
                got = classic_gaussian_sigma(sens, epsilon, delta)
                assert abs(mp.mpf(got) - exact) <= mp.mpf(1e-14) * exact, (sens, epsilon, delta)
                returned += 1
            elif exact > top * (1 + mp.mpf(1e-12)) or exact < tiny * (1 - mp.mpf(1e-12)):
                with pytest.raises(ValueError, match="sigma"):
                    classic_gaussian_sigma(sens, epsilon, delta)
    assert returned > 0


def test_classic_sigma_subnormal_inputs_issue15():
    mp.mp.dps = DPS
    # the case of the issue: the three inputs subnormal, sigma = sqrt(2 ln(1.25e320)) ~ 38.4
    exact = mp.sqrt(2 * mp.log(mp.mpf(1.25) / mp.mpf(1e-320)))
    assert classic_gaussian_sigma(1e-320, 1e-320, 1e-320) == pytest.approx(float(exact), rel=1e-14)
    # sigma just below the largest double: returned; just above: refused
    root = mp.sqrt(2 * mp.log(mp.mpf(1.25) / mp.mpf(0.5)))
    sens = float(mp.mpf("1.7e308") * mp.mpf("0.9") / root)
    assert classic_gaussian_sigma(sens, 0.9, 0.5) == pytest.approx(1.7e308, rel=1e-14)
    with pytest.raises(ValueError, match="sigma = inf"):
        classic_gaussian_sigma(sens, 0.5, 0.5)  # exact sigma 1.7e308 * 0.9/0.5 = 3.1e308
    with pytest.raises(ValueError, match="sigma"):
        classic_gaussian_sigma(1e-320, 0.5, 1e-5)  # exact sigma ~ 1e-319: subnormal, refused


@pytest.mark.parametrize("epsilon, delta", [(1e-100, 1e-49), (1e-200, 1e-100), (1e-300, 1e-10), (1e-20, 1e-300)])
def test_analytic_sigma_for_tiny_epsilon_reaches_the_root(epsilon, delta):
    # The solver used to stop after 100 Newton/bisection steps when the root chi is tiny (about -1e-50)
    # and return a safe but far too large sigma (7e71 times too large at (1e-200, 1e-100)), with no error.
    # Reference: bisection in log sigma of delta(sigma) = Phi(D/(2s) - e s/D) - e^e Phi(-D/(2s) - e s/D) at
    # 700 digits (the two terms agree to ~200 digits here).
    with mp.workdps(700):
        e, d = mp.mpf(epsilon), mp.mpf(delta)

        def profile(s):
            return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)

        lo, hi = mp.mpf(-700), mp.mpf(700)
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if profile(mp.e**mid) > d else (lo, mid)
        truth = float(mp.e**hi)
    for got in (analytic_gaussian_sigma(1.0, epsilon, delta), analytic_gaussian_sigma_many(1.0, epsilon, delta)):
        assert truth <= float(got) <= truth * (1 + 5e-11)


def test_exact_composition_rounds_mu_to_the_safe_side() -> None:
    """Issue 28 (oracle): at sigma 2.45e-9 and 3.3e7 releases, sqrt(k) and sigma / sensitivity rounded to nearest put
    the true delta at the answer 1.7e-4 relatively above the target; reference: the profile in 60-digit mpmath."""
    import mpmath as mp

    sigma, k, delta = 2.4500288471083355e-09, 33064614, 2.0753279116885921e-07
    eps = dpcore.exact_gaussian_composition_epsilon(sigma, k, delta, 1.0)
    with mp.workdps(60):
        mu = mp.sqrt(k) / mp.mpf(sigma)
        e = mp.mpf(eps)
        true = mp.ncdf(mu / 2 - e / mu) - mp.e**e * mp.ncdf(-mu / 2 - e / mu)
    assert true <= delta


@pytest.mark.parametrize(("eps", "delta"), [(5e-324, 6.9456112808310834e-164), (1e-320, 1e-160), (1e-300, 1e-150)])
def test_analytic_sigma_at_subnormal_epsilon_delivers_its_delta(eps, delta):
    """chi^2 + eps fell into the subnormals (chi ~ 2e-161 at eps 5e-324): sigma came out 1.85e-7 relatively too
    small, the true delta above the target (found by the oracle). The profile in 500-digit mpmath (its two
    normal CDFs differ in the 160th digit), for the scalar and the vectorised solver."""
    for sigma in (
        analytic_gaussian_sigma(1.0, eps, delta),
        float(analytic_gaussian_sigma_many(1.0, [eps], [delta])[0]),
    ):
        with mp.workdps(500):
            mu, e = 1 / mp.mpf(sigma), mp.mpf(eps)
            truth = mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)
            assert truth <= mp.mpf(delta)
            assert truth >= mp.mpf(delta) * (1 - mp.mpf("1e-13") * (1 + abs(mp.log(delta))))  # documented
