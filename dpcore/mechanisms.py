r"""Mechanisms as objects: one class per mechanism, the same methods on each.

Every mechanism here is a frozen, typed object holding its noise parameter and
the sensitivity it is calibrated for, with the same methods wherever they
apply:

``sample(value, size=None, rng=None)``
    a release of ``value`` (``size`` independent releases if given);
``delta(epsilon)``
    the exact privacy profile :math:`\delta(\varepsilon) = \sup_S P[M(D)\in S] - e^\varepsilon P[M(D')\in S]`
    between neighbours whose answers differ by the sensitivity;
``epsilon(delta)``
    its inverse, the smallest :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon) \le \delta`;
``rdp(orders)``
    the Rényi divergence :math:`D_\alpha(M(D) \| M(D'))` at each order;
``privacy_losses()``
    the law of the privacy loss (:class:`dpcore.PrivacyLoss`), one per
    direction of the neighbouring relation, for :class:`dpcore.PldAccountant`;
``calibrate(...)`` (class method)
    the mechanism that meets a privacy target.

and each object is also a mechanism in the auditor's sense,
``mechanism(data, size, rng)`` (see :func:`dpcore.audit_epsilon`), so the same
object is calibrated, accounted and audited. Adding a mechanism means writing
one class.

The formulas delegate to the tested functions of :mod:`dpcore.laplace`,
:mod:`dpcore.gaussian`, :mod:`dpcore.rdp` and :mod:`dpcore.discrete` where they
exist; the profiles derived here are stated in each class's docstring.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._lazy import lazy_module
from ._release import release_with_noise
from ._rounding import ceil_sqrt_double
from ._validation import (
    RNGLike,
    as_generator,
    check_finite_array,
    check_nonnegative_finite_array,
    check_positive_finite,
    check_positive_int,
    check_probability_open,
)
from .discrete import _gaussian_window, as_fraction, sample_discrete_gaussian, sample_discrete_laplace
from .gaussian import analytic_gaussian_sigma, gaussian_delta, gaussian_epsilon, normal_noise
from .laplace import laplace_noise, laplace_scale
from .pld_losses import (
    PrivacyLoss,
    atomic_privacy_loss,
    gaussian_privacy_loss,
    laplace_privacy_loss_law,
    subsampled_gaussian_privacy_losses,
)
from .rdp import (
    _check_orders,
    _discrete_laplace_rdp_decimal,
    _expm1_excess_over_square,
    gaussian_rdp,
    laplace_rdp,
    subsampled_gaussian_rdp,
)
from .subsampled_gaussian import subsampled_gaussian_delta, subsampled_gaussian_epsilon

if TYPE_CHECKING:
    from .calibrate_composed import ComposedCalibration

special = lazy_module("scipy.special")
optimize = lazy_module("scipy.optimize")

__all__ = [
    "Mechanism",
    "RealNoiseMechanism",
    "IntegerNoiseMechanism",
    "LaplaceMechanism",
    "GaussianMechanism",
    "DiscreteLaplaceMechanism",
    "DiscreteGaussianMechanism",
    "RandomizedResponse",
    "SubsampledGaussianMechanism",
    "mechanism_classes",
    "randomized_response",
]


#: Largest mean of a Gaussian privacy loss built by :meth:`GaussianMechanism.privacy_losses` (its tail
#: searches reach about twice the mean, which must stay a double), and the ratio sensitivity / sigma giving it.
_MAX_GAUSSIAN_MU = 1e300
_MAX_GAUSSIAN_RATIO = math.sqrt(2 * _MAX_GAUSSIAN_MU)


def _out(x: NDArray[np.float64], like: ArrayLike) -> float | NDArray[np.float64]:
    return float(x) if np.ndim(like) == 0 else x


#: Elements of a (values x support) block in a profile's sum (32 MB per temporary): the rows are summed in blocks.
_BLOCK_ELEMENTS = 1 << 22


def _row_blocks(rows: int, width: int) -> list[slice]:
    """Slices of ``range(rows)``, blocks of at most :data:`_BLOCK_ELEMENTS` elements of ``width`` (a row at least).

    A profile evaluated block by block sums each row exactly as on the whole array (bit for bit), but its
    temporaries hold one block: memory stays flat in the number of epsilons, time is linear in it.
    """
    step = max(1, _BLOCK_ELEMENTS // max(width, 1))
    return [slice(i, min(i + step, rows)) for i in range(0, rows, step)]


def _doubling_bound(profile: Any, target: float) -> float:
    """The first of 1, 2, 4, ... where the decreasing ``profile`` is at most ``target``, found by galloping.

    The same power of two as doubling from 1 (for a profile that decreases), with about ``2 log2`` of its
    exponent evaluations instead of the exponent itself (a discrete Gaussian of ``sigma2`` 2**-24 needs 2**63).
    """
    if float(profile(1.0)) <= target:
        return 1.0
    bad, step = 0, 1  # profile(2**bad) > target
    while float(profile(2.0 ** (bad + step))) > target:
        bad, step = bad + step, 2 * step
    good = bad + step
    while good - bad > 1:
        mid = (bad + good) // 2
        bad, good = (mid, good) if float(profile(2.0**mid)) > target else (bad, mid)
    return 2.0**good


def _safe_side(profile: Any, eps: float, target: float, top: float) -> float:
    """Move a closed-form inverse up by a few ulp until ``profile(eps) <= target`` (``profile(top) = 0``).

    The closed forms lose a few ulp of ``top`` to cancellation; the answer must
    never promise a delta it does not deliver.
    """
    step = 4 * math.ulp(max(top, 1e-300))
    for _ in range(64):
        if float(profile(eps)) <= target:
            return eps
        eps, step = min(eps + step, top), 2 * step
    return top


def _ratio(num: Fraction, den: Fraction) -> tuple[float, float, float]:
    """``num/den`` to about 106 bits: ``(q, r, up)``, ``q + r`` the exact ratio, ``up`` the smallest double >= it.

    ``q`` is the ratio rounded to nearest (at least 5e-324), ``r`` the exact remainder rounded to a double,
    so ``(e - q) - r`` is ``e - num/den`` to a relative rounding error even when ``e`` is within an ulp of
    ``q``: a profile that vanishes at a pure epsilon ``num/den`` is then evaluated accurately next to it,
    where ``e - q`` alone would lose everything (the pure epsilon rounded down by one ulp promises a delta
    of up to 1 it does not deliver). ``up`` is the pure epsilon rounded to the safe side.
    """
    exact = num / den
    q = max(float(exact), math.ulp(0.0))
    up = q if Fraction(q) >= exact else math.nextafter(q, math.inf)
    return q, float(exact - Fraction(q)), up


def _split(a: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Veltkamp's split of each element into two halves of 26 bits (``|a|`` far below 2**996)."""
    c = 134217729.0 * a  # 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _two_product(a: NDArray[np.float64], b: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Dekker's exact product: ``a * b = p + e`` with ``p`` the rounded product (no FMA needed)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(np.asarray(b, dtype=float))
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _rational_loss(n: NDArray[np.float64], num: int, den: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""``n * den / num`` as an unevaluated sum ``hi + lo`` of two doubles (to about :math:`2^{-104}` relative).

    The privacy losses of the discrete mechanisms are rationals :math:`n\,\mathrm{den}/\mathrm{num}`
    (integers ``n``, exact doubles below :math:`2^{53}`; ``num``, ``den`` below :math:`2^{26}`): Dekker's
    exact product for :math:`n\,\mathrm{den}`, a quotient and its exact remainder.
    """
    a_hi, a_lo = _two_product(np.asarray(n, dtype=float), float(den))
    q_hi = a_hi / num
    p, pe = _two_product(q_hi, float(num))
    return q_hi, (((a_hi - p) - pe) + a_lo) / num


def _rational_gap(
    eps: NDArray[np.float64],
    loss: tuple[NDArray[np.float64], NDArray[np.float64]],
    n: NDArray[np.float64],
    num: int,
    den: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""``eps - n * den / num`` (broadcast) as ``hi + lo``, given the loss from :func:`_rational_loss`.

    The profile needs :math:`1 - e^{\varepsilon - \ell}` at each loss :math:`\ell`. In doubles,
    :math:`\varepsilon - \ell` carries an absolute error of about :math:`10^{-16}|\ell|`: next to a kink
    (:math:`\varepsilon` within ulps of a loss of :math:`10^{11}`) that is the whole difference, and the
    profile there was under-reported by up to 100 % (``DiscreteGaussianMechanism(Fraction(7, 3072), 25001)``
    at the double just below its largest loss: 5e-96 for 1.1e-5). Here a two-sum with the two-double loss
    gives the difference to a few ulp, and the few differences still below :math:`2^{-40}|\ell|` (where
    the loss's own :math:`2^{-104}` could show) are done exactly in rationals.
    """
    q_hi, q_lo = loss
    e = np.asarray(eps, dtype=float)
    s = e - q_hi  # Knuth's two-sum of eps and -q_hi, then the low part
    bb = s - e
    t = ((e - (s - bb)) + (-q_hi - bb)) - q_lo
    hi = s + t
    lo = t - (hi - s)
    close = np.abs(hi) < 2.0**-40 * np.abs(q_hi)
    if close.any():  # at most a few per epsilon (the losses are far apart on this scale): exactly
        hi, lo = hi.copy(), lo.copy()
        eb, nb = np.broadcast_arrays(e, np.asarray(n, dtype=float))
        for i in zip(*np.nonzero(close), strict=True):
            exact = Fraction(float(eb[i])) - Fraction(int(nb[i]) * den, num)
            hi[i] = float(exact)
            lo[i] = float(exact - Fraction(hi[i]))
    return hi, lo


def _one_minus_exp(hi: NDArray[np.float64], lo: NDArray[np.float64]) -> NDArray[np.float64]:
    r""":math:`1 - e^{h + l}` for :math:`h < 0` (``|l|`` at most an ulp of ``h``), to a few ulp relative; 0 where
    :math:`h \ge 0`. With :math:`m = e^h - 1`: :math:`1 - e^{h}e^{l} = -m - (1 + m)\,l` to first order in
    :math:`l`."""
    m = np.expm1(np.minimum(hi, 0.0))
    return np.where(hi < 0.0, -m - (1.0 + m) * lo, 0.0)


class Mechanism(abc.ABC):
    """Base of the mechanism objects: a new mechanism defines ``sample`` (and its profile, inverse, RDP).

    Calling the object is the auditor's signature ``mechanism(data, size, rng)``
    (:func:`dpcore.audit_epsilon`): ``size`` releases of ``data`` as floats,
    ``data`` handed to ``sample`` unchanged.

    A concrete subclass listed in this module's ``__all__`` with a ``name``
    is found by :func:`mechanism_classes`, and so by the command line
    (``python -m dpcore account --mechanism NAME``, ``audit --mechanism NAME``),
    whose options are the dataclass fields of the class.
    """

    #: the mechanism's name on the command line (``--mechanism NAME``)
    name: ClassVar[str] = ""
    #: one line for ``--help``
    summary: ClassVar[str] = ""

    @property
    def pure_epsilon(self) -> float | None:
        """The epsilon at delta = 0 (``None`` if no finite one exists)."""
        return None

    def self_composition(self, count: int) -> Mechanism | None:
        """One mechanism with exactly the privacy profile of ``count`` compositions of this one, if one is known.

        ``None`` (the default) when no closed form exists; then use an
        accountant (:class:`dpcore.RdpAccountant`).
        """
        check_positive_int("count", count)
        return None

    @abc.abstractmethod
    def sample(self, value: ArrayLike, size: int | None = None, rng: RNGLike = None) -> Any:
        """``size`` releases of ``value`` (one if ``size`` is None)."""

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> NDArray[np.float64]:
        return np.asarray(self.sample(data, size, rng), dtype=np.float64)


class RealNoiseMechanism(Mechanism):
    """Base of the mechanisms that add real-valued noise to a real query.

    Every dataclass field of a subclass (the noise parameter, the sensitivity)
    must be a finite number > 0; a subclass draws its noise in ``_noise``.
    """

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            object.__setattr__(self, f.name, check_positive_finite(f.name, getattr(self, f.name)))

    @abc.abstractmethod
    def _noise(self, gen: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
        """Independent noise draws of the given shape."""

    def sample(self, value: ArrayLike, size: int | None = None, rng: RNGLike = None) -> Any:
        """``value`` plus independent noise (``size`` releases if given)."""
        return release_with_noise(value, self._noise, rng, size)


@dataclass(frozen=True)
class LaplaceMechanism(RealNoiseMechanism):
    r"""The Laplace mechanism :math:`M(D) = f(D) + \mathrm{Lap}(0, b)` for a query of L1 sensitivity :math:`\Delta`.

    Privacy profile (neighbours at distance :math:`\Delta`; the privacy loss
    has atoms at :math:`\pm\Delta/b` and a density between them):

    .. math:: \delta(\varepsilon) = 1 - e^{(\varepsilon - \Delta/b)/2}, \quad 0 \le \varepsilon \le \Delta/b,

    and 0 beyond, so :math:`\varepsilon(\delta) = \max(0, \Delta/b + 2\ln(1-\delta))`
    and the pure epsilon is :math:`\Delta/b`. RDP: :func:`dpcore.laplace_rdp`.

    Parameters
    ----------
    scale : float
        The noise scale :math:`b`, finite and > 0 (drawing noise needs
        :math:`b \in [2.2\cdot10^{-308}, 10^{304}]`, :func:`dpcore.laplace_noise`).
    sensitivity : float
        L1 sensitivity :math:`\Delta`, finite and > 0 (default 1), with
        :math:`\Delta/b` finite (a ratio that underflows is rounded up to 5e-324).

    Raises
    ------
    ValueError
        If ``scale`` or ``sensitivity`` is not finite and > 0, or their
        ratio overflows the double range.
    """

    name: ClassVar[str] = "laplace"
    summary: ClassVar[str] = "value + Lap(0, scale); L1 sensitivity"

    scale: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not math.isfinite(self.sensitivity / self.scale):
            raise ValueError(
                f"sensitivity / scale overflows the double range (scale={self.scale!r}, "
                f"sensitivity={self.sensitivity!r}): the pure epsilon would be infinite"
            )

    @classmethod
    def calibrate(cls, epsilon: float, sensitivity: float = 1.0) -> LaplaceMechanism:
        r"""The epsilon-DP Laplace mechanism, :math:`b = \Delta/\varepsilon` (:func:`dpcore.laplace_scale`).

        Parameters
        ----------
        epsilon : float
            The pure epsilon to meet, finite and > 0.
        sensitivity : float
            L1 sensitivity, finite and > 0 (default 1).

        Raises
        ------
        ValueError
            If ``epsilon`` or ``sensitivity`` is not finite and > 0, or
            :math:`\Delta/\varepsilon` is not a normal double (outside [2.2e-308, 1.8e308]).
        """
        return cls(laplace_scale(sensitivity, epsilon), sensitivity)

    @classmethod
    def calibrate_composed(
        cls, *, epsilon: float, delta: float, count: int, sensitivity: float = 1.0, rtol: float = 1e-3
    ) -> ComposedCalibration:
        """The smallest scale whose ``count`` releases have a certified epsilon at most ``epsilon`` at ``delta``.

        :func:`dpcore.calibrate_noise` for this class (domains, tolerance and errors as there); the
        calibrated mechanism is the result's ``mechanism``.
        """
        from .calibrate_composed import calibrate_noise

        return calibrate_noise(cls, epsilon=epsilon, delta=delta, count=count, sensitivity=sensitivity, rtol=rtol)

    @property
    def pure_epsilon(self) -> float:
        r""":math:`\Delta/b`, the epsilon at :math:`\delta = 0`, rounded *up* to a double (at least 5e-324).

        Rounded to nearest it could fall one ulp below the true ratio, where the mechanism's profile is still
        positive: an accountant composing at that epsilon0 under-reported delta next to it (issue 28, oracle).
        """
        return _ratio(Fraction(self.sensitivity), Fraction(self.scale))[2]

    def _noise(self, gen: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
        """Laplace noise of scale ``scale`` (:func:`dpcore.laplace_noise`)."""
        return laplace_noise(gen, shape, self.scale)

    def delta(self, epsilon: ArrayLike) -> float | NDArray[np.float64]:
        """The exact privacy profile at each ``epsilon`` >= 0.

        Parameters
        ----------
        epsilon : float or array_like
            Non-empty, every element finite and >= 0 (vectorised; the result has its shape).

        Raises
        ------
        ValueError
            If ``epsilon`` is empty or has a negative, NaN or infinite element.
        """
        e = check_nonnegative_finite_array("epsilon", epsilon)
        q, r, _ = _ratio(Fraction(self.sensitivity), Fraction(self.scale))  # eps - D/b to a relative rounding
        d = -np.expm1(np.minimum((e - q) - r, 0.0) / 2)
        return _out(d, epsilon)

    def epsilon(self, delta: float) -> float:
        r"""The smallest epsilon >= 0 with ``delta(epsilon) <= delta``, rounded up to the safe side.

        The closed form :math:`\Delta/b + 2\ln(1-\delta)` is stepped up until the profile, evaluated with
        :math:`\Delta/b` to about 106 bits, is at most ``delta``; it never exceeds :math:`\Delta/b` rounded
        up (the smallest double at or above the exact ratio, where the true profile is 0).

        Parameters
        ----------
        delta : float
            In the open interval (0, 1), subnormal values included.

        Raises
        ------
        ValueError
            If ``delta`` is not a real number in (0, 1).
        """
        d = check_probability_open("delta", delta)
        q, r, up = _ratio(Fraction(self.sensitivity), Fraction(self.scale))
        e = min(max(0.0, q + (r + 2 * math.log1p(-d))), up)
        return _safe_side(self.delta, e, d, up)

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64] | float:
        """Rényi divergence at each order > 1 (:func:`dpcore.laplace_rdp`); at most the pure epsilon.

        Parameters
        ----------
        orders : float or array_like
            Non-empty, every order finite and > 1 (vectorised).

        Raises
        ------
        ValueError
            If an order is <= 1, NaN or infinite.
        """
        return laplace_rdp(orders, self.scale, self.sensitivity)

    def privacy_losses(self) -> tuple[PrivacyLoss]:
        """The privacy loss (:func:`dpcore.laplace_privacy_loss_law`); symmetric, so one direction."""
        return (laplace_privacy_loss_law(self.pure_epsilon),)


@dataclass(frozen=True)
class GaussianMechanism(RealNoiseMechanism):
    r"""The Gaussian mechanism :math:`M(D) = f(D) + N(0, \sigma^2)` for a query of L2 sensitivity :math:`\Delta`.

    Profile :func:`dpcore.gaussian_delta` (Balle & Wang 2018, Theorem 8), its
    inverse :func:`dpcore.gaussian_epsilon`, RDP :func:`dpcore.gaussian_rdp`.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, finite and > 0 (drawing noise needs
        :math:`\sigma \in [2.2\cdot10^{-308}, 10^{304}]`; :meth:`epsilon` needs
        :math:`\sigma/\Delta \gtrsim 10^{-150}`, :meth:`privacy_losses` :math:`\Delta/\sigma \le 1.4\cdot10^{150}`).
    sensitivity : float
        L2 sensitivity :math:`\Delta`, finite and > 0 (default 1).

    Raises
    ------
    ValueError
        If ``sigma`` or ``sensitivity`` is not finite and > 0.
    """

    name: ClassVar[str] = "gaussian"
    summary: ClassVar[str] = "value + N(0, sigma^2); L2 sensitivity"

    sigma: float
    sensitivity: float = 1.0

    @classmethod
    def calibrate(cls, epsilon: float, delta: float, sensitivity: float = 1.0) -> GaussianMechanism:
        """The (epsilon, delta)-DP Gaussian mechanism of smallest sigma (:func:`dpcore.analytic_gaussian_sigma`).

        Parameters
        ----------
        epsilon : float
            Finite and > 0 (any size).
        delta : float
            In the open interval (0, 1).
        sensitivity : float
            L2 sensitivity, finite and > 0 (default 1).

        Raises
        ------
        ValueError
            If a parameter is outside its range, or sigma is not a normal double
            (outside [2.2e-308, 1.8e308]).
        """
        return cls(analytic_gaussian_sigma(sensitivity, epsilon, delta), sensitivity)

    @classmethod
    def calibrate_composed(
        cls, *, epsilon: float, delta: float, count: int, sensitivity: float = 1.0, rtol: float = 1e-3
    ) -> ComposedCalibration:
        r"""The smallest sigma whose ``count`` releases have a certified epsilon at most ``epsilon`` at ``delta``.

        :func:`dpcore.calibrate_noise` for this class (``count`` Gaussian releases are one of sensitivity
        :math:`\sqrt{k}\Delta`: the closed form; domains, tolerance and errors as there).
        """
        from .calibrate_composed import calibrate_noise

        return calibrate_noise(cls, epsilon=epsilon, delta=delta, count=count, sensitivity=sensitivity, rtol=rtol)

    def _noise(self, gen: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
        """Gaussian noise of standard deviation ``sigma``."""
        return normal_noise(gen, shape, self.sigma)

    def delta(self, epsilon: ArrayLike) -> float | NDArray[np.float64]:
        """The exact privacy profile at each ``epsilon`` >= 0 (:func:`dpcore.gaussian_delta`).

        Parameters
        ----------
        epsilon : float or array_like
            Non-empty, every element finite and >= 0 (vectorised; the result has its shape).

        Raises
        ------
        ValueError
            If ``epsilon`` is empty or has a negative, NaN or infinite element.
        """
        return gaussian_delta(self.sigma, self.sensitivity, epsilon)

    def epsilon(self, delta: float) -> float:
        """The smallest epsilon >= 0 with ``delta(epsilon) <= delta`` (:func:`dpcore.gaussian_epsilon`).

        Parameters
        ----------
        delta : float
            In the open interval (0, 1), subnormal values included.

        Raises
        ------
        ValueError
            If ``delta`` is not in (0, 1), or the answer exceeds 1e300 (``sigma / sensitivity`` below about 1e-150).
        """
        return gaussian_epsilon(self.sigma, delta, self.sensitivity)

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64] | float:
        """Rényi divergence :math:`\\alpha\\Delta^2/(2\\sigma^2)` at each order.

        Parameters
        ----------
        orders : float or array_like
            Non-empty, every order finite and > 1 (vectorised).

        Raises
        ------
        ValueError
            If an order is <= 1, NaN or infinite, or the result overflows the double range.
        """
        return gaussian_rdp(orders, self.sigma, self.sensitivity)

    def privacy_losses(self) -> tuple[PrivacyLoss]:
        """The privacy loss :math:`N(\\mu, 2\\mu)`, :math:`\\mu = \\Delta^2/(2\\sigma^2)`; symmetric, one direction.

        Supported: :math:`\\mu` in (0, 1e300], i.e. ``sensitivity / sigma`` in about [3.1e-162, 1.4e150]
        (below, the square underflows to 0; above, the square overflows or the law's tails, searched up to
        about twice the mean, leave the doubles).

        Raises
        ------
        ValueError
            If ``sensitivity / sigma`` is outside that range (naming both).
        """
        ratio = self.sensitivity / self.sigma
        mu = ratio**2 / 2.0 if ratio <= _MAX_GAUSSIAN_RATIO else ratio * ratio / 2.0  # ** raises OverflowError
        if not (0.0 < mu <= _MAX_GAUSSIAN_MU):
            raise ValueError(
                f"sensitivity / sigma = {self.sensitivity!r} / {self.sigma!r} = {ratio!r} gives the privacy loss "
                f"mean mu = (sensitivity / sigma)**2 / 2 = {mu!r}, outside (0, {_MAX_GAUSSIAN_MU:g}]: "
                f"sensitivity / sigma must lie in about [3.1e-162, {_MAX_GAUSSIAN_RATIO:.3g}]"
            )
        return (gaussian_privacy_loss(mu),)

    def self_composition(self, count: int) -> GaussianMechanism:
        r"""``count`` adaptive Gaussian releases are exactly one of sensitivity :math:`\sqrt{k}\Delta`.

        The Gaussian mechanism is :math:`\Delta/\sigma`-GDP, and the k-fold
        composition of :math:`\mu`-GDP mechanisms is exactly
        :math:`\sqrt{k}\mu`-GDP (Dong, Roth & Su 2022, composition theorem
        of Gaussian differential privacy): the same profile as one Gaussian
        release of sensitivity :math:`\sqrt{k}\Delta`, rounded *up* to a double (checked exactly in rationals):
        where epsilon is about :math:`k\Delta^2/(2\sigma^2)` and huge, one ulp of the sensitivity moves it by
        more than the profile's whole fall from 1 to 0, so a sensitivity rounded down would answer an epsilon
        below the true composition's (issue 28: sensitivity 1.7e123, count 1.3e8, where the true delta at the
        answer was 1).
        """
        k = check_positive_int("count", count)
        what = "the composed sensitivity sqrt(count) * sensitivity"
        sens = ceil_sqrt_double(k * Fraction(self.sensitivity) ** 2, what)
        return GaussianMechanism(self.sigma, sens)


class IntegerNoiseMechanism(Mechanism):
    """Base of the discrete mechanisms: an integer query plus exactly sampled integer noise.

    A subclass declares ``sensitivity: int`` and ``_max_sensitivity`` (its
    profile sums over a range that grows with it) and draws ``n`` noise values
    in ``_noise``.
    """

    _max_sensitivity: ClassVar[int]
    sensitivity: int

    def _check_sensitivity(self) -> None:
        s = check_positive_int("sensitivity", self.sensitivity)
        if s > self._max_sensitivity:
            raise ValueError(f"sensitivity must be <= {self._max_sensitivity} (the profile sums over it); got {s}")
        object.__setattr__(self, "sensitivity", s)

    @abc.abstractmethod
    def _noise(self, n: int, rng: RNGLike) -> NDArray[np.int64]:
        """``n`` exact noise draws."""

    def sample(self, value: ArrayLike, size: int | None = None, rng: RNGLike = None) -> Any:
        """Integer ``value`` plus exact integer noise (``size`` releases if given)."""
        v = np.asarray(value)
        if not np.issubdtype(v.dtype, np.integer):
            raise ValueError(f"value must be integers; got dtype {v.dtype}")
        shape = v.shape if size is None else (check_positive_int("size", size), *v.shape)
        n = max(1, int(np.prod(shape)))
        noise = np.asarray(self._noise(n, rng))[: int(np.prod(shape))]
        out = v + noise.reshape(shape)
        return int(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class DiscreteLaplaceMechanism(IntegerNoiseMechanism):
    r"""Integer query plus discrete Laplace noise, :math:`P(Z = z) = \tanh(1/(2b))\, e^{-|z|/b}`, exactly sampled.

    For neighbours at integer distance :math:`\Delta` (answers 0 and
    :math:`\Delta`, :math:`r = e^{-1/b}`): the ratio :math:`p(z)/q(z)` is
    :math:`e^{\Delta/b}` for :math:`z \le 0`, :math:`e^{-\Delta/b}` for
    :math:`z \ge \Delta` and :math:`e^{(\Delta - 2z)/b}` between, with
    :math:`P(Z \le 0) = 1/(1+r)` and :math:`P(Z \ge \Delta) = r^\Delta/(1+r)`. Hence

    .. math::

        \delta(\varepsilon) = \frac{(1 - e^{\varepsilon - \Delta/b})_+}{1 + r}
            + \sum_{z=1}^{\Delta-1} \tanh\tfrac{1}{2b}\,\big(e^{-z/b} - e^{\varepsilon-(\Delta-z)/b}\big)_+,

        e^{(\alpha-1) D_\alpha} = \sum_z p^\alpha q^{1-\alpha}
            = \frac{e^{(\alpha-1)\Delta/b} + e^{-\alpha\Delta/b}}{1+r}
            + \sum_{z=1}^{\Delta-1} \tanh\tfrac{1}{2b}\, e^{-\alpha z/b - (1-\alpha)(\Delta-z)/b},

    (evaluated in log space). The pure epsilon is :math:`\Delta/b`.

    Work at the largest sensitivity, 10**7 (measured on 2 cores,
    ``benchmarks/results/work_bounds.md``): ``rdp`` takes the middle sum in
    closed form (a geometric series), a few arrays the size of ``orders``;
    ``delta`` sums the :math:`\Delta - 1` terms of each epsilon in blocks,
    about 0.5 GB at most and 0.1 s per epsilon (memory flat in the number of
    epsilons, time linear); ``epsilon`` takes under 10 s; ``privacy_losses``
    has :math:`\Delta + 1` atoms (about 1.3 GB while they are built).

    Parameters
    ----------
    scale : float, int, str or fractions.Fraction
        The scale :math:`b`, a positive rational read exactly (a float through its decimal
        representation), numerator and denominator below :math:`2^{24}`.
    sensitivity : int
        Integer L1 sensitivity :math:`\Delta` in [1, 10**7] (default 1).

    Raises
    ------
    ValueError
        If ``scale`` is not a positive rational (float, int or Fraction) or
        ``sensitivity`` is not an integer >= 1 (at most 10**7, the length of the
        sum above).
    """

    name: ClassVar[str] = "discrete-laplace"
    summary: ClassVar[str] = "integer value + exact discrete Laplace noise of rational scale"

    _max_sensitivity: ClassVar[int] = 10**7

    scale: Fraction
    sensitivity: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", as_fraction("scale", self.scale))
        self._check_sensitivity()

    @classmethod
    def calibrate(cls, epsilon: Any, sensitivity: int = 1) -> DiscreteLaplaceMechanism:
        r"""The epsilon-DP discrete Laplace mechanism, :math:`b = \Delta/\varepsilon` (exact rational).

        Parameters
        ----------
        epsilon : float, int, str or fractions.Fraction
            A positive rational, numerator and denominator below :math:`2^{24}`.
        sensitivity : int
            Integer in [1, 10**7] (default 1).

        Raises
        ------
        ValueError
            If a parameter is outside its range, or :math:`b = \Delta/\varepsilon` has a numerator or
            denominator of :math:`2^{24}` or more.
        """
        eps = as_fraction("epsilon", epsilon)
        return cls(Fraction(check_positive_int("sensitivity", sensitivity)) / eps, sensitivity)

    @property
    def pure_epsilon(self) -> float:
        r""":math:`\Delta/b`, rounded up to a double (the scale is rational: the ratio is exact before rounding)."""
        return _ratio(Fraction(self.sensitivity), self.scale)[2]

    def _noise(self, n: int, rng: RNGLike) -> NDArray[np.int64]:
        """Exact discrete Laplace draws (:func:`dpcore.sample_discrete_laplace`)."""
        return np.asarray(sample_discrete_laplace(self.scale, n, rng))

    def _pieces(self) -> tuple[float, float, float, NDArray[np.float64]]:
        """b, log r = -1/b, log tanh(1/(2b)), and the middle points z = 1 .. Delta - 1."""
        b = float(self.scale)
        return b, -1.0 / b, math.log(math.tanh(1 / (2 * b))), np.arange(1, self.sensitivity, dtype=float)

    def delta(self, epsilon: ArrayLike) -> float | NDArray[np.float64]:
        """The exact privacy profile at each ``epsilon`` >= 0 (the sums above, exact up to rounding).

        Parameters
        ----------
        epsilon : float or array_like
            Non-empty, every element finite and >= 0 (vectorised; the result has its shape).

        Raises
        ------
        ValueError
            If ``epsilon`` is empty or has a negative, NaN or infinite element.
        """
        e = check_nonnegative_finite_array("epsilon", epsilon)
        b, log_r, log_t, z = self._pieces()
        d = self.sensitivity
        q, r, _ = _ratio(Fraction(d), self.scale)  # eps - D/b to a relative rounding next to D/b
        outer = -np.expm1(np.minimum((e - q) - r, 0.0)) / (1 + math.exp(log_r))
        if z.size:
            # e^{log t - z/b} (1 - e^{eps - (D - 2z)/b}), the loss (D - 2z)/b = (D - 2z) den / num a rational:
            # eps minus it in two doubles (next to a kink the plain difference is all rounding)
            # terms below e^{-800}/D together are below every double: only z with e^{log t - z/b} above that
            z = z[: max(0, min(z.size, math.floor(b * (log_t + 800.0 + math.log(d)))))]
            first, flat = np.exp(log_t - z[None, :] / b), e.reshape(-1, 1)
            n = (d - 2 * z)[None, :]
            num, den = self.scale.numerator, self.scale.denominator
            loss = _rational_loss(n, num, den)
            sums = np.empty(flat.shape[0])
            for rows in _row_blocks(flat.shape[0], z.size):
                hi, lo = _rational_gap(flat[rows], loss, n, num, den)
                sums[rows] = (first * _one_minus_exp(hi, lo)).sum(axis=1)
            middle = sums.reshape(e.shape)
        else:
            middle = np.zeros(e.shape)
        return _out(np.minimum(outer + middle, 1.0), epsilon)

    def epsilon(self, delta: float) -> float:
        """The smallest epsilon >= 0 with ``delta(epsilon) <= delta`` (the profile is continuous, decreasing).

        Parameters
        ----------
        delta : float
            In the open interval (0, 1), subnormal values included.

        Raises
        ------
        ValueError
            If ``delta`` is not a real number in (0, 1).
        """
        target = check_probability_open("delta", delta)
        if float(self.delta(0.0)) <= target:
            return 0.0
        up = _ratio(Fraction(self.sensitivity), self.scale)[2]
        if target <= 0.5:
            # relative tolerance only: an absolute 1e-14 was 2.5e-8 relative at eps 4e-7 (oracle, 10^4 run)
            e = float(
                optimize.brentq(lambda e: float(self.delta(e)) - target, 0.0, up, xtol=1e-300, rtol=1e-15, maxiter=400)
            )
            return _safe_side(self.delta, e, target, up)
        # near 1 the profile's doubles are 1e-16 apart: solve on log(1 - delta), exact in 1 - target
        log_c = math.log1p(-target)
        f = lambda e: self._log_complement(e) - log_c  # noqa: E731
        e = float(optimize.brentq(f, 0.0, up, xtol=1e-300, rtol=1e-15, maxiter=400))
        return _safe_side(lambda x: -self._log_complement(x), e, -log_c, up)

    def _log_complement(self, e: float) -> float:
        r"""``log(1 - delta(e))``, from :math:`1 - \delta = \sum_z \min(p(z), e^\varepsilon q(z))` (positive terms).

        The atoms :math:`z \le 0` give :math:`e^{\min(\varepsilon,\Delta/b) - \Delta/b}/(1+r)`, those
        :math:`z \ge \Delta` give :math:`e^{-\Delta/b}/(1+r)`, the middle ones
        :math:`\tanh\tfrac{1}{2b}\, e^{\min(-z/b,\, \varepsilon - (\Delta - z)/b)}`: accurate to a few ulp
        where the profile itself is within 1e-16 of 1.
        """
        b = float(self.scale)
        log_t = math.log(math.tanh(1 / (2 * b)))
        d = self.sensitivity
        q, r, _ = _ratio(Fraction(d), self.scale)
        log_1r = math.log1p(math.exp(-1.0 / b))
        terms = [min((e - q) - r, 0.0) - log_1r, -(q + r) - log_1r]
        # the middle sum in closed form: e^{eps - (D - z)/b} for z <= m, e^{-z/b} above (two geometric series)
        m = int(min(max(math.floor((d - e * b) / 2), 0), d - 1))
        log_g = -math.log(-math.expm1(-1.0 / b))  # log 1/(1 - e^{-1/b})
        if m >= 1:
            terms.append(log_t + e - (d - m) / b + math.log(-math.expm1(-m / b)) + log_g)
        if d - 1 - m >= 1:
            terms.append(log_t - (m + 1) / b + math.log(-math.expm1(-(d - 1 - m) / b)) + log_g)
        return float(special.logsumexp(terms))

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64] | float:
        r"""Rényi divergence at each order > 1, exactly (the sums above, in log space).

        The middle sum is geometric in :math:`z` (ratio :math:`x = e^{(1-2\alpha)/b}`), so it is taken in
        closed form, :math:`\sum_{z=1}^{\Delta-1} x^z = x\,(1 - x^{\Delta-1})/(1 - x)` (with ``expm1``):
        time and memory are a few arrays the size of ``orders`` at any sensitivity (up to 10**7). Where
        :math:`\log I = (\alpha-1) D_\alpha < 0.1` (orders near 1, or little privacy loss) the double
        logarithm would lose :math:`\alpha - 1` of its digits, so the same closed form is evaluated in
        decimal arithmetic with enough digits (checked by a second evaluation with 30 more): about 1 ms an
        order. Accuracy: a few ulp relative at every order down to :math:`1 + 2^{-52}` (measured against
        mpmath), where the value tends to the KL divergence.

        Parameters
        ----------
        orders : float or array_like
            Non-empty, every order finite and > 1 (vectorised).

        Raises
        ------
        ValueError
            If an order is <= 1, NaN or infinite, or the sum overflows.
        """
        a = _check_orders("orders", orders)
        b = float(self.scale)
        log_t = math.log(math.tanh(1 / (2 * b)))
        d = self.sensitivity
        log_1r = math.log1p(math.exp(-1.0 / b))
        with np.errstate(over="ignore", invalid="ignore"):
            terms = [(a - 1) * d / b - log_1r, (1 - a) * d / b - d / b - log_1r]
            if d > 1:  # log of tanh(1/(2b)) e^{(a-1)d/b} sum_{z=1}^{d-1} x^z, log x = u = (1 - 2a)/b < 0
                u = (1 - 2 * a) / b
                terms.append(log_t + (a - 1) * d / b + u + np.log(-np.expm1((d - 1) * u)) - np.log(-np.expm1(u)))
            out = special.logsumexp(np.stack(terms, axis=-1), axis=-1) / (a - 1)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"orders too large for the discrete Laplace RDP (overflow); largest {float(np.max(a))!r}")
        # where log I = (a - 1) D is small, the double log lost (a - 1) of its digits: decimal arithmetic there
        out = np.array(out, dtype=float, ndmin=1)
        flat_a = np.atleast_1d(a).ravel()
        flat = out.ravel()
        for i in np.flatnonzero((flat_a - 1.0) * flat < 0.1):
            flat[i] = _discrete_laplace_rdp_decimal(float(flat_a[i]), self.scale, d)
        out = flat.reshape(np.shape(a))
        out = np.clip(out, 0.0, d / b)  # a divergence is in [0, the pure epsilon]; only rounding leaves it
        return float(out) if np.ndim(orders) == 0 else np.asarray(out, dtype=np.float64)

    def privacy_losses(self) -> tuple[PrivacyLoss]:
        r"""The privacy loss: atoms :math:`(\Delta - 2k)/t` for :math:`K = k`, clipped to :math:`\pm\Delta/t`.

        :math:`L = (|K-\Delta| - |K|)/t`, :math:`K` discrete Laplace of scale
        :math:`t`: :math:`\Delta/t` with probability :math:`1/(1+e^{-1/t})`
        (:math:`K \le 0`), :math:`-\Delta/t` with :math:`e^{-\Delta/t}/(1+e^{-1/t})`
        (:math:`K \ge \Delta`), :math:`(\Delta-2k)/t` with :math:`P(K=k)` between.
        Symmetric: one direction. The middle atoms whose :math:`P`-mass is below :math:`e^{-800}` (zero in
        doubles: those with :math:`k > t(800 + \log c)`) are left out, so the law has at most about
        :math:`800t` atoms whatever the sensitivity (at scale 1/2 and sensitivity :math:`10^7`: 400
        atoms, not :math:`10^7`); their :math:`Q`-mass is then :math:`Q`'s mass where :math:`P` has none
        (a loss of :math:`-\infty`), which changes no profile by more than their :math:`P`-mass, below
        :math:`10^{-340}`.
        """
        b, log_r, _, z = self._pieces()
        d = self.sensitivity
        norm = math.log1p(math.exp(log_r))  # log(1 + e^{-1/t})
        log_c = math.log(-math.expm1(log_r)) - norm  # log of (1 - e^{-1/t}) / (1 + e^{-1/t})
        z = z[: max(0, min(z.size, math.floor(b * (800.0 + log_c))))]  # log-masses below -800 dropped
        values = np.concatenate([[d / b, -d / b], (d - 2 * z) / b])
        logs = np.concatenate([[-norm, -d / b - norm], log_c - z / b])
        logs = logs - float(special.logsumexp(logs))
        return (atomic_privacy_loss(values, logs, f"discrete Laplace, scale {self.scale}", log_masses=True),)


def randomized_response(bits: ArrayLike, epsilon: float, rng: RNGLike = None) -> NDArray[np.int64]:
    r"""Warner's randomized response: report each bit truthfully w.p. :math:`e^\varepsilon/(1+e^\varepsilon)`.

    It is :math:`\varepsilon`-DP for one bit (the two output probabilities
    differ by exactly the factor :math:`e^\varepsilon`), and the test "believe
    the report" succeeds with probability exactly :math:`e^\varepsilon/(1+e^\varepsilon)`:
    the bound of :func:`dpcore.dp_test_success_bound` is attained (Kairouz et
    al. 2015). :class:`RandomizedResponse` is the same mechanism as an object.

    Raises
    ------
    ValueError
        If ``epsilon`` is not finite and > 0, or a bit is not 0 or 1.
    """
    p = float(special.expit(check_positive_finite("epsilon", epsilon)))  # e^eps / (1 + e^eps)
    arr = check_finite_array("bits", bits)
    if not np.all((arr == 0) | (arr == 1)):
        raise ValueError("bits must be 0 or 1")
    arr = arr.astype(np.int64)
    keep = as_generator(rng).random(arr.shape) < p
    return np.where(keep, arr, 1 - arr)


@dataclass(frozen=True)
class DiscreteGaussianMechanism(IntegerNoiseMechanism):
    r"""Integer query plus discrete Gaussian noise :math:`\mathcal N_{\mathbb Z}(0, \sigma^2)`, exactly sampled.

    :math:`P(Z = z) \propto e^{-z^2/(2\sigma^2)}` on the integers (Canonne,
    Kamath & Steinke 2020). For neighbours at integer distance :math:`\Delta`
    the privacy loss at output :math:`z` is
    :math:`L(z) = \log p(z)/q(z) = (\Delta^2 - 2z\Delta)/(2\sigma^2)`, so the
    exact profile is

    .. math:: \delta(\varepsilon) = \sum_{z:\,L(z) > \varepsilon} p(z)\,\big(1 - e^{\varepsilon - L(z)}\big)

    (every term positive, summed in log space over :math:`z \ge -(40\sigma + 10)`;
    the omitted mass is below :math:`e^{-800}`). Its Rényi divergence is
    :math:`D_\alpha = \frac{1}{\alpha-1}\log\frac{\sum_z e^{-(z - (1-\alpha)\Delta)^2/(2\sigma^2)}}
    {\sum_z e^{-z^2/(2\sigma^2)}} + \frac{\alpha\Delta^2}{2\sigma^2}`, at most
    :math:`\alpha\Delta^2/(2\sigma^2)` (the continuous Gaussian's) and equal to it
    at integer orders (CKS20, Proposition 5: the theta sum is largest at an
    integer shift). There is no pure epsilon. No ``calibrate``: choose
    ``sigma2`` with :meth:`epsilon`.

    Work at the largest parameters (``sensitivity`` 10**6, ``sigma2`` up to
    2**24 - 1 or down to 2**-24; measured on 2 cores,
    ``benchmarks/results/work_bounds.md``): ``delta`` sums a window of
    :math:`2k + \Delta + 1 \le 1.4 \cdot 10^6` terms per epsilon in blocks
    (under 0.3 GB, about 0.05 s per epsilon); ``epsilon`` takes under 10 s;
    ``rdp`` sums :math:`2k + 2 \le 3.3 \cdot 10^5` terms per order in blocks
    (under 0.3 GB, about 1.5 s for the 256 default orders).

    Parameters
    ----------
    sigma2 : float, int, str or fractions.Fraction
        The variance parameter :math:`\sigma^2`, a positive rational read exactly, numerator
        and denominator below :math:`2^{24}`.
    sensitivity : int
        Integer L2 sensitivity :math:`\Delta` in [1, 10**6] (default 1).

    Raises
    ------
    ValueError
        If ``sigma2`` is not a positive rational of modest size (numerator and
        denominator at most 2**24, which bounds the sums above) or
        ``sensitivity`` is not an integer >= 1 (at most 10**6).
    """

    name: ClassVar[str] = "discrete-gaussian"
    summary: ClassVar[str] = "integer value + exact discrete Gaussian noise, sigma2 rational"

    _max_sensitivity: ClassVar[int] = 10**6

    sigma2: Fraction
    sensitivity: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma2", as_fraction("sigma2", self.sigma2))
        self._check_sensitivity()

    def _noise(self, n: int, rng: RNGLike) -> NDArray[np.int64]:
        """Exact discrete Gaussian draws (:func:`dpcore.sample_discrete_gaussian`)."""
        return np.asarray(sample_discrete_gaussian(self.sigma2, n, rng))

    def _window(self) -> tuple[float, NDArray[np.float64], float]:
        """sigma^2, the integers z of the window, and log of the normaliser sum_z e^{-z^2/(2 sigma^2)}."""
        s2 = float(self.sigma2)
        k = _gaussian_window(s2)
        z = np.arange(-k, k + self.sensitivity + 1, dtype=float)
        return s2, z, float(special.logsumexp(-(z[z <= k] ** 2) / (2 * s2)))

    def _log_delta(self, e: NDArray[np.float64]) -> NDArray[np.float64]:
        """``log delta`` at each of the (validated) epsilons ``e``, flattened (-inf where delta is 0)."""
        s2, z, log_c = self._window()
        z = z[z <= _gaussian_window(s2)]  # beyond, p(z) < e^-800 (the window's upper part is for q)
        d = self.sensitivity
        # the loss (D^2 - 2 z D) / (2 sigma2) = n den / (2 num), n an exact integer: eps - loss in two doubles
        n = (d * d - 2 * z * d)[None, :]
        num, den = 2 * self.sigma2.numerator, self.sigma2.denominator
        loss = _rational_loss(n, num, den)
        log_p = -(z**2) / (2 * s2) - log_c
        flat = e.reshape(-1, 1)
        log_sums = np.empty(flat.shape[0])
        for rows in _row_blocks(flat.shape[0], z.size):  # memory flat in the number of epsilons
            hi, lo = _rational_gap(flat[rows], loss, n, num, den)
            with np.errstate(divide="ignore", invalid="ignore"):
                terms = np.where(hi < 0, log_p[None, :] + np.log(_one_minus_exp(hi, lo)), -np.inf)
            log_sums[rows] = special.logsumexp(terms, axis=1)
        return log_sums

    def delta(self, epsilon: ArrayLike) -> float | NDArray[np.float64]:
        r"""The exact privacy profile at each ``epsilon`` >= 0 (the window's omitted mass is below :math:`e^{-800}`).

        Accuracy: a few ulp relative per term. Each loss :math:`(\Delta^2 - 2z\Delta)/(2\sigma^2)` is a
        rational, carried in two doubles, so :math:`\varepsilon` minus it keeps its relative precision even
        within ulps of a kink at a loss of :math:`10^{11}` (in plain doubles that difference was all rounding,
        and the profile there under-reported by up to 100 %; before that fix the relative error also grew
        like :math:`10^{-16}\varepsilon`); the terms of :math:`p(z)` below :math:`e^{-800}` are left out.

        Parameters
        ----------
        epsilon : float or array_like
            Non-empty, every element finite and >= 0 (vectorised; the result has its shape).

        Raises
        ------
        ValueError
            If ``epsilon`` is empty or has a negative, NaN or infinite element.
        """
        e = check_nonnegative_finite_array("epsilon", epsilon)
        out = np.exp(self._log_delta(e)).reshape(e.shape)
        return _out(np.minimum(out, 1.0), epsilon)

    def epsilon(self, delta: float) -> float:
        """The smallest epsilon >= 0 with ``delta(epsilon) <= delta`` (the profile is continuous, decreasing).

        Every ``delta`` in (0, 1) is supported, subnormal ones too: below 1e-300 the root is found on
        ``log delta`` (the profile itself would underflow to 0 before it reaches so small a ``delta``).
        As ``delta`` nears 1 the profile flattens and the answer is accurate backward only, as
        :func:`dpcore.gaussian_epsilon`'s: the profile there is within relative ``1e-13 * (1 + abs(log(delta)))`` of
        ``delta``. The answer is as exact as :meth:`delta` (see its accuracy at huge epsilon).

        Parameters
        ----------
        delta : float
            In the open interval (0, 1), subnormal values included.

        Raises
        ------
        ValueError
            If ``delta`` is not a real number in (0, 1).
        """
        target = check_probability_open("delta", delta)
        if float(self.delta(0.0)) <= target:
            return 0.0
        hi = _doubling_bound(self.delta, target)
        log_target = math.log(target)
        if target >= 1e-300:
            f = lambda e: math.log(max(float(self.delta(e)), 1e-320)) - log_target  # noqa: E731
        else:  # the floor 1e-320 would be above the target: log delta itself, -inf (delta 0) floored at -1
            f = lambda e: max(float(self._log_delta(np.array([e]))[0]) - log_target, -1.0)  # noqa: E731
        e = float(optimize.brentq(f, 0.0, hi, xtol=1e-300, rtol=1e-14, maxiter=400))
        return _safe_side(self.delta, e, target, hi)

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64] | float:
        r"""Rényi divergence at each order > 1, exactly (the theta sums above, in log space).

        The shifted sum :math:`\sum_z e^{-(z - s)^2/(2\sigma^2)}`, :math:`s = (1-\alpha)\Delta`, depends on
        :math:`s` modulo 1 only: it is summed over the :math:`2k + 2` integers :math:`w` nearest the fraction
        :math:`f = s - \lfloor s \rfloor` (:math:`k = \lfloor 40\sigma \rfloor + 10`, as the normaliser;
        :math:`w - f` is the same double as :math:`z - s`), in blocks of orders: memory stays flat at any
        sensitivity, time about 6 ms an order at the largest ``sigma2`` (2**24 - 1; 1.5 s for the 256 default orders).
        Where :math:`(\alpha - 1)\alpha\Delta^2/(2\sigma^2) < 1` (orders near 1, or little privacy loss) the
        difference of the two logarithms would lose :math:`\alpha - 1` of its digits: there
        :math:`\log T(s) - \log T(0) = \log(1 + (T(x) - T(0))/T(0))` (:math:`x` the shift reduced to
        :math:`[-1/2, 1/2]`) with :math:`T(x) - T(0)` summed in :math:`\pm z` pairs, each of order :math:`x^2`
        (the linear terms cancel within the pair): a second sum of :math:`k + 1` terms for those orders (2.6 s
        for the 256 default orders at ``sigma2`` 2**24 - 1 and sensitivity 1, measured on a loaded 2-core
        machine). Accuracy: a few ulp relative at every order down to :math:`1 + 2^{-52}` (measured against
        mpmath), where the value tends to the KL divergence :math:`\Delta^2/(2\sigma^2)`.

        Parameters
        ----------
        orders : float or array_like
            Non-empty, every order finite and > 1 (vectorised).

        Raises
        ------
        ValueError
            If an order is <= 1, NaN or infinite, or the result overflows (orders near 1e308).
        """
        a = _check_orders("orders", orders)
        s2, _, log_c = self._window()
        d = self.sensitivity
        k = _gaussian_window(s2)
        w = np.arange(-k, k + 2, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            shift = np.asarray((1 - a) * d, dtype=float).reshape(-1, 1)
            frac = shift - np.floor(shift)  # exact: the theta sum has period 1 in the shift
            log_shifted = np.empty(frac.shape[0])
            for rows in _row_blocks(frac.shape[0], w.size):
                log_shifted[rows] = special.logsumexp(-((w - frac[rows]) ** 2) / (2 * s2), axis=-1)
            out = (log_shifted.reshape(a.shape) - log_c) / (a - 1) + a * d * d / (2 * s2)
            out = np.array(out, dtype=float, ndmin=1)
            flat_a = np.atleast_1d(a).ravel()
            flat = out.ravel()
            # near order 1 (or for little privacy loss) log T(s) - log T(0) is tiny and the difference of the two
            # logs, divided by alpha - 1, lost every digit (issue 28): there it is log1p(Delta / T(0)) with
            # Delta = T(x) - T(0) = sum_z e^{-z^2/(2 sigma^2)} expm1(...) summed in +-z pairs, each pair
            # 2 e^{-z^2/(2 sigma^2)} expm1(-x^2/(2 sigma^2) + log cosh(z x / sigma^2)) of order x^2 (x the shift
            # reduced to [-1/2, 1/2]): the linear terms cancel in each pair, not in the sum
            near = np.flatnonzero((flat_a - 1.0) * flat_a * (d * d / (2 * s2)) < 1.0)
            if near.size:
                zz = np.arange(1, k + 2, dtype=float)
                sh = (1.0 - flat_a[near]) * d
                x = np.abs(sh - np.round(sh)).reshape(-1, 1)
                log_w = -(zz**2) / (2 * s2)
                delta = np.empty(near.size)
                for rows in _row_blocks(near.size, zz.size):
                    xb = x[rows]
                    big = np.abs(zz * xb / s2)
                    log_cosh = np.where(big > 1.0, big + np.log1p(np.exp(-2.0 * big)) - math.log(2.0), 0.0)
                    log_cosh = np.where(big > 1.0, log_cosh, np.log1p(2.0 * np.sinh(big / 2.0) ** 2))
                    v = -(xb**2) / (2 * s2) + log_cosh
                    pair = np.where(
                        v > 1.0,
                        2.0 * np.exp(log_w + np.minimum(v, 1e300)) * -np.expm1(-v),
                        2.0 * np.exp(log_w) * np.expm1(np.minimum(v, 1.0)),
                    )
                    delta[rows] = np.expm1(-(xb[:, 0] ** 2) / (2 * s2)) + pair.sum(axis=1)
                c_near = flat_a[near] - 1.0
                flat[near] = np.log1p(delta * math.exp(-log_c)) / c_near + flat_a[near] * d * d / (2 * s2)
            out = flat.reshape(np.shape(a))
            out = np.minimum(out, a * d * d / (2 * s2))  # the theta sum is at most its integer-shift value
        if not np.all(np.isfinite(out)):
            raise ValueError(f"orders too large for the discrete Gaussian RDP (overflow); largest {float(np.max(a))!r}")
        return float(out) if np.ndim(orders) == 0 else np.asarray(out, dtype=np.float64)


@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    r"""Warner's randomized response on one bit: the truth w.p. :math:`p = e^{\varepsilon_0}/(1+e^{\varepsilon_0})`.

    Profile :math:`\delta(\varepsilon) = (p - e^\varepsilon (1-p))_+`, inverse
    :math:`\varepsilon(\delta) = \max(0, \ln((p-\delta)/(1-p)))`, and
    :math:`D_\alpha = \ln\big(p^\alpha(1-p)^{1-\alpha} + (1-p)^\alpha p^{1-\alpha}\big)/(\alpha-1)`.

    Parameters
    ----------
    epsilon0 : float
        The pure epsilon :math:`\varepsilon_0`, finite and > 0 (any size: :math:`p` is formed in log space).

    Raises
    ------
    ValueError
        If ``epsilon0`` is not finite and > 0.
    """

    name: ClassVar[str] = "randomized-response"
    summary: ClassVar[str] = "one bit, kept with probability e^epsilon0 / (1 + e^epsilon0)"

    epsilon0: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon0", check_positive_finite("epsilon0", self.epsilon0))

    @classmethod
    def calibrate(cls, epsilon: float) -> RandomizedResponse:
        """Randomized response that is exactly epsilon-DP.

        Parameters
        ----------
        epsilon : float
            Finite and > 0.

        Raises
        ------
        ValueError
            If ``epsilon`` is not finite and > 0.
        """
        return cls(epsilon)

    @property
    def pure_epsilon(self) -> float:
        """``epsilon0``."""
        return self.epsilon0

    @property
    def _log_p(self) -> tuple[float, float]:
        e = self.epsilon0
        return -math.log1p(math.exp(-e)), -e - math.log1p(math.exp(-e))  # log p, log(1 - p), no overflow

    def sample(self, value: ArrayLike, size: int | None = None, rng: RNGLike = None) -> Any:
        """Each bit of ``value`` kept with probability p, flipped otherwise.

        Raises
        ------
        ValueError
            If ``value`` is not numbers 0 or 1 (a bool, a string or NaN is refused, naming ``value``) or
            ``size`` is not an integer >= 1.
        """
        v = check_finite_array("value", value)
        if not np.all((v == 0) | (v == 1)):
            raise ValueError("value must be bits (0 or 1)")
        shape = v.shape if size is None else (check_positive_int("size", size), *v.shape)
        out = randomized_response(np.broadcast_to(v, shape), self.epsilon0, rng)
        return int(out) if out.ndim == 0 else out

    def delta(self, epsilon: ArrayLike) -> float | NDArray[np.float64]:
        """The exact privacy profile at each ``epsilon`` >= 0.

        Parameters
        ----------
        epsilon : float or array_like
            Non-empty, every element finite and >= 0 (vectorised; the result has its shape).

        Raises
        ------
        ValueError
            If ``epsilon`` is empty or has a negative, NaN or infinite element.
        """
        e = check_nonnegative_finite_array("epsilon", epsilon)
        lp, _ = self._log_p  # p - e^eps (1 - p) = p (1 - e^{eps - epsilon0}): no cancellation next to epsilon0
        return _out(-math.exp(lp) * np.expm1(np.minimum(e - self.epsilon0, 0.0)), epsilon)

    def epsilon(self, delta: float) -> float:
        r"""The smallest epsilon >= 0 with ``delta(epsilon) <= delta``, rounded up to the safe side.

        :math:`\varepsilon_0 + \ln(1 - \delta/p)` (the inverse above), stepped up until the profile,
        :math:`p\,(1 - e^{\varepsilon - \varepsilon_0})` without cancellation, is at most ``delta``; at
        most ``epsilon0``. For ``delta`` > 1/2 both steps use the complement,
        :math:`1 - \delta(\varepsilon) = (1 - p) + p\,e^{\varepsilon - \varepsilon_0} \ge 1 - \delta`
        (:math:`1 - \delta` is exact there), so the answer keeps its relative precision as ``delta`` nears 1.

        Parameters
        ----------
        delta : float
            In the open interval (0, 1), subnormal values included.

        Raises
        ------
        ValueError
            If ``delta`` is not a real number in (0, 1).
        """
        d = check_probability_open("delta", delta)
        lp, lq = self._log_p
        if d >= float(self.delta(0.0)):
            return 0.0
        if d <= 0.5:
            e = min(max(0.0, self.epsilon0 + math.log1p(-d / math.exp(lp))), self.epsilon0)
            return _safe_side(self.delta, e, d, self.epsilon0)
        # delta near 1: 1 - delta(eps) = (1 - p) + p e^{eps - epsilon0} against 1 - d (exact, Sterbenz);
        # d / p and p (1 - e^{eps - epsilon0}) would round away the small difference (0.6 % at eps0 40)
        rest, qv = 1.0 - d, math.exp(lq)
        e = min(max(0.0, self.epsilon0 + math.log(max(rest - qv, 5e-324)) - lp), self.epsilon0)

        def minus_complement(x: float) -> float:  # -(1 - delta(x)) rounded up by 4 ulp: <= -(1 - d) certifies
            return -(qv + math.exp(lp + x - self.epsilon0)) * (1.0 - 2.0**-50)

        return _safe_side(minus_complement, e, -rest, self.epsilon0)

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64] | float:
        r"""Rényi divergence at each order > 1, clipped to [0, ``epsilon0``] (rounding only).

        With :math:`c = \alpha - 1`, :math:`I = p e^{c\varepsilon_0} + (1-p) e^{-c\varepsilon_0}` and
        :math:`D_\alpha = \log(I)/c`. Where :math:`c\varepsilon_0 < 1/2`, :math:`I - 1 = E_P[\varphi(cL) +
        c\varphi(-L)]` (:math:`L = \pm\varepsilon_0` the privacy loss, :math:`\varphi(t) = e^t - 1 - t \ge 0`,
        :math:`E_P[e^{-L}] = 1`): non-negative terms, so the value keeps its relative precision down to order
        :math:`1 + 2^{-52}` (where it tends to the KL divergence :math:`\varepsilon_0\tanh(\varepsilon_0/2)`)
        and for tiny :math:`\varepsilon_0` (about :math:`\alpha\varepsilon_0^2/2`); elsewhere in log space.
        Accuracy: a few ulp relative (measured against mpmath).

        Parameters
        ----------
        orders : float or array_like
            Non-empty, every order finite and > 1 (vectorised).

        Raises
        ------
        ValueError
            If an order is <= 1, NaN or infinite.
        """
        a = _check_orders("orders", orders)
        lp, lq = self._log_p
        e0 = self.epsilon0
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.logaddexp(a * lp + (1 - a) * lq, a * lq + (1 - a) * lp) / (a - 1)
            c = np.asarray(a - 1.0, dtype=float)
            near = c * e0 < 0.5  # the log of I ~ 1 lost (1 - alpha) of its digits (issue 28: 0.25 for 0.462)
            if np.any(near):
                cn = c[near] if c.ndim else c
                p, q = math.exp(lp), math.exp(lq)
                g = _expm1_excess_over_square
                if e0 < 0.5:  # S = (I - 1)/c = e0^2 [p (c g(c e0) + g(-e0)) + q (c g(-c e0) + g(e0))]
                    bracket = p * (cn * g(cn * e0) + g(-e0)) + q * (cn * g(-cn * e0) + g(e0))
                    s_over = e0 * bracket  # S / e0: S itself may underflow before the result
                else:  # q phi(e0) = p - q (1 + e0), since q e^e0 = p
                    phi_minus, q_phi = math.expm1(-e0) + e0, p - q * (1.0 + e0)
                    s_over = (p * (cn * e0 * e0 * g(cn * e0) + phi_minus) + q * cn * e0 * e0 * g(-cn * e0) + q_phi) / e0
                big_e = cn * e0 * s_over  # I - 1
                with np.errstate(divide="ignore", under="ignore"):
                    ratio = np.where(big_e > 1e-300, np.log1p(big_e) / np.where(big_e > 1e-300, big_e, 1.0), 1.0)
                    value = s_over * e0 * ratio
                if c.ndim:
                    out[near] = value
                else:
                    out = np.asarray(value, dtype=float)
        out = np.clip(out, 0.0, self.epsilon0)  # a divergence of an epsilon0-DP mechanism: rounding only
        return float(out) if np.ndim(orders) == 0 else np.asarray(out, dtype=np.float64)

    def privacy_losses(self) -> tuple[PrivacyLoss]:
        r"""The privacy loss: :math:`\varepsilon_0` with probability :math:`p`, :math:`-\varepsilon_0` otherwise."""
        lp, lq = self._log_p
        return (atomic_privacy_loss([self.epsilon0, -self.epsilon0], [lp, lq], "randomized response", log_masses=True),)


