r"""Privacy loss and exact event probabilities of the Laplace mechanism.

The Laplace mechanism releases :math:`M(D) = f(D) + Y` with
:math:`Y_i \stackrel{iid}{\sim} \mathrm{Lap}(0, b)`. For neighbours
:math:`D, D'` with answers :math:`u = f(D)`, :math:`v = f(D')` this module
computes

* the **privacy loss** :math:`L(z) = \log p_D(z)/p_{D'}(z)
  = \sum_i (|z_i - v_i| - |z_i - u_i|)/b` (:func:`laplace_privacy_loss`);
* **exact event probabilities** :math:`P[M(D) \in S]` for intervals and boxes,
  from the Laplace CDF in log space (:func:`laplace_interval_log_probability`,
  :func:`laplace_box_log_probability`), and the largest event ratio over a grid
  of intervals or boxes (:func:`laplace_max_interval_log_ratio`);
* the **KL divergence** of two Laplace laws in closed form
  (:func:`laplace_kl_divergence`), the mean of the privacy loss.

Confidence bounds on event ratios *from samples* are in
:mod:`dpcore.event_ratios`.

References: Dwork, McSherry, Nissim & Smith (2006); Dwork & Roth (2014),
Theorem 3.6; Gil, Alajaji & Linder (2013) for the KL divergence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import (
    as_real_array,
    check_finite_array,
    check_positive_finite,
    check_positive_int,
)

__all__ = [
    "laplace_privacy_loss",
    "laplace_interval_log_probability",
    "laplace_interval_probability",
    "laplace_box_log_probability",
    "IntervalRatioMax",
    "laplace_max_interval_log_ratio",
    "laplace_kl_divergence",
    "MAX_INTERVALS",
]

_LOG_HALF = math.log(0.5)


def _query_pair(
    value: ArrayLike, value_prime: ArrayLike, names: tuple[str, str] = ("value", "value_prime")
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate two query answers (called ``names`` in the caller's signature): finite, same shape, scalar or 1-D."""
    a, b = names
    u = check_finite_array(a, value)
    v = check_finite_array(b, value_prime)
    if u.shape != v.shape:
        raise ValueError(f"{a} and {b} must have the same shape; got {u.shape} and {v.shape}")
    if u.ndim > 1:
        raise ValueError(f"{a} must be a scalar or a 1-D vector (one query answer); got shape {u.shape}")
    if u.ndim == 1 and u.size == 0:
        raise ValueError(f"{a} must not be an empty vector")
    return u, v


def _distance_over_scale(u: NDArray[np.float64], v: NDArray[np.float64], scale: float, names: str) -> float:
    """``sum |u - v| / scale``, refused when it overflows the double range (the loss would be +-inf)."""
    with np.errstate(over="ignore"):
        bound = float(np.sum(np.abs(u - v)) / scale)
    if not math.isfinite(bound):
        raise ValueError(
            f"the privacy loss bound |{names}|_1 / scale overflows the double range "
            f"(scale={scale!r}); use a larger scale or closer answers"
        )
    return bound


