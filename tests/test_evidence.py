"""dpbook.evidence: each kind of evidence computes its verdict from numbers, and refuses non-evidence."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

import dpcore
from dpbook.evidence import BOOK_ALPHA, Close, Compare, Equal, Fact, Test, Within, as_evidence


@pytest.mark.parametrize(
    ("op", "value", "bound", "holds"),
    [
        ("<", 1, 2, True),
        ("<", 2, 2, False),
        ("<=", 2, 2, True),
        ("==", 2, 2, True),
        ("==", 2, 2.0000001, False),
        (">=", 2, 3, False),
        (">", 3, 2, True),
        ("<=", -math.inf, 0, True),
        ("<=", 1, math.inf, True),
    ],
)
def test_compare(op: str, value: float, bound: float, holds: bool) -> None:
    assert Compare("c", value, op, bound).holds is holds


def test_close_and_within() -> None:
    assert Close("c", 1.0, 1.0 + 1e-13, rtol=1e-12).holds
    assert not Close("c", 1.0, 1.001, rtol=1e-6).holds
    assert Close("c", 0.0, 1e-20, atol=1e-15).holds
    assert not Close("c", 1.0, 1.1).holds  # zero tolerance: only exact equality
    assert Within("w", 0.5, 0, 1).holds and not Within("w", 1.5, 0, 1).holds
    assert Within("w", 3.0, 0, math.inf).holds


@pytest.mark.parametrize("bad", [float("nan"), "1.0", True, np.bool_(True), 1 + 2j, None, [1.0]])
def test_numbers_that_are_not_evidence_are_refused(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        Compare("c", bad, "<=", 1.0)
    with pytest.raises((TypeError, ValueError)):
        Close("c", 1.0, bad, rtol=1e-9)


def test_refusals() -> None:
    with pytest.raises(ValueError):
        Compare("c", 1, "=<", 2)  # unknown operator
    with pytest.raises(ValueError):
        Within("w", 1, 2, 0)  # empty interval
    with pytest.raises(ValueError):
        Close("c", 1, 1, rtol=-1)
    with pytest.raises(ValueError):
        Compare("", 1, "<", 2)  # no description
    with pytest.raises(ValueError):
        Compare("mc", 1, "<", 2, kind="monte-carlo")  # Monte Carlo evidence states its alpha
    with pytest.raises(ValueError):
        Compare("c", 1, "<", 2, alpha=1e-6)  # only Monte Carlo evidence has one
    with pytest.raises(ValueError):
        Compare("c", 1, "<", 2, kind="vibes")
    for not_a_bool in ("False", "True", 0, 1, 1.0, None, dpcore):
        with pytest.raises(TypeError):
            Fact("f", not_a_bool)
    assert Fact("f", np.bool_(True)).holds and not Fact("f", False).holds
    for item in (True, "passed", 1.0, None):
        with pytest.raises(TypeError):
            as_evidence(item)


def test_symbolic_equality_under_assumptions() -> None:
    x = sp.Symbol("x", real=True)
    p = sp.Symbol("p", positive=True)
    assert not Equal("log(x^2) = 2 log x, x real", sp.log(x**2), 2 * sp.log(x)).holds
    assert Equal("log(p^2) = 2 log p, p > 0", sp.log(p**2), 2 * sp.log(p)).holds
    e = Equal("wrong", 2 * p**2, p**2)
    assert e.kind == "symbolic" and not e.holds and "is not shown equal to" in e.describe()


def test_monte_carlo_results_are_read_by_their_numbers() -> None:
    res = dpcore.check_probability(lambda g, n: g.random(n), lambda u: u < 0.25, 10_000, 0.25, rng=3)
    t = as_evidence(res)
    assert isinstance(t, Test) and t.kind == "monte-carlo" and t.alpha == res.alpha <= BOOK_ALPHA
    assert t.holds is res.passed is True
    # a result whose 'passed' contradicts its own interval is a fault in the test: refused
    import dataclasses

    forged = dataclasses.replace(res, claimed=0.9)
    with pytest.raises(ValueError, match="numbers say"):
        _ = as_evidence(forged).holds
    cdf = dpcore.check_cdf(lambda g, n: g.random(n), 5_000, lambda v: np.clip(v, 0, 1), rng=4)
    assert as_evidence(cdf).holds is cdf.passed is True
    wrong_cdf = dpcore.check_cdf(lambda g, n: g.random(n) ** 2, 5_000, lambda v: np.clip(v, 0, 1), rng=4)
    assert as_evidence(wrong_cdf).holds is wrong_cdf.passed is False


def test_rejected_counts_its_miss_probability() -> None:
    """A rejected wrong claim holds, with alpha = its computed miss probability."""
    import dpcore
    from dpbook.evidence import Rejected, miss_probability

    res = dpcore.probability_result(3000, 10_000, 0.2, alpha=1e-7)  # truth 0.3, claim 0.2
    ev = Rejected("P = 0.2", result=res, true_value=0.3)
    assert ev.holds and ev.kind == "monte-carlo"
    assert 0 < ev.alpha < 1e-6
    assert ev.alpha == max(dpcore.probability_acceptance(10_000, 0.3, 0.2, alpha=1e-7), 1e-300)
    # a claim too close to the truth to be rejected reliably carries a large miss probability
    near = dpcore.probability_result(300, 1000, 0.29, alpha=1e-7)
    assert miss_probability(near, 0.3) > 0.5
    # fixed-radius test: a gap under twice the radius gives no guarantee (alpha = 1)
    m = dpcore.check_mean(lambda g, n: g.normal(0, 1, n), 10_000, 0.01, variance_bound=1, rng=1)
    assert Rejected("mean", result=m, true_value=0.0).alpha == 1.0
    # an accepted claim is not a rejection
    ok = dpcore.probability_result(300, 1000, 0.3, alpha=1e-7)
    assert not Rejected("P = 0.3", result=ok, true_value=0.25).holds


def test_non_evidence_is_a_value_error_too() -> None:
    # issue 15: bad input is a ValueError throughout; NotEvidence is also the TypeError it was
    from dpbook.evidence import NotEvidence

    for item in ("False", float("nan"), True, None):
        with pytest.raises(ValueError, match="evidence"):
            as_evidence(item)
        with pytest.raises(NotEvidence):
            as_evidence(item)
    with pytest.raises(ValueError, match="Fact"):
        Fact("f", "False")
    with pytest.raises(ValueError, match="value"):
        Compare("c", "1.0", "<=", 2.0)


def test_a_result_needs_a_real_bool_verdict() -> None:
    import dataclasses

    res = dpcore.probability_result(50, 100, 0.5)
    assert as_evidence(res).holds
    for passed in ("False", "True", 1, None, float("nan")):  # bool('False') is True: never read as a verdict
        with pytest.raises(ValueError, match="passed"):
            as_evidence(dataclasses.replace(res, passed=passed))
    assert as_evidence(dataclasses.replace(res, passed=np.bool_(True))).holds  # numpy bools are bools
