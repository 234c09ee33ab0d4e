"""The references checked against each other, and negative controls: a wrong formula is rejected by the same comparison.

Each closed form is compared with an independent evaluation of its defining integral or sum (mpmath
quadrature, brute-force enumeration), and a deliberately wrong twin -- the Gaussian profile without its
e^eps factor, the subsampled Gaussian with one direction only, the Laplace profile without the halving,
k releases as one of k e0 -- must fail the very :class:`_record.Example` comparison the oracle tests use.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath as mp
import pytest
import references as ref
from _record import Example
from mpmath import mpf


def _agree(a: mpf, b: mpf, rel: float = 1e-20) -> bool:
    with mp.workdps(60):
        return bool(abs(a - b) <= max(rel * max(abs(a), abs(b)), mpf(10) ** -45))


def _rejects(value: object, truth: mpf) -> bool:
    ex = Example("control", "-", "-")
    ex.close("wrong", value, truth)
    return len(ex.violations) == 1


@pytest.mark.parametrize("eps", [0.0, 0.3, 1.2, 1.49])
def test_laplace_closed_form_is_the_integral(eps: float) -> None:
    truth = ref.laplace_delta(eps, 2.0, 3.0)
    assert _agree(truth, ref.laplace_delta_quad(eps, 2.0, 3.0), 1e-25)
    with mp.workdps(50):
        wrong = -mp.expm1(mpf(eps) - mpf(1.5))  # without the halving
    assert _rejects(float(wrong), truth)


@pytest.mark.parametrize(("eps", "sigma"), [(0.0, 1.0), (0.5, 1.3), (3.0, 0.7), (0.01, 5.0), (10.0, 0.3)])
def test_gaussian_closed_form_is_the_integral(eps: float, sigma: float) -> None:
    truth = ref.gaussian_delta(eps, sigma)
    assert _agree(truth, ref.gaussian_delta_quad(eps, sigma), 1e-25)
    assert _agree(truth, ref.gaussian_delta_integral(eps, sigma), 1e-25)
    with mp.workdps(50):
        m = 1 / mpf(sigma)
        no_factor = ref._phi(m / 2 - eps / m) - ref._phi(-m / 2 - eps / m)  # the e^eps factor dropped
    if eps > 0:
        assert _rejects(float(no_factor), truth)


@pytest.mark.parametrize(("eps", "s", "q"), [(0.0, 2.0, 0.01), (0.01, 1.5, 0.001), (0.5, 1.0, 0.3), (2.0, 0.6, 0.9)])
def test_subsampled_closed_form_is_the_integral(eps: float, s: float, q: float) -> None:
    for direction in ("remove", "add"):
        closed = ref.sg_delta_direction(eps, s, q, direction)
        assert _agree(closed, ref.sg_delta_quad(eps, s, q, direction), 1e-20), direction


def test_subsampled_one_direction_is_rejected() -> None:
    """A reference with one direction only (here the add direction, the smaller at these points) is caught."""
    caught = 0
    for eps in (0.001, 0.1, 1.0):
        for s, q in ((0.5, 0.5), (1.0, 0.9), (2.0, 0.5)):
            add = ref.sg_delta_direction(eps, s, q, "add")
            caught += _rejects(float(add), ref.sg_delta(eps, s, q))
    assert caught == 9


def test_two_steps_at_two_precisions() -> None:
    """The quadrature over the first step is settled: more digits move it by less than 1e-12."""
    low = ref.sg2_delta(0.04706630004775601, 1.0, 0.002329599824908667)
    high = ref.sg2_delta(0.04706630004775601, 1.0, 0.002329599824908667, dps=45)
    assert _agree(low, high, 1e-12)


@pytest.mark.parametrize("eps", [0.0, 0.4, 1.3, 2.5])
def test_laplace_composition_two_ways(eps: float) -> None:
    assert _agree(ref.laplace_k_delta(eps, 1.3, 1), ref.laplace_delta(eps, 1.0, 1.3), 1e-25)
    mixture = ref.laplace_k_delta(eps, 1.3, 2)
    assert _agree(mixture, ref.laplace_2_delta_nested(eps, 1.3), 1e-20)
    assert _rejects(float(ref.laplace_delta(eps, 1.0, 2.6)), mixture)  # two releases are not one of 2 e0


@pytest.mark.parametrize(("e0", "k"), [(0.7, 1), (0.7, 3), (1.9, 5)])
def test_randomized_response_against_enumeration(e0: float, k: int) -> None:
    with mp.workdps(50):
        p = 1 / (1 + mp.exp(-mpf(e0)))
        outcomes = list(itertools.product((0, 1), repeat=k))

        def brute(eps: float) -> mpf:
            total = mpf(0)
            for out in outcomes:
                truthful = sum(out)
                pp = p**truthful * (1 - p) ** (k - truthful)
                qq = (1 - p) ** truthful * p ** (k - truthful)
                total += max(pp - mp.exp(eps) * qq, 0)
            return total

    for eps in (0.0, 0.3, e0, 1.5 * e0):
        with mp.workdps(50):
            expected = brute(eps)
        assert _agree(ref.rr_delta(eps, e0, k), expected, 1e-25)
    for delta in (1e-3, 0.05, 0.2):
        got = ref.rr_epsilon(delta, e0, k)
        assert _agree(got, ref.epsilon_of(lambda e: ref.rr_delta(e, e0, k), delta), 1e-15)


@pytest.mark.parametrize(("b", "d"), [(Fraction(3, 2), 1), (Fraction(3, 2), 4), (Fraction(1, 3), 3)])
def test_discrete_laplace_against_a_direct_sum(b: Fraction, d: int) -> None:
    with mp.workdps(50):
        bb = mpf(b.numerator) / b.denominator
        c = mp.tanh(1 / (2 * bb))

        def pmf(z: int) -> mpf:
            return c * mp.exp(-abs(z) / bb)

        window = range(-400, 400 + d)
        for eps in (0.0, 0.4, 1.1):
            brute = mp.fsum(max(pmf(z) - mp.exp(eps) * pmf(z - d), 0) for z in window)
            assert _agree(ref.discrete_laplace_delta(eps, b, d), brute, 1e-20)
        for alpha in (1.5, 4.0):
            brute = mp.log(mp.fsum(pmf(z) ** alpha * pmf(z - d) ** (1 - alpha) for z in window)) / (alpha - 1)
            assert _agree(ref.discrete_laplace_rdp(alpha, b, d), brute, 1e-20)


@pytest.mark.parametrize(("s2", "d"), [(Fraction(1, 2), 1), (Fraction(5, 2), 2), (Fraction(9), 3)])
def test_discrete_gaussian_against_a_direct_sum(s2: Fraction, d: int) -> None:
    with mp.workdps(50):
        ss = mpf(s2.numerator) / s2.denominator
        window = range(-200, 200 + d)
        norm = mp.fsum(mp.exp(-(mpf(z) ** 2) / (2 * ss)) for z in window)

        def pmf(z: int) -> mpf:
            return mp.exp(-(mpf(z) ** 2) / (2 * ss)) / norm

        assert _agree(ref._theta_sum(ss), norm, 1e-30)
        for eps in (0.0, 0.3, 1.7):
            brute = mp.fsum(max(pmf(z) - mp.exp(eps) * pmf(z - d), 0) for z in window)
            assert _agree(ref.discrete_gaussian_delta(eps, s2, d), brute, 1e-25)
        for alpha in (1.5, 3.0):
            brute = mp.log(mp.fsum(pmf(z) ** alpha * pmf(z - d) ** (1 - alpha) for z in window)) / (alpha - 1)
            assert _agree(ref.discrete_gaussian_rdp(alpha, s2, d), brute, 1e-25)


@pytest.mark.parametrize(("s", "q"), [(1.1, 0.01), (0.7, 0.3), (3.0, 0.9)])
def test_subsampled_rdp_sum_is_the_integral(s: float, q: float) -> None:
    for n in (2, 3, 7):
        binomial = ref.sg_rdp(n, s, q)
        with mp.workdps(50):
            sd, qq = mpf(s), mpf(q)
            integral = mp.quad(
                lambda z, sd=sd, qq=qq, n=n: (
                    mp.npdf(z, 0, sd) * (1 - qq + qq * mp.exp((2 * z - 1) / (2 * sd * sd))) ** n
                ),
                [-mp.inf, -10 * sd, 0, 1, n, n + 10 * sd, mp.inf],
            )
            assert _agree(binomial, mp.log(integral) / (n - 1), 1e-20)
    assert _agree(ref.laplace_rdp(3.0, 1.0, 1.0), ref.renyi_quad(3.0, _lap(0), _lap(1), [mpf(0), mpf(1)]), 1e-20)


def _lap(mu: float):  # noqa: ANN202 -- a log-density
    return lambda x: -abs(x - mu) - mp.log(2)


def test_inverse_verdict_is_sharp() -> None:
    """Example.inverse accepts the reference root and rejects it moved by 1e-6 either way."""
    root = ref.gaussian_epsilon(1e-5, 1.3)
    sigma = ref.analytic_sigma(0.5, 1e-5)

    def verdict(got: float, profile: object, target: float) -> int:
        ex = Example("control", "-", "-")
        ex.inverse("x", got, profile, target)  # type: ignore[arg-type]
        return len(ex.violations)

    gauss = lambda e: ref.gaussian_delta(e, 1.3)  # noqa: E731
    assert verdict(float(root) * (1 + 1e-15), gauss, 1e-5) == 0
    assert verdict(float(root) * (1 - 1e-6), gauss, 1e-5) == 1  # delivers more than the target
    assert verdict(float(root) * (1 + 1e-6), gauss, 1e-5) == 1  # not the smallest
    by_sigma = lambda s: ref.gaussian_delta(0.5, s)  # noqa: E731
    assert verdict(float(sigma) * (1 + 1e-15), by_sigma, 1e-5) == 0
    assert verdict(float(sigma) * (1 - 1e-6), by_sigma, 1e-5) == 1