@dataclass(frozen=True)
class SubsampledGaussianMechanism(RealNoiseMechanism):
    r"""The Poisson-subsampled Gaussian mechanism: each record used w.p. :math:`q`, the sum gets :math:`N(0,\sigma^2)`.

    One step of DP-SGD (Abadi et al. 2016): the differing record's
    contribution (clipped to L2 norm :math:`\Delta`) enters the noisy sum with
    probability ``sampling_rate``. Between add/remove neighbours the output
    laws are :math:`N(0,\sigma^2)` and the mixture
    :math:`(1-q)N(0,\sigma^2) + qN(\Delta,\sigma^2)`, in either order: the
    privacy loss has two directions (:func:`dpcore.subsampled_gaussian_privacy_losses`),
    and the profile is the larger of the two, each in closed form
    (:mod:`dpcore.subsampled_gaussian`). RDP: :func:`dpcore.subsampled_gaussian_rdp`. No
    closed form composes it: use :class:`dpcore.PldAccountant` (tight) or
    :class:`dpcore.RdpAccountant`.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, finite and > 0. The profile, its inverse, the RDP and the privacy
        losses need :math:`\sigma/\Delta \in [10^{-100}, 10^{100}]` and refuse it outside (the constructor
        does not).
    sampling_rate : float
        The Poisson sampling rate :math:`q`, in (0, 1].
    sensitivity : float
        L2 sensitivity :math:`\Delta` (the clipping norm), finite and > 0 (default 1).

    Raises
    ------
    ValueError
        If ``sigma`` or ``sensitivity`` is not finite and > 0, or
        ``sampling_rate`` is not in (0, 1].
    """

    name: ClassVar[str] = "subsampled-gaussian"
    summary: ClassVar[str] = "Poisson sampling at rate q, then value + N(0, sigma^2) (one DP-SGD step)"

    sigma: float
    sampling_rate: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.sampling_rate > 1.0:
            raise ValueError(f"sampling_rate must be in (0, 1]; got {self.sampling_rate}")

    def _noise(self, gen: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
        """Gaussian noise of standard deviation ``sigma``."""
        return normal_noise(gen, shape, self.sigma)

    def sample(self, value: ArrayLike, size: int | None = None, rng: RNGLike = None) -> Any:
        """``value`` (the record's contribution) kept with probability q, plus noise (``size`` releases if given)."""
        gen = as_generator(rng)
        v = check_finite_array("value", value)
        shape = v.shape if size is None else (check_positive_int("size", size), *v.shape)
        kept = gen.random(shape) < self.sampling_rate
        out = np.where(kept, v, 0.0) + self._noise(gen, shape)
        return float(out) if out.ndim == 0 else out

    @classmethod
    def calibrate_composed(
        cls,
        *,
        epsilon: float,
        delta: float,
        count: int,
        sampling_rate: float,
        sensitivity: float = 1.0,
        rtol: float = 1e-3,
    ) -> ComposedCalibration:
        """The smallest noise multiplier whose ``count`` steps (DP-SGD) are certified within ``epsilon``.

        :func:`dpcore.calibrate_noise` for this class: ``count`` Poisson-subsampled Gaussian steps at
        ``sampling_rate``, the clipping norm ``sensitivity``; the bound assumes Poisson subsampling (not
        shuffled or fixed-size batches). Domains, tolerance and errors as there.
        """
        from .calibrate_composed import calibrate_noise

        return calibrate_noise(
            cls,
            epsilon=epsilon,
            delta=delta,
            count=count,
            sampling_rate=sampling_rate,
            sensitivity=sensitivity,
            rtol=rtol,
        )

    def privacy_losses(self) -> tuple[PrivacyLoss, PrivacyLoss]:
        """The two directions' privacy losses: the record removed, the record added."""
        return subsampled_gaussian_privacy_losses(self.sigma / self.sensitivity, self.sampling_rate)

    def delta(self, epsilon: ArrayLike) -> float | NDArray[np.float64]:
        """The exact privacy profile of one step (the larger direction), at each ``epsilon`` >= 0.

        In closed form (:func:`dpcore.subsampled_gaussian_delta`), relative error at most 1e-11.

        Parameters
        ----------
        epsilon : float or array_like
            Non-empty, every element finite and >= 0 (vectorised).

        Raises
        ------
        ValueError
            If ``epsilon`` is empty or has a negative, NaN or infinite element, or
            ``sigma / sensitivity`` is outside [1e-100, 1e100].
        """
        return subsampled_gaussian_delta(epsilon, self.sigma, self.sampling_rate, self.sensitivity)

    def epsilon(self, delta: float) -> float:
        """The smallest epsilon >= 0 with ``delta(epsilon) <= delta`` (:func:`dpcore.subsampled_gaussian_epsilon`).

        The answer is rounded up so that the computed profile there is at most ``delta``.

        Parameters
        ----------
        delta : float
            In the open interval (0, 1), subnormal values included.

        Raises
        ------
        ValueError
            If ``delta`` is not in (0, 1), or ``sigma / sensitivity`` is outside [1e-100, 1e100].
        """
        return subsampled_gaussian_epsilon(delta, self.sigma, self.sampling_rate, self.sensitivity)

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64] | float:
        """Rényi divergence at each order (:func:`dpcore.subsampled_gaussian_rdp`).

        Parameters
        ----------
        orders : float or array_like
            Non-empty, every order finite, > 1 and at most ``dpcore.rdp.MAX_SUBSAMPLED_ORDER`` (1e6).

        Raises
        ------
        ValueError
            If an order is outside (1, 1e6], or ``sigma / sensitivity`` is outside [1e-100, 1e100].
        """
        return subsampled_gaussian_rdp(orders, self.sigma, self.sampling_rate, self.sensitivity)


def mechanism_classes() -> dict[str, type[Mechanism]]:
    """The concrete mechanism classes of this module, by their ``name``: the command line's registry."""
    found: dict[str, type[Mechanism]] = {}
    for attr in __all__:
        cls = globals()[attr]
        if isinstance(cls, type) and issubclass(cls, Mechanism) and not inspect.isabstract(cls) and cls.name:
            found[cls.name] = cls
    return found
