r"""Tests of dpcore.discrete: exact samplers against their laws, exact thresholds, int64 safety, the float attack.

False alarms. Every statistical assertion that should pass is a test at level ``ALPHA``; the file makes
fewer than ``BUDGET`` of them, so by the union (Bonferroni) bound the probability that any of them fails
for a correct sampler is at most ``BUDGET * ALPHA = 1e-6``, for any seed. The tests compare with laws
computed outside the sampler: closed forms, or mpmath at 50 digits. The inequalities used are
Clopper--Pearson (exact binomial tails, per cell, with a Bonferroni union over the cells of one test)
and the DKW inequality with Massart's constant, :math:`P(\sup_x|F_n - F| > t) \le 2e^{-2nt^2}`,
which holds for any F (for a discrete F the statistic is stochastically smaller than in the continuous case).
"""

from __future__ import annotations

import math
import secrets
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpcore
from dpcore import discrete as dd
from dpcore import floating_point as fp
from dpcore.montecarlo import check_cdf, check_probability, probability_result

BUDGET = 50
ALPHA = 1e-6 / BUDGET
N = 200_000
mpmath.mp.dps = 50


# ----------------------------------------------------------------------------- reference laws (outside the sampler)


def _lap_ref(scale):
    """pmf and tails of Lap_Z(b) in mpmath: tanh(1/(2b)) q^|z|, P(Z > k) = q^(k+1)/(1+q), q = e^(-1/b)."""
    b = mpmath.mpf(Fraction(scale).numerator) / Fraction(scale).denominator
    q = mpmath.exp(-1 / b)
    pmf = lambda z: mpmath.tanh(1 / (2 * b)) * q ** abs(z)  # noqa: E731
    upper = lambda k: q ** (k + 1) / (1 + q)  # P(Z > k), k >= 0  # noqa: E731
    return pmf, upper


def _gauss_ref(sigma2):
    """pmf and tails of N_Z(0, sigma2) in mpmath: normaliser theta_3(0, e^(-1/(2 sigma2)))."""
    s2 = mpmath.mpf(Fraction(sigma2).numerator) / Fraction(sigma2).denominator
    if s2 < 100:
        norm = mpmath.jtheta(3, 0, mpmath.exp(-1 / (2 * s2)))
    else:  # Jacobi's transformation (Poisson summation): the dual series converges at once
        dual = mpmath.nsum(lambda k: mpmath.exp(-2 * mpmath.pi**2 * s2 * k**2), [1, mpmath.inf])
        norm = mpmath.sqrt(2 * mpmath.pi * s2) * (1 + 2 * dual)
    pmf = lambda z: mpmath.exp(-(mpmath.mpf(z) ** 2) / (2 * s2)) / norm  # noqa: E731
    upper = lambda k: mpmath.nsum(pmf, [k + 1, mpmath.inf])  # P(Z > k)  # noqa: E731
    return pmf, upper


def _cells_test(x, pmf, upper, k, alpha):
    """Clopper--Pearson per cell {z} for |z| <= k and the two tails, Bonferroni over the 2k+3 cells."""
    n, cells = x.size, 2 * k + 3
    ok = True
    for z in range(-k, k + 1):
        ok &= probability_result(int(np.count_nonzero(x == z)), n, float(pmf(z)), alpha=alpha / cells).passed
    tail = float(upper(k))
    ok &= probability_result(int(np.count_nonzero(x > k)), n, tail, alpha=alpha / cells).passed
    ok &= probability_result(int(np.count_nonzero(x < -k)), n, tail, alpha=alpha / cells).passed
    return ok


def _frac(scale, factor):
    return dd.as_fraction("scale", scale) * factor


# ----------------------------------------------------------------------------- output laws


def _lap_cdf(scale):
    b = float(Fraction(scale))

    def cdf(g):
        g = np.floor(np.asarray(g, dtype=float))
        q = math.exp(-1 / b)
        return np.where(g >= 0, 1 - np.exp(-(g + 1) / b) / (1 + q), np.exp(g / b) / (1 + q))

    return cdf


