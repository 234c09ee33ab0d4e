r"""Privacy-loss distributions: tight composition with a certified bracket.

The privacy loss of a mechanism between neighbours is the random variable
:math:`L = \log\big(p(X)/q(X)\big)`, :math:`X \sim P = M(D)`, :math:`q` the
density of :math:`Q = M(D')`. Its law determines the whole privacy profile,

.. math:: \delta(\varepsilon) = E\big[(1 - e^{\varepsilon - L})_+\big] + P(L = \infty),

and the privacy loss of a composition is the *sum* of the losses of its
parts, independent for independent noise: composition is convolution of
privacy-loss distributions (Dwork & Rothblum 2016; Koskela, Jälkö & Honkela
2020; Gopi, Lee & Wutschitz 2021).

:class:`~dpcore.PrivacyLoss` (:mod:`dpcore.pld_losses`) describes one mechanism's loss exactly (its distribution
function, its partial means); every mechanism of :mod:`dpcore.mechanisms`
returns its own from ``privacy_losses()`` (one per direction of the
neighbouring relation: the Poisson-subsampled Gaussian has two, the others
are symmetric and have one). :class:`PldAccountant` composes them.

Certified bracket
-----------------
Each loss :math:`L` is discretised on cells of width :math:`h` centred on a
lattice, :math:`\tilde L = c(L) + s`, with the shift :math:`s` chosen so that
:math:`E[\tilde L] = E[L]` on the discretised range (mean matching). The
errors :math:`E_j = \tilde L_j - L_j` of the :math:`K` composed losses are
then independent, of mean 0, each in an interval of width :math:`h`, so by
Hoeffding's inequality :math:`|\sum_j E_j| \le t = h\sqrt{K\log(2/\eta_H)/2}`
except with probability :math:`\eta_H`. The loss of each part falls outside
the discretised range with probability at most :math:`\tau`, and the FFT
window of the sum misses at most :math:`\tau_F` (Chernoff bounds computed from
the discretised laws). With :math:`\eta = \eta_H + K\tau + \tau_F` and
:math:`\tilde\delta` the profile of the exactly composed discretised losses,
monotonicity of :math:`x \mapsto (1-e^{\varepsilon-x})_+` gives, for every
:math:`\varepsilon`,

.. math:: \tilde\delta(\varepsilon + t) - \eta \le \delta(\varepsilon) \le \tilde\delta(\varepsilon - t) + \eta ,

so :math:`\varepsilon(\delta)` lies in
:math:`[\tilde\varepsilon(\delta + \eta) - t,\; \tilde\varepsilon(\delta - \eta) + t]`.
The error decays like :math:`h\sqrt{K}` (rounding every loss *up* instead
would bias the sum by up to :math:`Kh`). The accountant picks :math:`h` so
that the bracket's width is at most ``relative_width`` times its lower end
(default 1e-3) and refines until it is. Not certified: floating-point
rounding in the transforms and in the distribution functions; the
connect-the-dots bound and its optimistic twin below allow 1e-13 on delta for
it (``_FLOAT_SLACK``), against a delta of at least :data:`MIN_DELTA` (1e-10),
the smallest the accountant answers for.

Composition itself (:mod:`dpcore.pld_spectral`) is a power in the frequency
domain, computed so that its rounding stays near 1e-15 on delta at 10^5
steps where few frequencies remain, and by FFT otherwise.

Where the pieces live
---------------------
This module is the accountant: the bracket's argument, its failure mass and
the search for epsilon. It builds on three modules, each with its own
certificate in its docstring: :mod:`dpcore.pld_losses` (the laws, exact),
:mod:`dpcore.pld_grid` (their discretisations: mean-matched, connect-the-dots
and the optimistic twin) and :mod:`dpcore.pld_spectral` (the composition and
the profile of its result).

A tighter upper end: connecting the dots
----------------------------------------
Where every loss also knows its law under :math:`Q` (all of dpcore's do),
each is also discretised *pessimistically* by connect-the-dots (Doroshenko,
Ghazi, Kamath, Kumar & Manurangsi 2022; :func:`_connect_dots`): a pair on the
lattice whose privacy profile equals the true one at the lattice points and
lies above it in between. Composing such pairs bounds the composition from
above with no concentration argument and no error that grows like
:math:`Kh`; the only slack is the truncated tails (moved to
:math:`+\infty`) and the FFT window, both kept below :math:`10^{-3}\eta`.
Its value at a coarse grid is already close to the truth, so
:meth:`PldAccountant.epsilon` returns it alone (refined until halving the step
changes it by less than ``relative_width / 100`` of it), and it is the
bracket's upper end.

A tighter lower end: the optimistic twin
----------------------------------------
Connect-the-dots interpolates the profile :math:`f(x) = \delta(\log x)`
(convex in :math:`x = e^\varepsilon`) by chords through its values at the
lattice points: above :math:`f`. Lowering each node by a bound on the chord's
excess over :math:`f` in the adjacent cells (computed from the cell masses),
and taking the lower convex hull of the lowered nodes, gives a convex,
piecewise-linear function below :math:`f` with kinks only at lattice points:
the profile of a lattice pair *dominated* by the true one (a garbling of it),
whose compositions bound the true composition from *below*
(:func:`_optimistic_dots`). Its error is second order in the step too, so
:meth:`PldAccountant.epsilon_bracket` is [twin's lower end, connect-the-dots'
upper end], refined until its width is at most ``relative_width`` of its lower
end, with no Hoeffding term. Where a twin cannot be built (a loss with atoms
off the grid, or without its law under :math:`Q`) the mean-matched bracket
above is used; :meth:`PldAccountant.delta_bracket` reports the tighter of the
two ends. Two certified ends that cross are an error (``RuntimeError``), never
an answer.

Only Gaussian mechanisms
------------------------
Gaussian losses :math:`N(m, 2m)` compose exactly (the sum of independent
normals): they are merged into one loss before anything is discretised, and
a composition of Gaussians alone is answered by the closed form
(:func:`dpcore.gaussian_epsilon`, Balle & Wang 2018), with no grid.

Only Laplace mechanisms
-----------------------
Laplace mechanisms of one pure epsilon (within :data:`LAPLACE_EXACT_MAX_WORK`:
up to about 150 releases at epsilon0 = 1) are composed exactly, with no grid
(:mod:`dpcore.laplace_composition`: the loss is a tilt of a symmetric law of
atoms and a uniform part, whose convolution powers are piecewise polynomials
kept in Bernstein form); the bracket is then the rounding alone, at most
about :math:`10^{-10}` relative.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import laplace_composition
from ._validation import (
    check_positive_finite,
    check_positive_int,
    check_probability_open,
)
from .laplace_composition import laplace_composition_delta, laplace_composition_epsilon
from .mechanisms import GaussianMechanism, LaplaceMechanism, Mechanism
from .pld_grid import MAX_FFT_LENGTH as MAX_FFT_LENGTH  # re-exported: documented as dpcore.pld.MAX_FFT_LENGTH
from .pld_grid import _connect_dots, _discretise, _optimistic_dots, _spread, _truncation

# the laws are re-exported here too (dpcore.pld.gaussian_privacy_loss, ...), as before the split
from .pld_losses import HasPrivacyLoss as HasPrivacyLoss
from .pld_losses import PrivacyLoss, _Profile
from .pld_losses import atomic_privacy_loss as atomic_privacy_loss
from .pld_losses import gaussian_privacy_loss as gaussian_privacy_loss
from .pld_losses import laplace_privacy_loss_law as laplace_privacy_loss_law
from .pld_losses import subsampled_gaussian_privacy_losses as subsampled_gaussian_privacy_losses
from .pld_spectral import _composed_profile
from .rdp import rdp_to_dp

__all__ = ["PldAccountant", "PldBracket"]


#: Epsilons below it are bracketed to ``relative_width`` times it (an absolute width), not relative to themselves.
EPSILON_FLOOR = 0.1

#: Compositions of Laplace releases of one pure epsilon are answered exactly
#: (:func:`dpcore.laplace_composition_epsilon`) when their work, ``count * J**2`` multiply-adds with ``J``
#: the number of uniform parts kept (:mod:`dpcore.laplace_composition`), is at most this: about 10 ms, e.g.
#: up to 149 releases at epsilon0 = 1, 337 at 0.1, 945 at 0.01; beyond, on the grid.
LAPLACE_EXACT_MAX_WORK = 2_000_000

#: Smallest delta the accountant answers for: below it the FFT's rounding (about 1e-13 absolute) would matter.
MIN_DELTA = 1e-10

#: Largest epsilon the accountant answers for (a ``ValueError`` beyond: its searches are bounded by it).
MAX_EPSILON = 1e15


def _fft_tau(eta: float) -> float:
    """The FFT window's miss probability per side allowed out of ``eta`` (:func:`dpcore.pld_spectral._window`)."""
    return eta / 8.0


