"""Property tests (hypothesis) of the Monte Carlo checks, the event-ratio bounds, the sensitivity enumerator
and the auditor: any argument gives a valid answer or a ValueError naming the rule, never another exception,
a NaN, a hang or unbounded work (issue 15). Arguments are drawn from every kind a hostile caller might pass;
sample sizes stay small so that the whole file runs in seconds.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from _hypothesis_helpers import FAST, any_value
from _hypothesis_helpers import answer_or_value_error as _answer_or_value_error
from hypothesis import example, given
from hypothesis import strategies as st

import dpcore
from dpcore.event_ratios import event_ratio_bounds, interval_counts
from dpcore.sensitivity import count_datasets, enumerate_datasets

ANY = any_value(int_bound=10**30, text_size=4, complex_magnitude=4)
NOT_INT = any_value(int_bound=None, text_size=4, complex_magnitude=4)
# sizes stay small or absurd: a legal size in between (say 10^9 samples) is a valid, long request, not a fault
SMALL_INT = st.one_of(st.integers(min_value=-5, max_value=300), st.just(10**30), st.just(-(10**30)), NOT_INT)


@FAST
@given(hits=SMALL_INT, n=SMALL_INT, claimed=ANY, alpha=ANY, alternative=st.sampled_from(["two-sided", "less", "x"]))
def test_probability_result(hits, n, claimed, alpha, alternative):
    res = _answer_or_value_error(
        lambda: dpcore.probability_result(hits, n, claimed, alpha=alpha, alternative=alternative)
    )
    if res is not None:
        assert isinstance(res.passed, bool) and 0.0 <= res.ci_low <= res.ci_high <= 1.0


@FAST
@given(hits=st.lists(SMALL_INT, min_size=1, max_size=3), n=SMALL_INT, level=ANY)
def test_clopper_pearson_bounds(hits, n, level):
    res = _answer_or_value_error(lambda: dpcore.clopper_pearson_bounds(hits, n, level))
    if res is not None:
        lo, hi = res
        assert np.all((0 <= lo) & (lo <= hi) & (hi <= 1))


@FAST
@given(n=SMALL_INT, claimed=ANY, alpha=ANY, chunk=SMALL_INT)
def test_check_probability(n, claimed, alpha, chunk):
    def sampler(rng, size):
        return rng.random(size)

    res = _answer_or_value_error(
        lambda: dpcore.check_probability(sampler, lambda x: x < 0.5, n, claimed, alpha=alpha, chunk_size=chunk, rng=1)
    )
    if res is not None:
        assert isinstance(res.passed, bool) and math.isfinite(res.ci_low) and math.isfinite(res.ci_high)


@FAST
@given(n=SMALL_INT, claimed=ANY, variance=ANY, alpha=ANY)
def test_check_mean(n, claimed, variance, alpha):
    res = _answer_or_value_error(
        lambda: dpcore.check_mean(
            lambda rng, size: rng.normal(0, 1, size), n, claimed, variance_bound=variance, alpha=alpha, rng=2
        )
    )
    if res is not None:
        assert isinstance(res.passed, bool) and res.ci_low <= res.ci_high


@FAST
@given(n=SMALL_INT, variance=ANY, alpha=ANY)
def test_median_of_means_radius(n, variance, alpha):
    res = _answer_or_value_error(lambda: dpcore.median_of_means_radius(n, variance, alpha))
    if res is not None:
        radius, blocks = res
        assert radius >= 0 and math.isfinite(radius) and blocks >= 1


@FAST
@given(hits=SMALL_INT, n=SMALL_INT, hits_prime=SMALL_INT, n_prime=SMALL_INT, alpha=ANY)
@example(hits=0, n=1, hits_prime=0, n_prime=1, alpha=0.5)  # a valid call: the answer's path always runs
@example(hits=30, n=100, hits_prime=10, n_prime=100, alpha=1e-6)
def test_event_ratio_bounds(hits, n, hits_prime, n_prime, alpha):
    res = _answer_or_value_error(lambda: event_ratio_bounds([hits], n, [hits_prime], n_prime, alpha=alpha))
    if res is not None:
        assert np.all(res.log_ratio_lower <= res.log_ratio_estimate)
        assert np.all(res.log_ratio_estimate <= res.log_ratio_upper)
        assert np.all((res.p_low <= res.p_high) & (res.p_prime_low <= res.p_prime_high))


@FAST
@given(lower=ANY, upper=ANY)
def test_interval_counts(lower, upper):
    res = _answer_or_value_error(lambda: interval_counts(np.arange(10.0), [lower], [upper]))
    if res is not None:
        assert res.dtype.kind == "i" and 0 <= int(res[0]) <= 10


@FAST
@given(u=SMALL_INT, lo=SMALL_INT, hi=SMALL_INT, ordered=st.booleans())
def test_count_datasets(u, lo, hi, ordered):
    res = _answer_or_value_error(lambda: count_datasets(u, lo, hi, ordered))
    if res is not None:
        assert isinstance(res, int) and res >= 0


@FAST
@given(max_size=SMALL_INT, budget=st.one_of(st.integers(min_value=-5, max_value=10_000), NOT_INT))
def test_enumerate_datasets_is_bounded(max_size, budget):
    """The enumeration never yields more than ``max_datasets``; a generous budget (a huge int from NOT_INT) with
    max_size 300 allows C(304, 4) ~ 3.5e8 data sets, so at most 10**4 + 1 are drawn here (listing them all made
    this test take minutes or exhaust memory under some draws)."""
    res = _answer_or_value_error(
        lambda: list(itertools.islice(enumerate_datasets(range(4), max_size=max_size, max_datasets=budget), 10**4 + 1))
    )
    if res is not None:
        assert len(res) <= budget


@FAST
@given(n=SMALL_INT, confidence=ANY, bins=SMALL_INT, delta=ANY)
def test_audit_epsilon(n, confidence, bins, delta):
    mech = dpcore.LaplaceMechanism(1.0)
    res = _answer_or_value_error(
        lambda: dpcore.audit_epsilon(mech, 0.0, 1.0, n, confidence=confidence, bins=bins, delta=delta, rng=3)
    )
    if res is not None:
        assert math.isfinite(res.epsilon_lower) and res.epsilon_lower >= 0.0
