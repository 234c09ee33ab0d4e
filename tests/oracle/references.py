r"""Independent references for every number dpcore reports, in mpmath (40 digits or more).

Nothing here imports dpcore or repeats its code paths: each privacy profile is derived again from the
two output densities :math:`p, q` of a pair of neighbours,

.. math:: \delta(\varepsilon) = \int (p - e^\varepsilon q)_+ = E_P\big[(1 - e^{\varepsilon - L})_+\big],
          \qquad L = \log(p/q),

evaluated in closed form (normal tails by ``mpmath.erfc``, geometric and binomial sums, Poisson
summation) wherever the region ``{p > e^eps q}`` is a half-line or an index range found exactly, and by
``mpmath.quad`` of the defining integral where it is not (the Laplace k-fold composition, and the
cross-checks in ``test_oracle_references.py``). Subtractions that cancel are evaluated at 50 digits and
again at twice that until two precisions agree to 1e-30 relative (:func:`adaptive`), so a reference is
good to far better than the 1e-9 the tests ask of the library.

Every function takes Python floats / ints / Fractions (converted exactly: ``mpf(float)`` is exact) and
returns an ``mpf`` (or a tuple of them). Profiles are defined for every real epsilon (``-inf`` and
``inf`` included), not only epsilon >= 0.

Families (one reference each):

* Laplace mechanism: :func:`laplace_delta` (closed form derived below), :func:`laplace_epsilon`,
  :func:`laplace_rdp` (Mironov 2017, Prop. 6, rederived as a sum of three exponential integrals);
* Gaussian mechanism: :func:`gaussian_delta` (Balle & Wang 2018, Thm. 8), :func:`gaussian_epsilon`
  (its inverse, by a bracketing root finder), :func:`analytic_sigma` (the smallest sigma),
  :func:`classic_sigma`, :func:`gaussian_rdp`; k-fold composition = one Gaussian with ``sqrt(k) D``;
* discrete Laplace and discrete Gaussian: :func:`discrete_laplace_delta` (geometric sums),
  :func:`discrete_laplace_rdp`, :func:`discrete_gaussian_delta` (a positive-term sum over the integers),
  :func:`discrete_gaussian_rdp` (theta functions by Poisson summation); inverses by :func:`epsilon_of`;
* randomized response and its k-fold composition: :func:`rr_delta`, :func:`rr_epsilon` (exact binomial
  sums; the inverse exactly on the segment of the piecewise law), :func:`rr_rdp`;
* Poisson-subsampled Gaussian, one step: :func:`sg_delta` (both directions, threshold found exactly,
  normal tails), two steps: :func:`sg2_delta` (``mpmath.quad`` over the first step's output of the
  second step's profile); :func:`sg_rdp` (Mironov, Talwar & Zhang 2019: binomial sum at integer orders,
  ``mpmath.quad`` of the defining integral at fractional ones);
* Laplace k-fold composition: :func:`laplace_k_delta` (the loss is a mixture over how many releases
  fall on each atom and how many in between; the in-between sum is a tilted Irwin--Hall law, integrated
  by ``mpmath.quad`` piecewise), and :func:`laplace_k_tv_bound` (``delta(0) <= k (1 - e^{-e0/2})``);
* RDP conversion: :func:`rdp_to_dp` (Canonne, Kamath & Steinke 2020, Prop. 12 / Mironov 2017 Prop. 3
  and the Bretagnolle--Huber rule, as dpcore's docstring states them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

import mpmath as mp
import numpy as np
from mpmath import mpf
from scipy.special import gammaln

DPS = 50
_AGREE = mpf(10) ** -30

Real = float | int | Fraction


def _m(x: Real) -> mpf:
    """Exact conversion of a float / int; a Fraction to the working precision."""
    if isinstance(x, Fraction):
        return mpf(x.numerator) / mpf(x.denominator)
    return mpf(x)


def _frac(x: Real | mpf) -> Fraction:
    """Exact rational value of a float, int, Fraction or (finite) mpf."""
    if isinstance(x, mpf):
        man, exp = x.man_exp
        return Fraction(int(man)) * Fraction(2) ** int(exp)
    return Fraction(x)


def adaptive(fn: Callable[[], mpf], start: int = DPS, limit: int = 3200) -> mpf:
    """``fn()`` at ``start`` digits, then at twice that, ... until two agree to 1e-30 relative.

    Two zeros do not agree (a difference that cancels completely at two precisions is not settled):
    a reference whose answer can be exactly 0 decides that before calling this.
    """
    prev: mpf | None = None
    dps = start
    while dps <= limit:
        with mp.workdps(dps):
            val = fn()
        if prev is not None and val != 0 and abs(val - prev) <= _AGREE * abs(val):
            return val
        prev, dps = val, 2 * dps
    raise ArithmeticError(f"reference did not settle by {limit} digits (last {prev})")


def digits(*magnitudes: mpf) -> int:
    """Working digits for exponentials of arguments of these sizes: 50 plus their decimal orders.

    ``e^{-x}`` keeps 30 correct digits only if ``x`` itself is carried to 30 digits *after* its point:
    an argument of size 1e300 needs 330 digits (rounding it at 50 digits moves ``e^{-x}`` by e^{1e250}).
    """
    with mp.workdps(DPS):
        sizes = [abs(_m(x)) for x in magnitudes]
        return DPS + int(sum(max(0.0, float(mp.log10(x))) for x in sizes if x != 0 and mp.isfinite(x)))


def _phic(x: mpf) -> mpf:
    """Standard normal upper tail; beyond 1e8 by its asymptotic series (mpmath's erfc overflows near 1e300)."""
    if x > 1e8:
        inv2 = 1 / (x * x)
        series, term = mpf(1), mpf(1)
        for n in range(1, 12):  # next term below 23!! / x^24 ~ 1e-180 relative
            term *= -(2 * n - 1) * inv2
            series += term
        return mp.exp(-x * x / 2) / (x * mp.sqrt(2 * mp.pi)) * series
    return mp.erfc(x / mp.sqrt(2)) / 2


def _phi(x: mpf) -> mpf:
    """Standard normal CDF."""
    return _phic(-x)


def _normal_mass(b: mpf, m: mpf) -> mpf:
    """``Phi(b + m) - Phi(b)``, ``m > 0``, as a difference of the tails on the far side of 0.

    It cancels about ``log10(1/(m max(|b|, 1)))`` digits when ``m`` is small: the caller's precision
    (:func:`digits`) allows for it.
    """
    a = b + m
    if b >= 0:
        return _phic(b) - _phic(a)
    if a <= 0:
        return _phi(a) - _phi(b)
    return 1 - _phic(a) - _phi(b)


def _pos(x: mpf) -> mpf:
    return x if x > 0 else mpf(0)


_ROOT_REL = mpf(10) ** -25


def decreasing_root(f: Callable[[mpf], mpf], lo: mpf, hi: mpf, rel: mpf = _ROOT_REL) -> mpf:
    """The root of a decreasing ``f`` in ``[lo, hi]`` (``f(lo) > 0 >= f(hi)``): Illinois with bisection."""
    flo, fhi = f(lo), f(hi)
    side = 0
    for _ in range(2000):
        if hi - lo <= rel * max(abs(hi), abs(lo), mpf(10) ** -300):
            break
        x = hi - fhi * (hi - lo) / (fhi - flo) if fhi != flo else (lo + hi) / 2
        if not lo < x < hi:
            x = (lo + hi) / 2
        fx = f(x)
        if fx > 0:
            lo, flo = x, fx
            if side == -1:
                fhi /= 2
            side = -1
        else:
            hi, fhi = x, fx
            if side == 1:
                flo /= 2
            side = 1
    return hi


def epsilon_of(profile: Callable[[mpf], mpf], delta: Real, top: mpf | None = None) -> mpf:
    """Smallest eps >= 0 with ``profile(eps) <= delta`` for a continuous, nonincreasing profile.

    ``top``: an epsilon where the profile is known to be <= delta (else found by doubling).
    """
    with mp.workdps(DPS):
        d = _m(delta)
        if profile(mpf(0)) <= d:
            return mpf(0)
        hi = mpf(1) if top is None else top
        while profile(hi) > d:
            hi *= 4
        return decreasing_root(lambda e: mp.log(max(profile(e), mpf(10) ** -100000)) - mp.log(d), mpf(0), hi)


# --------------------------------------------------------------------------- Laplace


def laplace_delta(eps: Real, scale: Real, sensitivity: Real = 1.0) -> mpf:
    r"""Profile of ``Lap(0, b)`` vs ``Lap(D, b)``, derived from the densities.

    ``L(x) = (|x - D| - |x|)/b`` is ``e0 = D/b`` for ``x <= 0``, ``(D - 2x)/b`` between, ``-e0`` beyond D,
    nonincreasing in x, so ``{L > eps}`` is ``x < x* = (D - eps b)/2`` for ``|eps| < e0`` and
    ``delta = F_P(x*) - e^eps F_Q(x*) = 1 - e^{(eps - e0)/2}``; ``1 - e^eps`` for ``eps <= -e0``
    (everything), 0 for ``eps >= e0``.
    """
    if eps == -math.inf:
        return mpf(1)
    e0 = Fraction(sensitivity) / Fraction(scale)  # exact: eps - e0 never cancels
    with mp.workdps(DPS):
        if eps >= e0:
            return mpf(0)
        if eps <= -e0:
            return -mp.expm1(_m(eps))
        return -mp.expm1(_m((_frac(eps) - e0) / 2))


def laplace_delta_quad(eps: Real, scale: Real, sensitivity: Real = 1.0) -> mpf:
    """The same profile as :func:`laplace_delta` by ``mpmath.quad`` of ``int (p - e^eps q)_+``."""
    with mp.workdps(DPS):
        e, b, d = _m(eps), _m(scale), _m(sensitivity)

        def p(x: mpf) -> mpf:
            return mp.exp(-abs(x) / b) / (2 * b)

        def g(x: mpf) -> mpf:
            return _pos(p(x) - mp.exp(e) * p(x - d))

        cut = (d - e * b) / 2
        pts = sorted({mpf(0), d, min(max(cut, mpf(0)), d)})
        return mp.quad(g, [-mp.inf, *pts, mp.inf])


def laplace_epsilon(delta: Real, scale: Real, sensitivity: Real = 1.0) -> mpf:
    """Smallest eps >= 0 with ``laplace_delta(eps) <= delta``: ``max(0, e0 + 2 log(1 - delta))``."""
    with mp.workdps(30 + digits(Fraction(sensitivity) / Fraction(scale))):
        e0 = _m(Fraction(sensitivity) / Fraction(scale))
        return max(mpf(0), e0 + 2 * mp.log1p(-_m(delta)))


def laplace_rdp(alpha: Real, scale: Real, sensitivity: Real = 1.0) -> mpf:
    r"""``D_alpha(Lap(0,b) || Lap(D,b))`` from ``int p^a q^(1-a)`` split at 0 and D (three exponential integrals).

    With ``r = D/b``: ``x < 0`` gives ``e^{(a-1) r}/2``; ``x > D`` gives ``e^{-a r}/2``; ``0 < x < D`` gives
    ``(e^{(a-1)r} - e^{-a r})/(2(2a - 1))``.
    """

    def f() -> mpf:
        a, r = _m(alpha), _m(sensitivity) / _m(scale)
        left, right = mp.exp((a - 1) * r) / 2, mp.exp(-a * r) / 2
        mid = (mp.exp((a - 1) * r) - mp.exp(-a * r)) / (2 * (2 * a - 1))
        return mp.log(left + right + mid) / (a - 1)

    return adaptive(f)


# --------------------------------------------------------------------------- Gaussian


def gaussian_delta(eps: Real, sigma: Real, sensitivity: Real = 1.0) -> mpf:
    r"""Balle & Wang (2018, Thm. 8): ``Phi(m/2 - eps/m) - e^eps Phi(-m/2 - eps/m)``, ``m = D/sigma``, any real eps.

    Evaluated as ``(Phi(a) - Phi(b)) - expm1(eps) Phi(b)`` (``a - b = m``) at rising precision; where that
    cancels beyond 400 digits, by :func:`gaussian_delta_integral` (a positive integrand, no cancellation).
    """
    if eps == -math.inf:
        return mpf(1)
    if eps == math.inf:
        return mpf(0)

    def f() -> mpf:  # Phi(a) - e^eps Phi(b) = (Phi(a) - Phi(b)) - expm1(eps) Phi(b), a - b = m
        e, m = _m(eps), _m(sensitivity) / _m(sigma)
        b = -m / 2 - e / m
        return _normal_mass(b, m) - mp.expm1(e) * _phi(b)

    with mp.workdps(DPS):
        e, m = _m(eps), _m(sensitivity) / _m(sigma)
        top = m / 2 + abs(e) / m
        start = digits(top**2, e, 1 / min(m * max(top, 1), 1))
    try:
        return _pos(adaptive(f, start=start, limit=8 * start))
    except ArithmeticError:
        return gaussian_delta_integral(eps, sigma, sensitivity)


def gaussian_delta_integral(eps: Real, sigma: Real, sensitivity: Real = 1.0) -> mpf:
    r"""The Gaussian profile from its definition, ``int_{x < a} phi(x) (1 - e^{eps - L(x)}) dx``, by ``mpmath.quad``.

    In units of sigma, ``L(x) = m^2/2 - m x`` exceeds eps iff ``x < a = m/2 - eps/m``; with ``x = a - t``,
    ``delta = phi(a) int_0^inf e^{a t - t^2/2} (1 - e^{-m t}) dt``: every term positive.
    """
    with mp.workdps(DPS):
        e, m = _m(eps), _m(sensitivity) / _m(sigma)
        start = digits((m / 2 + abs(e) / m) ** 2, e)
    with mp.workdps(start):
        e, m = _m(eps), _m(sensitivity) / _m(sigma)
        a = m / 2 - e / m
        if a > 0:  # t = a + u: (2 pi)^(-1/2) int_{-a}^inf e^{-u^2/2} (1 - e^{-m (a + u)}) du
            pts = {u for u in (mpf(-40), mpf(-5), mpf(0), mpf(5), mpf(40), 1 / m - a, 10 / m - a) if u > -a}
            val = mp.quad(lambda u: mp.exp(-u * u / 2) * -mp.expm1(-m * (a + u)), [-a, *sorted(pts), mp.inf])
            return val / mp.sqrt(2 * mp.pi)
        pts = {c / -a for c in (1, 10, 100, 1000) if a < 0} | {mpf(c) for c in (1, 5, 10, 40)}
        pts |= {c / m for c in (1, 10, 100)}
        return mp.npdf(a) * mp.quad(lambda t: mp.exp(a * t - t * t / 2) * -mp.expm1(-m * t), [0, *sorted(pts), mp.inf])


def gaussian_delta_quad(eps: Real, sigma: Real, sensitivity: Real = 1.0) -> mpf:
    """The Gaussian profile by ``mpmath.quad`` of ``int_{x < x*} (p - e^eps q)``, ``x*`` where ``p = e^eps q``."""
    with mp.workdps(DPS):
        e, s, d = _m(eps), _m(sigma), _m(sensitivity)
        # p = N(0, s^2), q = N(d, s^2): log p/q = (d^2 - 2 d x)/(2 s^2) > e  <=>  x < d/2 - e s^2/d
        cut = d / 2 - e * s * s / d

        def g(x: mpf) -> mpf:
            return mp.npdf(x, 0, s) - mp.exp(e) * mp.npdf(x, d, s)

        return mp.quad(g, [-mp.inf, min(cut, mpf(0)) - 10 * s, cut])


def gaussian_epsilon(delta: Real, sigma: Real, sensitivity: Real = 1.0) -> mpf:
    """Smallest eps >= 0 with ``gaussian_delta(eps) <= delta`` (root of the profile in log space)."""
    with mp.workdps(DPS):
        m = _m(sensitivity) / _m(sigma)
        z = -mp.sqrt(2) * mp.erfinv(1 - 2 * _m(delta)) if _m(delta) > mpf(10) ** -40 else None
        if z is None:  # Phi(m/2 - eps/m) <= delta bounds the answer: a generous upper end
            top = m * (m / 2 + mp.sqrt(-2 * mp.log(_m(delta)))) + 1
        else:
            top = max(m * (m / 2 - z), mpf(0)) + 1
        return epsilon_of(lambda e: gaussian_delta(e, sigma, sensitivity), delta, top=top)


def analytic_sigma(epsilon: Real, delta: Real, sensitivity: Real = 1.0) -> mpf:
    """Smallest sigma with ``gaussian_delta(epsilon, sigma) <= delta`` (the profile decreases in sigma)."""
    with mp.workdps(DPS):
        d = _m(delta)

        def f(log_s: mpf) -> mpf:  # log delta - log target: decreasing in log sigma
            return mp.log(max(gaussian_delta(epsilon, mp.exp(log_s), 1.0), mpf(10) ** -100000)) - mp.log(d)

        lo = mpf(0)
        while f(lo) <= 0:  # f(lo) > 0 needed (too little noise): move down
            lo -= 4
        hi = lo + 4
        while f(hi) > 0:
            hi += 4
        return mp.exp(decreasing_root(f, lo, hi)) * _m(sensitivity)


def classic_sigma(epsilon: Real, delta: Real, sensitivity: Real = 1.0) -> mpf:
    """Dwork & Roth (2014, Thm. A.1): ``D sqrt(2 log(1.25/delta))/eps``."""
    with mp.workdps(DPS):
        return _m(sensitivity) * mp.sqrt(2 * mp.log(mpf(5) / 4 / _m(delta))) / _m(epsilon)


def gaussian_rdp(alpha: Real, sigma: Real, sensitivity: Real = 1.0) -> mpf:
    """``D_alpha(N(0,s^2) || N(D,s^2)) = alpha D^2/(2 s^2)`` (Mironov 2017, Prop. 7)."""
    with mp.workdps(DPS):
        return _m(alpha) * (_m(sensitivity) / _m(sigma)) ** 2 / 2


def renyi_quad(alpha: Real, logp: Callable[[mpf], mpf], logq: Callable[[mpf], mpf], points: Sequence[mpf]) -> mpf:
    """``D_alpha(P || Q)`` by ``mpmath.quad`` of ``int e^{a log p + (1-a) log q}`` (cross-checks only)."""
    with mp.workdps(DPS):
        a = _m(alpha)
        val = mp.quad(lambda x: mp.exp(a * logp(x) + (1 - a) * logq(x)), [-mp.inf, *points, mp.inf])
        return mp.log(val) / (a - 1)


# --------------------------------------------------------------------------- discrete Laplace / Gaussian


def discrete_laplace_delta(eps: Real, scale: Real, sensitivity: int) -> mpf:
    r"""Profile of ``Z`` vs ``D + Z``, ``P(Z = z) = c r^{|z|}``, ``r = e^{-1/b}``, ``c = (1 - r)/(1 + r)``.

    ``L(z) = (|z - D| - |z|)/b``: ``D/b`` for ``z <= 0`` (mass ``1/(1 + r)``), ``(D - 2z)/b`` for
    ``0 < z < D``, ``-D/b`` beyond. For eps >= 0 the terms with ``L(z) > eps`` are ``z <= 0`` (if
    ``eps < D/b``) and ``1 <= z <= m``, ``m`` the last integer below ``(D - eps b)/2`` (found in exact
    rationals); both are geometric sums.
    """

    def f() -> mpf:
        b, e = _m(scale), _m(eps)
        r = mp.exp(-1 / b)
        one_minus_r = -mp.expm1(-1 / b)
        c = one_minus_r / (1 + r)
        total = _pos(-mp.expm1(e - sensitivity / b)) / (1 + r)
        cut = (Fraction(sensitivity) - _frac(eps) * Fraction(scale)) / 2
        m = min(sensitivity - 1, math.ceil(cut) - 1)
        if m >= 1:
            head = r * (1 - r**m) / one_minus_r  # sum_{z=1}^m r^z
            tail = mp.exp(e) * r**sensitivity * (r ** (-m) - 1) / one_minus_r  # e^eps sum r^{D - z}
            total += c * (head - tail)
        return min(total, mpf(1))

    if eps < 0:
        raise ValueError("the reference takes eps >= 0")
    if _frac(eps) >= Fraction(sensitivity) / Fraction(scale):
        return mpf(0)  # no z has L(z) > eps
    return adaptive(f)


def discrete_laplace_rdp(alpha: Real, scale: Real, sensitivity: int) -> mpf:
    """``(1/(a-1)) log sum_z p^a q^(1-a)``: two geometric tails and a geometric middle (exact)."""

    def f() -> mpf:
        a, b = _m(alpha), _m(scale)
        r = mp.exp(-1 / b)
        c = -mp.expm1(-1 / b) / (1 + r)
        d = sensitivity
        s = mp.exp((a - 1) * d / b) / (1 + r) + r**d * mp.exp(-(a - 1) * d / b) / (1 + r)
        # middle: c sum_{z=1}^{D-1} e^{-a z/b - (1-a)(D-z)/b} = c e^{-(1-a)D/b} sum_z w^z, w = e^{(1-2a)/b}
        if d > 1:
            w = mp.exp((1 - 2 * a) / b)
            s += c * mp.exp(-(1 - a) * d / b) * w * (1 - w ** (d - 1)) / (1 - w)
        return mp.log(s) / (a - 1)

    return adaptive(f)


def _theta_sum(sigma2: mpf, shift: mpf | int = 0) -> mpf:
    """``sum_z e^{-(z - shift)^2/(2 s^2)}`` over all integers: Poisson summation for s >= 1, else directly."""
    s = mp.sqrt(sigma2)
    if s >= 1:
        total, k = mpf(1), 1
        while True:
            term = 2 * mp.exp(-2 * mp.pi**2 * sigma2 * k * k) * mp.cos(2 * mp.pi * k * shift)
            total += term
            if mp.exp(-2 * mp.pi**2 * sigma2 * k * k) < mpf(10) ** (-mp.mp.dps - 5):
                break
            k += 1
        return s * mp.sqrt(2 * mp.pi) * total
    centre = int(mp.nint(shift))
    total, j = mpf(0), 0
    while True:
        new = sum(mp.exp(-((z - shift) ** 2) / (2 * sigma2)) for z in {centre + j, centre - j})
        total += new
        if j > 2 and new < total * mpf(10) ** (-mp.mp.dps - 5):
            return total
        j += 1


def discrete_gaussian_delta(eps: Real, sigma2: Real, sensitivity: int) -> mpf:
    r"""Profile of ``Z`` vs ``D + Z``, ``P(Z = z) ∝ e^{-z^2/(2 s^2)}`` on the integers, ``eps >= 0``.

    ``L(z) = (D^2 - 2 z D)/(2 s^2)`` decreases in z; ``L(z) > eps`` iff ``z <= m``, ``m`` the last integer
    below ``D/2 - s^2 eps/D`` (exact rationals). ``delta = sum_{z <= m} p(z) (1 - e^{eps - L(z)})``: every
    term positive, summed downward from ``m`` by recurrences (terms above ``13 s`` are below ``e^-84`` of the peak and
    skipped) until the geometric bound on the rest is below 1e-35 of the sum.
    """
    with mp.workdps(digits(eps, mpf(sensitivity) ** 2 / _m(sigma2))):
        s2, e, d = _m(sigma2), _m(eps), sensitivity
        s = mp.sqrt(s2)
        norm = _theta_sum(s2)
        cut = Fraction(d, 2) - Fraction(sigma2) * _frac(eps) / d
        m = math.ceil(cut) - 1
        z = min(m, int(mp.ceil(13 * s)) + 1)
        u = mp.exp(-(mpf(z) ** 2) / (2 * s2))  # e^{-z^2/(2 s^2)}, then by recurrence
        v = mp.exp(e - (d * d - 2 * mpf(z) * d) / (2 * s2))  # e^{eps - L(z)} < 1
        ratio = mp.exp((2 * z - 1) / (2 * s2))  # u_{z-1}/u_z
        step_v, step_ratio = mp.exp(-mpf(d) / s2), mp.exp(-1 / s2)
        total = u * -mp.expm1(e - (d * d - 2 * mpf(z) * d) / (2 * s2))
        tiny = mpf(10) ** -35
        while not (z < 0 and ratio < 1 and u * ratio / (1 - ratio) <= tiny * total):
            u, v, ratio, z = u * ratio, v * step_v, ratio * step_ratio, z - 1
            total += u * (1 - v)
        return min(total / norm, mpf(1))


def discrete_gaussian_rdp(alpha: Real, sigma2: Real, sensitivity: int) -> mpf:
    r"""``sum_z p^a q^{1-a} = e^{a(a-1) D^2/(2 s^2)} T((1-a) D)/T(0)``, ``T(c) = sum_z e^{-(z-c)^2/(2 s^2)}``."""

    def f() -> mpf:
        a, s2, d = _m(alpha), _m(sigma2), sensitivity
        return a * d * d / (2 * s2) + (mp.log(_theta_sum(s2, (1 - a) * d)) - mp.log(_theta_sum(s2))) / (a - 1)

    return adaptive(f)


# --------------------------------------------------------------------------- randomized response


def _rr_pq(e0: mpf) -> tuple[mpf, mpf]:
    return 1 / (1 + mp.exp(-e0)), mp.exp(-e0) / (1 + mp.exp(-e0))


def rr_delta(eps: Real, epsilon0: Real, count: int = 1) -> mpf:
    r"""``count`` randomized responses: ``sum_j C(k,j) p^j q^(k-j) (1 - e^{eps - (2j - k) e0})_+`` (exact)."""
    if eps == -math.inf:
        return mpf(1)
    with mp.workdps(digits(eps, count * epsilon0)):
        e, e0 = _m(eps), _m(epsilon0)
        p, q = _rr_pq(e0)
        total = mpf(0)
        for j in range(count, -1, -1):
            loss = (2 * j - count) * e0
            if loss <= e:
                break
            total += mp.binomial(count, j) * p**j * q ** (count - j) * -mp.expm1(e - loss)
        return total


def rr_epsilon(delta: Real, epsilon0: Real, count: int = 1) -> mpf:
    r"""Exact inverse: between lattice points ``delta = A - e^eps B`` (A, B the P and Q masses above), so
    ``eps = log((A - delta)/B)`` on the segment where the profile crosses ``delta``. Precision as
    :func:`rr_delta`'s, enough to resolve ``delta`` and ``epsilon0`` against 1 (at 50 digits, p - q of a
    tiny ``epsilon0`` cancelled to 0 and the reference answered 0 for a positive epsilon)."""
    tiny = sum(max(0, -math.floor(math.log10(x))) for x in (float(delta), float(epsilon0)) if x > 0)
    with mp.workdps(digits(delta, count * epsilon0) + tiny):  # p - q ~ epsilon0/2 and delta resolved against 1
        d, e0 = _m(delta), _m(epsilon0)
        p, q = _rr_pq(e0)
        a = b = mpf(0)
        for j in range(count, -1, -1):  # losses (2j - k) e0 from the top; segment below loss_j
            a += mp.binomial(count, j) * p**j * q ** (count - j)
            b += mp.binomial(count, j) * q**j * p ** (count - j)
            lower = (2 * j - 2 - count) * e0 if j > 0 else -mp.inf
            at_lower = a - mp.exp(lower) * b if j > 0 else mpf(1)
            if at_lower > d:  # the crossing is in (lower, loss]
                return max(mp.log((a - d) / b), mpf(0))
            if lower <= 0:
                return mpf(0)
        return mpf(0)


def rr_rdp(alpha: Real, epsilon0: Real) -> mpf:
    """``log(p^a q^(1-a) + q^a p^(1-a))/(a - 1)``."""

    def f() -> mpf:
        a = _m(alpha)
        p, q = _rr_pq(_m(epsilon0))
        return mp.log(p**a * q ** (1 - a) + q**a * p ** (1 - a)) / (a - 1)

    return adaptive(f)


# --------------------------------------------------------------------------- Poisson-subsampled Gaussian


def _add_gap(e: mpf, qq: mpf) -> mpf:
    """``e^{-e} - 1 + q`` at the working precision without losing a tiny ``e^{-e}``: for ``q >= 1/2`` as
    ``e^{-e} - (1 - q)`` (``1 - q`` exact for a double ``q``); ``expm1(-e) + q`` rounded ``e^{-e}`` away at q = 1 and
    eps 351 (the reference said delta 0 where it is 1e-200)."""
    return mp.exp(-e) - (1 - qq) if qq >= mpf(1) / 2 else mp.expm1(-e) + qq


def sg_delta_direction(eps: Real, s: Real, q: Real, direction: str) -> mpf:
    r"""One direction of one subsampled-Gaussian step, ``s = sigma/sensitivity``, any real eps.

    ``remove``: P = (1-q)N(0,s^2) + qN(1,s^2), Q = N(0,s^2); ``p/q = 1 - q + q e^{(2x-1)/(2s^2)}`` increases
    in x, so ``{p > e^eps q}`` is ``x > x* = s^2 log((e^eps - 1 + q)/q) + 1/2`` (everything when
    ``e^eps <= 1 - q``). ``add``: P and Q swapped; ``p/q`` decreases, ``{p > e^eps q}`` is ``x < x_a``,
    ``x_a = s^2 log((e^-eps - 1 + q)/q) + 1/2`` (empty when ``e^-eps <= 1 - q``). Normal tails in closed form.
    """
    if eps == -math.inf:
        return mpf(1)
    if eps == math.inf:
        return mpf(0)
    with mp.workdps(DPS):
        if direction == "add" and _add_gap(_m(eps), _m(q)) <= 0:
            return mpf(0)

    with mp.workdps(DPS):
        e, sd, qq = _m(eps), _m(s), _m(q)
        g = (mp.expm1(e) + qq) if direction == "remove" else _add_gap(e, qq)
        x = sd * sd * mp.log(g / qq) + mpf(1) / 2 if g > 0 else mpf(0)
        start = digits(((abs(x) + 1) / sd) ** 2, e)

    def f() -> mpf:
        e, sd, qq = _m(eps), _m(s), _m(q)
        if direction == "remove":
            g = mp.expm1(e) + qq
            if g <= 0:
                return -mp.expm1(e)
            x = sd * sd * mp.log(g / qq) + mpf(1) / 2
            return qq * _phic((x - 1) / sd) - g * _phic(x / sd)  # (1-q) T(x) + q T(x-1) - e^eps T(x)
        g = _add_gap(e, qq)
        if g <= 0:
            return mpf(0)
        x = sd * sd * mp.log(g / qq) + mpf(1) / 2
        return mp.exp(e) * (g * _phi(x / sd) - qq * _phi((x - 1) / sd))  # 1 - e^eps (1 - q) = e^eps g

    return _pos(adaptive(f, start=start, limit=8 * start))


def sg_delta(eps: Real, s: Real, q: Real) -> mpf:
    """The profile of one step: the larger of the two directions."""
    return max(sg_delta_direction(eps, s, q, "remove"), sg_delta_direction(eps, s, q, "add"))


def _sg_densities(s: mpf, q: mpf, direction: str) -> tuple[Callable[[mpf], mpf], Callable[[mpf], mpf]]:
    def n0(x: mpf) -> mpf:
        return mp.npdf(x, 0, s)

    def mix(x: mpf) -> mpf:
        return (1 - q) * mp.npdf(x, 0, s) + q * mp.npdf(x, 1, s)

    return (mix, n0) if direction == "remove" else (n0, mix)


def sg_delta_quad(eps: Real, s: Real, q: Real, direction: str) -> mpf:
    """One direction by ``mpmath.quad`` of ``int (p - e^eps q)_+`` (split at the crossing): a cross-check."""
    with mp.workdps(DPS):
        e, sd, qq = _m(eps), _m(s), _m(q)
        p, qd = _sg_densities(sd, qq, direction)
        g = (mp.expm1(e) + qq) if direction == "remove" else _add_gap(e, qq)
        pts = [mpf(0), mpf(1)]
        if g > 0:
            pts.append(sd * sd * mp.log(g / qq) + mpf(1) / 2)
        pts = sorted(set(pts))
        return mp.quad(lambda x: _pos(p(x) - mp.exp(e) * qd(x)), [-mp.inf, *pts, mp.inf])


def sg2_delta(eps: Real, s: Real, q: Real, dps: int = 30) -> mpf:
    r"""Two composed steps, the larger direction: ``delta_2(eps) = E_{X ~ P}[delta_1(eps - L(X))]``.

    (The loss of the composition is the sum of two independent losses; conditioning on the first gives the
    one-step profile, in closed form for every real argument, at ``eps - L_1``.) ``mpmath.quad`` over x.
    """
    out = mpf(0)
    for direction in ("remove", "add"):
        with mp.workdps(dps):
            sd, qq = _m(s), _m(q)
            p, qd = _sg_densities(sd, qq, direction)

            def g(
                x: mpf, p: Callable[[mpf], mpf] = p, qd: Callable[[mpf], mpf] = qd, direction: str = direction
            ) -> mpf:
                loss = mp.log(p(x)) - mp.log(qd(x))
                return p(x) * sg_delta_direction(mp.mpf(eps) - loss, s, q, direction)

            pts = {-10 * sd, mpf(0), mpf(1) / 2, mpf(1), 1 + 10 * sd}
            for c in (mp.mpf(eps) - mp.log1p(-qq), mp.mpf(eps) + mp.log1p(-qq)):  # kinks of delta_1(eps - L(x))
                arg = (mp.exp(c) if direction == "remove" else mp.exp(-c)) - 1 + qq
                if arg > 0:
                    pts.add(sd * sd * mp.log(arg / qq) + mpf(1) / 2)
            val = mp.quad(g, [-mp.inf, *sorted(pts), mp.inf])
        out = max(out, val)
    return out


def _log_binomial_terms(n: int, q: float, s2: float) -> list[int]:
    """Indices k of the terms of the integer-order sum within e^-150 of the largest (selected in floats)."""
    k = np.arange(n + 1, dtype=float)
    logs = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1) + k * math.log(q) + (n - k) * math.log1p(-q)
    logs += (k * k - k) / (2 * s2)
    return [int(i) for i in np.flatnonzero(logs >= logs.max() - 150.0)]


