r"""Rényi differential privacy: divergences, RDP curves, conversion to (epsilon, delta), accounting.

A mechanism :math:`M` is :math:`(\alpha, \varepsilon)`-RDP (Mironov 2017) when,
for every pair of neighbouring data sets, the Rényi divergence of order
:math:`\alpha > 1`

.. math:: D_\alpha(P \,\|\, Q) = \frac{1}{\alpha-1} \log \int p(x)^\alpha q(x)^{1-\alpha}\,dx

between the output laws :math:`P = M(D)` and :math:`Q = M(D')` is at most
:math:`\varepsilon`. RDP composes additively (Mironov 2017, Proposition 1), so
an accountant only has to add RDP curves :math:`\alpha \mapsto \varepsilon(\alpha)`
and convert the sum to :math:`(\varepsilon, \delta)`-DP at the end.

Contents
--------
* :func:`renyi_divergence` -- numerical divergence between two log-densities
  (adaptive quadrature in log space), for checking closed forms;
* :func:`gaussian_rdp`, :func:`laplace_rdp` -- closed-form RDP curves;
  :func:`subsampled_gaussian_rdp` -- the Poisson-subsampled Gaussian
  (Mironov, Talwar & Zhang 2019: exact at integer orders, a bound between);
* :func:`rdp_to_dp` -- the conversion of Canonne, Kamath & Steinke (2020,
  Proposition 12), never looser than Mironov's classical one;
* :class:`RdpAccountant` -- vectorised accountant over a grid of orders,
  refined to the continuous optimum over the order (the exact epsilon of
  ``k`` composed Gaussian mechanisms, to compare with, is
  :func:`dpcore.gaussian.exact_gaussian_composition_epsilon`).
"""

from __future__ import annotations

import decimal
import math
import warnings
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._lazy import lazy_module
from ._validation import (
    as_real_array,
    check_array_above,
    check_bool,
    check_finite_array,
    check_positive_finite,
    check_positive_finite_array,
    check_positive_int,
    check_probability_open,
    check_subsampled_gaussian,
)

integrate = lazy_module("scipy.integrate")
optimize = lazy_module("scipy.optimize")
special = lazy_module("scipy.special")

__all__ = [
    "HasRdp",
    "renyi_divergence",
    "gaussian_rdp",
    "laplace_rdp",
    "subsampled_gaussian_rdp",
    "classical_rdp_to_dp",
    "rdp_to_dp",
    "DEFAULT_RDP_ORDERS",
    "MAX_REFINED_ORDER",
    "RdpAccountant",
]

LogDensity = Callable[[NDArray[np.float64]], NDArray[np.float64]]

#: Default grid of Rényi orders: 1.01 ... 10^4, 256 orders spaced geometrically in alpha - 1.
DEFAULT_RDP_ORDERS: NDArray[np.float64] = 1.0 + np.geomspace(1e-2, 1e4, 256)
DEFAULT_RDP_ORDERS.setflags(write=False)

#: Largest order the accountant's continuous search goes to when the best grid order is the grid's last.
MAX_REFINED_ORDER = 1e6


# --------------------------------------------------------------------------- validation


def _check_orders(name: str, alpha: ArrayLike) -> NDArray[np.float64]:
    """Orders as a float array; every element must be finite and > 1."""
    return check_array_above(name, alpha, 1.0, "Rényi DP is defined for orders alpha > 1")


def _real_scalar(name: str, value: float) -> float:
    """A real scalar (infinities allowed, NaN caught by the caller's comparison)."""
    arr = as_real_array(name, value)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar; got an array of shape {arr.shape}")
    return float(arr)


def _check_order_scalar(name: str, alpha: float) -> float:
    arr = _check_orders(name, alpha)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar; got an array of shape {arr.shape}")
    return float(arr)


# --------------------------------------------------------------------------- numerical divergence