def _part_tau(eta: float, total: int) -> float:
    """Each part's truncation tail out of ``eta`` when ``total`` parts are composed (together at most eta/4)."""
    return eta / (4.0 * total)


def _dots_excess(infinite: Sequence[tuple[float, int]], tau_fft: float) -> float:
    """What connect-the-dots' composed profile leaves out: the mass at +inf of ``k`` copies of each part
    (``(mass at +inf, k)`` pairs), twice the FFT window's miss probability, and the floating-point allowance."""
    log_finite = sum(k * math.log1p(-mass) for mass, k in infinite)
    return -math.expm1(log_finite) + 2.0 * tau_fft + _FLOAT_SLACK


def _twin_slack(rounding: Sequence[tuple[float, int]], tau_fft: float) -> float:
    """How far the optimistic twins' composed profile may lie above a lower bound: twice the FFT window's miss
    probability, each part's rounding times its count (``(rounding, k)`` pairs), the floating-point allowance."""
    return 2.0 * tau_fft + sum(k * r for r, k in rounding) + _FLOAT_SLACK


def _below_root(root: float) -> float:
    """A certified lower end from the twin's root: the root lies within the search's tolerance of it."""
    return root - 2e-13 * max(1.0, abs(root))


def _grid(
    grids: dict[tuple[str, int, float, float], Any] | None, kind: str, loss: PrivacyLoss, h: float, tau: float
) -> Any:
    """:func:`_connect_dots` (``kind`` "dots") or :func:`_optimistic_dots` ("twin") of ``loss`` at ``(h, tau)``,
    kept in ``grids`` (an accountant's, for the losses it holds) for the latest step only: a query's last step
    is where epsilon over a run (:func:`dpcore.epsilon_over_run`) composes the same laws again."""
    key = (kind, id(loss), h, tau)
    if grids is not None and key in grids:
        return grids[key]
    if kind == "dots":
        return _kept(grids, key, _connect_dots(loss, h, tau))
    twin = _optimistic_dots(loss, h, tau)
    return _kept(grids, key, twin)


def _kept(grids: dict[tuple[str, int, float, float], Any] | None, key: tuple[str, int, float, float], law: Any) -> Any:
    """``law``, kept in ``grids`` under ``key`` (a new step's grid first clears the earlier step's)."""
    if grids is not None:
        if any(k[2] != key[2] for k in grids):
            grids.clear()
        grids[key] = law
    return law


def _optimistic_direction(
    parts: Sequence[tuple[PrivacyLoss, int]],
    h: float,
    eta: float,
    grids: dict[tuple[str, int, float, float], Any] | None = None,
) -> tuple[_Profile, float, int] | None:
    """Compose one direction's optimistic twins at step ``h``: (profile, slack, FFT length), ``None`` if one fails.

    ``profile(eps) - slack`` is a lower bound on the composition's profile: ``slack`` is twice the FFT
    window's miss probability (mass aliased into the window can only raise the computed profile), the
    parts' rounding (:func:`_optimistic_dots`) and the floating-point allowance.
    """
    tau, tau_fft = _part_tau(eta, sum(k for _, k in parts)), _fft_tau(eta)
    twins = []
    for loss, k in parts:
        twin = _grid(grids, "twin", loss, h, tau)
        if twin is None:
            return None
        twins.append((twin, k))
    profile, n = _composed_profile([(d, k) for (d, _), k in twins], tau_fft, h)
    return profile, _twin_slack([(r, k) for (_, r), k in twins], tau_fft), n