def sg_rdp(alpha: Real, s: Real, q: Real) -> mpf:
    r"""RDP of one step (the larger direction, the remove one: Mironov, Talwar & Zhang 2019).

    ``A_a = E_{Z ~ N(0, s^2)}[(1 - q + q e^{(2Z - 1)/(2s^2)})^a]``, ``D = log(A_a)/(a - 1)``. Integer a:
    ``A_n = sum_k C(n,k) (1-q)^{n-k} q^k e^{(k^2-k)/(2s^2)}`` (terms more than e^-150 below the largest,
    at most n + 1 of them, are dropped: a relative 1e-59 at n = 1e6). Fractional a: ``mpmath.quad`` of the
    integral, split around the peaks of the integrand.
    """
    a = _m(alpha)
    if q == 1:
        with mp.workdps(DPS):
            return a / (2 * _m(s) ** 2)
    if alpha == int(alpha):
        n = int(alpha)
        keep = _log_binomial_terms(n, float(q), float(s) ** 2)
        with mp.workdps(DPS):
            sd, qq = _m(s), _m(q)
            total = mp.fsum(
                mp.binomial(n, k) * (1 - qq) ** (n - k) * qq**k * mp.exp((k * k - k) / (2 * sd * sd)) for k in keep
            )
            return mp.log(total) / (n - 1)
    with mp.workdps(DPS):
        sd, qq = _m(s), _m(q)

        def integrand(z: mpf) -> mpf:
            return mp.npdf(z, 0, sd) * (1 - qq + qq * mp.exp((2 * z - 1) / (2 * sd * sd))) ** a

        # the integrand's mass sits near 0 (the N(0, s^2) part) and near a (the q e^{...} part, tilted to N(a, s^2))
        pts = sorted({mpf(0), mpf(1) / 2, a, a - 1, -10 * sd, a + 10 * sd})
        total = mp.quad(integrand, [-mp.inf, *pts, mp.inf])
        return mp.log(total) / (a - 1)