def _gauss_cdf(sigma2):
    """Closed-form partial sums of e^(-y^2/(2 sigma2)) over |y| <= 40 sigma + 10 (omitted mass < e^-800)."""
    s2 = float(Fraction(sigma2))
    m = int(40 * math.sqrt(s2)) + 10
    ys = np.arange(-m, m + 1)
    w = np.exp(-(ys.astype(float) ** 2) / (2 * s2))
    cum = np.cumsum(w) / w.sum()

    def cdf(g):
        idx = np.clip(np.floor(np.asarray(g, dtype=float)).astype(np.int64) + m, -1, 2 * m)
        return np.where(idx < 0, 0.0, cum[np.maximum(idx, 0)]).clip(0, 1)

    return cdf


# law: (sampler, parameter name, mpmath pmf and tails, closed-form cdf, the unit of the DKW grid (scale b or
# sigma), the factor on the parameter that makes the standard deviation 10 % too large)
LAWS = {
    "laplace": (
        dd.sample_discrete_laplace,
        "scale",
        _lap_ref,
        _lap_cdf,
        lambda p: float(Fraction(p)),
        Fraction(11, 10),
    ),
    "gaussian": (
        dd.sample_discrete_gaussian,
        "sigma2",
        _gauss_ref,
        _gauss_cdf,
        lambda p: math.sqrt(float(Fraction(p))),
        Fraction(121, 100),
    ),
}


@pytest.mark.parametrize(
    ("law", "param", "k"),
    [
        ("laplace", Fraction(1, 1000), 1),
        ("laplace", "0.1", 2),
        ("laplace", 1, 8),
        ("laplace", Fraction(7, 3), 15),
        ("laplace", 10, 40),
        ("gaussian", Fraction(1, 1000), 1),
        ("gaussian", "0.1", 2),
        ("gaussian", 1, 6),
        ("gaussian", "2.25", 8),
        ("gaussian", 10, 15),
    ],
)
def test_discrete_cells_match_mpmath(law, param, k):
    sampler, name, ref, _, _, wider = LAWS[law]
    pmf, upper = ref(param)
    x = sampler(param, N, rng=np.random.default_rng())
    assert x.dtype == np.int64
    assert _cells_test(x, pmf, upper, k, ALPHA)
    if Fraction(dd.as_fraction(name, param)) >= 1:  # negative control: standard deviation 10 % off is rejected
        wrong = sampler(_frac(param, wider), N, rng=np.random.default_rng())
        assert not _cells_test(wrong, pmf, upper, k, ALPHA)


@pytest.mark.parametrize(
    ("law", "param", "width"),
    [
        ("laplace", 1000, 10),
        ("laplace", 10**6, 10),
        ("laplace", Fraction(2**24 - 1, 3), 10),
        ("gaussian", 1000, 6),
        ("gaussian", 10**6, 6),
        ("gaussian", 10**7, 6),
    ],
)
def test_discrete_large_scales_dkw(law, param, width):
    """DKW on a grid of 100 points a unit (b, or sigma) over +-width units; the law 10 % wider is rejected."""
    sampler, _, _, cdf, unit, wider = LAWS[law]
    grid = np.unique(np.round(unit(param) * np.linspace(-width, width, 200 * width + 1)))
    right = lambda g, n: sampler(param, n, rng=g)  # noqa: E731
    assert check_cdf(right, N, cdf(param), grid=grid, alpha=ALPHA).passed
    wrong = lambda g, n: sampler(_frac(param, wider), n, rng=g)  # noqa: E731
    assert not check_cdf(wrong, N, cdf(param), grid=grid, alpha=ALPHA).passed


@pytest.mark.parametrize("gamma", [Fraction(1, 3), 1, Fraction(5, 2), 12])
def test_bernoulli_exp_is_exact(gamma):
    p = math.exp(-float(gamma))
    sampler = lambda g, n: dd.bernoulli_exp(gamma, n, rng=g).astype(float)  # noqa: E731
    assert check_probability(sampler, lambda x: x > 0.5, N, p, alpha=ALPHA).passed
    if p > 1e-3:  # negative control
        assert not check_probability(sampler, lambda x: x > 0.5, N, p * 1.1, alpha=ALPHA).passed


