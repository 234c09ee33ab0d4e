"""dpcore.pld: the PLD accountant's bracket contains answers computed outside it.

References: the exact Gaussian composition (k Gaussians are one of sensitivity
sqrt(k): Balle & Wang's Theorem 8 in 40-digit mpmath, dpbook.reference), the
exact k-fold randomised response (binomial sums), the single-step subsampled
Gaussian by mpmath quadrature of the hockey-stick divergence, and
prv-accountant's certified brackets for the DP-SGD anchors of issue 14.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

import dpcore
from dpbook import reference as ref
from dpcore.pld import atomic_privacy_loss, gaussian_privacy_loss, laplace_privacy_loss_law


def _gauss_exact(sigma: float, k: int, delta: float) -> float:
    return float(ref.gaussian_epsilon(1.0, delta, math.sqrt(k) / sigma))


@pytest.mark.parametrize("sigma, k", [(1.0, 1), (1.0, 10), (2.0, 100), (5.0, 1000), (0.5, 1000)])
def test_gaussian_bracket_contains_the_exact_composition(sigma, k):
    acc = dpcore.PldAccountant().compose(dpcore.GaussianMechanism(sigma), k)
    br = acc.epsilon_bracket_details(1e-5)
    exact = _gauss_exact(sigma, k, 1e-5)
    assert br.lower <= exact <= br.upper
    assert br.upper - br.lower <= 1e-3 * br.lower  # the default relative width
    assert acc.epsilon(1e-5) == br.upper


def test_mixed_gaussians_compose_to_the_gdp_answer():
    # mu-GDP parts compose to sqrt(sum mu_i^2)-GDP exactly: 3 at sigma 2 and 5 at sigma 3
    acc = dpcore.PldAccountant().compose(dpcore.GaussianMechanism(2.0), 3).compose(dpcore.GaussianMechanism(3.0), 5)
    mu = math.sqrt(3 / 4 + 5 / 9)
    exact = float(ref.gaussian_epsilon(1.0, 1e-6, mu))
    lo, hi = acc.epsilon_bracket(1e-6)
    assert lo <= exact <= hi


@pytest.mark.parametrize("eps0, k", [(0.5, 1), (0.1, 100), (1.0, 20)])
def test_randomized_response_bracket_contains_the_binomial_answer(eps0, k):
    # k-fold RR: the loss is eps0 (2B - k), B ~ Bin(k, p); delta(eps) is a finite sum (Kairouz, Oh & Viswanath)
    p = math.exp(eps0) / (1 + math.exp(eps0))
    j = np.arange(k + 1)
    pmf = stats.binom(k, p).pmf(j)
    loss = eps0 * (2 * j - k)

    def delta(e: float) -> float:
        return float(np.sum(pmf * np.maximum(0.0, 1 - np.exp(e - loss))))

    target = 1e-5
    lo_e, hi_e = 0.0, eps0 * k
    for _ in range(200):
        mid = (lo_e + hi_e) / 2
        lo_e, hi_e = (lo_e, mid) if delta(mid) <= target else (mid, hi_e)
    acc = dpcore.PldAccountant().compose(dpcore.RandomizedResponse(eps0), k)
    lo, hi = acc.epsilon_bracket(target)
    assert lo <= hi_e and lo_e <= hi
    d_lo, d_hi = acc.delta_bracket(0.5 * eps0 * k, value_discretization=1e-4)
    assert d_lo <= delta(0.5 * eps0 * k) <= d_hi


def test_mean_matching_removes_the_rounding_bias_of_atoms_on_cell_edges():
    # eps0 = 50.5 h: both atoms sit on a cell edge and round down by h/2; over 2000 steps that bias (10) dwarfs the
    # Hoeffding width (about 1.5): only the mean-matching shift keeps the exact answer inside the bracket
    eps0, k, h = 0.505, 2000, 0.01
    p = math.exp(eps0) / (1 + math.exp(eps0))
    j = np.arange(k + 1)
    pmf, loss = stats.binom(k, p).pmf(j), eps0 * (2 * j - k)
    exact = float(np.sum(np.where(loss > 300.0, pmf * -np.expm1(np.minimum(300.0 - loss, 0.0)), 0.0)))
    acc = dpcore.PldAccountant(relative_width=math.inf).compose(dpcore.RandomizedResponse(eps0), k)
    lo, hi = acc.delta_bracket(300.0, value_discretization=h)
    assert lo <= exact <= hi


def test_laplace_and_discrete_laplace_single_release_brackets_contain_their_exact_epsilon():
    for mech in (
        dpcore.LaplaceMechanism(1.0),
        dpcore.LaplaceMechanism(0.3, 2.0),
        dpcore.DiscreteLaplaceMechanism(3, 4),
    ):
        lo, hi = dpcore.PldAccountant(closed_form=False).compose(mech).epsilon_bracket(1e-4)  # on the grid
        assert lo <= mech.epsilon(1e-4) <= hi


@pytest.mark.parametrize(
    "mech",
    [dpcore.LaplaceMechanism(1.0), dpcore.RandomizedResponse(0.7), dpcore.SubsampledGaussianMechanism(0.8, 0.2)],
)
def test_one_release_is_answered_by_its_exact_profile(mech):
    acc = dpcore.PldAccountant().compose(mech)
    br = acc.epsilon_bracket_details(1e-5)
    assert br.method == "exact" and br.upper == mech.epsilon(1e-5) == acc.epsilon(1e-5)
    assert float(mech.delta(br.upper)) <= 1e-5 < float(mech.delta(br.lower)) and br.upper - br.lower < 1e-9
    grid = dpcore.PldAccountant(closed_form=False).compose(mech).epsilon_bracket(1e-5)
    assert grid[0] <= br.upper <= grid[1]
    # two releases are a composition: no closed form, the grid answers (Laplace: composed exactly)
    two = "exact-laplace" if isinstance(mech, dpcore.LaplaceMechanism) else "pld"
    assert dpcore.PldAccountant().compose(mech, 2).epsilon_bracket_details(1e-5).method == two


def test_laplace_composition_sits_between_its_lower_bracket_and_the_rdp_bound():
    # eps0 = 0.1, k = 100, delta = 1e-5 (issue 14: basic 10, advanced 5.85, Kairouz et al. 4.307, exact about 4.220)
    lap = dpcore.LaplaceMechanism(10.0)
    lo, hi = dpcore.PldAccountant().compose(lap, 100).epsilon_bracket(1e-5)
    rdp = dpcore.RdpAccountant().compose(lap, 100).epsilon(1e-5)
    rr_lo, _ = dpcore.PldAccountant().compose(dpcore.RandomizedResponse(0.1), 100).epsilon_bracket(1e-5)
    assert hi < rdp and hi < rr_lo  # randomised response is the worst 0.1-DP mechanism (KOV): Laplace is below it
    assert 4.21 < lo <= hi < 4.23


def test_single_subsampled_gaussian_step_against_mpmath_hockey_stick():
    sigma, q, eps = 0.8, 0.2, 0.5
    with mp.workdps(30):
        s, qq, e = mp.mpf(sigma), mp.mpf(q), mp.mpf(eps)

        def n0(x):
            return mp.npdf(x, 0, s)

        def mix(x):
            return (1 - qq) * n0(x) + qq * mp.npdf(x, 1, s)

        # mix/n0 = 1 - q + q exp((2x - 1)/(2 s^2)) increases in x: each positive part lies on a half-line
        def cut(ratio):  # the x where mix/n0 = ratio
            return s**2 * mp.log((ratio - 1 + qq) / qq) + mp.mpf(1) / 2

        remove = mp.quad(lambda x: mix(x) - mp.exp(e) * n0(x), [cut(mp.exp(e)), mp.inf])
        if mp.exp(-e) > 1 - qq:  # n0 > e^eps mix somewhere, left of the cut
            add = mp.quad(lambda x: n0(x) - mp.exp(e) * mix(x), [-mp.inf, cut(mp.exp(-e))])
        else:
            add = mp.mpf(0)
        truth = float(max(remove, add))
    mech = dpcore.SubsampledGaussianMechanism(sigma, q)
    assert mech.delta(eps) == pytest.approx(truth, rel=1e-9)
    d_lo, d_hi = dpcore.PldAccountant().compose(mech).delta_bracket(eps, value_discretization=1e-5)
    assert d_lo <= truth <= d_hi and d_hi - d_lo < 1e-3 * truth


def test_subsampling_at_rate_one_is_the_gaussian_mechanism():
    lo, hi = dpcore.PldAccountant().compose(dpcore.SubsampledGaussianMechanism(2.0, 1.0), 50).epsilon_bracket(1e-5)
    assert lo <= _gauss_exact(2.0, 50, 1e-5) <= hi


@pytest.mark.slow
@pytest.mark.parametrize(
    "sigma, q, steps, prv",
    [
        (1.1, 256 / 60000, 14062, (2.38045, 2.38274)),
        (0.8, 0.01, 1000, (3.13977, 3.14226)),
        (0.6, 0.05, 200, (15.4599, 15.4638)),
    ],
)
def test_dp_sgd_brackets_overlap_prv_accountant(sigma, q, steps, prv):
    """prv-accountant 0.2.0's certified brackets (eps_error 1e-3), measured for issue 14, must meet ours."""
    mech = dpcore.SubsampledGaussianMechanism(sigma, q)
    lo, hi = dpcore.PldAccountant().compose(mech, steps).epsilon_bracket(1e-5)
    assert lo <= prv[1] and prv[0] <= hi  # both contain the truth, so they intersect
    assert hi <= dpcore.RdpAccountant().compose(mech, steps).epsilon(1e-5)
    assert hi - lo <= 1e-3 * lo


