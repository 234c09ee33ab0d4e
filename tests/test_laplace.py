"""Unit tests for dpcore.laplace: reference values, distribution, reproducibility, bad input."""

import math

import numpy as np
import pytest
from scipy import stats

import dpcore


def test_scale_reference_values():
    assert dpcore.laplace_scale(1.0, 1.0) == 1.0
    assert dpcore.laplace_scale(2.0, 0.5) == 4.0
    assert dpcore.laplace_scale(1, 3) == pytest.approx(1 / 3, rel=1e-15)


def test_scalar_in_float_out_and_array_shape():
    out = dpcore.laplace_mechanism(5.0, 1.0, 1.0, rng=0)
    assert isinstance(out, float)
    arr = dpcore.laplace_mechanism(np.zeros((3, 4)), 1.0, 1.0, rng=0)
    assert arr.shape == (3, 4)
    assert len(np.unique(arr)) == 12  # independent noise per coordinate


def test_seed_reproduces_exactly_and_generator_accepted():
    a = dpcore.laplace_mechanism(np.arange(5.0), 1.0, 0.7, rng=123)
    b = dpcore.laplace_mechanism(np.arange(5.0), 1.0, 0.7, rng=123)
    np.testing.assert_array_equal(a, b)
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    np.testing.assert_array_equal(
        dpcore.laplace_mechanism(np.zeros(4), 1, 1, rng=g1), dpcore.laplace_mechanism(np.zeros(4), 1, 1, rng=g2)
    )
    np.testing.assert_array_equal(
        dpcore.laplace_mechanism(np.zeros(4), 1, 1, rng=np.random.SeedSequence(4)),
        dpcore.laplace_mechanism(np.zeros(4), 1, 1, rng=np.random.SeedSequence(4)),
    )


@pytest.mark.parametrize("value,sens,eps", [(0.0, 1.0, 1.0), (10.0, 2.0, 0.5), (-3.0, 1.0, 4.0)])
def test_distribution_is_laplace(value, sens, eps):
    """DKW test (alpha = 1e-6) of the mechanism's output against Lap(value, sens/eps)."""
    b = sens / eps
    res = dpcore.check_cdf(
        lambda rng, n: dpcore.laplace_mechanism(np.full(n, value), sens, eps, rng),
        200_000,
        stats.laplace(value, b).cdf,
        rng=7,
    )
    assert res.passed, res
    wrong = dpcore.check_cdf(
        lambda rng, n: dpcore.laplace_mechanism(np.full(n, value), sens, eps, rng),
        200_000,
        stats.laplace(value, 1.2 * b).cdf,
        rng=7,
    )
    assert not wrong.passed, wrong


BAD_NUMBERS = [0.0, -1.0, math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("bad", BAD_NUMBERS)
def test_bad_epsilon(bad):
    with pytest.raises(ValueError, match="epsilon"):
        dpcore.laplace_scale(1.0, bad)
    with pytest.raises(ValueError, match="epsilon"):
        dpcore.laplace_mechanism(1.0, 1.0, bad, rng=0)


@pytest.mark.parametrize("bad", BAD_NUMBERS)
def test_bad_sensitivity(bad):
    with pytest.raises(ValueError, match="sensitivity"):
        dpcore.laplace_scale(bad, 1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        dpcore.laplace_mechanism(1.0, bad, 1.0, rng=0)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, [1.0, math.nan], np.array([[0.0, np.inf]])])
def test_non_finite_value_is_refused(bad):
    with pytest.raises(ValueError, match="value"):
        dpcore.laplace_mechanism(bad, 1.0, 1.0, rng=0)


@pytest.mark.parametrize("bad", ["one", [1, 2], None, True])
def test_non_numeric_parameters(bad):
    if bad is None:
        with pytest.raises(ValueError):
            dpcore.laplace_scale(1.0, bad)
    else:
        with pytest.raises(ValueError):
            dpcore.laplace_scale(bad, 1.0)


@pytest.mark.parametrize("bad", [1.5, -3, "seed", True])
def test_bad_rng(bad):
    with pytest.raises(ValueError, match="rng"):
        dpcore.laplace_mechanism(0.0, 1.0, 1.0, rng=bad)


def test_non_numeric_value():
    with pytest.raises(ValueError, match="value"):
        dpcore.laplace_mechanism("abc", 1.0, 1.0, rng=0)


def test_laplace_noise_shape_signs_and_bad_scale():
    gen = np.random.default_rng(4)
    z = dpcore.laplace_noise(gen, (3, 5, 7), 2.5)
    assert z.shape == (3, 5, 7) and z.dtype == np.float64
    assert dpcore.laplace_noise(gen, 0, 1.0).shape == (0,)
    # fair signs: Hoeffding, P(|#positive - n/2| >= 2.75 sqrt(n)) <= 2 exp(-2 * 2.75**2) < 6e-7
    n = 1_000_001
    pos = int((dpcore.laplace_noise(gen, n, 1.0) > 0).sum())
    assert abs(pos - n / 2) < 2.75 * math.sqrt(n)
    # the magnitudes are scale * Exp(1): the sign is written into the bit, the magnitude untouched
    g1, g2 = np.random.default_rng(8), np.random.default_rng(8)
    np.testing.assert_array_equal(np.abs(dpcore.laplace_noise(g1, 1000, 3.0)), 3.0 * g2.standard_exponential(1000))
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="scale"):
            dpcore.laplace_noise(gen, 10, bad)


# --------------------------------------------------------------------------- issue 15


@pytest.mark.parametrize("bad", [1 + 5j, np.complex128(1 + 5j), True, "1", None, b"1", [1.0]])
def test_issue15_scale_refuses_non_real_numbers(bad):
    """laplace_scale(1+5j, 1) returned 1.0 (numpy dropped the imaginary part with only a warning)."""
    with pytest.raises(ValueError, match="^sensitivity must be"):
        dpcore.laplace_scale(bad, 1.0)
    with pytest.raises(ValueError, match="^epsilon must be"):
        dpcore.laplace_scale(1.0, bad)


def test_issue15_huge_integer_is_a_value_error():
    with pytest.raises(ValueError, match="^sensitivity must be representable"):
        dpcore.laplace_scale(10**400, 1.0)
    with pytest.raises(ValueError, match="^value must be representable"):
        dpcore.laplace_mechanism([1.0, 10**400], 1.0, 1.0, rng=0)


@pytest.mark.parametrize("sens,eps", [(1.0, 5e-324), (5e-324, 1e300), (1e300, 1e-10)])
def test_issue15_scale_overflow_or_underflow_refused(sens, eps):
    """laplace_scale(1, 5e-324) was inf and laplace_scale(5e-324, 1e300) was 0.0 (no noise)."""
    with pytest.raises(ValueError, match="sensitivity=.*epsilon="):
        dpcore.laplace_scale(sens, eps)
    with pytest.raises(ValueError):
        dpcore.laplace_mechanism(0.0, sens, eps, rng=0)


def test_issue15_release_is_never_infinite():
    # headroom 1e304 above 1.7976e308: a draw overflows when its sign is + and Exp(1) > 1, probability
    # e^-1 / 2 = 0.18 each, so all 1000 stay finite with probability 0.82^1000 < 1e-80 (any seed)
    with pytest.raises(ValueError, match="overflowed"):
        dpcore.laplace_mechanism(np.full(1000, 1.7976e308), 1e304, 1.0)
    with pytest.raises(ValueError, match="scale must lie in"):
        dpcore.laplace_noise(np.random.default_rng(0), 3, 1e306)
