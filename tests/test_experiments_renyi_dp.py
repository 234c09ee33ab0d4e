"""The experiments of the Rényi DP chapter (dpbook.experiments.renyi_dp), on small inputs.

Each function is run on correct inputs (its evidence holds, its controls
fail) and on a wrong input far from the truth (some evidence fails). The
quadratures are deterministic; the one Monte Carlo function is run with a
false-alarm probability of 1e-7 per Monte Carlo test and a sample size at
which the wrong rules are rejected with miss probability at most that; each
test function adds its risks up (union bound) to at most
:data:`dpbook.evidence.BOOK_ALPHA` (checked below).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

import dpcore
from dpbook.evidence import BOOK_ALPHA, Rejected, as_evidence
from dpbook.experiments import Experiment
from dpbook.experiments import renyi_dp as rx


def holds(items) -> list[bool]:
    return [as_evidence(e).holds for e in items]


def risk(items, *, controls=()) -> float:
    """Union bound: the false-alarm probabilities of ``items`` plus the risks of ``controls``."""
    return sum(as_evidence(e).alpha or 0.0 for e in items) + sum(as_evidence(c).control_risk() for c in controls)


def assert_sound(exp: Experiment, *, needs_evidence: bool = True) -> float:
    """Every piece of evidence holds, every control fails, the risks add up to <= BOOK_ALPHA (returned)."""
    assert exp.evidence or not needs_evidence, "an experiment without evidence"
    assert all(holds(exp.evidence)), str(exp)
    assert not any(holds(exp.controls)), str(exp)
    budget = risk(exp.evidence, controls=exp.controls)
    assert budget <= BOOK_ALPHA
    return budget


# --------------------------------------------------------------------------- closed forms vs quadrature


def test_gaussian_rdp_quadrature_agrees_with_dpcore():
    res = rx.gaussian_rdp_quadrature((2.0, 7.5), (1.0,))
    assert_sound(res)
    assert res.worst <= 1e-10
    assert "dpcore.gaussian_rdp, 2 (alpha, sigma)" in res.evidence[0].what


def test_gaussian_rdp_quadrature_rejects_a_wrong_formula():
    res = rx.gaussian_rdp_quadrature((2.0,), (1.0,), formula=lambda a, s: a / s**2)  # twice too big
    assert not all(holds(res.evidence))
    assert res.worst == pytest.approx(0.5, rel=1e-6)


def test_laplace_rdp_quadrature_agrees_and_naive_overflows():
    res = rx.laplace_rdp_quadrature((2.0, 60.0), (1.0,))
    assert_sound(res)
    assert res.evidence[1].what == "naive formula overflows where dpcore.laplace_rdp(1e4, 0.01) is finite"


def test_laplace_rdp_quadrature_rejects_the_gaussian_curve():
    res = rx.laplace_rdp_quadrature((2.0,), (1.0,), formula=dpcore.gaussian_rdp)
    assert not holds(res.evidence)[0]


# --------------------------------------------------------------------------- adaptive Laplace pair


@pytest.fixture(scope="module")
def joint() -> rx.AdaptiveLaplace:
    # a looser quadrature than the chapter's (1e-12), for speed; tolerance to match
    return rx.adaptive_laplace_quadrature(epsrel=1e-6, atol=1e-6)


def test_adaptive_laplace_quadrature(joint):
    assert_sound(joint)
    assert joint.eps_1 == dpcore.laplace_rdp(3.0, 1.0)
    assert joint.const_2d == pytest.approx(joint.eps_1 + joint.eps_2, abs=1e-6)
    assert joint.cos_2d < joint.eps_1 + joint.eps_2 - 0.05
    assert str(joint).count("\n") == 2 and str(joint).startswith("eps1 = ")


def test_adaptive_laplace_quadrature_rejects_a_wrong_inner_divergence():
    # the Gaussian curve in place of the Laplace one: the factorised form is wrong
    res = rx.adaptive_laplace_quadrature(epsrel=1e-6, atol=1e-6, inner_rdp=dpcore.gaussian_rdp)
    assert holds(res.evidence)[:2] == [False, False]


def test_inner_divergence_at_zero_shift(joint):
    res = rx.inner_divergence_at_zero_shift(joint, grid=16)
    assert_sound(res)  # sup = eps2, joint <= eps1 + sup; the pointwise bound at pi fails
    assert abs(res.inner_divergence) <= 1e-12
    assert res.sup_inner == pytest.approx(joint.eps_2, rel=1e-9)


def test_inner_divergence_where_the_shift_is_not_zero(joint):
    res = rx.inner_divergence_at_zero_shift(joint, x0=0.0, grid=16)  # shift 1: the inner divergence is eps2
    assert holds(res.controls) == [True]  # there the bound eps1 + inner(x0) = eps1 + eps2 is right
    assert res.inner_divergence == pytest.approx(joint.eps_2, rel=1e-8)


def test_inner_divergence_supremum_misses_a_grid_without_zero(joint):
    # a grid that avoids x = 0 (where the shift is 1) does not find the supremum eps2
    res = rx.inner_divergence_at_zero_shift(joint, grid=3)  # 0, 2 pi/3, 4 pi/3: contains 0
    assert holds(res.evidence)[0]
    shifted = replace(joint, eps_2=2 * joint.eps_2)  # a wrong eps2 is not matched
    assert not holds(rx.inner_divergence_at_zero_shift(shifted, grid=3).evidence)[0]


# --------------------------------------------------------------------------- Monte Carlo


D4 = 4 * (1 / 8 + 1 / 4.5)  # the chapter's D_4 of the pair (sigma 2 and 1.5), independent of dpcore
MC = {"n": 1_000_000, "alpha": 1e-7}


def test_adaptive_gaussian_montecarlo():
    res = rx.adaptive_gaussian_montecarlo(math.exp(3 * D4), **MC)
    assert_sound(res)
    assert all(holds(res.rejections)) and not any(holds(res.rejection_controls))
    assert res.truth == pytest.approx(math.exp(2 / 8 + 2 / 4.5), rel=1e-14)
    # the wrong rules are far enough from the truth that missing them has probability <= alpha
    assert all(isinstance(r, Rejected) and r.alpha <= MC["alpha"] for r in res.rejections)
    assert all(c.control_risk() <= MC["alpha"] for c in (*res.controls, *res.rejection_controls))
    rules = (res.sum_rule, res.max_rule, res.product_rule, res.rss_rule)
    assert [r.alpha for r in rules] == [MC["alpha"]] * 4
    assert str(res).count("\n") == 3
    # the two claims' budgets, each on its own tests (no test is evidence of one and control of the other)
    assert assert_sound(res) <= BOOK_ALPHA
    assert risk(res.rejections, controls=res.rejection_controls) <= BOOK_ALPHA


def test_adaptive_gaussian_montecarlo_rejects_a_wrong_variance_bound():
    res = rx.adaptive_gaussian_montecarlo(2 * math.exp(3 * D4), n=1_000, alpha=1e-4)
    assert not holds(res.evidence)[3]  # deterministic: the bounds differ by a factor 2


# --------------------------------------------------------------------------- order below one


def _pair_at_half():
    """The chapter's cos-shifted Gaussian pair at alpha = 1/2, unit parameters, in closed form."""

    def outer(x: float) -> float:  # N(1, 1)^(1/2) N(0, 1)^(1/2)
        return math.exp(-0.25 * (x - 1) ** 2 - 0.25 * x**2) / math.sqrt(2 * math.pi)

    def inner(x: float) -> float:  # A_{1/2} with shift (1 + cos x)/2
        return math.exp(-0.125 * ((1 + math.cos(x)) / 2) ** 2)

    return inner, outer


