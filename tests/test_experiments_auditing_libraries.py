"""dpbook.experiments.auditing_libraries: each experiment's evidence holds and its controls fail on the
chapter's inputs (small n), and the evidence fails on a wrong input far from the truth.

The libraries draw their own, unseeded randomness, so no assertion here may depend on a lucky stream:
"not refuted" assertions rest on the audit's validity (false alarm at most one minus its confidence,
1e-6 or less); "refuted" ones on a miss probability computed from the refuting event's rates (the
rate on input 0 bounded from a fresh batch at level 1e-8, the rate on input 1 exactly 0), which is
asserted small before the refutation is. The white-box checks are deterministic.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from dpbook import reference as mpref
from dpbook.evidence import as_evidence
from dpbook.experiments import Experiment
from dpbook.experiments import auditing_libraries as X
from dpcore import dyadic_valuation

pytest.importorskip("diffprivlib")
pytest.importorskip("opendp")
pytest.importorskip("pydp")


def holds(exp: Experiment) -> bool:
    return all(as_evidence(e).holds for e in exp.evidence)


def controls_fail(exp: Experiment) -> bool:
    return all(not as_evidence(c).holds for c in exp.controls)


def budget(exp: Experiment) -> float:
    return sum(as_evidence(e).alpha or 0.0 for e in exp.evidence) + sum(
        as_evidence(c).control_risk() for c in exp.controls
    )


# --------------------------------------------------------------------------- black-box audits
@pytest.fixture(scope="module")
def audits() -> dict[tuple[str, str], X.LibraryAudit]:
    plan = [
        ("diffprivlib", "laplace", 30_000, 1 - 1e-6),
        ("diffprivlib", "gaussian-analytic", 100_000, 1 - 1e-6),
        ("opendp", "laplace", 8_000, 1 - 2.5e-7),
        ("opendp", "gaussian", 5_000, 1 - 2.5e-7),
        ("python-dp", "laplace", 20_000, 1 - 2.5e-7),
        ("python-dp", "gaussian", 150_000, 1 - 1e-6),
    ]
    return {(lib, m): X.library_audit(lib, m, n, confidence=c, seed=i) for i, (lib, m, n, c) in enumerate(plan)}


@pytest.fixture(scope="module")
def batches() -> dict[tuple[str, str], X.RateBatch]:
    keys = [
        ("diffprivlib", "laplace"),
        ("diffprivlib", "gaussian-analytic"),
        ("python-dp", "laplace"),
        ("python-dp", "gaussian"),
    ]
    return {k: X.rate_batch(*k, 10_000) for k in keys}


def test_the_chapter_experiments_hold_and_their_controls_fail(audits, batches) -> None:
    """The chapter's three audit records at smaller sizes: budgets within 1e-6 (so each assertion below
    fails by chance with probability at most 1e-6, whatever the libraries' streams)."""
    dpl = [("diffprivlib", "laplace"), ("diffprivlib", "gaussian-analytic")]
    ref = X.refuted([audits[k] for k in dpl], [batches[k] for k in dpl], audits[("opendp", "laplace")])
    assert budget(ref) <= 1e-6
    assert holds(ref) and controls_fail(ref)
    odp = X.not_refuted(
        [audits[("opendp", "laplace")], audits[("opendp", "gaussian")]],
        audits[("diffprivlib", "laplace")],
        batches[("diffprivlib", "laplace")],
    )
    assert budget(odp) <= 1e-6 and holds(odp) and controls_fail(odp)
    keys = [("python-dp", "laplace"), ("python-dp", "gaussian")]
    pydp = X.python_dp(*(audits[k] for k in keys), *(batches[k] for k in keys))
    assert budget(pydp) <= 1e-6 and holds(pydp) and controls_fail(pydp)
    table = X.audit_table(list(audits.values()))
    assert table.count("**refuted**") == 3 and "not multiples of 2^-53" in table


def test_refutation_miss_is_large_when_the_claim_is_not_violated(audits, batches) -> None:
    """At a claim above what the samples can certify (eps 30 with 30,000 samples: the perfect event's bound
    is about 7.5) the miss bound must be near 1, and for OpenDP (no kept event of the refuting kind) it is 1."""
    key = ("diffprivlib", "laplace")
    assert X.refutation_miss(audits[key].representation, batches[key], 30.0, 1e-8) > 0.99
    opendp = audits[("opendp", "laplace")].representation
    assert X.refutation_miss(opendp, batches[key], 5.0, 1e-8) == 1.0