def _dots_direction(
    parts: Sequence[tuple[PrivacyLoss, int]],
    h: float,
    eta: float,
    grids: dict[tuple[str, int, float, float], Any] | None = None,
) -> tuple[_Profile, float]:
    r"""Compose one direction's connect-the-dots laws at step ``h``: (profile of the finite part, excess mass).

    The upper bound on the composition's profile is ``profile(eps) + mass``:
    ``mass`` is the composed mass at :math:`+\infty` (each part's truncation
    tail, at most ``eta / (4 K)``, plus any infinite loss) and twice the FFT
    window's miss probability (``eta / 8``).
    """
    tau, tau_fft = _part_tau(eta, sum(k for _, k in parts)), _fft_tau(eta)
    dots = [(_grid(grids, "dots", loss, h, tau), k) for loss, k in parts]
    profile, _ = _composed_profile([(d, k) for (d, _), k in dots], tau_fft, h)
    return profile, _dots_excess([(infinite, k) for (_, infinite), k in dots], tau_fft)


#: Added to the connect-the-dots bound on delta for the floating-point rounding of the FFT and the sums (1e-13
#: absolute, see the module docstring): the bound holds exactly at the lattice points, where rounding alone
#: could otherwise put it a few ulps below the truth.
_FLOAT_SLACK = 1e-13


def _inverse(delta: Callable[[float], float], target: float, lo: float, hi: float, guess: float | None = None) -> float:
    """Smallest ``eps >= lo`` with ``delta(eps) <= target`` (``delta`` non-increasing), by bisection.

    ``[lo, hi]`` is the first bracket; where ``delta(hi)`` still exceeds the target, ``hi`` is doubled up to
    :data:`MAX_EPSILON` (then a ``ValueError``), so that no answer is a search range's end presented as a
    bound (before issue 28 it returned ``hi = 1e4`` for a composition whose epsilon is 12000). A profile
    with its own ``inverse`` (:class:`_SpectralProfile`) answers itself where the root is in ``[lo, hi]``,
    starting from ``guess`` if one is given (it changes only where the search looks first).
    """
    solve = getattr(delta, "inverse", None)
    if solve is not None:
        found = solve(target, lo, hi, guess)
        if found is not None:
            return float(found)
    if delta(lo) <= target:
        return lo
    while delta(hi) > target:  # the root is above hi: widen (never return hi as if it met the target)
        if hi >= MAX_EPSILON:
            raise ValueError(
                f"epsilon at delta {target:g} exceeds {MAX_EPSILON:g}, the largest the accountant answers for"
            )
        lo, hi = hi, min(max(2.0 * hi, 1.0), MAX_EPSILON)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if delta(mid) <= target:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-13 * max(1.0, abs(hi)):
            break
    return hi


def _consistent(lower: float, upper: float) -> tuple[float, float]:
    """``(lower, upper)``, or a RuntimeError if the two certified ends cross (beyond rounding): a fault."""
    if lower > upper + 1e-9 * abs(upper) + 1e-15:
        raise RuntimeError(
            f"inconsistent bracket [{lower!r}, {upper!r}]: two certified bounds cross, so one of them is wrong"
        )
    return lower, upper


def _real(name: str, value: object) -> float:
    """``value`` as a float if it is a real number (not a bool, a string or a complex), else a ValueError."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number; got {value!r}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} is too large for a float; got an integer of {len(str(value))} digits") from None


#: Largest grid step: connect-the-dots weighs a cell by :math:`e^h`, which overflows beyond log(largest double).
MAX_VALUE_DISCRETIZATION = math.log(np.finfo(np.float64).max)

#: Smallest grid step: the smallest normal double (a subnormal step has too few bits to index a lattice by).
MIN_VALUE_DISCRETIZATION = float(np.finfo(np.float64).tiny)


def _check_step(value: object) -> float:
    """``value_discretization`` as a float in [:data:`MIN_VALUE_DISCRETIZATION`, :data:`MAX_VALUE_DISCRETIZATION`]."""
    h = check_positive_finite("value_discretization", value)
    if not MIN_VALUE_DISCRETIZATION <= h <= MAX_VALUE_DISCRETIZATION:
        raise ValueError(
            f"value_discretization must lie in [{MIN_VALUE_DISCRETIZATION:.17g}, {MAX_VALUE_DISCRETIZATION:.17g}] "
            f"(a normal double, and e^h finite for connect-the-dots); got {h!r}"
        )
    return h


@dataclass(frozen=True)
class PldBracket:
    """An epsilon (or delta) bracket from the PLD accountant, with how it was obtained.

    ``method`` is ``"pld"`` (discretised and composed on a grid of step
    ``value_discretization``), ``"exact-gaussian"`` (only Gaussian mechanisms:
    the closed form, no grid), ``"exact-laplace"`` (only Laplace mechanisms of
    one pure epsilon, within :data:`LAPLACE_EXACT_MAX_WORK`: exact
    composition, :func:`dpcore.laplace_composition_epsilon`) or ``"exact"``
    (one release of one mechanism: its own exact profile); for the last three
    ``lower`` and ``upper`` are the two sides of the root of the exact profile,
    apart by rounding only. For ``"pld"``,
    ``value_discretization`` is the step of the lower end's grid,
    ``connect_dots_step`` that of the upper end's, and ``hoeffding_t`` is 0
    when the lower end is the optimistic twin's (else the mean-matched
    bracket's Hoeffding term).
    """

    lower: float
    upper: float
    value_discretization: float
    hoeffding_t: float
    eta: float
    fft_length: int
    directions: int
    method: str = "pld"
    connect_dots_step: float = 0.0


def _exact_bracket(mechanism: Any, delta: float, directions: int, method: str) -> PldBracket:
    """``[lower, upper]`` around the root of a mechanism's exact profile: ``upper = mechanism.epsilon(delta)``."""
    upper = float(mechanism.epsilon(delta))  # rounded so that delta(upper) <= delta
    lower = upper
    step = 1e-12 * max(upper, 1e-300)
    while lower > 0.0 and float(mechanism.delta(max(lower - step, 0.0))) <= delta:
        lower = max(lower - step, 0.0)
        step *= 2.0
    lower = max(lower - step, 0.0)  # delta(lower) > delta: the true epsilon is above it
    return PldBracket(lower, upper, 0.0, 0.0, 0.0, 0, directions, method=method)


