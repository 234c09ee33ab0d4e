"""dpbook.experiments.float_sums: the replicated summations match the libraries, the chapter's exact records
hold and their controls fail, wrong inputs fail the evidence, and the through-the-noise refutation keeps its
budget.

Everything but :func:`distinguish_sum` is deterministic arithmetic (no random stream). The refutation's
assertions rest on a computed miss probability (its event's rates bounded from an independent batch) and on
the event-ratio test's validity, so each fails by chance with probability at most 1e-6 whatever the stream.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dpbook.evidence import as_evidence
from dpbook.experiments import Experiment
from dpbook.experiments import float_sums as F

pytest.importorskip("diffprivlib")
pytest.importorskip("opendp")
pytest.importorskip("pydp")

VIOLATED = ["diffprivlib tools.sum", "diffprivlib tools.mean"]
RESPECTED = ["OpenDP make_sum", "OpenDP checked sum, Sequential", "python-dp BoundedSum"]


def holds(exp: Experiment) -> bool:
    return all(as_evidence(e).holds for e in exp.evidence)


def controls_fail(exp: Experiment) -> bool:
    return all(not as_evidence(c).holds for c in exp.controls)


def budget(exp: Experiment) -> float:
    return sum(as_evidence(e).alpha or 0.0 for e in exp.evidence) + sum(
        as_evidence(c).control_risk() for c in exp.controls
    )


@pytest.fixture(scope="module")
def attacks() -> list[F.SumAttack]:
    return F.sum_attacks()


def test_weyl_dataset_is_fixed_and_within_bounds() -> None:
    a = F.weyl_dataset(1000, 2.0, 3.0, 0.25)
    assert np.array_equal(a, F.weyl_dataset(1000, 2.0, 3.0, 0.25))
    assert set(np.unique(a).tolist()) == {2.0, 3.0}
    assert 240 <= np.count_nonzero(a == 3.0) <= 260  # Weyl: the share of upper records is the density


def test_exact_sum_is_exact() -> None:
    assert F.exact_sum([0.1, 0.2]) == Fraction(0.1) + Fraction(0.2)
    assert F.exact_sum([0.1, 0.2]) != Fraction(0.1 + 0.2)
    assert F.exact_sum([2.0**53, 1.0, 1.0]) == 2**53 + 2  # while the sequential float sum is 2**53


def test_replicated_summations() -> None:
    """numpy_rows is np.sum; halving_rows is OpenDP's Pairwise sum and sequential_rows its Sequential sum
    (on arrays where the three orders give different results); a sequential sum absorbs small records."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    rng = np.random.default_rng(1)
    differ = 0
    for n in (3, 17, 130, 301):
        x = rng.random(n) * 2.0**50 + rng.random(n)
        rows = x[None, :]
        assert F.numpy_rows(rows)[0] == np.sum(x)
        pw = dp.t.make_sized_bounded_float_checked_sum(n, (0.0, 2.0**51))
        sq = dp.t.make_sized_bounded_float_checked_sum(n, (0.0, 2.0**51), S="Sequential<f64>")
        assert F.halving_rows(rows)[0] == pw(x.tolist())
        assert F.sequential_rows(rows)[0] == sq(x.tolist())
        differ += F.halving_rows(rows)[0] != F.sequential_rows(rows)[0]
    assert differ >= 1
    assert F.sequential_rows(np.array([[2.0**53, 1.0, 1.0]]))[0] == 2.0**53


def test_search_neighbours_small() -> None:
    """[2^52, 2^52 + 1], two records, sequential: (2^52 + 1) + 2^52 rounds to 2^53 (a tie, to even), and
    (2^52 + 1) + (2^52 + 1) = 2^53 + 2 exactly: one record changed by 1 moves the float sum by 2."""
    lo, hi = 2.0**52, 2.0**52 + 1
    nb = F.search_neighbours(F.sequential_rows, "change", lower=lo, upper=hi, n=2, densities=[0.5])
    gap = abs(F.exact_sum(nb.d) - F.exact_sum(nb.d_prime))
    assert gap == 1
    assert abs(F.sequential_rows(nb.d[None, :])[0] - F.sequential_rows(nb.d_prime[None, :])[0]) == 2.0
    add = F.search_neighbours(F.sequential_rows, "add", lower=lo, upper=hi, n=2, densities=[0.5])
    assert add.d_prime.size == 3 and add.relation == "add"
    with pytest.raises(ValueError):
        F.search_neighbours(F.sequential_rows, "swap")


