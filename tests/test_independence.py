"""Independence of the draws: the exact tests of dpcore.independence, the chunked engines, the samplers.

Every Monte Carlo assert here is a test whose false-alarm probability is bounded
exactly (Clopper-Pearson on an exact Binomial(m, 1/2) null, or the birthday
union bound for repeated 53-bit values); the per-test levels are in the calls.
"""

from __future__ import annotations

import itertools
import math
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np
import pytest

import dpcore
from dpbook import flawed
from dpcore.independence import UniformRecorder, independence_tests, repeat_probability, repeated_values

A = 1e-7  # per family of three tests


def _passed(results):
    return [r.passed for r in results]


def test_sign_changes_are_exactly_binomial():
    """All 2^m sign sequences: the number of changes has the Binomial(m - 1, 1/2) law (exact)."""
    m = 10
    counts = np.zeros(m, dtype=int)
    for s in itertools.product((-1, 1), repeat=m):
        counts[sum(a != b for a, b in zip(s[1:], s[:-1], strict=True))] += 1
    np.testing.assert_array_equal(counts, [2 * math.comb(m - 1, k) for k in range(m)])


def test_concordance_pairs_are_disjoint():
    """The lag-L pairs use every index at most once (so their indicators are independent)."""
    x = np.arange(1, 101, dtype=float) * np.where(np.arange(100) % 3 == 0, -1, 1)
    for lag in (1, 3, 7, 50):
        res = independence_tests(x, lag=lag, alpha=0.5)
        assert res[1].n <= 50
        idx = np.arange(100 - lag)
        idx = idx[(idx // lag) % 2 == 0]
        used = np.concatenate([idx, idx + lag])
        assert used.size == np.unique(used).size


@pytest.mark.parametrize("lag", [1, 1000])
def test_chunked_engine_is_independent(lag):
    rec = UniformRecorder()
    dpcore.check_mean(rec, 30_500, 0.5, variance_bound=1 / 12, chunk_size=1_000, rng=1)
    assert rec.total == 30_500 and len(rec.chunks) == 31
    assert all(_passed(independence_tests(rec.symmetric(), lag=lag, alpha=A)))
    assert repeated_values(rec.chunks) == 0  # false alarm <= repeat_probability(30_500) ~ 5e-8


def test_chunked_probability_engine_is_independent():
    rec = UniformRecorder()
    dpcore.check_probability(rec, lambda u: u < 0.5, 20_000, 0.5, chunk_size=37, rng=2)
    assert len(rec.chunks) == -(-20_000 // 37)
    assert all(_passed(independence_tests(rec.symmetric(), lag=37, alpha=A)))
    assert repeated_values(rec.chunks) == 0


def test_audit_streams_serial_and_threaded():
    serial, threads = UniformRecorder(), UniformRecorder()
    dpcore.audit_epsilon(serial.mechanism, 0.0, 1.0, 20_000, chunk_size=300, rng=3)
    with ThreadPoolExecutor(2) as pool:
        dpcore.audit_epsilon(threads.mechanism, 0.0, 1.0, 20_000, chunk_size=300, rng=3, executor=pool)
    assert sorted(map(bytes, serial.chunks)) == sorted(map(bytes, threads.chunks))
    assert serial.total == 40_000
    assert repeated_values(serial.chunks) == 0  # every chunk, phase and side its own stream
    assert all(_passed(independence_tests(serial.symmetric(), lag=300, alpha=A)))


@pytest.mark.parametrize(
    "sampler",
    [
        lambda g, s: dpcore.sample_discrete_laplace(Fraction(3, 2), s, rng=g),
        lambda g, s: dpcore.sample_discrete_laplace(Fraction(1, 2), s, rng=g),
        lambda g, s: dpcore.sample_discrete_gaussian(2, s, rng=g),
        lambda g, s: dpcore.sample_discrete_gaussian(Fraction(1, 3), s, rng=g),
        lambda g, s: dpcore.laplace_mechanism(np.zeros(s), 1.0, 1.0, rng=g),
        lambda g, s: dpcore.gaussian_mechanism(np.zeros(s), 1.0, 1.0, 1e-5, rng=g),
    ],
    ids=["dlap", "dlap-narrow", "dgauss", "dgauss-narrow", "laplace", "gaussian"],
)
def test_samplers_are_independent(sampler):
    x = sampler(np.random.default_rng(4), 30_000)
    assert all(_passed(independence_tests(x, lag=1, alpha=A)))
    assert all(_passed(independence_tests(x, lag=97, alpha=A)))


def test_twins_are_caught():
    rec = UniformRecorder()
    dpcore.check_mean(flawed.ReseededEachChunk(rec), 30_500, 0.5, variance_bound=1 / 12, chunk_size=1_000, rng=1)
    assert repeated_values(rec.chunks) > 0
    assert not independence_tests(rec.symmetric(), lag=1_000, alpha=A)[1].passed
    dl = lambda g, s: dpcore.sample_discrete_laplace(Fraction(3, 2), s, rng=g)  # noqa: E731
    gen = np.random.default_rng(5)
    assert not independence_tests(flawed.AntitheticPairs(dl)(gen, 30_000), alpha=A)[1].passed
    assert not independence_tests(flawed.SortedByMagnitude(dl)(gen, 30_000), alpha=A)[2].passed
    sticky = flawed.StickySigns(lambda g, s: g.laplace(size=s))(gen, 30_000)
    assert not independence_tests(sticky, alpha=A)[0].passed


def test_twins_keep_their_marginals():
    """The twins are dependent but not otherwise wrong: their signs stay fair (so only dependence is caught)."""
    gen = np.random.default_rng(6)
    x = flawed.StickySigns(lambda g, s: g.laplace(size=s))(gen, 40_000)
    assert dpcore.probability_result(int((x > 0).sum()), x.size, 0.5, alpha=1e-7).passed
    y = flawed.AntitheticPairs(lambda g, s: g.laplace(size=s))(gen, 40_001)
    assert y.size == 40_001 and np.all(y[1:40_000:2] == -y[0:40_000:2])


def test_repeat_probability():
    assert repeat_probability(2) == pytest.approx(2.0**-53)
    assert repeat_probability(10**5) == pytest.approx(10**5 * (10**5 - 1) / 2 * 2.0**-53)
    assert repeat_probability(10**9) == 1.0
    with pytest.raises(ValueError, match="total"):
        repeat_probability(0)


def test_bad_input():
    with pytest.raises(ValueError, match="1-D"):
        independence_tests(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="finite"):
        independence_tests([1.0, np.nan, -1.0])
    with pytest.raises(ValueError, match="lag"):
        independence_tests([1.0, -1.0, 2.0], lag=0)
    with pytest.raises(ValueError, match="alpha"):
        independence_tests([1.0, -1.0, 2.0], alpha=1.5)
    with pytest.raises(ValueError, match="at least 2"):
        independence_tests([0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="untied"):
        independence_tests([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="nothing recorded"):
        UniformRecorder().symmetric()


def test_leak_outputs_audit_reports_zero():
    leak = 0.05
    res = dpcore.audit_epsilon(dpcore.LeakOutputs(leak), 0, 1, 40_000, delta=leak, confidence=1 - 1e-7, rng=7)
    assert res.epsilon_lower == 0.0
    # without delta, the leak's infinite ratio is certified far above 0
    res0 = dpcore.audit_epsilon(dpcore.LeakOutputs(leak), 0, 1, 40_000, confidence=1 - 1e-7, rng=7)
    assert res0.epsilon_lower > 3.0
    with pytest.raises(ValueError, match="leak"):
        dpcore.LeakOutputs(0.0)
    x = dpcore.LeakOutputs(0.25)(1.0, 40_000, np.random.default_rng(8))
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert dpcore.probability_result(int(x.sum()), x.size, 0.25, alpha=1e-7).passed
