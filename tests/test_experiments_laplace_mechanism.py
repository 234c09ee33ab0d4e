"""dpbook.experiments.laplace_mechanism: each experiment's evidence holds and its controls fail on the
correct inputs, and some evidence fails on a wrong input (a flawed mechanism, a wrong formula, a wrong claim).

Small sample sizes keep the suite fast. The Monte Carlo assertions on correct inputs fail with probability
at most the experiment's alphas plus its controls' miss probabilities (all below 1e-6 at these sizes);
the wrong inputs are far from the truth, and most negative tests are deterministic.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import pytest
import sympy as sp

from dpbook import flawed
from dpbook.evidence import BOOK_ALPHA, as_evidence, miss_probability
from dpbook.experiments import Experiment
from dpbook.experiments import laplace_mechanism as lm
from dpbook.symbolic import Delta, epsilon, u, v, z

EPS, SENS, U, V = 1.0, 1.0, 0.0, 1.0
B = SENS / EPS
P, Q = sp.symbols("p q", nonnegative=True)
REGIONS = {
    ("u <= v", "below both"): {v: u + Q, z: u - P},
    ("u <= v", "between"): {v: u + P + Q, z: u + P},
    ("u <= v", "above both"): {v: u + Q, z: u + Q + P},
    ("v <= u", "below both"): {u: v + Q, z: v - P},
    ("v <= u", "between"): {u: v + P + Q, z: v + P},
    ("v <= u", "above both"): {u: v + Q, z: v + Q + P},
}
CORRECT = lm.laplace_release(SENS, EPS)
HALF = lm.stray_factor_two_release(SENS, EPS)


def noiseless(vals: Any, rng: Any) -> Any:
    """A 'mechanism' that releases the true answer: P[M(D) = f(D)] = 1."""
    return np.asarray(vals, dtype=float).copy()


def holds(items: Any) -> list[bool]:
    return [as_evidence(e).holds for e in items]


def assert_sound(exp: Experiment) -> None:
    """Every piece of evidence holds, every control fails, and the Monte Carlo budget is within the book's."""
    assert exp.evidence, "an experiment must produce evidence"
    assert all(holds(exp.evidence)), [str(e) for e in exp.evidence if not as_evidence(e).holds]
    assert not any(holds(exp.controls)), [str(c) for c in exp.controls if as_evidence(c).holds]
    budget = sum(as_evidence(e).alpha or 0.0 for e in exp.evidence)
    budget += sum(as_evidence(c).control_risk() for c in exp.controls)
    assert budget <= BOOK_ALPHA


def assert_caught(exp: Experiment) -> None:
    assert not all(holds(exp.evidence)), "a wrong input must make some evidence fail"


# --------------------------------------------------------------------------- helpers


def test_releases_and_declared_loss() -> None:
    rng = np.random.default_rng(0)
    x = CORRECT(np.zeros(10_000), rng)
    assert x.shape == (10_000,) and 0.9 < np.mean(np.abs(x)) < 1.1  # E|Lap(0, 1)| = 1
    h = HALF(np.zeros(10_000), rng)
    assert 0.45 < np.mean(np.abs(h)) < 0.55
    loss = lm.declared_loss(CORRECT, U, V, B)(rng, 1000)
    assert loss.shape == (1000,) and np.all(np.abs(loss) <= EPS * (1 + 1e-12))


def test_loss_cdf_and_seed_probability() -> None:
    inner = lambda l_, e_: np.exp(-(e_ - l_) / 2) / 2  # noqa: E731
    c = lm.loss_cdf(inner, [-2.0, -EPS, 0.0, EPS, 2.0], EPS)
    assert c[0] == 0.0 and c[-2] == c[-1] == 1.0
    assert math.isclose(c[1], math.exp(-EPS) / 2) and math.isclose(c[2], math.exp(-EPS / 2) / 2)
    assert lm.loss_cdf(inner, [-EPS], EPS, power=2.0)[0] == pytest.approx(math.exp(-2 * EPS) / 2)
    assert lm.seed000_point_probability(np.zeros(1), 4.0, 1.0) == 2.0


# --------------------------------------------------------------------------- symbolic and exact


def test_privacy_loss_formula() -> None:
    assert_sound(lm.privacy_loss_formula(lambda zs: EPS * (np.abs(zs - V) - np.abs(zs - U)) / SENS))
    assert_caught(lm.privacy_loss_formula(lambda zs: EPS * (np.abs(zs - U) - np.abs(zs - V)) / SENS))