def test_alpha_below_one():
    inner, outer = _pair_at_half()
    res = rx.alpha_below_one(inner, outer, 0.25, 0.25, 0.25)
    assert_sound(res)
    assert res.inner_at_pi == 1.0 and res.step3_bound < 1.0
    assert res.bogus < 0 < res.exact_one
    assert res.evidence[3].what == "dpcore.rdp_to_dp refuses orders <= 1"


def test_alpha_below_one_rejects_wrong_inputs():
    inner, outer = _pair_at_half()
    res = rx.alpha_below_one(inner, outer, 0.0, 0.0, 0.25)  # "epsilons" of 0
    assert not holds(res.evidence)[1]
    # an inner integral that obeys the alpha > 1 reading (below the step-3 bound) fails the reversed step 3
    res = rx.alpha_below_one(lambda x: 0.5 * inner(x), outer, 0.25, 0.25, 0.25)
    assert not holds(res.evidence)[0]


# --------------------------------------------------------------------------- conversion and accounting

SMALL = {
    "sigmas": (1.0,),
    "counts": (1, 10),
    "deltas": (1e-5, 0.5),
    "laplace_scales": (0.5,),
    "laplace_deltas": (1e-2,),
}


def test_conversion_sweep():
    res = rx.conversion_sweep(dpcore.DEFAULT_RDP_ORDERS, **SMALL)
    assert_sound(res)
    assert res.n_checked > 0 and res.worst_wrong_ratio > 1


def test_conversion_sweep_rejects_a_too_small_epsilon():
    def halved(orders, rdp, delta):
        eps, order = dpcore.rdp_to_dp(orders, rdp, delta)
        return eps / 2, order

    res = rx.conversion_sweep(dpcore.DEFAULT_RDP_ORDERS, **SMALL, convert=halved)
    assert not all(holds(res.evidence))
    assert res.min_excess < 0


def test_accounting():
    res = rx.accounting(5.0, 1e-5, counts=(1, 10, 100))
    assert_sound(res)
    np.testing.assert_array_equal(res.k, [1, 10, 100])
    assert list(res.bounds) == [
        "basic composition",
        "advanced composition (DRV)",
        "RDP, classical conversion",
        "RDP, improved conversion",
    ]


def test_accounting_rejects_a_wrong_exact_epsilon():
    def doubled(sigma, k, delta):
        return 2 * dpcore.exact_gaussian_composition_epsilon(sigma, k, delta)

    res = rx.accounting(5.0, 1e-5, counts=(1, 10, 100), exact_epsilon=doubled)
    assert not all(holds(res.evidence))


def test_exact_reference():
    res = rx.exact_reference({1.0: [4.377, 17.86]}, 1e-5, counts=(1, 10))
    assert_sound(res)
    assert len(res.evidence) == 4 and "mpmath 4.37718 rounds to 4.377" in res.evidence[1].what


def test_exact_reference_compares_dpcore_with_mpmath():
    # dpcore is within ~2e-14 of the 50-digit reference, not 1e-16: the comparison is a real one
    res = rx.exact_reference({1.0: [4.377]}, 1e-5, counts=(1,), rtol=1e-16)
    assert holds(res.evidence) == [False, True]


def test_exact_reference_rejects_a_wrong_quote():
    res = rx.exact_reference({1.0: [4.377, 18.0]}, 1e-5, counts=(1, 10))
    assert holds(res.evidence) == [True, True, True, False]
    with pytest.raises(ValueError):
        rx.exact_reference({1.0: [4.377]}, 1e-5, counts=(1, 10))
