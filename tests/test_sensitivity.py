"""Brute-force global sensitivity against closed forms, and its input validation."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from dpcore.sensitivity import (
    NEIGHBOUR_RELATIONS,
    count_datasets,
    enumerate_datasets,
    global_sensitivity,
    l1_sensitivity,
    l2_sensitivity,
    neighbouring_pairs,
)

GRID = np.linspace(0.0, 1.0, 5)  # records in [0, 1], extremes included


def _partial_sums(rows: np.ndarray, m: int = 5) -> np.ndarray:
    """Q_1..Q_m: partial sums of the first i rows (all rows if fewer)."""
    padded = np.concatenate([np.asarray(rows, dtype=float), np.zeros(m)])
    return np.cumsum(padded)[:m]


@pytest.mark.parametrize("relation", NEIGHBOUR_RELATIONS)
def test_count(relation):
    expected = 1.0 if relation == "add_remove" else 0.0  # replace keeps the size
    assert l1_sensitivity(len, GRID, max_size=3, relation=relation) == expected


@pytest.mark.parametrize("lo,hi", [(0.0, 1.0), (-2.0, 3.0), (1.0, 4.0)])
def test_bounded_sum(lo, hi):
    uni = np.linspace(lo, hi, 4)
    # add/remove: one record of magnitude up to max(|lo|, |hi|); replace: the range
    assert math.isclose(l1_sensitivity(np.sum, uni, max_size=3), max(abs(lo), abs(hi)))
    assert math.isclose(l1_sensitivity(np.sum, uni, max_size=3, relation="replace"), hi - lo)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_bounded_mean_depends_on_n(n):
    # replace at fixed size n: range / n.  add/remove from size n to n+1: range / (n+1).
    uni = np.array([0.0, 0.5, 1.0])
    rep = l1_sensitivity(np.mean, uni, min_size=n, max_size=n, relation="replace")
    add = l1_sensitivity(np.mean, uni, min_size=n, max_size=n + 1, relation="add_remove")
    assert math.isclose(rep, 1.0 / n)
    assert math.isclose(add, 1.0 / (n + 1))


def test_mean_over_several_sizes_is_worst_at_smallest():
    uni = np.array([0.0, 1.0])
    assert math.isclose(l1_sensitivity(np.mean, uni, min_size=2, max_size=5, relation="replace"), 0.5)
    assert math.isclose(l1_sensitivity(np.mean, uni, min_size=2, max_size=5), 1.0 / 3.0)


@pytest.mark.parametrize("bins", [2, 3, 4])
def test_histogram_one_vs_two(bins):
    def hist(rows):
        return np.bincount(rows.astype(int), minlength=bins)

    uni = np.arange(bins)
    assert l1_sensitivity(hist, uni, max_size=3) == 1.0
    assert l1_sensitivity(hist, uni, max_size=3, relation="replace") == 2.0
    assert math.isclose(l2_sensitivity(hist, uni, max_size=3, relation="replace"), math.sqrt(2))
    assert l2_sensitivity(hist, uni, max_size=3) == 1.0


def test_histogram_vectorized_agrees():
    def hist_batch(batch):
        out = np.zeros((batch.shape[0], 3))
        for j in range(3):
            out[:, j] = (batch == j).sum(axis=1)
        return out

    for rel in NEIGHBOUR_RELATIONS:
        a = global_sensitivity(hist_batch, np.arange(3), max_size=4, relation=rel, vectorized=True)
        b = global_sensitivity(
            lambda r: np.bincount(r.astype(int), minlength=3), np.arange(3), max_size=4, relation=rel
        )
        assert a.value == b.value and a.n_pairs == b.n_pairs and a.n_datasets == b.n_datasets


@pytest.mark.parametrize("i", [1, 2, 3, 4, 5])
def test_seed_partial_sums_each_has_sensitivity_one(i):
    # Q_i over 0/1 rows, tables of 4 or 5 rows, rows in order
    q = lambda rows: _partial_sums(rows)[i - 1]  # noqa: E731
    for rel in NEIGHBOUR_RELATIONS:
        assert l1_sensitivity(q, [0, 1], min_size=4, max_size=5, relation=rel, ordered=True) == 1.0


def test_seed_partial_sum_vector():
    # all of Q_1..Q_5 at once: changing (or inserting) the first row moves every Q_i by one
    for rel in NEIGHBOUR_RELATIONS:
        r = global_sensitivity(
            _partial_sums, [0, 1], min_size=5, max_size=5 + (rel == "add_remove"), relation=rel, ordered=True
        )
        assert r.value == 5.0
        assert math.isclose(
            l2_sensitivity(_partial_sums, [0, 1], min_size=5, max_size=5, relation="replace", ordered=True),
            math.sqrt(5),
        )
    # the differencing pair (Q_4, Q_5) has L1 sensitivity 2 under replace
    pair = lambda rows: _partial_sums(rows)[3:5]  # noqa: E731
    assert l1_sensitivity(pair, [0, 1], min_size=5, max_size=5, relation="replace", ordered=True) == 2.0


def test_worst_pair_attains_value_and_is_a_neighbour():
    r = global_sensitivity(np.mean, GRID, min_size=1, max_size=3)
    d, d2 = r.worst_pair
    assert abs(d2.size - d.size) == 1
    assert math.isclose(abs(np.mean(d) - np.mean(d2)), r.value)
    assert math.isclose(r.value, 0.5)
    assert float(r) == r.value


@pytest.mark.parametrize("u,lo,hi,ordered", [(3, 0, 3, False), (4, 1, 3, False), (2, 0, 4, True), (3, 2, 3, True)])
def test_enumeration_counts(u, lo, hi, ordered):
    sets = enumerate_datasets(np.arange(u), min_size=lo, max_size=hi, ordered=ordered)
    assert len(sets) == count_datasets(u, lo, hi, ordered)
    keys = {tuple(s) if ordered else tuple(sorted(s)) for s in sets}
    assert len(keys) == len(sets)


def _reference_pairs(u, hi, relation, ordered):
    """Neighbouring pairs by a direct definition, independent of the module's indexing."""

    def canon(s):
        return tuple(s) if ordered else tuple(sorted(s))

    sets = {canon(s) for m in range(hi + 1) for s in itertools.product(range(u), repeat=m)}
    out = set()
    for s in sets:
        if relation == "add_remove":
            for p in range(len(s) + 1):
                for x in range(u):
                    t = canon(s[:p] + (x,) + s[p:])
                    if t in sets:
                        out.add(frozenset([s, t]))
        else:
            for p in range(len(s)):
                for x in range(u):
                    if x != s[p]:
                        out.add(frozenset([s, canon(s[:p] + (x,) + s[p + 1 :])]))
    return out


