r"""Discretising a privacy loss on a lattice, three ways, each with what it certifies.

The PLD accountant (:mod:`dpcore.pld`) composes losses on a lattice of step :math:`h`. A loss
(:mod:`dpcore.pld_losses`) is put on the lattice in one of three ways:

* :func:`_discretise`, *mean-matched* rounding: each loss to its cell's centre, shifted so that the
  discretised mean equals the true one on the discretised range. The rounding errors of :math:`K`
  composed losses are then independent, of mean 0 and each in an interval of width :math:`h`, so
  Hoeffding's inequality bounds their sum (the accountant's fallback bracket);
* :func:`_connect_dots`, the *pessimistic* pair of Doroshenko, Ghazi, Kamath, Kumar & Manurangsi
  (2022): its profile equals the true one at the lattice points and lies above it in between, so
  every composition of such pairs bounds the true composition from above;
* :func:`_optimistic_dots`, its *optimistic twin*: nodes lowered by a bound on the chord's excess,
  then the lower convex hull, a pair dominated by the true one, so its compositions bound the true
  composition from below.

Each also truncates the loss's tails at a mass :math:`\tau` found from the distribution functions
(:func:`_truncation`), moved to :math:`+\infty` (pessimistic) or counted in the failure mass.
Where a lattice would exceed :data:`MAX_FFT_LENGTH` points, a ``ValueError`` names the step.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .pld_losses import CDF, PrivacyLoss

#: Largest FFT length the accountant will use (2^26 points: about 1.6 GB of work arrays); beyond it, an error.
MAX_FFT_LENGTH = 1 << 26


@dataclass(frozen=True)
class _Discrete:
    """A loss discretised on a lattice: ``pmf[i]`` sits at ``h (start + i) + shift``."""

    pmf: NDArray[np.float64]
    start: int
    shift: float
    tail: float  # the probability that the loss falls outside the discretised range


def _grid_crossing(
    holds: Callable[[NDArray[np.float64]], NDArray[np.bool_]], inside: float, outside: float
) -> tuple[float, float]:
    """Where a monotone condition stops holding, between ``inside`` (holds) and ``outside``: 4 rounds of 257 points.

    Each round evaluates ``holds`` once, vectorised, on 257 points from ``inside`` to ``outside`` and keeps the
    last point that holds and the first that does not (within 1/256^4 of the start). If every point holds
    (``outside`` was only a bound), the last cell is kept; if ``inside`` itself does not, both ends are it.
    """
    for _ in range(4):
        x = np.linspace(inside, outside, 257)
        bad = np.flatnonzero(~holds(x))
        first_bad = int(bad[0]) if bad.size else 256
        if first_bad == 0:
            return inside, inside
        inside, outside = float(x[first_bad - 1]), float(x[first_bad])
    return inside, outside


@functools.lru_cache(maxsize=64)
def _truncation(loss: PrivacyLoss, tau: float) -> tuple[float, float]:
    r"""Points ``lo < hi`` with ``P(L <= lo) <= tau`` and ``P(hi < L < inf) <= tau``.

    Each end is bracketed among the points :math:`\pm 2^j` and then located by four rounds of 257-point
    grids, one vectorised call of the cdf (or sf) each (within 1/256^4 of the bracket), the returned end
    keeping its property at every round. Cached: a query discretises the same laws at several steps, with
    the same ``tau``.
    """
    powers = np.asarray(2.0 ** np.arange(64), dtype=np.float64)

    def locate(f: CDF, inside: float, outside: float) -> float:
        """The grid point nearest ``outside`` with ``f <= tau``, between ``inside`` (``f <= tau``) and ``outside``."""
        return _grid_crossing(lambda x: np.asarray(f(x) <= tau), inside, outside)[0]  # NaN: not satisfying

    def bracket(f: CDF, sign: float) -> float:
        """A point ``sign * 2^j`` with ``f <= tau`` (doubling beyond 2^63 if needed)."""
        vals = f(sign * powers)
        good = np.nonzero(vals <= tau)[0]
        if good.size:
            return float(sign * powers[good[0]])
        b = sign * float(powers[-1])
        while not float(f(np.array([b]))[0]) <= tau:
            b *= 2.0
        return b

    if math.isfinite(loss.lower):
        lo = loss.lower - 1e-9 * max(1.0, abs(loss.lower))
    else:
        if not float(loss.cdf(np.array([0.0]))[0]) <= tau:
            lo = locate(loss.cdf, bracket(loss.cdf, -1.0), 0.0)
        else:  # the lower tail ends above 0 (a Gaussian loss of large mean): search upwards
            above = np.nonzero(~(loss.cdf(powers) <= tau))[0]
            j = int(above[0]) if above.size else -1
            lo = 0.0 if j < 0 else locate(loss.cdf, 0.0 if j == 0 else float(powers[j - 1]), float(powers[j]))
    if math.isfinite(loss.upper):
        hi = loss.upper
    else:
        b = bracket(loss.sf, 1.0)
        hi = locate(loss.sf, b, lo)
    return lo, hi


@functools.lru_cache(maxsize=64)
def _spread(loss: PrivacyLoss) -> float:
    r"""The interquartile range of the loss under P (0 if one atom holds both quartiles).

    A scale for the first grid step: a step near the spread does not resolve the loss (most of its mass in a
    cell or two), and the refinement's error model (square of the step) holds only well below it. The
    quartiles are bracketed on 257-point grids of the cdf, four times (within 1/256^4 of the range,
    :func:`_grid_crossing`, as in :func:`_truncation`), in a range ``[-r, r]`` found by doubling ``r`` from 1.
    0 also when a quartile is not finite (a mass of 1/4 or more at :math:`+\infty`): no scale to resolve.
    """
    r = 1.0
    while True:
        ends = loss.cdf(np.array([-r, r]))
        if ends[0] <= 0.25 and ends[1] >= 0.75:
            break
        if r > 1e300:
            return 0.0
        r *= 2.0
    quartiles = []
    for target in (0.25, 0.75):

        def below(x: NDArray[np.float64], target: float = target) -> NDArray[np.bool_]:
            return np.asarray(loss.cdf(x) < target)

        a, b = _grid_crossing(below, -r, r)
        quartiles.append(0.5 * (a + b))
    return max(quartiles[1] - quartiles[0], 0.0)


def _check_length(loss: PrivacyLoss, lo: float, hi: float, h: float, what: str) -> None:
    """Refuse a step ``h`` giving more than :data:`MAX_FFT_LENGTH` points over ``[lo, hi]``, before any ``floor``.

    Compared as floats, ``(hi - lo) / h`` and the ends ``lo / h``, ``hi / h`` are ``inf`` where they leave the
    doubles (``h`` 3e-308 against a loss reaching -10), which ``math.floor`` would turn into an OverflowError.
    The step is ``value_discretization`` if one was given, else chosen by the accountant from
    ``relative_width``: the message names both.
    """
    points = (hi - lo) / h
    if not (points <= MAX_FFT_LENGTH and math.isfinite(lo / h) and math.isfinite(hi / h)):
        raise ValueError(
            f"value_discretization {h:g} is too fine for the loss of {loss.name or 'this mechanism'}: "
            f"{points:.4g} {what} over [{lo:.6g}, {hi:.6g}] (at most {MAX_FFT_LENGTH}); choose a coarser "
            "value_discretization or, where the accountant chooses the step, a larger relative_width"
        )


def _discretise(loss: PrivacyLoss, h: float, tau: float) -> _Discrete:
    """Cells ``(c - h/2, c + h/2]`` around lattice points ``c``, masses from cdf/sf, the shift matching the mean.

    Raises
    ------
    ValueError
        If the step ``h`` needs more than :data:`MAX_FFT_LENGTH` cells over the loss's truncated range
        (:func:`_check_length`, before any rounding that could overflow), or the cells hold no mass.
    """
    lo, hi = _truncation(loss, tau)
    _check_length(loss, lo, hi, h, "cells")
    i0 = math.floor(lo / h + 0.5)
    i1 = math.ceil(hi / h - 0.5)
    n = i1 - i0 + 1
    if n > MAX_FFT_LENGTH:
        raise ValueError(
            f"value_discretization {h:g} is too fine for the loss of {loss.name or 'this mechanism'}: "
            f"{n} cells (at most {MAX_FFT_LENGTH})"
        )
    edges = np.asarray(h * (np.arange(i0, i1 + 2) - 0.5), dtype=np.float64)  # n + 1 cell edges
    pmf = _cell_masses(loss.cdf, loss.sf, edges)
    inside = float(pmf.sum())
    if inside <= 0.0:
        raise ValueError("the discretised loss has no mass: value_discretization too coarse for this mechanism")
    centres = h * np.arange(i0, i1 + 1)
    mean_in = loss.partial_mean(float(edges[0]), float(edges[-1]))
    shift = (mean_in - float(pmf @ centres)) / inside
    tail = max(0.0, 1.0 - inside)  # below the first cell, above the last, or infinite
    # mass outside the range is kept at the end cells, so that the discretised law is a probability law;
    # the coupling fails only on those events, whose probability `tail` enters the bracket.
    pmf[0] += float(loss.cdf(edges[:1])[0])
    pmf[-1] += max(0.0, 1.0 - float(pmf.sum()))
    return _Discrete(pmf, i0, shift, tail)


def _cell_masses(cdf: CDF, sf: CDF, edges: NDArray[np.float64]) -> NDArray[np.float64]:
    """Masses of the cells between consecutive ``edges`` (differences of cdf or of sf, whichever is smaller).

    ``sf`` is evaluated only from the first edge where the cdf exceeds 1/2 (the cdf increases), one before it.
    """
    lower = cdf(edges)
    use_sf = lower > 0.5
    upper = np.zeros_like(lower)
    if use_sf.any():
        start = max(int(np.argmax(use_sf)) - 1, 0)
        upper[start:] = sf(edges[start:])
    return _masses(lower, upper)


@dataclass(frozen=True)
class _Lattice:
    """A loss's distribution functions at the lattice points ``e = h * (start + i)`` under P and under Q."""

    start: int
    e: NDArray[np.float64]
    cdf: NDArray[np.float64]
    sf: NDArray[np.float64]
    q_cdf: NDArray[np.float64]
    q_sf: NDArray[np.float64]


