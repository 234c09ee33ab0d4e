"""Unit tests for dpcore.symbolic: shared symbols, densities and the equality check."""

import sympy as sp

from dpcore import symbolic as S


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