@pytest.mark.parametrize("scale", [10, 1000, 10**6])
def test_laplace_components_have_their_laws(scale):
    """|Z| = 1 + mA + B: B on [0, m) with P(B = j) proportional to q^j; V = 0 (Z = 0) or 1 + A (mpmath)."""
    tab = dd._laplace_tables(1, scale)
    src = dd._Uniform(np.random.default_rng())
    q, m, n = mpmath.exp(-mpmath.mpf(1) / scale), tab.m, 400_000
    assert m > 1
    b = np.zeros(n, dtype=np.int64)
    tab._add_b(src, b)
    assert b.min() >= 0 and b.max() < m
    p_low = (1 - q ** (m // 2)) / (1 - q**m)  # P(B < m/2)
    assert probability_result(int((b < m // 2).sum()), n, float(p_low), alpha=ALPHA).passed
    v = tab.inv.sample(src, n, 2**40)  # P(V >= 2 | V >= 1) = q^m, P(V >= 1) = 2q/(1+q)
    assert probability_result(int((v >= 1).sum()), n, float(2 * q / (1 + q)), alpha=ALPHA).passed
    assert probability_result(int((v >= 2).sum()), n, float(2 * q / (1 + q) * q**m), alpha=ALPHA).passed


# ----------------------------------------------------------------------------- exact thresholds (deterministic)


def _floor32(p):
    return min(int(mpmath.floor(p * 2**32)), 2**32 - 1)


@pytest.mark.parametrize(
    "x", [Fraction(1, 3), Fraction(1), Fraction(7, 2), Fraction(45), Fraction(1, 10**6), Fraction(10**6)]
)
def test_exp_bounds_and_threshold_against_mpmath(x):
    with mpmath.workdps(120):
        ref = mpmath.exp(-mpmath.mpf(x.numerator) / x.denominator)
        for prec in (32, 64, 200):
            lo, hi = dd._exp_neg_bounds(x, prec)
            assert lo <= ref * 2**prec <= hi and hi - lo <= 4
    assert dd._threshold(dd._exp_oracle(x)) == _floor32(ref)


@pytest.mark.parametrize(("s", "t"), [(1, 1), (3, 7), (1, 1000), (1, 10**6), (1000, 1)])
def test_laplace_tables_are_exact_floors(s, t):
    tab = dd._laplace_tables(s, t)
    q = mpmath.exp(-mpmath.mpf(s) / t)
    c, r = 2 * q / (1 + q), q**tab.m  # P(V >= v) = P(Z != 0) (q^m)^(v-1)
    assert list(tab.inv.asc[::-1]) == [_floor32(c * r ** (v - 1)) for v in range(1, tab.inv.k + 1)]
    assert tab.inv.asc[0] == 0 and (tab.inv.k == 1 or tab.inv.asc[1] > 0)
    for j in {0, 1, tab.lo_tab.size // 2, tab.lo_tab.size - 1} & set(range(tab.lo_tab.size)):
        assert int(tab.lo_tab[j]) == min(int(mpmath.floor(q**j * 2**16)), 2**16 - 1)


@pytest.mark.parametrize(("s", "t"), [(1, 1), (3, 7), (1, 10**6)])
def test_oracles_bound_their_numbers(s, t):
    """Every refinement oracle brackets its number (mpmath, 120 digits) at the precisions a tie asks for."""
    tab = dd._laplace_tables(s, t)
    gtab = dd._gaussian_tables(t, s)
    with mpmath.workdps(120):
        q = mpmath.exp(-mpmath.mpf(s) / t)
        pmf, _ = _gauss_ref(Fraction(t, s))
        cases = [
            (tab._nonzero_oracle, 2 * q / (1 + q)),
            (tab.inv.oracle(3), 2 * q / (1 + q) * q ** (2 * tab.m)),
            (dd._indexed_exp(np.array([5]), Fraction(s, t))(0), q**5),
            (gtab.oracle(1), pmf(0) + 2 * pmf(1)),
        ]
        for oracle, ref in cases:
            for prec in (16, 32, 48, 64, 96, 200):
                lo, hi = oracle(prec)
                assert lo <= ref * 2**prec <= hi and hi - lo <= 8, (prec, lo, hi)


@pytest.mark.parametrize(("a", "c"), [(1, 1), (9, 4), (1, 1000), (10**6, 1), (2**24 - 1, 1)])
def test_gaussian_table_is_exact_cdf_floor(a, c):
    tab = dd._gaussian_tables(a, c)
    pmf, _ = _gauss_ref(Fraction(a, c))
    picks = sorted({0, 1, tab.size // 3, tab.size // 2, tab.size - 2, tab.size - 1} & set(range(tab.size)))
    cdf = pmf(0)
    j = 0
    for target in picks:
        while j < target:
            j += 1
            cdf += 2 * pmf(j)
        assert int(tab.table[target]) == _floor32(cdf), target
    assert tab.table[-1] == 2**32 - 1 and (tab.size == 1 or tab.table[-2] < 2**32 - 1)


# ----------------------------------------------------------------------------- the rare ties, forced


class _ForcedFirst(dd._Uniform):
    """The first ``words(n)`` call returns ``first`` (a forced tie); later words are genuinely random."""

    def __init__(self, first, rng):
        super().__init__(rng)
        self.first = first

    def words(self, size):
        if self.first is not None:
            out, self.first = np.full(size, self.first, dtype=np.uint32), None
            return out
        return super().words(size)

    def halves(self, size):
        if self.first is not None:
            out, self.first = np.full(size, self.first, dtype=np.uint16), None
            return out
        return super().halves(size)


@pytest.mark.parametrize("bits", [32, 16])
def test_forced_tie_in_bernoulli_has_the_conditional_law(bits):
    # given u == floor(p 2^bits), U < p has probability frac(p 2^bits): the refinement must reproduce it
    x = Fraction(1, 3)
    p = mpmath.exp(-mpmath.mpf(1) / 3) * 2**bits
    t = int(mpmath.floor(p))
    n = 20_000
    src = _ForcedFirst(t, np.random.default_rng())
    thr = np.uint32(t) if bits == 32 else np.uint16(t)
    acc = dd._bernoulli(src, thr, n, lambda i: dd._exp_oracle(x), bits=bits)
    assert probability_result(int(acc.sum()), n, float(p - t), alpha=ALPHA).passed


def test_forced_ties_in_geometric_tail_have_the_conditional_law():
    # ratio r = e^(-1/4); u = 0 ties with T_K = 0: P(A >= K | u = 0) = r^K 2^32, P(A >= K+1 | u = 0) = r^(K+1) 2^32
    geom = dd._Geometric(Fraction(1, 4))
    r = mpmath.exp(-mpmath.mpf(1) / 4)
    k = geom.k
    n = 20_000
    a = geom.sample(_ForcedFirst(0, np.random.default_rng()), n, 2**40)
    assert a.min() >= k - 1
    assert probability_result(int((a >= k).sum()), n, float(r**k * 2**32), alpha=ALPHA).passed
    assert probability_result(int((a >= k + 1).sum()), n, float(r ** (k + 1) * 2**32), alpha=ALPHA).passed


def test_forced_tie_in_gaussian_inversion_has_the_conditional_law():
    tab = dd._gaussian_tables(1, 1)
    pmf, _ = _gauss_ref(1)
    f0 = pmf(0) * 2**32
    t = int(tab.table[0])
    n = 20_000
    z = tab.sample(_ForcedFirst(t, np.random.default_rng()), n)
    assert set(np.unique(np.abs(z))) <= {0, 1}
    assert probability_result(int((z == 0).sum()), n, float(f0 - t), alpha=ALPHA).passed


# ----------------------------------------------------------------------------- properties and bad input

_rationals = st.builds(Fraction, st.integers(1, 2**24 - 1), st.integers(1, 2**24 - 1))
_bad_params = st.one_of(
    st.floats(max_value=0.0),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), True, "abc", "1/0", None, [1, 2], 1 + 2j, 10**400]),
    st.integers(max_value=0),
    st.builds(Fraction, st.integers(2**24, 2**40)),
    st.builds(Fraction, st.just(1), st.integers(2**24, 2**40)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scale=_rationals, size=st.integers(1, 300), seed=st.integers(0, 2**32))
def test_samplers_shapes_and_dtypes(scale, size, seed):
    for f in (dd.sample_discrete_laplace, dd.sample_discrete_gaussian):
        x = f(scale, size, rng=seed)
        assert isinstance(x, np.ndarray) and x.shape == (size,) and x.dtype == np.int64
        assert np.array_equal(x, f(scale, size, rng=seed))  # reproducible from the seed
        assert isinstance(f(scale, rng=seed), int)
    b = dd.bernoulli_exp(scale, size, rng=seed)
    assert b.shape == (size,) and b.dtype == bool


@settings(max_examples=60, deadline=None)
@given(bad=_bad_params)
def test_bad_parameters_raise_value_error_naming_them(bad):
    with pytest.raises(ValueError, match="scale"):
        dd.sample_discrete_laplace(bad, 5, rng=1)
    with pytest.raises(ValueError, match="sigma2"):
        dd.sample_discrete_gaussian(bad, 5, rng=1)
    with pytest.raises(ValueError, match="gamma"):
        dd.bernoulli_exp(bad, 5, rng=1)
    with pytest.raises(ValueError, match="epsilon"):
        dd.discrete_laplace_mechanism(3, 1, bad, rng=1)
    with pytest.raises(ValueError, match="sigma2"):
        dd.discrete_gaussian_mechanism(3, bad, rng=1)


@settings(max_examples=40, deadline=None)
@given(size=st.one_of(st.integers(max_value=0), st.integers(dd.MAX_SIZE + 1, 2**70), st.sampled_from([1.5, "3", True])))
def test_bad_sizes_raise_before_any_work(size):
    for f in (dd.sample_discrete_laplace, dd.sample_discrete_gaussian, dd.bernoulli_exp):
        with pytest.raises(ValueError, match="size"):
            f(1, size, rng=1)


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.integers(-(2**62), 2**62), min_size=1, max_size=20),
    eps=_rationals,
    sens=st.integers(1, 1000),
)
def test_mechanisms_keep_shape_and_never_wrap(values, eps, sens):
    if (Fraction(sens) / eps).numerator >= 2**24 or (Fraction(sens) / eps).denominator >= 2**24:
        return
    arr = np.array(values, dtype=np.int64)
    out = dd.discrete_laplace_mechanism(arr, sens, eps, rng=1)
    assert out.shape == arr.shape and out.dtype == np.int64
    noise = [int(o) - int(v) for o, v in zip(out, values, strict=True)]  # Python ints: no wrap possible here
    assert all(abs(z) < 2**62 for z in noise)
    assert np.array_equal(out - arr, np.array(noise))
    g = dd.discrete_gaussian_mechanism(arr.reshape(1, -1), eps, rng=1)
    assert g.shape == (1, arr.size) and g.dtype == np.int64


@pytest.mark.parametrize(
    "value", [2**63 - 1, -(2**63), 2**62 + 1, 10**30, np.uint64(2**63), np.array([0, 2**62 + 5]), [1, -(2**62) - 1]]
)
def test_values_near_int64_limits_are_refused_not_wrapped(value):
    with pytest.raises(ValueError, match="value"):
        dd.discrete_laplace_mechanism(value, 1, 1, rng=1)
    with pytest.raises(ValueError, match="value"):
        dd.discrete_gaussian_mechanism(value, 4, rng=1)


def test_values_at_the_limit_get_exact_unwrapped_noise():
    out = dd.discrete_laplace_mechanism(np.full(10_000, 2**62), 1, "1/1000", rng=3)
    assert out.min() > 0 and (out.astype(object) - 2**62).max() < 10**5  # near 2**62, no wrap to -2**63
    out = dd.discrete_laplace_mechanism(-(2**62), 1, "1/1000", rng=3)
    assert isinstance(out, int) and out < 0 and abs(out + 2**62) < 10**5


def test_overflow_of_the_sum_is_detected_exactly():
    info = np.iinfo(np.int64)
    with pytest.raises(ValueError, match="value"):
        dd._add_noise("value", np.array([info.max - 5]), np.array([6]))
    with pytest.raises(ValueError, match="value"):
        dd._add_noise("value", np.array([info.min + 5]), np.array([-6]))
    assert dd._add_noise("value", np.array([info.max - 5]), np.array([5]))[0] == info.max


# ----------------------------------------------------------------------------- randomness and mechanisms


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
    hits = int(np.count_nonzero(x == 0))  # and it has the right law (unseeded on purpose)
    assert probability_result(hits, x.size, float(dd.discrete_laplace_pmf(0, 2)), alpha=ALPHA).passed


@pytest.mark.parametrize("bitgen", [np.random.MT19937, np.random.Philox, np.random.SFC64])
def test_other_bit_generators_give_the_same_law(bitgen):
    # MT19937's raw outputs are 32-bit: the words must not be read as 64-bit halves
    g = np.random.Generator(bitgen(secrets.randbits(64)))
    pmf, upper = _lap_ref(3)
    assert _cells_test(dd.sample_discrete_laplace(3, N, rng=g), pmf, upper, 10, ALPHA)


def test_seeded_sampling_is_reproducible():
    a = dd.sample_discrete_laplace(3, 1000, rng=5)
    b = dd.sample_discrete_laplace(3, 1000, rng=np.random.default_rng(5))
    assert np.array_equal(a, b)
    assert isinstance(dd.sample_discrete_laplace(3, rng=1), int)
    assert isinstance(dd.bernoulli_exp(1, rng=1), bool)


def test_blocks_are_independent_across_block_boundaries():
    x = dd.sample_discrete_laplace(1, 3 * dd._BLOCK + 7, rng=11)
    assert not np.array_equal(x[: dd._BLOCK], x[dd._BLOCK : 2 * dd._BLOCK])


def test_discrete_laplace_mechanism_values_and_shape():
    out = dd.discrete_laplace_mechanism([[1, 2], [3, 4]], 2, "0.5", rng=1)
    assert out.shape == (2, 2) and out.dtype == np.int64
    assert isinstance(dd.discrete_laplace_mechanism(7, 1, 1.0, rng=1), int)
    sampler = lambda g, n: dd.discrete_laplace_mechanism(np.full(n, 10), 2, "0.5", rng=g) - 10  # noqa: E731
    p0 = float(_lap_ref(4)[0](0))  # noise law Lap_Z(sensitivity/epsilon) = Lap_Z(4)
    assert check_probability(sampler, lambda x: x == 0, N, p0, alpha=ALPHA).passed
    g = dd.discrete_gaussian_mechanism(np.array([5, 6]), 4, rng=2)
    assert g.shape == (2,) and g.dtype == np.int64


def test_discrete_mechanism_audits_within_epsilon():
    mech = lambda d, n, g: dd.discrete_laplace_mechanism(np.full(n, d), 1, 1, rng=g)  # noqa: E731
    res = dpcore.audit_epsilon(mech, 0, 1, 200_000, rng=8)
    assert 0.8 <= res.epsilon_lower <= 1.0


def test_discrete_gaussian_pmf_normalises_and_matches_mpmath():
    pmf, _ = _gauss_ref(Fraction(9, 4))
    for z in (0, 1, 5):
        assert dd.discrete_gaussian_pmf(z, "2.25") == pytest.approx(float(pmf(z)), rel=1e-13)
    assert dd.discrete_laplace_pmf(np.arange(-200, 201), 3).sum() == pytest.approx(1.0, rel=1e-12)


def test_bad_inputs():
    with pytest.raises(ValueError, match="2\\*\\*24"):
        dd.sample_discrete_laplace(Fraction(1, 2**30), 10)
    with pytest.raises(ValueError, match="integers"):
        dd.discrete_laplace_mechanism(1.5, 1, 1)
    with pytest.raises(ValueError, match="finite"):
        dd.discrete_laplace_mechanism(float("nan"), 1, 1)
    with pytest.raises(ValueError, match="sensitivity"):
        dd.discrete_laplace_mechanism(1, 0.5, 1)
    with pytest.raises(ValueError, match="value"):
        dd.discrete_laplace_mechanism(True, 1, 1)
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
    assert check_cdf(sampler, N, cdf, alpha=ALPHA).passed


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
    res = check_probability(trials, lambda s: s > 0.5, 40_000, bound, alternative="less", alpha=ALPHA)
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

    res = check_probability(trials, lambda s: s > 0.5, 200_000, bound, alternative="less", alpha=ALPHA)
    assert res.passed, res