@pytest.mark.parametrize("relation", NEIGHBOUR_RELATIONS)
@pytest.mark.parametrize("ordered", [False, True])
def test_pairs_match_direct_definition(relation, ordered):
    u, hi = 3, 3
    got = neighbouring_pairs(np.arange(u), max_size=hi, relation=relation, ordered=ordered)
    got_set = {frozenset([tuple(a.tolist()), tuple(b.tolist())]) for a, b in got}
    assert len(got_set) == len(got)  # each unordered pair once
    assert got_set == _reference_pairs(u, hi, relation, ordered)


def test_replace_at_most_twice_add_remove_random_queries():
    rng = np.random.default_rng(3)
    uni = np.arange(4)
    for _ in range(20):
        table = rng.normal(size=(4, 2))
        q = lambda rows, t=table: t[rows.astype(int)].sum(axis=0)  # noqa: E731
        ar = l1_sensitivity(q, uni, max_size=3)
        rp = l1_sensitivity(q, uni, min_size=1, max_size=2, relation="replace")
        assert rp <= 2 * ar + 1e-12


def test_exact_rational_answer_of_mean():
    r = global_sensitivity(np.mean, [0, 1], min_size=3, max_size=4)
    assert Fraction(r.value).limit_denominator(100) == Fraction(1, 4)


def test_two_dimensional_records():
    uni = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    q = lambda rows: rows.sum(axis=0)  # noqa: E731
    assert l1_sensitivity(q, uni, max_size=2) == 2.0
    assert math.isclose(l2_sensitivity(q, uni, max_size=2), math.sqrt(2))


# ----------------------------------------------------------------------------- bad input


def test_empty_universe():
    with pytest.raises(ValueError, match="universe must not be empty"):
        l1_sensitivity(len, [], max_size=2)


