"""Mechanism objects: each profile, inverse and RDP curve against a reference computed outside the class."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate

import dpcore
from dpcore.mechanisms import (
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponse,
)

EPS = [0.0, 0.1, 0.5, 1.0, 1.9, 2.5]


def _hockey_stick_continuous(logp, logq, eps, lo, hi, breaks):
    """int (p - e^eps q)_+ by quadrature, split at the kinks."""
    f = lambda y: max(math.exp(logp(y)) - math.exp(eps + logq(y)), 0.0)  # noqa: E731
    edges = [lo, *sorted(breaks), hi]
    return sum(integrate.quad(f, a, b, epsabs=1e-14, limit=200)[0] for a, b in zip(edges[:-1], edges[1:], strict=True))


@pytest.mark.parametrize("scale, sens", [(1.0, 1.0), (0.5, 2.0), (3.0, 0.5)])
def test_laplace_profile_against_quadrature(scale, sens):
    m = LaplaceMechanism(scale, sens)
    logp = lambda y: -abs(y) / scale - math.log(2 * scale)  # noqa: E731
    logq = lambda y: -abs(y - sens) / scale - math.log(2 * scale)  # noqa: E731
    for e in EPS:
        ref = _hockey_stick_continuous(logp, logq, e, -60 * scale, 60 * scale + sens, [0.0, sens])
        assert m.delta(e) == pytest.approx(ref, abs=1e-10)
    for d in (1e-6, 1e-3, 0.05, 0.3, 0.9):
        e = m.epsilon(d)
        assert m.delta(e) <= d  # never promises more than it delivers
        if e > 0:
            assert m.delta(e) == pytest.approx(d, rel=1e-12)
        else:
            assert m.delta(0.0) <= d
    np.testing.assert_allclose(m.rdp([1.5, 2.0, 10.0]), dpcore.laplace_rdp([1.5, 2.0, 10.0], scale, sens))
    assert LaplaceMechanism.calibrate(0.5, 2.0) == LaplaceMechanism(4.0, 2.0)


def _dlap_brute(scale, sens, eps=None, alpha=None):
    b = mp.mpf(scale.numerator) / scale.denominator
    t = mp.tanh(1 / (2 * b))
    zs = range(-int(80 * b) - 80, int(80 * b) + sens + 80)
    p = [t * mp.exp(-abs(z) / b) for z in zs]
    q = [t * mp.exp(-abs(z - sens) / b) for z in zs]
    if eps is not None:
        return float(sum(max(pi - mp.exp(eps) * qi, 0) for pi, qi in zip(p, q, strict=True)))
    return float(mp.log(sum(pi**alpha * qi ** (1 - alpha) for pi, qi in zip(p, q, strict=True))) / (alpha - 1))


@pytest.mark.parametrize("scale, sens", [(Fraction(1), 1), (Fraction(3, 2), 3), (Fraction(1, 3), 2), (Fraction(5), 7)])
def test_discrete_laplace_profile_and_rdp_against_brute_force(scale, sens):
    m = DiscreteLaplaceMechanism(scale, sens)
    with mp.workdps(30):
        for e in EPS:
            assert m.delta(e) == pytest.approx(_dlap_brute(scale, sens, eps=e), abs=1e-12)
        for a in (1.5, 2.0, 7.0):
            assert m.rdp(a) == pytest.approx(_dlap_brute(scale, sens, alpha=a), rel=1e-9)
    assert m.rdp(1e6) <= m.pure_epsilon
    e = m.epsilon(1e-3)
    assert m.delta(e) <= 1e-3 + 1e-12 and 0 < e <= m.pure_epsilon


def test_randomized_response_against_enumeration():
    m = RandomizedResponse(1.3)
    p = math.exp(1.3) / (1 + math.exp(1.3))
    for e in EPS:
        ref = max(p - math.exp(e) * (1 - p), 0.0) + max((1 - p) - math.exp(e) * p, 0.0)
        assert m.delta(e) == pytest.approx(ref, abs=1e-15)
    for a in (1.5, 3.0):
        ref = math.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)
        assert m.rdp(a) == pytest.approx(ref, rel=1e-12)
    assert m.delta(1.3) == pytest.approx(0.0, abs=1e-15) and m.epsilon(1e-9) == pytest.approx(1.3, rel=1e-6)
    assert m.epsilon(0.99) == 0.0


@pytest.mark.parametrize(
    ("epsilon0", "delta"), [(40.53726257989577, 1 - 2**-53), (40.5, 1 - 1e-10), (5.0, 0.6), (3.0, 0.9)]
)
def test_randomized_response_epsilon_near_delta_one(epsilon0, delta):
    """The inverse at delta > 1/2 through 1 - delta(eps) = (1 - p) + p e^{eps - eps0}, against 60 digits."""
    import mpmath as mp

    with mp.workdps(60):
        e0 = mp.mpf(epsilon0)
        p = mp.exp(e0) / (1 + mp.exp(e0))
        truth = mp.log((p - mp.mpf(delta)) / (1 - p))  # p - e^eps (1 - p) = delta
        got = RandomizedResponse(epsilon0).epsilon(delta)
        assert truth <= got <= truth * (1 + mp.mpf("1e-12"))


def _discrete_profile_by_direct_sum(p, q, zs, eps):
    """sum_z (p(z) - e^eps q(z))_+ over ``zs`` in 60-digit mpmath: the profile's definition, nothing else."""
    with mp.workdps(60):
        e = mp.exp(mp.mpf(eps))
        return mp.fsum(max(p(z) - e * q(z), 0) for z in zs)