def test_the_laws_agree_with_their_own_descriptions():
    g = gaussian_privacy_loss(0.7)
    x = np.linspace(-5, 7, 50)
    np.testing.assert_allclose(g.cdf(x) + g.sf(x), 1.0, atol=1e-15)
    assert g.partial_mean(-50, 50) == pytest.approx(0.7, rel=1e-12)  # E[L] = mu = KL
    lap = laplace_privacy_loss_law(1.3)
    assert lap.partial_mean(-2, 2) == pytest.approx(1.3 - 1 + math.exp(-1.3), rel=1e-12)  # KL of Laplace
    assert float(lap.cdf(np.array([1.3]))[0]) == 1.0 and float(lap.cdf(np.array([-1.31]))[0]) == 0.0
    p = math.e / (1 + math.e)  # randomised response at 1: E_P[e^{-L}] = p/e + (1 - p) e = 1
    rr = atomic_privacy_loss([1.0, -1.0], [p, 1 - p])
    assert rr.partial_mean(-2, 2) == pytest.approx(2 * p - 1) and rr.partial_mean(0, 2) == pytest.approx(p)
    with pytest.raises(ValueError, match="under Q"):  # E_P[e^{-L}] = 1.07 > 1: no law under Q has these losses
        atomic_privacy_loss([1.0, -1.0], [0.7, 0.3])
    partial = atomic_privacy_loss([2.0, 0.0], [0.5, 0.5])  # E_P[e^{-L}] = 0.568: Q puts 0.432 where P has none
    far = np.array([-1e6])
    assert float(partial.q_cdf(far)[0]) == pytest.approx(1 - 0.5 * math.exp(-2.0) - 0.5, rel=1e-12)
    assert float(partial.q_cdf(far)[0] + partial.q_sf(far)[0]) == pytest.approx(1.0, rel=1e-12)
    for mech in (dpcore.LaplaceMechanism(0.8), dpcore.GaussianMechanism(1.2), dpcore.RandomizedResponse(0.7)):
        (loss,) = mech.privacy_losses()
        for e in (0.0, 0.3, 1.0):
            assert loss.delta(e) == pytest.approx(float(mech.delta(e)), rel=1e-8, abs=1e-14)


