"""Tests of dpbook.experiments.dp_definition: each experiment holds on the chapter's inputs and fails on wrong ones.

Monte Carlo experiments run with small ``n``; their tests keep the chapter's
false-alarm budgets (at most 1e-6 each), so the assertions that they hold are
valid for any seed. The assertions that they *fail* use wrong inputs whose
failure is deterministic (an exact comparison, not a sampled one).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpbook.evidence import as_evidence
from dpbook.experiments import Experiment
from dpbook.experiments import dp_definition as ex
from dpcore.attacks import seed_004_neighbours


def holds(exp: Experiment) -> bool:
    """Every piece of evidence holds and every control fails."""
    return all(as_evidence(e).holds for e in exp.evidence) and not any(as_evidence(c).holds for c in exp.controls)


def failing(exp: Experiment) -> list[str]:
    return [as_evidence(e).what for e in exp.evidence if not as_evidence(e).holds]


@pytest.fixture(scope="module")
def tables():
    d1, d2 = seed_004_neighbours()
    return d1, d2, d1.with_value("Ross", 0).with_value("Chandler", 0)


def test_differencing_reads_the_bit_and_fails_on_identical_tables(tables):
    d1, d2, _ = tables
    assert holds(ex.differencing(d1, d2))
    assert len(ex.differencing(d1, d2).controls) == 2
    assert failing(ex.differencing(d1, d1))  # Chandler's bit is 1 in both: the claim "0 in D2" fails


def test_neighbour_quantifier_measures_eps_and_two_eps(tables):
    d1, d2, d3 = tables
    res = ex.neighbour_quantifier(d1, d2, d3, epsilon=0.5)
    assert holds(res)
    assert res.one_row == pytest.approx(0.5, rel=1e-12) and res.two_rows == pytest.approx(1.0, rel=1e-12)
    assert failing(ex.neighbour_quantifier(d1, d3, d2, epsilon=0.5))  # pairs swapped


def test_leak_mechanism_is_zero_delta_dp_exactly():
    res = ex.leak_mechanism(Fraction(1, 7))
    assert holds(res)
    assert len(res.evidence) == 2 and len(res.controls) == 1


def test_optimal_test_quadrature_catches_a_wrong_formula():
    right = ex.optimal_test_quadrature(lambda d, b: 1 - math.exp(-d / (2 * b)) / 2)
    wrong = ex.optimal_test_quadrature(lambda d, b: 1 - math.exp(-d / b) / 2)
    assert all(c.holds for c in right)
    assert not all(c.holds for c in wrong[0::2]) and all(c.holds for c in wrong[1::2])


def test_attack_game_small_n_and_wrong_sensitivity(tables):
    d1, d2, _ = tables
    a1, a2 = ex.q4_q5(d1.values), ex.q4_q5(d2.values)
    res = ex.attack_game(a1, a2, 2.0, [0.5, 1.0], n=4000, seed=11)
    assert all(as_evidence(e).holds for e in res.evidence)  # false alarm <= 1e-6
    assert len(res.rows) == 2 and res.rows[1][0] == 1.0
    assert len(res.controls) == 2  # the half-noise mechanism's games, one per epsilon
    # calibrated to sensitivity 1, the exact success is no longer 1 - e^(-eps/4)/2
    assert failing(ex.attack_game(a1, a2, 1.0, [1.0], n=100, seed=11))


def test_rappor_epsilons_from_its_flip_probabilities():
    res = ex.rappor()
    assert holds(res)
    assert res.mass_on_bits == 1
    assert res.eps_permanent == pytest.approx(4 * math.log(3), rel=1e-12)  # f = 1/2, h = 2
    # q* = 11/16, p* = 9/16 for f = p = 1/2, q = 3/4: eps_1 = 2 log(11 * 7 / (9 * 5))
    assert res.eps_one_report == pytest.approx(2 * math.log(77 / 45), rel=1e-12)
    assert holds(ex.rappor(bits=6, hashes=3, f=Fraction(1, 4), p=Fraction(1, 4), q=Fraction(1, 2)))


def test_k_answers_rejects_the_single_answer_bound():
    res = ex.k_answers(10, 0.2, n=200_000, seed=2)
    assert holds(res) and res.loss == pytest.approx(2.0, rel=1e-12)
    assert sum(as_evidence(e).alpha or 0.0 for e in res.evidence) <= 1e-6


def test_sensitivity_table_matches_closed_forms_and_factor_two():
    table = ex.sensitivity_table()
    assert holds(table)
    by_name = {row[0]: row[1:3] for row in table.table}
    assert by_name["count"] == (1.0, 0.0)
    assert by_name["histogram, 4 bins (L1)"] == (1.0, 2.0)
    assert "query" in str(table).splitlines()[0]
    ratios = ex.factor_two(table, queries=5, seed=3)
    assert holds(ratios) and len(ratios.ratios) == 5


def test_histogram_pairs_counts():
    res = ex.histogram_pairs(types=2, max_size=3)
    assert holds(res)
    ar, at_1, rep, at_2 = res.counts
    assert ar == at_1 and rep == at_2 and ar > 0
    assert "add/remove pairs" in str(res)


def test_dp_sgd_clipping_sensitivities():
    res = ex.dp_sgd_clipping(clip=2.0, dim=4, epsilon=1.0, delta=1e-5)
    assert holds(res)
    assert res.l1 == pytest.approx(4.0) and res.l2 == pytest.approx(2.0)
    assert res.laplace_log_ratio == pytest.approx(2.0, rel=1e-9)  # sqrt(d) eps, d = 4


def test_one_noise_vector():
    res = ex.one_noise_vector(1.0, n=1000, seed=5)
    assert holds(res)
    assert res.frequencies == (1.0, 0.0)


def test_majority_vote_exact_success_is_the_binomial_sum(tables):
    d1, d2, _ = tables
    res = ex.majority_vote(float(d1.partial_sum(5)), float(d2.partial_sum(5)), 5, 0.4, n=2000, seed=1)
    r = 1 - 0.5 * math.exp(-0.2)
    exact = sum(math.comb(5, j) * r**j * (1 - r) ** (5 - j) for j in range(3, 6))
    assert res.exact == pytest.approx(exact, rel=1e-13)
    assert all(as_evidence(e).holds for e in res.evidence)


def test_realistic_cohort_and_release_errors():
    cohort = ex.realistic_cohort(800)
    assert cohort.histogram.sum() == 800 and cohort.labels[-1] == "80+"
    assert 0 < cohort.count < 800
    res = ex.release_errors(cohort, 1.0, 1.0, [0.5, 1.0], n=2000, seed=3)
    assert all(as_evidence(e).holds for e in res.evidence)
    assert len(res.count_errors) == len(res.histogram_errors) == 2
    assert failing(ex.release_errors(cohort, 2.0, 1.0, [1.0], n=200, seed=3))  # the count's sensitivity is 1


def test_rappor_attribute_inference_membership_and_gap_hold_at_small_n():
    for res in (
        ex.attribute_inference(0.5, n=3000, seed=1),
        ex.membership(n=3000, seed=1),
        ex.output_gap(n=3000, seed=1),
    ):
        assert all(as_evidence(e).holds for e in res.evidence)  # each at false alarm <= 1e-6


def test_correct_is_an_event_of_bits():
    np.testing.assert_array_equal(ex.correct(np.array([1.0, 0.0, 1.0])), [True, False, True])
