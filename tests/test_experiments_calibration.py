"""dpbook.experiments.calibration: each experiment of the calibration appendix, at small sizes.

For each function: on the true inputs its evidence holds and its controls
fail; on a wrong input (a miscalibrated twin from dpbook.flawed, a wrong
derived formula, a wrong claimed delta, a dependent sampler) some evidence
fails. The wrong inputs are far from the truth, so each failure is certain up
to the tests' own false-alarm probabilities; the seeds are arbitrary.

False alarms: ``assert_sound`` adds, per experiment (one ledger claim), the
evidence's alphas and the controls' computed risks (union bound) and requires
the total to be at most ``BOOK_ALPHA`` = 1e-6, which bounds the chance that
the test fails on correct code.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

from dpbook import calibration, figures, flawed  # noqa: E402
from dpbook.evidence import BOOK_ALPHA, as_evidence  # noqa: E402
from dpbook.experiments import Experiment  # noqa: E402
from dpbook.experiments import calibration as X  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def holds(items) -> list[bool]:
    return [as_evidence(item).holds for item in items]


def risk(exp: Experiment) -> float:
    """Union bound on the chance that a correct experiment fails: the evidence's alphas and the controls' risks."""
    return sum(as_evidence(e).alpha or 0.0 for e in exp.evidence) + sum(
        as_evidence(c).control_risk() for c in exp.controls
    )


def assert_sound(exp: Experiment, *, budget: bool = True) -> None:
    """Every piece of evidence holds, every control fails, and (one claim) the total risk is within the book's."""
    assert exp.evidence and exp.controls
    assert all(holds(exp.evidence)), str(exp)
    assert not any(holds(exp.controls)), str(exp)
    if budget:
        assert risk(exp) <= BOOK_ALPHA, risk(exp)


def some_evidence_fails(exp: Experiment) -> bool:
    return not all(holds(exp.evidence))


# --------------------------------------------------------------------------- the suite
def _row(real_rejections: int, twin_rejections: int, reps: int = 1_000, alpha: float = 0.05):
    real = calibration.summarize("real", real_rejections, reps, alpha)
    twin = calibration.summarize("twin", twin_rejections, reps, alpha)
    rate = twin_rejections / reps
    return calibration.SuiteRow(real, twin, rate, "test", calibration.miss_probability(reps, alpha, rate))


def test_check_calibration_on_known_rows():
    rows = (_row(40, 200), _row(0, 500))  # rates 0.04 <= 0.05; twins at 0.2 and 0.5
    seen = {}

    def suite(**kw):
        seen.update(kw)
        return rows

    result = X.check_calibration(rng=5, miss=1e-3, level=5e-7, floor=7, suite=suite)
    assert seen == {"rng": 5, "miss": 1e-3, "alpha": 0.05, "audit_alpha": 0.1, "floor": 7}
    assert result.rows == rows and len(result.parts) == 2
    for part in result.parts:
        assert_sound(part)
    assert_sound(result, budget=False)  # the union of two claims: each is budgeted above
    assert result.evidence[0].alpha == 5e-7
    assert result.table().count("\n") == 1 and "twin rate 0.2000" in result.table()


def test_check_calibration_fails_a_miscalibrated_check():
    # a "real" check that rejects 20% of true claims at alpha = 0.05
    result = X.check_calibration(suite=lambda **kw: (_row(200, 200),))
    assert some_evidence_fails(result)


# --------------------------------------------------------------------------- power
def test_power_against_exact():
    power = X.power_against_exact([0.0, 0.1], rng=3, replications=20_000)
    assert_sound(power)
    assert power.replications == 20_000 and len(power.measured) == 2
    # the control's risk is the exact chance that the interval at shift 0 covers the unsplit power
    assert power.controls[0].alpha < 1e-100
    assert power.table().startswith("shift 0.000: measured")


def test_power_against_exact_fails_the_unsplit_twin():
    # the test that does not halve alpha rejects ~5.7% at shift 0, not the exact 3.5%
    power = X.power_against_exact([0.0, 0.1], rng=4, replications=20_000, check=flawed.probability_result_unsplit_alpha)
    assert some_evidence_fails(power)


