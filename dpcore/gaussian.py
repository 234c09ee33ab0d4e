r"""The Gaussian mechanism under (epsilon, delta)-DP: exact privacy profile and calibration.

The Gaussian mechanism releases :math:`M(D) = f(D) + N(0, \sigma^2 I)`, where
:math:`\Delta = \Delta_2 f` is the global L2 sensitivity of ``f``. Balle & Wang
(2018, Theorem 8) show that it is :math:`(\varepsilon, \delta)`-DP if and only if

.. math::

    \delta \ge \delta_\sigma(\varepsilon)
      = \Phi\!\Big(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
        - e^{\varepsilon}\,\Phi\!\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big).

Everything here is computed through the substitution used by Bao et al. (2021,
Lemma 2.4), :math:`\chi = (\varepsilon\sigma/\Delta - \Delta/(2\sigma))/\sqrt 2`,
:math:`y = \sqrt{\chi^2 + \varepsilon}`, under which

.. math::

    2\delta = \operatorname{erfc}(\chi) - e^{\varepsilon}\operatorname{erfc}(y)
            = e^{-\chi^2}\big(\operatorname{erfcx}(\chi) - \operatorname{erfcx}(y)\big),
    \qquad
    \sigma = \frac{\Delta}{\sqrt 2\,(y - \chi)},

with the scaled complementary error function
:math:`\operatorname{erfcx}(x) = e^{x^2}\operatorname{erfc}(x)`. The second form
never overflows or underflows before the final exponential, so
:math:`\log\delta` is accurate to a few units in the last place for every
:math:`\delta` down to far below ``1e-300`` and every :math:`\varepsilon` up to
``1e300``. When :math:`y - \chi` is tiny the difference of the two ``erfcx``
values is computed as the integral of :math:`-\operatorname{erfcx}'` by Gauss--
Legendre quadrature instead of by subtraction, which would cancel.

``analytic_gaussian_sigma`` solves :math:`\log\delta(\chi) = \log\delta` for
:math:`\chi` by safeguarded Newton iteration inside a bracket whose upper end
is proven analytically (:math:`\delta(\chi) \le \tfrac12\operatorname{erfc}(\chi)`)
and whose lower end is verified by evaluation; the root is then moved by a
margin of a few rounding errors to the safe side, so the returned sigma never
delivers more than the target delta.

References
----------
Balle, B. & Wang, Y.-X. (2018). Improving the Gaussian mechanism for
differential privacy: analytical calibration and optimal denoising. ICML.
Bao, E., Yang, Y., Xiao, X. & Ding, B. (2021). CGM: an enhanced mechanism for
streaming data collection with local differential privacy. PVLDB 14(11).
Dwork, C. & Roth, A. (2014). The algorithmic foundations of differential
privacy, Theorem A.1 (the classic calibration).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._lazy import lazy_module
from ._release import release_with_noise
from ._rounding import ceil_double, ceil_sqrt_double
from ._validation import (
    RNGLike,
    check_finite_array,
    check_noise_scale,
    check_nonnegative_finite_array,
    check_normal_result,
    check_positive_finite,
    check_positive_finite_array,
    check_positive_int,
    check_probability_open,
)

special = lazy_module("scipy.special")

__all__ = [
    "gaussian_delta",
    "gaussian_log_delta",
    "gaussian_epsilon",
    "classic_gaussian_sigma",
    "analytic_gaussian_sigma",
    "analytic_gaussian_sigma_many",
    "gaussian_mechanism",
    "exact_gaussian_composition_epsilon",
]

_SQRT2 = math.sqrt(2.0)
_TINY = float(np.finfo(np.float64).tiny)
_SQRTPI = math.sqrt(math.pi)
_LOG_HALF = math.log(0.5)
_LOG_1_25 = math.log(1.25)


def _gauss_legendre01(n: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    nodes, weights = np.polynomial.legendre.leggauss(n)
    return tuple(float(v) for v in 0.5 * (nodes + 1.0)), tuple(float(v) for v in 0.5 * weights)


# erfcx(chi) - erfcx(chi + h) is integrated by Gauss--Legendre on [chi, chi + h]
# when h <= _QUAD_SWITCH * max(chi, 1) (above it the direct difference loses at
# most a factor ~4 to cancellation); the rule has 3, 4, 5 or 6 nodes according to
# h / max(chi, 1) (<= 1e-2, 3e-2, 0.1, 0.25): measured against mpmath, each rule is
# within 2e-13 relative there, the floor set by 2/sqrt(pi) - 2 t erfcx(t) at t ~ 26.
_QUAD_SWITCH = 0.25
_TWO_OVER_SQRTPI = 2.0 / math.sqrt(math.pi)
_GL_RULES = (
    (1e-2, _gauss_legendre01(3)),
    (3e-2, _gauss_legendre01(4)),
    (1e-1, _gauss_legendre01(5)),
    (_QUAD_SWITCH, _gauss_legendre01(6)),
)
_GL3_BOUND, _GL3 = _GL_RULES[0]
# Newton usually needs a few steps; bisection from a bracket of width ~40 down to the rounding of a root as
# small as 1e-300 needs ~1100, and finding the lower end by doubling up to ~1030 more: never silently stop early
_MAX_NEWTON = 2400
# width of the acceptance window of log delta below the (already lowered) target, in
# units of the safety margin: Newton aims at its middle, which leaves room for the
# rounding of chi recomputed from sigma (see _certified_sigma) at a cost of ~1e-13 in sigma
_WINDOW = 4.0
_SCALAR_BATCH = 150  # analytic_gaussian_sigma_many loops over the scalar solver up to this size (measured crossover)
_MAX_EPSILON = 1e300  # gaussian_epsilon refuses answers beyond this (sigma/sensitivity below ~1e-150)
_SCALAR_TAIL = 16  # ... and finishes its last few slow entries with it


# ---------------------------------------------------------------------------
# scalar kernels (pure Python floats: these are the fast path of one call)
# ---------------------------------------------------------------------------


def _neg_erfcx_prime(t: float) -> float:
    r""":math:`-\operatorname{erfcx}'(t) = 2/\sqrt\pi - 2t\,\operatorname{erfcx}(t) > 0` for t >= 0."""
    if t > 100.0:
        u = 1.0 / (t * t)
        return u / _SQRTPI * (1.0 - u * (1.5 - u * (3.75 - u * (13.125 - u * 59.0625))))
    return 2.0 / _SQRTPI - 2.0 * t * float(special.erfcx(t))


def _neg_erfcx_prime_array(t: NDArray[np.float64]) -> NDArray[np.float64]:
    """Vectorised :func:`_neg_erfcx_prime`."""
    big = t > 100.0
    val = np.empty(t.shape)
    val[~big] = 2.0 / _SQRTPI - 2.0 * t[~big] * special.erfcx(t[~big])
    u = 1.0 / (t[big] * t[big])
    val[big] = u / _SQRTPI * (1.0 - u * (1.5 - u * (3.75 - u * (13.125 - u * 59.0625))))
    return val


def _erfcx_diff(chi: float, y: float, h: float) -> float:
    """erfcx(chi) - erfcx(y) for 0 <= chi < y = chi + h, without cancellation."""
    scale = chi if chi > 1.0 else 1.0
    if h > _QUAD_SWITCH * scale:
        return float(special.erfcx(chi)) - float(special.erfcx(y))
    rel = h / scale
    if y > 100.0:  # far tail: the asymptotic series of -erfcx' (no erfcx call)
        xs, ws = _GL_RULES[-1][1]
        return h * sum(wg * _neg_erfcx_prime(chi + xg * h) for xg, wg in zip(xs, ws, strict=True))
    if rel <= _GL3_BOUND:  # the common case, unrolled: 3-point Gauss--Legendre
        (x0, x1, x2), (w0, w1, w2) = _GL3
        t0, t1, t2 = chi + x0 * h, chi + x1 * h, chi + x2 * h
        erfcx = special.erfcx
        return h * (
            _TWO_OVER_SQRTPI
            - 2.0 * (w0 * t0 * float(erfcx(t0)) + w1 * t1 * float(erfcx(t1)) + w2 * t2 * float(erfcx(t2)))
        )
    for bound, (xs, ws) in _GL_RULES:  # noqa: B007 - the loop selects the rule
        if rel <= bound:
            break
    erfcx = special.erfcx
    acc = 0.0
    for xg, wg in zip(xs, ws, strict=True):  # -erfcx'(t) = 2/sqrt(pi) - 2 t erfcx(t); the weights sum to 1
        t = chi + xg * h
        acc += wg * t * float(erfcx(t))
    return h * (_TWO_OVER_SQRTPI - 2.0 * acc)


def _log_delta_far(chi: float, y: float, eps: float) -> tuple[float, float]:
    r"""(log delta, d log delta / d chi) for chi > 1e8, where -erfcx'(t) = 1/(sqrt(pi) t^2) to 1e-16 relative.

    Then erfcx(chi) - erfcx(y) = (1/chi - 1/y)/sqrt(pi) = h/(sqrt(pi) chi y) with
    h = y - chi = eps/(y + chi), all in logs (h underflows, y + chi overflows,
    chi^2 overflows to the correct -inf of log delta beyond 1.3e154).
    """
    if eps == 0.0:
        return -math.inf, -math.inf
    log_sum = math.log(chi) + math.log1p(y / chi)  # log(y + chi) without overflow
    log_d = math.log(eps) - log_sum - 0.5 * math.log(math.pi) - math.log(chi) - math.log(y)
    return _LOG_HALF - chi * chi + log_d, -2.0 * chi


_FAR_CHI = 1e8


def _log_delta_chi(chi: float, eps: float) -> tuple[float, float]:
    r"""Return (log delta, d log delta / d chi) at the substituted variable chi.

    2 delta = e^{-chi^2} (erfcx(chi) - erfcx(y)) for chi >= 0,
    2 delta = erf(-chi) + e^eps erf(y) - expm1(eps) for chi < 0 and y < 1, and
    1 - delta = (erfc(-chi) + e^{-chi^2} erfcx(y)) / 2 for the other chi < 0;
    d delta / d chi = -e^{-chi^2} (1 - chi/y) / sqrt(pi). ``y = hypot(chi, sqrt(eps))``
    neither underflows nor overflows; chi = +-inf (a ratio sigma/sensitivity
    beyond the double range) gives delta = 0 or 1.
    """
    if chi == math.inf:
        return -math.inf, -math.inf
    if chi == -math.inf:
        return 0.0, 0.0
    y = math.hypot(chi, math.sqrt(eps))
    if chi >= 0.0:
        if chi > _FAR_CHI:
            return _log_delta_far(chi, y, eps)
        if y == 0.0:  # chi = eps = 0: delta = erfc(0) - erfc(0) = 0
            return -math.inf, -math.inf
        h = eps / (y + chi)
        d = _erfcx_diff(chi, y, h)
        if not d > 0.0:  # h underflowed (eps below ~1e-300 at chi ~ 1e8): delta below any double
            return -math.inf, -math.inf
        logd = _LOG_HALF - chi * chi + math.log(d)
        dlog = -(2.0 / _SQRTPI) * (h / y) / d
        return logd, dlog
    ratio = 1.0 - chi / y  # (y - chi)/y in [1, 2]
    inner = 0.5 * (math.erf(-chi) + math.exp(eps) * math.erf(y) - math.expm1(eps)) if y < 1.0 else 0.0
    if inner > 0.0:  # small |chi| and epsilon: 2 delta = erf(-chi) + e^eps erf(y) - expm1(eps), no cancellation
        logd = math.log(inner)
    else:
        q = 0.5 * (math.erfc(-chi) + math.exp(-chi * chi) * float(special.erfcx(y)))
        logd = math.log1p(-q)
    dlog = -_exp_slope(-chi * chi - logd) * ratio / _SQRTPI
    return logd, dlog


def _exp_slope(x: float) -> float:
    """exp for a Newton slope: capped at e^700 (a slope is only a guide; the solvers bisect when it misleads)."""
    return math.exp(min(x, 700.0))


def _safety_margin(log_target: float) -> float:
    """Bound on the rounding error of log delta: a few ulp of |log delta| (~ chi^2)."""
    return 2e-14 * (1.0 + abs(log_target))


def _solve_decreasing(
    fun: Callable[[float], tuple[float, float]], hi: float, step: float, log_target: float, tol: float
) -> tuple[float, float, float]:
    """Largest-safe root of a decreasing ``fun(x) -> (log delta, derivative)``.

    ``hi`` should satisfy ``fun(hi)[0] <= log_target`` (the caller proves it up
    to the rounding margin; if it does not, ``hi`` is moved up until it does).
    Newton steps start from ``hi``; a lower end ``lo`` with ``fun(lo)[0] >
    log_target`` comes from the first step that overshoots, or from doubling
    ``step`` when a step is unusable. Once both ends are known, a Newton step
    that leaves the bracket or fails to halve the previous step is replaced
    by bisection (the safeguard of Numerical Recipes' ``rtsafe``). Returns
    ``(hi, log delta(hi), derivative at hi)`` for the final upper end of the
    bracket, at which ``log delta <= log_target``; the iteration stops as soon
    as ``log_target - tol <= log delta <= log_target``.
    """
    fhi, dhi = fun(hi)
    up = step
    while fhi > log_target:
        # the caller's bound is proven for the exact target; the target lowered by the
        # rounding margin can lie just beyond it (delta very close to 1): move up
        hi, up = hi + up, 2.0 * up
        fhi, dhi = fun(hi)
    lo = -math.inf  # no lower end known yet: found by Newton overshoot or by doubling ``step``
    x, fx, dx = hi, fhi, dhi
    last_step = math.inf
    for _ in range(_MAX_NEWTON):
        if log_target - tol <= fx <= log_target:
            hi, fhi, dhi = x, fx, dx
            break  # safe, and within the rounding noise of log delta of the root
        # Newton aims at the middle of the acceptance window [log_target - tol, log_target]
        nx = x - (fx - log_target + 0.5 * tol) / dx if (dx < 0.0 and math.isfinite(dx)) else math.nan
        if nx == x or abs(nx - x) <= 2e-16 * abs(x):
            # Newton has converged to rounding level; if the last iterate is on the
            # unsafe side, step up from it by a few ulp until delta <= target again
            if fx > log_target:
                up = max(abs(x), 1e-300) * 2.3e-16
                while x + up < hi:
                    fu, du = fun(x + up)
                    if fu <= log_target:
                        hi, fhi, dhi = x + up, fu, du
                        break
                    up *= 2.0
            break
        if not (lo < nx < hi) or (lo > -math.inf and abs(nx - x) > 0.5 * last_step):
            # outside the bracket, or not converging fast enough (log delta has an
            # inflection near chi = 0 for small epsilon): bisect, as rtsafe does
            if lo == -math.inf:
                nx = hi - step
                step *= 2.0
            else:
                nx = 0.5 * (lo + hi)
        last_step = abs(nx - x)
        fn, dn = fun(nx)
        if fn <= log_target:
            hi, fhi, dhi = nx, fn, dn
        else:
            lo = nx
        x, fx, dx = nx, fn, dn
        if lo > -math.inf and hi - lo <= 4e-16 * max(abs(hi), abs(lo)):
            break
    else:  # hi is safe but may be far from the root: an error, not a loose answer
        raise ValueError(f"the root of delta did not converge in {_MAX_NEWTON} steps (bracket [{lo!r}, {hi!r}])")
    return hi, fhi, dhi


# ---------------------------------------------------------------------------
# vectorised kernel
# ---------------------------------------------------------------------------


def _log_delta_chi_array(
    chi: NDArray[np.float64], eps: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Vectorised :func:`_log_delta_chi` (same formulas, elementwise).

    The rare entries outside the common range (chi infinite or above 1e8, a
    difference that underflowed) are finished by the scalar kernel.
    """
    chi, eps = np.broadcast_arrays(np.asarray(chi, float), np.asarray(eps, float))
    shape = chi.shape
    chi, eps = chi.reshape(-1), eps.reshape(-1)
    logd = np.zeros(chi.shape)
    dlog = np.zeros(chi.shape)
    redo = ~np.isfinite(chi) | (chi > _FAR_CHI)
    with np.errstate(all="ignore"):
        y = np.hypot(chi, np.sqrt(eps))
        pos = (chi >= 0.0) & ~redo
        if np.any(pos):
            c, yy, e = chi[pos], y[pos], eps[pos]
            h = e / (yy + c)
            quad = h <= _QUAD_SWITCH * np.maximum(c, 1.0)
            d = np.empty(c.shape)
            nq = ~quad
            d[nq] = special.erfcx(c[nq]) - special.erfcx(yy[nq])
            if np.any(quad):
                qi = np.flatnonzero(quad)
                rel = h[qi] / np.maximum(c[qi], 1.0)
                lower = 0.0
                for bound, (xs, ws) in _GL_RULES:
                    sel = (rel > lower) & (rel <= bound) if lower > 0 else rel <= bound
                    lower = bound
                    if not np.any(sel):
                        continue
                    cq, hq = c[qi[sel]], h[qi[sel]]
                    nodes = cq[:, None] + np.asarray(xs)[None, :] * hq[:, None]
                    vals = _neg_erfcx_prime_array(nodes.ravel()).reshape(nodes.shape)
                    d[qi[sel]] = (vals @ np.asarray(ws)) * hq
            logd[pos] = _LOG_HALF - c * c + np.log(d)
            dlog[pos] = -(2.0 / _SQRTPI) * (h / yy) / d
            redo[pos] |= ~(d > 0.0)
        neg = (chi < 0.0) & ~redo
        if np.any(neg):
            c, yy = chi[neg], y[neg]
            e = eps[neg]
            inner = np.where(yy < 1.0, 0.5 * (special.erf(-c) + np.exp(e) * special.erf(yy) - np.expm1(e)), 0.0)
            q = 0.5 * (special.erfc(-c) + np.exp(-c * c) * special.erfcx(yy))
            ld = np.where(inner > 0.0, np.log(inner), np.log1p(-q))
            logd[neg] = ld
            dlog[neg] = -np.exp(-c * c - ld) * (1.0 - c / yy) / _SQRTPI
    for i in np.flatnonzero(redo):
        logd[i], dlog[i] = _log_delta_chi(float(chi[i]), float(eps[i]))
    return logd.reshape(shape), dlog.reshape(shape)


# ---------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------


# chi = (eps s - 1/(2 s))/sqrt2 with s = sigma/sensitivity is formed in doubles unless the two terms cancel
# (their sum above _EXACT_CHI times their difference, or above it when they are close) or overflow:
# then it is formed exactly from the three doubles given (Fractions) and rounded once, so delta at
# sigma = 1e-13 and epsilon = 5e25 is that of the inputs, not of a rounding of eps s ~ 5e12 to 1e-3.
_EXACT_CHI = 100.0


def _chi_exact(eps: float, sigma: float, sensitivity: float) -> float:
    """sqrt2 chi = eps sigma/Delta - Delta/(2 sigma) in exact rational arithmetic, rounded once; +-inf beyond range."""
    f_sigma, f_sens = Fraction(sigma), Fraction(sensitivity)
    t = Fraction(eps) * f_sigma / f_sens - f_sens / (2 * f_sigma)
    try:
        v = float(t)
    except OverflowError:
        v = math.inf if t > 0 else -math.inf
    return v / _SQRT2


def _chi(eps: float, sigma: float, sensitivity: float) -> float:
    """The substituted variable chi of (sigma, sensitivity, eps), without cancellation or overflow."""
    s = sigma / sensitivity
    if 0.0 < s < math.inf:
        a, b = eps * s, 0.5 / s
        if a + b <= _EXACT_CHI * max(abs(a - b), 1.0):  # also false when a is inf
            return (a - b) / _SQRT2
    return _chi_exact(eps, sigma, sensitivity)


def _chi_array(eps: NDArray[np.float64], sigma: float, sensitivity: float) -> NDArray[np.float64]:
    """Vectorised :func:`_chi`."""
    flat = np.asarray(eps, dtype=np.float64).reshape(-1)
    s = sigma / sensitivity
    if 0.0 < s < math.inf:
        with np.errstate(all="ignore"):
            a, b = flat * s, 0.5 / s
            chi = (a - b) / _SQRT2
            exact = np.flatnonzero(~(a + b <= _EXACT_CHI * np.maximum(np.abs(a - b), 1.0)))
    else:
        chi, exact = np.empty(flat.shape), np.arange(flat.size)
    for i in exact:
        chi[i] = _chi_exact(float(flat[i]), sigma, sensitivity)
    return chi.reshape(np.shape(eps))


def _positive(name: str, value: object) -> float:
    """check_positive_finite with a fast path for a plain float (the common call)."""
    if isinstance(value, float) and 0.0 < value < math.inf:
        return float(value)
    return check_positive_finite(name, value)


def _probability(name: str, value: object) -> float:
    """check_probability_open with a fast path for a plain float."""
    if isinstance(value, float) and 0.0 < value < 1.0:
        return float(value)
    return check_probability_open(name, value)


def gaussian_log_delta(sigma: float, sensitivity: float, epsilon: ArrayLike) -> float | NDArray[np.float64]:
    r"""Natural log of the exact privacy profile :math:`\delta_\sigma(\varepsilon)` (see :func:`gaussian_delta`).

    Useful where :math:`\delta` underflows a double (below ~1e-308): the log
    stays accurate for every finite input.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, finite and > 0.
    sensitivity : float
        L2 sensitivity :math:`\Delta`, finite and > 0.
    epsilon : float or array_like
        Non-empty, every element finite and >= 0 (vectorised); ``-inf`` is returned where
        :math:`\log\delta` is below the doubles (about :math:`-1.8\cdot10^{308}`).

    Raises
    ------
    ValueError
        If ``sigma`` or ``sensitivity`` is not finite and > 0, or ``epsilon``
        contains a negative, NaN or infinite value.
    """
    sigma = check_positive_finite("sigma", sigma)
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    eps = check_nonnegative_finite_array("epsilon", epsilon)
    if eps.ndim == 0:  # one epsilon: the scalar kernel (pure Python floats) is the fast path
        e = float(eps)
        return _log_delta_chi(_chi(e, sigma, sensitivity), e)[0]
    logd, _ = _log_delta_chi_array(_chi_array(eps, sigma, sensitivity), eps)
    if logd.ndim == 0:
        return float(logd)
    return logd


def gaussian_delta(sigma: float, sensitivity: float, epsilon: ArrayLike) -> float | NDArray[np.float64]:
    r"""Exact privacy profile of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).

    .. math::

        \delta_\sigma(\varepsilon) = \Phi\Big(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
          - e^{\varepsilon}\,\Phi\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big),

    the smallest :math:`\delta` for which :math:`N(f(D), \sigma^2)` is
    :math:`(\varepsilon,\delta)`-DP for queries of L2 sensitivity :math:`\Delta`.
    Computed stably as :math:`\tfrac12 e^{-\chi^2}(\operatorname{erfcx}(\chi) -
    \operatorname{erfcx}(\sqrt{\chi^2+\varepsilon}))` (module docstring), so it
    is never negative or NaN and keeps full relative accuracy down to the
    smallest double. At :math:`\varepsilon = 0` it is the total-variation
    distance :math:`\operatorname{erf}(\Delta/(2\sqrt2\sigma))`.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, finite and > 0.
    sensitivity : float
        L2 sensitivity :math:`\Delta`, finite and > 0.
    epsilon : float or array_like
        One or many :math:`\varepsilon \ge 0` (vectorised).

    Returns
    -------
    float or numpy.ndarray
        :math:`\delta_\sigma(\varepsilon)`, shaped like ``epsilon``.

    Raises
    ------
    ValueError
        If ``sigma`` or ``sensitivity`` is not finite and > 0, or ``epsilon``
        contains a negative, NaN or infinite value.
    """
    logd = gaussian_log_delta(sigma, sensitivity, epsilon)
    if isinstance(logd, float):
        return math.exp(logd)
    return np.exp(logd)


def classic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    r"""The classic calibration :math:`\sigma = \Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon`.

    Dwork & Roth (2014, Theorem A.1) prove it gives :math:`(\varepsilon,\delta)`-DP
    **only for** :math:`\varepsilon < 1`; for larger epsilon it can violate delta
    (the chapter shows an instance), so it is refused rather than returned.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity, finite and > 0 (subnormal included).
    epsilon : float
        In the open interval (0, 1): the theorem's range.
    delta : float
        In the open interval (0, 1), subnormal values included.

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is not finite and > 0, if
        ``epsilon >= 1`` (the theorem requires epsilon < 1; use
        :func:`analytic_gaussian_sigma`), if ``delta`` is not in (0, 1), or if
        sigma itself is not a normal double (it overflows, or lies below
        ``2.2e-308``). Inputs of any scale (subnormal included) whose sigma is
        a normal double get it to a few ulp: it is formed from the mantissas
        and binary exponents of ``sensitivity`` and ``epsilon`` separately and
        from :math:`\ln 1.25 - \ln\delta`, never from ``1.25/delta``.
    """
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    epsilon = check_positive_finite("epsilon", epsilon)
    delta = check_probability_open("delta", delta)
    if epsilon >= 1.0:
        raise ValueError(
            f"epsilon must be < 1 for the classic Gaussian calibration: its theorem "
            f"(Dwork & Roth 2014, Theorem A.1) needs epsilon < 1, and for larger epsilon the "
            f"sigma it gives can violate delta; got epsilon={epsilon}. Use analytic_gaussian_sigma."
        )
    # Scaled so that no intermediate overflows or goes subnormal: 1.25/delta overflows for
    # delta < 7e-309, and sensitivity * root (or sensitivity / epsilon) can be subnormal or
    # infinite although sigma is a normal double (sensitivity = epsilon = delta = 1e-320
    # gives sigma = 38.4). The mantissas (in [0.5, 1)) are divided, the root is in
    # [0.66, 38.6], and the binary exponents are applied once, by ldexp, at the end.
    root = math.sqrt(2.0 * (_LOG_1_25 - math.log(delta)))  # both terms >= 0: no cancellation
    m_sens, e_sens = math.frexp(sensitivity)
    m_eps, e_eps = math.frexp(epsilon)
    inputs = f"sensitivity={sensitivity!r}, epsilon={epsilon!r}, delta={delta!r}"
    try:
        sigma = math.ldexp(m_sens / m_eps * root, e_sens - e_eps)
    except OverflowError:
        sigma = math.inf
    return check_normal_result("sigma", sigma, inputs)


def _analytic_chi(epsilon: float, delta: float, log_target: float) -> tuple[float, float, float]:
    """(chi, log delta(chi), its derivative) with log delta(chi) in [log_target - window, log_target]."""
    # proven upper end: delta(chi) < erfc(chi)/2 = Phi(-sqrt2 chi) = delta at chi_hi
    chi_hi = -float(special.ndtri(delta)) / _SQRT2
    window = _WINDOW * _safety_margin(log_target)
    return _solve_decreasing(lambda c: _log_delta_chi(c, epsilon), chi_hi, 1.0, log_target, window)


def _sigma_from_chi(chi: float, epsilon: float) -> float:
    # hypot: chi * chi + epsilon fell into the subnormals at epsilon 5e-324 (chi ~ 2e-161): sigma 1.85e-7
    # relatively too small (true delta above the target; oracle at 1000 examples)
    y = math.hypot(chi, math.sqrt(epsilon))
    gap = epsilon / (y + chi) if chi >= 0.0 else y - chi  # y - chi without cancellation
    return 1.0 / (_SQRT2 * gap)


# relative rounding error of chi = (eps s - 1/(2 s))/sqrt2 when it is recomputed from a
# double sigma and sensitivity (s = sigma/sensitivity): a few ulp of eps s + 1/(2 s)
_CHI_ROUNDING = 8.0 * 2.0**-52


def _certify(s: float, epsilon: float, log_target: float) -> float:
    """Smallest s' >= s, in growing steps of a few ulp, that is safe even for a recomputed chi.

    gaussian_delta recomputes chi from sigma, which cancels when eps s ~ 1/(2s) are
    both large (huge epsilon); delta is decreasing in chi, so it is checked at chi
    minus the worst rounding error. At ordinary epsilon the first check passes.
    """
    step = 4e-15
    for _ in range(200):  # step doubles: 200 rounds pass any finite s
        a, b = epsilon * s, 0.5 / s
        if _log_delta_chi((a - b) / _SQRT2 - _CHI_ROUNDING * (a + b), epsilon)[0] <= log_target:
            return s
        s *= 1.0 + step
        step *= 2.0
        if not s < math.inf:
            break
    raise ValueError(
        f"no sigma/sensitivity below the double range gives delta <= exp({log_target!r}) at epsilon={epsilon!r}"
    )


def _certified_sigma(epsilon: float, delta: float) -> float:
    """sigma / sensitivity for (epsilon, delta): the root in chi, mapped to sigma and certified.

    The certificate needs no new evaluation when the first-order bound
    log delta(chi) + |d log delta/d chi| * (worst rounding of chi) is already
    below the target (the usual case); otherwise :func:`_certify` checks it.
    """
    log_target = math.log(delta)
    log_target -= _safety_margin(log_target)
    chi, f, d = _analytic_chi(epsilon, delta, log_target)
    s = _sigma_from_chi(chi, epsilon)
    if not (_TINY <= s < 1e300) or f > log_target:
        raise ValueError(
            f"the Gaussian noise for epsilon={epsilon!r}, delta={delta!r} is sigma/sensitivity = {s:.3g}, "
            f"outside the range [2.2e-308, 1e300] of useful doubles"
        )
    a, b = epsilon * s, 0.5 / s
    if f + 1.25 * abs(d) * 2.0 * _CHI_ROUNDING * (a + b) <= log_target:
        return s
    return _certify(s, epsilon, log_target)


def analytic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    r"""Smallest sigma for which the Gaussian mechanism is (epsilon, delta)-DP.

    The analytic Gaussian mechanism (Balle & Wang 2018, Algorithm 1; Bao et al.
    2021, Lemma 2.4): solve :math:`\operatorname{erfc}(\chi) - e^\varepsilon
    \operatorname{erfc}(\sqrt{\chi^2+\varepsilon}) = 2\delta` for :math:`\chi`
    and return :math:`\sigma = \Delta/(\sqrt2(\sqrt{\chi^2+\varepsilon} - \chi))`.
    The equation is solved in log space by safeguarded Newton inside a proven
    bracket (module docstring); the result has relative error below ~1e-12
    for delta >= 1e-10 (the safe-side window is relative to
    :math:`|\log\delta|`: about 1e-11 at delta = 1e-100) and
    ``gaussian_delta(sigma, sensitivity, epsilon) <= delta`` always holds
    (the root is shifted by a few rounding errors to the safe side).

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity, finite and > 0.
    epsilon : float
        Privacy parameter, finite and > 0 (any size; no epsilon < 1 restriction).
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    float
        sigma, with :math:`\delta e^{-\eta} \le \delta_\sigma(\varepsilon) \le \delta`,
        :math:`\eta = 10^{-13}(1 + |\log\delta|)`: the smallest sigma for a target within that relative
        distance below ``delta`` (backward accuracy, as :func:`gaussian_epsilon`).

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is not finite and > 0, ``delta``
        is not in (0, 1), or sigma is not a normal double (outside [2.2e-308, 1.8e308]).
    """
    sensitivity = _positive("sensitivity", sensitivity)
    epsilon = _positive("epsilon", epsilon)
    delta = _probability("delta", delta)
    sigma = sensitivity * _certified_sigma(epsilon, delta)
    if not _TINY <= sigma < math.inf:
        check_normal_result("sigma", sigma, f"sensitivity={sensitivity!r}, epsilon={epsilon!r}, delta={delta!r}")
    return sigma


def analytic_gaussian_sigma_many(sensitivity: ArrayLike, epsilon: ArrayLike, delta: ArrayLike) -> NDArray[np.float64]:
    r"""Vectorised :func:`analytic_gaussian_sigma` for many (sensitivity, epsilon, delta).

    The arguments broadcast against each other. The same equation and
    guarantees as the scalar function, solved for all entries at once by a
    vectorised safeguarded Newton iteration on the proven bracket.

    Parameters
    ----------
    sensitivity : float or array_like
        Non-empty, every element finite and > 0.
    epsilon : float or array_like
        Non-empty, every element finite and > 0.
    delta : float or array_like
        Non-empty, every element in the open interval (0, 1).

    Returns
    -------
    numpy.ndarray
        sigma, with the broadcast shape of the arguments.

    Raises
    ------
    ValueError
        If any ``sensitivity`` or ``epsilon`` is not finite and > 0, any
        ``delta`` is not in (0, 1), the arrays do not broadcast, or some sigma
        lies outside [2.2e-308, 1e300] (the scalar function's upper limit is the
        largest double instead).
    """
    sens = check_positive_finite_array("sensitivity", sensitivity)
    eps = check_positive_finite_array("epsilon", epsilon)
    dl = check_finite_array("delta", delta)
    if dl.size == 0:
        raise ValueError("delta must not be empty")
    if np.any(~((dl > 0) & (dl < 1))):
        raise ValueError("delta must lie in the open interval (0, 1); some element does not")
    sens, eps, dl = np.broadcast_arrays(sens, eps, dl)
    shape = eps.shape
    eps = eps.ravel().astype(float)
    dl = dl.ravel().astype(float)
    if eps.size <= _SCALAR_BATCH:  # small batches: a loop over the scalar solver is faster
        s_small = [_certified_sigma(e, d) for e, d in zip(eps.tolist(), dl.tolist(), strict=True)]
        with np.errstate(over="ignore", under="ignore"):
            out = np.asarray((sens.ravel() * np.array(s_small)).reshape(shape), dtype=np.float64)
        if not np.all((out >= _TINY) & (out < 1e300)):
            raise ValueError(
                "some sigma = sensitivity * sigma/sensitivity lies outside [2.2e-308, 1e300] (overflow or "
                "underflow); use parameters of more moderate size"
            )
        return out
    log_target = np.log(dl)
    margin = 2e-14 * (1.0 + np.abs(log_target))  # = _safety_margin, elementwise
    log_target = log_target - margin
    window = _WINDOW * 2e-14 * (1.0 + np.abs(log_target))
    hi = -special.ndtri(dl) / _SQRT2  # proven: delta(chi) < erfc(chi)/2 = delta there
    lo = np.full(hi.shape, -np.inf)
    step = np.ones(hi.shape)
    fx, dx = _log_delta_chi_array(hi, eps)
    up = np.ones(hi.shape)
    bad = np.flatnonzero(fx > log_target)
    while bad.size:  # proven up to the rounding margin only (delta close to 1): move up
        hi[bad] += up[bad]
        up[bad] *= 2.0
        fx[bad], dx[bad] = _log_delta_chi_array(hi[bad], eps[bad])
        bad = bad[fx[bad] > log_target[bad]]
    x = hi.copy()
    nudge = np.zeros(x.shape, bool)
    last = np.full(x.shape, np.inf)
    active = np.ones(x.shape, bool)
    for it in range(_MAX_NEWTON):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        if idx.size <= _SCALAR_TAIL and it >= 2:
            # a few slow entries left: the scalar solver is cheaper than array overhead
            for i in idx:
                hi[i] = _analytic_chi(float(eps[i]), float(dl[i]), float(log_target[i]))[0]
            active[idx] = False
            nudge[idx] = False
            break
        xa, fa, da, ta = x[idx], fx[idx], dx[idx], log_target[idx]
        la, ha = lo[idx], hi[idx]
        with np.errstate(divide="ignore", invalid="ignore"):
            nx = np.where((da < 0) & np.isfinite(da), xa - (fa - ta + 0.5 * window[idx]) / da, np.nan)
        good = (fa <= ta) & (fa >= ta - window[idx])  # safe and within rounding noise: done
        hi[idx[good]] = xa[good]
        conv = good | (np.abs(nx - xa) <= 2e-16 * np.abs(xa))
        nudge[idx[conv & (fa > ta)]] = True
        active[idx[conv]] = False
        keep = ~conv
        idx, nx, xa, la, ha, ta = idx[keep], nx[keep], xa[keep], la[keep], ha[keep], ta[keep]
        if idx.size == 0:
            break
        nolo = np.isinf(la)
        inside = (nx > la) & (nx < ha) & (nolo | (np.abs(nx - xa) <= 0.5 * last[idx]))
        expand = ~inside & nolo
        nx = np.where(inside, nx, np.where(nolo, ha - step[idx], 0.5 * (la + ha)))
        step[idx[expand]] *= 2.0
        last[idx] = np.abs(nx - xa)
        fn, dn = _log_delta_chi_array(nx, eps[idx])
        below = fn <= ta
        hi[idx] = np.where(below, nx, ha)
        lo[idx] = np.where(below, la, nx)
        x[idx], fx[idx], dx[idx] = nx, fn, dn
        narrow = ~np.isinf(lo[idx]) & (hi[idx] - lo[idx] <= 4e-16 * np.maximum(np.abs(hi[idx]), np.abs(lo[idx])))
        active[idx[narrow]] = False
    for i in np.flatnonzero(active):  # not converged here (a root far below 1): the scalar solver finishes it
        hi[i] = _analytic_chi(float(eps[i]), float(dl[i]), float(log_target[i]))[0]
        nudge[i] = False
    # last iterate a rounding error on the unsafe side: step up by a few ulp
    idx = np.flatnonzero(nudge)
    up = np.maximum(np.abs(x[idx]), 1e-300) * 2.3e-16
    for _ in range(64):
        if idx.size == 0:
            break
        cand = x[idx] + up
        fc, _ = _log_delta_chi_array(cand, eps[idx])
        done = (fc <= log_target[idx]) | (cand >= hi[idx])
        hi[idx[done]] = np.minimum(cand[done], hi[idx[done]])
        idx, up = idx[~done], up[~done] * 2.0
    chi = hi
    y = np.hypot(chi, np.sqrt(eps))  # not sqrt(chi^2 + eps): subnormal at tiny eps (see _sigma_from_chi)
    gap = np.where(chi >= 0, eps / (y + np.abs(chi)), y - chi)
    s_all = 1.0 / (_SQRT2 * gap)
    # certify against the rounding of chi recomputed from sigma (see _certify)
    idx = np.arange(s_all.size)
    step = np.full(s_all.size, 4e-15)
    while idx.size:
        a, b = eps[idx] * s_all[idx], 0.5 / s_all[idx]
        ok = _log_delta_chi_array((a - b) / _SQRT2 - _CHI_ROUNDING * (a + b), eps[idx])[0] <= log_target[idx]
        idx = idx[~ok]
        s_all[idx] *= 1.0 + step[idx]
        step[idx] *= 2.0
    with np.errstate(over="ignore", under="ignore"):
        out = np.asarray((sens.ravel() * s_all).reshape(shape), dtype=np.float64)
    if not np.all((out >= _TINY) & (out < 1e300)):
        raise ValueError(
            "some sigma = sensitivity * sigma/sensitivity lies outside [2.2e-308, 1e300] (overflow or underflow); "
            "use parameters of more moderate size"
        )
    return out


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    r"""Exact inverse of the privacy profile: the smallest epsilon with delta_sigma(epsilon) <= delta.

    :math:`\delta_\sigma(\varepsilon)` (:func:`gaussian_delta`) is continuous and
    strictly decreasing in :math:`\varepsilon`, so the answer is its unique
    root, or 0 when :math:`\delta_\sigma(0) = \operatorname{erf}(\Delta/(2\sqrt2\sigma)) \le \delta`.
    It is found in the variable :math:`\chi` (linear in epsilon) by safeguarded
    Newton inside the bracket :math:`[0, \varepsilon_{hi}]`, where
    :math:`\varepsilon_{hi}` is proven by :math:`\delta \le \Phi(\Delta/(2\sigma) -
    \varepsilon\sigma/\Delta)`; the result is rounded to the safe side, so
    ``gaussian_delta(sigma, sensitivity, result) <= delta``.

    The result is right to a few ulp at every scale: at ``sigma/sensitivity =
    1e-13`` the answer is about ``1/(2 s^2) = 5e25``, where forming
    :math:`\chi` from :math:`\varepsilon s - 1/(2s)` in doubles would cancel;
    :math:`\chi` is then formed exactly from the three doubles (rationals), and
    the root is sought in :math:`\chi` rather than in epsilon.

    Accuracy, stated backward: the answer :math:`\hat\varepsilon` satisfies
    :math:`\delta e^{-\eta} \le \delta_\sigma(\hat\varepsilon) \le \delta` with
    :math:`\eta = 10^{-13}(1 + |\log\delta|)`, i.e. it is the exact inverse at a target within that
    relative distance below ``delta`` (checked against 50-digit mpmath by the oracle suite,
    ``tests/oracle``). Forward, this is a few ulp wherever the profile is steep; where it is flat
    (``delta`` within about 1e-12 of 1) a target moved by 1e-14 moves epsilon far more, and no
    forward accuracy can be had from a double ``delta``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, finite and > 0, with ``sigma / sensitivity``
        above about 1e-150 (the answer, about :math:`\Delta^2/(2\sigma^2)`, at most 1e300).
    delta : float
        In the open interval (0, 1), subnormal values included.
    sensitivity : float
        L2 sensitivity :math:`\Delta`, finite and > 0 (default 1).

    Raises
    ------
    ValueError
        If ``sigma`` or ``sensitivity`` is not finite and > 0, ``delta`` is
        not in (0, 1), or the answer exceeds ``1e300`` (``sigma/sensitivity``
        below about ``1e-150``).
    """
    sigma = _positive("sigma", sigma)
    delta = _probability("delta", delta)
    sensitivity = _positive("sensitivity", sensitivity)
    log_target = math.log(delta)
    margin = _safety_margin(log_target)
    log_target -= margin

    def fun(eps: float) -> tuple[float, float]:
        # the same chi as gaussian_delta computes, so the check below is the user's
        chi = _chi(eps, sigma, sensitivity)
        logd, _ = _log_delta_chi(chi, eps)
        # d delta / d eps = -e^eps Phi(b) = -e^{-chi^2} erfcx(y) / 2 (Balle & Wang 2018, proof of Thm 8)
        y = math.hypot(chi, math.sqrt(eps))
        erfcx_y = float(special.erfcx(y))
        if not (math.isfinite(logd) and erfcx_y > 0.0):
            return logd, math.nan  # no usable slope: the solver bisects
        log_slope = _LOG_HALF - chi * chi + math.log(erfcx_y)
        return logd, -_exp_slope(log_slope - logd)

    if fun(0.0)[0] <= log_target:
        return 0.0
    # The root is found in chi, on the line eps(chi) = mu (sqrt2 chi + mu/2), mu = Delta/sigma, along which
    # delta decreases: chi is O(1) to O(40) whatever sigma, whereas eps can be ~1/(2 s^2) = 5e25 at
    # s = 1e-13, where one ulp of eps moves chi by 1e-3 (a Newton iteration in eps then stalls).
    # Proven upper end: delta(chi) < Phi(sqrt2 chi) = erfc(chi)/2 <= delta once chi >= -ndtri(delta)/sqrt2.
    mu = sensitivity / sigma  # inf when it overflows: refused below
    chi_hi = -float(special.ndtri(delta)) / _SQRT2
    eps_hi = mu * (_SQRT2 * chi_hi + 0.5 * mu) if mu < 1e150 else math.inf
    if not eps_hi < _MAX_EPSILON:
        raise ValueError(
            f"the epsilon of sigma={sigma!r}, sensitivity={sensitivity!r} at delta={delta!r} is about "
            f"sensitivity^2/(2 sigma^2), beyond {_MAX_EPSILON:g}: not a useful double"
        )

    def eps_of(x: float) -> float:
        return max(mu * (_SQRT2 * x + 0.5 * mu), 0.0)

    def fun_chi(x: float) -> tuple[float, float]:
        e = eps_of(x)
        logd, _ = _log_delta_chi(x, e)
        y = math.hypot(x, math.sqrt(e))
        erfcx_y = float(special.erfcx(y))
        if not (math.isfinite(logd) and erfcx_y > 0.0):
            return logd, math.nan
        # d log delta / d chi = (d delta / d eps) (d eps / d chi) / delta, d eps / d chi = sqrt2 mu
        return logd, -_exp_slope(_LOG_HALF - x * x + math.log(erfcx_y) - logd) * _SQRT2 * mu

    chi = _solve_decreasing(fun_chi, chi_hi, 1.0, log_target, margin)[0]
    eps = eps_of(chi)
    # certify with the user's own computation (chi recomputed from eps): step up by growing ulps
    grow = 1.0
    while fun(eps)[0] > log_target:
        eps = max(eps * (1.0 + 2.3e-16 * grow), math.nextafter(eps, math.inf))
        grow *= 2.0
        if not eps < _MAX_EPSILON:
            raise ValueError(f"gaussian_epsilon did not find epsilon below {_MAX_EPSILON:g}")  # pragma: no cover
    return eps


def gaussian_mechanism(
    value: ArrayLike,
    sensitivity: float,
    epsilon: float,
    delta: float,
    rng: RNGLike = None,
    calibration: Literal["analytic", "classic"] = "analytic",
) -> float | NDArray[np.float64]:
    r"""Release ``value`` with Gaussian noise calibrated to (epsilon, delta)-DP.

    .. math:: M(D) = f(D) + N(0, \sigma^2 I)

    with :math:`\sigma` from :func:`analytic_gaussian_sigma` (default; exact for
    every epsilon) or :func:`classic_gaussian_sigma` (epsilon < 1 only).
    ``sensitivity`` is the **L2** sensitivity of the whole (vector) query.
    The noise is drawn with standard deviation sigma (not variance sigma: see
    :func:`dpbook.flawed.gaussian_variance_as_std`).

    Raises
    ------
    ValueError
        On invalid ``sensitivity``/``epsilon``/``delta`` (see the calibrators),
        an unknown ``calibration``, or a ``value`` containing NaN or infinity.
    """
    if not isinstance(calibration, str):
        raise ValueError(f"calibration must be 'analytic' or 'classic'; got {calibration!r}")
    if calibration == "analytic":
        sigma = analytic_gaussian_sigma(sensitivity, epsilon, delta)
    elif calibration == "classic":
        sigma = classic_gaussian_sigma(sensitivity, epsilon, delta)
    else:
        raise ValueError(f"calibration must be 'analytic' or 'classic'; got {calibration!r}")
    return release_with_noise(value, lambda gen, shape: normal_noise(gen, shape, sigma), rng)


def normal_noise(gen: np.random.Generator, shape: int | tuple[int, ...], sigma: float) -> NDArray[np.float64]:
    """Independent :math:`N(0, \\sigma^2)` draws; ``sigma`` in ``[2.2e-308, 1e304]`` so that no draw overflows.

    Raises
    ------
    ValueError
        If ``sigma`` is not a finite real number in ``[2.2e-308, 1e304]``.
    """
    sigma = check_noise_scale("sigma", sigma)
    return gen.normal(0.0, sigma, size=shape)


# --------------------------------------------------------------------------- exact Gaussian composition


def exact_gaussian_composition_epsilon(sigma: float, count: int, delta: float, sensitivity: float = 1.0) -> float:
    r"""Exact epsilon at ``delta`` of ``count`` composed Gaussian mechanisms.

    ``count`` Gaussian mechanisms with noise :math:`\sigma` on queries of L2
    sensitivity :math:`\Delta` release a vector whose privacy-loss law is
    that of one Gaussian mechanism with sensitivity :math:`\sqrt{k}\,\Delta`
    (the Gaussian is rotation invariant; Dong, Roth & Su 2022, Corollary 3.3),
    so the answer is :func:`dpcore.gaussian.gaussian_epsilon` with that
    sensitivity: the exact inverse of the privacy profile of Balle & Wang
    (2018), :math:`\delta(\varepsilon) = \Phi(\mu/2 - \varepsilon/\mu) - e^\varepsilon\Phi(-\mu/2-\varepsilon/\mu)`,
    :math:`\mu = \sqrt{k}\Delta/\sigma`, with its backward accuracy (the profile at the answer lies in
    :math:`[\delta e^{-\eta}, \delta]`, :math:`\eta = 10^{-13}(1 + |\log\delta|)`).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, finite and > 0; :math:`\sigma/(\sqrt{k}\Delta)` above about 1e-150.
    count : int
        The number of compositions :math:`k`, an integer in [1, 2**63 - 1].
    delta : float
        In the open interval (0, 1), subnormal values included.
    sensitivity : float
        L2 sensitivity :math:`\Delta`, finite and > 0 (default 1).

    Raises
    ------
    ValueError
        If ``sigma`` or ``sensitivity`` is not finite and > 0, ``count`` is not an
        integer in [1, 2**63 - 1], ``delta`` is outside (0, 1), or the answer
        exceeds 1e300 (as :func:`gaussian_epsilon`).
    """
    sigma = check_positive_finite("sigma", sigma)
    count = check_positive_int("count", count)
    delta = check_probability_open("delta", delta)
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    # mu = sqrt(k) D / sigma is rounded to the safe side (larger), checked in rationals: where epsilon is huge,
    # one ulp of mu moves it past the profile's whole fall (issue 28, oracle: 1.7e-4 relative over delta at
    # sigma 2.45e-9 and 3.3e7 releases)
    root = ceil_sqrt_double(Fraction(count), "sqrt(count)")
    ratio = sigma / sensitivity  # only the ratio matters: avoids rounding sqrt(k) * a subnormal sensitivity
    if 0.0 < ratio < math.inf and Fraction(ratio) > Fraction(sigma) / Fraction(sensitivity):
        ratio = math.nextafter(ratio, 0.0)
    if _TINY <= ratio < math.inf:
        return float(gaussian_epsilon(ratio, delta, sensitivity=root))
    total = ceil_double(Fraction(root) * Fraction(sensitivity), "the composed sensitivity sqrt(count) * sensitivity")
    return float(gaussian_epsilon(sigma, delta, sensitivity=total))
