r"""Privacy-loss laws: one mechanism's privacy loss described exactly, for the PLD accountant.

The privacy loss of a mechanism between neighbours is :math:`L = \log\big(p(X)/q(X)\big)`,
:math:`X \sim P = M(D)`. A :class:`PrivacyLoss` holds its law under :math:`P` (distribution
function, upper tail computed directly, partial means) and, where known, under :math:`Q = M(D')`;
its profile is :math:`\delta(\varepsilon) = E[(1 - e^{\varepsilon - L})_+] + P(L = \infty)`.

What is certified here: nothing is approximated in the laws themselves. Each constructor's
distribution functions are closed forms (normal tails by ``scipy.special.ndtr``, geometric and
exponential tails, finite sums of atoms), checked against sympy derivations in chapter 7 and
against mpmath in the tests; the partial means of the subsampled Gaussian are adaptive quadratures
(used only by the mean-matched discretisation, whose bracket does not depend on them being exact
beyond the mean matching). :meth:`PrivacyLoss.delta` is exact where a law carries its ``profile``
(the subsampled Gaussian's, :mod:`dpcore.subsampled_gaussian`), else an adaptive quadrature broken
where the tail falls. The grid (:mod:`dpcore.pld_grid`), the composition (:mod:`dpcore.pld_spectral`)
and the accountant (:mod:`dpcore.pld`) build on these laws.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import subsampled_gaussian
from ._lazy import lazy_module
from ._validation import (
    as_real_array,
    check_bool,
    check_positive_finite,
    check_real,
    check_subsampled_gaussian,
)

special = lazy_module("scipy.special")
integrate = lazy_module("scipy.integrate")


__all__ = [
    "PrivacyLoss",
    "HasPrivacyLoss",
    "gaussian_privacy_loss",
    "laplace_privacy_loss_law",
    "atomic_privacy_loss",
    "subsampled_gaussian_privacy_losses",
]


CDF = Callable[[NDArray[np.float64]], NDArray[np.float64]]
_Profile = Callable[[float], float]


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
        # and where the weight e^{eps - l} falls: over [-1, 1000] (the Laplace law at epsilon0 1000, eps -20) the
        # quadrature missed the mass near start, 30 % of the integral (1.7e-9 on delta; oracle at 10^4)
        points += [start + d for d in (0.25, 1.0, 4.0, 16.0, 64.0)]
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

    def profile(eps: float) -> float:
        # E[(1 - e^{eps - L})_+] in closed form, x = eps - e0 <= 0: the atom at e0 gives (1 - e^x) / 2 and the
        # density e^{(l - e0)/2} / 4 on (eps, e0) gives (1 - e^{x/2})^2 / 2; below -e0 every atom is above eps
        # and the profile is 1 - e^eps (Q has total mass 1). Quadrature over [eps, e0] failed where that
        # interval holds a few doubles (0.3 % low at e0 = 1.000000000000023, eps = 1; oracle at 10^4)
        if eps >= e0:
            return 0.0
        if eps < -e0:
            return -math.expm1(eps)
        x = eps - e0
        return min(1.0, 0.5 * -math.expm1(x) + 0.5 * math.expm1(0.5 * x) ** 2)

    return PrivacyLoss(
        cdf, sf, partial_mean, -e0, e0, 0.0, f"Laplace, epsilon0 = {e0:g}", q_cdf, q_sf, lattice=e0, profile=profile
    )


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
        ``dpcore._validation.as_real_array``), ``log_masses`` is not a
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

    def profile(eps: float) -> float:
        # sum over the atoms above eps of m (1 - e^{eps - v}), each term to a few ulp: quadrature of the
        # integral form over [eps, v] fails when that interval holds a few doubles (12.5 % low at eps 1.0
        # and an atom at 1.0000000000000009: found by the oracle at 10^4 examples)
        above = v > eps
        return min(1.0, math.fsum((m[above] * -np.expm1(eps - v[above])).tolist()))

    return PrivacyLoss(
        cdf, sf, partial_mean, float(v[0]), float(v[-1]), 0.0, name, q_cdf, q_sf, lattice=lattice, profile=profile
    )


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
    s, q = check_subsampled_gaussian(s, q, names=("s", "q"))
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