def test_a_fixed_grid_is_used_as_given_when_any_width_is_accepted():
    # the subsampled Gaussian at rate 1 is the Gaussian mechanism, but goes through the grid (no closed form)
    acc = dpcore.PldAccountant(relative_width=math.inf, value_discretization=0.05).compose(
        dpcore.SubsampledGaussianMechanism(1.0, 1.0), 10
    )
    br = acc.epsilon_bracket_details(1e-5)
    assert br.value_discretization == 0.05 and br.lower <= _gauss_exact(1.0, 10, 1e-5) <= br.upper
    assert br.upper - br.lower > 1e-3 * br.lower  # wide, as asked


def test_bad_input_is_refused_with_the_parameter_named():
    cases = [
        (lambda: dpcore.PldAccountant(relative_width=0.0), "relative_width"),
        (lambda: dpcore.PldAccountant(closed_form="no"), "closed_form"),
        (lambda: dpcore.PldAccountant(relative_width=float("nan")), "relative_width"),
        (
            lambda: (
                dpcore.PldAccountant(value_discretization=0.3, closed_form=False)
                .compose(dpcore.LaplaceMechanism(1.0), 10)
                .epsilon(1e-5)
            ),
            "too coarse",
        ),
        (lambda: dpcore.PldAccountant(value_discretization=-1.0), "value_discretization"),
        (lambda: dpcore.PldAccountant().compose(dpcore.GaussianMechanism(1.0), 0), "count"),
        (lambda: dpcore.PldAccountant().compose(object()), "privacy_losses"),
        (lambda: dpcore.PldAccountant().epsilon(1e-5), "nothing composed"),
        (lambda: dpcore.PldAccountant().compose(dpcore.GaussianMechanism(1.0)).epsilon(0.0), "delta"),
        (lambda: dpcore.PldAccountant().compose(dpcore.GaussianMechanism(1.0)).epsilon(1e-12), "delta must be >="),
        (lambda: dpcore.PldAccountant().compose(dpcore.GaussianMechanism(1.0)).delta_bracket(-1.0), "epsilon"),
        (lambda: dpcore.SubsampledGaussianMechanism(1.0, 1.5), "sampling_rate"),
        (lambda: dpcore.SubsampledGaussianMechanism(1.0, 0.0), "sampling_rate"),
        (lambda: dpcore.SubsampledGaussianMechanism(0.0, 0.1), "sigma"),
        (
            lambda: (
                dpcore.PldAccountant(value_discretization=1e-9, closed_form=False)
                .compose(dpcore.LaplaceMechanism(1.0), 2)
                .epsilon(1e-5)
            ),
            "value_discretization",
        ),
    ]
    for call, word in cases:
        with pytest.raises(ValueError, match=word):
            call()


