"""The experiments of chapter 04 (dpbook.experiments.gaussian_mechanism), quickly, with small n.

Each function is run on the correct inputs (its evidence holds, its controls
fail) and on a wrong input far from the truth (some evidence fails). The
Monte Carlo tests pass a true claim with probability >= 1 - alpha whatever
the seed; the wrong inputs are checked through deterministic evidence, or
are so far from the truth that a pass has probability below alpha.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

import dpcore
from dpbook import flawed
from dpbook import reference as mpref
from dpbook.evidence import BOOK_ALPHA, Test, as_evidence, miss_probability
from dpbook.experiments import Experiment
from dpbook.experiments import gaussian_mechanism as gm

ALPHA = 1e-7
N = 4000


def holds(items: Any) -> list[bool]:
    return [as_evidence(e).holds for e in items]


def assert_sound(exp: Experiment) -> float:
    """Every piece of evidence holds, every control fails, and the Monte Carlo risks sum to <= BOOK_ALPHA.

    Returns the sum (union bound): the false-alarm probabilities of the
    evidence plus the control risks (a control's miss probability).
    """
    assert exp.evidence, "an experiment without evidence"
    assert all(holds(exp.evidence)), str(exp)
    assert not any(holds(exp.controls)), str(exp)
    assert str(exp)  # every piece is listed with its verdict
    budget = sum(as_evidence(e).alpha or 0.0 for e in exp.evidence)
    budget += sum(as_evidence(c).control_risk() for c in exp.controls)
    assert budget <= BOOK_ALPHA
    return budget


def analytic_times(c: float) -> Any:
    """``c`` times the analytic sigma: a wrong calibrator (too little noise when ``c < 1``)."""
    return lambda s, e, d: c * dpcore.analytic_gaussian_sigma(s, e, d)


# --------------------------------------------------------------------------- Theorem 8


def test_loss_sampler_lies_in_unit_interval() -> None:
    draws = gm.loss_sampler(1.0, 1.0)(np.random.default_rng(0), 1000)
    assert draws.shape == (1000,) and draws.min() >= 0.0 and draws.max() <= 1.0


def test_theorem8_monte_carlo() -> None:
    cases = ((0.5, 0.5), (1.0, 1.0))
    mc = gm.theorem8_monte_carlo(cases, n=N, alpha=ALPHA, seed=1, control_seed=2)
    assert_sound(mc)
    assert len(mc.tests) == 2 and all(r.alpha == ALPHA and r.n == N for r in mc.tests)
    assert mc.quadratures[1] == pytest.approx(dpcore.gaussian_delta(1.0, 1.0, 1.0), rel=1e-8)


def test_theorem8_monte_carlo_fails_a_wrong_profile() -> None:
    def doubled(s: float, sens: float, e: float) -> float:
        return 2 * float(dpcore.gaussian_delta(s, sens, e))

    mc = gm.theorem8_monte_carlo(((1.0, 1.0),), n=N, alpha=ALPHA, profile=doubled)
    quadratures = mc.evidence[len(mc.tests) :]
    assert quadratures and not any(holds(quadratures))  # deterministic: the definition disagrees
    # the Monte Carlo test rejects too: the true delta (50 digits) is far enough from the doubled
    # claim that the test passes it with probability <= its alpha (the only risk of this test)
    true_delta = float(mpref.gaussian_delta(1.0, 1.0))
    assert miss_probability(mc.tests[0], true_delta) <= ALPHA <= BOOK_ALPHA
    assert not Test(mc.tests[0].name, result=mc.tests[0]).holds


# --------------------------------------------------------------------------- the classic calibration


def test_classic_loose() -> None:
    eps, deltas = (0.01, 0.3, 0.99), (1e-12, 1e-2)
    loose = gm.classic_loose(eps, deltas)
    assert_sound(loose)
    # the reference ratios: the classic formula over the 50-digit analytic sigma (mpmath, not dpcore)
    ref = [gm.classic_formula(e, d) / float(mpref.analytic_sigma(e, d)) for e in eps for d in deltas]
    assert loose.summary() == f"sigma_classic / sigma_analytic ranges over {min(ref):.3f} .. {max(ref):.3f}"


def test_classic_loose_fails_a_calibration_with_too_little_noise() -> None:
    assert not all(holds(gm.classic_loose(classic=analytic_times(0.5)).evidence))


def test_classic_formula_is_dpcores_classic_sigma_below_one() -> None:
    assert gm.classic_formula(0.5, 1e-5, 2.0) == pytest.approx(dpcore.classic_gaussian_sigma(2.0, 0.5, 1e-5))


def test_classic_beyond_theorem() -> None:
    beyond = gm.classic_beyond_theorem(1e-5, np.arange(8.0, 9.01, 0.25), violated_eps=(8.5,), control_eps=(1.0, 2.0))
    assert_sound(beyond)
    assert 8.25 < beyond.eps_star < 8.5 and "epsilon < 1" in beyond.refusal
    # the threshold solves delta_sigma(eps)(eps) = 1e-5 with the 50-digit profile (mpmath)
    assert float(mpref.gaussian_delta(gm.classic_formula(beyond.eps_star, 1e-5), beyond.eps_star)) == pytest.approx(
        1e-5, rel=1e-6
    )
    assert beyond.summary().startswith(f"classic formula at delta = 1e-5: valid up to eps = {beyond.eps_star:.4f}")


def test_classic_beyond_theorem_fails_a_wrong_formula() -> None:
    def smaller(e: float, d: float) -> float:
        return 0.99 * gm.classic_formula(e, d)

    beyond = gm.classic_beyond_theorem(1e-5, np.arange(7.0, 9.01, 0.25), classic=smaller)
    assert not all(holds(beyond.evidence))  # its root is not the 50-digit root of the classic formula


def test_classic_beyond_theorem_needs_a_bracket() -> None:
    with pytest.raises(ValueError, match="bracket"):
        gm.classic_beyond_theorem(1e-5, np.array([1.0, 2.0]))


# --------------------------------------------------------------------------- the chi equation


def test_chi_form_accuracy() -> None:
    acc = gm.chi_form_accuracy((0.3, 20.0), (0.1, 30.0))
    assert_sound(acc)
    assert acc.controls == ()


def test_chi_form_accuracy_fails_wrong_formulas() -> None:
    def log_delta_off(s: float, sens: float, e: float) -> float:
        return float(dpcore.gaussian_log_delta(s, sens, e)) + 1e-6

    def chi_form_off(s: float, e: float) -> Any:
        return mpref.gaussian_delta_chi(s, e) * (1 + mp.mpf(10) ** -10)

    assert not all(holds(gm.chi_form_accuracy((0.3,), (0.1,), log_delta=log_delta_off).evidence))
    assert not all(holds(gm.chi_form_accuracy((0.3,), (0.1,), chi_form=chi_form_off).evidence))


def test_chi_form_accuracy_sees_a_relative_error_of_1e_18() -> None:
    def chi_form_slightly_off(s: float, e: float) -> Any:
        with mp.workdps(50):  # below double precision: the comparison must be made at 50 digits
            return mpref.gaussian_delta_chi(s, e) * (1 + mp.mpf(10) ** -18)

    acc = gm.chi_form_accuracy((0.3,), (0.1,), chi_form=chi_form_slightly_off)
    assert not holds(acc.evidence)[0] and 1e-19 < acc.worst_forms < 1e-17


# --------------------------------------------------------------------------- Newton with the seed's G'


def _g_functions(eps: float) -> tuple[Any, Any, Any]:
    def F(x: Any) -> Any:
        return mp.sqrt(mp.pi) / 2 * mp.erf(x)

    def g(x: Any) -> Any:
        return mp.exp(eps) * F(mp.sqrt(x**2 + eps)) - F(x)

    def g_prime(x: Any) -> Any:
        return mp.exp(-(x**2)) * (x / mp.sqrt(x**2 + eps) - 1)

    def seed_g_prime(x: Any) -> Any:
        return mp.exp(eps) * mp.exp(-(x**2) - 1) * x / mp.sqrt(x**2 + 1) - mp.exp(2 * x**2)

    return g, g_prime, seed_g_prime


def test_newton_finds_a_square_root() -> None:
    xs = gm.newton(lambda x: x * x, lambda x: 2 * x, 1.0, 2.0, 6)
    assert len(xs) == 7 and xs[-1] == pytest.approx(math.sqrt(2), abs=1e-14)


def test_newton_paths() -> None:
    paths = gm.newton_paths(*_g_functions(1.0), 1.0, 1e-5)
    assert_sound(paths)
    assert len(paths.true_path) == 9 and len(paths.seed_path) == 51
    assert "after 50 steps" in paths.summary()


def test_newton_paths_fails_a_wrong_derivative() -> None:
    g, g_prime, seed_g_prime = _g_functions(1.0)
    paths = gm.newton_paths(g, lambda x: 2 * g_prime(x), seed_g_prime, 1.0, 1e-5)
    assert not all(holds(paths.evidence))  # a doubled slope only halves the error per step


# --------------------------------------------------------------------------- the seed's code


def exact_recipe(
    epsilon: float, delta: float, sensitivity: float = 1.0, *, fixed: bool = False, full_output: bool = False
) -> Any:
    """A recipe without the seed's errors: dpcore's analytic sigma, 'converged'."""
    sig = dpcore.analytic_gaussian_sigma(sensitivity, epsilon, delta)
    return (sig, 1, "") if full_output else sig


def test_seed_code_table() -> None:
    code = gm.seed_code_table((1.0, 0.1, 2.0, 5.0), 1e-5, ((0.5, 1e-60),))
    assert_sound(code)
    assert len(code.rows) == 5 and code.seed_example == pytest.approx(5.28, abs=0.005)
    assert code.table() is not None


def test_seed_code_table_fails_a_correct_recipe() -> None:
    code = gm.seed_code_table((1.0, 0.1, 2.0, 5.0), 1e-5, ((0.5, 1e-60),), recipe=exact_recipe)
    assert all(holds(code.evidence))  # the evidence is about the corrected recipe
    assert all(holds(code.controls))  # and the seed's statements would hold: the ledger fails the erratum


def test_seed_code_table_fails_a_recipe_wrong_at_eps_one() -> None:
    def off(epsilon: float, delta: float, sensitivity: float = 1.0, **kw: Any) -> Any:
        out = exact_recipe(epsilon, delta, sensitivity, **kw)
        return (1.01 * out[0], *out[1:]) if isinstance(out, tuple) else 1.01 * out

    assert not all(holds(gm.seed_code_table((1.0, 0.1, 2.0, 5.0), 1e-5, ((0.5, 1e-60),), recipe=off).evidence))


def test_seed_code_table_needs_its_epsilons() -> None:
    with pytest.raises(KeyError):
        gm.seed_code_table((1.0, 0.5), 1e-5, ())


def test_seed_C_cancels() -> None:
    assert gm.seed_C(40.0, 1e-3) == gm.seed_C(40.0, 0.0)
    assert gm.seed_C(1.0, 0.1) != gm.seed_C(1.0, 0.0)


def test_fsolve_cancellation() -> None:
    canc = gm.fsolve_cancellation()
    assert_sound(canc)
    assert canc.summary().startswith("eps = 40: delta = 1e-3 -> sigma ")


def test_fsolve_cancellation_fails_a_calibration_with_too_little_noise() -> None:
    assert not all(holds(gm.fsolve_cancellation(calibrate=analytic_times(0.5)).evidence))


def test_fsolve_cancellation_fact_reads_its_epsilon() -> None:
    fact = gm.fsolve_cancellation(1.0, (1e-3, 1e-10)).evidence[0]  # at eps = 1, C still sees delta = 1e-3
    assert not as_evidence(fact).holds and "C(1, delta) == C(1, 0)" in as_evidence(fact).what


# --------------------------------------------------------------------------- normal(0, sigma ** 2)


def test_variance_as_std() -> None:
    var = gm.variance_as_std(flawed.seed_002_sigma(1.0, 1e-5, math.sqrt(2)), n=N, alpha=ALPHA, seed=1, claim_seed=2)
    assert_sound(var)
    # the delta of N(0, (sigma^2)^2) at eps = 10, with the 50-digit sigma and profile (mpmath, not dpcore)
    sigma_sq = float(mpref.analytic_sigma(10.0, 1e-5)) ** 2
    assert var.real_delta == pytest.approx(float(mpref.gaussian_delta(sigma_sq, 10.0)), rel=1e-6)
    assert var.real_test.n == N


def test_variance_as_std_fails_a_sampler_with_the_right_std() -> None:
    def right_std(value: Any, sigma: float, rng: Any = None) -> Any:
        return value + dpcore.as_generator(rng).normal(0.0, sigma, np.shape(value))

    var = gm.variance_as_std(1.0, n=N, alpha=ALPHA, sampler=right_std)
    assert not all(holds(var.evidence))  # its releases do not deliver the delta of std sigma^2


# --------------------------------------------------------------------------- the L2 sensitivity of a d-vector


def test_vector_sensitivity() -> None:
    vs = gm.vector_sensitivity(0.0, 2.0, (1, 2, 9), epsilon=0.5, delta=1e-6)
    assert_sound(vs)
    assert [d for d, _ in vs.brute] == [1, 2, 3, 4] and vs.brute[-1][1] == pytest.approx(4.0)
    # the seed's delta at d = 9 (sensitivity 6 against sigma calibrated for 2), from scipy's normal law
    d9 = vs.rows[-1]
    a, b = 6 / (2 * d9[2]), 0.5 * d9[2] / 6
    assert d9[3] == pytest.approx(stats.norm.cdf(a - b) - math.exp(0.5) * stats.norm.cdf(-a - b), rel=1e-8)
    assert d9[3] > 1e-6


def test_vector_sensitivity_fails_a_calibration_to_max_minus_min() -> None:
    vs = gm.vector_sensitivity(0.0, 1.0, (1, 4), calibrate=lambda s, e, d: dpcore.analytic_gaussian_sigma(1.0, e, d))
    assert not all(holds(vs.evidence))


def test_mechanism_distribution() -> None:
    dist = gm.mechanism_distribution(n=N, alpha=ALPHA, seed=1, flawed_seed=2)
    assert_sound(dist)
    assert dist.bad_distance > 0.15


def test_mechanism_distribution_fails_a_shifted_mechanism() -> None:
    def shifted(value: Any, sens: float, e: float, d: float, rng: Any = None) -> Any:
        return dpcore.gaussian_mechanism(value, sens, e, d, rng=rng) + dpcore.analytic_gaussian_sigma(sens, e, d)

    dist = gm.mechanism_distribution(n=N, alpha=ALPHA, mechanism=shifted)
    # the true sup distance over the test's grid, between N(f(D) + sigma, sigma^2) and N(f(D), sigma^2)
    sig = dpcore.analytic_gaussian_sigma(1.0, 2.0, 1e-6)
    grid = 3.0 + sig * np.linspace(-8, 8, 4001)
    distance = float(np.max(np.abs(stats.norm(3.0 + sig, sig).cdf(grid) - stats.norm(3.0, sig).cdf(grid))))
    assert miss_probability(dist.ok, distance) <= ALPHA  # ~0.38, far beyond the DKW radius ~0.04
    assert not all(holds(dist.evidence))


# --------------------------------------------------------------------------- Balle and Wang


def _balle_wang_expressions() -> tuple[Any, ...]:
    import sympy as sp

    from dpbook.symbolic import Delta, epsilon

    def Phi(z: Any) -> Any:
        return (1 + sp.erf(z / sp.sqrt(2))) / 2

    chi, v = sp.Symbol("chi", real=True), sp.Symbol("v", positive=True)
    tail = sp.exp(epsilon) * Phi(-sp.sqrt(epsilon * (v + 2)))
    B_minus, B_plus = Phi(-sp.sqrt(epsilon * v)) - tail, Phi(sp.sqrt(epsilon * v)) - tail
    chi_profile = (sp.erfc(chi) - sp.exp(epsilon) * sp.erfc(sp.sqrt(chi**2 + epsilon))) / 2
    sigma_chi = Delta / (sp.sqrt(2) * (sp.sqrt(chi**2 + epsilon) - chi))
    return B_minus, B_plus, chi_profile, sigma_chi, chi, v


def test_balle_wang_identities() -> None:
    assert_sound(gm.balle_wang_identities(*_balle_wang_expressions()))


def test_balle_wang_identities_fail_swapped_branches() -> None:
    B_minus, B_plus, *rest = _balle_wang_expressions()
    assert not all(holds(gm.balle_wang_identities(B_plus, B_minus, *rest).evidence))


def test_balle_wang_agreement() -> None:
    bw = gm.balle_wang_agreement((0.1, 3.0), (1e-8, 0.3))
    assert_sound(bw)
    assert bw.n_points == 4 and bw.worst <= 1e-9


def test_balle_wang_agreement_fails_a_wrong_algorithm() -> None:
    def off(e: float, d: float) -> float:
        return 1.01 * gm.balle_wang_algorithm1(e, d)

    assert not all(holds(gm.balle_wang_agreement((0.1,), (1e-5,), algorithm=off).evidence))


@pytest.mark.parametrize(
    ("e", "d", "name"),
    [(1.0, 0.0, "delta"), (1.0, -1e-5, "delta"), (1.0, 1.0, "delta"), (0.0, 1e-5, "epsilon"),
     (math.inf, 1e-5, "epsilon"), (710.0, 1e-5, "epsilon"), (math.nan, 1e-5, "epsilon")],
)  # fmt: skip
def test_balle_wang_algorithm1_refuses_bad_input(e: float, d: float, name: str) -> None:
    with pytest.raises(ValueError, match=name):  # before: delta <= 0 looped forever, eps > 709 overflowed
        gm.balle_wang_algorithm1(e, d)


# --------------------------------------------------------------------------- dpcore against 50 digits


def test_analytic_sigma_exact() -> None:
    exact = gm.analytic_sigma_exact(flawed.seed_002_sigma(0.1, 1e-5), (0.1, 10.0), (1e-50, 1e-3))
    assert_sound(exact)
    assert exact.n_points == 4 and exact.n_violated == 0 and exact.recipe_rel > 0.3


def test_analytic_sigma_exact_fails_a_calibration_with_too_little_noise() -> None:
    exact = gm.analytic_sigma_exact(1.0, (0.1, 10.0), (1e-3,), calibrate=analytic_times(0.99))
    assert not any(holds(exact.evidence)) and exact.n_violated == 2


def test_epsilon_exact() -> None:
    inv = gm.epsilon_exact((1.0,), (1e-5, 0.5))
    assert_sound(inv)
    assert inv.zero_pairs == ((1.0, 0.5, 0.0),)
    assert inv.summary().startswith("1 points with eps > 0")


def test_epsilon_exact_fails_a_wrong_inverse() -> None:
    def smaller(s: float, d: float) -> float:
        return 0.9 * dpcore.gaussian_epsilon(s, d)

    inv = gm.epsilon_exact((1.0,), (1e-5, 0.5), inverse=smaller)
    assert not all(holds(inv.evidence)) and inv.n_violated == 1


def test_phi_via_erf_underflows_where_scipy_does_not() -> None:
    assert gm.phi_via_erf(-8.5) == 0.0 and gm.phi_via_erf(-8.3) > 0.0
    assert gm.phi_via_erf(0.3) == pytest.approx(0.6179114222, rel=1e-9)