@functools.lru_cache(maxsize=8)
def _lattice(loss: PrivacyLoss, h: float, tau: float) -> _Lattice:
    """The lattice points covering the loss but tails of at most ``tau`` (at least 4), and the laws there.

    Cached: connect-the-dots and its optimistic twin discretise the same loss on the same lattice.

    Raises
    ------
    ValueError
        If more than :data:`MAX_FFT_LENGTH` points are needed (checked before any rounding that could
        overflow, :func:`_check_length`), or the loss has no law under Q.
    """
    if loss.q_cdf is None or loss.q_sf is None:
        raise ValueError(f"the loss of {loss.name or 'this mechanism'} has no law under Q (q_cdf, q_sf)")
    lo, hi = _truncation(loss, tau)
    _check_length(loss, lo, hi, h, "lattice points")
    i0 = math.floor(lo / h)
    i1 = max(math.ceil(hi / h), i0 + 3)
    n = i1 - i0 + 1
    if n > MAX_FFT_LENGTH:
        raise ValueError(
            f"value_discretization {h:g} is too fine for the loss of {loss.name or 'this mechanism'}: "
            f"{n} lattice points (at most {MAX_FFT_LENGTH})"
        )
    e = np.asarray(h * np.arange(i0, i1 + 1), dtype=np.float64)
    if loss.laws is not None:
        cdf, sf, q_cdf, q_sf = loss.laws(e)
        return _Lattice(i0, e, cdf, sf, q_cdf, q_sf)
    return _Lattice(i0, e, loss.cdf(e), loss.sf(e), loss.q_cdf(e), loss.q_sf(e))