@dataclass
class _DirectionRun:
    """One direction at one grid step: the mean-matched profile with its t and eta, and connect-the-dots."""

    profile: Callable[[float], float]
    t: float
    eta: float
    fft_length: int
    dots: Callable[[float], float] | None = None
    dots_mass: float = 0.0  # mass at +inf of the connect-the-dots composition, plus its FFT window's


@dataclass
class PldAccountant:
    r"""Tight accountant on privacy-loss distributions, with a certified bracket (see the module docstring).

    Compose mechanism objects (:mod:`dpcore.mechanisms`, anything with
    ``privacy_losses()``) any number of times, mixed freely; ask for
    :meth:`epsilon` (the certified upper end), :meth:`epsilon_bracket` or
    :meth:`delta_bracket`. The numerical work happens at the query, on a grid
    chosen for the requested accuracy.

    Queries answer for :math:`\delta \in` [:data:`MIN_DELTA`, 1) (1e-10: below it the FFT's rounding,
    about 1e-13 absolute, would matter) and, on the grid, for an epsilon up to :data:`MAX_EPSILON`
    (1e15); the closed forms (Gaussian mechanisms only, one release) answer as far as their own functions
    (:func:`dpcore.gaussian_epsilon`: 1e300). A :meth:`delta_bracket` is certified to an absolute
    1e-13 (the floating-point allowance).

    Parameters
    ----------
    relative_width : float
        Target width of the epsilon bracket, relative to its lower end, > 0
        (default 1e-3); the grid is refined until it is met (a width the grid cannot reach within
        :data:`MAX_FFT_LENGTH` cells, or that the exact Laplace composition's rounding cannot reach as
        delta nears 1, is a ``ValueError``; :meth:`epsilon` alone is answered regardless). Below an
        epsilon of :data:`EPSILON_FLOOR` (0.1) the width is relative to that
        floor instead (at most ``1e-4`` absolute by default), so that a query
        whose answer is near 0 does not ask for an unbounded grid. ``math.inf``
        accepts any width.
    value_discretization : float, optional
        Fix the grid step :math:`h` instead (no refinement), in
        [:data:`MIN_VALUE_DISCRETIZATION`, :data:`MAX_VALUE_DISCRETIZATION`] (2.2e-308 to 709.78); a step too coarse
        for ``relative_width`` is an error, not a silently wide bracket. Not
        used where a closed form answers (see ``closed_form``).
    eta_fraction : float
        In the open interval (0, 1). The bracket's failure mass :math:`\eta` as a fraction of the
        queried delta (default 1e-6: small, so that its shift of the lower end stays inside the width
        even at a large delta; Hoeffding's t grows only like :math:`\sqrt{\log(1/\eta)}`).
    closed_form : bool
        A ``bool`` (or ``numpy.bool_``). Use closed forms where they exist (default): Gaussian mechanisms are
        merged into one loss before discretising, and answered exactly when
        nothing else is composed; one release of one mechanism is answered
        from its own exact profile. ``False`` discretises every loss (to check
        the grid against the closed forms).

    Raises
    ------
    ValueError
        If ``relative_width`` is not > 0 (NaN included), ``value_discretization`` is outside
        [:data:`MIN_VALUE_DISCRETIZATION`, :data:`MAX_VALUE_DISCRETIZATION`], ``eta_fraction`` is not in
        (0, 1) or ``closed_form`` is not a bool; or a query needs an FFT longer than
        :data:`MAX_FFT_LENGTH` (a clear error instead of exhausting memory).

    Examples
    --------
    >>> import dpcore
    >>> acc = dpcore.PldAccountant().compose(dpcore.GaussianMechanism(1.0), 10)
    >>> lower, upper = acc.epsilon_bracket(1e-5)
    """

    relative_width: float = 1e-3
    value_discretization: float | None = None
    eta_fraction: float = 1e-6
    closed_form: bool = True
    _parts: list[tuple[HasPrivacyLoss, int]] = field(default_factory=list, repr=False)
    _laws: list[tuple[list[tuple[PrivacyLoss, int]], float]] | None = field(default=None, repr=False, compare=False)
    _parts_cache: list[list[tuple[PrivacyLoss, int]]] | None = field(default=None, repr=False, compare=False)
    _grids: dict[tuple[str, int, float, float], Any] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self.relative_width = _real("relative_width", self.relative_width)
        if not self.relative_width > 0.0:  # NaN too
            raise ValueError(f"relative_width must be > 0 (math.inf for any width); got {self.relative_width!r}")
        if self.value_discretization is not None:
            self.value_discretization = _check_step(self.value_discretization)
        self.eta_fraction = check_probability_open("eta_fraction", self.eta_fraction)
        if not isinstance(self.closed_form, bool | np.bool_):
            raise ValueError(f"closed_form must be True or False; got {self.closed_form!r}")
        self.closed_form = bool(self.closed_form)

    def compose(self, mechanism: HasPrivacyLoss, count: int = 1) -> PldAccountant:
        """Add ``count`` runs of ``mechanism``; returns the accountant (calls chain).

        Parameters
        ----------
        mechanism : object
            Anything with ``privacy_losses()`` (a :mod:`dpcore.mechanisms` object); its own limits
            apply when a query builds the losses.
        count : int
            An integer in [1, 2**63 - 1] (default 1).

        Raises
        ------
        ValueError
            If ``count`` is not an integer in [1, 2**63 - 1] or the object has no ``privacy_losses``.
        """
        count = check_positive_int("count", count)
        if not callable(getattr(mechanism, "privacy_losses", None)):
            raise ValueError(f"mechanism must have privacy_losses() (a dpcore mechanism); got {mechanism!r}")
        self._parts.append((mechanism, count))
        self._laws = self._parts_cache = None
        self._grids.clear()
        return self

    @property
    def count(self) -> int:
        """Total number of composed mechanisms."""
        return sum(k for _, k in self._parts)

    def _directions(self) -> list[tuple[list[tuple[PrivacyLoss, int]], float]]:
        r"""Per direction: the losses to discretise and the summed mean of the Gaussian ones (composed exactly).

        A symmetric mechanism's one loss goes into every direction. Gaussian
        losses :math:`N(m_j, 2m_j)` are merged into one, :math:`N(\sum_j k_j m_j, 2\sum_j k_j m_j)`
        (independent normals), before any discretisation. Computed once per
        composition (:meth:`compose` clears it): a query discretises the same
        laws at several steps.
        """
        if self._laws is None:
            self._laws = self._build_directions()
        return self._laws

    def _build_directions(self) -> list[tuple[list[tuple[PrivacyLoss, int]], float]]:
        laws = [(m.privacy_losses(), k) for m, k in self._parts]
        n_dir = max((len(ls) for ls, _ in laws), default=1)
        out = []
        for d in range(n_dir):
            losses = [(ls[min(d, len(ls) - 1)], k) for ls, k in laws]
            if not self.closed_form:
                out.append((losses, 0.0))
                continue
            mean = sum(k * loss.gaussian_mean for loss, k in losses if loss.gaussian_mean is not None)
            out.append(([(loss, k) for loss, k in losses if loss.gaussian_mean is None], float(mean)))
        return out

    def _discretised(self) -> list[list[tuple[PrivacyLoss, int]]]:
        """Per direction, every loss that is discretised: the non-Gaussian ones and the merged Gaussian."""
        if self._parts_cache is None:
            self._parts_cache = [
                parts + [(gaussian_privacy_loss(mean), 1)] if mean > 0.0 else parts
                for parts, mean in self._directions()
            ]
        return self._parts_cache

    def _discretised_count(self) -> int:
        """The number of losses that are discretised (merged Gaussians count once): Hoeffding's K."""
        return max(sum(k for _, k in parts) for parts in self._discretised())

    def _run(self, h: float, eta_target: float, dots: bool = False) -> list[_DirectionRun]:
        """Discretise and compose every direction at step ``h``: mean-matched, and connect-the-dots if asked."""
        out = []
        for parts in self._discretised():
            total = sum(k for _, k in parts)
            tau = _part_tau(eta_target, total)  # each part's truncation
            tau_fft = _fft_tau(eta_target)
            eta_h = eta_target / 2.0
            t = h * math.sqrt(total * math.log(2.0 / eta_h) / 2.0)
            matched = [(_discretise(loss, h, tau), k) for loss, k in parts]
            profile, n = _composed_profile(matched, tau_fft, h)
            # + the floating-point allowance, as for connect-the-dots and the twin
            eta = eta_h + sum(k * d.tail for d, k in matched) + 2 * tau_fft + _FLOAT_SLACK
            run = _DirectionRun(profile, t, eta, n)
            if dots and self._has_dots():
                run.dots, run.dots_mass = _dots_direction(parts, h, eta_target)
            out.append(run)
        return out

    def _has_dots(self) -> bool:
        """Whether every composed loss knows its law under Q (needed for connect-the-dots)."""
        return all(
            loss.q_cdf is not None and loss.q_sf is not None for parts, _ in self._directions() for loss, _ in parts
        )

    def _dots_upper(self, h: float, delta: float) -> float:
        """The connect-the-dots upper bound on epsilon at step ``h`` (the largest over the directions)."""
        return max(self._dots_direction_upper(d, h, delta) for d in range(len(self._discretised())))

    def _dots_eta(self, delta: float) -> float:
        """The truncation and FFT-window mass of connect-the-dots and its twin: far below the bracket's eta."""
        return 1e-3 * self.eta_fraction * delta

    def _dots_direction_upper(self, direction: int, h: float, delta: float) -> float:
        """Connect-the-dots upper bound on epsilon at step ``h`` for one direction, capped by the largest loss."""
        profile, mass = _dots_direction(self._discretised()[direction], h, self._dots_eta(delta), self._grids)
        return min(max(_inverse(profile, delta - mass, -1e4, 1e4), 0.0), self._largest_loss())

    def _snap(self, h: float) -> float:
        """The largest step <= ``h`` that divides the atoms' common spacing, if there is one and it is >= ``h``.

        Atoms on the grid are split exactly by connect-the-dots; atoms between grid points cost an error of
        the order of the step (not its square). Without a common spacing (or one finer than ``h``), ``h``.
        """
        spacings = {loss.lattice for parts, mean in self._directions() for loss, _ in parts if loss.lattice is not None}
        if not spacings:
            return h
        g = max(spacings)
        if any(abs(x - g) > 1e-12 * g for x in spacings) or g < h:
            return h
        return g / math.ceil(g / h)

    def _resolving_step(self) -> float:
        """A cap on a refinement's first step: an eighth of the spread of the most-composed losses (or inf).

        A first step coarser than a loss's spread (:func:`_spread`) leaves it unresolved (a Poisson-subsampled
        Gaussian with a small rate has almost all its mass within a few ``q``): its error does not yet fall
        like the square of the step, and the refinement's first jump misses its goal (DP-SGD at 10^5 steps:
        two extra compositions, twice the time). Only the losses composed the most times count (their errors
        add up ``count`` times; a loss composed once and of tiny spread, such as a Gaussian of huge noise,
        would otherwise force a fine grid on everything), and the cap never asks for more than 2^16 points
        across any loss's 1e-12 truncation range.
        """
        parts = [(loss, k) for ps in self._discretised() for loss, k in ps]
        most = max((k for _, k in parts), default=0)
        positive = [x for x in (_spread(loss) for loss, k in parts if k == most) if x > 0.0]
        if not positive:
            return math.inf
        widest = max(hi - lo for lo, hi in (_truncation(loss, 1e-12) for loss, _ in parts))
        return max(min(positive) / 8.0, widest / 2**16)

    def _largest_loss(self) -> float:
        r"""The largest value the composed loss can take (every part at its supremum), over the directions.

        :math:`\delta(\varepsilon) = 0` for every epsilon at or above it, so no epsilon bound needs to exceed
        it: the grid may put a loss up to one step above its true supremum, and this keeps a pure-DP
        composition's answer at or below its basic-composition value.
        """
        return max(sum(k * loss.upper for loss, k in parts) for parts in self._discretised())

    def _dots_epsilon(self, delta: float, estimate: float) -> tuple[float, float]:
        """Connect-the-dots upper bound, refined: (epsilon, step).

        Every value is a certified upper bound for its direction, so the
        answer is the largest over the directions of each direction's smallest
        value, whatever step each was computed at. Its error falls like the
        square of the step, which the refinement uses: from the values at two
        steps :math:`h_c > h_f`, :math:`|U(h_c) - U(h_f)|/((h_c/h_f)^2 - 1)`
        estimates the error of :math:`U(h_f)`; the direction that decides the
        answer is refined (the step shrinks by 2 to 16 at a time, aiming at
        the goal) until that estimate is at most ``relative_width / 100`` of the
        answer. A direction whose bound lies below the deciding one is left at
        its coarse step: refining it could only lower a value that does not
        count. The estimate is a heuristic for tightness, not a certificate:
        :meth:`epsilon_bracket` certifies it. The first step is
        ``0.01 sqrt(relative_width * estimate)`` (``estimate`` an upper estimate
        of epsilon), at most an eighth of the losses' spread
        (:meth:`_resolving_step`), compared with twice that. The returned step
        is the finest step of the deciding direction.
        """
        if self.value_discretization is not None:
            return self._dots_upper(self.value_discretization, delta), self.value_discretization
        if not math.isfinite(self.relative_width):
            return self._dots_upper(1e-2, delta), 1e-2
        tol = self.relative_width / 100.0
        h = 0.01 * math.sqrt(self.relative_width * max(estimate, EPSILON_FLOOR))  # error ~ h^2: step ~ sqrt(accuracy)
        h = self._snap(min(h, self._resolving_step()))
        coarse_h = self._snap(2.0 * h)
        if coarse_h < 1.2 * h:  # no coarser step divides the atoms' spacing: compare with an unaligned one
            coarse_h = 2.0 * h
        first_h = h
        # per direction: [(step, value), ...] from coarse to fine
        runs = [[(coarse_h, self._dots_direction_upper(d, coarse_h, delta))] for d in range(len(self._discretised()))]
        while True:  # each pass adds a value to one direction's run, at most 13 a direction
            best = [min(v for _, v in r) for r in runs]
            d = int(np.argmax(best))
            answer, scale = best[d], max(best[d], EPSILON_FLOOR)
            if len(runs[d]) >= 2:
                (coarse_h, coarse), (h, fine) = runs[d][-2:]
                error = abs(coarse - fine) / ((coarse_h / h) ** 2 - 1.0)
                if error <= tol * scale:
                    return answer, h
                h = self._snap(min(h / 2.0, max(h / 16.0, 0.8 * h * math.sqrt(tol * scale / error))))
            else:
                h = first_h
            if len(runs[d]) > 12:
                break
            runs[d].append((h, self._dots_direction_upper(d, h, delta)))
        raise ValueError(
            f"the connect-the-dots bound did not settle to relative width {self.relative_width:g}; "
            "ask for a larger relative_width"
        )

    def _twin_at(self, h: float, delta: float, with_upper: bool) -> tuple[float, float, int] | None:
        """(lower, upper, FFT length) from the optimistic twin and connect-the-dots at step ``h``; ``None`` if a
        twin could not be built. Over the directions the larger of each end counts (the true epsilon is the
        larger of the directions'). Without ``with_upper`` the upper end is not computed (``inf``)."""
        eta = self._dots_eta(delta)
        lowers, uppers, n = [], [math.inf], 0
        for parts in self._discretised():
            twin = _optimistic_direction(parts, h, eta, self._grids)
            if twin is None:
                return None
            below, slack, n_twin = twin
            root = _inverse(below, delta + slack, -1e4, 1e4)
            lowers.append(_below_root(root))
            if with_upper:
                profile, mass = _dots_direction(parts, h, eta, self._grids)
                uppers.append(_inverse(profile, delta - mass, -1e4, 1e4))
            n = max(n, n_twin)
        cap = self._largest_loss()
        upper = max(uppers[1:]) if with_upper else math.inf
        return min(max(max(lowers), 0.0), cap), min(max(upper, 0.0), cap), n

    def _twin_bracket(self, delta: float, upper: float, upper_step: float) -> PldBracket | None:
        """The bracket from the optimistic twin and connect-the-dots, refined to ``relative_width``.

        ``upper`` is the refined connect-the-dots bound (:meth:`_dots_epsilon`,
        at ``upper_step``); the lower end comes from the twin. Its error falls
        like the square of the step, so the step shrinks by
        ``0.8 sqrt(goal / width)`` (between 1.5 and 16 at a time) until the width
        is met; the best end found at any step is kept (each is certified). The
        first step is ``0.03 sqrt(relative_width * upper)``, at most
        :meth:`_resolving_step`. ``None`` if a twin cannot be built (then the mean-matched bracket is
        used) or if a fixed ``value_discretization`` is too coarse.
        """
        fixed = self.value_discretization
        if fixed is not None:
            h = fixed
        else:
            h = self._snap(min(0.03 * math.sqrt(self.relative_width * max(upper, 1.0)), self._resolving_step()))
        lower = 0.0
        for _ in range(1 if fixed is not None else 10):
            found = self._twin_at(h, delta, with_upper=fixed is not None)
            if found is None:
                return None
            lower, upper = max(lower, found[0]), min(upper, found[1])
            width, goal = upper - lower, self.relative_width * max(lower, EPSILON_FLOOR)
            if width <= goal or upper == 0.0:
                dirs, eta = len(self._discretised()), self._dots_eta(delta)
                return PldBracket(lower, upper, h, 0.0, eta, found[2], dirs, method="pld", connect_dots_step=upper_step)
            h = self._snap(h * max(1.0 / 16.0, min(1.0 / 1.5, 0.8 * math.sqrt(goal / width))))
        return None

    def _bracket_at(
        self, h: float, delta: float, dots_upper: float = math.inf, dots_step: float = 0.0, with_dots: bool = False
    ) -> PldBracket:
        if with_dots:
            snapped = self._snap(h)
            here = self._dots_upper(snapped, delta)
            if here < dots_upper:
                dots_upper, dots_step = here, snapped
        runs = self._run(h, self.eta_fraction * delta)
        eta = max(r.eta for r in runs)
        if eta >= delta:
            raise ValueError(f"delta {delta:g} is too small for this accountant's failure mass eta = {eta:g}")
        span = 1e4
        cap = self._largest_loss()  # delta(eps) = 0 beyond it: a hard bound on epsilon
        upper = min(max(max(_inverse(r.profile, delta - r.eta, -span, span) + r.t for r in runs), 0.0), cap)
        lower = min(max(max(_inverse(r.profile, delta + r.eta, -span, span) - r.t for r in runs), 0.0), cap)
        t, n = max(r.t for r in runs), max(r.fft_length for r in runs)
        return PldBracket(lower, min(upper, dots_upper), h, t, eta, n, len(runs), connect_dots_step=dots_step)

    def _exact(self, delta: float, check_width: bool = True) -> PldBracket | None:
        """The closed-form answer where there is one (``closed_form=True``), else ``None``.

        Only Gaussian mechanisms: their composition is one Gaussian
        (``method="exact-gaussian"``). One release of one dpcore mechanism:
        its own exact profile (``method="exact"``). Only Laplace mechanisms of
        one pure epsilon, within :data:`LAPLACE_EXACT_MAX_WORK`: the
        exact composition (``method="exact-laplace"``, its own rounding bracket).
        In the first two cases ``upper`` is
        the mechanism's ``epsilon(delta)`` (rounded so that the profile there is
        at most ``delta``) and ``lower`` the nearest point below where the
        profile exceeds ``delta``. In the third, a bracket wider than ``relative_width`` (where the profile is
        so flat, ``delta`` near 1, that the sum's rounding moves epsilon by more) is a ``ValueError`` when
        ``check_width``: a grid's allowance is larger, so falling back could not do better.
        """
        if not self.closed_form:
            return None
        directions = self._directions()
        if not any(parts for parts, _ in directions):
            # N(m, 2m) is the loss of a Gaussian mechanism with sensitivity/sigma = sqrt(2m)
            gauss = GaussianMechanism(1.0, math.sqrt(2.0 * max(m for _, m in directions)))
            return _exact_bracket(gauss, delta, len(directions), "exact-gaussian")
        if len(self._parts) == 1 and self._parts[0][1] == 1 and isinstance(self._parts[0][0], Mechanism):
            return _exact_bracket(self._parts[0][0], delta, len(directions), "exact")
        laplace = self._laplace_only()
        if laplace is not None:
            lower, upper = laplace_composition_epsilon(delta, *laplace)
            if check_width and upper - lower > self.relative_width * max(lower, EPSILON_FLOOR):
                # the exact sum's rounding (a few count * 1e-16 absolute in delta) is far below the
                # grid's allowance (1e-13), so no grid bracket can be narrower: say so, do not widen
                raise ValueError(
                    f"delta {delta!r}: the exact Laplace composition's rounding leaves the epsilon bracket "
                    f"[{lower:g}, {upper:g}], wider than relative_width {self.relative_width:g} (the profile is "
                    "too flat here for its absolute error; a grid's is larger); pass relative_width=math.inf "
                    "to accept it"
                )
            return PldBracket(lower, upper, 0.0, 0.0, 0.0, 0, len(directions), method="exact-laplace")
        return None

    def _laplace_only(self) -> tuple[float, int] | None:
        """``(epsilon0, count)`` if, with ``closed_form``, only Laplace mechanisms of one pure epsilon were
        composed, within :func:`dpcore.laplace_composition_epsilon`'s range and :data:`LAPLACE_EXACT_MAX_WORK`."""
        if not self.closed_form or not all(type(m) is LaplaceMechanism for m, _ in self._parts):
            return None
        e0s = {float(m.pure_epsilon) for m, _ in self._parts if isinstance(m, LaplaceMechanism)}
        if len(e0s) != 1:
            return None
        try:  # the exact composition's own range (count, epsilon0, the tilt's size)
            e0, count = laplace_composition._check(e0s.pop(), sum(k for _, k in self._parts))
        except ValueError:
            return None
        if count * laplace_composition._uniform_parts(e0, count)[0] ** 2 > LAPLACE_EXACT_MAX_WORK:
            return None
        return e0, count

    def epsilon_bracket_details(self, delta: float) -> PldBracket:
        """The epsilon bracket at ``delta`` with how it was obtained (grid step, Hoeffding t, eta, FFT length).

        A closed form where there is one; else the optimistic twin's lower end
        and connect-the-dots' upper end (``hoeffding_t = 0``); else the
        mean-matched bracket (module docstring).

        Parameters
        ----------
        delta : float
            In [:data:`MIN_DELTA`, 1), i.e. [1e-10, 1).

        Raises
        ------
        ValueError
            If ``delta`` is not in [:data:`MIN_DELTA`, 1), nothing was composed, or the request exceeds
            :data:`MAX_FFT_LENGTH`.
        RuntimeError
            If two certified ends cross (a fault, never expected).
        """
        br = self._bracket(self._check_delta(delta))
        _consistent(br.lower, br.upper)
        return br

    def _bracket(self, delta: float) -> PldBracket:
        """The bracket of :meth:`epsilon_bracket_details`, before its consistency check."""
        exact = self._exact(delta)
        if exact is not None:
            return exact
        estimate = self._rdp_estimate(delta)
        dots, dots_step = self._dots_epsilon(delta, estimate) if self._has_dots() else (math.inf, 0.0)
        if self._has_dots():
            twin = self._twin_bracket(delta, dots, dots_step)
            if twin is not None:
                return twin
        if self.value_discretization is not None:
            br = self._bracket_at(self.value_discretization, delta, dots, dots_step)
            if br.upper - br.lower > self.relative_width * max(br.lower, EPSILON_FLOOR):
                raise ValueError(
                    f"value_discretization {self.value_discretization:g} is too coarse for relative_width "
                    f"{self.relative_width:g}: the bracket is [{br.lower:g}, {br.upper:g}] (choose a smaller step, "
                    "leave it to the accountant, or pass relative_width=math.inf)"
                )
            return br
        # With the connect-the-dots upper end (close to the truth) the lower end may use ~all of the width.
        share = 0.9 if math.isfinite(dots) else 0.4
        h = self._initial_step(delta, min(estimate, dots), share)
        for attempt in range(8):
            # after a first miss, connect-the-dots is recomputed at the bracket's (finer) step too
            br = self._bracket_at(h, delta, dots, dots_step, with_dots=attempt > 0 and math.isfinite(dots))
            width, goal = br.upper - br.lower, self.relative_width * max(br.lower, EPSILON_FLOOR)
            if width <= goal or br.upper == 0.0:
                return br
            h /= max(1.5, 1.2 * width / max(goal, 1e-12 * width))
        raise ValueError(
            f"the bracket [{br.lower:g}, {br.upper:g}] did not reach relative width {self.relative_width:g}; "
            "ask for a larger relative_width"
        )

    def _check_delta(self, delta: float) -> float:
        delta = check_probability_open("delta", delta)
        if delta < MIN_DELTA:
            raise ValueError(f"delta must be >= {MIN_DELTA:g} for the PLD accountant (FFT rounding); got {delta:g}")
        if not self._parts:
            raise ValueError("nothing composed yet: call compose(mechanism, count) first")
        return delta

    def _rdp_estimate(self, delta: float) -> float:
        """An upper estimate of epsilon from RDP on 15 integer orders 2 .. 256 (cheap); 1 without RDP curves."""
        orders = np.array([2.0, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 64, 128, 256])
        curve = np.zeros_like(orders)
        for m, k in self._parts:
            rdp = getattr(m, "rdp", None)
            curve = curve + (k * np.asarray(rdp(orders), dtype=float) if callable(rdp) else np.inf)
        return float(rdp_to_dp(orders, curve, delta)[0]) if np.all(np.isfinite(curve)) else 1.0

    def _initial_step(self, delta: float, estimate: float, share: float) -> float:
        """A first grid step: Hoeffding's t at ``share`` of the target width around ``estimate``."""
        t_target = share * self.relative_width * max(estimate, EPSILON_FLOOR)
        return t_target / math.sqrt(self._discretised_count() * math.log(4.0 / (self.eta_fraction * delta)) / 2.0)

    def epsilon_bracket(self, delta: float) -> tuple[float, float]:
        """``(lower, upper)``: the true epsilon at ``delta`` lies in it (see the module docstring).

        Parameters
        ----------
        delta : float
            In [:data:`MIN_DELTA`, 1), i.e. [1e-10, 1).

        Raises
        ------
        ValueError
            As :meth:`epsilon_bracket_details`.
        """
        br = self.epsilon_bracket_details(delta)
        return br.lower, br.upper

    def epsilon(self, delta: float) -> float:
        """A certified upper bound on epsilon at ``delta``, without the lower end (faster than the bracket).

        Only Gaussian mechanisms, one release, or Laplace releases (within :data:`LAPLACE_EXACT_MAX_WORK`) of
        one pure epsilon: the exact answer (see :meth:`_exact`). Otherwise, where every
        composed loss has its law under Q and no fixed ``value_discretization``
        was given, the refined connect-the-dots bound (see :meth:`_dots_epsilon`);
        else the upper end of :meth:`epsilon_bracket`. The upper end of
        :meth:`epsilon_bracket` is never larger.

        Parameters
        ----------
        delta : float
            In [:data:`MIN_DELTA`, 1), i.e. [1e-10, 1).

        Raises
        ------
        ValueError
            As :meth:`epsilon_bracket_details`.
        """
        delta = self._check_delta(delta)
        exact = self._exact(delta, check_width=False)  # only the upper end is asked for: any width will do
        if exact is not None:
            return exact.upper
        if self._has_dots() and self.value_discretization is None:
            return self._dots_epsilon(delta, self._rdp_estimate(delta))[0]
        return self.epsilon_bracket(delta)[1]  # a fixed step is checked against relative_width there

    def delta_bracket(self, epsilon: float, value_discretization: float = 1e-4) -> tuple[float, float]:
        """``(lower, upper)`` around the true delta at ``epsilon`` >= 0, at the given grid step.

        The upper end is the smaller of the mean-matched one and connect-the-dots', the lower end the larger of
        the mean-matched one and the optimistic twin's (where it can be built); over the directions, the larger.
        Laplace releases of one pure epsilon within :data:`LAPLACE_EXACT_MAX_WORK` (``closed_form=True``): the
        exact composition's bracket (:func:`dpcore.laplace_composition_delta`), with no grid.

        Parameters
        ----------
        epsilon : float
            Finite and >= 0.
        value_discretization : float
            The grid step :math:`h`, in [:data:`MIN_VALUE_DISCRETIZATION`, :data:`MAX_VALUE_DISCRETIZATION`]
            (2.2e-308 to 709.78) and coarse enough that every composed loss has at most
            :data:`MAX_FFT_LENGTH` cells (default 1e-4). The bracket's ends carry an absolute allowance of
            about 1e-13 (FFT rounding), so a delta below that is bracketed as ``(0, ~1e-13)``.

        Raises
        ------
        ValueError
            If ``epsilon`` is negative or not finite, ``value_discretization`` is outside
            [:data:`MIN_VALUE_DISCRETIZATION`, :data:`MAX_VALUE_DISCRETIZATION`] (or too fine for a composed
            loss: more than :data:`MAX_FFT_LENGTH` cells), or nothing was composed.
        """
        eps = _real("epsilon", epsilon)
        if not (math.isfinite(eps) and eps >= 0.0):
            raise ValueError(f"epsilon must be finite and >= 0; got {epsilon!r}")
        if not self._parts:
            raise ValueError("nothing composed yet: call compose(mechanism, count) first")
        h = _check_step(value_discretization)
        laplace = self._laplace_only()
        if laplace is not None:
            return laplace_composition_delta(eps, *laplace)
        runs = self._run(h, 1e-15, dots=True)
        uppers = []
        for r in runs:
            upper = r.profile(eps - r.t) + r.eta
            if r.dots is not None:
                upper = min(upper, r.dots(eps) + r.dots_mass)
            uppers.append(upper)
        upper = min(1.0, max(uppers))
        lowers = [r.profile(eps + r.t) - r.eta for r in runs]
        for parts in self._discretised():  # the optimistic twin's profile, where it can be built
            twin = _optimistic_direction(parts, h, 1e-15)
            if twin is not None:
                lowers.append(twin[0](eps) - twin[1])
        lower = max(0.0, max(lowers))
        return _consistent(lower, upper)
