r"""The Poisson-subsampled Gaussian mechanism's exact privacy profile, in closed form.

One step of DP-SGD releases :math:`X = B\Delta + N(0,\sigma^2)`, :math:`B \sim \mathrm{Bernoulli}(q)`,
against :math:`N(0,\sigma^2)` for the neighbour without the record. With :math:`s = \sigma/\Delta`
(scale the output by :math:`1/\Delta`) the two laws are :math:`N(0,s^2)` and the mixture
:math:`(1-q)N(0,s^2)+qN(1,s^2)`, and the likelihood ratio mixture/normal,
:math:`1-q+q\,e^{u(x)}` with :math:`u(x) = (2x-1)/(2s^2)`, is increasing in :math:`x`. So the
optimal event of the profile :math:`\delta(\varepsilon) = \sup_S P(S) - e^\varepsilon Q(S)` is a
half-line, whose end :math:`x_\varepsilon` solves the ratio's equation, in both directions:

* *remove* (:math:`P` the mixture, :math:`Q = N(0,s^2)`): :math:`S = \{x > x_\varepsilon\}`,
  :math:`e^\varepsilon = 1-q+q\,e^{u(x_\varepsilon)}`;
* *add* (:math:`P = N(0,s^2)`, :math:`Q` the mixture): :math:`S = \{x < x_\varepsilon\}`,
  :math:`e^{-\varepsilon} = 1-q+q\,e^{u(x_\varepsilon)}` (empty, :math:`\delta = 0`, once
  :math:`\varepsilon \ge -\log(1-q)`).

Writing both tails through the Mills ratio :math:`R(t) = \bar\Phi(t)/\varphi(t)` and using
:math:`\varphi(t+h) = \varphi(t)e^{-th-h^2/2}` with :math:`h = 1/s` (a derivation, done in sympy,
in the tests) collapses each profile to one difference of two tails,

.. math::

    G(t, h) = \bar\Phi(t) - e^{th+h^2/2}\,\bar\Phi(t+h) = \varphi(t)\,\big(R(t) - R(t+h)\big)
            = \varphi(t)\int_t^{t+h} \big(1 - yR(y)\big)\,dy \;\ge 0,

.. math::

    \delta_{\rm remove}(\varepsilon) = q\,G(t_r, h),\quad t_r = s\,c_r - h/2,\quad
    c_r = \log\frac{e^\varepsilon - 1 + q}{q};

    \delta_{\rm add}(\varepsilon) = \big(1 - (1-q)e^\varepsilon\big)\,G(t_a, h),\quad
    t_a = -s\,c_a - h/2,\quad c_a = \log\frac{e^{-\varepsilon} - 1 + q}{q},

and the mechanism's profile is the larger of the two. Nothing is integrated over an unbounded
range: :math:`G` comes from ``log_ndtr`` and ``erfcx`` (in logs, so it has full relative precision
down to the smallest double), and where the two tails nearly cancel
(:math:`e^{th+h^2/2}\bar\Phi(t+h)/\bar\Phi(t) > e^{-0.1}`) from a 20-point Gauss--Legendre rule
on the last integral, whose integrand :math:`1 - yR(y)` is smooth and positive. For
:math:`\varepsilon \ge 0`, :math:`t \ge -h/2`, so :math:`t + h > 0`.

Accuracy: relative error at most :math:`10^{-11}` on :math:`\delta` wherever it is a normal
double (compared with a 50-digit mpmath evaluation of the half-line events, itself checked by
quadrature of the defining integral, across :math:`s \in [10^{-2.5}, 10^{4}]`,
:math:`q \in [10^{-9}, 1]`, :math:`\delta` down to :math:`10^{-300}`; the worst measured,
:math:`1.1\cdot10^{-12}`, is at :math:`\delta = 10^{-300}`, where one rounding of
:math:`\varepsilon \approx 400` itself moves :math:`\delta` by about that much:
``tests/test_subsampled_gaussian.py``, chapter 7 and the oracle suite). Earlier versions
of dpcore integrated the loss's tail by adaptive quadrature over
:math:`[\varepsilon, \varepsilon + 200]` and under-reported :math:`\delta` by orders of
magnitude at small :math:`\delta` or small :math:`q` (issue 28).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._lazy import lazy_module
from ._validation import (
    SUBSAMPLED_S_RANGE,
    check_nonnegative_finite_array,
    check_probability_open,
    check_subsampled_gaussian,
)

special = lazy_module("scipy.special")
optimize = lazy_module("scipy.optimize")

__all__ = ["subsampled_gaussian_delta", "subsampled_gaussian_epsilon"]

#: Supported range of ``s = sigma / sensitivity`` (its square and its inverse square stay doubles).
S_RANGE = SUBSAMPLED_S_RANGE

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(20)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_SQRT_HALF_PI = 0.5 * math.log(0.5 * math.pi)


def _log_mills(y: float) -> float:
    r"""``log R(y)``, :math:`R(y) = \bar\Phi(y)/\varphi(y) = \sqrt{\pi/2}\,\mathrm{erfcx}(y/\sqrt2)` (``y > -37``)."""
    return _LOG_SQRT_HALF_PI + math.log(float(special.erfcx(y / math.sqrt(2.0))))


def _one_minus_y_mills(y: NDArray[np.float64]) -> NDArray[np.float64]:
    r""":math:`1 - yR(y) = -R'(y) > 0` (relative error about :math:`10^{-16} y^2` for large ``y``)."""
    return np.asarray(1.0 - y * math.sqrt(0.5 * math.pi) * special.erfcx(y / math.sqrt(2.0)))


def _log_g(t: float, h: float) -> float:
    r""":math:`\log G(t, h)` (``-inf`` where :math:`G` is 0); ``t + h > 0`` wherever epsilon >= 0."""
    log_a = float(special.log_ndtr(-t))  # log Phibar(t)
    if log_a < -800.0:  # G <= Phibar(t) < e^-800: below every double (and t is then far out, h possibly huge)
        return -math.inf
    with np.errstate(over="ignore"):
        log_phi_t = -0.5 * t * t - _HALF_LOG_2PI  # -inf for |t| beyond 1e154: phi(t) underflows
    if t + h > 0.0:  # always for eps >= 0
        log_b = log_phi_t + _log_mills(t + h)  # log of e^{th + h^2/2} Phibar(t + h) = phi(t) R(t + h)
    else:  # a direction's profile at eps < 0: here h <= -t, so h^2 / 2 is finite where t * t is
        log_b = t * h + 0.5 * h * h + float(special.log_ndtr(-(t + h)))
    d = log_b - log_a
    if d < -0.1:
        return log_a + math.log(-math.expm1(d))
    # the two tails agree to 10 %: integrate 1 - yR(y) over [t, t + h] in panels of width <= 1/4
    panels = max(1, math.ceil(h / 0.25))
    left = t + h * np.arange(panels) / panels
    half = 0.5 * h / panels
    y = (left[:, None] + half) + half * _NODES[None, :]
    integral = float(np.sum(_WEIGHTS[None, :] * _one_minus_y_mills(y))) * half
    return log_phi_t + math.log(integral) if integral > 0.0 else -math.inf


def _log_c_remove(eps: float, q: float) -> float:
    r""":math:`c_r = \log((e^\varepsilon - 1 + q)/q)` (>= 0 for eps >= 0) without overflow or cancellation."""
    if eps > 30.0:
        return eps - math.log(q) + math.log1p(-(1.0 - q) * math.exp(-eps))
    e = math.expm1(eps)
    if e > 1e300 * q:  # e / q would overflow: log(e/q) + log1p(q/e)
        return math.log(e) - math.log(q) + math.log1p(q / e)
    return math.log1p(e / q)


def _log_delta_remove(eps: float, s: float, q: float) -> float:
    if eps < 0.0 and math.expm1(eps) <= -q:  # e^eps <= 1 - q: the ratio exceeds e^eps everywhere
        return math.log(-math.expm1(eps))
    t = s * _log_c_remove(eps, q) - 0.5 / s
    return math.log(q) + _log_g(t, 1.0 / s)


def _exp_excess(x: float) -> float:
    r""":math:`e^{-x} - 1 + x \ge 0` for :math:`0 \le x \le 1`, to a few ulp (a series below 0.1)."""
    if x < 0.1:
        term, total = x * x / 2.0, 0.0
        for n in range(3, 20):
            total += term
            term *= -x / n
        return total
    return math.expm1(-x) + x


def _log_c_add(eps: float, q: float) -> float:
    r""":math:`c_a = \log((e^{-\varepsilon} - 1 + q)/q)` for :math:`\varepsilon \ge 0`, ``-inf`` where the bracket
    is :math:`\le 0` (:math:`\varepsilon \ge -\log(1-q)`: the add direction's loss never exceeds epsilon).

    Three forms, each free of cancellation where it is used: :math:`\log(1 + r)`, :math:`r =
    \mathrm{expm1}(-\varepsilon)/q`, while :math:`r > -1/2`; nearer the boundary :math:`e^{-\varepsilon} - 1 +
    q` itself, as :math:`(q - \varepsilon) + (e^{-\varepsilon} - 1 + \varepsilon)` for :math:`\varepsilon \le 1`
    and as :math:`e^{-\varepsilon}(1 - (1 - q)e^{\varepsilon})` beyond (then :math:`q > 1 - e^{-1}`: :math:`1 - q` is
    exact; in logs, since :math:`e^{-\varepsilon}` is subnormal beyond 708). A
    single form failed at one end or the other: :math:`\log(1+r)` lost :math:`e^{-\varepsilon}` under the rounding of
    :math:`r \approx -1` (5e-5 relative at eps 24, q 1), and :math:`e^{-\varepsilon} - (1 - q)` lost a tiny
    :math:`\varepsilon` to the rounding of :math:`e^{-\varepsilon} \approx 1` (delta 4e-33 for a truth of
    :math:`10^{-2\cdot10^{26}}` at eps 3e-19, sigma 1e32), both found by the oracle.
    """
    ratio = math.expm1(-eps) / q
    if ratio > -0.5:
        return math.log1p(ratio)
    if eps <= 1.0:
        rest = (q - eps) + _exp_excess(eps)
        return math.log(rest) - math.log(q) if rest > 0.0 else -math.inf
    # e^{-eps} - (1 - q) = e^{-eps} (1 - (1 - q) e^eps), in logs: e^{-eps} itself is subnormal beyond 708
    # (its log 5e-6 relatively off at eps 732, q 1: found by the oracle at 10^4 examples)
    x = (1.0 - q) * math.exp(min(eps, 709.0))
    return -eps + math.log1p(-x) - math.log(q) if x < 1.0 else -math.inf


def _log_delta_add(eps: float, s: float, q: float) -> float:
    if eps < 0.0:
        c = _log_c_remove(-eps, q)  # c_a(eps) = c_r(-eps)
    else:
        c = _log_c_add(eps, q)
        if c == -math.inf:  # eps >= -log(1 - q): the add direction's loss never exceeds eps
            return -math.inf
    t = -s * c - 0.5 / s
    # 1 - (1 - q) e^eps = e^eps (e^{-eps} - 1 + q) = e^eps q e^{c_a}
    return eps + math.log(q) + c + _log_g(t, 1.0 / s)


def direction_delta(epsilon: float, s: float, q: float, direction: str) -> float:
    r"""One direction's profile (``"remove"`` or ``"add"``) at any real ``epsilon``, for ``s``, ``q`` already checked.

    The privacy-loss laws of :func:`dpcore.subsampled_gaussian_privacy_losses` answer
    :meth:`dpcore.PrivacyLoss.delta` with it. For epsilon < 0 the profile is
    :math:`P(S) - e^\varepsilon Q(S)` with the same half-line (the whole line for *remove* once
    :math:`e^\varepsilon \le 1 - q`).
    """
    eps = float(epsilon)
    if math.isnan(eps):
        raise ValueError("epsilon must not be nan")
    if eps == math.inf:
        return 0.0
    if eps == -math.inf:
        return 1.0
    log_d = _log_delta_remove(eps, s, q) if direction == "remove" else _log_delta_add(eps, s, q)
    return min(1.0, math.exp(log_d))


def _check(sigma: float, sampling_rate: float, sensitivity: float) -> tuple[float, float]:
    return check_subsampled_gaussian(sigma, sampling_rate, sensitivity)


def _log_delta(eps: float, s: float, q: float) -> float:
    return max(_log_delta_remove(eps, s, q), _log_delta_add(eps, s, q))


def subsampled_gaussian_delta(
    epsilon: ArrayLike, sigma: float, sampling_rate: float, sensitivity: float = 1.0
) -> float | NDArray[np.float64]:
    r"""Exact privacy profile of one Poisson-subsampled Gaussian step (the larger of its two directions).

    :math:`\delta(\varepsilon) = \max\big(q\,G(t_r, h),\ (1-(1-q)e^\varepsilon)_+\,G(t_a, h)\big)`,
    :math:`h = \Delta/\sigma` (module docstring; derivation after Balle & Wang 2018's for the
    Gaussian mechanism, Zhu, Dong & Wang 2022 for the two directions).

    Parameters
    ----------
    epsilon : array_like
        Values :math:`\varepsilon \ge 0`, finite.
    sigma : float
        Noise standard deviation, > 0.
    sampling_rate : float
        Poisson sampling rate :math:`q`, in (0, 1].
    sensitivity : float
        L2 sensitivity :math:`\Delta` (clipping norm), > 0; ``sigma / sensitivity`` in [1e-100, 1e100].

    Returns
    -------
    float or ndarray
        :math:`\delta(\varepsilon)` in [0, 1], a float for scalar input; relative error at most
        :math:`10^{-11}` (it underflows to 0 below the smallest double).

    Raises
    ------
    ValueError
        If ``epsilon`` is negative or not finite, or another parameter is outside its range.
    """
    e = check_nonnegative_finite_array("epsilon", epsilon)
    s, q = _check(sigma, sampling_rate, sensitivity)
    out = np.array([math.exp(_log_delta(float(x), s, q)) for x in e.ravel()]).reshape(e.shape)
    out = np.minimum(out, 1.0)
    return float(out) if np.ndim(epsilon) == 0 else out


def subsampled_gaussian_epsilon(delta: float, sigma: float, sampling_rate: float, sensitivity: float = 1.0) -> float:
    r"""The smallest :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon) \le` ``delta``, one step.

    By bracketing and Brent's method on :math:`\log\delta(\varepsilon) - \log\delta` (the profile is
    decreasing), then moved up by ulps until the computed profile is at most ``delta``.

    Parameters
    ----------
    delta : float
        Target in (0, 1); any positive double (down to 5e-324).
    sigma, sampling_rate, sensitivity : float
        As :func:`subsampled_gaussian_delta`.

    Returns
    -------
    float
        Epsilon, finite (at most about :math:`1/(2s^2) + 40/s + \log(1/q)`). The true profile there is
        at most ``delta`` (to the profile's relative error, :math:`10^{-11}`) and at least
        ``delta`` :math:`(1 - 2\cdot10^{-11})` (backward accuracy); where the profile is steep that
        puts the answer within a few ulp of the true epsilon, but as ``delta`` nears 1 the profile is
        flat (1 - ``delta`` below the profile's absolute error) and only the backward accuracy holds.

    Raises
    ------
    ValueError
        If ``delta`` is not in (0, 1), or another parameter is outside its range.
    """
    target = check_probability_open("delta", delta)
    s, q = _check(sigma, sampling_rate, sensitivity)
    log_target = math.log(target)

    def f(x: float) -> float:
        return max(_log_delta(x, s, q), -1e300) - log_target

    if f(0.0) <= 0.0:
        return 0.0
    lo, hi = 0.0, 1.0
    while f(hi) > 0.0:  # the profile is below 5e-324 beyond 1/(2 s^2) + 40/s + log(1/q): at most ~700 doublings
        lo, hi = hi, 2.0 * hi
    eps = float(optimize.brentq(f, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500))
    step = max(math.ulp(eps), 5e-324)
    while f(eps) > 0.0:  # never promise a delta not delivered
        eps += step
        step *= 2.0
    return eps
