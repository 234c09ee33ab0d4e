"""The constants of every statistical check, tested against their derivations.

Each radius or level used by dpcore.montecarlo and dpcore.auditing is derived
here from the inequality it rests on -- symbolically with sympy where the
equation can be solved, otherwise by evaluating the exact tail in high
precision at the value the code returns -- and compared with what the code
computes. A constant that is off by a factor (a missing 2, alpha where alpha/2
is due, a missing union-bound term) changes these numbers, even where the
check is so conservative that a calibration experiment at a loose alpha could
not see it (see tests/test_calibration.py).
"""

import math

import numpy as np
import pytest
import sympy as sp
from scipy import optimize, stats

import dpbook
import dpcore
from dpcore._engine import chunk_rng
from dpcore._validation import as_seed_sequence
from dpcore.auditing import audit_epsilon
from dpcore.mechanisms import LaplaceMechanism
from dpcore.montecarlo import clopper_pearson_bounds, median_of_means_radius

n_, t_, r_, a_, W_, V_, s2_ = sp.symbols("n t r alpha W V sigma2", positive=True)
CASES = [(100, 0.05), (1000, 1e-6), (12_345, 1e-3), (7, 0.3)]


def num(expr, **values):
    """Evaluate a sympy expression at the given symbol values, to 30 digits."""
    subs = {
        sp.Symbol(k, positive=True): sp.nsimplify(v) if isinstance(v, int) else sp.Float(v, 30)
        for k, v in values.items()
    }
    return float(sp.N(expr.subs(subs), 30))


def unique_positive_root(equation, symbol):
    roots = [s for s in sp.solve(equation, symbol) if s.is_positive is not False]
    assert len(roots) == 1, roots
    return sp.simplify(roots[0])


# --------------------------------------------------------------------------- DKW (check_cdf)


def dkw_radius_symbolic():
    # Massart (1990): P(sup |F_n - F| > t) <= 2 exp(-2 n t^2); set the bound to alpha
    return unique_positive_root(sp.Eq(2 * sp.exp(-2 * n_ * t_**2), a_), t_)


def test_dkw_radius_is_the_solution_of_two_exp_equal_alpha():
    t_sym = dkw_radius_symbolic()
    assert sp.simplify(t_sym - sp.sqrt(sp.log(2 / a_) / (2 * n_))) == 0
    # Massart's condition exp(-2 n t^2) <= 1/2 holds at this t for every alpha <= 1
    assert sp.simplify(sp.exp(-2 * n_ * t_sym**2) - a_ / 2) == 0
    for n, alpha in CASES:
        res = dpcore.check_cdf(lambda g, s: g.standard_normal(s), n, stats.norm.cdf, alpha=alpha, rng=1)
        assert res.details["dkw_radius"] == pytest.approx(num(t_sym, n=n, alpha=alpha), rel=1e-13)


def test_dkw_twin_uses_the_one_sided_constant():
    one_sided = unique_positive_root(sp.Eq(sp.exp(-2 * n_ * t_**2), a_), t_)
    res = dpbook.flawed.check_cdf_dkw_without_two(lambda g, s: g.standard_normal(s), 500, stats.norm.cdf, alpha=0.01)
    assert res.details["dkw_radius"] == pytest.approx(num(one_sided, n=500, alpha=0.01), rel=1e-13)
    assert res.details["dkw_radius"] < num(dkw_radius_symbolic(), n=500, alpha=0.01)


# --------------------------------------------------------------------------- Hoeffding / empirical Bernstein


def test_bounded_mean_radii_and_union_bound():
    # budget: Hoeffding alpha/2 (two-sided: 2 exp(-2 n r^2 / W^2) = alpha/2);
    # empirical Bernstein alpha/2, split over two sides: delta = alpha/4 per side (Maurer & Pontil 2009, Thm 4)
    a_h, delta_b = a_ / 2, a_ / 4
    assert sp.simplify(a_h + 2 * delta_b - a_) == 0
    r_h = unique_positive_root(sp.Eq(2 * sp.exp(-2 * n_ * r_**2 / W_**2), a_h), r_)
    assert sp.simplify(r_h - W_ * sp.sqrt(sp.log(4 / a_) / (2 * n_))) == 0
    # Theorem 4 for [0, 1] variables, rescaled to [0, W]: X/W has sample variance V/W^2
    L = sp.log(2 / delta_b)
    r_b = W_ * (sp.sqrt(2 * (V_ / W_**2) * L / n_) + 7 * L / (3 * (n_ - 1)))
    lower, upper = -1.0, 3.0
    for n, alpha in CASES[:3]:
        seed = 5

        def sampler(g, s):
            return g.uniform(lower, upper, s) ** 1  # noqa: B023

        res = dpcore.check_bounded_mean(sampler, n, 1.0, lower=lower, upper=upper, alpha=alpha, rng=seed)
        xs = chunk_rng(as_seed_sequence(seed), 0).uniform(lower, upper, n)  # one chunk: the same draws
        var = float(np.var(xs, ddof=1))
        assert res.details["sample_variance"] == pytest.approx(var, rel=1e-10)
        vals = dict(n=n, alpha=alpha, W=upper - lower, V=var)
        assert res.details["radius_hoeffding"] == pytest.approx(num(r_h, **vals), rel=1e-12)
        assert res.details["radius_bernstein"] == pytest.approx(num(r_b, **vals), rel=1e-12)
        r = min(num(r_h, **vals), num(r_b, **vals))
        assert res.ci_high - res.estimate == pytest.approx(r, rel=1e-10)


