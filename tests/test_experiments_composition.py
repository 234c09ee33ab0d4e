"""The experiments of the composition chapter (dpbook.experiments.composition), on small inputs.

Each function is run on correct inputs (its evidence holds, its controls
fail) and on a wrong input (some evidence fails, or a control holds). The
Monte Carlo functions run at the chapter's false-alarm levels (at most
:data:`dpbook.evidence.BOOK_ALPHA` per call, union bound, checked below);
on wrong inputs their miss probability is computed from the exact binomial
law and asserted <= 1e-6.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

import dpcore
from dpbook.evidence import BOOK_ALPHA, as_evidence, miss_probability
from dpbook.experiments import Experiment
from dpbook.experiments import composition as cx


def holds(items) -> list[bool]:
    return [as_evidence(e).holds for e in items]


def assert_sound(exp: Experiment) -> float:
    """Every piece of evidence holds, every control fails, the risks add up to <= BOOK_ALPHA (returned)."""
    assert exp.evidence, "an experiment without evidence"
    assert all(holds(exp.evidence)), str(exp)
    assert exp.controls and not any(holds(exp.controls)), str(exp)
    budget = sum(as_evidence(e).alpha or 0.0 for e in exp.evidence)
    budget += sum(as_evidence(c).control_risk() for c in exp.controls)
    assert budget <= BOOK_ALPHA
    return budget


def _laplace_cdf(e0):
    return lambda x: np.where(x < -e0, 0.0, np.where(x >= e0, 1.0, 0.5 * np.exp((np.clip(x, -e0, e0) - e0) / 2)))


def test_law_agreement_laplace_holds_and_rejects_a_wrong_law():
    e0 = 0.7
    loss = dpcore.LaplaceMechanism(1 / e0).privacy_losses()[0]
    pts = np.linspace(-1.0, 1.0, 41)
    profile = lambda e: 1 - math.exp((e - e0) / 2) if e < e0 else 0.0  # noqa: E731
    wrong = lambda x: np.where(x < -e0, 0.0, np.where(x >= e0, 1.0, np.exp(np.clip(x, -e0, e0) - e0) / 2))  # noqa: E731
    kw = dict(wrong_cdf=wrong, profile=profile, epsilons=(0.0, 0.3), wrong_profile=lambda e: 1 - math.exp(e - e0))
    assert_sound(cx.law_agreement(loss, _laplace_cdf(e0), pts, **kw))
    bad = cx.law_agreement(loss, wrong, pts, **kw)  # the wrong law as the "derived" one
    assert not all(holds(bad.evidence)) and bad.cdf_error > 0.01


def test_law_agreement_catches_a_faulty_profile():
    mech = dpcore.GaussianMechanism(1.0)
    loss = mech.privacy_losses()[0]
    cdf = lambda x: stats.norm.cdf(x, 0.5, 1.0)  # noqa: E731  N(mu, 2 mu), mu = 1/2
    exact = lambda e: float(dpcore.gaussian_delta(1.0, 1.0, e))  # noqa: E731
    kw = dict(wrong_cdf=lambda x: stats.norm.cdf(x, 0.5, 0.5), profile=exact, epsilons=(0.0, 1.0))
    assert_sound(cx.law_agreement(loss, cdf, [-1.0, 0.0, 2.0], mean=(-40, 40, 0.5), **kw))
    faulty = cx.law_agreement(loss, cdf, [0.0], others={"faulty": lambda e: 1.01 * exact(e)}, **kw)
    assert not all(holds(faulty.evidence))


def test_convolution_holds_and_fails_for_the_wrong_count():
    res = cx.convolution(1.0, 2, epsilons=(0.5, 1.5))
    assert_sound(res)
    wrong = cx.convolution(1.0, 3, epsilons=(0.5, 1.5))  # the same check, with a different count
    assert all(holds(wrong.evidence))
    assert max(abs(a - b) for a, b in zip(wrong.single, res.single, strict=True)) > 0.05


def test_laplace_montecarlo_holds_and_a_wrong_scale_is_caught():
    res = cx.laplace_montecarlo(2.0, 10, 2.0, n=200_000, seed=5)
    assert_sound(res)
    assert res.brackets[0][0] <= res.estimates[0] + 0.01


def test_montecarlo_tests_fail_on_a_wrong_bracket():
    """The tests of _profile_tests reject a bracket shifted 10 % up; miss probability computed and <= 1e-6."""
    sampler = cx._laplace_sampler(2.0, 10)
    lo, hi = dpcore.PldAccountant().compose(dpcore.LaplaceMechanism(2.0), 10).delta_bracket(2.0, 1e-4)
    ge, le, _ = cx._profile_tests(sampler, (1.1 * lo, 1.1 * hi), 200_000, 2.0, 4e-7, 7, "shifted")
    assert not as_evidence(ge).holds
    assert miss_probability(ge, hi) <= 1e-6


def test_subsampled_montecarlo_holds_and_the_wrong_q_is_rejected():
    res = cx.subsampled_montecarlo(1.0, 0.1, 20, 0.5, 1e-5, n=100_000, seeds=(3, 4, 5))
    assert_sound(res)
    assert res.naive_epsilon > 5 * res.pld_epsilon
    symmetric = as_evidence(res.controls[1])  # the add direction does not attain the profile
    assert not symmetric.holds and symmetric.control_risk() <= 1e-7


def test_subsampled_montecarlo_fails_when_q_is_misreported():
    """Samples at q = 0.2 tested against the q = 0.1 bracket: the evidence fails (miss probability computed)."""
    truth = dpcore.PldAccountant().compose(cx._OneDirection(dpcore.SubsampledGaussianMechanism(1.0, 0.2), 0), 20)
    bracket = dpcore.PldAccountant().compose(dpcore.SubsampledGaussianMechanism(1.0, 0.1), 20).delta_bracket(0.5)
    sampler = cx._subsampled_sampler(1.0, 0.2, 20, 0)
    ge, le, _ = cx._profile_tests(sampler, bracket, 100_000, 0.5, 2e-7, 6, "q misreported")
    assert not as_evidence(le).holds
    assert miss_probability(le, truth.delta_bracket(0.5)[0]) <= 1e-6


def test_gaussian_bracket_holds_and_a_wrong_exact_answer_fails():
    assert_sound(cx.gaussian_bracket(2.0, (1, 10, 100), 1e-5))
    wrong = cx.gaussian_bracket(2.0, (1, 10), 1e-5, exact_epsilon=lambda s, k, d: dpcore.gaussian_epsilon(s, d))
    assert not all(holds(wrong.evidence))  # the one-release epsilon is below the bracket of 10


def test_dp_sgd_accounting_orders():
    res = cx.dp_sgd_accounting(1.1, 256 / 60000, (100, 1000), 1e-5)
    assert_sound(res)
    assert set(res.curves) >= {"PLD (upper end)", "naive: T x one-step epsilon"}


def test_conversion_reproduces_opacus_and_rejects_another_print():
    res = cx.conversion(1.1, 256 / 60000, 14062, 1e-5)
    assert_sound(res)
    assert res.pld[1] < 2.39 and res.improved < res.classical
    assert not all(holds(cx.conversion(1.1, 256 / 60000, 14062, 1e-5, printed=2.38).evidence))


def test_order_grid_holds_and_a_grid_with_the_optimum_is_no_control():
    res = cx.order_grid(1.1, 256 / 60000, 1000, 1e-5)
    assert_sound(res)
    fine = cx.order_grid(1.1, 256 / 60000, 1000, 1e-5, coarse=np.round(res.continuous_order, 3) + np.array([0.0]))
    assert any(holds(fine.controls))  # a grid holding the optimal order loses nothing


def test_replace_one_fourfold():
    res = cx.replace_one(2.0, 10, 1e-5, orders=[1.5, 2.0, 10.0])
    assert_sound(res)
    assert np.allclose(res.ratios, 4.0)


def test_kov_against_exact_randomised_response_and_theorems():
    # k = 1: the optimal composition of one eps0-DP mechanism at delta is randomised response's epsilon
    assert cx.kov_epsilon(1.0, 1, 1e-3) == pytest.approx(dpcore.RandomizedResponse(1.0).epsilon(1e-3), rel=1e-10)
    res = cx.composition_theorems(0.1, 100, 1e-5)
    assert_sound(res)
    assert res.basic == pytest.approx(10.0) and round(res.advanced, 2) == 5.85 and round(res.kov, 3) == 4.307
    assert round(res.laplace[1], 2) == 4.22


def test_laplace_exact_lies_in_the_grid_bracket_and_one_release_fewer_does_not():
    res = cx.laplace_exact(0.1, 100, 1e-5)
    assert_sound(res)
    assert res.grid[0] <= res.exact[0] <= res.exact[1] <= res.grid[1]
    assert 4.2203 < res.exact[0] <= res.exact[1] < 4.2204 and res.fewer[1] < res.grid[0]
    # on a wrong input the evidence fails: the grid bracket of 99 releases does not hold the exact 100
    wrong = dpcore.PldAccountant(closed_form=False).compose(dpcore.LaplaceMechanism(10.0), 99).epsilon_bracket(1e-5)
    assert not (wrong[0] <= res.exact[1] <= wrong[1])


def test_averaging_holds_and_the_seed_reading_fails():
    res = cx.averaging(0.5, (1, 4, 16), 1e-5, test_count=10, n=100_000, seed=9)
    assert_sound(res)
    assert res.sd[0] / res.sd[-1] == pytest.approx(4.0)
    # the variance control (b^2/k for 2 b^2/k) is two radii away: its miss is the test's alpha
    assert as_evidence(res.controls[-1]).control_risk() <= 4e-7


def test_averaging_evidence_fails_for_noise_weaker_than_claimed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Answers noised for eps0 = 0.6 but claimed at 0.5: the basic-composition ceiling k eps0 is broken."""
    weaker = dpcore.LaplaceMechanism.calibrate(0.6)
    monkeypatch.setattr(dpcore.LaplaceMechanism, "calibrate", staticmethod(lambda eps: weaker))
    res = cx.averaging(0.5, (1, 4), 1e-5, test_count=10, n=20_000, seed=9)
    assert not as_evidence(res.evidence[2]).holds  # max (upper end - k eps0) > 0


