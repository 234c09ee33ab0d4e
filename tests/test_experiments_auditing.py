"""dpbook.experiments.auditing: each experiment's evidence holds and its controls fail on the
chapter's inputs (small n), and some evidence fails on a wrong input far from the truth.

The wrong inputs are chosen so that a pass is impossible or has a probability
far below 1e-6 whatever the seed (a mechanism several times less private than
claimed, a sampler of another law, a formula off by a constant factor), so the
tests do not depend on the seeds they use.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import dpcore
from dpbook import flawed
from dpbook.evidence import as_evidence
from dpbook.experiments import Experiment
from dpbook.experiments import auditing as X
from dpcore import discrete as dd


def holds(exp: Experiment) -> bool:
    """Every piece of evidence holds."""
    return all(as_evidence(e).holds for e in exp.evidence)


def controls_fail(exp: Experiment) -> bool:
    """Every control fails."""
    return all(not as_evidence(c).holds for c in exp.controls)


def test_validity_rate_holds_and_fails_on_a_less_private_mechanism() -> None:
    # 80 audits at 95 %: the rate test errs with probability <= 1e-5, and the plug-in
    # auditor (violation rate near 1) passes it with a computed, negligible probability
    v = X.validity_rate(runs=80, n=500, audit_seed=1, plug_in_seed=2, alpha=1e-5)
    assert holds(v) and controls_fail(v)
    assert v.runs == 80 and 0 <= v.over <= 80 and 0 <= v.over_plug_in <= 80
    assert v.plug_in_rate_lower > 0.5 and v.plug_in_miss < 1e-6
    # Laplace of scale 1/10 is 10-DP, claimed 1-DP: every audit exceeds 1
    wrong = X.validity_rate(dpcore.LaplaceMechanism(0.1), 1.0, runs=20, n=1_000, alpha=1e-5)
    assert wrong.over == 20
    assert not holds(wrong)


def test_plug_in_audit_is_finite_and_nonnegative() -> None:
    value = X.plug_in_audit(dpcore.LaplaceMechanism(1.0), 0.0, 1.0, 500, 3)
    assert math.isfinite(value) and value >= 0


def test_correct_laplace() -> None:
    r = X.correct_laplace((1.0, 2.0), n=20_000, seed=5)
    assert set(r.audits) == {1.0, 2.0}
    assert max(r.half_misses.values()) < 1e-9  # the eps/2 controls, given the kept events
    assert holds(r) and controls_fail(r)
    # the stray factor 2 doubles epsilon: the audit at eps = 2 bounds it near 4
    wrong = X.correct_laplace((2.0,), n=20_000, release=flawed.laplace_stray_factor_two)
    assert not holds(wrong)


def test_correct_gaussian_and_a_wrong_sigma_formula() -> None:
    r = X.correct_gaussian((1.0,), n=20_000, seed=7)
    assert abs(r.eps_tight - 1.0) < 1e-6
    assert holds(r) and controls_fail(r)

    def too_small(sens: float, eps: float, delta: float) -> float:
        return 0.8 * dpcore.analytic_gaussian_sigma(sens, eps, delta)

    wrong = X.correct_gaussian((1.0,), n=2_000, sigma=too_small)
    assert wrong.eps_tight > 1.05  # a sigma 20 % too small: its event shows eps > 1
    assert not holds(wrong)


def test_stray_factor_two() -> None:
    r = X.stray_factor_two(n=20_000, seeds=(8, 9, 10))
    assert r.miss < 1e-9 and r.audit_miss < 1e-9
    assert holds(r) and controls_fail(r)
    # a correct release is not rejected (its fixed-event audit is valid at alpha = 5e-7)
    wrong = X.stray_factor_two(n=20_000, release=dpcore.laplace_mechanism)
    assert not holds(wrong)


def test_stray_factor_two_fails_with_a_broken_event_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    # a selection that keeps the worst-scoring candidate of every kind: its events
    # do not violate the claim, so audit_miss is 1 and the audit evidence fails
    import dpcore.auditing as A

    def worst(sel: Any, n_sel: int, alpha: float, delta: float) -> Any:
        kept = []
        for tail, numerator in A._KINDS:
            lower, upper = A._tails(sel[0 if numerator == "d" else 1])
            k = lower if tail == "lower" else upper
            kept.append((tail, numerator, int(np.argmin(k[1:-1])) + 1))
        return kept

    monkeypatch.setattr(A, "_select_events", worst)
    r = X.stray_factor_two(n=20_000, seeds=(8, 9, 10))
    assert r.audit_miss > 1e-3
    assert not holds(r)


def test_per_coordinate() -> None:
    r = X.per_coordinate(n=20_000, seeds=(11, 12, 13, 14))
    assert r.miss < 1e-9
    assert holds(r) and controls_fail(r)

    def l1_calibrated(value: Any, per_coordinate_sensitivity: float, epsilon: float, rng: Any = None) -> Any:
        return dpcore.laplace_mechanism(value, sensitivity=3 * per_coordinate_sensitivity, epsilon=epsilon, rng=rng)

    wrong = X.per_coordinate(n=20_000, release=l1_calibrated)
    assert not holds(wrong)


def test_variance_as_std() -> None:
    r = X.variance_as_std(n=200_000, seeds=(15, 16, 17))
    assert abs(r.sigma - 0.3731) < 1e-4
    assert r.miss < 1e-9
    assert holds(r) and controls_fail(r)

    def std_as_std(value: Any, sigma: float, rng: Any = None) -> Any:
        v = np.asarray(value, dtype=float)
        return v + dpcore.as_generator(rng).normal(0.0, sigma, size=v.shape)

    wrong = X.variance_as_std(n=20_000, release=std_as_std)
    assert not holds(wrong)


def test_convergence() -> None:
    lap1 = dpcore.LaplaceMechanism(1.0)
    stray = dpcore.LaplaceMechanism(0.5)  # 2-DP, claimed 1-DP: the control
    r = X.convergence(
        {"correct": (lap1, 18), "stray": (stray, 40)},
        sizes=(1_000, 30_000),
        repetitions=2,
        laws={"stray": X.laplace_laws(0.5)},
    )
    assert r.curves["correct"].shape == (2, 2) and r.sizes == (1_000, 30_000)
    assert len(r.evidence) == 4 and holds(r) and controls_fail(r)
    assert r.misses["stray"].min() < 1e-9
    # Laplace of scale 1/4 is 4-DP, claimed 1-DP
    wrong = X.convergence({"correct": (dpcore.LaplaceMechanism(0.25), 19)}, sizes=(3_000,), repetitions=1)
    assert not holds(wrong)


class UnseededLaplace:
    """Picklable mechanism that ignores the rng it is given: results are not reproducible."""

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> Any:
        return float(data) + np.random.default_rng().laplace(0.0, 1.0, size)


def test_scale_out() -> None:
    r = X.scale_out(n=20_000, seed=20, other_seed=21)
    assert holds(r) and controls_fail(r)
    wrong = X.scale_out(UnseededLaplace(), n=20_000)
    assert not holds(wrong)


@pytest.fixture(scope="module")
def game() -> X.FloatAttack:
    return X.float_attack(n=20_000, seeds=(22, 23, 24), n_attack=4_000)


def test_float_attack(game: X.FloatAttack) -> None:
    assert game.y0.size == game.y1.size == 20_000
    assert game.bound == pytest.approx(math.exp(0.5) / (1 + math.exp(0.5)))
    # about 60 % of the outputs are impossible under the other input
    assert 0.3 < game.impossible_under_0.mean() < 0.9
    assert game.attack is not None and not game.attack.passed


def test_float_event_audit(game: X.FloatAttack) -> None:
    r = X.float_event_audit(game, n=2_000, n_small=500, seeds=(25, 26, 27))
    assert r.miss < 1e-6
    assert holds(r) and controls_fail(r)
    # a statistic that carries no information never rejects a claim

    def constant(x: Any, n: int, g: np.random.Generator) -> Any:
        return np.ones(n)

    wrong = X.float_event_audit(game, n=500, n_small=500, statistic=constant)
    assert not holds(wrong)


def test_float_not_dp(game: X.FloatAttack) -> None:
    r = X.float_not_dp(game, control_seed=28)
    assert holds(r) and controls_fail(r)
    # outputs of M(0) passed off as outputs of M(1): every one is possible under M(0)
    masked = replace(
        game,
        y1=game.y0,
        impossible_under_0=~dpcore.floating_point.naive_laplace_support_contains(game.y0, 0.0, game.scale),
    )
    assert not holds(X.float_not_dp(masked))


def test_discrete_laplace_sampler() -> None:
    r = X.discrete_laplace_sampler(n=100_000, n_cdf_control=400_000, seeds=(29, 30, 31, 32, 33))
    assert r.p0 == pytest.approx(math.tanh(0.25), rel=1e-14)
    assert len(r.shown) == 5
    assert holds(r) and controls_fail(r)

    def rounded(g: np.random.Generator, n: int) -> Any:
        return np.round(g.laplace(0.0, 2.0, n))

    assert not holds(X.discrete_laplace_sampler(n=20_000, n_cdf_control=1_000, sampler=rounded))


def test_discrete_gaussian_sampler() -> None:
    r = X.discrete_gaussian_sampler(n=100_000, seeds=(34, 35, 36, 37))
    assert holds(r) and controls_fail(r)

    def rounded(g: np.random.Generator, n: int) -> Any:
        return np.round(g.normal(0.0, math.sqrt(0.5), n))

    assert not holds(X.discrete_gaussian_sampler(n=20_000, sampler=rounded))


def test_discrete_attack() -> None:
    # the control (the continuous mechanism's success 1 - e^(-1/4)/2 = 0.6106) is
    # 0.012 from the truth: 200,000 games reject it with a miss below 1e-7
    r = X.discrete_attack(n=200_000, seeds=(38, 39, 40, 41))
    assert r.bound == pytest.approx(math.exp(0.5) / (1 + math.exp(0.5)))
    assert r.wrong is not None and r.wrong.claimed == pytest.approx(1 - math.exp(-0.25) / 2)
    assert holds(r) and controls_fail(r)
    assert as_evidence(r.controls[0]).control_risk() < 1e-7

    def four_times_less_noise(x: Any, m: int, g: np.random.Generator) -> Any:
        return dd.discrete_laplace_mechanism(np.full(m, x), 1, "2", rng=g)

    assert not holds(X.discrete_attack(n=20_000, mechanism=four_times_less_noise))