# --------------------------------------------------------------------------- Clopper-Pearson


def binom_tail_ge(n, k, p):
    """P(Bin(n, p) >= k) as an exact sympy sum."""
    return sum(sp.binomial(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


def test_beta_binomial_identity_symbolically():
    # the identity behind p_lo = B^{-1}(a; k, n-k+1): P(Bin(n, p) >= k) = I_p(k, n-k+1)
    p, u = sp.symbols("p u", positive=True)
    for n, k in [(5, 3), (7, 1), (6, 6), (9, 4)]:
        density = u ** (k - 1) * (1 - u) ** (n - k) / sp.beta(k, n - k + 1)
        incomplete = sp.integrate(sp.expand_func(density), (u, 0, p))
        assert sp.simplify(sp.expand(binom_tail_ge(n, k, p) - incomplete)) == 0


@pytest.mark.parametrize("n,k,a", [(20, 7, 0.025), (50, 0, 0.05), (50, 50, 0.05), (200, 3, 1e-6), (1000, 500, 5e-7)])
def test_clopper_pearson_bounds_solve_the_binomial_tail_equations(n, k, a):
    lo, hi = (float(v) for v in clopper_pearson_bounds(k, n, a))
    mp = sp.Float
    if k == 0:
        assert lo == 0.0
    else:  # P(Bin(n, p_lo) >= k) = a
        assert float(binom_tail_ge(n, k, mp(lo, 40))) == pytest.approx(a, rel=1e-9)
    if k == n:
        assert hi == 1.0
    else:  # P(Bin(n, p_hi) <= k) = a
        assert float(1 - binom_tail_ge(n, k + 1, mp(hi, 40))) == pytest.approx(a, rel=1e-9)
    # closed forms at the ends: p_hi = 1 - a^(1/n) solves (1 - p)^n = a, p_lo = a^(1/n) solves p^n = a
    if k == 0:
        closed = 1 - a_ ** sp.Rational(1, n)
        assert sp.simplify((1 - closed) ** n - a_) == 0
        assert hi == pytest.approx(num(closed, alpha=a), rel=1e-10)
    if k == n:
        closed = a_ ** sp.Rational(1, n)
        assert sp.simplify(closed**n - a_) == 0
        assert lo == pytest.approx(num(closed, alpha=a), rel=1e-10)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_probability_result_alpha_split(alternative):
    # two-sided: P(p < lo) + P(p > hi) <= a + a = alpha  =>  a = alpha/2; one-sided: a = alpha
    a_sym = unique_positive_root(sp.Eq(2 * sp.Symbol("a", positive=True), a_), sp.Symbol("a", positive=True))
    assert a_sym == a_ / 2
    n, k, alpha = 80, 23, 0.01
    res = dpcore.probability_result(k, n, 0.3, alternative=alternative, alpha=alpha)
    a = alpha / 2 if alternative == "two-sided" else alpha
    lo, hi = (float(v) for v in clopper_pearson_bounds(k, n, a))
    if alternative != "greater":
        assert res.ci_low == lo
    if alternative != "less":
        assert res.ci_high == hi


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_probability_acceptance_uses_the_same_split(alternative):
    n, alpha = 30, 0.1
    for true_p, claimed in [(0.3, 0.3), (0.3, 0.5), (0.6, 0.4)]:
        brute = sum(
            stats.binom.pmf(k, n, true_p)
            for k in range(n + 1)
            if dpcore.probability_result(k, n, claimed, alternative=alternative, alpha=alpha).passed
        )
        got = dpcore.probability_acceptance(n, true_p, claimed, alternative=alternative, alpha=alpha)
        assert got == pytest.approx(brute, abs=1e-12)


# ------------------------------------------------------------- median of means (check_mean, check_variance)


def test_median_of_means_single_block_is_chebyshev():
    r_sym = unique_positive_root(sp.Eq(s2_ / (n_ * r_**2), a_), r_)  # Chebyshev: sigma^2/(n r^2) = alpha
    assert sp.simplify(r_sym - sp.sqrt(s2_ / (n_ * a_))) == 0
    for n, alpha in [(100, 0.05), (10, 0.2)]:
        r, k = median_of_means_radius(n, 2.5, alpha)
        assert k == 1
        assert r == pytest.approx(num(r_sym, n=n, alpha=alpha, sigma2=2.5), rel=1e-12)


@pytest.mark.parametrize("n,var,alpha", [(2000, 3.0, 0.01), (10**6, 1.0, 1e-6), (5000, 0.5, 1e-3)])
def test_median_of_means_radius_solves_the_binomial_tail(n, var, alpha):
    r, k = median_of_means_radius(n, var, alpha)
    assert k % 2 == 1
    m, h = n // k, (k + 1) // 2
    p_block = sp.Float(var, 40) / (m * sp.Float(r, 40) ** 2)  # Chebyshev per block
    # the median misses by >= r only if >= h blocks do: P(Bin(k, p) >= h) = alpha
    assert float(binom_tail_ge(k, h, p_block)) == pytest.approx(alpha, rel=1e-8)

    # no other odd block count gives a smaller radius (solved independently with brentq)
    def radius(kk):
        hh = (kk + 1) // 2
        p = optimize.brentq(
            lambda q: stats.binom.sf(hh - 1, kk, q) - alpha, 1e-300, 1.0 - 1e-16, xtol=1e-300, rtol=1e-14
        )
        return math.sqrt(var / ((n // kk) * p))

    for kk in {max(1, k - 2), k + 2, 1, 3}:
        if kk <= n:
            assert r <= radius(kk) * (1 + 1e-9)


def test_check_mean_and_check_variance_use_the_derived_radius():
    res = dpcore.check_mean(lambda g, s: g.standard_normal(s), 3000, 0.0, variance_bound=1.7, alpha=1e-4, rng=2)
    r, k = median_of_means_radius(3000, 1.7, 1e-4)
    assert res.details["radius"] == r and res.details["blocks"] == k and res.n == (3000 // k) * k
    # Var[(X1 - X2)^2 / 2] derived from the moments of two independent centred copies
    a, b, mu4, mu3 = sp.symbols("a b mu4 mu3")
    moments = {0: 1, 1: 0, 2: s2_, 3: mu3, 4: mu4}
    y = sp.expand((a - b) ** 2 / 2)

    def expect(poly):
        poly = sp.Poly(sp.expand(poly), a, b)
        return sp.expand(sum(c * moments[i] * moments[j] for (i, j), c in poly.terms()))

    assert sp.simplify(expect(y) - s2_) == 0
    var_y = sp.simplify(expect(y**2) - expect(y) ** 2)
    assert sp.simplify(var_y - (mu4 + s2_**2) / 2) == 0
    kappa = sp.Symbol("kappa", positive=True)
    bound = sp.simplify(var_y.subs(mu4, kappa * s2_**2))  # mu4 <= kappa sigma^4
    claimed, kap, n, alpha = 2.0, 6.0, 4001, 1e-3
    res = dpcore.check_variance(lambda g, s: g.laplace(0, 1, s), n, claimed, kurtosis_bound=kap, alpha=alpha, rng=3)
    expected = median_of_means_radius(n // 2, float(bound.subs({kappa: kap, s2_: claimed})), alpha)
    assert (res.details["radius"], res.details["blocks"]) == expected


# --------------------------------------------------------------------------- auditing: Bonferroni over 2m bounds


@pytest.mark.parametrize("delta", [0.0, 0.05])
def test_audit_bonferroni_level_and_bound(delta):
    m_, lvl = sp.symbols("m a", positive=True)
    per_bound = unique_positive_root(sp.Eq(2 * m_ * lvl, a_), lvl)  # 2m one-sided bounds, union = alpha
    assert sp.simplify(per_bound - a_ / (2 * m_)) == 0
    res = audit_epsilon(LaplaceMechanism(1.0), 0.0, 1.0, 20_000, confidence=0.9, rng=4, bins=128, delta=delta)
    m = len(res.events)
    a = num(per_bound, alpha=0.1, m=m)
    for ev in res.events:
        lo = float(clopper_pearson_bounds(ev.hits_numerator, res.n_estimation, a)[0])
        hi = float(clopper_pearson_bounds(ev.hits_denominator, res.n_estimation, a)[1])
        assert ev.p_lower == lo and ev.q_upper == hi
        expected = math.log((lo - delta) / hi) if lo > delta else -math.inf
        assert ev.epsilon_lower == pytest.approx(expected, rel=1e-12)
    assert res.epsilon_lower == max(0.0, max(e.epsilon_lower for e in res.events))


def test_check_variance_estimate_is_the_mean_of_half_squared_pair_differences():
    # k = 1 block at a loose alpha: the estimate is the plain mean of Y = (X_{2i} - X_{2i+1})^2 / 2
    n, alpha, seed = 400, 0.2, 9
    res = dpcore.check_variance(lambda g, s: g.normal(0, 1.5, s), n, 2.25, kurtosis_bound=3.0, alpha=alpha, rng=seed)
    assert res.details["blocks"] == 1
    xs = chunk_rng(as_seed_sequence(seed), 0).normal(0, 1.5, n)  # one chunk: the same draws
    assert res.estimate == pytest.approx(float(np.mean((xs[0::2] - xs[1::2]) ** 2 / 2)), rel=1e-12)