def test_query_returning_nan():
    with pytest.raises(ValueError, match="NaN"):
        with np.errstate(invalid="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                l1_sensitivity(np.mean, [0, 1], max_size=2)  # mean of the empty data set
    with pytest.raises(ValueError, match="NaN"):
        l1_sensitivity(lambda r: float("nan"), [0, 1], max_size=2)
    with pytest.raises(ValueError, match="NaN or infinity"):
        l1_sensitivity(lambda r: np.inf if r.size == 2 else 0.0, [0, 1], max_size=2, relation="replace")


def test_unknown_relation():
    with pytest.raises(ValueError, match="relation must be one of"):
        l1_sensitivity(len, [0, 1], max_size=2, relation="swap")


@pytest.mark.parametrize(
    "kwargs,msg",
    [
        (dict(max_size=1, min_size=1), "max_size >= min_size \\+ 1"),
        (dict(max_size=-1), "max_size"),
        (dict(max_size=2.5), "max_size"),
        (dict(max_size=2, norm=3), "norm must be 1 or 2"),
        (dict(max_size=2, norm=True), "norm must be 1 or 2"),
        (dict(max_size=30, max_datasets=1000), "max_datasets"),
        (dict(max_size=0, relation="replace"), "replace needs max_size >= 1"),
        (dict(max_size=1, min_size=2, relation="replace"), "max_size must be >= min_size"),
    ],
)
def test_bad_sizes_norms_budgets(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        global_sensitivity(len, [0, 1, 2], **kwargs)


@pytest.mark.parametrize(
    "universe,msg",
    [
        ([[0, 1], [0, 1]], "same record twice"),
        ([0.0, np.nan], "finite"),
        (["a", "b"], "numeric"),
        (3, "scalar"),
        (np.zeros((2, 2, 2)), "1-D or 2-D"),
    ],
)
def test_bad_universe(universe, msg):
    with pytest.raises(ValueError, match=msg):
        l1_sensitivity(len, universe, max_size=2)


def test_bad_query_outputs():
    with pytest.raises(ValueError, match="fixed length"):
        l1_sensitivity(lambda r: np.ones(r.size + 1), [0, 1], max_size=2)
    with pytest.raises(ValueError, match="real numbers"):
        l1_sensitivity(lambda r: "x", [0, 1], max_size=2)
    with pytest.raises(ValueError, match="one answer per data set"):
        l1_sensitivity(lambda batch: 1.0, [0, 1], max_size=2, vectorized=True)
    with pytest.raises(ValueError, match="no neighbouring pair"):
        l1_sensitivity(len, [0], max_size=2, relation="replace")


@pytest.mark.parametrize("relation", NEIGHBOUR_RELATIONS)
def test_pairs_when_count_keys_would_overflow(relation):
    # 40 record types, sizes up to 2: count-vector keys need 40 * log2(3) > 62 bits, so the
    # module matches count rows instead; the pairs must still be exactly the neighbours
    u, hi = 40, 2
    got = neighbouring_pairs(np.arange(u), max_size=hi, relation=relation)
    got_set = {frozenset([tuple(a.tolist()), tuple(b.tolist())]) for a, b in got}
    assert got_set == _reference_pairs(u, hi, relation, ordered=False)
    expected = 1.0 if relation == "add_remove" else 2.0
    assert (
        l1_sensitivity(lambda r: np.bincount(r.astype(int), minlength=u), np.arange(u), max_size=hi, relation=relation)
        == expected
    )


# --------------------------------------------------------------------------- bounded work (issue 15, section 2)


@pytest.mark.parametrize("ordered", [False, True])
def test_count_in_closed_form_matches_a_term_by_term_sum(ordered):
    for u in (1, 2, 3, 7):
        for lo in range(0, 5):
            for hi in range(lo, 9):
                terms = sum(u**m if ordered else math.comb(u + m - 1, m) for m in range(lo, hi + 1))
                assert count_datasets(u, lo, hi, ordered) == terms


def test_count_does_not_hang_on_a_huge_range_of_sizes():
    # sum_{m=0}^{M} C(m + 1, m) = sum (m + 1) = (M + 1)(M + 2) / 2
    assert count_datasets(2, 0, 10**8) == (10**8 + 1) * (10**8 + 2) // 2
    assert count_datasets(1, 5, 10**12, ordered=True) == 10**12 - 4
    with pytest.raises(ValueError, match=r"about 158,496,277 bits \(> max_bits = 65,536\)"):
        count_datasets(3, 0, 10**8, ordered=True)
    with pytest.raises(ValueError, match="max_bits"):
        count_datasets(10**6, 0, 10**8)
    assert count_datasets(3, 0, 50_000, ordered=True, max_bits=10**5) == (3**50_001 - 1) // 2
    with pytest.raises(ValueError, match="ordered"):
        count_datasets(2, 0, 3, ordered="yes")


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: l1_sensitivity(len, np.arange(2), max_size=10**8), "max_datasets"),
        (lambda: l1_sensitivity(len, np.arange(100), max_size=10**400), "max_size must be an integer <="),
        (
            lambda: enumerate_datasets(range(100), max_size=10),
            r"about 2\*\*45.3 data sets \(> max_datasets = 100,000\)",
        ),
        (lambda: enumerate_datasets(range(10), max_size=5, max_datasets=3002), "max_datasets = 3,002"),
        (lambda: neighbouring_pairs(range(10), max_size=5, max_datasets=0), "max_datasets must be an integer >= 1"),
        (
            lambda: l1_sensitivity(len, np.arange(10_000), max_size=1, relation="replace"),
            "number of neighbouring pairs = 49,995,000 exceeds the limit max_pairs = 10,000,000",
        ),
        (lambda: neighbouring_pairs(range(100), max_size=3, relation="replace"), "max_pairs = 100,000"),
    ],
)
def test_enumeration_budgets_are_checked_before_any_work(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_budgets_can_be_raised_explicitly():
    sets = enumerate_datasets(range(10), max_size=5, max_datasets=3003)
    assert len(sets) == math.comb(15, 5)  # sum_{m<=5} C(9 + m, m) = C(15, 5) = 3003
    r = l1_sensitivity(len, np.arange(500), max_size=1, relation="replace", max_pairs=124_750)
    assert r == 0.0  # 500 * 499 / 2 replace pairs of single records


def _generated_pairs(u, lo, hi, relation, ordered):
    """Pairs formed by the definition's operations, counted one by one (repeats included)."""
    total = 0
    for m in range(lo, hi + 1):
        for s in (
            itertools.product(range(u), repeat=m) if ordered else itertools.combinations_with_replacement(range(u), m)
        ):
            if relation == "add_remove":
                if m < hi:
                    total += u * (m + 1) if ordered else u  # every value, at every position (sequences)
            elif ordered:
                total += sum(u - 1 - v for v in s)  # each position's value raised to each larger value
            else:
                total += sum(u - 1 - v for v in set(s))  # each distinct value replaced by each larger value
    return total


@pytest.mark.parametrize("relation", NEIGHBOUR_RELATIONS)
@pytest.mark.parametrize("ordered", [False, True])
def test_pair_budget_counts_exactly_the_pairs_formed(relation, ordered):
    for u, lo, hi in [(1, 0, 3), (2, 0, 4), (3, 1, 3), (4, 0, 2), (5, 2, 3)]:
        if relation == "replace" and u == 1:
            continue  # no record to replace a record by
        kw = dict(min_size=lo, max_size=hi, relation=relation, ordered=ordered)
        r = global_sensitivity(len, np.arange(u), **kw)
        assert r.n_pairs == _generated_pairs(u, lo, hi, relation, ordered)
        with pytest.raises(ValueError, match="max_pairs"):
            global_sensitivity(len, np.arange(u), **kw, max_pairs=r.n_pairs - 1)


def test_blockwise_distances_find_the_first_largest_pair():
    from dpcore import sensitivity

    answers = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 0.0], [0.0, -3.0]])
    i = np.array([0, 0, 1, 2, 0])
    j = np.array([1, 2, 3, 3, 3])
    # L1 distances 3, 3, 6, 6, 3: the first 6 is pair 2; L2: sqrt 5, 3, sqrt 26, sqrt 18, 3
    old = sensitivity._PAIR_BLOCK
    try:
        for block in (1, 2, 3, 100):
            sensitivity._PAIR_BLOCK = block
            assert sensitivity._farthest_pair(answers, i, j, 1) == (2, 6.0)
            assert sensitivity._farthest_pair(answers, i, j, 2) == (2, math.sqrt(26))
    finally:
        sensitivity._PAIR_BLOCK = old


