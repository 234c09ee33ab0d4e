"""The seed-004 table, the differencing attack, the optimal test and its success probability."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import dpcore
from dpbook.flawed import laplace_stray_factor_two
from dpcore import laplace_mechanism
from dpcore.attacks import (
    SEED_004_TABLE,
    MedicalTable,
    attack_trial_sampler,
    attribute_inference_sampler,
    differencing_attack,
    dp_test_success_bound,
    laplace_log_likelihood_ratio,
    laplace_optimal_test_success,
    likelihood_ratio_test,
    optimal_test_success_numeric,
    seed_004_neighbours,
)
from dpcore.mechanisms import randomized_response
from dpcore.montecarlo import check_probability


def test_seed_table_and_queries():
    d1, d2 = seed_004_neighbours()
    assert d1.names == ("Ross", "Monica", "Joey", "Phoebe", "Chandler")
    assert d1.diabetes == (1, 1, 0, 0, 1) and d2.diabetes == (1, 1, 0, 0, 0)
    assert (d1.partial_sum(5), d1.partial_sum(4)) == (3, 2)  # the seed's numbers
    assert list(d1.partial_sums()) == [d1.partial_sum(i) for i in range(1, 6)]
    assert d1.partial_sum(0) == 0
    assert differencing_attack(d1, "Chandler") == 1 and differencing_attack(d2, "Chandler") == 0
    for name in d1.names:  # the attack reads every row exactly
        assert differencing_attack(d1, name) == d1.diabetes[d1.row_of(name) - 1]
    assert len(d1) == 5 and SEED_004_TABLE is d1


@pytest.mark.parametrize(
    "names,bits,msg",
    [
        ((), (), "at least one row"),
        (("a", "b"), (1,), "same length"),
        (("a", "a"), (1, 0), "distinct"),
        (("a", ""), (1, 0), "non-empty"),
        (("a",), (2,), "0 or 1"),
        (("a",), (True,), "0 or 1"),
    ],
)
def test_table_validation(names, bits, msg):
    with pytest.raises(ValueError, match=msg):
        MedicalTable(names, bits)


def test_table_lookups_validate():
    with pytest.raises(ValueError, match="not in the table"):
        SEED_004_TABLE.row_of("Rachel")
    with pytest.raises(ValueError, match="at most the number of rows"):
        SEED_004_TABLE.partial_sum(6)
    with pytest.raises(ValueError, match="i must be"):
        SEED_004_TABLE.partial_sum(-1)
    with pytest.raises(ValueError, match="0 or 1"):
        SEED_004_TABLE.with_value("Joey", 3)


def test_bound_values_and_validation():
    for eps in (0.01, 0.5, 1.0, 5.0, 800.0):
        expected = mp.e**eps / (1 + mp.e**eps)
        assert math.isclose(dp_test_success_bound(eps), float(expected), rel_tol=1e-15)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="epsilon"):
            dp_test_success_bound(bad)


@pytest.mark.parametrize("shift,b", [(1.0, 1.0), (1.0, 0.1), (2.0, 5.0), (0.3, 2.0)])
def test_closed_form_against_mpmath_and_quad(shift, b):
    mp.mp.dps = 30
    p0 = lambda z: mp.exp(-abs(z) / b) / (2 * b)  # noqa: E731
    p1 = lambda z: mp.exp(-abs(z - shift) / b) / (2 * b)  # noqa: E731
    ref = mp.quad(lambda z: max(p0(z), p1(z)), [-mp.inf, 0, shift / 2, shift, mp.inf]) / 2
    exact = laplace_optimal_test_success([0.0, 7.0], [shift, 7.0], b)
    assert math.isclose(exact, float(ref), rel_tol=1e-14)
    num = optimal_test_success_numeric(
        lambda z: math.exp(-abs(z) / b) / (2 * b), lambda z: math.exp(-abs(z - shift) / b) / (2 * b), [0.0, shift]
    )
    assert math.isclose(num, float(ref), rel_tol=1e-9)


def test_closed_form_refuses_several_differences():
    with pytest.raises(ValueError, match="differ in 2 coordinates"):
        laplace_optimal_test_success([0, 0], [1, 1], 1.0)
    with pytest.raises(ValueError, match="equal length"):
        laplace_optimal_test_success([0, 0], [1], 1.0)
    with pytest.raises(ValueError, match="scale"):
        laplace_optimal_test_success([0], [1], 0.0)


def test_llr_and_test():
    z = np.array([[0.0], [1.0], [0.5], [-3.0], [4.0]])
    llr = laplace_log_likelihood_ratio(z, [0.0], [1.0], 0.5)
    assert np.allclose(llr, [2.0, -2.0, 0.0, 2.0, -2.0])  # capped at +-shift/b outside [0, 1]
    decision = likelihood_ratio_test(z, [0.0], [1.0], 0.5, rng=1)
    assert decision[0] and not decision[1] and decision[3] and not decision[4]
    with pytest.raises(ValueError, match="last axis"):
        laplace_log_likelihood_ratio(np.zeros((3, 2)), [0.0], [1.0], 1.0)
    with pytest.raises(ValueError, match="finite"):
        laplace_log_likelihood_ratio([np.nan], [0.0], [1.0], 1.0)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_monte_carlo_success_matches_exact_and_respects_bound(eps):
    d1, d2 = seed_004_neighbours()
    a1, a2 = d1.partial_sums(), d2.partial_sums()
    sens = 5.0  # L1 sensitivity of (Q_1..Q_5) under replacement

    def mech(v, g):
        return laplace_mechanism(v, sens, eps, g)

    exact = laplace_optimal_test_success(a1, a2, sens / eps)
    res = check_probability(attack_trial_sampler(a1, a2, mech), lambda x: x == 1, 200_000, exact, rng=11)
    assert res.passed
    bound = check_probability(
        attack_trial_sampler(a1, a2, mech),
        lambda x: x == 1,
        200_000,
        dp_test_success_bound(eps),
        alternative="less",
        rng=12,
    )
    assert bound.passed


def test_half_sensitivity_breaks_the_bound():
    # a vector query (Q_4, Q_5) has L1 sensitivity 2; noise for sensitivity 1 per answer breaks eps
    d1, d2 = seed_004_neighbours()
    a1, a2 = [d1.partial_sum(5)], [d2.partial_sum(5)]
    eps = 1.0

    def mech(v, g):
        return laplace_stray_factor_two(v, 1.0, eps, g)

    res = check_probability(
        attack_trial_sampler(a1, a2, mech),
        lambda x: x == 1,
        200_000,
        dp_test_success_bound(eps),
        alternative="less",
        rng=13,
    )
    assert not res.passed
    assert math.isclose(laplace_optimal_test_success(a1, a2, 0.5), 1 - 0.5 * math.exp(-1.0))


def test_randomized_response_attains_bound():
    eps = 1.0
    bits = np.ones(400_000, dtype=int)
    reports = randomized_response(bits, eps, rng=5)
    hits = int((reports == bits).sum())
    from dpcore.montecarlo import probability_result

    assert probability_result(hits, bits.size, dp_test_success_bound(eps)).passed
    assert not probability_result(hits, bits.size, laplace_optimal_test_success([0], [1], 1 / eps)).passed
    with pytest.raises(ValueError, match="0 or 1"):
        randomized_response([0, 2], 1.0)


def test_attribute_inference_population_vs_individual():
    eps = 0.5
    pop = check_probability(
        attribute_inference_sampler(900, 100, eps, 0.9),
        lambda x: x == 1,
        100_000,
        dp_test_success_bound(eps),
        alternative="less",
        rng=21,
    )
    assert not pop.passed and pop.estimate > 0.85  # the population reveals the attribute
    ind = check_probability(
        attribute_inference_sampler(900, 100, eps, 0.5),
        lambda x: x == 1,
        100_000,
        dp_test_success_bound(eps),
        alternative="less",
        rng=22,
    )
    assert ind.passed  # the individual's own record does not
    with pytest.raises(ValueError, match="target_probability"):
        attribute_inference_sampler(1, 1, 1.0, 1.0)
    with pytest.raises(ValueError, match="at least one other"):
        attribute_inference_sampler(0, 0, 1.0, 0.5)


def test_sampler_checks_mechanism_shape():
    s = attack_trial_sampler([0.0], [1.0], lambda v, g: np.zeros(3))
    with pytest.raises(ValueError, match="mechanism must return shape"):
        s(np.random.default_rng(0), 5)


# --------------------------------------------------------------------------- issue 15


def test_issue15_numeric_optimal_test_refuses_missed_mass_and_bad_densities():
    """breakpoints=(50,) gave 2e-90 (truth Phi(1/2) = 0.6915); zero or doubled densities gave 0 or 1.095."""
    from scipy import stats

    p0, p1 = stats.norm(0, 1).pdf, stats.norm(1, 1).pdf
    assert dpcore.optimal_test_success_numeric(p0, p1) == pytest.approx(stats.norm.cdf(0.5), rel=1e-10)
    with pytest.raises(ValueError, match="^pdf_0 integrates to"):
        dpcore.optimal_test_success_numeric(p0, p1, breakpoints=(50,))
    with pytest.raises(ValueError, match="^pdf_0 integrates to 0"):
        dpcore.optimal_test_success_numeric(lambda z: 0.0, p1)
    with pytest.raises(ValueError, match="^pdf_1 integrates to 2"):
        dpcore.optimal_test_success_numeric(p0, lambda z: 2 * p1(z))
    with pytest.raises(ValueError, match="finite and >= 0"):
        dpcore.optimal_test_success_numeric(p0, lambda z: -p1(z))