# --------------------------------------------------------------------------- Laplace k-fold composition


def _irwin_hall(j: int, x: mpf) -> mpf:
    """Density of the sum of j uniforms on (0, 1) at x (alternating sum; exact at high precision)."""
    if x <= 0 or x >= j:
        return mpf(0)
    return mp.fsum(
        (-1) ** i * mp.binomial(j, i) * (x - i) ** (j - 1) for i in range(int(mp.floor(x)) + 1)
    ) / mp.factorial(j - 1)


def _tilted_part(t: mpf, e0: mpf, j: int) -> mpf:
    r"""``E[(1 - e^{t - S_j})_+]``, ``S_j`` the sum of j losses of the continuous part (density ∝ e^{l/2} on (-e0, e0)).

    ``S_j`` has density ``e^{s/2} W_j(s)/Z1^j``, ``Z1 = 4 sinh(e0/2)``, ``W_j`` the j-fold convolution of the
    indicator of (-e0, e0): ``(2 e0)^{j-1} IH_j((s + j e0)/(2 e0))``. In ``x = (s + j e0)/(2 e0)``:
    ``((e0/2)/sinh(e0/2))^j int_{x0}^{j} (1 - e^{t - s}) e^{s/2} IH_j(x) dx``, by ``mpmath.quad`` on each
    polynomial piece.
    """
    if t >= j * e0:
        return mpf(0)
    x0 = max((t + j * e0) / (2 * e0), mpf(0))
    rho = (e0 / 2) / mp.sinh(e0 / 2) if e0 > mpf(10) ** -30 else mpf(1)

    def g(x: mpf) -> mpf:
        s = 2 * e0 * x - j * e0
        return -mp.expm1(t - s) * mp.exp(s / 2) * _irwin_hall(j, x)

    pts = [x0, *[mpf(i) for i in range(int(mp.floor(x0)) + 1, j + 1)]]
    return rho**j * mp.quad(g, pts)