def test_enumerate_datasets_memory_is_bounded_by_its_ceilings():
    """A budget above MAX_DATASETS_CEILING, or more than MAX_LISTED_RECORDS records, is refused by name before
    anything is built (a fuzzed max_datasets of 10**30 with max_size 300 once tried to list 3.5e8 arrays)."""
    from dpcore.sensitivity import MAX_DATASETS_CEILING, MAX_LISTED_RECORDS, _record_count

    with pytest.raises(ValueError, match="max_datasets must be at most"):
        enumerate_datasets(range(4), max_size=300, max_datasets=MAX_DATASETS_CEILING + 1)
    # multisets of two kinds, sizes 0..600: 181,201 data sets but 72,541,400 records
    assert _record_count(2, 0, 600, False) == sum(m * (m + 1) for m in range(601)) > MAX_LISTED_RECORDS
    with pytest.raises(ValueError, match="max_size"):
        enumerate_datasets(range(2), max_size=600, max_datasets=MAX_DATASETS_CEILING)
    # the record count is the listed sizes summed (ordered, unordered, one kind)
    for u, lo, hi, ordered in [(3, 1, 4, True), (3, 0, 5, False), (1, 2, 9, False)]:
        listed = enumerate_datasets(range(u), min_size=lo, max_size=hi, ordered=ordered)
        assert _record_count(u, lo, hi, ordered) == sum(len(x) for x in listed)
