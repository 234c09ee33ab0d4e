"""Unit tests for dpcore.privacy_loss, against 50-digit mpmath references."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

import dpcore
from dpcore.event_ratios import event_ratio_bounds, interval_counts, sample_interval_ratio_bounds
from dpcore.privacy_loss import (
    laplace_box_log_probability,
    laplace_interval_log_probability,
    laplace_interval_probability,
    laplace_kl_divergence,
    laplace_max_interval_log_ratio,
    laplace_privacy_loss,
)

mp.mp.dps = 50


def mp_laplace_cdf(x, mu, b):
    x, mu, b = mp.mpf(x), mp.mpf(mu), mp.mpf(b)
    if x == mp.inf:
        return mp.mpf(1)
    if x == -mp.inf:
        return mp.mpf(0)
    if x < mu:
        return mp.exp((x - mu) / b) / 2
    return 1 - mp.exp(-(x - mu) / b) / 2


def mp_interval_prob(a, c, mu, b):
    """Reference P[a < X <= c], computed by integrating the density with mpmath."""
    a_, c_, mu_, b_ = (mp.mpf(v) for v in (a, c, mu, b))
    dens = lambda x: mp.exp(-abs(x - mu_) / b_) / (2 * b_)  # noqa: E731
    pts = [a_] + ([mu_] if a_ < mu_ < c_ else []) + [c_]
    return mp.quad(dens, pts)


def mp_kl(mu1, mu2, b1, b2):
    """Reference KL(Lap(mu1,b1) || Lap(mu2,b2)) by numerical integration of p log p/q."""
    mu1, mu2, b1, b2 = (mp.mpf(v) for v in (mu1, mu2, b1, b2))
    p = lambda x: mp.exp(-abs(x - mu1) / b1) / (2 * b1)  # noqa: E731
    logratio = lambda x: mp.log(b2 / b1) - abs(x - mu1) / b1 + abs(x - mu2) / b2  # noqa: E731
    pts = sorted({mu1, mu2})
    return mp.quad(lambda x: p(x) * logratio(x), [-mp.inf, *pts, mp.inf])


# ---------------------------------------------------------------- privacy loss


def test_privacy_loss_scalar_regions():
    # u = 0, v = 2, b = 0.5: below both -> (v-u)/b = 4; above both -> -4; between linear
    z = np.array([-3.0, 0.0, 0.5, 1.0, 2.0, 9.0])
    got = laplace_privacy_loss(z, 0.0, 2.0, 0.5)
    want = (np.abs(z - 2.0) - np.abs(z)) / 0.5
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    assert got[0] == 4.0 and got[-1] == -4.0 and got[3] == 0.0


def test_privacy_loss_matches_mpmath_log_density_ratio():
    rng = np.random.default_rng(3)
    z = rng.normal(0, 5, size=50)
    got = laplace_privacy_loss(z, 0.3, -1.1, 0.7)
    for zi, gi in zip(z, got, strict=True):
        ref = mp.log(
            (mp.exp(-abs(mp.mpf(zi) - mp.mpf(0.3)) / mp.mpf(0.7)))
            / (mp.exp(-abs(mp.mpf(zi) - mp.mpf(-1.1)) / mp.mpf(0.7)))
        )
        assert abs(gi - float(ref)) <= 1e-13


def test_privacy_loss_vector_sums_coordinates_and_is_bounded_by_l1():
    rng = np.random.default_rng(0)
    u = np.array([0.0, 1.0, -2.0])
    v = np.array([0.5, 0.0, -1.0])
    z = rng.laplace(0, 3, size=(1000, 3))
    got = laplace_privacy_loss(z, u, v, 1.5)
    assert got.shape == (1000,)
    want = sum(laplace_privacy_loss(z[:, i], u[i], v[i], 1.5) for i in range(3))
    np.testing.assert_allclose(got, want, atol=1e-14)
    assert np.max(np.abs(got)) <= np.abs(u - v).sum() / 1.5 + 1e-12
    # a point beyond every coordinate on the side of u attains the L1 bound
    corner = np.where(u < v, np.minimum(u, v) - 10, np.maximum(u, v) + 10)
    assert laplace_privacy_loss(corner, u, v, 1.5) == pytest.approx(np.abs(u - v).sum() / 1.5, abs=1e-14)
    assert isinstance(laplace_privacy_loss(corner, u, v, 1.5), float)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(z=0.0, value=0.0, value_prime=1.0, scale=0.0), "scale"),
        (dict(z=0.0, value=0.0, value_prime=1.0, scale=-1.0), "scale"),
        (dict(z=0.0, value=0.0, value_prime=1.0, scale=np.nan), "scale"),
        (dict(z=np.nan, value=0.0, value_prime=1.0, scale=1.0), "z"),
        (dict(z=np.inf, value=0.0, value_prime=1.0, scale=1.0), "z"),
        (dict(z=0.0, value=np.inf, value_prime=1.0, scale=1.0), "value"),
        (dict(z=0.0, value=0.0, value_prime=[1.0, 2.0], scale=1.0), "same shape"),
        (dict(z=np.zeros((3, 2)), value=[0.0, 0, 0], value_prime=[1.0, 1, 1], scale=1.0), r"\(\.\.\., 3\)"),
        (dict(z=np.zeros(2), value=np.zeros((2, 2)), value_prime=np.ones((2, 2)), scale=1.0), "1-D"),
    ],
)
def test_privacy_loss_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        laplace_privacy_loss(**kwargs)


# ---------------------------------------------------------------- interval probabilities

CASES = [
    (-np.inf, np.inf, 0.0, 1.0),
    (-np.inf, -3.0, 0.0, 1.0),
    (2.0, np.inf, 0.0, 0.5),
    (-1.0, 2.0, 0.3, 0.7),
    (0.3, 0.9, 0.3, 0.7),  # starts at the centre
    (-5.0, 0.3, 0.3, 0.7),  # ends at the centre
    (40.0, 41.0, 0.0, 1.0),  # far right tail
    (-700.0, -699.5, 0.0, 1.0),  # so far that the CDF underflows below 1e-300
    (-1e-9, 1e-9, 0.0, 1.0),  # narrow, straddling the centre
    (5.0, 5.0 + 1e-9, 0.0, 1.0),  # narrow, in a tail
    (-2.0, -2.0 + 1e-12, 0.0, 1.0),
]


@pytest.mark.parametrize("a, c, mu, b", CASES)
def test_interval_log_probability_matches_mpmath(a, c, mu, b):
    got = laplace_interval_log_probability(a, c, mu, b)
    if math.isinf(a) or math.isinf(c):
        ref = mp.log(mp_laplace_cdf(c, mu, b) - mp_laplace_cdf(a, mu, b))
    else:
        ref = mp.log(mp_interval_prob(a, c, mu, b))
    assert abs(got - float(ref)) <= 1e-12 * max(1.0, abs(float(ref)))


def test_interval_log_probability_far_tail_is_finite_where_cdf_underflows():
    # P[X <= -800] = e^{-800}/2 underflows to 0 as a double; its log does not
    assert stats.laplace.cdf(-800.0) == 0.0
    got = laplace_interval_log_probability(-np.inf, -800.0, 0.0, 1.0)
    assert got == pytest.approx(math.log(0.5) - 800.0, rel=1e-15)


def test_interval_log_probability_agrees_with_scipy_on_half_lines():
    x = np.linspace(-30, 30, 121)
    np.testing.assert_allclose(
        laplace_interval_log_probability(-np.inf, x, 0.4, 1.3), stats.laplace.logcdf(x, 0.4, 1.3), rtol=1e-13
    )
    np.testing.assert_allclose(
        laplace_interval_log_probability(x, np.inf, 0.4, 1.3), stats.laplace.logsf(x, 0.4, 1.3), rtol=1e-13
    )


def test_interval_probability_vectorised_and_empty_interval():
    a = np.array([-1.0, 0.0, 2.0])
    c = np.array([1.0, 0.0, 3.0])
    p = laplace_interval_probability(a, c, 0.0, 1.0)
    assert p.shape == (3,)
    assert p[1] == 0.0
    assert p[0] == pytest.approx(1 - math.exp(-1), rel=1e-15)
    assert laplace_interval_log_probability(0.0, 0.0, 0.0, 1.0) == -np.inf


def test_interval_probabilities_of_a_partition_sum_to_one():
    edges = np.r_[-np.inf, np.linspace(-20, 20, 2001), np.inf]
    p = laplace_interval_probability(edges[:-1], edges[1:], 1.7, 0.9)
    assert math.fsum(p) == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize(
    "a, c, loc, scale, match",
    [
        (1.0, 0.0, 0.0, 1.0, "lower must be <= upper"),
        (np.nan, 1.0, 0.0, 1.0, "NaN"),
        (np.inf, np.inf, 0.0, 1.0, "lower must be < \\+inf"),
        (-np.inf, -np.inf, 0.0, 1.0, "upper must be > -inf"),
        (0.0, 1.0, np.nan, 1.0, "loc"),
        (0.0, 1.0, 0.0, 0.0, "scale"),
        (0.0, 1.0, 0.0, np.inf, "scale"),
        ([0.0, 1.0], [1.0, 2.0, 3.0], 0.0, 1.0, "broadcast"),
        ("a", 1.0, 0.0, 1.0, "^lower must be a real number"),
        (0.0, 1 + 2j, 0.0, 1.0, "^upper must be a real number"),  # issue 15: complex was cut to its real part
        (0.0, 10**400, 0.0, 1.0, "^upper must be representable"),  # issue 15: was OverflowError
    ],
)
def test_interval_bad_input(a, c, loc, scale, match):
    with pytest.raises(ValueError, match=match):
        laplace_interval_log_probability(a, c, loc, scale)


def test_box_log_probability_is_sum_of_sides():
    lo = np.array([[-1.0, 0.0], [-np.inf, 2.0]])
    hi = np.array([[1.0, 0.5], [0.0, np.inf]])
    mu = np.array([0.2, 1.0])
    got = laplace_box_log_probability(lo, hi, mu, 0.8)
    ref = [
        float(mp.log(mp_interval_prob(-1, 1, 0.2, 0.8) * mp_interval_prob(0, 0.5, 1.0, 0.8))),
        float(mp.log(mp_laplace_cdf(0.0, 0.2, 0.8) * (1 - mp_laplace_cdf(2.0, 1.0, 0.8)))),
    ]
    np.testing.assert_allclose(got, ref, rtol=1e-13)
    with pytest.raises(ValueError, match="shape"):
        laplace_box_log_probability(lo, hi, [0.0, 0.0, 0.0], 0.8)
    with pytest.raises(ValueError, match="1-D"):
        laplace_box_log_probability(lo, hi, 0.0, 0.8)


# ---------------------------------------------------------------- max event ratio


def test_max_interval_ratio_attains_epsilon_and_never_exceeds_it():
    eps, sens = 0.7, 2.0
    b = sens / eps
    edges = np.r_[-np.inf, np.linspace(-15, 15, 301), np.inf]
    res = laplace_max_interval_log_ratio(0.0, sens, b, edges)
    assert res.log_ratio_max <= eps + 1e-12
    assert res.log_ratio_max == pytest.approx(eps, abs=1e-12)  # intervals below both points attain it
    assert res.argmax_upper <= 0.0
    assert -res.log_ratio_min == pytest.approx(eps, abs=1e-12)
    assert res.argmin_lower >= sens
    assert res.n_events == 303 * 302 // 2
    # a brute-force recomputation of the maximum
    i, j = np.triu_indices(edges.size, 1)
    lr = laplace_interval_log_probability(edges[i], edges[j], 0.0, b) - laplace_interval_log_probability(
        edges[i], edges[j], sens, b
    )
    assert res.log_ratio_max == pytest.approx(np.max(lr), abs=1e-12)  # the subtraction rounds; ours is exact
    assert res.log_ratio_max == sens / b  # an interval below both centres: (v - u) / b, exactly


def test_max_interval_ratio_exact_for_ends_far_beyond_rounding():
    # found by the property test: ends 1.2e24 scales out, where each log probability is known only to about
    # 2.7e8 (an ulp), so their difference came out as 2^28 instead of 134217729 = |u - v| / b
    far = [-1.2089258196146292e24, -1.2089258196146294e24]
    res = laplace_max_interval_log_ratio(0.0, 134217729.0, 1.0, far)
    assert res.log_ratio_max == res.log_ratio_min == 134217729.0
    res = laplace_max_interval_log_ratio(0.0, 3.0, 2.0, [-x for x in far])  # above both centres
    assert res.log_ratio_max == res.log_ratio_min == -1.5


def test_max_interval_ratio_detects_halved_scale():
    eps, sens = 1.0, 1.0
    res = laplace_max_interval_log_ratio(0.0, sens, sens / (2 * eps), np.linspace(-8, 8, 161))
    assert res.max_abs_log_ratio == pytest.approx(2 * eps, abs=1e-12)


def test_max_box_ratio_is_l1_over_scale():
    u = np.zeros(3)
    v = np.array([1.0, -0.5, 0.25])
    res = laplace_max_interval_log_ratio(u, v, 0.5, np.linspace(-6, 6, 121))
    assert res.log_ratio_max == pytest.approx(np.abs(v).sum() / 0.5, abs=1e-12)
    assert res.argmax_lower.shape == (3,)
    # the argmax box really has that log ratio
    box = laplace_box_log_probability(res.argmax_lower, res.argmax_upper, u, 0.5) - laplace_box_log_probability(
        res.argmax_lower, res.argmax_upper, v, 0.5
    )
    assert box == pytest.approx(res.log_ratio_max, abs=1e-12)
    assert res.n_events == (121 * 120 // 2) ** 3


@pytest.mark.parametrize(
    "edges, match",
    [([0.0], "at least 2"), ([1.0, 1.0], "at least 2"), ([0.0, np.nan], "NaN"), (np.zeros((2, 2)), "1-D")],
)
def test_max_interval_ratio_bad_input(edges, match):
    with pytest.raises(ValueError, match=match):
        laplace_max_interval_log_ratio(0.0, 1.0, 1.0, edges)


def test_max_interval_ratio_bad_scale():
    with pytest.raises(ValueError, match="scale"):
        laplace_max_interval_log_ratio(0.0, 1.0, -1.0, [0.0, 1.0])


# ---------------------------------------------------------------- KL divergence


@pytest.mark.parametrize(
    "mu1, mu2, b1, b2",
    [(0, 1, 1, 1), (0, 3, 0.5, 0.5), (1, -2, 0.7, 1.9), (0, 0, 1, 2), (0, 1e-7, 1, 1), (0, 0.3, 1, 1 + 1e-9)],
)
def test_kl_matches_mpmath_integral(mu1, mu2, b1, b2):
    got = laplace_kl_divergence(mu1, mu2, b1, b2)
    ref = float(mp_kl(mu1, mu2, b1, b2))
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-300)


def test_kl_tiny_shift_keeps_relative_precision():
    # t + e^{-t} - 1 = t^2/2 - t^3/6 + ...: naive evaluation gives 0 or garbage here
    t = 1e-9
    ref = mp.mpf(t) + mp.expm1(-mp.mpf(t))
    assert laplace_kl_divergence(0.0, t, 1.0) == pytest.approx(float(ref), rel=1e-14)


def test_kl_vector_adds_and_mechanism_value():
    eps = 0.8
    assert laplace_kl_divergence(0.0, 1.0, 1 / eps) == pytest.approx(eps + math.expm1(-eps), rel=1e-15)
    vec = laplace_kl_divergence([0.0, 0.0], [1.0, -2.0], 1.5)
    assert vec == pytest.approx(laplace_kl_divergence(0, 1, 1.5) + laplace_kl_divergence(0, -2, 1.5), rel=1e-15)
    assert laplace_kl_divergence(1.0, 1.0, 2.0) == 0.0


@pytest.mark.parametrize(
    "args, match",
    [
        ((0, 1, 0.0), "scale"),
        ((0, 1, 1.0, -2.0), "scale_prime"),
        ((np.nan, 1, 1.0), "^loc must"),  # issue 15: was named value
        ((0, np.nan, 1.0), "^loc_prime must"),
        (([0, 1], 1, 1.0), "same shape"),
    ],
)
def test_kl_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        laplace_kl_divergence(*args)


# ---------------------------------------------------------------- event-ratio bounds


def test_interval_counts_matches_direct_count():
    rng = np.random.default_rng(5)
    x = rng.normal(size=1000)
    lo = np.array([-np.inf, -1.0, 0.0, 0.5])
    hi = np.array([0.0, 1.0, np.inf, 0.5])
    want = [np.count_nonzero((x > a) & (x <= c)) for a, c in zip(lo, hi, strict=True)]
    np.testing.assert_array_equal(interval_counts(x, lo, hi), want)
    with pytest.raises(ValueError, match="samples"):
        interval_counts(np.array([0.0, np.nan]), lo, hi)
    with pytest.raises(ValueError, match="1-D"):
        interval_counts(np.zeros((2, 2)), lo, hi)


def test_event_ratio_bounds_clopper_pearson_values():
    # with one event the per-bound level is alpha/4; compare with scipy's exact binomial CI
    res = event_ratio_bounds([300], 1000, [100], 1000, alpha=0.04)
    ci = stats.binomtest(300, 1000).proportion_ci(confidence_level=1 - 2 * 0.01, method="exact")
    cip = stats.binomtest(100, 1000).proportion_ci(confidence_level=1 - 2 * 0.01, method="exact")
    assert res.p_low[0] == pytest.approx(ci.low, rel=1e-10)
    assert res.p_high[0] == pytest.approx(ci.high, rel=1e-10)
    assert res.log_ratio_lower[0] == pytest.approx(math.log(ci.low / cip.high), rel=1e-10)
    assert res.log_ratio_upper[0] == pytest.approx(math.log(ci.high / cip.low), rel=1e-10)
    assert res.log_ratio_estimate[0] == pytest.approx(math.log(3.0))


def test_event_ratio_bounds_zero_counts_and_bonferroni():
    res = event_ratio_bounds([0, 10], 100, [5, 0], 100, alpha=1e-3)
    assert res.p_low[0] == 0.0 and res.log_ratio_lower[0] == -np.inf
    assert res.log_ratio_upper[1] == np.inf
    assert res.log_ratio_estimate[0] == -np.inf and res.log_ratio_estimate[1] == np.inf
    one = event_ratio_bounds([10], 100, [5], 100, alpha=1e-3)
    assert res.p_low[1] < one.p_low[0]  # more events -> wider intervals (alpha/(4m))


def test_event_ratio_bounds_coverage_and_power():
    # true epsilon 1: lower bound valid; true epsilon 2 (halved scale): detected
    rng = np.random.default_rng(11)
    lo = np.full(5, -np.inf)
    hi = np.array([-2.0, -1.0, 0.0, 0.5, 1.0])
    x, y = rng.laplace(0, 1, 400_000), rng.laplace(1, 1, 400_000)
    good = sample_interval_ratio_bounds(x, y, lo, hi, alpha=1e-6)
    assert good.epsilon_lower <= 1.0
    assert good.epsilon_lower > 0.9
    assert good.check(1.0).passed
    x2, y2 = rng.laplace(0, 0.5, 400_000), rng.laplace(1, 0.5, 400_000)
    bad = sample_interval_ratio_bounds(x2, y2, lo, hi, alpha=1e-6)
    assert bad.epsilon_lower > 1.5
    assert not bad.check(1.0).passed


def test_event_ratio_false_alarm_rate_is_below_alpha():
    # at a loose alpha, over many seeds, the ratio interval misses the truth no more often than alpha
    alpha, misses, trials = 0.2, 0, 300
    p, q = laplace_interval_probability(-np.inf, 0.0, 0.0, 1.0), laplace_interval_probability(-np.inf, 0.0, 1.0, 1.0)
    truth = math.log(p / q)
    rng = np.random.default_rng(2024)
    for _ in range(trials):
        res = event_ratio_bounds([rng.binomial(200, p)], 200, [rng.binomial(200, q)], 200, alpha=alpha)
        misses += not (res.log_ratio_lower[0] <= truth <= res.log_ratio_upper[0])
    # P(Bin(300, 0.2) >= 80) ~ 3e-3; the union bound makes the real rate far smaller still
    assert misses < 80


@pytest.mark.parametrize(
    "args, kw, match",
    [
        (([1], 0, [1], 10), {}, "n must"),
        (([1], 10, [1], 10), {"alpha": 0.0}, "alpha"),
        (([11], 10, [1], 10), {}, "hits must lie"),
        (([1.5], 10, [1], 10), {}, "integer counts"),
        (([1, 2], 10, [1], 10), {}, "same shape"),
        (([], 10, [], 10), {}, "empty"),
    ],
)
def test_event_ratio_bounds_bad_input(args, kw, match):
    with pytest.raises(ValueError, match=match):
        event_ratio_bounds(*args, **kw)


def test_check_bad_epsilon_and_public_names():
    res = event_ratio_bounds([5], 10, [5], 10)
    with pytest.raises(ValueError, match="epsilon"):
        res.check(0.0)
    for name in dpcore.privacy_loss.__all__:
        assert hasattr(dpcore, name)


def test_event_detection_miss_against_simulation_free_cases() -> None:
    """The miss bound is tiny for a gross violation, large for a marginal one, and refuses non-violations."""
    from dpcore.event_ratios import event_detection_miss

    gross = event_detection_miss(0.5, 0.5 * math.exp(-2.0), 10**6, 10**6, 1.0, events=105)
    assert gross < 1e-12
    marginal = event_detection_miss(0.5, 0.5 * math.exp(-1.01), 10**4, 10**4, 1.0, events=105)
    assert marginal > 0.5
    zero = event_detection_miss(0.5, 0.0, 10**5, 10**5, 1.0, events=10)
    assert zero < 1e-12
    with pytest.raises(ValueError, match="violation"):
        event_detection_miss(0.5, 0.3, 1000, 1000, 1.0, events=1)
    # the bound is an upper bound: it dominates a direct computation of the miss for one event
    from scipy import stats as st

    from dpcore.montecarlo import clopper_pearson_bounds

    n, p, q, a = 400, 0.5, 0.5 * math.exp(-2.0), 1e-3 / 4
    k = np.arange(n + 1)
    lo = clopper_pearson_bounds(k, n, a)[0]
    hi = clopper_pearson_bounds(k, n, a)[1]
    with np.errstate(divide="ignore"):
        detect = np.log(lo)[:, None] - np.log(hi)[None, :] > 1.0
    pk, qk = st.binom.pmf(k, n, p), st.binom.pmf(k, n, q)
    direct_miss = 1.0 - float(pk @ detect @ qk)
    assert direct_miss <= event_detection_miss(p, q, n, n, 1.0, events=1, alpha=1e-3) + 1e-12


# --------------------------------------------------------------------------- issue 15


def test_issue15_extreme_arguments_give_numbers_or_value_errors():
    """laplace_privacy_loss and laplace_kl_divergence returned NaN at extreme arguments."""
    import mpmath as mp

    # z - u overflows; z is above both answers, so the loss is (u - v)/b = (-1.7 + 1.6)/0.5 = -0.2
    assert laplace_privacy_loss(1.7e308, -1.7e308, -1.6e308, 0.5e308) == pytest.approx(-0.2, rel=1e-14)
    with pytest.raises(ValueError, match="overflows"):
        laplace_privacy_loss(0.0, 0.0, 1.0, 1e-310)
    # KL(Lap(0, 1) || Lap(0, b')) = log b' + 1/b' - 1: 1e300 - 691.8 at b' = 1e-300, beyond the doubles at 1e-310
    assert laplace_kl_divergence(0.0, 0.0, 1.0, 1e-300) == pytest.approx(1e300, rel=1e-15)
    with pytest.raises(ValueError, match="overflows"):
        laplace_kl_divergence(0.0, 0.0, 1.0, 1e-310)
    # log(b'/b) + b/b' - 1 at b'/b = 1e300: r - 1 - log r with r = 1e-300, against mpmath
    with mp.workdps(50):
        ref = mp.log(mp.mpf(1e300)) + mp.mpf(1e-300) - 1
    assert laplace_kl_divergence(0.0, 0.0, 1.0, 1e300) == pytest.approx(float(ref), rel=1e-14)


def test_issue15_max_interval_ratio_is_bounded_and_names_loc():
    with pytest.raises(ValueError, match="max_intervals"):
        laplace_max_interval_log_ratio(0.0, 1.0, 1.0, np.linspace(-5, 5, 10**5))
    with pytest.raises(ValueError, match="^loc_prime must"):
        laplace_max_interval_log_ratio(0.0, np.nan, 1.0, [0.0, 1.0])
    # blocks give the same extremes as one block: the exact answer Delta/b = 1 on a grid containing 0 and 1
    res = laplace_max_interval_log_ratio(
        0.0, 1.0, 1.0, np.concatenate(([-np.inf, 0.0, 1.0, np.inf], np.linspace(-3, 4, 1500)))
    )
    assert res.log_ratio_max == pytest.approx(1.0, rel=1e-12)
    assert res.log_ratio_min == pytest.approx(-1.0, rel=1e-12)


def test_issue15_loss_never_exceeds_its_bound_by_rounding():
    """|z - v| - |z - u| rounded to -4 at z = 2**53 + 4, u = 0, v = 3: beyond |u - v| = 3 (found by hypothesis)."""
    assert laplace_privacy_loss(2.0**53 + 4, 0.0, 3.0, 1.0) == -3.0
    assert laplace_privacy_loss(-(2.0**53) - 4, 0.0, 3.0, 1.0) == 3.0


def test_sample_interval_ratio_bounds_names_samples_prime():
    from dpcore.event_ratios import sample_interval_ratio_bounds

    with pytest.raises(ValueError, match="samples_prime"):
        sample_interval_ratio_bounds(np.zeros(10), [np.nan, 1.0], [0.0], [1.0])