def laplace_k_delta(eps: Real, epsilon0: Real, count: int) -> mpf:
    r"""Profile of ``count`` Laplace releases of pure epsilon ``e0``: an exact mixture, integrated by quadrature.

    One loss: atom ``+e0`` w.p. 1/2, ``-e0`` w.p. ``e^{-e0}/2``, and w.p. ``g = (1 - e^{-e0})/2`` a draw of
    density ∝ ``e^{l/2}`` on ``(-e0, e0)`` (from the densities: ``P(L <= l) = e^{(l - e0)/2}/2`` between).
    So ``delta = sum_{a+c+j=k} k!/(a! c! j!) (1/2)^a (e^{-e0}/2)^c g^j E[(1 - e^{eps - (a-c) e0 - S_j})_+]``.
    """
    with mp.workdps(DPS):
        e, e0 = _m(eps), _m(epsilon0)
        plus, minus, cont = mpf(1) / 2, mp.exp(-e0) / 2, -mp.expm1(-e0) / 2
        total = mpf(0)
        for j in range(count + 1):
            for a in range(count - j + 1):
                c = count - j - a
                t = e - (a - c) * e0
                part = _pos(-mp.expm1(t)) if j == 0 else _tilted_part(t, e0, j)
                if part > 0:
                    w = mp.factorial(count) / (mp.factorial(a) * mp.factorial(c) * mp.factorial(j))
                    total += w * plus**a * minus**c * cont**j * part
        return total


