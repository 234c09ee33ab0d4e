"""Unit tests for dpbook.symbolic: shared symbols, densities and the equality check."""

import sympy as sp

from dpbook import symbolic as S


def test_assumptions():
    assert S.b.is_positive and S.epsilon.is_positive and S.Delta.is_positive and S.sigma.is_positive
    assert S.x.is_real and S.mu.is_real and S.s.is_positive
    assert S.k.is_integer and S.k.is_positive


def test_densities_normalised():
    assert sp.simplify(sp.integrate(S.laplace_density(), (S.x, -sp.oo, sp.oo))) == 1
    assert sp.simplify(sp.integrate(S.gaussian_density(), (S.x, -sp.oo, sp.oo))) == 1


def test_laplace_expectation_matches_known_moments():
    assert sp.simplify(S.laplace_expectation(S.x) - S.mu) == 0
    assert sp.simplify(S.laplace_expectation((S.x - S.mu) ** 2) - 2 * S.b**2) == 0


def test_cdf_by_integration_matches_scipy_numerically():
    from scipy import stats

    left, right = S.laplace_cdf_by_integration()
    vals = {S.mu: 0.3, S.b: 1.7, S.s: 0.9}
    assert abs(float(left.subs(vals)) - stats.laplace(0.3, 1.7).cdf(0.3 - 0.9)) < 1e-14
    assert abs(float(right.subs(vals)) - stats.laplace(0.3, 1.7).cdf(0.3 + 0.9)) < 1e-14


def test_is_equal_can_fail():
    assert S.is_equal(sp.exp(S.x) * sp.exp(-S.x), 1)
    assert S.is_equal(sp.erfc(S.s), 1 - sp.erf(S.s))
    assert not S.is_equal(2 * S.b**2, S.b**2)
    try:
        S.assert_equal(S.mu + S.b, S.mu, "wrong mean")
    except AssertionError as exc:
        assert "wrong mean" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("assert_equal accepted a wrong claim")


def test_is_equal_respects_assumptions():
    """log(x**2) = 2 log(x) holds for positive x only; force=True once 'proved' it for real x."""
    xr = sp.Symbol("xr", real=True)
    xp = sp.Symbol("xp", positive=True)
    assert not S.is_equal(sp.log(xr**2), 2 * sp.log(xr))  # the negative control
    assert S.is_equal(sp.log(xp**2), 2 * sp.log(xp))
    assert not S.is_equal(sp.sqrt(xr**2), xr)
    assert S.is_equal(sp.sqrt(xr**2), sp.Abs(xr))
    yr = sp.Symbol("yr", real=True)
    assert not S.is_equal((xr * yr) ** S.alpha, xr**S.alpha * yr**S.alpha)  # false for x, y < 0
    assert S.is_equal((xr * S.b) ** S.alpha, xr**S.alpha * S.b**S.alpha)  # true: b > 0


def test_numeric_confirmation_samples_negatives_and_catches_disagreement():
    xr = sp.Symbol("xr", real=True)
    assert S.numerically_equal(sp.Abs(xr), sp.sqrt(xr**2))
    assert not S.numerically_equal(sp.Abs(xr), xr)  # fails at the negative points
    assert S.numerically_equal(xr, xr + 1e-20)  # within rtol
    assert not S.numerically_equal(sp.log(xr), sp.log(xr) + 1, domain={xr: (1.0, 2.0)})
    yr = sp.Symbol("yr", real=True)
    # at x, y < 0 the left side is real and the right side complex: a disagreement, not a skip
    assert not S.numerically_equal((xr * yr) ** sp.Rational(1, 2), sp.sqrt(xr) * sp.sqrt(yr))


def test_numeric_confirmation_does_not_overflow() -> None:
    """Huge values at random points (exp of 1e4) are compared, not an OverflowError."""
    import sympy as sp

    from dpbook.symbolic import is_equal

    t = sp.Symbol("t", positive=True)
    assert is_equal(sp.exp(100 * t) * sp.exp(100 * t), sp.exp(200 * t))
    assert not is_equal(sp.exp(200 * t), sp.exp(200 * t) + 1)