def _rows(g: sp.Expr) -> list[tuple[Any, ...]]:
    rows = []
    for key, sub in REGIONS.items():
        g_r, dist = sp.simplify(g.subs(sub)), sp.simplify(sp.Abs(u - v).subs(sub))
        rows.append((*key, g_r, dist, sp.simplify(dist - g_r)))
    return rows


def test_triangle_step() -> None:
    tri = lm.triangle_step(_rows(sp.Abs(z - v) - sp.Abs(z - u)))
    assert_sound(tri)
    assert len(tri.evidence) == 6 and tri.table.count("\n") == 5 and "slack = 2*p" in tri.table
    # a wrong g (twice the difference) exceeds |u - v| on some regions
    assert_caught(lm.triangle_step(_rows(2 * (sp.Abs(z - v) - sp.Abs(z - u)))))


def test_vector_l1() -> None:
    vec = lm.vector_l1(REGIONS, Delta / epsilon, P, Q, dims=(2,))
    assert_sound(vec)
    assert set(vec.ratios) == {2}
    # half the noise scale: the ratio is exp(2 eps ...), not exp(eps ...) (d = 1 keeps it quick)
    assert_caught(lm.vector_l1(REGIONS, Delta / (2 * epsilon), P, Q, dims=(1,)))


def test_seed004_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_sound(lm.seed004_chain(EPS, SENS, 3 * B, n=2000, seed=1))
    # the l2 control is false for any direction off the axes: it fails in one dimension only where it must hold
    one_d = lm.seed004_chain(EPS, SENS, 3 * B, n=200, dim=1, seed=1)
    assert as_evidence(one_d.controls[1]).holds
    # a library scale off by a factor 2: relation 1 (scipy's densities at dpcore's scale) is not expression 3
    monkeypatch.setattr(lm.dpcore, "laplace_scale", lambda s, e: s / (2 * e))
    assert_caught(lm.seed004_chain(EPS, SENS, 3 * B, n=2000, seed=1))


EDGES = np.r_[-np.inf, np.linspace(-10, 11, 85), np.inf]


def test_interval_ratios() -> None:
    ivl = lm.interval_ratios(U, V, B, EPS, edges=EDGES)
    assert_sound(ivl)
    assert ivl.grid is not None and ivl.grid.n_events == 87 * 86 // 2
    assert "intervals; max log ratio" in ivl.summary
    # the scale of a 2-eps mechanism claimed eps-DP
    assert_caught(lm.interval_ratios(U, V, B / 2, EPS, edges=EDGES))


def test_event_set_as_range() -> None:
    good = lm.event_set_as_range(lm.noiseless_release(), U, V, EPS, n=2000)
    assert_sound(good)
    assert good.miss < 1e-12 and "S = the range only" in good.summary
    assert np.array_equal(lm.noiseless_release()(np.full(3, 2.0), None), np.full(3, 2.0))
    # the Laplace mechanism is eps-DP: the check over every interval cannot reject it
    assert_caught(lm.event_set_as_range(CORRECT, U, V, EPS, n=20_000))
    with pytest.raises(ValueError, match="grid points"):
        lm.event_set_as_range(noiseless, 0.25, V, EPS, n=10)


def test_stray_factor_two() -> None:
    half_grid = lm.interval_ratios(U, V, B, EPS, edges=EDGES).grid_half
    assert half_grid is not None
    st = lm.stray_factor_two(U, V, B, EPS, half_grid)
    assert_sound(st)
    assert st.success_half == pytest.approx(1 - math.exp(-EPS) / 2, rel=1e-14)
    # the exact grid at the correct scale claimed to show the 2 eps of the stray factor
    right_grid = lm.interval_ratios(U, V, B, EPS, edges=EDGES).grid
    assert right_grid is not None
    assert_caught(lm.stray_factor_two(U, V, B, EPS, right_grid))


def test_sum_upper_limit() -> None:
    u4, v4 = np.zeros(4), np.ones(4)
    sums = lm.sum_upper_limit(u4, v4, EPS, EPS)
    assert_sound(sums)
    assert sums.summary.splitlines()[-1].endswith("inequality holds")
    assert_caught(lm.sum_upper_limit(u4, v4, EPS, 4 * EPS))  # the per-coordinate calibration's ratio