# --------------------------------------------------------------------------- connect-the-dots and the closed form


def _all_losses():
    yield gaussian_privacy_loss(0.7)
    yield laplace_privacy_loss_law(1.3)
    yield from dpcore.RandomizedResponse(0.8).privacy_losses()
    yield from dpcore.DiscreteLaplaceMechanism(2.5, 2).privacy_losses()
    yield from dpcore.SubsampledGaussianMechanism(0.9, 0.05).privacy_losses()
    yield from dpcore.SubsampledGaussianMechanism(2.0, 0.5).privacy_losses()


@pytest.mark.parametrize("loss", list(_all_losses()), ids=lambda l: l.name)
def test_the_law_under_q_is_the_law_under_p_tilted_by_exp_minus_loss(loss):
    """dQ/dP = e^{-L}: on every cell (a, b], e^{-b} P(cell) <= Q(cell) <= e^{-a} P(cell); Q's total is 1."""
    x = np.linspace(-8.0, 8.0, 3201)
    p_cell = np.diff(loss.cdf(x))
    q_cell = np.diff(loss.q_cdf(x))
    slack = 1e-12
    assert np.all(q_cell >= np.exp(-x[1:]) * p_cell - slack)
    assert np.all(q_cell <= np.exp(-x[:-1]) * p_cell + slack)
    np.testing.assert_allclose(loss.q_cdf(x) + loss.q_sf(x), 1.0, atol=1e-13)
    # negative control: Q's law taken equal to P's (the tilt forgotten) fails the upper inequality
    assert not np.all(p_cell <= np.exp(-x[:-1]) * p_cell + slack)


@pytest.mark.parametrize("eps0, k", [(0.5, 1), (0.1, 100), (0.37, 30), (1.0, 20)])
def test_connect_the_dots_bounds_randomized_response_from_above_and_tightly(eps0, k):
    """Atoms off the lattice (0.37): the bound is still above the binomial answer, within 1e-3 relative."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    j = np.arange(k + 1)
    pmf, loss = stats.binom(k, p).pmf(j), eps0 * (2 * j - k)
    target = 1e-5

    def delta(e: float) -> float:
        return float(np.sum(pmf * np.maximum(0.0, -np.expm1(e - loss))))

    exact = 0.0 if delta(0.0) <= target else float(optimize_brentq(lambda e: delta(e) - target, 0.0, eps0 * k))
    upper = dpcore.PldAccountant().compose(dpcore.RandomizedResponse(eps0), k).epsilon(target)
    assert exact <= upper <= exact + 1e-3 * max(exact, 1e-3)


def optimize_brentq(f, a, b):
    from scipy import optimize

    return optimize.brentq(f, a, b, xtol=1e-14, rtol=1e-14)


@pytest.mark.parametrize("sigma, k", [(1.0, 10), (2.0, 300), (0.7, 3)])
def test_connect_the_dots_on_a_grid_bounds_the_gaussian_from_above(sigma, k):
    """The rate-1 subsampled Gaussian is the Gaussian mechanism, discretised (no closed form taken)."""
    exact = _gauss_exact(sigma, k, 1e-5)
    acc = dpcore.PldAccountant().compose(dpcore.SubsampledGaussianMechanism(sigma, 1.0), k)
    upper = acc.epsilon(1e-5)
    assert exact <= upper <= exact * (1 + 1e-4)
    lo, hi = acc.epsilon_bracket(1e-5)
    assert lo <= exact <= hi <= upper


def test_a_wrong_split_of_the_cells_is_caught(monkeypatch):
    """Negative control: sending every cell's P-mass to its lower end (rounding down) is not pessimistic."""
    from dpcore import pld, pld_grid

    def rounded_down(loss, h, tau):
        d, infinite = original(loss, h, tau)
        lo, hi = pld_grid._truncation(loss, tau)
        points = h * np.arange(d.start, d.start + d.pmf.size)
        pmf = np.append(pld_grid._cell_masses(loss.cdf, loss.sf, points), 0.0)
        pmf[0] += float(loss.cdf(points[:1])[0])
        return pld_grid._Discrete(pmf, d.start, 0.0, 0.0), infinite

    original = pld._connect_dots
    monkeypatch.setattr(pld, "_connect_dots", rounded_down)
    exact = _gauss_exact(1.0, 10, 1e-5)
    upper = dpcore.PldAccountant().compose(dpcore.SubsampledGaussianMechanism(1.0, 1.0), 10).epsilon(1e-5)
    assert upper < exact


