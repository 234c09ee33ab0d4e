"""dpbook.experiments.laplace_distribution: each experiment of chapter 01, small and fast.

For each function: on the chapter's (correct) inputs its evidence holds and
its controls fail; on a wrong input (a wrong formula, a flawed sampler, a
wrong claimed value) some evidence fails. The Monte Carlo verdicts are
random, with false-alarm probability at most the tests' ``ALPHA``; the wrong
inputs are far enough from the truth that the probability that a test misses
them is bounded, deterministically, by ``ALPHA`` too (asserted through
:func:`dpbook.evidence.miss_probability`). Each test function sums the
probabilities of its Monte Carlo assertions going wrong (union bound) and
asserts the sum is at most :data:`dpbook.evidence.BOOK_ALPHA` (1e-6).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy import special
from scipy.optimize import brentq

from dpbook import flawed
from dpbook.evidence import BOOK_ALPHA, Rejected, Test, as_evidence, miss_probability
from dpbook.experiments import laplace_distribution as ld
from dpbook.symbolic import b, mu, s, x

ALPHA = 1e-7  # per test; each test function below adds its risks up (union bound) to <= BOOK_ALPHA
N = 40_000
PARAMS = [(0.0, 1.0), (3.0, 0.5)]


def _holds(items) -> list[bool]:
    return [as_evidence(e).holds for e in items]


def _risk(exp) -> float:
    """Probability that ``exp``'s evidence does not all hold or a control holds (union bound)."""
    return sum(as_evidence(e).alpha or 0.0 for e in exp.evidence) + sum(
        as_evidence(c).control_risk() for c in exp.controls
    )


def _law(variance=lambda m, sc: 2 * sc**2) -> ld.DerivedLaw:
    """The Laplace law's formulas, typed in (the chapter derives them); ``variance`` may be wrong."""

    def cdf(g, m, sc):
        z = (np.asarray(g, dtype=float) - m) / sc
        return np.where(z < 0, np.exp(np.minimum(z, 0)) / 2, 1 - np.exp(-np.maximum(z, 0)) / 2)

    return ld.DerivedLaw(cdf, lambda m, sc: m, variance, 6.0, lambda t, sc: float(np.exp(-t / sc)))


def test_derived_law_from_sympy_evaluates_the_expressions_given() -> None:
    f_left, f_right = sp.exp(-s / b) / 2, 1 - sp.exp(-s / b) / 2
    law = ld.DerivedLaw.from_sympy(f_left, f_right, mu, 2 * b**2, 6, sp.exp(-s / b))
    g = np.array([-1.0, 0.0, 2.0])
    assert np.allclose(law.cdf(g, 0.0, 1.0), [np.exp(-1) / 2, 0.5, 1 - np.exp(-2) / 2])
    at = law.at(3.0, 0.5)
    assert (at["mean"], at["variance"], at["variance_bound"], at["kurtosis_bound"]) == (3.0, 0.5, 0.5, 6.0)
    assert at["event_probability"] == pytest.approx(np.exp(-2))
    assert at["grid"][0] == -2.0 and at["grid"][-1] == 8.0 and at["grid"].size == 4001
    assert at["event"](np.array([3.0, 4.5, 1.9])).tolist() == [False, True, True]
    wrong = ld.DerivedLaw.from_sympy(f_left, f_left, mu, b**2, 6, sp.exp(-s / b))  # right branch = left one
    assert wrong.cdf(np.array([2.0]), 0.0, 1.0)[0] == pytest.approx(np.exp(-2) / 2)
    assert wrong.at(0.0, 1.0)["variance"] == 1.0