def laplace_2_delta_nested(eps: Real, epsilon0: Real) -> mpf:
    r"""Two releases another way: ``E_{L_1}[delta_1(eps - L_1)]`` with ``delta_1(t) = 1 - e^{(t - e0)/2}`` on
    ``[-e0, e0]``, ``1 - e^t`` below, 0 above; the density part by ``mpmath.quad`` (a cross-check)."""
    with mp.workdps(DPS):
        e, e0 = _m(eps), _m(epsilon0)

        def d1(t: mpf) -> mpf:
            if t >= e0:
                return mpf(0)
            return -mp.expm1(t) if t <= -e0 else -mp.expm1((t - e0) / 2)

        atoms = d1(e - e0) / 2 + mp.exp(-e0) / 2 * d1(e + e0)
        pts = sorted({-e0, e0, min(max(e - e0, -e0), e0), min(max(e + e0, -e0), e0)})
        dens = mp.quad(lambda l: mp.exp((l - e0) / 2) / 4 * d1(e - l), pts)
        return atoms + dens


def laplace_k_tv_bound(epsilon0: Real, count: int) -> mpf:
    """``delta(0)`` (total variation) of k releases is at most k times one release's, ``1 - e^{-e0/2}``."""
    with mp.workdps(DPS):
        return count * -mp.expm1(-_m(epsilon0) / 2)