def test_only_gaussians_are_answered_in_closed_form():
    acc = dpcore.PldAccountant().compose(dpcore.GaussianMechanism(2.0), 3).compose(dpcore.GaussianMechanism(3.0), 5)
    br = acc.epsilon_bracket_details(1e-6)
    exact = float(ref.gaussian_epsilon(1.0, 1e-6, math.sqrt(3 / 4 + 5 / 9)))  # 40-digit mpmath
    assert br.method == "exact-gaussian" and br.lower <= exact <= br.upper
    assert br.upper - br.lower <= 1e-9 * exact
    mixed = dpcore.PldAccountant().compose(dpcore.GaussianMechanism(2.0), 3).compose(dpcore.LaplaceMechanism(5.0), 4)
    assert mixed.epsilon_bracket_details(1e-6).method == "pld"


def test_merging_gaussians_before_discretising_agrees_with_discretising_each():
    """Gaussians merged into one loss (exact) and the same Gaussians discretised one by one: brackets meet."""
    rr = dpcore.RandomizedResponse(0.3)
    merged = dpcore.PldAccountant().compose(dpcore.GaussianMechanism(1.5), 20).compose(rr, 10)
    each = dpcore.PldAccountant().compose(dpcore.SubsampledGaussianMechanism(1.5, 1.0), 20).compose(rr, 10)
    a, b = merged.epsilon_bracket(1e-5), each.epsilon_bracket(1e-5)
    assert a[0] <= b[1] and b[0] <= a[1]
    assert merged.epsilon(1e-5) >= max(a[0], b[0])


# --------------------------------------------------------------------------- the optimistic twin (lower end)


@pytest.mark.parametrize("sigma, k", [(1.0, 10), (2.0, 100), (0.5, 3), (5.0, 1000), (0.8, 1)])
@pytest.mark.parametrize("h", [1e-2, 1e-3])
def test_optimistic_twin_is_a_lower_bound_second_order_in_the_step(sigma, k, h):
    # Gaussians discretised like any loss (closed_form=False): at a fixed step the twin's lower end is below the
    # 40-digit exact answer and connect-the-dots' upper end above it, both within O(h^2)
    acc = dpcore.PldAccountant(closed_form=False).compose(dpcore.GaussianMechanism(sigma), k)
    lower, upper, _ = acc._twin_at(h, 1e-5, with_upper=True)
    exact = _gauss_exact(sigma, k, 1e-5)
    assert lower <= exact <= upper
    assert exact - lower <= 2000.0 * h**2 * max(1.0, exact)  # measured: ~100 h^2 eps at k = 1000


@pytest.mark.parametrize("eps0, k", [(0.5, 10), (0.1, 100), (1.0, 20), (0.37, 30)])
def test_optimistic_twin_of_randomized_response_is_below_the_binomial_answer(eps0, k):
    p = math.exp(eps0) / (1 + math.exp(eps0))
    j = np.arange(k + 1)
    pmf, loss = stats.binom(k, p).pmf(j), eps0 * (2 * j - k)
    for eps in (0.0, 0.3 * eps0 * k, 0.6 * eps0 * k):
        exact = float(np.sum(pmf * np.maximum(0.0, -np.expm1(eps - loss))))
        acc = dpcore.PldAccountant().compose(dpcore.RandomizedResponse(eps0), k)
        d_lo, d_hi = acc.delta_bracket(eps, value_discretization=acc._snap(1e-3))
        assert d_lo <= exact <= d_hi and d_hi - d_lo <= 1e-9 + 1e-6 * exact  # atoms on the grid: nearly exact