def test_law_checks_pass_the_laplace_law_and_fail_a_wrong_variance_or_a_flawed_sampler() -> None:
    laws = ld.law_checks(_law(), PARAMS, n=N, alpha=ALPHA, seed=1)
    assert len(laws.results) == len(laws.evidence) == 4 * len(PARAMS) and laws.controls == ()
    assert all(_holds(laws.evidence))
    assert sum(r.alpha for r in laws.results) == pytest.approx(len(PARAMS) * ALPHA)
    budget = len(PARAMS) * ALPHA  # the true laws' tests
    # wrong formula: Var = b^2 (true 2 b^2); the variance tests must reject
    wrong = ld.law_checks(_law(lambda m, sc: sc**2), PARAMS, n=N, alpha=ALPHA, seed=1)
    for r, (_, sc) in zip(wrong.results[2::4], PARAMS, strict=True):
        assert miss_probability(r, 2 * sc**2) <= ALPHA  # the test is sharp enough to reject surely
        assert not Test(r.name, result=r).holds
        budget += miss_probability(r, 2 * sc**2)

    # flawed sampler: seed 000's stray factor 2 halves the scale, Var = b^2 / 2
    def stray(m, sc):
        return lambda gen, size: flawed.laplace_stray_factor_two(np.full(size, m), 1.0, 1 / sc, gen)

    bad = ld.law_checks(_law(), PARAMS, n=N, alpha=ALPHA, seed=1, sampler=stray)
    misses = [miss_probability(r, sc**2 / 2) for r, (_, sc) in zip(bad.results[2::4], PARAMS, strict=True)]
    assert max(misses) <= ALPHA
    assert not all(_holds(bad.evidence))  # wrong only if every variance test misses: <= min(misses)
    budget += min(misses)
    assert budget <= BOOK_ALPHA


def test_wrong_law_checks_reject_the_wrong_claims_unless_the_samples_follow_them() -> None:
    law = _law()
    checked = ld.law_checks(law, PARAMS[:1], n=N, alpha=ALPHA, seed=1).results[:2]
    wrong = ld.wrong_law_checks(law, *PARAMS[0], checked, n=N, alpha=ALPHA, seed=2, cdf_seed=3)
    assert len(wrong.results) == len(wrong.truths) == 5 and len(wrong.as_controls) == 4
    assert wrong.truths[1:4] == (0.0, 2.0, float(np.exp(-2)))
    assert all(e.alpha <= ALPHA for e in wrong.evidence[:5])  # each wrong claim is far enough to be rejected
    assert all(_holds(wrong.evidence))
    assert not any(_holds(wrong.controls)) and not any(_holds(wrong.as_controls))
    # a wrong input: samples of N(0, 1), for which the "wrong" claim Var = b^2 = 1 is true
    normal = ld.wrong_law_checks(
        law, 0.0, 1.0, checked, n=N, alpha=ALPHA, seed=2, cdf_seed=3, sampler=lambda g, size: g.normal(0, 1, size)
    )
    assert not all(_holds(normal.evidence))  # wrong only if the true claim Var = 1 is rejected: <= its alpha
    # the verdicts above and normal's variance test
    assert _risk(wrong) + sum(as_evidence(c).control_risk() for c in wrong.as_controls) + ALPHA <= BOOK_ALPHA
    # power is claimed: each rejection's certified miss bound is at most its level ...
    assert len(wrong.evidence) == 10 and all(_holds(wrong.evidence[5:]))
    # ... and the resolution limit: no power is certified against the four 1 % errors
    assert len(wrong.controls) == 4 and not any(_holds(wrong.controls))


def test_tail_crossing_agrees_with_the_closed_form_root_and_fails_from_a_wrong_guess() -> None:
    cross = ld.tail_crossing()
    # the reference: scipy's brentq on e^-t = erfc(t/2), in double precision (the function uses mpmath)
    root = brentq(lambda t: np.exp(-t) - special.erfc(t / 2), 0.5, 10.0, xtol=1e-14)
    assert cross.cross == pytest.approx(root, rel=1e-9)
    assert all(_holds(cross.evidence)) and not any(_holds(cross.controls))
    # a wrong root (mpmath from a wrong guess finds 0): the roots disagree and the sign checks fail
    assert not all(_holds(ld.tail_crossing(guess=0.01).evidence))
    with pytest.raises(ValueError):
        ld.tail_crossing(bracket=(3.0, 10.0))  # no sign change


def test_tail_necessity_separates_laplace_from_normal_noise() -> None:
    tails = ld.tail_necessity(scale=1.0, shift=1.0, far=40.0, epsilon=10.0)
    assert all(_holds(tails.evidence)) and not any(_holds(tails.controls))
    assert tails.laplace_max == pytest.approx(1.0, rel=1e-9) and tails.normal_far > 19
    # a wrong input: too near the centre, the normal law's ratio is still below eps
    near = ld.tail_necessity(scale=1.0, shift=1.0, far=5.0, epsilon=10.0)
    assert not all(_holds(near.evidence)) and any(_holds(near.controls))