def _abs_gap(zz: NDArray[np.float64], u: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
    r""":math:`|z - v| - |z - u|` elementwise, finite and within :math:`\pm|u - v|` for every finite input.

    Formed as :math:`\operatorname{clip}(\operatorname{sign}(v-u)(u + v - 2z), -|u-v|, |u-v|)`, the
    same piecewise linear function, with the sum quartered first so that no ``inf - inf`` or
    ``0 x inf`` arises. Outside :math:`[\min(u,v), \max(u,v)]` it is exactly :math:`\pm|u-v|`
    (the direct difference would round: at :math:`z = 2^{53}+4`, :math:`u = 0`, :math:`v = 3` it
    gives -4, beyond the bound 3).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        uu, vv, z2 = (np.array(x, dtype=np.float64, ndmin=1) for x in np.broadcast_arrays(u, v, zz))
        shape = np.broadcast_shapes(np.shape(zz), np.shape(u), np.shape(v))
        width = np.abs(uu - vv)  # finite: the caller refuses |u - v| beyond the doubles
        quarter = (0.25 * uu + 0.25 * vv) - 0.5 * z2  # (u + v - 2z)/4: never overflows
        slope = np.clip((4.0 * np.sign(vv - uu)) * quarter, -width, width)  # +-inf is clipped to +-width
        out = np.where(width == 0.0, 0.0, slope)
    return np.asarray(out.reshape(shape), dtype=np.float64)


def laplace_privacy_loss(
    z: ArrayLike, value: ArrayLike, value_prime: ArrayLike, scale: float
) -> float | NDArray[np.float64]:
    r"""Privacy loss :math:`L(z) = \log p_D(z)/p_{D'}(z)` of the Laplace mechanism.

    With :math:`p_D(z) = \prod_i \frac{1}{2b} e^{-|z_i - u_i|/b}`,
    :math:`u = f(D)` (``value``) and :math:`v = f(D')` (``value_prime``):

    .. math:: L(z) = \frac{1}{b}\sum_{i=1}^{d} \big(|z_i - v_i| - |z_i - u_i|\big),

    and :math:`|L(z)| \le \|u - v\|_1 / b` by the triangle inequality
    (Dwork & Roth 2014, proof of Theorem 3.6).

    Parameters
    ----------
    z : array_like
        Outputs. For a scalar query, any shape (the loss is taken elementwise).
        For a d-dimensional query (``value`` of shape ``(d,)``), shape
        ``(..., d)``; the loss sums over the last axis.
    value, value_prime : float or array_like of shape (d,)
        The query answers :math:`f(D)` and :math:`f(D')`.
    scale : float
        The Laplace scale ``b`` of the noise actually added (> 0).

    Returns
    -------
    float or numpy.ndarray
        ``L(z)``; shape ``z.shape`` (scalar query) or ``z.shape[:-1]`` (vector query).

    Raises
    ------
    ValueError
        If ``scale`` is not finite and > 0; if ``z``, ``value`` or
        ``value_prime`` contain NaN or infinity; if the bound
        ``|value - value_prime|_1 / scale`` overflows a double; if ``value`` and
        ``value_prime`` differ in shape or are not scalar/1-D; if the last axis
        of ``z`` does not match the query dimension.
    """
    scale = check_positive_finite("scale", scale)
    u, v = _query_pair(value, value_prime)
    zz = check_finite_array("z", z)
    _distance_over_scale(u, v, scale, "value - value_prime")
    if u.ndim == 0:
        out = _abs_gap(zz, u, v) / scale
    else:
        if zz.ndim == 0 or zz.shape[-1] != u.size:
            raise ValueError(
                f"z must have shape (..., {u.size}) for a {u.size}-dimensional query; got shape {zz.shape}"
            )
        out = _abs_gap(zz, u, v).sum(axis=-1) / scale
    if np.ndim(out) == 0:
        return float(out)
    return np.asarray(out, dtype=np.float64)


def _interval_log_prob(
    lower: NDArray[np.float64], upper: NDArray[np.float64], loc: NDArray[np.float64], scale: float
) -> NDArray[np.float64]:
    """Unvalidated core of :func:`laplace_interval_log_probability` (broadcast inputs)."""
    lower, upper, loc = np.broadcast_arrays(lower, upper, loc)
    out = np.empty(lower.shape, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        s = (lower - loc) / scale
        t = (upper - loc) / scale
        w = np.where(np.isinf(lower) | np.isinf(upper), np.inf, (upper - lower) / scale)
        right = s >= 0  # both ends at or above the centre: SF(s) - SF(t)
        left = ~right & (t <= 0)  # both ends at or below the centre: F(t) - F(s)
        mid = ~right & ~left  # the interval straddles the centre
        # log(1 - e^{-w}) = log(-expm1(-w)); -inf when w == 0 (empty interval)
        log_core = np.log(-np.expm1(-w))
        out[right] = _LOG_HALF - s[right] + log_core[right]
        out[left] = _LOG_HALF + t[left] + log_core[left]
        # P = 1 - (e^{s} + e^{-t})/2 = -(expm1(s) + expm1(-t))/2. Near 1 take log1p of the
        # (accurate) small tail mass; otherwise the log of two positive terms (no cancellation).
        sm, tm = s[mid], t[mid]
        tails = 0.5 * (np.exp(sm) + np.exp(-tm))
        out[mid] = np.where(tails < 0.5, np.log1p(-tails), np.log(-0.5 * (np.expm1(sm) + np.expm1(-tm))))
    return out


def _interval_log_ratio(
    lower: NDArray[np.float64], upper: NDArray[np.float64], u: float, v: float, scale: float
) -> NDArray[np.float64]:
    """``log P_u(lower, upper] - log P_v(lower, upper]`` for Laplace laws centred at ``u`` and ``v``.

    An interval on one side of both centres has the ratio ``(v - u)/b`` (below both) or ``(u - v)/b`` (above
    both) exactly, whatever its ends; it is set so, because the two log probabilities can be too large for
    their difference to survive rounding (ends 1e24 scales away: each is known to 1e8 only). Elsewhere the
    interval holds a centre, and the difference of the two log probabilities is used.
    """
    with np.errstate(invalid="ignore"):
        diff = _interval_log_prob(lower, upper, np.asarray(u), scale) - _interval_log_prob(
            lower, upper, np.asarray(v), scale
        )
    diff = np.where(upper <= min(u, v), (v - u) / scale, diff)
    return np.asarray(np.where(lower >= max(u, v), (u - v) / scale, diff))


def _validate_interval(lower: ArrayLike, upper: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    lo = as_real_array("lower", lower)
    hi = as_real_array("upper", upper)
    if np.isnan(lo).any() or np.isnan(hi).any():
        raise ValueError("lower and upper must not contain NaN")
    if (lo == np.inf).any():
        raise ValueError("lower must be < +inf (an interval (lower, upper] with lower = +inf is empty)")
    if (hi == -np.inf).any():
        raise ValueError("upper must be > -inf (an interval (lower, upper] with upper = -inf is empty)")
    try:
        bad = np.broadcast_arrays(lo, hi)
    except ValueError:
        raise ValueError(f"lower and upper must broadcast together; got shapes {lo.shape} and {hi.shape}") from None
    if (bad[0] > bad[1]).any():
        raise ValueError("lower must be <= upper for every interval (lower, upper]")
    return lo, hi


def laplace_interval_log_probability(
    lower: ArrayLike, upper: ArrayLike, loc: ArrayLike, scale: float
) -> float | NDArray[np.float64]:
    r"""Exact :math:`\log P[\mathrm{lower} < X \le \mathrm{upper}]` for :math:`X \sim \mathrm{Lap}(\mathrm{loc}, b)`.

    From the Laplace CDF :math:`F(x) = \tfrac12 e^{(x-\mu)/b}` for
    :math:`x < \mu` and :math:`1 - \tfrac12 e^{-(x-\mu)/b}` for :math:`x \ge \mu`
    (Kotz, Kozubowski & Podgorski 2001), with :math:`s = (a-\mu)/b`,
    :math:`t = (c-\mu)/b`, :math:`w = (c-a)/b`:

    .. math::

        \log P = \begin{cases}
          \log\tfrac12 - s + \log(1 - e^{-w}) & s \ge 0 \\
          \log\tfrac12 + t + \log(1 - e^{-w}) & t \le 0 \\
          \log\big(1 - \tfrac12(e^{s} + e^{-t})\big) & s < 0 < t .
        \end{cases}

    Everything is formed in log space with ``expm1``/``log1p`` (the last case
    as ``log1p`` of the tail mass when it is below 1/2, else as
    :math:`\log(-\tfrac12(\mathrm{expm1}(s) + \mathrm{expm1}(-t)))`), so far tails (where
    ``F`` underflows) and very narrow intervals (where ``F(c) - F(a)``
    cancels) keep full relative precision; the result agrees with
    ``scipy.stats.laplace.logcdf``/``logsf`` on half-lines and with a
    50-digit mpmath reference everywhere (see the unit tests).

    Parameters
    ----------
    lower, upper : array_like
        Interval ends, broadcast together and with ``loc``; ``lower`` may be
        ``-inf`` and ``upper`` ``+inf``. An empty interval (``lower == upper``)
        has log probability ``-inf``.
    loc : array_like
        Centre(s) of the Laplace law, finite.
    scale : float
        Scale ``b`` > 0.

    Raises
    ------
    ValueError
        If any end is NaN, ``lower`` is ``+inf``, ``upper`` is ``-inf``,
        ``lower > upper``, ``loc`` is not finite, ``scale`` is not finite and
        > 0, or the shapes do not broadcast.
    """
    scale = check_positive_finite("scale", scale)
    lo, hi = _validate_interval(lower, upper)
    mu = check_finite_array("loc", loc)
    try:
        out = _interval_log_prob(lo, hi, mu, scale)
    except ValueError:
        raise ValueError(
            f"lower, upper and loc must broadcast together; got shapes {lo.shape}, {hi.shape}, {mu.shape}"
        ) from None
    if out.ndim == 0:
        return float(out)
    return out


def laplace_interval_probability(
    lower: ArrayLike, upper: ArrayLike, loc: ArrayLike, scale: float
) -> float | NDArray[np.float64]:
    r"""Exact :math:`P[\mathrm{lower} < X \le \mathrm{upper}]` for :math:`X \sim \mathrm{Lap}(\mathrm{loc}, b)`.

    ``exp`` of :func:`laplace_interval_log_probability`. Use the log version
    when probabilities may underflow.

    Parameters
    ----------
    lower, upper : array_like
        Interval ends, broadcast together and with ``loc``; no NaN, ``lower <= upper``,
        ``lower < +inf`` and ``upper > -inf`` (``lower`` may be ``-inf``, ``upper`` ``+inf``).
    loc : array_like
        Centre(s) of the Laplace law, finite.
    scale : float
        Scale ``b``, finite and > 0.

    Raises
    ------
    ValueError
        As :func:`laplace_interval_log_probability` (non-finite bounds or
        location, ``lower > upper``, ``scale`` not finite and > 0).
    """
    out = np.exp(laplace_interval_log_probability(lower, upper, loc, scale))
    if np.ndim(out) == 0:
        return float(out)
    return out


def laplace_box_log_probability(
    lower: ArrayLike, upper: ArrayLike, loc: ArrayLike, scale: float
) -> float | NDArray[np.float64]:
    r"""Exact log probability that the d-dimensional Laplace mechanism lands in a box.

    For independent coordinates :math:`X_i \sim \mathrm{Lap}(\mu_i, b)` and the box
    :math:`S = \prod_i (a_i, c_i]`,

    .. math:: \log P[X \in S] = \sum_{i=1}^{d} \log P[a_i < X_i \le c_i].

    Parameters
    ----------
    lower, upper : array_like, shape (..., d)
        Box corners (the last axis is the coordinate).
    loc : array_like, shape (d,)
        Centre :math:`f(D)`.
    scale : float
        Per-coordinate scale ``b`` > 0.

    Raises
    ------
    ValueError
        As :func:`laplace_interval_log_probability`, and if ``loc`` is not 1-D
        or the last axis of the corners does not have length ``d``.
    """
    scale = check_positive_finite("scale", scale)
    lo, hi = _validate_interval(lower, upper)
    mu = check_finite_array("loc", loc)
    if mu.ndim != 1 or mu.size == 0:
        raise ValueError(f"loc must be a non-empty 1-D vector (the query answer); got shape {mu.shape}")
    for name, arr in (("lower", lo), ("upper", hi)):
        if arr.ndim == 0 or arr.shape[-1] != mu.size:
            raise ValueError(f"{name} must have shape (..., {mu.size}); got shape {arr.shape}")
    out = _interval_log_prob(lo, hi, mu, scale).sum(axis=-1)
    if np.ndim(out) == 0:
        return float(out)
    return np.asarray(out, dtype=np.float64)


@dataclass(frozen=True)
class IntervalRatioMax:
    r"""Extremes of :math:`\log P[M(D)\in S] - \log P[M(D')\in S]` over a family of events.

    Attributes
    ----------
    log_ratio_max : float
        :math:`\max_S \log P[M(D)\in S]/P[M(D')\in S]`.
    argmax_lower, argmax_upper : float or numpy.ndarray
        The event attaining it: the interval (or, for a vector query, the box
        with these corners) ``(lower, upper]``.
    log_ratio_min : float
        :math:`\min_S` of the same log ratio (so ``-log_ratio_min`` is the
        largest log ratio in the reverse direction, :math:`D'` over :math:`D`).
    argmin_lower, argmin_upper : float or numpy.ndarray
        The event attaining the minimum.
    n_events : int
        Number of events compared (intervals per coordinate to the power d).
    """

    log_ratio_max: float
    argmax_lower: float | NDArray[np.float64]
    argmax_upper: float | NDArray[np.float64]
    log_ratio_min: float
    argmin_lower: float | NDArray[np.float64]
    argmin_upper: float | NDArray[np.float64]
    n_events: int

    @property
    def max_abs_log_ratio(self) -> float:
        """The largest :math:`|\\log|` event ratio in either direction: the epsilon these events certify."""
        return max(self.log_ratio_max, -self.log_ratio_min)


#: Default bound on the number of intervals laplace_max_interval_log_ratio compares per coordinate.
MAX_INTERVALS = 5 * 10**7

_INTERVAL_BLOCK = 1 << 18  # intervals evaluated per vectorised block (peak memory about 40 MB)


def laplace_max_interval_log_ratio(
    loc: ArrayLike, loc_prime: ArrayLike, scale: float, edges: ArrayLike, *, max_intervals: int = MAX_INTERVALS
) -> IntervalRatioMax:
    r"""Exact extremes of the event log ratio over every interval (or box) on a grid.

    For a scalar query the events are all intervals :math:`(e_i, e_j]`,
    :math:`i < j`, between points of ``edges`` (which may include
    :math:`\pm\infty`, giving half-lines); each probability is exact
    (:func:`laplace_interval_log_probability`). For a d-dimensional query
    the events are all boxes whose sides are such intervals. Since
    :math:`P[M(D) \in \prod_i I_i] = \prod_i P[M(D)_i \in I_i]`, the log
    ratio of a box is the sum of its sides' log ratios, and the sides can be
    chosen independently; so the maximum over the :math:`m^d` boxes is the
    sum of the per-coordinate maxima, computed here exactly without
    enumerating the boxes.

    Cost: :math:`O(m^2)` time per coordinate for ``m`` distinct edges, and
    memory bounded independently of ``m`` (the intervals are evaluated in
    blocks of about a million, rows of the upper triangle at a time). The
    number of intervals :math:`m(m-1)/2` is checked against ``max_intervals``
    before any work (5e7 by default, ``m`` of about 10,000, some seconds per
    coordinate); raise it explicitly to go further.

    Parameters
    ----------
    loc, loc_prime : float or array_like of shape (d,)
        The answers :math:`f(D)` and :math:`f(D')`.
    scale : float
        The scale ``b`` of the noise actually added, > 0.
    edges : array_like, 1-D
        Grid points (sorted and de-duplicated here); at least 2 distinct,
        no NaN; ``-inf``/``+inf`` allowed.
    max_intervals : int
        Refuse grids with more intervals than this (default :data:`MAX_INTERVALS`).

    Raises
    ------
    ValueError
        On invalid ``loc``/``loc_prime``/``scale``, if ``edges`` is not 1-D,
        contains NaN, has fewer than 2 distinct points, or more than
        ``max_intervals`` intervals, or if a log ratio overflows.
    """
    scale = check_positive_finite("scale", scale)
    u, v = _query_pair(loc, loc_prime, ("loc", "loc_prime"))
    limit = check_positive_int("max_intervals", max_intervals)
    e = as_real_array("edges", edges)
    if e.ndim != 1:
        raise ValueError(f"edges must be a 1-D array; got shape {e.shape}")
    if np.isnan(e).any():
        raise ValueError("edges must not contain NaN")
    e = np.unique(e)
    if e.size < 2:
        raise ValueError(f"edges must contain at least 2 distinct points; got {e.size}")
    m = int(e.size)
    n_intervals = m * (m - 1) // 2
    if n_intervals > limit:
        raise ValueError(
            f"edges has {m} distinct points, {n_intervals} intervals, above max_intervals={limit} "
            f"(the cost is quadratic in the number of edges); pass a larger max_intervals to go further"
        )
    _distance_over_scale(u, v, scale, "loc - loc_prime")
    us, vs = np.atleast_1d(u), np.atleast_1d(v)
    maxs, mins = [], []
    arg_max_lo, arg_max_hi, arg_min_lo, arg_min_hi = [], [], [], []
    # rows i of the upper triangle (i < j) in blocks of about _INTERVAL_BLOCK intervals
    starts = [0]
    while starts[-1] < m - 1:
        i0, count = starts[-1], 0
        while i0 < m - 1 and count < _INTERVAL_BLOCK:
            count += m - 1 - i0
            i0 += 1
        starts.append(i0)
    for uk, vk in zip(us, vs, strict=True):
        best = (-math.inf, 0.0, 0.0)
        worst = (math.inf, 0.0, 0.0)
        for r0, r1 in zip(starts[:-1], starts[1:], strict=True):
            i, j = _rows(r0, r1, m)
            lo, hi = e[i], e[j]
            diff = _interval_log_ratio(lo, hi, float(uk), float(vk), scale)
            if np.isnan(diff).any():  # both probabilities underflowed to 0 (-inf - -inf)
                raise ValueError(
                    "an interval has probability below the double range under both loc and loc_prime; "
                    "drop edges far in the tails (beyond ~700 scales from loc)"
                )
            a, c = int(np.argmax(diff)), int(np.argmin(diff))
            if diff[a] > best[0]:
                best = (float(diff[a]), float(lo[a]), float(hi[a]))
            if diff[c] < worst[0]:
                worst = (float(diff[c]), float(lo[c]), float(hi[c]))
        maxs.append(best[0])
        mins.append(worst[0])
        arg_max_lo.append(best[1])
        arg_max_hi.append(best[2])
        arg_min_lo.append(worst[1])
        arg_min_hi.append(worst[2])

    def pack(vals: list[float]) -> float | NDArray[np.float64]:
        return float(vals[0]) if u.ndim == 0 else np.array(vals)

    return IntervalRatioMax(
        log_ratio_max=float(math.fsum(maxs)),
        argmax_lower=pack(arg_max_lo),
        argmax_upper=pack(arg_max_hi),
        log_ratio_min=float(math.fsum(mins)),
        argmin_lower=pack(arg_min_lo),
        argmin_upper=pack(arg_min_hi),
        n_events=n_intervals ** int(us.size),
    )


def _rows(r0: int, r1: int, m: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Index pairs (i, j), i < j, of the rows r0 <= i < r1 of the upper triangle of an m x m grid."""
    lengths = m - 1 - np.arange(r0, r1)
    i = np.repeat(np.arange(r0, r1), lengths)
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return i, i + 1 + offsets


def _t_plus_expm1_neg(t: NDArray[np.float64]) -> NDArray[np.float64]:
    """:math:`t + e^{-t} - 1 \\ge 0` without cancellation for small ``t`` (Taylor series below 0.5)."""
    out = t + np.expm1(-t)
    small = t < 0.5
    if small.any():
        ts = t[small]
        term = ts * ts / 2.0
        acc = term.copy()
        for kk in range(3, 30):  # sum_{k>=2} (-t)^k / k!; remainder < 0.5^30/30! ~ 1e-41
            term = term * (-ts) / kk
            acc += term
        out[small] = acc
    return out


def _x_minus_log1p(q: NDArray[np.float64]) -> NDArray[np.float64]:
    """:math:`q - \\log(1+q) \\ge 0` without cancellation for small ``|q|`` (series below 0.1)."""
    out = q - np.log1p(q)
    small = np.abs(q) < 0.1
    if small.any():
        qs = q[small]
        acc = np.zeros_like(qs)
        power = qs.copy()
        for kk in range(2, 40):  # sum_{k>=2} (-1)^k q^k / k
            power = power * qs
            acc += (-1) ** kk * power / kk
        out[small] = acc
    return out


def laplace_kl_divergence(
    loc: ArrayLike, loc_prime: ArrayLike, scale: float, scale_prime: float | None = None
) -> float:
    r"""KL divergence :math:`\mathrm{KL}(\mathrm{Lap}(\mu, b) \,\|\, \mathrm{Lap}(\mu', b'))`, summed over coordinates.

    For one coordinate, with :math:`\Delta = |\mu - \mu'|` (Gil, Alajaji &
    Linder 2013; derived by integration in the Laplace-mechanism chapter):

    .. math::

        \mathrm{KL} = \log\frac{b'}{b} + \frac{\Delta}{b'} + \frac{b}{b'} e^{-\Delta/b} - 1
        = \big(r - 1 - \log r\big) + r\,\big(t + e^{-t} - 1\big),
        \qquad r = b/b',\ t = \Delta/b .

    With equal scales this is :math:`t + e^{-t} - 1`; for the Laplace mechanism
    at full sensitivity (:math:`t = \varepsilon`) it is
    :math:`\varepsilon + e^{-\varepsilon} - 1`, the mean of the privacy loss
    under :math:`M(D)`. Both bracketed terms are non-negative and evaluated
    without cancellation (series for small arguments). For product laws
    (vector ``loc``) the divergences of the coordinates add.

    Parameters
    ----------
    loc, loc_prime : float or array_like of shape (d,)
        Centres :math:`\mu` and :math:`\mu'`, finite, same shape.
    scale : float
        Scale ``b`` of the first law, > 0.
    scale_prime : float, optional
        Scale ``b'`` of the second law, > 0; defaults to ``scale``.

    Raises
    ------
    ValueError
        If a scale is not finite and > 0, the centres are not finite, of
        different shapes, or not scalar/1-D, or the divergence exceeds the
        double range.
    """
    scale = check_positive_finite("scale", scale)
    scale_prime = scale if scale_prime is None else check_positive_finite("scale_prime", scale_prime)
    u, v = _query_pair(loc, loc_prime, ("loc", "loc_prime"))
    with np.errstate(over="ignore"):
        gap = np.atleast_1d(np.abs(u - v))
        t = gap / scale
        r = scale / scale_prime
    if not (np.all(np.isfinite(t)) and math.isfinite(r)):
        raise ValueError(
            f"the KL divergence overflows the double range: |loc - loc_prime| / scale or scale / scale_prime "
            f"is beyond 1.8e308 (scale={scale!r}, scale_prime={scale_prime!r})"
        )
    q = (scale - scale_prime) / scale_prime  # r - 1
    if abs(q) < 0.1:
        first = float(_x_minus_log1p(np.atleast_1d(np.asarray(q)))[0])
    else:  # no cancellation: r - 1 - log r, with log r from the logs (r may underflow)
        first = q - (math.log(scale) - math.log(scale_prime))
    # r (t + e^{-t} - 1) = gap / b' + r expm1(-t) for t >= 0.5 (the series below), without inf * 0
    small = t < 0.5
    with np.errstate(over="ignore"):  # gap / b' beyond the double range: refused below
        second = np.where(small, 0.0, gap / scale_prime + r * np.expm1(-np.where(small, 1.0, t)))
    if np.any(small):
        second[small] = r * _t_plus_expm1_neg(t[small])
    try:  # fsum raises OverflowError when finite terms sum beyond the doubles
        total = math.fsum([first * t.size, *second.tolist()])
    except OverflowError:
        total = math.inf
    if not math.isfinite(total):
        raise ValueError(
            f"the KL divergence overflows the double range (loc, loc_prime, scale={scale!r}, "
            f"scale_prime={scale_prime!r})"
        )
    return max(total, 0.0)