def _masses(lower: NDArray[np.float64], upper: NDArray[np.float64]) -> NDArray[np.float64]:
    """Cell masses from a cdf and sf at the cell edges: differences of the smaller of the two."""
    return np.asarray(np.maximum(np.where(lower[1:] > 0.5, upper[:-1] - upper[1:], lower[1:] - lower[:-1]), 0.0))


def _connect_dots(loss: PrivacyLoss, h: float, tau: float) -> tuple[_Discrete, float]:
    r"""Pessimistic "connect-the-dots" discretisation on the lattice :math:`h\mathbb{Z}`: (finite part, mass at +inf).

    Write :math:`Y = e^L` (the likelihood ratio). In each cell
    :math:`e_j < L \le e_{j+1}` of the lattice, :math:`Q`'s mass is split between
    the two ends in proportion to :math:`Y`, so that both :math:`Q(\text{cell})`
    and :math:`E_Q[Y; \text{cell}] = P(\text{cell})` are kept: the lattice pair
    has a privacy profile equal to the true one at every lattice point and
    linear in :math:`e^\varepsilon` between them, the chord of a convex
    function, hence above it (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi
    2022). The true pair is a garbling of the lattice pair (send each end
    back into its cell), so every composition of such pairs dominates the true
    composition: a certified upper bound, with no rounding bias that grows
    with the number of composed parts. Below the first point the cell is split
    between :math:`Y = 0` and the first point (all of :math:`P`'s mass goes to
    the first point); above the last, between the last point and
    :math:`Y = \infty` (:math:`P`'s excess becomes mass at :math:`+\infty`).
    The :math:`P`-mass sent to the right end of a cell is
    :math:`(e^h P_j - e^{e_{j+1}} Q_j)/(e^h-1)`, computed as
    :math:`P_j\,(1 - e^{e_{j+1}-h}Q_j/P_j)/(1-e^{-h})`; rounding can take it a few
    ulps outside :math:`[0, P_j]`, where it is put back (floating point is not
    certified, see the module docstring).
    """
    lat = _lattice(loss, h, tau)
    i0, points, n = lat.start, lat.e, lat.e.size
    p_cell, q_cell = _masses(lat.cdf, lat.sf), _masses(lat.q_cdf, lat.q_sf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_ratio = points[1:] + np.log(q_cell) - np.log(p_cell)  # log(e^{e_{j+1}} Q_j / P_j), in [0, h]
        if h < 700.0:
            right = p_cell * (math.exp(h) - np.exp(log_ratio)) / math.expm1(h)
        else:  # (e^h - ratio) / (e^h - 1) = (1 - ratio e^-h) / (1 - e^-h): e^h overflowed beyond 709.78 (a step
            # the accountant itself chose, e.g. RandomizedResponse(20) composed 10**11 times)
            right = p_cell * -np.expm1(log_ratio - h) / -math.expm1(-h)
    right = np.clip(np.nan_to_num(right, nan=0.0, posinf=0.0, neginf=0.0), 0.0, p_cell)
    pmf = np.zeros(n)
    pmf[:-1] += p_cell - right
    pmf[1:] += right
    pmf[0] += float(lat.cdf[0])  # P(L <= e_0): to the first point
    p_top, q_top = float(lat.sf[-1]), float(lat.q_sf[-1])
    log_last = float(points[-1]) + math.log(q_top) if q_top > 0.0 else -math.inf
    at_last = p_top if log_last >= math.log(max(p_top, 1e-300)) else math.exp(log_last)
    pmf[-1] += at_last
    infinite = p_top - at_last + loss.infinity_mass
    return _Discrete(pmf, i0, 0.0, 0.0), infinite


def _optimistic_dots(loss: PrivacyLoss, h: float, tau: float) -> tuple[_Discrete, float] | None:
    r"""Optimistic twin of :func:`_connect_dots`: a lattice pair *dominated* by the true one (``None`` if not found).

    Write :math:`x = e^\varepsilon` and :math:`f(x) = E_Q[(e^L - x)_+]` (the profile of a loss with no mass at
    :math:`\pm\infty`): convex, decreasing, :math:`f(0) = 1`, :math:`f'(x) = -Q(L > \log x)`, so
    :math:`f(x) \ge \max(1 - x, 0)`. A pair whose losses lie on lattice points :math:`e_i` (masses :math:`q_i`
    under :math:`Q`, :math:`p_i = e^{e_i} q_i` under :math:`P`) has the profile
    :math:`g(x) = \sum_i q_i (e^{e_i} - x)_+`: convex, piecewise linear, kinks only at lattice points;
    conversely such a :math:`g` with :math:`g(0) = 1` and slope :math:`-1` at 0 is the profile of that pair
    (:math:`q_i` its slope changes). If :math:`g \le f` everywhere the pair is dominated by the true one
    (Blackwell: a garbling of it), and so is every composition of such pairs: a certified *lower* bound on
    the composition's profile, with an error second order in the step like connect-the-dots'.

    Construction. Node values :math:`G_i = f(x_i) - c_i`, interpolated linearly. On a cell :math:`[a, b]` the
    chord of :math:`f` exceeds :math:`f` at :math:`x = a + t(b - a)` by exactly
    :math:`E_Q[\min((1-t)(y - a), t(b - y));\, a < y < b]`, :math:`y = e^L`, so an end lowered by
    :math:`E_Q[y - a]` (left) or :math:`E_Q[b - y]` (right), or both ends by the smaller of the two, keeps
    the chord below :math:`f`; so does a cell with both ends on the floor :math:`\max(1 - x, 0)` (below
    :math:`f`). Nodes are lowered accordingly, never below the floor; the first point is put on the tangent
    :math:`1 - x` and the last at 0 (their cells' conditions are checked like the others'; any failure:
    ``None``). Then :math:`g` is the lower convex hull of the nodes, which is below their interpolation:
    nodes above the segment joining their neighbours are dropped until none is (vectorised passes), and the
    slope changes at the remaining nodes are computed from cell masses (differences of means of
    :math:`Q(L > e) + ` the chord's share, not of node values). Negative changes of rounding size are set to
    0; ``rounding``, the :math:`P`-mass so added, bounds the change of a composed profile.
    """
    if loss.q_cdf is None or loss.q_sf is None or loss.infinity_mass > 0.0:
        return None
    lat = _lattice(loss, h, tau)
    i0, e, n = lat.start, lat.e, lat.e.size
    with np.errstate(over="ignore"):
        x = np.exp(e)
    if not np.all(np.isfinite(x)):
        return None
    em1 = math.expm1(h)
    dx = x[:-1] * em1
    p_cell, q_cell = _masses(lat.cdf, lat.sf), _masses(lat.q_cdf, lat.q_sf)
    if loss.lattice is None:  # no atoms: the open cells have the closed cells' masses
        p_open, q_open = p_cell, q_cell
    else:
        p_open = _open_cell_masses(loss.cdf, loss.sf, e, lat.cdf, lat.sf)
        q_open = _open_cell_masses(loss.q_cdf, loss.q_sf, e, lat.q_cdf, lat.q_sf)
    q_le, q_gt, p_le, p_gt = lat.q_cdf, lat.q_sf, lat.cdf, lat.sf
    r, r_open = _right_share(p_cell, q_cell, e[:-1], em1), _right_share(p_open, q_open, e[:-1], em1)
    sigma = q_gt[1:] + r  # slope (negated) of the chord of f on each cell
    rho = q_le[1:] - r  # 1 - sigma, without cancellation
    left_need, right_need = dx * r_open, dx * (q_open - r_open)  # E_Q[y - a], E_Q[b - y] on the open cell
    both_need = np.minimum(left_need, right_need)
    f = np.maximum(p_gt - x * q_gt, 0.0)
    room = np.maximum(np.where(x < 1.0, x * q_le - p_le, f), 0.0)  # height above the floor
    grow = 1.0 + 1e-9  # a hair more than needed, against rounding in the comparisons
    want = np.zeros(n)
    want[1:-1] = grow * np.maximum(both_need[:-1], both_need[1:])
    for _ in range(4):  # a node short of room: the other end of its cells takes the one-sided amount
        low = np.minimum(want, room)
        low[0], low[-1] = room[0], f[-1]
        short = low < grow * np.maximum(np.r_[both_need[:1], both_need], np.r_[both_need, both_need[-1:]])
        want[1:] = np.maximum(want[1:], np.where(short[:-1], grow * right_need, 0.0))
        want[:-1] = np.maximum(want[:-1], np.where(short[1:], grow * left_need, 0.0))
    low = np.minimum(want, room)
    low[0], low[-1] = room[0], f[-1]
    floor = low >= room
    same_piece = floor[:-1] & floor[1:] & ((x[1:] <= 1.0) | (x[:-1] >= 1.0))
    covered = (low[:-1] >= left_need) | (low[1:] >= right_need) | (np.minimum(low[:-1], low[1:]) >= both_need)
    if not np.all(covered | same_piece):
        return None
    # lower convex hull of the nodes (x_i, f_i - low_i), node 0 and node m kept
    sigma_dx, rho_dx = sigma * dx, rho * dx

    def kinks(vs: NDArray[np.intp]) -> NDArray[np.float64]:
        u = vs[:-1]  # hull segment i covers the cells vs[i] .. vs[i+1] - 1: sums by reduceat, no cancellation
        span = np.add.reduceat(dx, u)
        drop = (low[vs[1:]] - low[u]) / span  # the lowering's slope on each hull segment
        mean_sigma = np.add.reduceat(sigma_dx, u) / span
        out = np.empty(vs.size)
        out[0] = float(np.sum(rho_dx[: vs[1]])) / span[0] - drop[0]  # 1 + the first slope
        out[1:-1] = mean_sigma[:-1] - mean_sigma[1:] + drop[:-1] - drop[1:]
        out[-1] = mean_sigma[-1] + drop[-1]  # minus the last slope
        return out

    # the hull leaves the first node along the segment of least slope and reaches the last one along the
    # segment of largest slope: the nodes in between are dropped at once (heights above 1 - x and above 0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        above_tangent = np.where(x < 1.0, room - low, f - low - (1.0 - x))
        node = np.where(x < 1.0, (1.0 - x) + (room - low), f - low)
        j = 1 + int(np.argmin(np.nan_to_num(above_tangent[1:] / (x[1:] - x[0]), nan=np.inf)))
        k = j + int(np.argmin(np.nan_to_num(node[j:-1] / (x[-1] - x[j:-1]), nan=np.inf))) if j < n - 1 else j
    vs = np.r_[0, np.arange(j, k + 1), n - 1] if k < n - 1 else np.r_[0, np.arange(j, n)]
    for _ in range(_HULL_PASSES):
        q = kinks(vs)
        bad = np.flatnonzero(q[1:-1] * x[vs[1:-1]] < -_KINK_ROUNDING) + 1
        if bad.size == 0:
            break
        # every other node of a run of neighbours above their chords: each dropped node is above the chord
        # of two nodes that stay, so it is not on the hull
        starts = np.r_[True, np.diff(bad) > 1]
        run_start = np.maximum.accumulate(np.where(starts, bad, 0))
        keep = np.ones(vs.size, bool)
        keep[bad[(bad - run_start) % 2 == 0]] = False
        vs = vs[keep]
    else:
        return None
    rounding = float(np.sum(np.maximum(-q * x[vs], 0.0)))
    q = np.maximum(q, 0.0)
    pmf = np.zeros(n)
    pmf[vs] = x[vs] * q
    if not (rounding <= 1e-12 and abs(float(pmf.sum()) - 1.0) <= 1e-9):
        return None
    return _Discrete(pmf, i0, 0.0, 0.0), rounding


def _right_share(
    p: NDArray[np.float64], q: NDArray[np.float64], left: NDArray[np.float64], em1: float
) -> NDArray[np.float64]:
    """Per cell, the Q-mass the chord sends to its right end: ``(P - e^a Q) / (e^b - e^a)``, in ``[0, Q]``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = q * np.expm1(np.log(p) - np.log(q) - left) / em1
    return np.asarray(np.clip(np.nan_to_num(r, nan=0.0, posinf=0.0, neginf=0.0), 0.0, q))


def _open_cell_masses(
    cdf: CDF, sf: CDF, edges: NDArray[np.float64], lower: NDArray[np.float64], upper: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Masses of the open cells between consecutive ``edges`` (an atom on an edge belongs to no cell).

    ``lower`` and ``upper`` are ``cdf`` and ``sf`` at the edges; they are evaluated again just below each right edge.
    """
    b = np.nextafter(edges[1:], -np.inf)
    return np.asarray(np.maximum(np.where(lower[:-1] > 0.5, upper[:-1] - sf(b), cdf(b) - lower[:-1]), 0.0))


#: A negative slope change whose P-mass is above minus this is rounding (set to 0 and accounted for)
_KINK_ROUNDING = 1e-14
_HULL_PASSES = 400  # vectorised passes of the lower-hull search (each drops every node above its neighbours' chord)