def _kl(w: str, b: str) -> Any:
    w_, b_ = mpmath.mpf(w), mpmath.mpf(b)
    return w_ / b_ + mpmath.exp(-w_ / b_) - 1


def _kl2(w: str, b: str, b2: str) -> Any:
    w_, b_, b2_ = mpmath.mpf(w), mpmath.mpf(b), mpmath.mpf(b2)
    return mpmath.log(b2_ / b_) + w_ / b2_ + b_ / b2_ * mpmath.exp(-w_ / b_) - 1


def _kl2_without_ratio(w: str, b: str, b2: str) -> Any:
    """The two-scale form with the ratio b/b2 dropped from its third term (a wrong formula)."""
    w_, b_, b2_ = mpmath.mpf(w), mpmath.mpf(b), mpmath.mpf(b2)
    return mpmath.log(b2_ / b_) + w_ / b2_ + mpmath.exp(-w_ / b_) - 1


def test_kl_against_dpcore() -> None:
    with mpmath.workdps(30):
        assert_sound(lm.kl_against_dpcore(_kl, _kl2))
        assert_caught(lm.kl_against_dpcore(_kl, _kl2_without_ratio))


# --------------------------------------------------------------------------- Monte Carlo (small n)


def test_probability_as_density() -> None:
    dens = lm.probability_as_density(CORRECT, U, V, B, EPS, SENS, n=20_000, seeds=(1, 2))
    assert_sound(dens)
    assert dens.refusal and "P[|M(D)| <= h]:" in dens.summary and len(dens.set_summary.splitlines()) == 3
    assert dens.window_probability == pytest.approx(1 - math.exp(-0.5), rel=1e-14) and dens.seed_value == 0.5
    # a noiseless release puts probability 1 on the window: the test of its integral rejects
    assert_caught(lm.probability_as_density(noiseless, U, V, B, EPS, SENS, n=2000, seeds=(1, 2)))
    # noise of half the scale: P[M(D) in S] = 1 - e^(-1), not 1 - e^(-1/2)
    assert_caught(lm.probability_as_density(HALF, U, V, B, EPS, SENS, n=20_000, seeds=(1, 2)))
    # noiseless only away from 0: caught at f(D) = 2, which the releases must use
    away = lambda vals, r: np.where(vals == 0.0, CORRECT(vals, r), vals)  # noqa: E731
    assert_caught(lm.probability_as_density(away, 2.0, 3.0, B, EPS, SENS, n=2000, seeds=(1, 2)))
    # at eps = 1 the seed's value is 1/2, a probability: no refusal, and that control holds
    small = lm.probability_as_density(CORRECT, U, V, B, EPS, SENS, n=2000, large_epsilon=1.0)
    assert not small.refusal and as_evidence(small.controls[1]).holds


def test_release_law() -> None:
    law = lm.release_law(CORRECT, HALF, U, V, B, EPS, flawed_scale=B / 2, n=10_000, seeds=(3, 4))
    assert_sound(law)
    assert law.loss_max == pytest.approx(EPS, rel=1e-12) and law.loss_max_flawed == pytest.approx(2 * EPS)
    # the densities at half the declared scale (a library scale off by 2): max |L| = 2 eps fails the bound
    assert_caught(lm.release_law(HALF, HALF, U, V, B / 2, EPS, flawed_scale=B / 4, n=10_000, seeds=(3, 4)))
    # the flawed mechanism in place of the correct one
    assert_caught(lm.release_law(HALF, HALF, U, V, B, EPS, flawed_scale=B / 2, n=10_000, seeds=(3, 4)))
    with pytest.raises(ValueError, match="flawed_scale"):
        lm.release_law(CORRECT, HALF, U, V, B, EPS, flawed_scale=0.0, n=10)


def _inner(l_: Any, e_: float) -> Any:
    return np.exp(-(e_ - l_) / 2) / 2