def _as_log_values(logf: LogDensity, xs: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.asarray(logf(xs), dtype=float)
    if out.shape != xs.shape:
        out = np.array([float(logf(np.asarray(v))) for v in xs])
    return out


def _quad_sum(f: Callable[[float], float], edges: NDArray[np.float64], epsrel: float) -> tuple[float, float]:
    """Sum of adaptive Gauss--Kronrod integrals of ``f`` over consecutive ``edges``, and the summed error."""
    total, abserr = 0.0, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        for a, b_ in zip(edges[:-1], edges[1:], strict=True):
            val, err = integrate.quad(f, a, b_, epsabs=0.0, epsrel=epsrel, limit=500)
            total += val
            abserr += err
    return total, abserr


def _log_integral(
    logf: LogDensity,
    lower: float,
    upper: float,
    points: NDArray[np.float64],
    scale: float,
    epsrel: float,
) -> tuple[float, float, NDArray[np.float64]]:
    r"""``log \int exp(logf)`` over ``[lower, upper]``, its relative error estimate, and the edges used.

    The integrand is shifted by its maximum (found on a wide geometric grid
    around ``points`` and refined by bounded Brent search), so it never
    overflows; the interval is split at ``points``, at the maximiser and at
    the maximiser +- ``scale`` * (1, 10, 100), and each piece is integrated by
    adaptive Gauss--Kronrod quadrature (QUADPACK via :func:`scipy.integrate.quad`).
    ``logf`` must accept both arrays and floats.
    """
    centre = float(np.median(points)) if points.size else 0.0
    offsets = scale * np.concatenate(([0.0], np.geomspace(1e-4, 1e5, 400)))
    grid = np.concatenate((points, centre - offsets, centre + offsets))
    grid = np.unique(grid[(grid >= lower) & (grid <= upper)])
    if grid.size == 0:
        raise ValueError(
            f"the integration interval [lower, upper] = [{lower}, {upper}] contains none of the probe points "
            "(the median of points, or 0, plus or minus scale * [0, 1e-4 .. 1e5]); pass points inside it"
        )
    vals = _as_log_values(logf, grid)
    vals = np.where(np.isnan(vals), -np.inf, vals)
    i = int(np.argmax(vals))
    if not np.isfinite(vals[i]):
        raise ValueError("the integrand is zero (or NaN) at every probe point; give points inside its support")
    x_star, shift = float(grid[i]), float(vals[i])
    lo_b = grid[max(i - 1, 0)]
    hi_b = grid[min(i + 1, grid.size - 1)]
    if hi_b > lo_b:
        res = optimize.minimize_scalar(
            lambda t: -float(logf(np.asarray(t))),
            bounds=(lo_b, hi_b),
            method="bounded",
            options={"xatol": 1e-12 * max(1.0, abs(x_star))},
        )
        if np.isfinite(res.fun) and -res.fun > shift:
            x_star, shift = float(res.x), float(-res.fun)
    cuts = np.concatenate((points, [x_star], x_star + scale * np.array([-100, -10, -1, 1, 10, 100.0])))
    cuts = np.unique(cuts[(cuts > lower) & (cuts < upper)])
    edges = np.concatenate(([lower], cuts, [upper]))
    try:
        total, abserr = _quad_sum(lambda t: math.exp(float(logf(np.asarray(t))) - shift), edges, epsrel)
    except OverflowError:
        raise ValueError(
            "the quadrature met values of the integrand e^300 times its maximum on the probe grid: the grid "
            "missed the peak; give points near the mass and a scale of its width"
        ) from None
    if not (total > 0 and math.isfinite(total)):
        raise ValueError(
            f"the integral is not a positive finite number (got {total}); check the densities, and that scale "
            f"(a typical width of the integrand) is right"
        )
    return math.log(total) + shift, abserr / total, edges


def renyi_divergence(
    logp: LogDensity,
    logq: LogDensity,
    alpha: float,
    *,
    lower: float = -math.inf,
    upper: float = math.inf,
    points: ArrayLike = (),
    scale: float = 1.0,
    epsrel: float = 1e-12,
    check_normalised: bool = True,
    max_order: float = 1e4,
) -> float:
    r"""Rényi divergence :math:`D_\alpha(P\|Q)` of two densities on the line, by quadrature in log space.

    .. math:: D_\alpha(P\|Q) = \frac{1}{\alpha-1}\log\int e^{\alpha \log p(x) + (1-\alpha)\log q(x)}\,dx
       \qquad (\alpha > 1)

    (Rényi 1961; Mironov 2017, Definition 3). The exponent
    :math:`\ell(x) = \alpha\log p + (1-\alpha)\log q` is shifted by its
    maximum before exponentiation, so large orders and tiny densities neither
    overflow nor underflow; the integral is split at ``points`` (put every
    kink or discontinuity of the densities there) and at the maximiser of
    :math:`\ell`, and each piece is integrated by adaptive Gauss--Kronrod
    quadrature (:func:`scipy.integrate.quad`).

    Parameters
    ----------
    logp, logq : callable
        Vectorised log-densities of :math:`P` and :math:`Q` (``-inf`` off the support).
    alpha : float
        The order, finite, > 1 and at most ``max_order``.
    lower, upper : float
        The integration range (default the real line), ``lower < upper``, infinite ends allowed.
    points : array_like
        Break points: kinks and discontinuities of the densities.
    scale : float
        A typical width of the integrand (places extra break points); > 0.
    epsrel : float
        Relative tolerance requested from the quadrature, in [1e-15, 1).
    check_normalised : bool
        A ``bool`` or ``numpy.bool_``. If true (default), also integrate :math:`p` and :math:`q` and refuse
        densities whose mass differs from 1 by more than ``1e-8``.
    max_order : float
        Finite and > 0; refuse orders above this (default ``1e4``): the integrand sharpens as
        the order grows and the quadrature's work with it (measured on a
        loaded 2-core machine: ~2 s at 1e4 for two unit Gaussians, ~6 s at
        sigma 0.01, 41 s at 1e5). Raise it explicitly to go further.

    Returns
    -------
    float
        :math:`D_\alpha(P\|Q)` in nats; ``inf`` when a probe point has
        :math:`p > 0 = q` (:math:`P` not absolutely continuous w.r.t. :math:`Q`).

    Raises
    ------
    ValueError
        If ``alpha <= 1`` or ``alpha > max_order``, ``logp`` or ``logq`` is not
        callable, ``scale <= 0``, ``lower >= upper`` (or either is NaN),
        ``check_normalised`` is not a bool,
        ``epsrel`` is not in [1e-15, 1), a density is not normalised, or the
        integral is not a positive finite number.
    RuntimeError
        If the quadrature's error estimate of the divergence exceeds
        ``1e-10 * max(1, D)``.
    """
    alpha = _check_order_scalar("alpha", alpha)
    limit = check_positive_finite("max_order", max_order)
    if alpha > limit:
        raise ValueError(
            f"alpha must be <= max_order={limit:g} (the quadrature's work grows with the order); got {alpha!r}. "
            f"Pass a larger max_order to go further"
        )
    for name, f in (("logp", logp), ("logq", logq)):
        if not callable(f):
            raise ValueError(f"{name} must be a callable log-density; got {f!r}")
    scale = check_positive_finite("scale", scale)
    epsrel = check_positive_finite("epsrel", epsrel)
    if not 1e-15 <= epsrel < 1.0:
        raise ValueError(f"epsrel must be in [1e-15, 1); got {epsrel!r}")
    lower, upper = _real_scalar("lower", lower), _real_scalar("upper", upper)
    if not lower < upper:
        raise ValueError(f"lower must be < upper (and neither NaN); got [{lower}, {upper}]")
    check_normalised = check_bool("check_normalised", check_normalised)
    pts = np.atleast_1d(check_finite_array("points", points)).ravel()
    pts = np.unique(pts[(pts > lower) & (pts < upper)])
    # the user's log-densities overflow or underflow far in the tails (-x^2 at 1e300): that is -inf, not an error
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        return _renyi_checked(logp, logq, alpha, lower, upper, pts, scale, epsrel, check_normalised)


def _renyi_checked(
    logp: LogDensity,
    logq: LogDensity,
    alpha: float,
    lower: float,
    upper: float,
    pts: NDArray[np.float64],
    scale: float,
    epsrel: float,
    check_normalised: bool,
) -> float:
    """The body of :func:`renyi_divergence` on validated arguments."""

    def log_integrand(xs: NDArray[np.float64]) -> NDArray[np.float64]:
        lp = np.asarray(logp(xs), dtype=float)
        lq = np.asarray(logq(xs), dtype=float)
        out = alpha * lp + (1.0 - alpha) * lq
        # where p = 0 the integrand is 0 whatever q is
        return np.where(lp == -np.inf, -np.inf, out)

    # P not absolutely continuous w.r.t. Q on a probe point: the divergence is +infinity
    probe = np.concatenate((pts, [0.0], scale * np.geomspace(1e-3, 1e3, 61), -scale * np.geomspace(1e-3, 1e3, 61)))
    probe = probe[(probe >= lower) & (probe <= upper)]
    if probe.size and np.any(np.isposinf(log_integrand(probe))):
        return math.inf
    if check_normalised:
        for name, f in (("logp", logp), ("logq", logq)):
            log_mass, _, _ = _log_integral(f, lower, upper, pts, scale, epsrel)
            if abs(log_mass) > 1e-8:
                raise ValueError(
                    f"{name} is not a normalised log-density on [lower, upper] = [{lower!r}, {upper!r}]: "
                    f"its mass there is {math.exp(log_mass)!r}"
                )
    log_i, relerr, edges = _log_integral(log_integrand, lower, upper, pts, scale, epsrel)
    if log_i < 1.0:
        # Small divergence (alpha near 1, or little noise): log I is then computed as log1p(I - 1) with
        # I - 1 = int p (exp((alpha-1) log(p/q)) - 1), which keeps the relative accuracy of D.
        def excess(t: float) -> float:
            lp, lq = float(logp(np.asarray(t))), float(logq(np.asarray(t)))
            if lp == -math.inf:
                return 0.0
            arg = (alpha - 1.0) * (lp - lq)
            if arg > 50.0:
                return math.exp(lp + arg) - math.exp(lp)
            return math.exp(lp) * math.expm1(arg)

        j, j_err = _quad_sum(excess, edges, epsrel)
        if j > -1.0:
            log_i, relerr = math.log1p(j), j_err / (1.0 + j)
    divergence = log_i / (alpha - 1.0)
    # a relative error e of the integral is an absolute error ~e/(alpha-1) of the divergence
    if relerr / (alpha - 1.0) > 1e-10 * max(1.0, abs(divergence)):
        raise RuntimeError(
            f"quadrature did not converge: estimated error {relerr / (alpha - 1.0):.2e} of the divergence"
        )
    return divergence


# --------------------------------------------------------------------------- closed forms


def gaussian_rdp(alpha: ArrayLike, sigma: float, sensitivity: float = 1.0) -> NDArray[np.float64] | float:
    r"""RDP curve of the Gaussian mechanism: :math:`\varepsilon(\alpha) = \alpha\Delta^2/(2\sigma^2)`.

    This is :math:`D_\alpha(N(0,\sigma^2)\|N(\Delta,\sigma^2))` (Mironov 2017,
    Proposition 7 / Table II).

    Parameters
    ----------
    alpha : array_like
        Order(s), each > 1 (vectorised).
    sigma : float
        Noise standard deviation, > 0.
    sensitivity : float
        L2 sensitivity :math:`\Delta`, > 0.

    Returns
    -------
    float or ndarray
        Same shape as ``alpha``; within 2 ulp relative over the whole domain (mantissas and exponents
        are multiplied separately, so nothing underflows before the result: a value below the smallest
        double is 0, a subnormal one is within its spacing).

    Raises
    ------
    ValueError
        If any ``alpha <= 1``, ``sigma <= 0`` or ``sensitivity <= 0`` (or not
        finite), or the result overflows the double range.
    """
    a = _check_orders("alpha", alpha)
    sigma = check_positive_finite("sigma", sigma)
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    # alpha * (sensitivity / sigma)^2 / 2 on mantissas and exponents (np.frexp), rounded once at the end:
    # (sensitivity/sigma)^2 alone underflowed (issue 28: gaussian_rdp(1e300, 1e300, 1.0) gave 0 for 5e-301)
    m_d, e_d = math.frexp(sensitivity)
    m_s, e_s = math.frexp(sigma)
    m_r = m_d / m_s  # in (1/2, 2): the ratio is m_r * 2**(e_d - e_s)
    m_a, e_a = np.frexp(a)
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(m_a * (m_r * m_r), e_a + 2 * (e_d - e_s) - 1)
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"the Gaussian RDP alpha (sensitivity/sigma)^2/2 overflows the double range "
            f"(sigma={sigma!r}, sensitivity={sensitivity!r}, largest alpha {float(np.max(a))!r})"
        )
    return float(out) if out.ndim == 0 else out