def test_equal_sum_neighbours() -> None:
    nb = F.equal_sum_neighbours()
    assert abs(F.exact_sum(nb.d) - F.exact_sum(nb.d_prime)) == 1
    assert np.sum(nb.d) == np.sum(nb.d_prime)
    with pytest.raises(ValueError):  # exact summation: every change moves the sum
        F.equal_sum_neighbours(lambda x: np.array([float(F.exact_sum(r) * 2**10) for r in x]), n=16)


def test_the_chapter_record_holds_and_its_controls_fail(attacks) -> None:
    chk = F.check_sum_attacks(attacks, violated=VIOLATED, respected=RESPECTED)
    assert holds(chk) and controls_fail(chk) and budget(chk) == 0.0
    by = {f"{a.library} {a.function}": a for a in attacks}
    assert by["diffprivlib tools.sum"].ratio == 128.0 and by["diffprivlib tools.mean"].ratio == 128.0
    assert by["OpenDP make_sum"].declared > 1000 and by["OpenDP make_sum"].realised == 128
    assert by["python-dp BoundedSum"].realised == 2**48  # one less than the exact 2^48 + 1
    table = F.sum_attack_table(attacks)
    assert table.count("**violated**") == 2 and table.count("respected") == 3


def test_wrong_verdicts_fail(attacks) -> None:
    """diffprivlib called 'respected' and OpenDP 'violated': the evidence fails; a ratio demanded above 128
    fails too."""
    swapped = F.check_sum_attacks(attacks, violated=["OpenDP make_sum"], respected=["diffprivlib tools.sum"])
    assert not holds(swapped)
    greedy = F.check_sum_attacks(attacks, violated=VIOLATED, respected=[], least_ratio=129.0)
    assert not holds(greedy)


def test_legitimacy_fails_on_out_of_bounds_neighbours(attacks) -> None:
    a = attacks[0]
    nb = a.neighbours
    bad = F.Neighbours(nb.d, np.where(np.arange(nb.d.size) == 0, F.UPPER + 2.0, nb.d_prime), "change", 0, 0.0)
    wrong = F.SumAttack(a.library, a.function, a.summation, bad, a.declared, a.out_d, a.out_d_prime, a.replicated)
    chk = F.check_sum_attacks([wrong], violated=[], respected=[])
    assert not holds(chk)


def test_distinguish_sum_refutes_within_budget(attacks) -> None:
    """Smaller sizes than the chapter's: the budget (miss + control) stays within 1e-6, so the assertion
    fails by chance with probability at most 1e-6 whatever the stream."""
    seen = F.distinguish_sum(attacks[0], F.equal_sum_neighbours(), 2_000, batch=3_000, seed=5)
    assert budget(seen) <= 1e-6
    assert holds(seen) and controls_fail(seen)
    assert seen.hits[0] > 1_900 and seen.epsilon_lower > 1


def test_distinguish_sum_on_equal_sums_certifies_nothing(attacks) -> None:
    """The evidence must fail where the float sums are equal (the output laws are the same): its bound
    exceeds 1 with probability at most 2.5e-7 (the test's validity); the miss computation gives up (1)."""
    quiet = F.equal_sum_neighbours()
    a = attacks[0]
    fake = F.SumAttack(a.library, a.function, a.summation, quiet, a.declared, a.out_d, a.out_d_prime, a.replicated)
    seen = F.distinguish_sum(fake, quiet, 1_000, batch=1_000, seed=6)
    assert not holds(seen) and seen.miss == 1.0
