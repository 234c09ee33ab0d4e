"""Tests of dpcore.discrete: exact samplers against their pmfs, secure randomness, the float attack."""

from __future__ import annotations

import math
import secrets
from fractions import Fraction

import numpy as np
import pytest

import dpcore
from dpcore import discrete as dd
from dpcore import floating_point as fp
from dpcore.montecarlo import check_cdf, check_probability, probability_result

N = 300_000


def _int_cdf(pmf, k=60):
    zs = np.arange(-k, k + 1)
    cum = np.cumsum(pmf(zs))

    def cdf(g):
        idx = np.clip(np.asarray(g, dtype=int) + k, -1, 2 * k)
        return np.where(idx < 0, 0.0, cum[np.maximum(idx, 0)]).clip(0, 1)

    return cdf


@pytest.mark.parametrize("scale", [1, Fraction(7, 3), "0.5"])
def test_discrete_laplace_matches_exact_pmf(scale):
    sampler = lambda g, n: dd.sample_discrete_laplace(scale, n, rng=g)  # noqa: E731
    pmf = lambda z: dd.discrete_laplace_pmf(z, scale)  # noqa: E731
    for z in (0, 1, -2):
        res = check_probability(sampler, lambda x, z=z: x == z, N, float(pmf(z)), rng=z + 10)
        assert res.passed, res
    grid = np.arange(-15, 16)
    assert check_cdf(sampler, N, _int_cdf(pmf), grid=grid, rng=1).passed
    # negative control: the pmf of a 15 % larger scale is rejected
    wrong = float(dd.discrete_laplace_pmf(0, Fraction(dd.as_fraction("s", scale)) * Fraction(23, 20)))
    assert not check_probability(sampler, lambda x: x == 0, N, wrong, rng=10).passed


@pytest.mark.parametrize("sigma2", [4, Fraction(1, 3), "2.25"])
def test_discrete_gaussian_matches_exact_pmf(sigma2):
    sampler = lambda g, n: dd.sample_discrete_gaussian(sigma2, n, rng=g)  # noqa: E731
    pmf = lambda z: dd.discrete_gaussian_pmf(z, sigma2)  # noqa: E731
    for z in (0, 1, 2):
        assert check_probability(sampler, lambda x, z=z: x == z, N, float(pmf(z)), rng=z + 20).passed
    assert check_cdf(sampler, N, _int_cdf(pmf), grid=np.arange(-15, 16), rng=2).passed
    # negative control: the rounded continuous Gaussian is a plausible but wrong claim for P(Z=0)
    s = math.sqrt(float(dd.as_fraction("s", sigma2)))
    wrong = math.erf(0.5 / (s * math.sqrt(2)))
    if abs(wrong - float(pmf(0))) > 0.01:
        assert not check_probability(sampler, lambda x: x == 0, N, wrong, rng=20).passed


def test_discrete_gaussian_pmf_normalises_and_matches_mpmath():
    import mpmath

    mpmath.mp.dps = 30
    s2 = mpmath.mpf(9) / 4
    norm = mpmath.nsum(lambda y: mpmath.exp(-y * y / (2 * s2)), [-mpmath.inf, mpmath.inf])
    for z in (0, 1, 5):
        ref = float(mpmath.exp(-z * z / (2 * s2)) / norm)
        assert dd.discrete_gaussian_pmf(z, "2.25") == pytest.approx(ref, rel=1e-13)
    assert dd.discrete_laplace_pmf(np.arange(-200, 201), 3).sum() == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("gamma", [Fraction(1, 3), 1, Fraction(5, 2)])
def test_bernoulli_exp_is_exact(gamma):
    sampler = lambda g, n: dd.bernoulli_exp(gamma, n, rng=g).astype(float)  # noqa: E731
    assert check_probability(sampler, lambda x: x > 0.5, N, math.exp(-float(gamma)), rng=3).passed
    assert not check_probability(sampler, lambda x: x > 0.5, N, math.exp(-float(gamma)) * 1.1, rng=3).passed


def test_unseeded_randomness_comes_from_secrets(monkeypatch):
    calls = []
    real = secrets.token_bytes

    def spy(n):
        calls.append(n)
        return real(n)

    monkeypatch.setattr(dd.secrets, "token_bytes", spy)
    x = dd.sample_discrete_laplace(2, 200_000)
    assert calls  # drawn from the OS CSPRNG
    assert x.dtype == np.int64
    # and it has the right law (false alarm <= 1e-6; unseeded on purpose)
    hits = int(np.count_nonzero(x == 0))
    assert probability_result(hits, x.size, float(dd.discrete_laplace_pmf(0, 2))).passed


def test_seeded_sampling_is_reproducible():
    a = dd.sample_discrete_laplace(3, 1000, rng=5)
    b = dd.sample_discrete_laplace(3, 1000, rng=np.random.default_rng(5))
    assert np.array_equal(a, b)
    assert isinstance(dd.sample_discrete_laplace(3, rng=1), int)
    assert isinstance(dd.bernoulli_exp(1, rng=1), bool)