def test_default_bracket_is_tight_and_comes_from_the_twin():
    # DP-SGD anchor 2 of issue 14 (sigma 0.8, q 0.01, T 1000): PRV's certified bracket is [3.13977, 3.14226]
    acc = dpcore.PldAccountant().compose(dpcore.SubsampledGaussianMechanism(0.8, 0.01), 1000)
    br = acc.epsilon_bracket_details(1e-5)
    assert br.hoeffding_t == 0.0 and br.method == "pld"  # no Hoeffding widening: the twin gave the lower end
    assert 3.13977 <= br.upper and br.lower <= 3.14226 and br.upper - br.lower <= 1e-3 * br.lower
    assert br.upper == acc.epsilon(1e-5)


def test_without_its_lowering_the_twin_would_not_be_a_lower_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    # negative control: the chord through the profile's own values at the lattice points (connect-the-dots, no
    # lowering) lies above the profile; used as the "lower" end it overshoots the exact answer, and the accountant
    # refuses the crossing ends
    import dpcore.pld as pld

    monkeypatch.setattr(pld, "_optimistic_dots", lambda loss, h, tau: (pld._connect_dots(loss, h, tau)[0], 0.0))
    acc = dpcore.PldAccountant(closed_form=False).compose(dpcore.GaussianMechanism(1.0), 10)
    lower, _, _ = acc._twin_at(1e-2, 1e-5, with_upper=True)
    assert lower > _gauss_exact(1.0, 10, 1e-5)


@pytest.mark.parametrize("eps0, k", [(800.0, 3), (40.0, 5)])
def test_randomized_response_with_a_huge_epsilon0_keeps_its_law_under_q(eps0, k):
    # the atom at -eps0 has P-mass e^{-eps0}/(1+e^{-eps0}) (underflows at 800) and Q-mass 1/(1+e^{-eps0}):
    # computed from the logarithms, Q keeps it (e^{eps0} m overflowed before, a NaN law)
    loss = dpcore.RandomizedResponse(eps0).privacy_losses()[0]
    x = np.array([-2 * eps0, 0.0, 2 * eps0])
    assert np.allclose(loss.q_cdf(x) + loss.q_sf(x), 1.0) and float(loss.q_sf(np.array([0.0]))[0]) < 1e-15
    # exact: with J ~ Bin(k, p) the loss is eps0 (2J - k); at delta 0.1 only J = k matters here
    target = 0.1
    exact = k * eps0 + math.log1p(-target / stats.binom(k, 1 / (1 + math.exp(-eps0))).pmf(k))
    lo, hi = dpcore.PldAccountant().compose(dpcore.RandomizedResponse(eps0), k).epsilon_bracket(target)
    assert lo <= exact <= hi


def test_spread_is_the_interquartile_range_of_the_loss():
    # the first refinement step is capped by an eighth of the losses' spread (_resolving_step): checked here
    # against quartiles computed outside dpcore. Gaussian N(m, 2m): scipy's normal quantiles; Laplace
    # (eps0 = 1): the atom at +eps0 holds the upper quartile, and P(L <= l) = e^{-(eps0 - l)/2} / 2 inside
    from dpcore.pld_grid import _spread

    for m in (1e-4, 0.5, 40.0):
        truth = float(np.diff(stats.norm.ppf([0.25, 0.75], loc=m, scale=math.sqrt(2 * m)))[0])
        assert _spread(gaussian_privacy_loss(m)) == pytest.approx(truth, rel=1e-6)
    eps0 = 1.0
    q25 = eps0 + 2.0 * math.log(2.0 * 0.25)  # e^{-(eps0 - l)/2} / 2 = 1/4
    assert _spread(laplace_privacy_loss_law(eps0)) == pytest.approx(eps0 - q25, rel=1e-6)
    # one atom holding both quartiles: no spread, and no cap on the step
    rr = dpcore.PldAccountant().compose(dpcore.RandomizedResponse(5.0), 3)
    assert _spread(rr._discretised()[0][0][0]) == 0.0 and rr._resolving_step() == math.inf
    # a loss with 30 % of its mass at +inf has no upper quartile: no spread (not a search to the float range)
    from dataclasses import replace

    g = gaussian_privacy_loss(0.5)
    heavy = replace(g, cdf=lambda x: 0.7 * g.cdf(x), sf=lambda x: 0.7 * g.sf(x), infinity_mass=0.3)
    assert _spread(heavy) == 0.0
    # control: a spread off by a factor 2 (sd of N(m, 2m) taken as sqrt(m)) is caught at that tolerance
    wrong = float(np.diff(stats.norm.ppf([0.25, 0.75], loc=0.5, scale=math.sqrt(0.5)))[0])
    assert _spread(gaussian_privacy_loss(0.5)) != pytest.approx(wrong, rel=1e-6)