def test_wrong_inputs_fail() -> None:
    """Evidence that must fail: a library that samples exactly checked as refuted (bound > 5: a chance of at
    most 2.5e-7 if OpenDP keeps its claim), and a fact of snapping on a batch of unsnapped outputs."""
    a = X.library_audit("opendp", "laplace", 4_000, confidence=1 - 2.5e-7)
    b = X.rate_batch("python-dp", "gaussian", 2_000)
    r = X.refuted([a], [b], a)
    assert not as_evidence(r.evidence[0]).holds
    assert not X.ieee_multiple_fact(b, -40, side=0).holds
    assert X.ieee_multiple_fact(b).holds  # 1 (+) v is a multiple of 2^-53: IEEE arithmetic, no chance involved


def test_rate_batch_valuations_and_rate_bound() -> None:
    batch = X.RateBatch("toy", dyadic_valuation(np.array([0.1, 0.5, 2.0**-60, 1.0])), np.zeros(4, dtype=np.int64))
    assert Fraction(0.1).denominator == 2**55 and Fraction(0.1).numerator % 2 == 1
    assert batch.valuations_0.tolist() == [-55, -1, -60, 0]
    lo = batch.rate_lower(-53, 0.05)  # 2 of 4 below -53
    assert 0 < lo < 0.5


# --------------------------------------------------------------------------- white-box calibrators
def test_exact_delta_and_sigma_agree_with_the_books_reference() -> None:
    """Two independent mpmath codes (this module, dpbook.reference) agree to 1e-35 relative."""
    for s, e in [(1.0, 1.0), (7.3, 0.2), (0.9, 10.0), (2000.0, 0.01)]:
        a, b = X.exact_delta(s, e), mpref.gaussian_delta(s, e)
        with mp.workdps(50):
            assert abs(a / b - 1) < 1e-35
    for e, d in [(1.0, 1e-5), (0.05, 1e-100), (10.0, 1e-200)]:
        s1, s2 = X.exact_sigma(e, d), mpref.analytic_sigma(e, d)
        with mp.workdps(50):
            assert abs(s1 / s2 - 1) < 1e-35
            assert abs(X.exact_delta(s1, e) / mp.mpf(d) - 1) < 1e-30


def test_exact_sigma_scales_with_sensitivity() -> None:
    with mp.workdps(50):
        assert abs(X.exact_sigma(1.0, 1e-5, 3.0) / (3 * X.exact_sigma(1.0, 1e-5)) - 1) < 1e-35


def test_calibrator_check_on_the_grid() -> None:
    grid = X.calibrator_grid()
    assert len(grid) == 80 and min(d for _, d in grid) == 1e-200
    chk = X.check_calibrators(grid, X.calibrators())
    assert holds(chk) and controls_fail(chk) and budget(chk) == 0.0
    names = list(chk.rows)
    assert chk.material[names[0]] >= 40 and chk.material[names[1]] >= 40
    assert "%" in X.violation_table(chk, names[0]) and "·" in X.under_noise_grid(chk, names[0])


def test_calibrator_check_fails_on_a_wrong_calibrator() -> None:
    """A calibrator returning 0.9 of the exact sigma violates everywhere; one returning twice it nowhere. As the
    reference, the first fails the evidence; as the other, the second fails it."""
    grid = [(1.0, 1e-5), (0.5, 1e-30)]
    exact = {pt: float(X.exact_sigma(*pt)) for pt in grid}
    low = {"low": lambda e, d: 0.9 * exact[(e, d)], "high": lambda e, d: 2.0 * exact[(e, d)]}
    bad_reference = X.check_calibrators(grid, low, reference="low")
    assert not holds(bad_reference)
    safe_other = X.check_calibrators(grid, low, reference="high")
    assert holds(safe_other) and controls_fail(safe_other)
    assert safe_other.violated["high"] == 0 and safe_other.material["low"] == 2
    swapped = X.check_calibrators(grid, {"a": low["high"], "ref": low["high"]}, reference="ref")
    assert not holds(swapped)  # "a" meets every point: "a violates somewhere" fails
    assert math.isfinite(float(exact[(1.0, 1e-5)]))