@pytest.mark.parametrize(
    ("sigma2", "d", "below"),
    [
        (Fraction(7, 3072), 25001, 1),
        (Fraction(7, 3072), 25001, 3),
        (Fraction(1, 10), 10**6, 2),
        (Fraction(1, 3072), 25001, 1),
    ],
)
def test_discrete_gaussian_profile_next_to_a_kink(sigma2, d, below):
    """A few doubles below the largest loss D^2/(2 sigma2) (~1e11): eps - loss in doubles was all rounding
    there (delta 5e-96 for 1.09e-5); now a few ulp relative of the direct sum."""
    eps = float(Fraction(d * d) / (2 * sigma2))
    for _ in range(below):
        eps = math.nextafter(eps, 0.0)
    with mp.workdps(60):
        s2 = mp.mpf(sigma2.numerator) / sigma2.denominator
        k = int(40 * math.sqrt(float(sigma2))) + 10
        norm = mp.fsum(mp.exp(-(mp.mpf(z) ** 2) / (2 * s2)) for z in range(-k - 1, k + 2))
        truth = _discrete_profile_by_direct_sum(
            lambda z: mp.exp(-(mp.mpf(z) ** 2) / (2 * s2)) / norm,
            lambda z: mp.exp(-(mp.mpf(z - d) ** 2) / (2 * s2)) / norm,
            range(-k - 1, k + 2),
            eps,
        )
    got = DiscreteGaussianMechanism(sigma2, d).delta(eps)
    assert abs(mp.mpf(got) - truth) <= mp.mpf("1e-13") * truth