def test_mgf_check_passes_the_two_sided_mgf_and_fails_the_one_sided_one() -> None:
    def two_sided(lam, sc):
        return 1 / (1 - sc**2 * lam**2)

    def one_sided(lam, sc):
        return 1 / (1 - sc * lam)

    ok = ld.mgf_check(two_sided, scale=1.0, n=N, alpha=ALPHA, seeds=(1, 2))
    assert [c.claimed for c in ok.checks] == pytest.approx([16 / 15, 4 / 3])
    assert as_evidence(ok.controls[0]).control_risk() <= ALPHA
    assert all(_holds(ok.evidence)) and not any(_holds(ok.controls))
    bad = ld.mgf_check(one_sided, scale=2.0, n=N, alpha=ALPHA, seeds=(1, 2))
    assert miss_probability(bad.checks[0], 16 / 15) <= ALPHA
    assert not all(_holds(bad.evidence))
    assert _risk(ok) + miss_probability(bad.checks[0], 16 / 15) <= BOOK_ALPHA


def test_window_probability_passes_laplace_and_fails_a_rounded_sampler() -> None:
    win = ld.window_probability(loc=3.0, scale=0.5, half_width=0.25, n=N, alpha=ALPHA, seeds=(1, 2))
    assert win.exact == pytest.approx(1 - np.exp(-0.5), rel=1e-14)
    assert all(_holds(win.evidence)) and as_evidence(win.controls[0]).control_risk() <= ALPHA
    assert not any(_holds(win.controls))
    lap = ld.laplace_sampler(3.0, 0.5)
    rounded = ld.window_probability(
        loc=3.0,
        scale=0.5,
        half_width=0.05,
        n=N,
        alpha=ALPHA,
        seeds=(1, 2),
        sampler=lambda g, size: np.round(lap(g, size)),
    )
    # P(|round(X) - 3| < 0.05) = P(round(X) = 3) = 1 - e^(-1) for X ~ Lap(3, 1/2): rejected
    miss = Rejected("rounded", result=rounded.checks[0], true_value=1 - np.exp(-1)).alpha
    assert miss <= ALPHA
    assert not all(_holds(rounded.evidence))
    assert _risk(win) + miss <= BOOK_ALPHA


def test_cdf_right_branch_accepts_the_corrected_branch_and_rejects_the_seeds() -> None:
    f_right = 1 - sp.exp(-s / b) / 2
    corrected = 1 - sp.exp(-(x - mu) / b) / 2
    seed_branch = 1 - sp.exp(-(mu - x) / b) / 2
    branch = ld.cdf_right_branch(f_right, corrected, seed_branch)
    assert all(_holds(branch.evidence)) and not any(_holds(branch.controls))
    swapped = ld.cdf_right_branch(f_right, seed_branch, corrected)
    assert not any(_holds(swapped.evidence)) and all(_holds(swapped.controls))


def test_fejer_counterexample_holds_for_fejer_and_fails_for_a_density_without_zeros() -> None:
    u = sp.Symbol("u", positive=True)
    fejer = (1 - sp.cos(x)) / (sp.pi * x**2)
    big_g = sp.Si(u) - (1 - sp.cos(u)) / u
    fe = ld.fejer_counterexample(fejer, big_g)
    # the reference tail by numerical quadrature of the density itself (mpmath), not from G
    with mpmath.workdps(30):
        inside = mpmath.quad(lambda z: (1 - mpmath.cos(z)) / (mpmath.pi * z**2), mpmath.linspace(-20, 20, 41))
    assert fe.fejer == pytest.approx(float(1 - inside), rel=1e-12) and fe.laplace == float(np.exp(-20))
    assert all(_holds(fe.evidence)) and not any(_holds(fe.controls))
    cauchy = 1 / (sp.pi * (1 + x**2))  # heavy tails too, but positive everywhere
    bad = ld.fejer_counterexample(cauchy, big_g)
    assert not all(_holds(bad.evidence)) and any(_holds(bad.controls))


def test_fejer_counterexample_fails_a_density_or_antiderivative_off_by_a_factor() -> None:
    u = sp.Symbol("u", positive=True)
    fejer = (1 - sp.cos(x)) / (sp.pi * x**2)
    big_g = sp.Si(u) - (1 - sp.cos(u)) / u
    five = ld.fejer_counterexample(5 * fejer, big_g)  # integral 5, and G' = pi f / 5
    assert not _holds(five.evidence)[0] and not _holds(five.evidence)[1]
    assert not _holds(ld.fejer_counterexample(fejer, 2 * big_g).evidence)[1]