def test_first_step_cap_follows_the_most_composed_losses_and_keeps_grids_bounded():
    # DP-SGD: an eighth of the subsampled loss's spread; a Gaussian of huge noise composed a few times
    # beside it (merged into one loss, composed once) does not lower the cap
    from dpcore.pld_grid import _spread, _truncation

    sgd = dpcore.SubsampledGaussianMechanism(sigma=1.1, sampling_rate=256 / 60000)
    alone = dpcore.PldAccountant().compose(sgd, 1000)
    spreads = [_spread(loss) for parts in alone._discretised() for loss, _ in parts]
    assert alone._resolving_step() == pytest.approx(min(spreads) / 8, rel=1e-12)
    mixed = dpcore.PldAccountant().compose(sgd, 1000).compose(dpcore.GaussianMechanism(sigma=1e5), 3)
    assert mixed._resolving_step() == alone._resolving_step()
    # one Laplace (eps0 = 10) and one Gaussian of sigma 1e6 (spread ~1e-6): the cap stops at 2^16 points
    # across the widest truncation range (it used to ask for 1.2e8 lattice points and raise ValueError)
    acc = dpcore.PldAccountant().compose(dpcore.LaplaceMechanism(scale=0.1))
    acc.compose(dpcore.GaussianMechanism(sigma=1e6))
    widest = max(hi - lo for parts in acc._discretised() for lo, hi in [_truncation(l, 1e-12) for l, _ in parts])
    assert acc._resolving_step() == pytest.approx(widest / 2**16, rel=1e-12)
    alone_laplace = dpcore.LaplaceMechanism(scale=0.1).epsilon(1e-5)
    assert alone_laplace <= acc.epsilon(1e-5) <= alone_laplace + 1e-3


@pytest.mark.parametrize("tau", [1e-5, 1e-12, 1e-15])
def test_truncation_points_keep_their_tails_below_tau_and_are_tight(tau):
    """Each end has its tail <= tau; a point 1e-6 of the range inward has a tail above tau (not far off)."""
    from dpcore.pld_grid import _truncation

    losses = [
        *dpcore.SubsampledGaussianMechanism(1.1, 256 / 60000).privacy_losses(),
        *dpcore.SubsampledGaussianMechanism(0.6, 0.05).privacy_losses(),
        gaussian_privacy_loss(0.3),
        gaussian_privacy_loss(200.0),
    ]
    for loss in losses:
        lo, hi = _truncation(loss, tau)
        eps = 1e-6 * (hi - lo)
        assert lo < hi
        if not math.isfinite(loss.lower):
            assert loss.cdf(np.array([lo]))[0] <= tau < loss.cdf(np.array([lo + eps]))[0]
        if not math.isfinite(loss.upper):
            assert loss.sf(np.array([hi]))[0] <= tau < loss.sf(np.array([hi - eps]))[0]


def _rr_composed_delta(eps0: float, k: int, eps: float) -> mp.mpf:
    """k-fold randomised response's exact profile at eps: the binomial sum of (P - e^eps Q)_+ in mpmath."""
    with mp.workdps(50):
        e0 = mp.mpf(eps0)
        p, q = 1 / (1 + mp.e ** (-e0)), 1 / (1 + mp.e**e0)  # q apart: 1 - p cancels at eps0 = 6000
        return mp.fsum(
            max(mp.binomial(k, j) * (p**j * q ** (k - j) - mp.e ** mp.mpf(eps) * q**j * p ** (k - j)), 0)
            for j in range(k + 1)
        )


def test_delta_bracket_contains_the_binomial_truth_far_in_the_tail() -> None:
    """Issue 28: RR(1) composed 100 times, delta_bracket(90): the lower end was 1.7567056e-9 against the exact
    1.7566827e-9 (the inverse FFT's noise clipped at 0 had biased every profile upwards)."""
    acc = dpcore.PldAccountant().compose(dpcore.RandomizedResponse(1.0), 100)
    lower, upper = acc.delta_bracket(90.0)
    truth = _rr_composed_delta(1.0, 100, 90.0)
    assert lower <= truth <= upper


def test_an_epsilon_beyond_the_old_search_range_is_answered_not_capped() -> None:
    """Issue 28: RR(6000) twice has epsilon 12000 + log(1 - 1e-5 / p^2); the search stopped at 1e4 and
    returned (9991, 10000) as a certified bracket."""
    acc = dpcore.PldAccountant().compose(dpcore.RandomizedResponse(6000.0), 2)
    lower, upper = acc.epsilon_bracket(1e-5)
    assert _rr_composed_delta(6000.0, 2, upper) <= mp.mpf("1e-5") < _rr_composed_delta(6000.0, 2, lower)
    assert upper - lower <= 1e-3 * lower