def test_pld_add_direction_of_the_subsampled_gaussian_brackets_the_exact_delta():
    """One step, eps = 0: the exact add-direction delta by quadrature lies in the PLD bracket of that direction.

    (It did not before dpcore.pld's add-direction partial mean was fixed: its bracket was [0.03391, 0.03445].)
    """
    s, q = 1.0, 0.1
    mech = dpcore.SubsampledGaussianMechanism(s, q)

    def gap(x: float) -> float:
        mix = (1 - q) * stats.norm.pdf(x, 0, s) + q * stats.norm.pdf(x, 1, s)
        return max(stats.norm.pdf(x, 0, s) - mix, 0.0)

    exact = integrate.quad(gap, -30, 30, points=[0.0, 0.5, 1.0], limit=500)[0]
    lo, hi = dpcore.PldAccountant().compose(cx._OneDirection(mech, 1), 1).delta_bracket(0.0, 1e-4)
    assert lo <= exact <= hi


def test_centred_rounding_brackets_the_binomial_answer_where_plain_rounding_is_biased():
    res = cx.centred_rounding(0.505, 2000, 0.01, 300.0)
    assert as_evidence(res.evidence[0]).holds and not as_evidence(res.controls[0]).holds
    assert res.rounded < 0.5 * res.exact  # both atoms rounded down by h/2: 2000 steps lose 10 in the loss
    # the control depends on its input: over 10 steps the same rounding moves the loss by only 0.05
    short = cx.centred_rounding(0.505, 10, 0.01, 2.0)
    assert as_evidence(short.evidence[0]).holds and as_evidence(short.controls[0]).holds