# --------------------------------------------------------------------------- RDP conversion


def rdp_to_dp(orders: Sequence[float], rdp: Sequence[float], delta: Real) -> mpf:
    r"""The conversion dpcore documents for ``rdp_to_dp``: per order the smaller of Mironov's
    ``r + log(1/delta)/(a-1)`` and Canonne--Kamath--Steinke's ``r + log(1 - 1/a) - (log delta + log a)/(a-1)``,
    minimised over the orders; 0 if some order has ``delta^2 > 1 - e^{-r}`` (Bretagnolle--Huber)."""
    with mp.workdps(DPS):
        d = _m(delta)
        best = mp.inf
        for a_f, r_f in zip(orders, rdp, strict=True):
            if r_f == math.inf:
                continue
            a, r = _m(a_f), _m(r_f)
            if d * d > -mp.expm1(-r):
                return mpf(0)
            mironov = r - mp.log(d) / (a - 1)
            cks = r + mp.log1p(-1 / a) - (mp.log(d) + mp.log(a)) / (a - 1)
            best = min(best, mironov, cks)
        return max(best, mpf(0))


def classical_rdp_to_dp(orders: Sequence[float], rdp: Sequence[float], delta: Real) -> mpf:
    """Mironov (2017, Prop. 3): ``min_a r(a) + log(1/delta)/(a - 1)``."""
    with mp.workdps(DPS):
        d = _m(delta)
        return min(_m(r) - mp.log(d) / (_m(a) - 1) for a, r in zip(orders, rdp, strict=True))