def _expm1_excess_over_square(t: ArrayLike) -> NDArray[np.float64]:
    r"""``(e^t - 1 - t) / t^2`` to about 1 ulp: a series for ``|t| < 1/2`` (1/2 at ``t = 0``), else directly.

    Finite for every ``t`` below about 709 (above, ``e^t`` overflows: the callers never go there).
    """
    t = np.asarray(t, dtype=float)
    small = np.abs(t) < 0.5
    ts = np.where(small, t, 0.0)
    series = np.zeros_like(ts)
    for k in range(19, 1, -1):  # sum_{k>=2} t^(k-2)/k!, Horner; the first term left out is below 1e-19
        series = series * ts + 1.0 / math.factorial(k)
    tb = np.where(small, 1.0, t)
    with np.errstate(over="ignore"):
        direct = (np.expm1(tb) - tb) / tb / tb
    return np.asarray(np.where(small, series, direct), dtype=np.float64)


def _laplace_rdp_ratio(a: NDArray[np.float64], r: NDArray[np.float64] | float) -> NDArray[np.float64]:
    """Laplace RDP for orders ``a`` and ratio ``r = sensitivity / b`` (no validation; broadcasts)."""
    a, r = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(r, dtype=float))
    am1 = a - 1.0
    # I = a/(2a-1) e^{(a-1) r} + (a-1)/(2a-1) e^{-a r} and eps = log(I)/(a-1).
    # Near alpha = 1 (small (a-1) r): with phi(t) = e^t - 1 - t >= 0 and a (a-1) r = (a-1) a r, the linear
    # terms cancel exactly and I - 1 = [a phi((a-1) r) + (a-1) phi(-a r)]/(2a-1), a sum of non-negative terms;
    # with g(t) = phi(t)/t^2, I - 1 = (a-1) r^2 K, K = [(a-1) g((a-1) r) + a g(-a r)] a/(2a-1), and
    # eps = log1p(E)/(a-1) = r K r * log1p(E)/E (E = I - 1): no cancellation, nothing underflows before the
    # result (issue 28: expm1 differences gave 0 for 3.6e-134 at alpha 1e6, r 2.7e-70, and 3e-244 for an
    # eps below the doubles). Otherwise divide by e^{(a-1) r}: eps = r + log(A + B e^{-(2a-1) r})/(a-1), with
    # log A = -log(2 - 1/a) and log B = -log(2 + 1/(a-1)), so that nothing overflows for huge a or r.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        small = am1 * r < 0.5
        rs = np.where(small, r, 0.0)
        x, y = am1 * rs, a * rs
        k_r = (am1 * _expm1_excess_over_square(x) * rs + _expm1_excess_over_square(-y) * y) / (2.0 - 1.0 / a)
        e = x * k_r  # I - 1
        ratio = np.where(e > 1e-300, np.log1p(e) / np.where(e > 1e-300, e, 1.0), 1.0 - e / 2.0)
        log_small = k_r * rs * ratio
        log_a, log_b = -np.log(2.0 - 1.0 / a), -np.log(2.0 + 1.0 / am1)
        big = r + np.logaddexp(log_a, log_b - (2.0 * am1 + 1.0) * r) / am1
    return np.asarray(np.clip(np.where(small, log_small, big), 0.0, r), dtype=np.float64)


def _discrete_laplace_log_i(c: decimal.Decimal, u: decimal.Decimal, d: int) -> decimal.Decimal:
    """``log sum_z p^a q^(1-a)`` of the discrete Laplace (scale 1/u, sensitivity d, a = 1 + c), in this context."""
    one = decimal.Decimal(1)
    r = (-u).exp()
    total = ((c * d * u).exp() + (-(one + c) * d * u).exp()) / (one + r)
    if d > 1:  # tanh(u/2) e^{c d u} sum_{z=1}^{d-1} x^z, x = e^{-(1+2c) u}
        x = (-(one + 2 * c) * u).exp()
        total += (one - r) / (one + r) * (c * d * u).exp() * x * (one - x ** (d - 1)) / (one - x)
    return total.ln()


def _discrete_laplace_rdp_decimal(alpha: float, scale: Fraction, d: int) -> float:
    r"""The discrete Laplace RDP at one order near 1, from its closed form in decimal arithmetic.

    :math:`\log I` is about :math:`(\alpha - 1)\,\mathrm{KL}`, so a double loses :math:`\alpha - 1` of its
    digits in the division (issue 28: 0.25 for 0.462 at order :math:`1 + 2^{-52}`). The digits carried cover
    :math:`\alpha - 1`, the KL (at least about :math:`(d/b)^2/8`) and the cancellations of
    :math:`1 - e^{-1/b}`, plus 40 spare; the value is recomputed with 30 more and must agree to 1e-25 relative
    (else twice the digits, up to 4000: then ValueError).
    """
    t = d / float(scale)
    digits = 40 + 17 + 2 * math.ceil(math.log10(float(scale) + 1.0)) + max(0, math.ceil(-2.0 * math.log10(t)))
    prev: decimal.Decimal | None = None
    while digits <= 4000:
        with decimal.localcontext() as ctx:
            ctx.prec = digits
            ctx.Emax, ctx.Emin = decimal.MAX_EMAX, decimal.MIN_EMIN
            c = decimal.Decimal(alpha) - 1
            u = decimal.Decimal(scale.denominator) / decimal.Decimal(scale.numerator)
            value = _discrete_laplace_log_i(c, u, d) / c
            if prev is not None and abs(value - prev) <= abs(value) * decimal.Decimal("1e-25"):
                return float(value)
        prev = value
        digits = digits + 30 if digits < 400 else 2 * digits
    raise ValueError(f"the discrete Laplace RDP at order {alpha!r} did not settle in 4000 digits")