def test_an_epsilon_beyond_max_epsilon_is_refused_not_capped() -> None:
    """The inverse widens its search up to MAX_EPSILON and then refuses by name; it never returns the cap."""
    from dpcore.pld import MAX_EPSILON, _inverse

    def profile(eps: float) -> float:
        return 0.5 if eps < 2 * MAX_EPSILON else 0.0

    with pytest.raises(ValueError, match="epsilon"):
        _inverse(profile, 1e-5, -1e4, 1e4)
    assert _inverse(lambda eps: 0.5 if eps < 3e6 else 0.0, 1e-5, -1e4, 1e4) == pytest.approx(3e6, rel=1e-12)


@pytest.mark.parametrize(
    "build",
    [
        lambda: dpcore.PldAccountant().compose(dpcore.RandomizedResponse(20.0), 10**11),
        lambda: (
            dpcore.PldAccountant().compose(dpcore.GaussianMechanism(1e-9), 2).compose(dpcore.RandomizedResponse(1.0))
        ),
    ],
)
def test_steps_beyond_exp_overflow_are_refused_by_name_not_overflow(build) -> None:
    """Issue 28 (domains review): connect-the-dots took e^h of a step the accountant chose above 709.78
    (OverflowError); now (1 - ratio e^-h)/(1 - e^-h), and the request is refused with a ValueError."""
    with pytest.raises(ValueError, match="FFT|epsilon"):
        build().epsilon(1e-5)


@pytest.mark.parametrize("eps", [1.0, 0.9999999999999998, 0.5, -1.0])
def test_atomic_loss_profile_next_to_an_atom_is_the_exact_sum(eps):
    """Randomized response's loss, an atom at 1.0000000000000009, four doubles above eps = 1: the quadrature of the
    integral form over that interval came out 12.5 % low (found by the oracle at 10^4 examples); the profile is
    the finite sum of m (1 - e^{eps - v}) over the atoms above eps, here against 50 digits."""
    e0 = 1.0000000000000009
    loss = dpcore.RandomizedResponse(e0).privacy_losses()[0]
    with mp.workdps(50):
        p = mp.exp(mp.mpf(e0)) / (1 + mp.exp(mp.mpf(e0)))
        atoms = [(mp.mpf(e0), p), (-mp.mpf(e0), 1 - p)]
        truth = mp.fsum(m * -mp.expm1(mp.mpf(eps) - v) for v, m in atoms if v > eps)
    assert abs(mp.mpf(loss.delta(eps)) - truth) <= mp.mpf("1e-14") * truth


@pytest.mark.parametrize("eps", [-20.03539087734387, -3.0, -0.5])
def test_laplace_law_profile_below_zero_where_the_weight_falls_fast(eps):
    """epsilon0 1000: P(L > eps) is 1 - 1e-200 and e^eps Q(L > eps) about e^-490, so delta(eps) is 1 to the last
    bit; the quadrature over [-1, 1000] once missed the weight e^{eps - l} near its start (1.7e-9 low at
    eps -20; oracle at 10^4 examples)."""
    import dataclasses

    law = laplace_privacy_loss_law(1000.0)
    assert law.delta(eps) == pytest.approx(1.0, abs=1e-14)  # the closed form
    by_quadrature = dataclasses.replace(law, profile=None)  # the path a law without a closed form takes
    assert by_quadrature.delta(eps) == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize(("e0", "eps"), [(1.000000000000023, 1.0), (1.0, 0.3), (1.0, -0.5), (1.0, -2.0), (5.0, 0.0)])
def test_laplace_law_profile_is_the_closed_form(e0, eps):
    """(1 - e^x)/2 + (1 - e^{x/2})^2/2, x = eps - e0, against 50-digit quadrature-free mpmath: the atom and the
    density e^{(l - e0)/2}/4 (quadrature over [eps, e0] of a few doubles was 0.3 % low; oracle at 10^4)."""
    with mp.workdps(50):
        e, a = mp.mpf(eps), mp.mpf(e0)
        if e < -a:
            truth = -mp.expm1(e)
        else:
            atom = (1 - mp.exp(e - a)) / 2
            density = mp.quad(lambda l: mp.exp((l - a) / 2) / 4 * (1 - mp.exp(e - l)), [e, a])
            truth = atom + density
    assert abs(mp.mpf(laplace_privacy_loss_law(e0).delta(eps)) - truth) <= mp.mpf("1e-14") * truth