# --------------------------------------------------------------------------- the constants
def _dkw(n, a):
    return math.sqrt(math.log(2 / a) / (2 * n))


def _hoeffding(n, a):
    return math.sqrt(math.log(4 / a) / (2 * n))


def _bernstein(n, a, v):
    return math.sqrt(2 * v * math.log(8 / a) / n) + 7 * math.log(8 / a) / (3 * (n - 1))


def test_constants_radii():
    radii = X.constants_radii(_dkw, _hoeffding, _bernstein, n=200, alpha=1e-3, seeds=(1, 2))
    assert_sound(radii)
    assert radii.cdf_run is not None and radii.coin_run is not None


def test_constants_radii_fails_a_wrong_formula():
    one_sided = lambda n, a: math.sqrt(math.log(1 / a) / (2 * n))  # noqa: E731
    assert some_evidence_fails(X.constants_radii(one_sided, _hoeffding, _bernstein, n=200))
    assert some_evidence_fails(X.constants_radii(_dkw, _dkw, _bernstein, n=200))  # Hoeffding at alpha


def test_tail_root_and_block_radius_against_scipy():
    k, n, a = 37, 120, 0.005
    assert X.tail_root(k, n, a) == pytest.approx(stats.beta.ppf(a, k, n - k + 1), rel=1e-9)
    assert X.tail_root(k, n, a, upper=True) == pytest.approx(stats.beta.ppf(1 - a, k + 1, n - k), rel=1e-9)
    blocks, alpha = 9, 1e-6
    r = X.block_radius(900, blocks, 2.0, alpha)
    p_star = 2.0 / (100 * r**2)  # r = sqrt(var / (m p*)), m = 100
    assert stats.binom.sf((blocks + 1) // 2 - 1, blocks, p_star) == pytest.approx(alpha, rel=1e-8)


def test_constants_tails():
    small = {"n_mean": 2_000, "n_alternating": 1_000, "n_audit": 1_000, "seeds": (3, 4, 5)}
    tails = X.constants_tails(2.0, 1.0, **small)  # Var Y <= (kappa + 1) sigma^4 / 2 = 2 at kappa = 3
    assert_sound(tails)
    assert tails.alternating is not None and tails.alternating.estimate == 0.5
    # the pair-statistic variance with kappa - 1: the radius no longer matches
    assert some_evidence_fails(X.constants_tails(1.0, 2.0, **small))


# --------------------------------------------------------------------------- streams
SMALL = {"n": 3_000, "n_mean": 3_050, "n_audit": 2_000, "chunk_mean": 100, "chunk_audit": 50}


def test_stream_independence():
    result = X.stream_independence(seeds=(6, 7, 8), **SMALL)
    assert_sound(result)
    assert len(result.tests) == 15 and len(result.twin_results) == 4


def test_stream_independence_fails_a_dependent_sampler():
    sticky = flawed.StickySigns(lambda g, s: g.laplace(0.0, 1.0, s))
    result = X.stream_independence(seeds=(6, 7, 8), samplers={"sticky": sticky}, **SMALL)
    assert some_evidence_fails(result)


# --------------------------------------------------------------------------- a (0, delta) mechanism
def test_audit_zero_epsilon():
    result = X.audit_zero_epsilon(n=20_000, seeds=(9, 10, 11))
    assert_sound(result)
    assert result.no_delta is not None and result.no_delta.epsilon_lower > 0


def test_audit_zero_epsilon_fails_a_too_small_delta():
    # LeakOutputs(0.05) is not (0, 0.01)-DP: some event moves by 0.05
    assert some_evidence_fails(X.audit_zero_epsilon(n=20_000, delta=0.01))


# --------------------------------------------------------------------------- figures
def test_figures_draw():
    suite = X.check_calibration(suite=lambda **kw: (_row(40, 200), _row(0, 500)))
    fig = figures.calibration_rates(suite, ["a", "b"])
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["a", "b"]
    power = X.power_against_exact(np.linspace(0, 0.1, 3), rng=1, replications=2_000)
    fig = figures.calibration_power(power)
    assert len(fig.axes[0].get_lines()) == 3  # exact, measured, alpha