def test_privacy_loss_distribution() -> None:
    p_low = math.exp(-EPS) / 2
    pld = lm.privacy_loss_distribution(_inner, p_low, CORRECT, HALF, U, V, B, EPS, flawed_scale=B / 2, n=20_000)
    assert_sound(pld)
    # a wrong derived law: P[L <= l] = e^(-(eps - l))/2, atom e^(-2 eps)/2
    wrong = lambda l_, e_: np.exp(-(e_ - l_)) / 2  # noqa: E731
    bad = lm.privacy_loss_distribution(
        wrong, math.exp(-2 * EPS) / 2, CORRECT, HALF, U, V, B, EPS, flawed_scale=B / 2, n=20_000
    )
    assert_caught(bad)
    assert bad.atom is not None and not bad.atom.passed
    with pytest.raises(ValueError, match="u, v"):
        lm.privacy_loss_distribution(_inner, p_low, CORRECT, HALF, U, 2 * V, B, EPS, flawed_scale=B / 2, n=10)
    with pytest.raises(ValueError, match="flawed_scale"):
        lm.privacy_loss_distribution(_inner, p_low, CORRECT, HALF, U, V, B, EPS, flawed_scale=-1.0, n=10)


def test_privacy_loss_distribution_samples_reject_a_wrong_cdf() -> None:
    """A wrong law with the right atom (the atom test holds): only the DKW test on samples can catch it."""

    def lin(l_: Any, e_: float) -> Any:  # linear between the atoms
        return np.exp(-e_) / 2 + (1 - np.exp(-e_)) / 2 * (l_ + e_) / (2 * e_)

    bad = lm.privacy_loss_distribution(
        lin, math.exp(-EPS) / 2, CORRECT, HALF, U, V, B, EPS, flawed_scale=B / 2, n=100_000
    )
    assert as_evidence(bad.evidence[1]).holds
    assert bad.cdf is not None and not bad.cdf.passed
    # the chance that the DKW test passes the wrong law, from the true sup distance on its grid:
    # this test's false-alarm probability, computed
    grid = np.linspace(-1.2, 1.2, 481)  # the experiment's grid: 481 points, the atoms at +-eps left out
    grid = grid[np.abs(np.abs(grid) - EPS) > 1e-6]
    assert bad.cdf.details["grid_points"] == grid.size
    distance = float(np.max(np.abs(lm.loss_cdf(lin, grid, EPS) - lm.loss_cdf(_inner, grid, EPS))))
    assert miss_probability(bad.cdf, distance) <= BOOK_ALPHA


def test_kl_mean() -> None:
    klm = lm.kl_mean(CORRECT, U, V, B, EPS, n=20_000)
    assert_sound(klm)
    assert klm.kl == pytest.approx(EPS + math.exp(-EPS) - 1)
    # a noiseless release: every loss is eps, the mean is not KL
    assert_caught(lm.kl_mean(noiseless, U, V, B, EPS, n=20_000))


def test_event_ratios() -> None:
    ev = lm.event_ratios(CORRECT, HALF, U, V, EPS, flawed_scale=B / 2, n=20_000)
    assert_sound(ev)
    assert "largest lower bound on a ratio" in ev.summary
    assert_caught(lm.event_ratios(HALF, HALF, U, V, EPS, flawed_scale=B / 2, n=20_000))
    # the control's miss is computed from the flawed law's scale: a law that violates no event has none
    with pytest.raises(ValueError, match="flawed_scale"):
        lm.event_ratios(CORRECT, CORRECT, U, V, EPS, flawed_scale=B, n=100)
    with pytest.raises(ValueError, match="edges"):
        lm.event_ratios(CORRECT, HALF, U, V, EPS, flawed_scale=B / 2, n=100, edges=[1.0, 0.0, 2.0])


def test_vector_calibrations() -> None:
    u4, v4 = np.zeros(4), np.ones(4)
    cal = lm.vector_releases(u4, v4, EPS)
    assert [s for _, s in cal.values()] == [4.0, 1.0, 2.0, 2.0]
    vc = lm.vector_calibrations(cal, u4, v4, EPS, n=50_000, seed=14)
    for exp in (vc, vc.per_coordinate, vc.p_norm):
        assert_sound(exp)
    assert len(vc.summary.splitlines()) == 4 and vc.correct[0].log_ratio_max == pytest.approx(EPS)
    # the per-coordinate calibration (scale Delta_inf/eps) in place of the L1 one
    wrong = dict(cal)
    wrong["L1 (correct)"] = (
        lambda vals, r: flawed.laplace_per_coordinate_sensitivity(vals, 1.0, EPS, rng=r),
        1.0 / EPS,
    )
    bad = lm.vector_calibrations(wrong, u4, v4, EPS, n=50_000, seed=14)
    assert_caught(bad)
    assert_caught(bad.p_norm)