def test_centred_rounding_fails_without_the_mean_matching_shift(monkeypatch: pytest.MonkeyPatch) -> None:
    import dpcore.pld as pld
    import dpcore.pld_grid as pld_grid

    original = pld._discretise

    def unshifted(loss, h, tau):
        d = original(loss, h, tau)
        return pld_grid._Discrete(d.pmf, d.start, 0.0, d.tail)

    monkeypatch.setattr(pld, "_discretise", unshifted)
    # the biased mean-matched bracket now crosses the optimistic twin's certified lower end: the accountant
    # refuses the inconsistent bracket instead of returning it
    with pytest.raises(RuntimeError, match="inconsistent bracket"):
        cx.centred_rounding(0.505, 2000, 0.01, 300.0)
    # without the twin (it cannot always be built), the biased bracket misses the exact value
    monkeypatch.setattr(pld, "_optimistic_direction", lambda *args: None)
    res = cx.centred_rounding(0.505, 2000, 0.01, 300.0)
    assert not as_evidence(res.evidence[0]).holds


def test_fixed_size_sampling_is_above_poisson_and_the_quadrature_matches_the_binomial_sum():
    assert_sound(cx.fixed_size(1.1, 256 / 60000, 1000, 1e-5, orders=(2, 5, 16, 32)))
    # the quadrature at other = 0 is the Poisson curve; a wrong rate is caught by the same comparison
    wrong = cx.mixture_rdp([2, 8], 1.1, 0.02, 0.0) / cx._sgm_rdp_integer(np.array([2, 8]), 1.1, 0.01)
    assert np.all(np.abs(wrong - 1) > 1e-3)


def test_optimistic_twin_is_below_the_exact_answer_and_its_control_fails():
    res = cx.optimistic_twin(1.0, 10, 1e-5, (1e-2, 1e-3))
    assert_sound(res)
    assert res.lower[0] < res.lower[1] <= res.exact <= res.upper[1] < res.upper[0]


def test_optimistic_twin_evidence_fails_when_the_twin_is_not_lowered(monkeypatch: pytest.MonkeyPatch) -> None:
    import dpcore.pld as pld

    # the chord through the lattice values in place of the twin: its "lower" end is above the exact answer
    monkeypatch.setattr(pld, "_optimistic_dots", lambda loss, h, tau: (pld._connect_dots(loss, h, tau)[0], 0.0))
    res = cx.optimistic_twin(1.0, 10, 1e-5, (1e-2, 1e-3))
    assert not as_evidence(res.evidence[0]).holds