def laplace_rdp(alpha: ArrayLike, b: float, sensitivity: float = 1.0) -> NDArray[np.float64] | float:
    r"""RDP curve of the Laplace mechanism (Mironov 2017, Proposition 6).

    With :math:`r = \Delta / b`,

    .. math:: \varepsilon(\alpha) = D_\alpha(\mathrm{Lap}(0,b)\|\mathrm{Lap}(\Delta,b))
       = \frac{1}{\alpha-1}\log\Big(\frac{\alpha}{2\alpha-1}e^{(\alpha-1)r}
         + \frac{\alpha-1}{2\alpha-1}e^{-\alpha r}\Big).

    Computed stably: when :math:`(\alpha-1)r < 1/2`, as ``log1p`` of
    :math:`I - 1 = [\alpha\varphi((\alpha-1)r) + (\alpha-1)\varphi(-\alpha r)]/(2\alpha-1)`,
    :math:`\varphi(t) = e^t - 1 - t \ge 0` (the linear terms cancel exactly,
    so no cancellation is left near :math:`\alpha = 1`, where the value tends
    to the KL divergence, nor for tiny :math:`r`, where it is about
    :math:`\alpha r^2/2`: nothing underflows before the result); otherwise by
    ``logaddexp`` of the two logarithms (no overflow for large :math:`\alpha`
    or small ``b``); as :math:`\alpha\to\infty` it tends to :math:`r`, the
    pure-DP epsilon. Accuracy: a few ulp relative (measured against mpmath at
    orders from :math:`1 + 2^{-52}` to 1e6 and :math:`r` from 1e-300 to 1e3);
    a value below the smallest positive double is 0.

    Parameters
    ----------
    alpha : array_like
        Order(s), each > 1 (vectorised).
    b : float
        Laplace scale, > 0.
    sensitivity : float
        L1 sensitivity :math:`\Delta`, > 0.

    Raises
    ------
    ValueError
        If any ``alpha <= 1``, ``b <= 0`` or ``sensitivity <= 0`` (or not finite).
    """
    a = _check_orders("alpha", alpha)
    b = check_positive_finite("b", b)
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    ratio = sensitivity / b
    if not math.isfinite(ratio):
        raise ValueError(f"sensitivity / b overflows the double range (b={b!r}, sensitivity={sensitivity!r})")
    out = _laplace_rdp_ratio(a, ratio)
    return float(out) if out.ndim == 0 else out


#: Most terms :func:`_log_a_integer` sums for all orders at once (about 0.5 MB of work arrays).
_VECTOR_TERMS = 1 << 16