@pytest.mark.parametrize(
    ("scale", "d", "z"),
    [
        (Fraction(3, 7), 25001, 1),
        (Fraction(3, 7), 25001, 2),
        (Fraction(5, 3), 400, 1),
        (Fraction(3, 7), 10**7, 1),
        (Fraction(3, 7), 10**7, 2),
    ],
)
def test_discrete_laplace_profile_next_to_a_kink(scale, d, z):
    """The double just below the interior loss (D - 2z)/b: a few ulp relative of the direct sum (in doubles
    the near-kink terms were off by about 1e-16 D relatively, 5e-10 at D = 1e7)."""
    eps = math.nextafter(float(Fraction(d - 2 * z) / scale), 0.0)
    with mp.workdps(60):
        b = mp.mpf(scale.numerator) / scale.denominator
        c = mp.tanh(1 / (2 * b))
        w = math.ceil(400 * float(scale)) + 10  # p(x) < e^-400 beyond w of 0, q(x) beyond w of D: left out
        span = sorted(set(range(-w, w)) | set(range(d - w, d + w)))
        truth = _discrete_profile_by_direct_sum(
            lambda x: c * mp.exp(-abs(x) / b), lambda x: c * mp.exp(-abs(x - d) / b), span, eps
        )
    got = DiscreteLaplaceMechanism(scale, d).delta(eps)
    assert abs(mp.mpf(got) - truth) <= mp.mpf("1e-13") * truth


def test_gaussian_delegates():
    m = GaussianMechanism.calibrate(1.0, 1e-5)
    assert m.delta(1.0) <= 1e-5
    assert m.epsilon(1e-5) == pytest.approx(1.0, rel=1e-9)
    assert m.rdp(2.0) == pytest.approx(2.0 / (2 * m.sigma**2))


def test_sampling_and_audit_interface():
    lap = LaplaceMechanism.calibrate(1.0)
    x = lap.sample(np.zeros(3), size=4, rng=1)
    assert x.shape == (4, 3)
    assert isinstance(lap.sample(2.0, rng=1), float)
    y = DiscreteLaplaceMechanism(2, 1).sample(np.array([5, 6]), rng=2)
    assert y.dtype.kind == "i" and y.shape == (2,)
    bits = RandomizedResponse(2.0).sample(np.ones(10_000, dtype=int), rng=3)
    p = math.exp(2.0) / (1 + math.exp(2.0))
    assert dpcore.probability_result(int(bits.sum()), bits.size, p, alpha=1e-7).passed
    # the same object is a mechanism for the auditor; an audit at epsilon 1 stays below it
    res = dpcore.audit_epsilon(lap, 0.0, 1.0, 20_000, confidence=1 - 1e-7, rng=4)
    assert res.epsilon_lower <= 1.0


