"""dpbook.reference: the mpmath references agree with each other and with closed forms (no dpcore involved)."""

from __future__ import annotations

import mpmath as mp
import pytest

from dpbook import reference as ref


@pytest.fixture(autouse=True)
def _fifty_digits():
    """The references return 50-digit mpf values; compare them at 50 digits, not at mpmath's default 15."""
    with mp.workdps(ref.DPS):
        yield


@pytest.mark.parametrize(("sigma", "eps"), [(0.05, 0.0), (0.3, 1e-3), (1.0, 1.0), (3.0, 5.0), (20.0, 0.1)])
def test_theorem8_and_chi_forms_agree(sigma: float, eps: float) -> None:
    a, b = ref.gaussian_delta(sigma, eps), ref.gaussian_delta_chi(sigma, eps)
    assert abs(a / b - 1) < mp.mpf(10) ** -40


def test_profile_at_zero_is_the_total_variation_of_the_two_normals() -> None:
    # delta(0) = Phi(1/(2s)) - Phi(-1/(2s)) = erf(1/(2 s sqrt 2))
    for s in (0.1, 1.0, 7.0):
        assert abs(ref.gaussian_delta(s, 0) - mp.erf(1 / (2 * s * mp.sqrt(2)))) < mp.mpf(10) ** -45
    # sensitivity enters only through sigma / sensitivity
    assert ref.gaussian_delta(2.0, 0.7, sensitivity=4.0) == ref.gaussian_delta(0.5, 0.7)


def test_epsilon_and_sigma_invert_the_profile() -> None:
    for sigma, delta in [(0.5, 1e-12), (1.0, 1e-5), (5.0, 0.01)]:
        e = ref.gaussian_epsilon(sigma, delta)
        assert e > 0 and abs(ref.gaussian_delta(sigma, e) / delta - 1) < mp.mpf(10) ** -35
    assert ref.gaussian_epsilon(5.0, 0.5) == 0  # delta(0) = erf(0.1/sqrt 2) = 0.0797 <= 0.5
    for eps, delta in [(0.01, 1e-10), (1.0, 1e-5), (50.0, 1e-100)]:
        s = ref.analytic_sigma(eps, delta)
        assert abs(ref.gaussian_delta(s, eps) / delta - 1) < mp.mpf(10) ** -30
        # the profile decreases in sigma, so a smaller sigma would violate delta: the root is the smallest
        assert ref.gaussian_delta(s * (1 - mp.mpf(10) ** -20), eps) > delta


def test_laplace_rdp_against_quadrature_and_its_limits() -> None:
    for alpha, b in [(1.5, 1.0), (8.0, 0.5), (40.0, 3.0)]:
        c = mp.log(2 * b)  # normalised log-densities of Lap(0, b) and Lap(1, b)
        quad = ref.renyi_by_quadrature(
            lambda x, b=b, c=c: -abs(x) / b - c, lambda x, b=b, c=c: -abs(x - 1) / b - c, alpha, [0, 1]
        )
        assert abs(quad - ref.laplace_rdp(alpha, b)) < mp.mpf(10) ** -25
    # alpha -> oo: the pure epsilon 1/b; the same check on a wrong scale fails
    assert abs(ref.laplace_rdp(1e12, 0.5) - 2) < 1e-9
    assert abs(ref.laplace_rdp(1e12, 0.5) - 1) > 0.5