def _log_a_integer(n: NDArray[np.int64], log_q: float, log_1mq: float, inv_two_s2: float) -> NDArray[np.float64]:
    r"""``log A_n`` of Mironov, Talwar & Zhang (2019) at integer orders ``n >= 1`` (``A_1 = 1``).

    :math:`A_n = \sum_{k=0}^{n} \binom{n}{k} (1-q)^{n-k} q^k e^{(k^2-k)/(2\sigma^2)}`.
    Since the binomial weights sum to 1, :math:`A_n - 1 = \sum_{k\ge2} \binom{n}{k} (1-q)^{n-k} q^k
    \big(e^{(k^2-k)/(2\sigma^2)} - 1\big)`, a sum of positive terms: it is summed in log space
    (binomials by ``gammaln``, :math:`\log(e^x - 1)` without cancellation, each order's terms shifted by
    their largest) and :math:`\log A_n = \log(1 + (A_n - 1))`. Summing :math:`A_n` itself lost every
    digit of an RDP below about 1e-16 (issue 28: at sigma 1e8, q 0.5, order 2 it gave 0 for 2.5e-17, at
    sigma 100, q 1e-10 1.65e-17 for 1e-24). Up to :data:`_VECTOR_TERMS` terms in all, every order
    at once (``reduceat`` over the concatenated terms); beyond, one order at
    a time, so that memory stays linear in the largest order.
    """

    def terms_of(order: float | NDArray[np.float64], k: NDArray[np.float64]) -> NDArray[np.float64]:
        """The logs of the terms k of A_order - 1 (``order`` a scalar or an array like ``k``; -inf for k < 2)."""
        log_binom = special.gammaln(order + 1.0) - special.gammaln(k + 1.0) - special.gammaln(order - k + 1.0)
        with np.errstate(invalid="ignore"):  # 0 * log(0) when q = 1: that term is absent
            rest = np.where(order - k > 0, (order - k) * log_1mq, 0.0)
        x = (k * k - k) * inv_two_s2
        with np.errstate(divide="ignore", over="ignore"):  # log(e^x - 1): -inf at x = 0 (k = 0, 1)
            log_expm1 = np.where(x > 1.0, x + np.log1p(-np.exp(-np.minimum(x, 1e300))), np.log(np.expm1(x)))
        return np.asarray(log_binom + rest + k * log_q + log_expm1, dtype=np.float64)

    def log1p_exp(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(np.where(x > 0.0, x + np.log1p(np.exp(-np.abs(x))), np.log1p(np.exp(np.minimum(x, 0.0)))))

    out = np.zeros(n.shape, dtype=float)
    big = n.ravel() > 1
    sizes = n.ravel()[big].astype(np.int64) + 1
    if 0 < sizes.sum() <= _VECTOR_TERMS:
        order = np.repeat(n.ravel()[big].astype(float), sizes)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        terms = terms_of(order, np.arange(order.size, dtype=float) - np.repeat(starts, sizes))
        top = np.maximum.reduceat(terms, starts)  # finite: every order >= 2 has its k = 2 term
        flat = out.ravel()  # a view: out is a fresh contiguous array
        flat[big] = log1p_exp(top + np.log(np.add.reduceat(np.exp(terms - np.repeat(top, sizes)), starts)))
        return out
    for idx, m in np.ndenumerate(n):
        if m > 1:
            out[idx] = float(log1p_exp(special.logsumexp(terms_of(float(m), np.arange(int(m) + 1, dtype=float)))))
    return out


def _phi_scalar(t: float) -> float:
    """``e^t - 1 - t`` (>= 0) to about 1 ulp: a series for ``|t| < 1/2``, else directly."""
    if abs(t) < 0.5:
        total = 0.0
        for k in range(19, 1, -1):  # t^2 sum_{k>=2} t^(k-2)/k!
            total = total * t + 1.0 / math.factorial(k)
        return total * t * t
    return math.expm1(t) - t


def _log_phi_positive(t: float) -> float:
    """``log(e^t - 1 - t)`` for ``t > 0`` without overflow (``-inf`` at 0)."""
    if t <= 0.0:
        return -math.inf
    if t < 0.5:
        return math.log(_phi_scalar(t))
    if t < 50.0:
        return math.log(math.expm1(t) - t)
    return t + math.log1p(-(1.0 + t) * math.exp(-t))


def _xlogx_excess(w: float, lw: float) -> float:
    """``(1 + w) log(1 + w) - w`` (>= 0) for ``w > -1``, ``lw = log1p(w)``: a series for ``|w| < 0.1``."""
    if abs(w) < 0.1:  # sum_{k>=2} (-w)^k / (k (k-1)); the first term left out is below 1e-21 relative
        total, power = 0.0, -w
        for k in range(2, 22):
            power *= -w
            total += power / (k * (k - 1))
        return total
    return (1.0 + w) * lw - w


def _log1p_exp(x: float) -> float:
    """log(1 + e^x) without overflow or underflow."""
    return x + math.log1p(math.exp(-x)) if x > 0.0 else math.log1p(math.exp(x))


def _log_a_fractional(alpha: float, log_q: float, log_1mq: float, s2: float) -> float:
    r"""``log A_alpha`` at a fractional order, :math:`\log E[m(Z)^\alpha]` for :math:`Z\sim N(0,s^2)`.

    Here :math:`m = 1-q+q e^{(2Z-1)/(2s^2)}`.

    Adaptive quadrature (``scipy.integrate.quad``) of the integrand scaled by
    its maximum (located on a grid around its two bumps, near 0 and near
    ``alpha``), with the quadrature's own error estimate added, so the value
    returned is not below the integral. When :math:`\log A_\alpha < 1` (small
    ``q`` or an order near 1) the quadrature is of
    :math:`A_\alpha - 1 = E[m^\alpha - 1 - \alpha(m - 1)]` instead
    (:math:`E[m] = 1`): a non-negative integrand, so the small difference keeps
    its relative precision.
    """
    s = math.sqrt(s2)
    lo, hi = -40.0 * s, max(alpha, 1.0) + 40.0 * s
    q = math.exp(log_q)

    def log_f(z: NDArray[np.float64] | float) -> NDArray[np.float64]:
        u = (2.0 * np.asarray(z, dtype=float) - 1.0) / (2.0 * s2)
        return np.asarray(
            -np.square(z) / (2.0 * s2) - 0.5 * math.log(2.0 * math.pi * s2) + alpha * np.logaddexp(log_1mq, log_q + u)
        )

    # the two bumps, near 0 and near alpha, are about s wide: narrower than the grid's spacing when s is small
    # (sigma 0.01 at order 9000.5 gave "math domain error", sigma 1e-3 an OverflowError), so their centres and
    # a few widths either side are probed too, and the quadrature breaks there
    near = [c + s * w for c in (0.0, alpha) for w in (-20.0, -5.0, -1.0, 0.0, 1.0, 5.0, 20.0)]
    near = [z for z in near if lo < z < hi]
    grid = np.concatenate((np.linspace(lo, hi, 4001), near))
    values = log_f(grid)
    m, peak = float(np.max(values)), float(grid[int(np.argmax(values))])
    points = sorted({0.0, 0.5, peak, *near})
    with warnings.catch_warnings():  # a roundoff warning at the requested 1e-13: the error estimate is added below
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        val, err = integrate.quad(
            lambda z: math.exp(float(log_f(z)) - m), lo, hi, points=points, limit=400, epsrel=1e-13
        )
    log_a = m + math.log(val + abs(err))
    if log_a > 1.0:
        return log_a

    def excess(z: float) -> float:  # phi(z) (m^alpha - 1 - alpha (m - 1)), m - 1 = w
        arg = (2.0 * z - 1.0) / (2.0 * s2)
        log_phi = -z * z / (2.0 * s2) - 0.5 * math.log(2.0 * math.pi * s2)
        # w = q expm1(arg); where (1+w)^a could overflow, g = (1+w) phi((a-1) l) + (a-1) ((1+w) l - w) in logs
        # (l = log(1+w), phi(t) = e^t - 1 - t; both terms >= 0: the former log(1 - (a w + 1)/(1+w)^a) cancelled
        # to nothing as a -> 1)
        if arg > 30.0 or (arg > 0.0 and alpha * math.log1p(q * math.expm1(arg)) > 50.0):
            lw = log_q + arg + math.log1p(-math.exp(-arg))  # log w
            l1 = _log1p_exp(lw)  # l = log(1 + w) > 0
            first = l1 + _log_phi_positive((alpha - 1.0) * l1)
            # log(((1+w) l - w)/w): l - 1 + l/w when l > 1, else by the series (w is then below e - 1)
            if l1 > 1.0:
                inner = math.log(l1 - 1.0 + l1 * math.exp(-lw))
            else:
                inner = math.log(_xlogx_excess(math.exp(lw), l1)) - lw
            second = math.log(alpha - 1.0) + lw + inner
            return math.exp(log_phi + max(first, second) + math.log1p(math.exp(-abs(first - second))))
        w = q * math.expm1(arg)
        if abs(w) < 1e-3:  # binomial series: (1+w)^a - 1 - a w = sum_{j>=2} C(a, j) w^j
            term, total = alpha, 0.0
            for j in range(2, 9):
                term *= (alpha - j + 1) / j * w
                total += term
            g = total * w
        else:  # (1+w)^a - 1 - a w = (1+w) phi((a-1) l) + (a-1) ((1+w) l - w), l = log1p(w): both terms >= 0
            # (expm1(a l) - a w cancelled to (a-1) times its size: 2.6e-8 for 1.25e-5 at order 1 + 2^-52, issue 28)
            lw = math.log1p(w)
            g = (1.0 + w) * _phi_scalar((alpha - 1.0) * lw) + (alpha - 1.0) * _xlogx_excess(w, lw)
        return math.exp(-z * z / (2.0 * s2)) / math.sqrt(2.0 * math.pi * s2) * g

    # piece by piece between the break points, errors summed: one quad over all the points reported 2e-4
    # relative error for a value right to 1e-10 (sigma 0.1, q 1e-9, order 1 + 2^-52), and that error is added
    val, err = _quad_sum(excess, np.array([lo, *points, hi]), 1e-13)
    return math.log1p(val + abs(err))


#: Above this order the subsampled Gaussian's fractional orders use the chord between integer orders.
_LARGE_ORDER = 1e4

#: Largest order subsampled_gaussian_rdp accepts (its integer-order sum has n terms): MAX_REFINED_ORDER.
MAX_SUBSAMPLED_ORDER = 1e6


def subsampled_gaussian_rdp(
    alpha: ArrayLike, sigma: float, sampling_rate: float, sensitivity: float = 1.0
) -> NDArray[np.float64] | float:
    r"""RDP of the Poisson-subsampled Gaussian mechanism (add/remove neighbours).

    Each record is used with probability :math:`q` (``sampling_rate``) and the
    sum gets :math:`N(0, \sigma^2)` noise, for a query of L2 sensitivity
    :math:`\Delta`. The RDP is :math:`\log A_\alpha/(\alpha-1)` with
    :math:`A_\alpha = E_{Z\sim N(0,s^2)}[(1-q+q e^{(2Z-1)/(2s^2)})^\alpha]`,
    :math:`s = \sigma/\Delta`: the divergence of the mixture
    :math:`(1-q)N(0,s^2) + qN(1,s^2)` from :math:`N(0,s^2)`, the larger of the
    two directions (Mironov, Talwar & Zhang 2019). At an integer order
    :math:`n` it is the finite sum
    :math:`A_n = \sum_{k=0}^{n} \binom{n}{k} (1-q)^{n-k} q^k e^{(k^2-k)/(2s^2)}`
    (their Sec. 3.3), exact, in log space; at a fractional order up to 1e4 the
    integral by adaptive quadrature with its error estimate added (a bound; the estimate, added, puts it
    at most about 1e-7 relative above the truth, measured up to 3e-8 at :math:`s \approx 0.2`, and about
    1e-13 where the integrand is smooth; where :math:`\log A_\alpha < 1` the quadrature is of
    :math:`A_\alpha - 1`, its integrand a sum of non-negative terms, so the value keeps its relative
    precision down to order :math:`1 + 2^{-52}`, where it tends to the KL divergence), beyond it
    (or where the quadrature cannot resolve the integrand, at tiny ``s``)
    the chord of the convex :math:`\log A_\alpha` between the neighbouring integers (a bound).
    Stable for large orders and tiny ``q``; ``q = 1`` is the
    Gaussian mechanism.

    Parameters
    ----------
    alpha : float or array_like
        Order(s), each finite, > 1 and at most :data:`MAX_SUBSAMPLED_ORDER` (1e6) (vectorised).
    sigma : float
        Noise standard deviation, finite and > 0, with ``sigma / sensitivity`` in [1e-100, 1e100].
    sampling_rate : float
        The Poisson sampling rate :math:`q`, in (0, 1].
    sensitivity : float
        L2 sensitivity :math:`\Delta`, finite and > 0 (default 1).

    Raises
    ------
    ValueError
        If an order is <= 1 or above :data:`MAX_SUBSAMPLED_ORDER` (1e6),
        ``sigma`` or ``sensitivity`` is not finite and > 0, their ratio is
        outside [1e-100, 1e100], or ``sampling_rate`` is not in (0, 1].
    """
    a = _check_orders("alpha", alpha)
    ratio, q = check_subsampled_gaussian(sigma, sampling_rate, sensitivity)
    if np.any(a > MAX_SUBSAMPLED_ORDER):
        raise ValueError(
            f"alpha must be <= {MAX_SUBSAMPLED_ORDER:g} for the subsampled Gaussian (the sum at integer order n "
            f"has n terms); got {float(np.max(a))!r}"
        )
    s2 = ratio * ratio
    if q == 1.0:
        out = a / (2.0 * s2)
        return float(out) if out.ndim == 0 else out
    log_q, log_1mq = math.log(q), math.log1p(-q)
    flat = np.atleast_1d(a).ravel()
    integer = flat == np.round(flat)
    log_a = np.empty(flat.shape, dtype=float)
    if integer.any():
        log_a[integer] = _log_a_integer(flat[integer].astype(np.int64), log_q, log_1mq, 1.0 / (2.0 * s2))
    for i in np.flatnonzero(~integer):
        a_i = float(flat[i])
        fractional = math.nan
        if a_i <= _LARGE_ORDER:
            try:  # the quadrature cannot resolve bumps far narrower than the order (s = 1e-100: log of 0)
                fractional = _log_a_fractional(a_i, log_q, log_1mq, s2)
            except (ValueError, OverflowError, ZeroDivisionError):
                fractional = math.nan
        if math.isfinite(fractional):
            log_a[i] = fractional
        else:  # the chord of the convex log A between the integers around the order: a bound, tight this far out
            n = np.array([math.floor(a_i), math.ceil(a_i)], dtype=np.int64)
            lo, hi = _log_a_integer(n, log_q, log_1mq, 1.0 / (2.0 * s2))
            log_a[i] = lo + (a_i - n[0]) * (hi - lo)
    out = np.maximum(log_a / (flat - 1.0), 0.0).reshape(a.shape)
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------- conversion


def _check_curve(orders: ArrayLike, rdp: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    a = np.atleast_1d(_check_orders("orders", orders))
    r = np.atleast_1d(as_real_array("rdp", rdp))
    if a.ndim != 1 or r.ndim != 1:
        raise ValueError("orders and rdp must be one-dimensional")
    if a.shape != r.shape:
        raise ValueError(f"orders and rdp must have the same length; got {a.size} orders and {r.size} rdp values")
    if np.any(np.isnan(r)):
        raise ValueError("rdp must not contain NaN")
    if np.any(r < 0):
        raise ValueError(f"rdp must be >= 0 (a Rényi divergence is never negative); smallest element is {r.min()}")
    return a, r


def classical_rdp_to_dp(orders: ArrayLike, rdp: ArrayLike, delta: float) -> tuple[float, float]:
    r"""Mironov's classical conversion from RDP to (epsilon, delta)-DP.

    .. math:: \varepsilon = \min_\alpha \varepsilon(\alpha) + \log(1/\delta)/(\alpha-1)


    (Mironov 2017, Proposition 3.) Returned for comparison; :func:`rdp_to_dp`
    is never looser.

    Parameters
    ----------
    orders : array_like
        One-dimensional, non-empty, each order finite and > 1.
    rdp : array_like
        RDP values at those orders (same length), each >= 0 (``inf`` allowed: no bound at that order).
    delta : float
        In the open interval (0, 1).

    Returns
    -------
    (epsilon, order)

    Raises
    ------
    ValueError
        As :func:`rdp_to_dp`.
    """
    a, r = _check_curve(orders, rdp)
    delta = check_probability_open("delta", delta)
    eps = r - math.log(delta) / (a - 1.0)
    i = int(np.argmin(eps))
    return float(eps[i]), float(a[i])


def _conversion_terms(a: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Order-dependent pieces of the conversion: the constant c(alpha) and 1/(alpha-1).

    For each order, epsilon = rdp + c(alpha) - log(delta)/(alpha-1) with
    c = min(log1p(-1/alpha) - log(alpha)/(alpha-1), 0): the first argument is
    Canonne, Kamath & Steinke's improvement, 0 is Mironov's classical bound.
    """
    inv = 1.0 / (a - 1.0)
    return np.minimum(np.log1p(-1.0 / a) - np.log(a) * inv, 0.0), inv


def _tv_zero(r: NDArray[np.float64], log_delta: float) -> NDArray[np.bool_]:
    """Where ``delta^2 > 1 - e^{-r}``, compared in logs: ``delta^2`` underflows to 0 below ``delta`` = 1.5e-162
    (issue 28: ``rdp_to_dp([1617.31], [0.0], 5e-324)`` answered 0.455 where the rule gives 0)."""
    with np.errstate(divide="ignore"):  # r = 0: log 0 = -inf, and every delta > 0 passes
        return np.asarray(2.0 * log_delta > np.log(-np.expm1(-np.asarray(r, dtype=float))))


def _best(
    r: NDArray[np.float64], c_best: NDArray[np.float64], inv: NDArray[np.float64], log_delta: float
) -> tuple[float, int]:
    """Smallest valid epsilon over the orders, and its index."""
    # delta >= TV(P, Q) gives epsilon = 0: TV <= sqrt(1 - exp(-KL)) <= sqrt(1 - exp(-D_alpha))
    # (Bretagnolle-Huber; KL <= D_alpha for alpha > 1), i.e. delta^2 > 1 - e^{-rdp}.
    zero = _tv_zero(r, log_delta)
    if zero.any():
        return 0.0, int(np.argmax(zero))
    eps = r + c_best - log_delta * inv
    i = int(np.argmin(eps))
    return max(float(eps[i]), 0.0), i


def rdp_to_dp(orders: ArrayLike, rdp: ArrayLike, delta: float) -> tuple[float, float]:
    r"""Best :math:`(\varepsilon, \delta)`-DP guarantee implied by an RDP curve on a grid of orders.

    For each order the smaller of two valid bounds is taken:

    * Mironov (2017, Proposition 3): :math:`\varepsilon(\alpha) + \log(1/\delta)/(\alpha-1)`;
    * Canonne, Kamath & Steinke (2020, Proposition 12; the same bound is
      Asoodeh et al. 2021, eq. 20):
      :math:`\varepsilon(\alpha) + \log(1-1/\alpha) - (\log\delta + \log\alpha)/(\alpha-1)`,

    (the second is always the smaller for :math:`\alpha > 1`, since
    :math:`\log(1-1/\alpha) < 0 < \log\alpha`; the minimum makes "never looser
    than the classical conversion" hold by construction), and the result is 0
    when :math:`\delta^2 > 1 - e^{-\varepsilon(\alpha)}`, because then
    :math:`\delta \ge \mathrm{TV}(P,Q)` by the Bretagnolle--Huber inequality
    and :math:`\mathrm{KL} \le D_\alpha`. The minimum over the orders is returned.

    Parameters
    ----------
    orders : array_like
        Orders, each > 1.
    rdp : array_like
        RDP values at those orders, each >= 0 (``inf`` allowed: no bound at that order).
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    (epsilon, order)
        The epsilon and the order that attains it.

    Raises
    ------
    ValueError
        If an order is <= 1, ``orders`` and ``rdp`` differ in length, an rdp
        value is negative or NaN, or ``delta`` is outside (0, 1).
    """
    a, r = _check_curve(orders, rdp)
    delta = check_probability_open("delta", delta)
    c_best, inv = _conversion_terms(a)
    eps, i = _best(r, c_best, inv, math.log(delta))
    return eps, float(a[i])


# --------------------------------------------------------------------------- accountant


def _broadcast_parameters(
    name: str, scale: NDArray[np.float64], sensitivity: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    try:
        s, t = np.broadcast_arrays(scale.ravel(), sensitivity.ravel())
        return np.asarray(s, dtype=np.float64), np.asarray(t, dtype=np.float64)
    except ValueError:
        raise ValueError(
            f"{name} and sensitivity must be scalars or of equal length; got {scale.size} and {sensitivity.size}"
        ) from None


class HasRdp(Protocol):
    """Anything with an RDP curve: every mechanism of :mod:`dpcore.mechanisms`."""

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64] | float: ...


def _linear_curve(coeff: float, a: NDArray[np.float64]) -> NDArray[np.float64]:
    return coeff * a


def _laplace_curve(
    counts: NDArray[np.float64], ratios: NDArray[np.float64], a: NDArray[np.float64]
) -> NDArray[np.float64]:
    return np.asarray(counts @ _laplace_rdp_ratio(np.atleast_1d(a)[None, :], ratios[:, None]), dtype=float)


def _chord_curve(grid: NDArray[np.float64], values: NDArray[np.float64], a: NDArray[np.float64]) -> NDArray[np.float64]:
    """A curve known on ``grid``, bounded between grid orders by the chord of the convex ``(alpha - 1) D_alpha``.

    Below the first grid order the first value bounds it (``D_alpha`` is non-decreasing in alpha); beyond the
    last, nothing known on the grid bounds it, so the curve is ``inf`` there. (Holding ``(alpha - 1) D_alpha``
    constant beyond the grid, as ``np.interp`` does, made ``D_alpha`` *fall*: an accountant fed the Laplace
    curve on the default grid answered epsilon 0.0099 where the truth is about 1, issue 28.)
    """
    a = np.asarray(a, dtype=float)
    inside = np.interp(a, grid, (grid - 1.0) * values) / (a - 1.0)
    return np.where(a > grid[-1], np.inf, np.where(a < grid[0], values[0], inside))


def _mechanism_curve(mechanism: HasRdp, count: float, a: NDArray[np.float64]) -> NDArray[np.float64]:
    return count * np.asarray(mechanism.rdp(a), dtype=float)


class RdpAccountant:
    r"""An RDP accountant: adds RDP curves and converts with :func:`rdp_to_dp`, optimising the order continuously.

    Composition is the sum of the curves (Mironov 2017, Proposition 1), so
    ``count`` identical mechanisms add ``count`` times one curve and arrays
    of parameters add in one vectorised step: there is no Python loop over
    compositions. An epsilon query first minimises the conversion over the
    grid of orders (a handful of vector operations: the order-dependent
    constants are precomputed), then refines the order continuously between
    the neighbours of the best grid order (Brent's bounded method on the
    composed curve itself, every composed mechanism's ``rdp`` evaluated at
    the fractional order), so the answer is the continuous optimum of the
    conversion, not that of the grid. A curve given only on the grid
    (:meth:`compose_rdp`) is bounded between grid orders by the chord of
    :math:`(\alpha-1)D_\alpha`, which is convex in :math:`\alpha`
    (van Erven & Harremoës 2014): still a valid bound.

    Parameters
    ----------
    orders : array_like, optional
        One-dimensional grid of orders, each finite and > 1; default :data:`DEFAULT_RDP_ORDERS`
        (256 orders from 1.01 to 10^4 + 1, geometric in :math:`\alpha - 1`). The refinement searches
        up to :data:`MAX_REFINED_ORDER` (1e6) beyond the largest order.

    Raises
    ------
    ValueError
        If an order is <= 1 or not finite, or the grid is empty or not one-dimensional.

    Examples
    --------
    >>> acc = RdpAccountant()
    >>> acc.compose_gaussian(sigma=5.0, count=10)
    >>> eps = acc.epsilon(1e-5)
    """

    def __init__(self, orders: ArrayLike | None = None) -> None:
        grid = DEFAULT_RDP_ORDERS if orders is None else orders
        a = np.atleast_1d(_check_orders("orders", grid)).astype(float)
        if a.ndim != 1:
            raise ValueError("orders must be one-dimensional")
        self._orders = a.copy()
        self._orders.setflags(write=False)
        self._rdp = np.zeros_like(self._orders)
        self._c_best, self._inv = _conversion_terms(self._orders)
        self._curves: list[Callable[[NDArray[np.float64]], NDArray[np.float64]]] = []
        self._refresh()

    def _refresh(self) -> None:
        # cache what an epsilon query needs: eps(alpha) = [rdp + c, 1/(alpha-1)] @ [1, -log(delta)]
        self._matrix = np.ascontiguousarray(np.column_stack((self._rdp + self._c_best, self._inv)))
        self._rdp_min = float(self._rdp.min())

    @property
    def orders(self) -> NDArray[np.float64]:
        """The grid of orders (read-only)."""
        return self._orders

    @property
    def rdp(self) -> NDArray[np.float64]:
        """The composed RDP curve on :attr:`orders` (a copy)."""
        return self._rdp.copy()

    @staticmethod
    def _counts(count: ArrayLike) -> NDArray[np.float64]:
        c = np.asarray(count)
        if c.ndim == 0:
            return np.array([check_positive_int("count", c.item(), minimum=0)], dtype=float)
        if not np.issubdtype(c.dtype, np.integer) or np.any(c < 0):
            raise ValueError(f"count must be non-negative integers; got {count!r}")
        return np.atleast_1d(c).astype(float)

    def _broadcast_counts(self, count: ArrayLike, m: int) -> NDArray[np.float64]:
        try:
            return np.asarray(np.broadcast_to(self._counts(count), (m,)), dtype=float)
        except ValueError:
            raise ValueError("count must be a scalar or have one entry per parameter value") from None

    def _add(
        self, curve: Callable[[NDArray[np.float64]], NDArray[np.float64]], on_grid: NDArray[np.float64] | None = None
    ) -> None:
        """Compose a curve: its values on the grid (``on_grid`` if already computed) are added now, the curve kept."""
        self._rdp = self._rdp + (curve(self._orders) if on_grid is None else on_grid)
        self._curves.append(curve)
        self._refresh()

    def compose_gaussian(self, sigma: ArrayLike, sensitivity: ArrayLike = 1.0, count: ArrayLike = 1) -> None:
        r"""Compose ``count`` Gaussian mechanisms of noise ``sigma`` and L2 sensitivity ``sensitivity``.

        Adds ``count`` times :math:`\alpha\Delta^2/(2\sigma^2)`. ``sigma``,
        ``sensitivity`` and ``count`` may be arrays (broadcast together): each
        entry is one kind of mechanism.

        Parameters
        ----------
        sigma : float or array_like
            Noise standard deviation(s), each finite and > 0.
        sensitivity : float or array_like
            L2 sensitivity (or sensitivities), each finite and > 0 (default 1); broadcast with ``sigma``.
        count : int or array_like of int
            Integer(s) in [0, 2**63 - 1], a scalar or one per parameter value (0 adds nothing).

        Raises
        ------
        ValueError
            If a ``sigma`` or ``sensitivity`` is <= 0 or not finite, a count is not an integer >= 0, the
            shapes do not broadcast, or the composed curve overflows the doubles at the largest order.
        """
        s = np.atleast_1d(check_positive_finite_array("sigma", sigma))
        d = np.atleast_1d(check_positive_finite_array("sensitivity", sensitivity))
        s, d = _broadcast_parameters("sigma", s, d)
        counts = self._broadcast_counts(count, s.size)
        used = counts > 0  # a mechanism composed 0 times adds nothing (not 0 x inf = NaN)
        with np.errstate(over="ignore", under="ignore"):
            coeff = float(counts[used] @ ((d[used] / s[used]) ** 2 / 2.0))
        if coeff == 0.0 and used.any():  # a positive coefficient below the doubles: rounded up, not to 0
            coeff = 5e-324
        if not math.isfinite(coeff * float(self._orders.max())):
            raise ValueError(
                "the composed Gaussian RDP count * alpha * (sensitivity/sigma)^2 / 2 overflows the double "
                "range on the grid of orders: sigma is too small for its sensitivity"
            )
        self._add(partial(_linear_curve, coeff))

    def compose_laplace(self, b: ArrayLike, sensitivity: ArrayLike = 1.0, count: ArrayLike = 1) -> None:
        r"""Compose ``count`` Laplace mechanisms of scale ``b`` and L1 sensitivity ``sensitivity``.

        Adds ``count`` times the curve of :func:`laplace_rdp`. Arrays broadcast
        as in :meth:`compose_gaussian`.

        Parameters
        ----------
        b : float or array_like
            Laplace scale(s), each finite and > 0.
        sensitivity : float or array_like
            L1 sensitivity (or sensitivities), each finite and > 0 (default 1); broadcast with ``b``.
        count : int or array_like of int
            Integer(s) in [0, 2**63 - 1], a scalar or one per parameter value (0 adds nothing).

        Raises
        ------
        ValueError
            If a ``b`` or ``sensitivity`` is <= 0 or not finite, a count is not an integer >= 0, the
            shapes do not broadcast, or ``count * sensitivity / b`` overflows the doubles.
        """
        bb = np.atleast_1d(check_positive_finite_array("b", b))
        d = np.atleast_1d(check_positive_finite_array("sensitivity", sensitivity))
        bb, d = _broadcast_parameters("b", bb, d)
        counts = self._broadcast_counts(count, bb.size)
        used = counts > 0
        with np.errstate(over="ignore"):
            ratios = d[used] / bb[used]
            total = float(counts[used] @ ratios) if used.any() else 0.0
        if not math.isfinite(total):
            raise ValueError("the composed Laplace RDP count * sensitivity / b overflows the double range")
        self._add(partial(_laplace_curve, counts[used], ratios))

    def compose_rdp(self, rdp: ArrayLike, count: int = 1) -> None:
        """Compose ``count`` copies of an arbitrary mechanism given by its RDP curve on :attr:`orders`.

        Parameters
        ----------
        rdp : array_like
            One value per order of :attr:`orders`, each >= 0 (``inf`` allowed).
        count : int
            An integer in [0, 2**63 - 1] (default 1).

        Raises
        ------
        ValueError
            If ``rdp`` does not match the grid, is negative or NaN, or ``count`` is not an integer >= 0.
        """
        _, r = _check_curve(self._orders, rdp)
        k = self._broadcast_counts(count, 1)[0]
        total = k * r if k > 0 else np.zeros_like(r)  # 0 copies add nothing, even where rdp is inf
        self._add(partial(_chord_curve, self._orders, total))

    def compose(self, mechanism: HasRdp, count: int = 1) -> RdpAccountant:
        """Compose ``count`` runs of a mechanism object (:mod:`dpcore.mechanisms`): its ``rdp`` on :attr:`orders`.

        Returns the accountant itself, so that calls chain:
        ``RdpAccountant().compose(m1, 10).compose(m2).epsilon(1e-5)``.

        Parameters
        ----------
        mechanism : object
            Anything with ``rdp(orders)`` (:class:`HasRdp`); its own limits apply (the subsampled
            Gaussian's orders at most 1e6, so a grid beyond 1e6 is refused there).
        count : int
            An integer in [0, 2**63 - 1] (default 1).

        Raises
        ------
        ValueError
            As :meth:`compose_rdp`, if ``mechanism`` has no ``rdp`` method, or as its ``rdp``.
        """
        if not callable(getattr(mechanism, "rdp", None)):
            raise ValueError(f"mechanism must have an rdp(orders) method; got {type(mechanism).__name__}")
        k = self._broadcast_counts(count, 1)[0]
        if k == 0:  # 0 runs add nothing (and 0 x inf would be NaN)
            return self
        _, on_grid = _check_curve(self._orders, mechanism.rdp(self._orders))  # refuse a negative or NaN curve now
        self._add(partial(_mechanism_curve, mechanism, k), k * on_grid)
        return self

    def epsilon_and_order(self, delta: float) -> tuple[float, float]:
        """The epsilon at ``delta`` (see :func:`rdp_to_dp`) and the order attaining it.

        Parameters
        ----------
        delta : float
            In the open interval (0, 1), subnormal values included.

        Raises
        ------
        ValueError
            If ``delta`` is outside (0, 1).
        """
        if not (type(delta) is float and 0.0 < delta < 1.0):  # fast path for the common case
            delta = check_probability_open("delta", delta)
        log_delta = math.log(delta)
        if bool(_tv_zero(np.asarray(self._rdp_min), log_delta)):  # the TV shortcut of rdp_to_dp
            eps, i = _best(self._rdp, self._c_best, self._inv, log_delta)
            return eps, float(self._orders[i])
        eps = self._matrix @ np.array((1.0, -log_delta))
        i = int(eps.argmin())
        best, order = float(eps[i]), float(self._orders[i])
        if self._curves and math.isfinite(best):
            best, order = self._refine(i, log_delta, best, order)
        return max(best, 0.0), order

    def _objective(self, a: float, log_delta: float) -> float:
        """The conversion at one (fractional) order, from the composed curves themselves."""
        arr = np.array([a])
        rdp = sum(float(curve(arr)[0]) for curve in self._curves)
        c_best, inv = _conversion_terms(arr)
        return rdp + float(c_best[0]) - log_delta * float(inv[0])

    def _refine(self, i: int, log_delta: float, best: float, order: float) -> tuple[float, float]:
        r"""The continuous minimum of the conversion between the grid neighbours of order ``i``.

        When the best grid order is the largest, the search goes on up to
        :data:`MAX_REFINED_ORDER` (a pure-DP curve, such as the Laplace
        mechanism's, has its optimum beyond any fixed grid), over
        :math:`\log(\alpha - 1)`.
        """
        last = self._orders.size - 1
        lo = float(self._orders[max(i - 1, 0)])
        hi = float(self._orders[min(i + 1, last)]) if i < last else max(MAX_REFINED_ORDER, float(self._orders[last]))
        if hi <= lo:
            return best, order

        def objective(u: float) -> float:
            return self._objective(1.0 + math.exp(u), log_delta)

        bounds = (math.log(lo - 1.0), math.log(hi - 1.0))
        res = optimize.minimize_scalar(objective, bounds=bounds, method="bounded", options={"xatol": 1e-12})
        value = float(res.fun)
        if math.isfinite(value) and value < best:
            return value, 1.0 + math.exp(float(res.x))
        return best, order

    def epsilon(self, delta: float) -> float:
        """The epsilon at ``delta``: :meth:`epsilon_and_order` without the order.

        Parameters
        ----------
        delta : float
            In the open interval (0, 1), subnormal values included.

        Raises
        ------
        ValueError
            If ``delta`` is outside (0, 1).
        """
        return self.epsilon_and_order(delta)[0]