def test_bad_input():
    with pytest.raises(ValueError, match="scale"):
        LaplaceMechanism(0.0)
    with pytest.raises(ValueError, match="sigma"):
        GaussianMechanism(float("nan"))
    with pytest.raises(ValueError, match="sensitivity"):
        DiscreteLaplaceMechanism(1, 0)
    with pytest.raises(ValueError, match="sensitivity"):
        DiscreteLaplaceMechanism(1, 10**8)
    with pytest.raises(ValueError, match="epsilon0"):
        RandomizedResponse(-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        LaplaceMechanism(1.0).delta(-0.1)
    with pytest.raises(ValueError, match="delta"):
        LaplaceMechanism(1.0).epsilon(0.0)
    with pytest.raises(ValueError, match="orders"):
        RandomizedResponse(1.0).rdp(1.0)
    with pytest.raises(ValueError, match="value"):
        DiscreteLaplaceMechanism(1).sample(0.5)
    with pytest.raises(ValueError, match="value"):
        RandomizedResponse(1.0).sample(2)
    with pytest.raises(ValueError, match="value"):
        LaplaceMechanism(1.0).sample(float("inf"))


@pytest.mark.parametrize(
    "mech",
    [
        LaplaceMechanism(0.7, 1.3),
        DiscreteLaplaceMechanism(Fraction(2, 3), 2),
        DiscreteGaussianMechanism(Fraction(9, 4), 2),
        RandomizedResponse(0.9),
    ],
    ids=["laplace", "dlap", "dgauss", "rr"],
)
def test_inverse_never_promises_more_than_it_delivers(mech):
    for d in np.geomspace(1e-12, 0.99, 60):
        e = mech.epsilon(float(d))
        assert e >= 0 and mech.delta(e) <= d


def test_accountant_takes_mechanism_objects():
    a, b = dpcore.RdpAccountant(), dpcore.RdpAccountant()
    a.compose(GaussianMechanism(2.0), count=10)
    a.compose(LaplaceMechanism(3.0), count=2)
    b.compose_gaussian(2.0, count=10)
    b.compose_laplace(3.0, count=2)
    assert a.epsilon(1e-5) == b.epsilon(1e-5)
    c = dpcore.RdpAccountant()
    c.compose(RandomizedResponse(0.5), count=4)  # a mechanism the accountant has no method for
    assert 0 < c.epsilon(1e-5) <= 4 * 0.5


def test_auditor_call_refuses_what_sample_refuses():
    """The auditor's call passes data to ``sample`` unchanged: 1.7 is not silently truncated to 1."""
    gen = np.random.default_rng(5)
    with pytest.raises(ValueError, match="value"):
        DiscreteLaplaceMechanism(1)(1.7, 3, gen)
    with pytest.raises(ValueError, match="value"):
        RandomizedResponse(1.0)(0.5, 3, gen)
    assert DiscreteLaplaceMechanism(1)(4, 3, gen).dtype == np.float64


def _mp_discrete_gaussian(sigma2: Fraction, sens: int):
    """pmf of N_Z(0, sigma2) by mpmath at 40 digits over |z| <= 60 sigma + 20 + sens (omitted mass < e^-1800)."""
    s2 = mp.mpf(sigma2.numerator) / sigma2.denominator
    k = int(60 * math.sqrt(float(sigma2))) + 20 + sens
    zs = range(-k, k + 1)
    c = mp.fsum(mp.exp(-(mp.mpf(z) ** 2) / (2 * s2)) for z in zs)
    return s2, zs, (lambda z: mp.exp(-(mp.mpf(z) ** 2) / (2 * s2)) / c)


@pytest.mark.parametrize(("sigma2", "sens"), [(Fraction(1, 4), 1), (Fraction(4), 1), (Fraction(50), 3)])
def test_discrete_gaussian_profile_and_rdp_against_mpmath(sigma2, sens):
    mech = DiscreteGaussianMechanism(sigma2, sens)
    with mp.workdps(40):
        s2, zs, p = _mp_discrete_gaussian(sigma2, sens)
        for eps in (0.0, 0.3, 1.0, 3.0):
            ref = mp.fsum(max(mp.mpf(0), p(z) - mp.exp(eps) * p(z - sens)) for z in zs)
            if ref > 1e-300:
                assert abs(float(mech.delta(eps)) / float(ref) - 1) < 1e-10, (eps, float(ref))
        for a in (1.5, 2.0, 7.0):
            ref = mp.log(mp.fsum(p(z) ** a * p(z - sens) ** (1 - a) for z in zs)) / (a - 1)
            assert abs(float(mech.rdp(a)) - float(ref)) <= 1e-10 * max(1.0, float(ref)), a
            continuous = a * sens**2 / (2 * float(s2))
            assert float(mech.rdp(a)) <= continuous * (1 + 1e-12)
    # at sigma2 = 1/4 the theta sums differ: a half-integer shift gives strictly less than the continuous bound,
    # an integer order gives exactly it (CKS20); the same check with the continuous formula as the claim fails
    if sigma2 == Fraction(1, 4):
        assert float(mech.rdp(1.5)) < 0.99 * 1.5 * sens**2 / (2 * 0.25)  # 2.942 < 3
        assert float(mech.rdp(2.0)) == pytest.approx(2 * sens**2 / (2 * 0.25), rel=1e-12)


def test_discrete_gaussian_sampling_and_bad_input():
    out = DiscreteGaussianMechanism(4).sample(np.arange(3), 5, rng=0)
    assert out.shape == (5, 3) and out.dtype.kind == "i"
    assert isinstance(DiscreteGaussianMechanism(4).sample(7, rng=1), int)
    assert DiscreteGaussianMechanism(4).pure_epsilon is None
    with pytest.raises(ValueError, match="value"):
        DiscreteGaussianMechanism(4).sample(0.5)
    with pytest.raises(ValueError, match="sigma2"):
        DiscreteGaussianMechanism(0)
    with pytest.raises(ValueError, match="sensitivity"):
        DiscreteGaussianMechanism(4, 10**7)


def test_discrete_laplace_loss_leaves_out_only_atoms_of_no_mass() -> None:
    """Issue 28: the 10**7-atom loss (2.6 GiB in the accountant) keeps the atoms of P-mass above e^-800 only.

    Reference: the full law written out here from the definition, L = (|K - D| - |K|)/t with K discrete
    Laplace, in 50-digit mpmath; the kept atoms agree, and every atom the law does not show has P-mass below
    1e-320 (0 in doubles, where the old law's exp(log-mass) also put it).
    """
    import mpmath as mp

    t, d = Fraction(1, 2), 2000
    loss = dpcore.DiscreteLaplaceMechanism(t, d).privacy_losses()[0]
    with mp.workdps(50):
        tm = mp.mpf(t.numerator) / t.denominator
        c = (1 - mp.e ** (-1 / tm)) / (1 + mp.e ** (-1 / tm))
        full = {float((d - 2 * k) / tm): c * mp.e ** (-k / tm) for k in range(1, d)}
        full[float(d / tm)] = 1 / (1 + mp.e ** (-1 / tm))
        full[float(-d / tm)] = mp.e ** (-d / tm) / (1 + mp.e ** (-1 / tm))
    kept = np.unique(np.concatenate([[loss.lower, loss.upper], np.linspace(loss.lower, loss.upper, 20001)]))
    cdf = loss.cdf(kept)
    for v in (d / float(t), (d - 2) / float(t), (d - 800) / float(t)):
        mass = float(loss.cdf(np.array([v]))[0] - loss.cdf(np.array([v - 1e-9]))[0])
        assert mass == pytest.approx(float(full[v]), rel=1e-12, abs=1e-300)
    shown = {v: float(loss.cdf(np.array([v]))[0] - loss.cdf(np.array([v - 1e-9]))[0]) for v in full}
    dropped = [m for v, m in full.items() if shown[v] == 0.0]
    assert dropped and max(dropped) < 1e-320  # an atom the law does not show has no mass in doubles
    assert np.all(np.diff(cdf) >= 0)


@pytest.mark.parametrize(
    ("mechanism", "target"),
    [
        (lambda: LaplaceMechanism(2.8124588046841577e-165), 1e-5),
        (lambda: LaplaceMechanism(1.735046281834856e-13, 0.4780045683875172), 6.463382008565736e-83),
        (lambda: LaplaceMechanism(1e-300), 0.9999924004910127),
        (lambda: RandomizedResponse(0.699725270637597), 1.1635041879529873e-105),
    ],
)
def test_epsilon_never_rounds_the_pure_epsilon_down(mechanism, target: float) -> None:
    """Issue 28: where the answer is the pure epsilon, it is at least the exact one (true delta there 0, mpmath)."""
    m = mechanism()
    got = m.epsilon(target)
    if isinstance(m, LaplaceMechanism):
        assert Fraction(got) >= Fraction(m.sensitivity) / Fraction(m.scale)
    else:
        with mp.workdps(400):
            e0, g = mp.mpf(m.epsilon0), mp.mpf(got)
            p = mp.exp(e0) / (1 + mp.exp(e0))
            assert p - mp.exp(g) * (1 - p) <= target


def test_discrete_laplace_epsilon_near_delta_one() -> None:
    """Issue 28: a delta within 1e-16 of 1 is solved on 1 - delta: 210579.637..., not 210579.862 (mpmath)."""
    m = DiscreteLaplaceMechanism(Fraction(107, 11267976), 2)
    target = 0.9999999999999999
    got = m.epsilon(target)
    with mp.workdps(50):  # 1 - delta(eps) = e^{eps - D/b}/(1+r) + (e^{-D/b} + tanh(1/2b) e^{-1/b}) / ..., all tiny
        b = mp.mpf(107) / 11267976
        r, t = mp.exp(-1 / b), mp.tanh(1 / (2 * b))
        compl = lambda e: mp.exp(e - 2 / b) / (1 + r) + mp.exp(-2 / b) / (1 + r) + t * min(r, mp.exp(e - 1 / b))  # noqa: E731
        truth = mp.findroot(lambda e: compl(e) - (1 - mp.mpf(target)), 210579.6)
    assert abs(got - truth) <= 1e-12 * truth
    assert compl(mp.mpf(got)) >= 1 - mp.mpf(target)


# ------------------------------------------------------------------- issue 28: RDP near order 1, by mpmath


def _mp_rr_rdp(alpha: float, e0: float) -> mp.mpf:
    """log(p e^{c e0} + q e^{-c e0})/c, c = alpha - 1, at 700 digits (e0 down to 1e-300, c down to 2^-52)."""
    with mp.workdps(700):
        a, e = mp.mpf(alpha), mp.mpf(e0)
        p, q = 1 / (1 + mp.exp(-e)), mp.exp(-e) / (1 + mp.exp(-e))
        return mp.log(p * mp.exp((a - 1) * e) + q * mp.exp(-(a - 1) * e)) / (a - 1)


def _mp_discrete_laplace_rdp(alpha: float, scale: Fraction, d: int) -> mp.mpf:
    """(1/c) log sum_z p^a q^(1-a) by brute force over z in [-K, d + K] at 80 digits (tails beyond are e^-200)."""
    with mp.workdps(80):
        a, b = mp.mpf(alpha), mp.mpf(scale.numerator) / scale.denominator
        k = int(200 * float(scale)) + 2
        c = mp.tanh(1 / (2 * b))
        total = mp.fsum(c * mp.exp(-(a * abs(z) + (1 - a) * abs(z - d)) / b) for z in range(-k, d + k + 1))
        return mp.log(total) / (a - 1)


@pytest.mark.parametrize(
    ("alpha", "e0"),
    [(1.0 + 2.0**-52, 1.0), (1.0 + 2.0**-52, 30.0), (1.0 + 1e-9, 1e-150), (1.0 + 2.0**-52, 3e-154), (3.0, 1e-8)],
)
def test_randomized_response_rdp_near_order_one(alpha: float, e0: float) -> None:
    """0.25 for the KL 0.462 at order 1 + 2^-52 (issue 28): log(I)/(alpha - 1) lost every digit of log I."""
    truth = _mp_rr_rdp(alpha, e0)
    got = RandomizedResponse(e0).rdp(alpha)
    assert abs(mp.mpf(got) - truth) <= 1e-14 * truth
    assert RandomizedResponse(e0).rdp(np.array([alpha, 2.0]))[0] == got


@pytest.mark.parametrize(
    ("alpha", "scale", "d"),
    [
        (1.0 + 2.0**-52, Fraction(1), 1),
        (1.0000000000004605, Fraction(1), 229),
        (1.0 + 2.0**-52, Fraction(3, 2), 7),
        (1.01, Fraction(40), 3),
        (1.0 + 1e-6, Fraction(1, 3), 5),
    ],
)
def test_discrete_laplace_rdp_near_order_one(alpha: float, scale: Fraction, d: int) -> None:
    truth = _mp_discrete_laplace_rdp(alpha, scale, d)
    got = DiscreteLaplaceMechanism(scale, d).rdp(alpha)
    assert abs(mp.mpf(got) - truth) <= 1e-14 * truth


def test_discrete_laplace_rdp_near_order_one_at_large_scale() -> None:
    """Scale 16777215, sensitivity 16953 gave 0.0 at order 1 + 2^-52 (issue 28); the KL is about 5.1e-7.

    Reference: the closed form (two geometric tails, a geometric middle) at 120 digits."""
    b, d, alpha = mp.mpf(16777215), 16953, 1.0 + 2.0**-52
    with mp.workdps(120):
        a = mp.mpf(alpha)
        r = mp.exp(-1 / b)
        w = mp.exp((1 - 2 * a) / b)
        s = (mp.exp((a - 1) * d / b) + r**d * mp.exp(-(a - 1) * d / b)) / (1 + r)
        s += -mp.expm1(-1 / b) / (1 + r) * mp.exp((a - 1) * d / b) * w * (1 - w ** (d - 1)) / (1 - w)
        truth = mp.log(s) / (a - 1)
    got = DiscreteLaplaceMechanism(16777215, d).rdp(alpha)
    assert abs(mp.mpf(got) - truth) <= 1e-14 * truth
    grid = DiscreteLaplaceMechanism(16777215, d).rdp(dpcore.DEFAULT_RDP_ORDERS)
    assert np.all(np.diff(grid) >= 0) and grid[0] >= got


@pytest.mark.parametrize(
    ("alpha", "sigma2", "sens"),
    [
        (1.0 + 2.0**-52, Fraction(7, 3), 32),  # gave 219.338 for 219.429
        (1.0 + 2.0**-52, Fraction(26, 275), 2),
        (1.0000000000002163, Fraction(1598, 21), 10),
        (1.0 + 1e-9, Fraction(1, 3), 1),
        (1.0 + 2.0**-52, Fraction(1, 2), 1),
    ],
)
def test_discrete_gaussian_rdp_near_order_one(alpha: float, sigma2: Fraction, sens: int) -> None:
    """The difference of two theta-sum logs, divided by alpha - 1, lost every digit near order 1 (issue 28).

    Reference: sum_z p^a q^(1-a) by brute force over the integers at 80 digits."""
    with mp.workdps(80):
        s2, zs, p = _mp_discrete_gaussian(sigma2, sens)
        a = mp.mpf(alpha)
        truth = mp.log(mp.fsum(p(z) ** a * p(z - sens) ** (1 - a) for z in zs)) / (a - 1)
    got = DiscreteGaussianMechanism(sigma2, sens).rdp(alpha)
    assert abs(mp.mpf(got) - truth) <= 1e-14 * truth


def test_gaussian_self_composition_rounds_its_sensitivity_up() -> None:
    """Issue 28 (oracle): sqrt(k) * sensitivity rounded down by one ulp at sensitivity 1.7e123 and k = 1.3e8 gave an
    epsilon (about 1.9e254) at which the true composition's delta is 1: the composed sensitivity must be >= the exact
    one (checked in rationals), and at most a few ulps above it."""
    for sens, k in [(1.719523457264593e123, 128703456), (1.0, 3), (0.1, 10**12), (7.0, 2)]:
        c = dpcore.GaussianMechanism(1.0, sens).self_composition(k)
        exact = k * Fraction(sens) ** 2
        assert Fraction(c.sensitivity) ** 2 >= exact
        assert Fraction(math.nextafter(c.sensitivity, 0.0)) ** 2 < exact or c.sensitivity == math.sqrt(k) * sens


def test_pure_epsilons_are_rounded_up() -> None:
    """Issue 28 (oracle): Delta/b rounded to nearest fell one ulp below the true ratio, where the profile is still
    positive, and the exact Laplace composition at that epsilon0 put delta_bracket's upper end (1e-320) below the
    truth (3.9e-31) at epsilon = epsilon0."""
    for scale in (1.0 / 1.0000000000000009, 0.1, 1 / 3, 7e-300):
        m = dpcore.LaplaceMechanism(scale)
        assert Fraction(m.pure_epsilon) >= 1 / Fraction(scale)
        assert Fraction(math.nextafter(m.pure_epsilon, 0.0)) < 1 / Fraction(scale)
    d = dpcore.DiscreteLaplaceMechanism(Fraction(1, 3), 2)
    assert Fraction(d.pure_epsilon) >= 6
