r"""Privacy-loss distributions: tight composition with a certified bracket.

The privacy loss of a mechanism between neighbours is the random variable
:math:`L = \log\big(p(X)/q(X)\big)`, :math:`X \sim P = M(D)`, :math:`q` the
density of :math:`Q = M(D')`. Its law determines the whole privacy profile,

.. math:: \delta(\varepsilon) = E\big[(1 - e^{\varepsilon - L})_+\big] + P(L = \infty),

and the privacy loss of a composition is the *sum* of the losses of its
parts, independent for independent noise: composition is convolution of
privacy-loss distributions (Dwork & Rothblum 2016; Koskela, Jälkö & Honkela
2020; Gopi, Lee & Wutschitz 2021).

:class:`PrivacyLoss` describes one mechanism's loss exactly (its distribution
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

Composition is a power in the frequency domain, and a k-fold power
multiplies the relative rounding error of each frequency by k: an FFT's
(about 1e-16 times the part's 2-norm) became, at DP-SGD's 10^5 steps, an
error of 4e-12 on delta, forty times that allowance (measured against an
80-bit reference spectrum; versions of dpcore before this one had it). Many
compositions leave few frequencies whose modulus is above 1e-30, so these are
computed apart (:func:`_compose`): each part's modulus is bounded at every
frequency (its core's by a short FFT, its rest's by its mass and its total
variation, so that no transform of the window's length is needed), the
remaining ones get :math:`\log z_j` from a direct sum over the part's *core*
(its heavy cells, and heavy cells far from them such as the Laplace loss's
second atom, with the angles reduced in integers and no cancellation in
:math:`z_j - 1`) and a transform of the light rest (where the rest is heavy,
the whole part directly), and the
profile is summed from them in closed form, two geometric series a frequency
(:func:`_spectral_profile`), with no inverse FFT. The error on delta is then
a few times 1e-15 at 10^5 steps (``tests/test_pld_spectral.py``), and a query costs
a few short transforms instead of several of the window's length. Where many
frequencies remain (few compositions, or cores too large to sum directly),
the parts' FFTs are raised to their counts as before, with the error above:
small where the count is small, and not bounded in general.

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

import functools
import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import laplace_composition, subsampled_gaussian
from ._lazy import lazy_module
from ._validation import (
    as_real_array,
    check_bool,
    check_positive_finite,
    check_positive_int,
    check_probability_open,
    check_real,
)
from .laplace_composition import laplace_composition_delta, laplace_composition_epsilon

special = lazy_module("scipy.special")
integrate = lazy_module("scipy.integrate")
sp_fft = lazy_module("scipy.fft")

__all__ = [
    "PrivacyLoss",
    "PldAccountant",
    "PldBracket",
    "HasPrivacyLoss",
    "gaussian_privacy_loss",
    "laplace_privacy_loss_law",
    "atomic_privacy_loss",
    "subsampled_gaussian_privacy_losses",
]

CDF = Callable[[NDArray[np.float64]], NDArray[np.float64]]
_Profile = Callable[[float], float]

#: Largest FFT length the accountant will use (2^26 points: about 1.6 GB of work arrays); beyond it, an error.
MAX_FFT_LENGTH = 1 << 26

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


@dataclass(frozen=True)
class PrivacyLoss:
    r"""The law of one mechanism's privacy loss :math:`L` under :math:`P = M(D)`, described exactly.

    Attributes
    ----------
    cdf, sf : callable
        :math:`P(L \le \ell)` and :math:`P(\ell < L < \infty)`, vectorised
        (``sf`` is computed directly for precision in the upper tail).
    partial_mean : callable
        ``partial_mean(a, b)`` is :math:`E[L;\, a < L \le b]` for finite ``a < b``.
    lower, upper : float
        The support of the finite part lies in ``[lower, upper]`` (either may be infinite).
    infinity_mass : float
        :math:`P(L = +\infty)`, the part of :math:`P` where :math:`Q` has no mass.
    name : str
        What it is the loss of.
    q_cdf, q_sf : callable, optional
        The law of the same :math:`L` under :math:`Q`: :math:`Q(L \le \ell)` and
        :math:`Q(\ell < L < \infty)`, vectorised. With them the accountant also
        computes the pessimistic "connect-the-dots" discretisation (a certified
        upper bound whose error is second order in the grid step).
    gaussian_mean : float, optional
        Set when :math:`L \sim N(m, 2m)` with this :math:`m` (a Gaussian
        mechanism): such losses compose in closed form (their sum is
        :math:`N(\sum m_j, 2\sum m_j)`), which the accountant uses.
    lattice : float, optional
        Every atom of the law is an integer multiple of it (``None``: no
        atoms, or none known). Connect-the-dots is exact at atoms on its grid,
        so the accountant chooses steps that divide it.
    profile : callable, optional
        ``profile(eps)`` is :math:`\delta(\varepsilon)` of this loss alone in closed form (used by
        :meth:`delta` instead of quadrature; the subsampled Gaussian's, :mod:`dpcore.subsampled_gaussian`).
    laws : callable, optional
        ``laws(l)`` returns ``(cdf(l), sf(l), q_cdf(l), q_sf(l))`` at once, equal
        to the four functions' values, computing what they share once (a
        speed-up of the grid's construction; ``None``: called one by one).
    """

    cdf: CDF
    sf: CDF
    partial_mean: Callable[[float, float], float]
    lower: float
    upper: float
    infinity_mass: float = 0.0
    name: str = ""
    q_cdf: CDF | None = None
    q_sf: CDF | None = None
    gaussian_mean: float | None = None
    lattice: float | None = None
    laws: Callable[[NDArray[np.float64]], tuple[NDArray[np.float64], ...]] | None = None
    profile: Callable[[float], float] | None = None

    def delta(self, epsilon: float) -> float:
        r"""The profile of this loss alone: ``profile`` where the law has one in closed form, else by quadrature.

        :math:`\delta(\varepsilon) = \int_\varepsilon^\infty e^{\varepsilon-\ell} P(L>\ell)\,d\ell + P(L=\infty)`

        (integration by parts of :math:`E[(1-e^{\varepsilon-L})_+]`). By
        adaptive quadrature, broken where :math:`P(L>\ell)` falls (so that a
        narrow law, the Gaussian loss of a tiny :math:`\mu`, is not missed);
        where :math:`\ell` is below the support, or below the point under
        which the law has mass < 1e-18, the integrand is
        :math:`e^{\varepsilon-\ell}` and is integrated exactly; above the
        point where :math:`P(L>\ell)` is 0 nothing is left but :math:`P(L=\infty)`.

        Parameters
        ----------
        epsilon : float
            Any finite real number (negative ones too); NaN and the infinities are refused.

        Returns
        -------
        float
            :math:`\delta(\varepsilon)` in [0, 1].

        Raises
        ------
        ValueError
            If ``epsilon`` is not a finite real number, or the law's mass lies where doubles are too coarse
            for the integrand's unit scale (beyond about 1e15 in magnitude).
        """
        eps = check_real("epsilon", epsilon)
        if self.profile is not None:
            return float(self.profile(eps))
        if eps >= self.upper or self._sf(eps) == 0.0:  # no finite loss above epsilon
            return self.infinity_mass
        start = max(eps, self.lower, self._negligible_below())
        stop = self.upper if math.isfinite(self.upper) else start + 200.0  # e^-200: nothing left
        if not (math.isfinite(self.upper) or stop - start >= 100.0):
            raise ValueError(
                f"epsilon = {eps!r}: the loss {self.name!r} has its mass near {start:g}, where doubles are too "
                "coarse to integrate its profile (|loss| must be below about 1e15)"
            )
        s0 = self._sf(start)
        points = sorted({self._crossing(level * s0, start, stop) for level in (1 - 1e-6, 0.5, 1e-6, 1e-12)})
        val, _ = integrate.quad(
            lambda l: math.exp(eps - l) * self._sf(l),
            start,
            stop,
            points=[x for x in points if start < x < stop] or None,
            limit=400,
            epsrel=1e-12,
        )
        below = -math.expm1(eps - start) if start > eps else 0.0
        total = float(val) + below + self.infinity_mass
        if not -1e-9 <= total <= 1.0 + 1e-9:  # the quadrature failed: never a probability outside [0, 1]
            raise RuntimeError(f"the profile of {self.name!r} at epsilon = {eps!r} came out as {total!r}")
        return min(max(total, 0.0), 1.0)  # rounding only (checked above)

    def _sf(self, x: float) -> float:
        with np.errstate(over="ignore"):  # a standardised point beyond the double range: the tail is 0 or 1
            return float(self.sf(np.array([x]))[0])

    def _negligible_below(self) -> float:
        """A point below which the law has mass < 1e-18 (-inf if there is none above -1e300)."""
        x = -1.0
        while float(self.cdf(np.array([x]))[0]) > 1e-18:  # the laws' cdf: x is at most 1e300 here
            if x < -1e300:
                return -math.inf
            x *= 4.0
        return x

    def _crossing(self, level: float, lo: float, hi: float) -> float:
        """A point in ``[lo, hi]`` where ``sf`` falls to ``level`` (by bisection; ``sf`` is non-increasing)."""
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            lo, hi = (mid, hi) if self._sf(mid) > level else (lo, mid)
        return hi


class HasPrivacyLoss(Protocol):
    """Anything with ``privacy_losses()``: every mechanism of :mod:`dpcore.mechanisms` that the PLD accountant takes."""

    def privacy_losses(self) -> tuple[PrivacyLoss, ...]: ...


# --------------------------------------------------------------------------- the laws


def gaussian_privacy_loss(mu: float) -> PrivacyLoss:
    r"""The Gaussian mechanism's loss: :math:`L \sim N(\mu, 2\mu)`, :math:`\mu = \Delta^2/(2\sigma^2)`.

    For :math:`X \sim N(0,\sigma^2)` against :math:`N(\Delta,\sigma^2)`,
    :math:`L = (\Delta^2 - 2\Delta X)/(2\sigma^2)`. Partial means from
    :math:`E[L; a<L\le b] = \mu\,(\Phi(\beta)-\Phi(\alpha)) - \sqrt{2\mu}\,(\varphi(\beta)-\varphi(\alpha))`.

    Raises
    ------
    ValueError
        If ``mu`` is not finite and > 0.
    """
    mu = check_positive_finite("mu", mu)
    sd = math.sqrt(2.0 * mu)

    def cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(special.ndtr((np.asarray(x) - mu) / sd))

    def sf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(special.ndtr((mu - np.asarray(x)) / sd))

    def partial_mean(a: float, b: float) -> float:
        za, zb = (a - mu) / sd, (b - mu) / sd
        phi = (math.exp(-zb * zb / 2) - math.exp(-za * za / 2)) / math.sqrt(2 * math.pi)
        return mu * float(special.ndtr(zb) - special.ndtr(za)) - sd * phi

    def q_cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:  # under Q, L ~ N(-mu, 2 mu)
        return np.asarray(special.ndtr((np.asarray(x) + mu) / sd))

    def q_sf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(special.ndtr((-mu - np.asarray(x)) / sd))

    return PrivacyLoss(
        cdf, sf, partial_mean, -math.inf, math.inf, 0.0, f"Gaussian, mu = {mu:g}", q_cdf, q_sf, gaussian_mean=mu
    )


def laplace_privacy_loss_law(epsilon0: float) -> PrivacyLoss:
    r"""The Laplace mechanism's loss: atoms at :math:`\pm\varepsilon_0 = \pm\Delta/b` and a density between.

    For :math:`X \sim \mathrm{Lap}(0,b)` against :math:`\mathrm{Lap}(\Delta,b)`,
    :math:`L = (|X-\Delta| - |X|)/b`: :math:`P(L=\varepsilon_0) = 1/2`
    (:math:`X \le 0`), :math:`P(L=-\varepsilon_0) = e^{-\varepsilon_0}/2`
    (:math:`X \ge \Delta`), and :math:`P(L \le \ell) = e^{(\ell-\varepsilon_0)/2}/2`
    for :math:`-\varepsilon_0 \le \ell < \varepsilon_0`.

    Raises
    ------
    ValueError
        If ``epsilon0`` is not finite and > 0.
    """
    e0 = check_positive_finite("epsilon0", epsilon0)
    # differences with e0 are halved first: (x - e0) / 2 overflows for e0 near the largest float

    def cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=float)
        mid = 0.5 * np.exp(np.clip(x, -e0, e0) / 2.0 - e0 / 2.0)
        return np.where(x < -e0, 0.0, np.where(x >= e0, 1.0, mid))

    def sf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=float)
        mid = 1.0 - 0.5 * np.exp(np.clip(x, -e0, e0) / 2.0 - e0 / 2.0)
        return np.where(x < -e0, 1.0, np.where(x >= e0, 0.0, mid))

    def antiderivative(x: float) -> float:  # of l dF(l) on the continuous part: (l - 2) e^((l - e0)/2) / 2
        return (x - 2.0) * math.exp(x / 2.0 - e0 / 2.0) / 2.0

    def partial_mean(a: float, b: float) -> float:
        total = 0.0
        if a < -e0 <= b:
            total += -e0 * 0.5 * math.exp(-e0)
        if a < e0 <= b:
            total += e0 * 0.5
        lo, hi = max(a, -e0), min(b, e0)
        if lo < hi:
            total += antiderivative(hi) - antiderivative(lo)
        return total

    # under Q the law is mirrored (the mechanism is symmetric): Q(L <= l) = P(L >= -l)
    def q_cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=float)
        mid = 1.0 - 0.5 * np.exp(-(np.clip(x, -e0, e0) / 2.0 + e0 / 2.0))
        return np.where(x < -e0, 0.0, np.where(x >= e0, 1.0, mid))

    def q_sf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=float)
        mid = 0.5 * np.exp(-(np.clip(x, -e0, e0) / 2.0 + e0 / 2.0))
        return np.where(x < -e0, 1.0, np.where(x >= e0, 0.0, mid))

    return PrivacyLoss(cdf, sf, partial_mean, -e0, e0, 0.0, f"Laplace, epsilon0 = {e0:g}", q_cdf, q_sf, lattice=e0)


def _step_functions(v: NDArray[np.float64], m: NDArray[np.float64]) -> tuple[CDF, CDF]:
    """``(cdf, sf)`` of masses ``m`` at sorted atoms ``v``: ``sum m[v <= x]`` and ``sum m[v > x]``."""
    cum = np.cumsum(m)
    tail = np.cumsum(m[::-1])[::-1]  # tail[i] = mass at v_i and above

    def cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        i = np.searchsorted(v, np.asarray(x, dtype=float), side="right")
        return np.where(i > 0, cum[np.maximum(i - 1, 0)], 0.0)

    def sf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        i = np.searchsorted(v, np.asarray(x, dtype=float), side="right")
        return np.where(i < v.size, tail[np.minimum(i, v.size - 1)], 0.0)

    return cdf, sf


def atomic_privacy_loss(
    values: ArrayLike, masses: ArrayLike, name: str = "", *, log_masses: bool = False
) -> PrivacyLoss:
    r"""A loss with finitely many atoms (randomised response, the discrete Laplace mechanism).

    ``masses`` are the atoms' probabilities under :math:`P`, or their logarithms with ``log_masses=True``:
    the law under :math:`Q` has the masses :math:`m e^{-v}`, computed as :math:`\exp(\log m - v)`, which
    keeps the :math:`Q`-mass of an atom far below 0 whose :math:`P`-mass underflows.

    Raises
    ------
    ValueError
        If ``values`` or ``masses`` is not an array of real numbers (see
        :func:`dpcore._validation.as_real_array`), ``log_masses`` is not a
        bool (or ``numpy.bool_``), ``values`` and ``masses`` differ in length, a value is not finite,
        a mass is negative or the masses do not sum to 1 (to 1e-12), or the
        masses under :math:`Q` sum to more than 1 (to 1e-9); less is :math:`Q`'s
        mass where :math:`P` has none (a loss of :math:`-\infty`, counted by ``q_cdf``).
    """
    v = as_real_array("values", values).ravel()
    raw = as_real_array("masses", masses).ravel()
    log_masses = check_bool("log_masses", log_masses)
    with np.errstate(divide="ignore"):
        log_m = raw if log_masses else np.log(np.where(raw >= 0, raw, np.nan))
    m = np.exp(log_m)
    if v.shape != m.shape or v.size == 0:
        raise ValueError("values and masses must be non-empty and of equal length")
    valid = np.all(np.isfinite(v)) and not np.any(np.isnan(log_m) | (log_m == np.inf))
    if not valid or abs(float(m.sum()) - 1.0) > 1e-12:
        raise ValueError("values must be finite and masses non-negative, summing to 1")
    order = np.argsort(v)
    v, m, log_m = v[order], m[order], log_m[order]
    cdf, sf = _step_functions(v, m)

    def partial_mean(a: float, b: float) -> float:
        inside = (v > a) & (v <= b)
        return float(np.sum(v[inside] * m[inside]))

    with np.errstate(over="ignore"):  # Q's masses at the same atoms, m e^{-v}, in logs
        q_mass = np.exp(log_m - v)
    q_total = float(q_mass.sum())
    if not (np.all(np.isfinite(q_mass)) and q_total <= 1.0 + 1e-9):
        raise ValueError(
            f"masses * exp(-values) must sum to at most 1 (the law of the loss under Q); they sum to {q_total!r}"
        )
    q_cdf_atoms, q_sf = _step_functions(v, q_mass)
    at_minus_inf = max(0.0, 1.0 - q_total)  # Q's mass where P has none: the loss is -inf there

    def q_cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(q_cdf_atoms(x) + at_minus_inf)

    nonzero = np.abs(v[v != 0.0])
    lattice = None
    if nonzero.size:  # the atoms' common spacing, if the smallest nonzero |value| divides them all
        g = float(nonzero.min())
        ratios = v / g
        if np.all(np.abs(ratios - np.round(ratios)) <= 1e-9 * np.maximum(1.0, np.abs(ratios))):
            lattice = g
    return PrivacyLoss(cdf, sf, partial_mean, float(v[0]), float(v[-1]), 0.0, name, q_cdf, q_sf, lattice=lattice)


def subsampled_gaussian_privacy_losses(s: float, q: float) -> tuple[PrivacyLoss, PrivacyLoss]:
    r"""The two losses of the Poisson-subsampled Gaussian (noise :math:`s = \sigma/\Delta`, rate :math:`q`).

    With :math:`u(x) = (2x-1)/(2s^2)` and :math:`\ell(x) = \log(1-q+q e^{u(x)})`
    (increasing in :math:`x`):

    * *remove* (the record leaves): :math:`P = (1-q)N(0,s^2)+qN(1,s^2)`,
      :math:`Q = N(0,s^2)`, :math:`L = \ell(X)`, :math:`X \sim P`, with values
      in :math:`(\log(1-q), \infty)`;
    * *add*: :math:`P = N(0,s^2)`, :math:`Q` the mixture, :math:`L = -\ell(X)`,
      :math:`X \sim N(0,s^2)`, with values in :math:`(-\infty, -\log(1-q))`.

    Distribution functions through :math:`x(\ell) = s^2\log((e^\ell-(1-q))/q) + 1/2`;
    partial means by adaptive quadrature over :math:`x`; each direction's profile
    (:meth:`PrivacyLoss.delta`) in closed form (:mod:`dpcore.subsampled_gaussian`).

    Raises
    ------
    ValueError
        If ``s`` is not in [1e-100, 1e100], or ``q`` is not in (0, 1].
    """
    s = check_positive_finite("s", s)
    if not 1e-100 <= s <= 1e100:
        raise ValueError(f"s = sigma / sensitivity must lie in [1e-100, 1e100] (s^2 in the doubles); got {s}")
    q = check_positive_finite("q", q)
    if q > 1.0:
        raise ValueError(f"q must lie in (0, 1]; got {q}")
    log_1mq = math.log1p(-q) if q < 1.0 else -math.inf
    s2 = s * s

    def x_of(l: NDArray[np.float64]) -> NDArray[np.float64]:
        # x(l) = s^2 log((e^l - (1 - q)) / q) + 1/2, for l > log(1 - q); log(e^l - (1-q)) = l + log1p(-(1-q) e^-l).
        # At l <= log(1 - q) (outside the support, where every caller substitutes the limit 0 or 1) the exponent
        # is taken at 0, which gives x = -inf, the limit at log(1 - q), instead of e^{huge} overflowing; where
        # s^2 (l - log q) exceeds the doubles (s near 1e100, l near 1e300), x = +inf is the limit too.
        l = np.asarray(l, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            inner = l + np.log1p(-np.exp(np.minimum(log_1mq - l, 0.0))) if math.isfinite(log_1mq) else l
            return np.asarray(s2 * (inner - math.log(q)) + 0.5)

    def ell(x: float) -> float:
        u = (2.0 * x - 1.0) / (2.0 * s2)
        return float(np.logaddexp(log_1mq, math.log(q) + u)) if math.isfinite(log_1mq) else math.log(q) + u

    def mix_pdf(x: float) -> float:
        return ((1 - q) * math.exp(-x * x / (2 * s2)) + q * math.exp(-((x - 1) ** 2) / (2 * s2))) / math.sqrt(
            2 * math.pi * s2
        )

    def normal_pdf(x: float) -> float:
        return math.exp(-x * x / (2 * s2)) / math.sqrt(2 * math.pi * s2)

    def remove_cdf(l: NDArray[np.float64]) -> NDArray[np.float64]:
        l = np.asarray(l, dtype=float)
        x = x_of(l)
        val = (1 - q) * special.ndtr(x / s) + q * special.ndtr((x - 1) / s)
        return np.where(l <= log_1mq, 0.0, np.nan_to_num(val, nan=0.0))

    def remove_sf(l: NDArray[np.float64]) -> NDArray[np.float64]:
        l = np.asarray(l, dtype=float)
        x = x_of(l)
        val = (1 - q) * special.ndtr(-x / s) + q * special.ndtr((1 - x) / s)
        return np.where(l <= log_1mq, 1.0, np.nan_to_num(val, nan=1.0))

    def remove_mean(a: float, b: float) -> float:
        xa = float(x_of(np.array(a))) if a > log_1mq else -math.inf
        xb = float(x_of(np.array(b)))
        lo, hi = max(xa, -40 * s), min(xb, 1 + 40 * s)
        if not lo < hi:
            return 0.0
        val, _ = integrate.quad(lambda x: ell(x) * mix_pdf(x), lo, hi, points=[0.0, 0.5, 1.0], limit=400, epsrel=1e-13)
        return float(val)

    top = -log_1mq  # the add direction's supremum

    def add_cdf(l: NDArray[np.float64]) -> NDArray[np.float64]:
        # L = -ell(X) <= l  iff  ell(X) >= -l  iff  X >= x(-l)
        l = np.asarray(l, dtype=float)
        x = x_of(-l)
        return np.where(l >= top, 1.0, np.nan_to_num(special.ndtr(-x / s), nan=1.0))

    def add_sf(l: NDArray[np.float64]) -> NDArray[np.float64]:
        l = np.asarray(l, dtype=float)
        x = x_of(-l)
        return np.where(l >= top, 0.0, np.nan_to_num(special.ndtr(x / s), nan=0.0))

    def add_mean(a: float, b: float) -> float:
        # a < -ell(x) <= b  iff  x(-b) <= x < x(-a)
        xa = float(x_of(np.array(-b))) if -b > log_1mq else -math.inf  # b above the support: no lower limit on x
        xb = float(x_of(np.array(-a))) if -a > log_1mq else math.inf
        lo, hi = max(xa, -40 * s), min(xb, 40 * s)
        if not lo < hi:
            return 0.0
        val, _ = integrate.quad(lambda x: -ell(x) * normal_pdf(x), lo, hi, points=[0.0, 0.5], limit=400, epsrel=1e-13)
        return float(val)

    def remove_q_cdf(l: NDArray[np.float64]) -> NDArray[np.float64]:  # Q = N(0, s^2): L <= l iff X <= x(l)
        l = np.asarray(l, dtype=float)
        return np.where(l <= log_1mq, 0.0, np.nan_to_num(special.ndtr(x_of(l) / s), nan=0.0))

    def remove_q_sf(l: NDArray[np.float64]) -> NDArray[np.float64]:
        l = np.asarray(l, dtype=float)
        return np.where(l <= log_1mq, 1.0, np.nan_to_num(special.ndtr(-x_of(l) / s), nan=1.0))

    def add_q_cdf(l: NDArray[np.float64]) -> NDArray[np.float64]:  # Q the mixture: L <= l iff X >= x(-l)
        l = np.asarray(l, dtype=float)
        x = x_of(-l)
        val = (1 - q) * special.ndtr(-x / s) + q * special.ndtr((1 - x) / s)
        return np.where(l >= top, 1.0, np.nan_to_num(val, nan=1.0))

    def add_q_sf(l: NDArray[np.float64]) -> NDArray[np.float64]:
        l = np.asarray(l, dtype=float)
        x = x_of(-l)
        val = (1 - q) * special.ndtr(x / s) + q * special.ndtr((x - 1) / s)
        return np.where(l >= top, 0.0, np.nan_to_num(val, nan=0.0))

    def remove_laws(l: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:  # the four above, x(l) once
        l = np.asarray(l, dtype=float)
        x = x_of(l)
        below = l <= log_1mq
        left, right = special.ndtr(x / s), special.ndtr(-x / s)
        mix_left = (1 - q) * left + q * special.ndtr((x - 1) / s)
        mix_right = (1 - q) * right + q * special.ndtr((1 - x) / s)
        return (
            np.where(below, 0.0, np.nan_to_num(mix_left, nan=0.0)),
            np.where(below, 1.0, np.nan_to_num(mix_right, nan=1.0)),
            np.where(below, 0.0, np.nan_to_num(left, nan=0.0)),
            np.where(below, 1.0, np.nan_to_num(right, nan=1.0)),
        )

    def add_laws(l: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        l = np.asarray(l, dtype=float)
        x = x_of(-l)
        above = l >= top
        left, right = special.ndtr(-x / s), special.ndtr(x / s)
        mix_left = (1 - q) * left + q * special.ndtr((1 - x) / s)
        mix_right = (1 - q) * right + q * special.ndtr((x - 1) / s)
        return (
            np.where(above, 1.0, np.nan_to_num(left, nan=1.0)),
            np.where(above, 0.0, np.nan_to_num(right, nan=0.0)),
            np.where(above, 1.0, np.nan_to_num(mix_left, nan=1.0)),
            np.where(above, 0.0, np.nan_to_num(mix_right, nan=0.0)),
        )

    remove = PrivacyLoss(
        remove_cdf,
        remove_sf,
        remove_mean,
        log_1mq,
        math.inf,
        0.0,
        "subsampled Gaussian (remove)",
        remove_q_cdf,
        remove_q_sf,
        laws=remove_laws,
        profile=functools.partial(subsampled_gaussian.direction_delta, s=s, q=q, direction="remove"),
    )
    add = PrivacyLoss(
        add_cdf,
        add_sf,
        add_mean,
        -math.inf,
        top,
        0.0,
        "subsampled Gaussian (add)",
        add_q_cdf,
        add_q_sf,
        laws=add_laws,
        profile=functools.partial(subsampled_gaussian.direction_delta, s=s, q=q, direction="add"),
    )
    return remove, add


# --------------------------------------------------------------------------- discretisation and composition


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
    :math:`P_j\,(e^h - e^{e_{j+1}}Q_j/P_j)/(e^h-1)`; rounding can take it a few
    ulps outside :math:`[0, P_j]`, where it is put back (floating point is not
    certified, see the module docstring).
    """
    lat = _lattice(loss, h, tau)
    i0, points, n = lat.start, lat.e, lat.e.size
    p_cell, q_cell = _masses(lat.cdf, lat.sf), _masses(lat.q_cdf, lat.q_sf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.exp(points[1:] + np.log(q_cell) - np.log(p_cell))  # e^{e_{j+1}} Q_j / P_j, in [1, e^h]
        right = p_cell * (math.exp(h) - ratio) / math.expm1(h)
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


def _optimistic_direction(
    parts: Sequence[tuple[PrivacyLoss, int]], h: float, eta: float
) -> tuple[_Profile, float, int] | None:
    """Compose one direction's optimistic twins at step ``h``: (profile, slack, FFT length), ``None`` if one fails.

    ``profile(eps) - slack`` is a lower bound on the composition's profile: ``slack`` is twice the FFT
    window's miss probability (mass aliased into the window can only raise the computed profile), the
    parts' rounding (:func:`_optimistic_dots`) and the floating-point allowance.
    """
    total = sum(k for _, k in parts)
    tau, tau_fft = eta / (4.0 * total), eta / 8.0
    twins = []
    for loss, k in parts:
        twin = _optimistic_dots(loss, h, tau)
        if twin is None:
            return None
        twins.append((twin, k))
    profile, n = _composed_profile([(d, k) for (d, _), k in twins], tau_fft, h)
    rounding = sum(k * r for (_, r), k in twins)
    return profile, 2.0 * tau_fft + rounding + _FLOAT_SLACK, n


def _dots_direction(parts: Sequence[tuple[PrivacyLoss, int]], h: float, eta: float) -> tuple[_Profile, float]:
    r"""Compose one direction's connect-the-dots laws at step ``h``: (profile of the finite part, excess mass).

    The upper bound on the composition's profile is ``profile(eps) + mass``:
    ``mass`` is the composed mass at :math:`+\infty` (each part's truncation
    tail, at most ``eta / (4 K)``, plus any infinite loss) and twice the FFT
    window's miss probability (``eta / 8``).
    """
    total = sum(k for _, k in parts)
    tau, tau_fft = eta / (4.0 * total), eta / 8.0
    dots = [(_connect_dots(loss, h, tau), k) for loss, k in parts]
    profile, _ = _composed_profile([(d, k) for (d, _), k in dots], tau_fft, h)
    log_finite = sum(k * math.log1p(-infinite) for (_, infinite), k in dots)
    return profile, -math.expm1(log_finite) + 2.0 * tau_fft + _FLOAT_SLACK


#: Added to the connect-the-dots bound on delta for the floating-point rounding of the FFT and the sums (1e-13
#: absolute, see the module docstring): the bound holds exactly at the lattice points, where rounding alone
#: could otherwise put it a few ulps below the truth.
_FLOAT_SLACK = 1e-13

_BLOCK = 16  # lattice cells per block in the first, cheap Chernoff bounds of the FFT window


def _block_log_mgf(pmf: NDArray[np.float64], lam: NDArray[np.float64], size: int = _BLOCK) -> NDArray[np.float64]:
    """An upper bound on ``log E[exp(lam * I)]`` of the lattice index ``I ~ pmf`` (index 0 first), for each ``lam``.

    The mass of each block of ``size`` cells is put at the block's end that
    makes ``exp(lam * i)`` largest (its last cell for ``lam > 0``, its first
    for ``lam < 0``): a bound, at ``1/size`` of the cost, that moves the
    window of a k-fold sum by at most ``size * k`` cells; ``size = 1`` is exact.
    """
    n_blocks = -(-pmf.size // size)
    blocks = np.zeros(n_blocks * size)
    blocks[: pmf.size] = pmf
    mass = blocks.reshape(n_blocks, size).sum(axis=1)
    keep = mass > 0
    with np.errstate(divide="ignore"):
        logp = np.log(mass[keep])
    first = size * np.arange(n_blocks, dtype=float)[keep]
    where = np.where(lam[:, None] > 0, first[None, :] + (size - 1), first[None, :])
    x = logp[None, :] + lam[:, None] * where
    top = x.max(axis=1)
    return np.asarray(top + np.log(np.exp(x - top[:, None]).sum(axis=1)))


def _log_mgf(pmf: NDArray[np.float64], lam: float) -> float:
    """``log E[exp(lam * I)]`` of the lattice index ``I ~ pmf`` (index 0 first), exactly: one exponential a cell.

    The exponent is taken relative to the last index with mass (``lam > 0``) or the first (``lam < 0``), so
    no term overflows, the sum is at least that index's mass (it cannot underflow to 0), and no logarithm
    of the masses is needed.
    """
    support = np.flatnonzero(pmf > 0.0)
    if support.size == 0:
        return -math.inf
    first, last = int(support[0]), int(support[-1])
    ref = last if lam > 0 else first
    total = float(pmf[first : last + 1] @ np.exp(lam * (np.arange(first, last + 1) - ref)))
    return lam * ref + math.log(total)


def _window(parts: Sequence[tuple[_Discrete, int]], tau: float, h: float) -> tuple[int, int]:
    """An index window ``[a, b]`` of the sum of the parts' lattice indices (each from 0) holding all but ``2 tau``.

    Chernoff: ``P(S >= b) <= exp(sum_j k_j log M_j(lam) - lam b)`` for every ``lam > 0`` (and the mirror image).
    The block bounds of :func:`_block_log_mgf` (at most about 1024 blocks a part) pick the best of a grid of
    ``lam`` cheaply; the exact log-mgf at that ``lam`` (:func:`_log_mgf`) removes the blocks' slack (the block
    size times ``k`` cells, large for many parts). Every ``lam`` gives a valid bound; the tightest is used.
    """
    top = sum(k * (d.pmf.size - 1) for d, k in parts)
    lams = h * np.geomspace(1e-3, 50.0, 40)  # per unit of loss 1e-3 .. 50, in lattice units
    log_tau = math.log(tau)

    def edge(sign: float) -> float:
        blocks = sum(k * _block_log_mgf(d.pmf, sign * lams, max(_BLOCK, d.pmf.size // 1024)) for d, k in parts)
        bounds = (blocks - log_tau) / lams
        lam = float(lams[int(np.argmin(bounds))])
        exact = sum(k * _log_mgf(d.pmf, sign * lam) for d, k in parts)
        return float(min(np.min(bounds), (exact - log_tau) / lam))

    b = edge(1.0)  # P(S >= b) <= tau
    a = -edge(-1.0)  # P(S <= a) <= tau
    return max(0, math.floor(a)), min(top, math.ceil(b))


#: Spectrum values with ``|z|^k`` below it are set to 0 (each moves a composed probability by at most ``2/n`` of it).
_NEGLIGIBLE_POWER = 1e-30


def _power(z: NDArray[np.complex128], k: int) -> NDArray[np.complex128]:
    """``z ** k`` by repeated squaring (``log2 k`` products), computed only where ``|z|^k >= 1e-30``.

    A characteristic function has ``|z| <= 1``, and for many parts ``|z|^k`` is
    negligible at all but the lowest frequencies: those are set to 0, which
    changes each probability of the inverse FFT by at most ``1e-30`` per
    dropped frequency, far below the FFT's own rounding (see the module
    docstring).
    """
    with np.errstate(divide="ignore"):
        keep = np.flatnonzero(k * np.log(np.abs(z)) >= math.log(_NEGLIGIBLE_POWER))
    base = z[keep]
    part = np.ones_like(base)
    while True:
        if k & 1:
            part *= base
        k >>= 1
        if not k:
            break
        base *= base
    result = np.zeros_like(z)
    result[keep] = part
    return result


@dataclass(frozen=True)
class _Composed:
    """The law of a sum of lattice parts, by its spectrum: cell ``m`` of the window (``0 <= m < size``) sits at
    ``h (first + m) + shift`` and has the probability ``irfft(S, n)[(a + m) % n]``, ``S`` the spectrum:
    ``values`` at the frequencies ``kept`` and 0 elsewhere."""

    kept: NDArray[np.intp]
    values: NDArray[np.complex128]
    turns: NDArray[np.int64]  # S_j = values_j exp(-2 pi i turns_j / (_DIVISIONS n)): a rotation, exact
    n: int
    a: int
    size: int
    first: int
    shift: float


#: A part composed ``k`` times has a *core*: the cells from the first to the last of mass above the largest
#: power of two that leaves the others a 2-norm of at most ``_REST_NORM / k`` (at most :data:`_CORE_CELLS`
#: cells), summed directly; transforms see only the rest (see :func:`_part_log_spectrum`). Where the heavy
#: cells span more than :data:`_CORE_CELLS`, the core is that many around the heaviest, and heavy cells outside
#: it that stand above both neighbours by the same threshold (*spikes*, such as the Laplace loss's atom at
#: :math:`-\varepsilon_0`, far from its atom at :math:`+\varepsilon_0`; at most :data:`_SPIKE_CELLS`, the highest) are
#: summed directly as well.
_REST_NORM = 2.5
_CORE_CELLS = 2048
_SPIKE_CELLS = 64

#: The rest's transform is computed only where needed (:func:`_zoom_dft`, about as costly as an FFT of the
#: part's length) where the part is at most 1/4 of the FFT length and the rest's modulus bound
#: (:meth:`_PartTransform.bound`: its mass, and its variation over the frequency) is below this beyond the lowest
#: ``1/(2 _ACCURATE_RATIO)`` of the frequencies; otherwise by one FFT of the window's length.
_REST_BOUND = 1e-2

#: The profile is evaluated from the spectrum itself (:func:`_spectral_profile`) when at most ``1/_SPECTRAL_RATIO``
#: of the frequencies are kept: each evaluation then costs far less than one inverse FFT.
_SPECTRAL_RATIO = 64

#: The kept frequencies' values are computed accurately (:func:`_part_log_spectrum`) when the modulus bounds leave
#: at most ``1/_ACCURATE_RATIO`` of the frequencies as candidates and the direct sums over the parts' cores take
#: at most ``_DIRECT_WORK`` terms; otherwise the spectrum is the product of the parts' FFTs raised to their counts.
_ACCURATE_RATIO = 8
_DIRECT_WORK = 1 << 22

#: A heavy rest (mass above :data:`_REST_BOUND`) bounded by its variation, with no FFT of the window, is not
#: taken from its zoom transform, whose error is about 1e-16 times the rest's mass (not its 2-norm, as an FFT's),
#: multiplied by k in the power (1000 Laplace releases: 2.4e-14 on delta, 300: 1.7e-14). The whole part is summed
#: directly where the kept frequencies times its nonzero cells are at most ``_WHOLE_WORK`` (delta within 1e-15),
#: otherwise the rest is taken from its FFT of the window's length.
_WHOLE_WORK = 1 << 20


#: Centres of parts are kept in 1/_DIVISIONS of a cell (so rotations are exact integers mod ``_DIVISIONS * n``).
_DIVISIONS = 256


def _mulmod(k: int, x: NDArray[np.int64], m: int) -> NDArray[np.int64]:
    """``(k x) mod m`` for integers ``0 <= x < m <= 2^40`` and any ``k >= 0``, with no int64 overflow."""
    high, low = divmod(k % m, 1 << 20)
    return np.asarray(((high * x) % m * (1 << 20) + low * x) % m)


def _chirp(m: NDArray[np.int64], n: int) -> NDArray[np.complex128]:
    """``exp(-pi i m^2 / n)`` for integers ``m``, with ``m^2`` reduced mod ``2n`` exactly before rounding."""
    return _turn((-(m * m)) % (2 * n), 2 * n)


def _zoom_dft(x: NDArray[np.float64], n: int, m: int) -> NDArray[np.complex128]:
    r"""``sum_i x_i exp(-2 pi i j i / n)`` for ``j = 0 .. m - 1``: the first ``m`` outputs of an ``n``-point DFT.

    Bluestein's identity :math:`ij = (i^2 + j^2 - (j - i)^2)/2` turns them into one convolution, done by
    FFTs of about ``x.size + m`` points whatever ``n`` is; the chirps' angles are reduced in integers.
    """
    size = x.size
    length = sp_fft.next_fast_len(size + m - 1)
    i = np.arange(max(size, m), dtype=np.int64)
    c = _chirp(i, n)
    a = np.zeros(length, dtype=complex)
    a[:size] = x * c[:size]
    b = np.zeros(length, dtype=complex)
    b[:m] = np.conj(c[:m])
    if size > 1:
        b[length - size + 1 :] = np.conj(c[1:size])[::-1]
    conv = sp_fft.ifft(sp_fft.fft(a) * sp_fft.fft(b))
    return np.asarray(c[:m] * conv[:m])


@dataclass(frozen=True)
class _PartTransform:
    """One part's pmf (at most the FFT length ``n`` long) as a core, summed directly, and the rest."""

    pmf: NDArray[np.float64]
    core_start: int
    core_size: int
    spikes: NDArray[np.intp]  # cells outside the core's run, summed directly with it (sorted)
    centre: int  # the core's mean index in 1/_DIVISIONS of a cell, rounded: phases are taken relative to it
    rest_mass: float
    variation: float  # the rest's total variation, sum |r_t - r_(t-1)| with 0 beyond both ends (rounded up)
    spike_mass: float
    missing: float  # 1 - (the pmf's total mass): the core summed exactly with the rest's (rounded) mass
    core_samples: NDArray[np.float64]  # |transform of the core's run| on a grid of n2 points (empty: none)
    slack: float  # the run's modulus moves by at most this between a frequency and its nearest sample
    rest_hat: NDArray[np.complex128] | None  # the rest's FFT at every frequency, where its bound is too loose

    def cells(self) -> NDArray[np.intp]:
        """The cells summed directly: the core's run, then the spikes."""
        run = np.arange(self.core_start, self.core_start + self.core_size, dtype=np.intp)
        return np.concatenate((run, self.spikes))

    def rest_bound(self, n: int, j: NDArray[np.intp]) -> NDArray[np.float64]:
        r"""A bound on the rest's modulus at ``j`` (``0 .. n // 2``) from its mass and its variation alone.

        Summation by parts, :math:`(1 - e^{-i\theta}) R(\theta) = \sum_t (r_t - r_{t-1}) e^{-i\theta t}`
        over a finite sequence, gives :math:`|R(\theta)| \le V / (2|\sin(\theta/2)|)` with ``V`` its total
        variation (on the circle of ``n`` cells at most the variation with zeros beyond both ends), at
        :math:`\theta = 2\pi j/n`; and :math:`|R| \le` its mass. Rounding: a factor 1 + 1e-9.
        """
        if self.variation == 0.0:  # no rest at all
            return np.full(j.size, self.rest_mass)
        with np.errstate(divide="ignore"):
            varied = self.variation / (2.0 * np.sin((math.pi / n) * j))
        return np.asarray(np.minimum(self.rest_mass, varied * (1.0 + 1e-9)))

    def bound(self, n: int, j: NDArray[np.intp]) -> NDArray[np.float64]:
        """An upper bound on the modulus of the part's transform at the frequencies ``j`` (in ``0 .. n // 2``)."""
        core = np.zeros(j.size)
        if self.core_samples.size:  # the nearest sample (a tie either way is within half a sample's spacing)
            n2 = self.core_samples.size
            core = self.core_samples[np.rint(j * (n2 / n)).astype(np.int64) % n2] + self.slack
        rest = np.abs(self.rest_hat[j]) if self.rest_hat is not None else self.rest_bound(n, j)
        return np.asarray(np.minimum(core + self.spike_mass + rest + 1e-15, 1.0))

    def candidates(self, n: int, floor: float) -> NDArray[np.intp]:
        """The frequencies ``0 .. n // 2`` where :meth:`bound` is at least ``floor``, found from the samples."""
        reach = n // 2  # beyond it the rest's variation bound alone keeps the bound below floor
        if self.rest_hat is None:
            run = float(np.max(self.core_samples)) + self.slack if self.core_samples.size else 0.0
            reach = _variation_reach(self.variation, self.rest_mass, n, floor - run - self.spike_mass - 2e-15)
            if reach < 0:
                return np.zeros(0, dtype=np.intp)
        if self.rest_hat is not None or self.core_samples.size == 0 or self.core_samples.size == n:
            return np.flatnonzero(self.bound(n, np.arange(reach + 1)) >= floor)
        n2 = self.core_samples.size
        top = self.slack + self.spike_mass + self.rest_mass + 1e-15
        s = np.flatnonzero(self.core_samples[: n2 // 2 + 2] + top >= floor)
        if s.size == 0:
            return np.zeros(0, dtype=np.intp)
        # frequency j has nearest sample round(j n2 / n): sample s is nearest for j within n / (2 n2) of s n / n2
        lo = np.maximum(np.floor((s - 0.5) * (n / n2)).astype(np.int64), 0)  # one either side: rounding ties
        hi = np.minimum(np.ceil((s + 0.5) * (n / n2)).astype(np.int64), reach)
        lo, hi = lo[lo <= hi], hi[lo <= hi]
        mark = np.zeros(reach + 2, dtype=np.int64)
        np.add.at(mark, lo, 1)
        np.add.at(mark, hi + 1, -1)
        j = np.flatnonzero(np.cumsum(mark)[: reach + 1] > 0)
        return j[self.bound(n, j) >= floor]


def _variation_reach(variation: float, mass: float, n: int, level: float) -> int:
    """The last ``j`` in ``0 .. n // 2`` where :meth:`_PartTransform.rest_bound` may be at least ``level``
    (-1: none; one more than needed, for rounding)."""
    if level <= 0.0:
        return n // 2
    if mass * (1.0 + 1e-9) < level:
        return -1
    ratio = variation * (1.0 + 1e-9) / (2.0 * level)
    if ratio >= 1.0:
        return n // 2
    return min(int(math.floor(n / math.pi * math.asin(ratio))) + 1, n // 2)


def _core_threshold(pmf: NDArray[np.float64], count: int) -> float:
    """The largest power of two ``t`` (at most 2^-8) with ``sum(p^2 for p <= t) <= (_REST_NORM / count)^2``."""
    _, exponent = np.frexp(pmf)  # p in [2^(e-1), 2^e)
    floor = -1100
    squares = np.bincount(np.clip(exponent, floor, 0) - floor, weights=pmf * pmf, minlength=1 - floor)
    below = np.cumsum(squares)  # below[i]: the sum over p < 2^(i + floor)
    ok = np.flatnonzero(below <= (_REST_NORM / count) ** 2)
    return float(2.0 ** (min(int(ok[-1]), 1092) + floor)) if ok.size else 0.0


def _spikes(rest: NDArray[np.float64], threshold: float) -> NDArray[np.intp]:
    """The cells of ``rest`` at least ``threshold`` (and > 0) above both neighbours: the highest
    :data:`_SPIKE_CELLS`, sorted."""
    padded = np.concatenate(([0.0], rest, [0.0]))
    excess = rest - np.maximum(padded[:-2], padded[2:])
    spikes = np.flatnonzero((excess > 0.0) & (excess >= threshold))
    if spikes.size > _SPIKE_CELLS:
        spikes = np.sort(spikes[np.argpartition(excess[spikes], -_SPIKE_CELLS)[-_SPIKE_CELLS:]])
    return spikes


def _part_transform(pmf: NDArray[np.float64], n: int, count: int) -> _PartTransform:
    r"""Split ``pmf`` (length at most ``n``) into core and rest, ready to bound and evaluate its transform.

    The core's run is transformed on a grid of ``n_2 = 64`` times its
    length (one small FFT); between samples its modulus moves by at most the
    distance in frequency times its first absolute moment about its middle,
    :math:`\sum_t p_t |t - c|` (``|d/dw E e^{-iw(T - c)}| <= E|T - c|``), so
    the sample nearest each frequency of the ``n``-grid (within
    :math:`\pi/n_2`) plus that slack bounds it; where ``n <= n_2`` the run is
    transformed on the ``n``-grid itself (no slack). The spikes add at most
    their mass, the rest at most :meth:`_PartTransform.rest_bound`, or, where
    that is too loose (:data:`_REST_BOUND`), the modulus of its FFT.
    Rounding: 1e-15 each.
    """
    threshold = _core_threshold(pmf, count)
    heavy = np.flatnonzero(pmf >= threshold)
    lo = hi = 0
    capped = False
    if heavy.size:
        lo, hi = int(heavy[0]), int(heavy[-1]) + 1
        if hi - lo > _CORE_CELLS:
            lo = min(max(int(np.argmax(pmf)) - _CORE_CELLS // 2, 0), pmf.size - _CORE_CELLS)
            hi, capped = lo + _CORE_CELLS, True
    rest = pmf.copy()
    rest[lo:hi] = 0.0
    spikes = _spikes(rest, threshold) if capped else np.zeros(0, dtype=np.intp)
    rest[spikes] = 0.0
    core = pmf[lo:hi]
    rest_mass = float(np.sum(rest[:lo]) + np.sum(rest[hi:]))  # relative rounding error of ~1e-16 log2(size)
    spike_masses = pmf[spikes]
    spike_mass = math.fsum(spike_masses.tolist())
    missing = -math.fsum([rest_mass, *core.tolist(), *spike_masses.tolist(), -1.0])
    variation = float(np.sum(np.abs(np.diff(rest, prepend=0.0, append=0.0)))) * (1.0 + 1e-12)
    direct = np.concatenate((core, spike_masses))
    relative = np.concatenate((np.arange(core.size), spikes - lo))
    mean = float(direct @ relative) / float(direct.sum()) if direct.size else 0.0
    centre = _DIVISIONS * lo + int(round(_DIVISIONS * mean))
    samples, slack = np.zeros(0), 0.0
    if core.size:
        n2 = sp_fft.next_fast_len(max(64 * core.size, 1 << 14))
        if n2 >= n:  # the n-grid itself
            n2, slack = n, 1e-15
        else:
            moment = float(np.sum(core * np.abs(np.arange(core.size) - 0.5 * (core.size - 1))))
            slack = (math.pi / n2) * moment + 1e-15
        samples = np.abs(sp_fft.fft(core, n2))
    rest_hat = None
    loose = rest_mass > _REST_BOUND and _variation_reach(variation, rest_mass, n, _REST_BOUND) > n // (
        2 * _ACCURATE_RATIO
    )
    if loose or 4 * pmf.size > n:
        rest_hat = sp_fft.rfft(rest, n)
    return _PartTransform(
        pmf, lo, hi - lo, spikes, centre, rest_mass, variation, spike_mass, missing, samples, slack, rest_hat
    )


def _rest(t: _PartTransform) -> NDArray[np.float64]:
    """The part's pmf without its core (run and spikes)."""
    rest = t.pmf.copy()
    rest[t.core_start : t.core_start + t.core_size] = 0.0
    rest[t.spikes] = 0.0
    return rest


def _rest_transform(t: _PartTransform, n: int, j: NDArray[np.intp]) -> NDArray[np.complex128]:
    """The transform of the part's rest (its pmf without the core) at the frequencies ``j``."""
    if t.rest_hat is not None:
        return np.asarray(t.rest_hat[j])
    if t.rest_mass == 0.0 or j.size == 0:
        return np.zeros(j.size, dtype=complex)
    return np.asarray(_zoom_dft(_rest(t), n, int(j.max()) + 1)[j])


def _approximate_modulus(
    t: _PartTransform, n: int, j: NDArray[np.intp], rest: NDArray[np.complex128]
) -> NDArray[np.float64]:
    """An upper bound on ``|z_j|`` from FFT-accurate transforms of core and rest (1e-12 added for rounding)."""
    z = np.array(rest, dtype=complex)
    if t.core_size and j.size:
        core = _zoom_dft(t.pmf[t.core_start : t.core_start + t.core_size], n, int(j.max()) + 1)[j]
        z = z + core * _turn((-j.astype(np.int64) * t.core_start) % n, n)  # from the run's first cell to the pmf's
    jj = j.astype(np.int64)
    rows = max(1, (1 << 18) // max(t.spikes.size, 1))  # frequencies a block: at most 2^18 terms in memory
    for first in range(0, j.size if t.spikes.size else 0, rows):
        block = jj[first : first + rows, None]
        z[first : first + rows] += _turn((-block * t.spikes[None, :]) % n, n) @ t.pmf[t.spikes]
    return np.asarray(np.minimum(np.abs(z) + 1e-12, 1.0))


def _part_log_spectrum(
    t: _PartTransform, n: int, j: NDArray[np.intp], rest: NDArray[np.complex128] | None
) -> NDArray[np.complex128]:
    r"""``log y_j`` of one part at the frequencies ``j``, :math:`z_j = y_j e^{-2\pi i j c/n}` (``c`` its centre).

    A k-fold power multiplies the error of :math:`\log z_j` by k, so the FFT
    alone (error about 1e-16 times the pmf's 2-norm; at DP-SGD's 10^5 steps a
    relative 1e-11 on the composed spectrum and 4e-12 on delta, measured) is
    not enough. The centre is the core's mean to 1/:data:`_DIVISIONS` of a
    cell, so that little phase is left in :math:`y_j` (its rounding, too, is
    multiplied by k); the rotation by it is kept as an integer, which the
    caller multiplies by k and reduces exactly. Then
    :math:`w_j = y_j - 1` is summed without cancellation: the core directly,
    :math:`p_t (e^{-i\varphi} - 1) = -p_t(2\sin^2(\varphi/2) + i\sin\varphi)`, the angle
    :math:`\varphi = 2\pi j (t - c)/n` reduced in integers to :math:`(-\pi, \pi]` and small for
    the cells near the centre, which carry the mass; the rest from its transform (``rest``,
    :func:`_rest_transform`; its 2-norm is small, see :data:`_REST_NORM`), turned back by the centre, minus
    its mass; and minus the mass missing from 1. Where ``rest`` is None, every cell of the pmf is summed
    directly, as the core is (:data:`_WHOLE_WORK`). Then
    :math:`\log y_j = \tfrac12\log(1 + 2\,\mathrm{Re}\,w + |w|^2) + i \arg(1 + w)` where
    :math:`|w_j| \le 1/2`, and :math:`\log(1 + w_j)` elsewhere (``-inf`` where it is 0): far from 1,
    :math:`|y_j|^k` is below 1e-30 unless k is small, and so is the error, k times that of :math:`y_j`.
    """
    jj = j.astype(np.int64)
    period = _DIVISIONS * n
    if rest is None:  # the whole pmf summed directly
        cells = np.flatnonzero(t.pmf)
        w = np.full(j.size, math.fsum([-1.0, *t.pmf[cells].tolist()]), dtype=complex)
    else:
        cells = t.cells()
        w = rest * _turn((jj * t.centre) % period, period) - t.rest_mass - t.missing
    if cells.size:
        core = t.pmf[cells]
        offsets = (_DIVISIONS * cells.astype(np.int64) - t.centre) % period
        rows = max(1, (1 << 18) // cells.size)  # frequencies a block: at most 2^18 angles in memory
        for first in range(0, jj.size, rows):
            r = (jj[first : first + rows, None] * offsets[None, :]) % period
            phi = (2.0 * math.pi / period) * np.where(2 * r > period, r - period, r)
            w[first : first + rows] -= np.sum(np.sin(0.5 * phi) ** 2 * (2.0 * core), axis=1) + 1j * np.sum(
                np.sin(phi) * core, axis=1
            )
    near = np.abs(w) <= 0.5  # y near 1; elsewhere log(y) has no cancellation to avoid (and y may be 0)
    out = np.empty(w.size, dtype=complex)
    wn = w[near]
    out[near] = 0.5 * np.log1p(2.0 * wn.real + (wn.real**2 + wn.imag**2)) + 1j * np.arctan2(wn.imag, 1.0 + wn.real)
    with np.errstate(divide="ignore"):
        out[~near] = np.log(1.0 + w[~near])
    return out


def _compose(parts: Sequence[tuple[_Discrete, int]], tau: float, h: float) -> _Composed:
    r"""The law of the sum of ``k_j`` copies of each part on the window ``[a, b]``, as the spectrum of its FFT.

    Circular convolution: one FFT length ``n`` for all, whose aliasing moves
    only the mass outside the window (at most ``2 tau``). Frequencies whose
    composed modulus is below 1e-30 by the bounds of :func:`_part_transform`
    are dropped (each moves a cell's probability by at most ``2e-30 / n``).
    Where few are left (:data:`_ACCURATE_RATIO`, :data:`_DIRECT_WORK`), they are
    computed as :math:`\exp(\sum_j k_j \log z_j)` from the accurate
    logarithms of :func:`_part_log_spectrum`, with no transform of the
    window's length where the parts are short (:func:`_zoom_dft`);
    otherwise the whole spectrum is the product of the parts' FFTs raised to
    their counts by repeated squaring (:func:`_power`), whose rounding the
    module docstring discusses.
    """
    a, b = _window(parts, tau, h)
    n = sp_fft.next_fast_len(b - a + 1, real=True)
    if n > MAX_FFT_LENGTH:
        raise ValueError(
            f"the composition needs an FFT of {n} points (at most {MAX_FFT_LENGTH}): "
            "choose a coarser value_discretization or a larger relative_width"
        )
    folded = [  # a part wider than the window is folded (the circular convolution is taken mod n anyway)
        d.pmf if d.pmf.size <= n else np.asarray(np.bincount(np.arange(d.pmf.size) % n, weights=d.pmf), np.float64)
        for d, _ in parts
    ]
    offset = sum(k * d.start for d, k in parts)
    shift = sum(k * d.shift for d, k in parts)
    window = (n, a, b - a + 1, offset + a, shift)
    transforms = [_part_transform(f, n, k) for f, (_, k) in zip(folded, parts, strict=True)]
    floor = math.log(_NEGLIGIBLE_POWER)
    candidates = transforms[0].candidates(n, math.exp(floor / parts[0][1]))
    # each part alone must reach 1e-30 (the others are at most 1)
    for t, (_, k) in zip(transforms[1:], parts[1:], strict=True):
        candidates = np.intersect1d(candidates, t.candidates(n, math.exp(floor / k)), assume_unique=True)
    log_bound = sum(k * np.log(t.bound(n, candidates)) for t, (_, k) in zip(transforms, parts, strict=True))
    candidates = candidates[log_bound >= floor]
    if _ACCURATE_RATIO * candidates.size <= n:
        rests = [_rest_transform(t, n, candidates) for t in transforms]
        log_bound = sum(  # the bounds again, from the transforms at the candidates
            k * np.log(_approximate_modulus(t, n, candidates, r))
            for t, r, (_, k) in zip(transforms, rests, parts, strict=True)
        )
        keep = log_bound >= floor
        candidates, rests = candidates[keep], [r[keep] for r in rests]
        if candidates.size * sum(t.cells().size for t in transforms) <= _DIRECT_WORK:  # the direct sums' work
            log_s = np.zeros(candidates.size, dtype=complex)
            turns = np.zeros(candidates.size, dtype=np.int64)
            for t, r, (_, k) in zip(transforms, rests, parts, strict=True):
                accurate: NDArray[np.complex128] | None = r
                if t.rest_hat is None and t.rest_mass > _REST_BOUND:  # heavy: not from the zoom (_WHOLE_WORK)
                    whole = candidates.size * np.count_nonzero(t.pmf) <= _WHOLE_WORK
                    accurate = None if whole else np.asarray(sp_fft.rfft(_rest(t), n)[candidates])
                log_s += k * _part_log_spectrum(t, n, candidates, accurate)
                rotation = (candidates.astype(np.int64) * t.centre) % (_DIVISIONS * n)
                turns = (turns + _mulmod(k, rotation, _DIVISIONS * n)) % (_DIVISIONS * n)
            keep = log_s.real >= floor
            return _Composed(candidates[keep], np.exp(log_s[keep]), turns[keep], *window)
    spectrum = np.ones(n // 2 + 1, dtype=complex)
    for f, (_, k) in zip(folded, parts, strict=True):
        spectrum *= _power(sp_fft.rfft(f, n), k)
    kept = np.flatnonzero(spectrum)
    return _Composed(kept, spectrum[kept], np.zeros(kept.size, np.int64), *window)


def _composed_profile(parts: Sequence[tuple[_Discrete, int]], tau: float, h: float) -> tuple[_Profile, int]:
    """The profile of the sum of the parts (:func:`_compose`) and the FFT length.

    Many composed parts leave few frequencies (``|z|^k`` below 1e-30 at all
    but the lowest): the profile is then summed from them directly
    (:func:`_spectral_profile`), with no inverse FFT and nothing the size of
    the window; otherwise one inverse FFT gives the cells' probabilities
    (with their rounding noise, of either sign) and :func:`_profile` their profile.
    """
    c = _compose(parts, tau, h)
    if _SPECTRAL_RATIO * c.kept.size <= c.n:
        return _spectral_profile(c, h), c.n
    spectrum = np.zeros(c.n // 2 + 1, dtype=complex)
    spectrum[c.kept] = c.values * _turn((-c.turns) % (_DIVISIONS * c.n), _DIVISIONS * c.n)
    circ = sp_fft.irfft(spectrum, c.n)
    start = c.a % c.n
    window = circ[start : start + c.size]
    if window.size < c.size:  # the window wraps around the end of the circle
        window = np.concatenate((window, circ[: c.size - window.size]))
    values = np.asarray(h * (c.first + np.arange(c.size)) + c.shift, dtype=np.float64)
    return _profile(values, window), c.n  # the rounding noise unclipped (see _profile)


def _turn(r: NDArray[np.int64], n: int) -> NDArray[np.complex128]:
    """``exp(2 pi i r / n)`` for integers ``0 <= r < n`` (the angle reduced exactly, before rounding)."""
    return np.asarray(np.exp((2j * math.pi / n) * r))


def _spectral_profile(c: _Composed, h: float) -> _Profile:
    r"""The profile of a composed law evaluated from its kept frequencies: two geometric sums a frequency.

    With :math:`\omega_j = e^{2\pi i j/n}`, the window's cells have the probabilities
    :math:`c_m = \mathrm{Re}\sum_j C_j \omega_j^m`, :math:`C_j = w_j S_j \omega_j^a / n` (:math:`w_j = 2`
    but for :math:`j = 0` and :math:`n/2`: the inverse real FFT), and the cells at or above the first
    value :math:`v_i > \varepsilon` give

    .. math:: \delta(\varepsilon) = \sum_{m \ge i} c_m - e^{\varepsilon - v_i} \sum_{m \ge i} c_m e^{-h(m-i)}
              = \mathrm{Re}\sum_j C_j \frac{\omega_j^i - \omega_j^M}{1 - \omega_j}
              - e^{\varepsilon - v_i}\,\mathrm{Re}\sum_j C_j \omega_j^i
                \frac{1 - (e^{-h}\omega_j)^{M-i}}{1 - e^{-h}\omega_j}

    (:math:`M` cells; the :math:`j = 0` term of the first sum is :math:`C_0 (M - i)`): the same sums as
    the inverse FFT followed by :func:`_profile`, in a different order, at a cost proportional to the
    number of kept frequencies. Angles are reduced with integers, and :math:`1 - e^{-h}\omega_j` and
    :math:`1 - \omega_j` are written with sines, so that no term loses digits to cancellation. Rounding
    noise below 0 in single cells is not set to 0 here: its sum is within the floating-point allowance
    (see the module docstring).
    """
    return _SpectralProfile(c, h)


class _SpectralProfile:
    """The callable of :func:`_spectral_profile`, with an :meth:`inverse` that needs about 20 evaluations."""

    def __init__(self, c: _Composed, h: float) -> None:
        n = c.n
        j = c.kept.astype(np.int64)
        weight = np.where((j == 0) | (2 * j == n), 1.0, 2.0)
        half = math.pi * j / n  # theta_j / 2
        moving = j != 0
        inv_d = np.zeros(j.size, dtype=complex)  # 1 / (1 - omega_j) = i e^{-i theta/2} / (2 sin(theta/2))
        inv_d[moving] = 1j * np.exp(-1j * half[moving]) / (2.0 * np.sin(half[moving]))
        decay = math.exp(-h)
        inv_e = 1.0 / ((-math.expm1(-h) + 2.0 * decay * np.sin(half) ** 2) - 1j * decay * np.sin(2.0 * half))
        self.c, self.h, self.j = c, h, j
        period = _DIVISIONS * n
        self.coef = weight * c.values * _turn((j * (_DIVISIONS * (c.a % n)) - c.turns) % period, period) / n
        self.inv_d, self.inv_e = inv_d, inv_e
        self.to_end = _turn((j * c.size) % n, n)
        self.still = float(self.coef[~moving].real.sum())  # C_0: the j = 0 term of the mass

    def value(self, i: int) -> float:
        """The lattice value of cell ``i`` (cell ``size`` and above: beyond the window)."""
        return self.h * (self.c.first + i) + self.c.shift

    def sums(self, i: int) -> tuple[float, float]:
        """``(sum_{m >= i} c_m, sum_{m >= i} c_m e^{-h (m - i)})`` for ``0 <= i < size``."""
        n, size, j = self.c.n, self.c.size, self.j
        here = _turn((j * i) % n, n)
        mass = float((self.coef * (here - self.to_end) * self.inv_d).real.sum()) + self.still * (size - i)
        r = (j * (size - i)) % n
        x = self.h * (size - i)
        tail = (-math.expm1(-x) + 2.0 * math.exp(-x) * np.sin(math.pi * r / n) ** 2) - 1j * math.exp(-x) * np.sin(
            2.0 * math.pi * r / n
        )
        return mass, float((self.coef * here * tail * self.inv_e).real.sum())

    def first_above(self, eps: float) -> int:
        """The first cell whose value exceeds ``eps`` (``size`` if none)."""
        size = self.c.size
        i = min(max(math.floor((eps - self.c.shift) / self.h - self.c.first) + 1, 0), size)
        while i > 0 and self.value(i - 1) > eps:
            i -= 1
        while i < size and self.value(i) <= eps:
            i += 1
        return i

    def __call__(self, eps: float) -> float:
        i = self.first_above(eps)
        if i >= self.c.size:
            return 0.0
        mass, weighted = self.sums(i)
        return max(0.0, mass - math.exp(eps - self.value(i)) * weighted)

    def inverse(self, target: float, lo: float, hi: float) -> float | None:
        """Smallest ``eps`` in ``[lo, hi]`` with ``delta(eps) <= target``: the cell by bisection on the lattice,
        then the closed form inside it, nudged up until it holds; ``None`` to leave it to :func:`_inverse`."""
        if self(lo) <= target:
            return lo
        a, b = self.first_above(lo) - 1, self.first_above(hi)  # delta(value(a)) > target (a >= -1)
        if b >= self.c.size or self(self.value(b)) > target:
            b = self.c.size - 1
            if not self.value(b) <= hi:
                return None
        while b - a > 1:  # delta(value(a)) > target >= delta(value(b))
            mid = (a + b) // 2
            if self(self.value(mid)) <= target:
                b = mid
            else:
                a = mid
        mass, weighted = self.sums(b)  # on (value(b - 1), value(b)]: delta = mass - e^{eps - value(b)} weighted
        left, right = max(self.value(b - 1), lo), self.value(b)
        eps = right + math.log((mass - target) / weighted) if mass > target and weighted > 0.0 else right
        eps = min(max(eps, left), right)
        step = 4e-16 * max(1.0, abs(eps))
        while self(eps) > target and eps < right:
            eps = min(eps + step, right)
            step *= 2.0
        return eps


def _profile(values: NDArray[np.float64], pmf: NDArray[np.float64]) -> _Profile:
    """``delta(eps) = sum_i pmf_i (1 - exp(eps - v_i))_+`` for sorted ``values``, by suffix sums (any real eps).

    ``mass[i] = sum_{j >= i} pmf_j`` and ``w[i] = sum_{j >= i} pmf_j e^{-v_j}``, kept as plain suffix sums
    scaled by ``e^{v_0}`` where the values span less than 600 (no underflow), else as reversed
    log-cumulative sums of the positive and the negative entries apart (finite whatever the range), so a
    query is one search. ``pmf`` may hold an inverse FFT's rounding noise below 0: it is summed as it is,
    since setting it to 0 would bias every tail sum upwards (over 19 million cells that added 1.3e-12
    to delta, issue 28), while signed noise largely cancels.
    """
    mass = np.cumsum(pmf[::-1])[::-1]
    if values[-1] - values[0] < 600.0:  # e^{-(v - v_0)} cannot underflow: plain suffix sums
        v0 = float(values[0])
        w = np.cumsum((pmf * np.exp(v0 - values))[::-1])[::-1]

        def weighted(eps: float, i: int) -> float:
            return math.exp(eps - v0) * float(w[i])  # eps < values[-1] < v0 + 600 here

    else:
        with np.errstate(divide="ignore"):
            log_pos = np.logaddexp.accumulate((np.log(np.maximum(pmf, 0.0)) - values)[::-1])[::-1]
            log_neg = np.logaddexp.accumulate((np.log(np.maximum(-pmf, 0.0)) - values)[::-1])[::-1]

        def weighted(eps: float, i: int) -> float:
            pos = math.exp(min(eps + float(log_pos[i]), 700.0))
            return pos - math.exp(min(eps + float(log_neg[i]), 700.0))

    def delta(eps: float) -> float:
        i = int(np.searchsorted(values, eps, side="right"))
        if i >= values.size:
            return 0.0
        return max(0.0, float(mass[i]) - weighted(eps, i))

    return delta


def _inverse(delta: Callable[[float], float], target: float, lo: float, hi: float) -> float:
    """Smallest ``eps >= lo`` with ``delta(eps) <= target`` (``delta`` non-increasing), by bisection.

    ``[lo, hi]`` is the first bracket; where ``delta(hi)`` still exceeds the target, ``hi`` is doubled up to
    :data:`MAX_EPSILON` (then a ``ValueError``), so that no answer is a search range's end presented as a
    bound (before issue 28 it returned ``hi = 1e4`` for a composition whose epsilon is 12000). A profile
    with its own ``inverse`` (:class:`_SpectralProfile`) answers itself where the root is in ``[lo, hi]``.
    """
    solve = getattr(delta, "inverse", None)
    if solve is not None:
        found = solve(target, lo, hi)
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

    Parameters
    ----------
    relative_width : float
        Target width of the epsilon bracket, relative to its lower end
        (default 1e-3); the grid is refined until it is met. Below an
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
        The bracket's failure mass :math:`\eta` as a fraction of the queried delta (default 1e-6: small,
        so that its shift of the lower end stays inside the width even at a large delta; Hoeffding's t
        grows only like :math:`\sqrt{\log(1/\eta)}`).
    closed_form : bool
        Use closed forms where they exist (default): Gaussian mechanisms are
        merged into one loss before discretising, and answered exactly when
        nothing else is composed; one release of one mechanism is answered
        from its own exact profile. ``False`` discretises every loss (to check
        the grid against the closed forms).

    Raises
    ------
    ValueError
        If a parameter is out of range, or a query needs an FFT longer than
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

        Raises
        ------
        ValueError
            If ``count`` < 1 or the object has no ``privacy_losses``.
        """
        count = check_positive_int("count", count)
        if not callable(getattr(mechanism, "privacy_losses", None)):
            raise ValueError(f"mechanism must have privacy_losses() (a dpcore mechanism); got {mechanism!r}")
        self._parts.append((mechanism, count))
        self._laws = self._parts_cache = None
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
            tau = eta_target / (4.0 * total)  # each part's truncation
            tau_fft = eta_target / 8.0
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
        profile, mass = _dots_direction(self._discretised()[direction], h, self._dots_eta(delta))
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
            twin = _optimistic_direction(parts, h, eta)
            if twin is None:
                return None
            below, slack, n_twin = twin
            root = _inverse(below, delta + slack, -1e4, 1e4)
            lowers.append(root - 2e-13 * max(1.0, abs(root)))  # the root lies within the bisection's tolerance
            if with_upper:
                profile, mass = _dots_direction(parts, h, eta)
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

    def _exact(self, delta: float) -> PldBracket | None:
        """The closed-form answer where there is one (``closed_form=True``), else ``None``.

        Only Gaussian mechanisms: their composition is one Gaussian
        (``method="exact-gaussian"``). One release of one dpcore mechanism:
        its own exact profile (``method="exact"``). Only Laplace mechanisms of
        one pure epsilon, within :data:`LAPLACE_EXACT_MAX_WORK`: the
        exact composition (``method="exact-laplace"``, its own rounding bracket).
        In the first two cases ``upper`` is
        the mechanism's ``epsilon(delta)`` (rounded so that the profile there is
        at most ``delta``) and ``lower`` the nearest point below where the
        profile exceeds ``delta``.
        """
        if not self.closed_form:
            return None
        directions = self._directions()
        if not any(parts for parts, _ in directions):
            from .mechanisms import GaussianMechanism

            # N(m, 2m) is the loss of a Gaussian mechanism with sensitivity/sigma = sqrt(2m)
            gauss = GaussianMechanism(1.0, math.sqrt(2.0 * max(m for _, m in directions)))
            return _exact_bracket(gauss, delta, len(directions), "exact-gaussian")
        from .mechanisms import Mechanism

        if len(self._parts) == 1 and self._parts[0][1] == 1 and isinstance(self._parts[0][0], Mechanism):
            return _exact_bracket(self._parts[0][0], delta, len(directions), "exact")
        laplace = self._laplace_only()
        if laplace is not None:
            lower, upper = laplace_composition_epsilon(delta, *laplace)
            return PldBracket(lower, upper, 0.0, 0.0, 0.0, 0, len(directions), method="exact-laplace")
        return None

    def _laplace_only(self) -> tuple[float, int] | None:
        """``(epsilon0, count)`` if, with ``closed_form``, only Laplace mechanisms of one pure epsilon were
        composed, within :func:`dpcore.laplace_composition_epsilon`'s range and :data:`LAPLACE_EXACT_MAX_WORK`."""
        from .mechanisms import LaplaceMechanism

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
        from .rdp import rdp_to_dp

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
        """``(lower, upper)``: the true epsilon at ``delta`` lies in it (see the module docstring)."""
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

        Raises
        ------
        ValueError
            As :meth:`epsilon_bracket_details`.
        """
        delta = self._check_delta(delta)
        exact = self._exact(delta)
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