def test_discrete_laplace_mechanism_values_and_shape():
    out = dd.discrete_laplace_mechanism([[1, 2], [3, 4]], 2, "0.5", rng=1)
    assert out.shape == (2, 2) and out.dtype == np.int64
    assert isinstance(dd.discrete_laplace_mechanism(7, 1, 1.0, rng=1), int)
    # noise law: Lap_Z(sensitivity/epsilon) = Lap_Z(4)
    sampler = lambda g, n: dd.discrete_laplace_mechanism(np.full(n, 10), 2, "0.5", rng=g) - 10  # noqa: E731
    assert check_probability(sampler, lambda x: x == 0, N, float(dd.discrete_laplace_pmf(0, 4)), rng=4).passed
    g = dd.discrete_gaussian_mechanism(np.array([5, 6]), 4, rng=2)
    assert g.shape == (2,) and g.dtype == np.int64


def test_discrete_mechanism_audits_within_epsilon():
    mech = lambda d, n, g: dd.discrete_laplace_mechanism(np.full(n, d), 1, 1, rng=g)  # noqa: E731
    res = dpcore.audit_epsilon(mech, 0, 1, 200_000, rng=8)
    assert 0.8 <= res.epsilon_lower <= 1.0


def test_bad_inputs():
    with pytest.raises(ValueError, match="scale"):
        dd.sample_discrete_laplace(0, 10)
    with pytest.raises(ValueError, match="scale"):
        dd.sample_discrete_laplace(-1.5, 10)
    with pytest.raises(ValueError, match="scale"):
        dd.sample_discrete_laplace(float("nan"), 10)
    with pytest.raises(ValueError, match="2\\*\\*24"):
        dd.sample_discrete_laplace(Fraction(1, 2**30), 10)
    with pytest.raises(ValueError, match="size"):
        dd.sample_discrete_laplace(1, 0)
    with pytest.raises(ValueError, match="sigma2"):
        dd.sample_discrete_gaussian("abc", 10)
    with pytest.raises(ValueError, match="integers"):
        dd.discrete_laplace_mechanism(1.5, 1, 1)
    with pytest.raises(ValueError, match="finite"):
        dd.discrete_laplace_mechanism(float("nan"), 1, 1)
    with pytest.raises(ValueError, match="sensitivity"):
        dd.discrete_laplace_mechanism(1, 0.5, 1)
    with pytest.raises(ValueError, match="epsilon"):
        dd.discrete_laplace_mechanism(1, 1, 0)
    with pytest.raises(ValueError, match="bool"):
        dd.as_fraction("epsilon", True)
    assert dd.as_fraction("epsilon", 0.1) == Fraction(1, 10)
    with pytest.raises(ValueError, match="scale"):
        fp.naive_laplace_mechanism(0.0, 0.0)
    with pytest.raises(ValueError, match="value"):
        fp.naive_laplace_mechanism(float("inf"), 1.0)


# ----------------------------------------------------------------------------- floating point


def test_naive_mechanism_is_laplace_over_the_reals():
    # The flaw is not in the law: a DKW test accepts Lap(1, 2) (false alarm <= 1e-6).
    cdf = lambda x: np.where(x < 1, 0.5 * np.exp((x - 1) / 2), 1 - 0.5 * np.exp(-(x - 1) / 2))  # noqa: E731
    sampler = lambda g, n: fp.naive_laplace_mechanism(1.0, 2.0, n, rng=g)  # noqa: E731
    assert check_cdf(sampler, N, cdf, rng=6).passed


def test_support_membership_is_exact_on_own_outputs():
    for x, b in ((0.0, 2.0), (1.0, 2.0), (123.25, 10.0)):
        y = fp.naive_laplace_mechanism(x, b, 20_000, rng=7)
        assert fp.naive_laplace_support_contains(y, x, b).all()
    # doubles that cannot be outputs: a point strictly between two consecutive candidates
    assert not fp.naive_laplace_support_contains(np.array([1e-300]), 0.0, 1.0)[0]


def test_floating_point_attack_beats_the_dp_bound():
    eps = 0.5
    b = 1 / eps
    bound = math.exp(eps) / (1 + math.exp(eps))

    def trials(g, n):
        secret = g.integers(0, 2, size=n)
        y0, y1 = fp.naive_laplace_mechanism(0.0, b, n, rng=g), fp.naive_laplace_mechanism(1.0, b, n, rng=g)
        y = np.where(secret == 0, y0, y1)
        return (fp.floating_point_attack(y, 0.0, 1.0, b) == secret).astype(float)

    # claim "success <= e^eps/(1+e^eps)" (what eps-DP guarantees) is rejected
    res = check_probability(trials, lambda s: s > 0.5, 40_000, bound, alternative="less", rng=8)
    assert not res.passed and res.ci_low > bound + 0.1


def test_discrete_mechanism_attack_stays_within_bound():
    eps = Fraction(1, 2)
    bound = math.exp(0.5) / (1 + math.exp(0.5))

    def trials(g, n):
        secret = g.integers(0, 2, size=n)
        y = dd.discrete_laplace_mechanism(secret, 1, eps, rng=g)
        # both supports are all of Z, so the support attack reduces to the likelihood-ratio test:
        # guess 1 iff y is closer to 1 (ties at y <= 0 go to 0) -- the optimal test here
        return ((y >= 1).astype(int) == secret).astype(float)

    res = check_probability(trials, lambda s: s > 0.5, 200_000, bound, alternative="less", rng=9)
    assert res.passed, res
