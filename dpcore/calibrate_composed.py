r"""Calibrating composed mechanisms, and epsilon at many checkpoints of one run.

Two questions a practitioner asks of an accountant besides "what epsilon at this noise":

:func:`calibrate_noise`
    The smallest noise (``sigma`` of k Gaussian releases or of T Poisson-subsampled Gaussian steps, the
    ``scale`` of k Laplace releases) whose *certified* epsilon at ``delta`` is at most a target: Opacus's
    ``get_noise_multiplier``, with a certificate.
:func:`epsilon_over_run`
    The certified epsilon after each of several step counts of one mechanism composed with itself (every
    epoch of a training run), from one discretisation of its privacy loss.

Monotonicity (why a bisection is valid)
---------------------------------------
More noise is a post-processing of less noise, so the true privacy profile, hence the true
:math:`\varepsilon(\delta)`, is non-increasing in the noise, for one release and for any composition:

* Gaussian: :math:`N(0, \sigma'^2) = N(0, \sigma^2) + N(0, \sigma'^2 - \sigma^2)` for :math:`\sigma' > \sigma`,
  independent noise added to the release; with Poisson subsampling the same noise is added after the
  sampled sum, so the subsampled mechanism of :math:`\sigma'` is the one of :math:`\sigma` post-processed;
* Laplace: for :math:`b' > b`, :math:`\mathrm{Lap}(b') = \mathrm{Lap}(b) + X` with :math:`X` equal to 0
  with probability :math:`b^2/b'^2` and to :math:`\mathrm{Lap}(b')` otherwise (characteristic functions:
  :math:`(1 + b^2t^2)/(1 + b'^2t^2) = b^2/b'^2 + (1 - b^2/b'^2)/(1 + b'^2t^2)`);
* a k-fold composition of post-processed releases is a post-processing of the composition.

The *computed* bounds need not be monotone in the noise (the grid changes with it), so the search never
compares two computed values: it keeps two noises, ``noise_below`` whose certified *lower* end exceeds the
target (so the true epsilon there does, and by monotonicity at every smaller noise) and ``noise`` whose
certified *upper* end is at most the target, and narrows them until ``noise_below >= noise * (1 - rtol)``.

What :func:`calibrate_noise` guarantees
---------------------------------------
For the returned ``noise``: the certified upper end ``epsilon`` at ``noise`` (:class:`dpcore.PldAccountant`:
the closed form for Gaussian releases, the exact composition for Laplace releases within its range,
connect-the-dots otherwise) is at most the target; at ``noise_below >= noise * (1 - rtol)`` the certified
lower end ``epsilon_below_lower`` exceeds it, so the true epsilon at ``noise * (1 - rtol)`` (and at any
smaller noise) exceeds the target. The true smallest noise :math:`\sigma^*` meeting the target therefore
lies in ``(noise_below, noise]``: ``noise`` is at most :math:`\sigma^*/(1 - \mathrm{rtol})`. Not
certified: floating-point rounding, as in the accountant (its 1e-13 allowance on delta).

The search
----------
In :math:`\log` noise, on the certified bracket at each probe: the first probe comes from a closed form
(Gaussian releases: the analytic sigma at the composed sensitivity :math:`\sqrt{k}\Delta`, exact), a
normal approximation (subsampled Gaussian: :math:`\mu = q\sqrt{T(e^{1/\sigma^2} - 1)}`) or the Gaussian
approximation of the Laplace composition, capped by basic composition (:math:`b = k\Delta/\varepsilon`, always
enough); the next probes by secant steps on :math:`\log\varepsilon` against :math:`\log` noise, placed just
above and just below the estimated root, each at a bracket width just fine enough to decide it (coarse
brackets are cheap, fine ones are not). A probe the bracket cannot decide is retried at a finer width.

Epsilon over a run
------------------
:func:`epsilon_over_run` asks the accountant once, at the largest checkpoint ``K``, and takes its grid
step ``h`` (the optimistic twin's). Every direction's loss is discretised once at ``h``, connect-the-dots
and its optimistic twin, truncated at ``tau = eta / (4 K)`` (the accountant's rule for ``K`` parts: for
``k <= K`` parts the tails count at most ``k tau <= eta / 4``), and each checkpoint ``k`` composes the
same two lattice laws ``k`` times (:mod:`dpcore.pld_spectral`): the certified bracket of the accountant
at step ``h``, with the same failure masses, so each checkpoint's bracket is certified exactly as a single
query's. The discretisation error grows with ``k``; a checkpoint whose bracket comes out wider than
``relative_width`` is recomputed by its own accountant query (a per-checkpoint grid refinement; counted in
``refined``). At ``K`` itself the accountant's answer is used. Mechanisms answered in closed form
(Gaussian releases; Laplace releases within the exact composition's range) are answered checkpoint by
checkpoint in closed form.

What the checkpoints share, so that 100 of them cost about one more single query rather than 100
(``dpcore.pld_spectral._RunPlan`` and ``_compose_run``): the discretised laws of the accountant's last step
(the query at ``K`` built them; they are not built again), one FFT length for every law and checkpoint (the
widest window's; a longer circle only moves the aliasing further out), one split of each law into core and
rest (made for the most demanding count), and the accurate logarithms of the transform at the frequencies
the smallest checkpoint keeps (they hold every larger checkpoint's). Each checkpoint keeps its own Chernoff
window and its own frequencies, so the certificate is the single composition's. The checkpoints' profiles
are then evaluated together (``dpcore.pld_spectral._RunProfile``: a few cells of every checkpoint in one
array operation) and their epsilons searched together: nine checkpoints across their brackets first, the
others from the roots interpolated between them (in the square root of the count), the lower ends from
the upper ends; the guesses move only where the search looks first. A direction whose delta at the largest
epsilon found so far is within its target is not searched (its epsilon is at most that one: delta is
non-increasing in epsilon), and the lower ends come from the twins of the directions that decide an upper
end (each direction's twin gives a certified lower end, since the true epsilon is the largest of the
directions'; the deciding direction's is the tightest).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from ._validation import check_positive_finite, check_positive_int, check_probability_open
from .gaussian import analytic_gaussian_sigma
from .mechanisms import GaussianMechanism, LaplaceMechanism, Mechanism, SubsampledGaussianMechanism
from .pld import (
    EPSILON_FLOOR,
    MIN_DELTA,
    PldAccountant,
    PldBracket,
    _below_root,
    _consistent,
    _dots_excess,
    _fft_tau,
    _grid,
    _inverse,
    _part_tau,
    _twin_slack,
)
from .pld_losses import HasPrivacyLoss
from .pld_spectral import _profile_of, _Run, _RunPlan, _RunProfile

__all__ = [
    "ComposedCalibration",
    "RunEpsilons",
    "calibrate_noise",
    "epsilon_over_run",
    "MAX_NOISE_MULTIPLIER",
    "MIN_NOISE_MULTIPLIER",
]

#: Largest noise / sensitivity the search of :func:`calibrate_noise` tries for the subsampled Gaussian (a target
#: that needs more is refused, naming ``epsilon``). Gaussian releases are calibrated in closed form (any sigma that
#: is a double), Laplace releases never need more than basic composition's :math:`k\Delta/\varepsilon`.
MAX_NOISE_MULTIPLIER = 1e4

#: Smallest noise / sensitivity the search tries (subsampled Gaussian and Laplace): a target met even there (e.g.
#: a delta above what removing the noise altogether costs) does not determine a smallest noise, and is refused.
MIN_NOISE_MULTIPLIER = 1e-2

#: Smallest target epsilon for the families calibrated on the PLD grid (Laplace, subsampled Gaussian): the accountant
#: brackets epsilons below 0.1 to an absolute width (:data:`dpcore.pld.EPSILON_FLOOR`), too coarse to decide below it.
MIN_GRID_EPSILON = 1e-2

#: The mechanism families :func:`calibrate_noise` calibrates, by command-line name, and their noise parameter.
FAMILIES = {"gaussian": "sigma", "laplace": "scale", "subsampled-gaussian": "sigma"}

_MAX_PROBES = 60
_MIN_WIDTH = 1e-6
_MAX_WIDTH = 1e-2


@dataclass(frozen=True)
class ComposedCalibration:
    """The result of :func:`calibrate_noise`: the calibrated noise, its certificate and the search's bracket.

    Attributes
    ----------
    mechanism : Mechanism
        One release (or one DP-SGD step) at the calibrated noise.
    parameter : str
        ``"sigma"`` or ``"scale"``: the name of the calibrated field of ``mechanism``.
    noise : float
        The calibrated noise (``sigma`` or ``scale``).
    count : int
        The number of composed releases (steps).
    target_epsilon, delta : float
        The target.
    epsilon, epsilon_lower : float
        The certified bracket on the true epsilon at ``noise`` (``epsilon <= target_epsilon``).
    method : str
        How ``epsilon`` was certified: ``exact-gaussian``, ``exact-laplace``, ``exact`` (one release) or ``pld``.
    noise_below : float
        A noise ``>= noise * (1 - rtol)`` at which the certified lower end ``epsilon_below_lower`` exceeds the
        target: the true smallest noise lies in ``(noise_below, noise]``.
    epsilon_below_lower : float
        That lower end.
    rtol : float
        The requested relative tolerance on the noise.
    probes : int
        The number of certified brackets computed.
    """

    mechanism: Mechanism
    parameter: str
    noise: float
    count: int
    target_epsilon: float
    delta: float
    epsilon: float
    epsilon_lower: float
    method: str
    noise_below: float
    epsilon_below_lower: float
    rtol: float
    probes: int


@dataclass(frozen=True)
class RunEpsilons:
    """The result of :func:`epsilon_over_run`: a certified epsilon bracket at each checkpoint.

    Attributes
    ----------
    steps : numpy.ndarray
        The checkpoints (numbers of composed releases), as given (int64).
    epsilon, epsilon_lower : numpy.ndarray
        The certified upper and lower ends at each checkpoint.
    delta : float
        The delta they are for.
    method : tuple of str
        Per checkpoint: ``pld-shared`` (the shared discretisation), ``pld``, ``exact-gaussian``,
        ``exact-laplace`` or ``exact`` (a separate accountant query, as
        :meth:`dpcore.pld.PldAccountant.epsilon_bracket_details`).
    value_discretization : float
        The shared grid step (0 where none was used).
    refined : int
        Checkpoints whose shared-grid bracket was wider than ``relative_width`` and were queried on their own.
    """

    steps: NDArray[np.int64]
    epsilon: NDArray[np.float64]
    epsilon_lower: NDArray[np.float64]
    delta: float
    method: tuple[str, ...]
    value_discretization: float
    refined: int


# --------------------------------------------------------------------------- calibration


def _family(mechanism: object) -> str:
    """The family's command-line name from a name or a class; a ValueError naming ``mechanism`` otherwise."""
    by_class: dict[type, str] = {
        GaussianMechanism: "gaussian",
        LaplaceMechanism: "laplace",
        SubsampledGaussianMechanism: "subsampled-gaussian",
    }
    if isinstance(mechanism, str) and mechanism in FAMILIES:
        return mechanism
    if isinstance(mechanism, type) and mechanism in by_class:
        return by_class[mechanism]
    raise ValueError(
        f"mechanism must be one of {', '.join(repr(f) for f in FAMILIES)} (or its class: GaussianMechanism, "
        f"LaplaceMechanism, SubsampledGaussianMechanism); got {mechanism!r}"
    )


def _check_rtol(rtol: object) -> float:
    r = check_positive_finite("rtol", rtol)
    if not 1e-6 <= r <= 0.1:
        raise ValueError(f"rtol must lie in [1e-6, 0.1]; got {r!r}")
    return r


def _gaussian_guess(epsilon: float, delta: float, count: int, sensitivity: float) -> float:
    """k Gaussian releases are one of sensitivity sqrt(k) Delta (rounded up): the analytic sigma for it, exact."""
    composed = GaussianMechanism(1.0, sensitivity).self_composition(count).sensitivity
    return analytic_gaussian_sigma(composed, epsilon, delta)


def _subsampled_guess(epsilon: float, delta: float, count: int, q: float, sensitivity: float) -> float:
    r"""The normal (CLT) approximation of DP-SGD: :math:`\mu = q\sqrt{T(e^{1/\sigma^2}-1)}`-GDP, solved for sigma."""
    mu = 1.0 / analytic_gaussian_sigma(1.0, epsilon, delta)  # the GDP mu that meets (epsilon, delta)
    t = 2.0 * math.log(mu) - 2.0 * math.log(q) - math.log(count)  # log(mu^2 / (q^2 T)): q^2 may underflow
    x = math.log1p(math.exp(t)) if t < 700.0 else t
    return sensitivity / math.sqrt(x) if x > 0.0 else MAX_NOISE_MULTIPLIER * sensitivity


def _laplace_guess(epsilon: float, delta: float, count: int, sensitivity: float) -> float:
    """The Gaussian approximation of k Laplace releases (mu = sqrt(k) Delta / b), at most basic composition's."""
    basic = count * sensitivity / epsilon
    return min(basic, math.sqrt(count) * sensitivity * analytic_gaussian_sigma(1.0, epsilon, delta))


class _Search:
    """The certified bisection of :func:`calibrate_noise` (see the module docstring)."""

    def __init__(self, build: Callable[[float], Mechanism], count: int, epsilon: float, delta: float) -> None:
        self.build, self.count, self.epsilon, self.delta = build, count, epsilon, delta
        self.feasible: tuple[float, PldBracket] | None = None  # certified upper <= target
        self.infeasible: tuple[float, PldBracket] | None = None  # certified lower > target
        self.points: list[tuple[float, float]] = []  # (log noise, log of the bracket's middle)
        self.probes = 0
        self.last: PldBracket | None = None  # the last probe's bracket
        self.setting = f"count {count}"  # named in a refusal (the caller adds the other parameters)

    def probe(self, noise: float, width: float) -> str:
        """Bracket the epsilon at ``noise``; ``"feasible"``, ``"infeasible"`` or ``"undecided"``."""
        self.probes += 1
        try:
            br = (
                PldAccountant(relative_width=width)
                .compose(cast(HasPrivacyLoss, self.build(noise)), self.count)
                .epsilon_bracket_details(self.delta)
            )
        except ValueError as exc:
            raise ValueError(
                f"epsilon {self.epsilon!r} at delta {self.delta!r}: the accountant refused the noise {noise!r} on "
                f"the way ({exc})"
            ) from None
        self.last = br
        mid = 0.5 * (br.lower + br.upper)
        if mid > 0.0:
            self.points.append((math.log(noise), math.log(mid)))
        if br.upper <= self.epsilon:
            if self.feasible is None or noise < self.feasible[0]:
                self.feasible = (noise, br)
            return "feasible"
        if br.lower > self.epsilon:
            if self.infeasible is None or noise > self.infeasible[0]:
                self.infeasible = (noise, br)
            return "infeasible"
        return "undecided"

    def slope(self, lo_x: float = math.nan, hi_x: float = math.nan) -> float:
        """d log epsilon / d log noise, clipped to [-20, -0.05]: between the probes at ``lo_x`` and ``hi_x`` (the
        ends of the noises' bracket) if given, else between the two probes farthest apart of the three nearest
        the target (-1 without two distinct probes)."""
        target = math.log(self.epsilon)
        if math.isfinite(lo_x) and math.isfinite(hi_x):
            ends = [p for p in self.points if p[0] in (lo_x, hi_x)]
            pts = [min(ends, key=lambda p: p[0]), max(ends, key=lambda p: p[0])] if ends else []
        else:
            near = sorted(self.points, key=lambda p: abs(p[1] - target))[:3]
            pts = [min(near, key=lambda p: p[0]), max(near, key=lambda p: p[0])] if near else []
        if len(pts) < 2 or abs(pts[0][0] - pts[1][0]) < 1e-12:
            return -1.0
        s = (pts[0][1] - pts[1][1]) / (pts[0][0] - pts[1][0])
        return min(max(s, -20.0), -0.05)

    def nearest(self) -> float:
        """The log noise of the probe whose epsilon was nearest the target."""
        target = math.log(self.epsilon)
        return min(self.points, key=lambda p: abs(p[1] - target))[0] if self.points else 0.0

    def root(self, slope: float) -> float:
        """The log noise where the epsilon is estimated to meet the target (secant through the nearest probe)."""
        target = math.log(self.epsilon)
        if not self.points:
            return 0.0
        x, y = min(self.points, key=lambda p: abs(p[1] - target))
        return x + (target - y) / slope


def calibrate_noise(
    mechanism: str | type[Mechanism],
    *,
    epsilon: float,
    delta: float,
    count: int,
    sampling_rate: float | None = None,
    sensitivity: float = 1.0,
    rtol: float = 1e-3,
) -> ComposedCalibration:
    r"""The smallest noise whose certified epsilon after ``count`` releases is at most ``epsilon``, within ``rtol``.

    ``sigma`` for ``count`` Gaussian releases or ``count`` Poisson-subsampled Gaussian steps (DP-SGD,
    ``sampling_rate`` q), ``scale`` for ``count`` Laplace releases: the returned ``noise`` has a certified
    epsilon (:class:`dpcore.PldAccountant`'s upper end: closed form for Gaussian releases, exact composition for
    Laplace releases within its range, connect-the-dots otherwise) at most ``epsilon`` at ``delta``, and at
    ``noise_below >= noise (1 - rtol)`` the certified lower end exceeds ``epsilon``: the true smallest noise
    lies in ``(noise_below, noise]`` (module docstring: monotonicity in the noise by post-processing, the
    search in :math:`\log` noise). The bound for the subsampled Gaussian assumes *Poisson* subsampling (each
    record independently with probability q); shuffled or fixed-size batches, as many training loops draw
    them, are not covered (Chua et al. 2024).

    Parameters
    ----------
    mechanism : str or class
        ``"gaussian"``, ``"laplace"`` or ``"subsampled-gaussian"``, or the class
        (:class:`dpcore.GaussianMechanism`, :class:`dpcore.LaplaceMechanism`,
        :class:`dpcore.SubsampledGaussianMechanism`).
    epsilon : float
        The target, finite and > 0 (at least :data:`MIN_GRID_EPSILON`, 0.01, for Laplace and the subsampled
        Gaussian); a target that needs noise / sensitivity above
        :data:`MAX_NOISE_MULTIPLIER` (1e4, subsampled Gaussian), or is met even at
        :data:`MIN_NOISE_MULTIPLIER` (1e-2: no smallest noise), is refused.
    delta : float
        In [1e-10, 1) (the PLD accountant's ``dpcore.pld.MIN_DELTA``).
    count : int
        The number of releases (steps) composed, an integer in [1, 2**63 - 1].
    sampling_rate : float, optional
        The Poisson sampling rate q in (0, 1]: required for ``"subsampled-gaussian"``, refused otherwise.
    sensitivity : float
        L2 (Gaussian) or L1 (Laplace) sensitivity, the clipping norm for DP-SGD; finite and > 0 (default 1).
        For Laplace and the subsampled Gaussian the noise searched (the range above, times the sensitivity)
        must stay within the normal doubles, or a ValueError names ``sensitivity``.
    rtol : float
        Relative tolerance on the noise, in [1e-6, 0.1] (default 1e-3).

    Returns
    -------
    ComposedCalibration
        The mechanism at the calibrated noise, the certified bracket there, and the search's bracket.

    Raises
    ------
    ValueError
        If a parameter is outside its range (naming it), ``mechanism`` is not one of the three families,
        ``sampling_rate`` is missing for (or given to) the wrong family, or ``epsilon`` cannot be reached
        within the supported noise range (naming ``epsilon``).

    Examples
    --------
    >>> import dpcore
    >>> cal = dpcore.calibrate_noise("subsampled-gaussian", epsilon=3.0, delta=1e-5, count=14062,
    ...                              sampling_rate=256 / 60000)
    >>> round(cal.noise, 3), cal.epsilon <= 3.0, cal.noise_below >= cal.noise * (1 - 1e-3)
    (0.969, True, True)
    """
    family = _family(mechanism)
    eps = check_positive_finite("epsilon", epsilon)
    d = check_probability_open("delta", delta)
    if d < MIN_DELTA:
        raise ValueError(f"delta must be >= {MIN_DELTA:g} (the PLD accountant's floor); got {d!r}")
    k = check_positive_int("count", count)
    sens = check_positive_finite("sensitivity", sensitivity)
    tol = _check_rtol(rtol)
    q: float | None = None
    if family == "subsampled-gaussian":
        if sampling_rate is None:
            raise ValueError("sampling_rate is required for the subsampled Gaussian (the Poisson rate q in (0, 1])")
        q = check_positive_finite("sampling_rate", sampling_rate)
        if q > 1.0:
            raise ValueError(f"sampling_rate must be in (0, 1]; got {q!r}")
    elif sampling_rate is not None:
        raise ValueError(f"sampling_rate applies only to the subsampled Gaussian; got {sampling_rate!r} for {family}")

    if family != "gaussian" and eps < MIN_GRID_EPSILON:
        raise ValueError(
            f"epsilon must be >= {MIN_GRID_EPSILON:g} for {family} (the accountant's absolute resolution below 0.1 "
            f"cannot decide a smaller target); got {eps!r}"
        )
    build: Callable[[float], Mechanism]
    if family == "gaussian":
        guess = _gaussian_guess(eps, d, k, sens)
        lo_limit, hi_limit = 0.0, math.inf  # the closed form answers for any double

        def build(x: float) -> Mechanism:
            return GaussianMechanism(x, sens)

    elif family == "laplace":
        guess = _laplace_guess(eps, d, k, sens)
        lo_limit, hi_limit = MIN_NOISE_MULTIPLIER * sens, k * sens / eps  # basic composition: always enough

        def build(x: float) -> Mechanism:
            return LaplaceMechanism(x, sens)

    else:
        assert q is not None
        rate = q
        guess = _subsampled_guess(eps, d, k, rate, sens)
        lo_limit, hi_limit = MIN_NOISE_MULTIPLIER * sens, MAX_NOISE_MULTIPLIER * sens

        def build(x: float) -> Mechanism:
            return SubsampledGaussianMechanism(x, rate, sens)

    if family != "gaussian" and not (lo_limit >= sys.float_info.min and hi_limit <= sys.float_info.max):
        # the noise searched is the multiplier times the sensitivity: at 1e308 the Laplace scale's upper end
        # overflowed and at 5e-324 the smallest noise underflowed to 0 (hostile inputs, issue 28)
        raise ValueError(
            f"sensitivity {sens!r}: the {FAMILIES[family]} searched, [{lo_limit:g}, {hi_limit:g}], leaves the normal "
            "doubles; rescale the query (the noise scales with the sensitivity)"
        )
    search = _Search(build, k, eps, d)
    search.setting = f"count {k}, sensitivity {sens!r}" + (f", sampling_rate {q!r}" if q is not None else "")
    _run_search(search, guess, tol, lo_limit, hi_limit, exact=family == "gaussian")
    assert search.feasible is not None and search.infeasible is not None
    noise, br = search.feasible
    below, br_below = search.infeasible
    return ComposedCalibration(
        mechanism=build(noise),
        parameter=FAMILIES[family],
        noise=noise,
        count=k,
        target_epsilon=eps,
        delta=d,
        epsilon=br.upper,
        epsilon_lower=br.lower,
        method=br.method,
        noise_below=below,
        epsilon_below_lower=br_below.lower,
        rtol=tol,
        probes=search.probes,
    )


def _run_search(s: _Search, guess: float, rtol: float, lo_limit: float, hi_limit: float, exact: bool) -> None:
    """Narrow ``s.feasible`` / ``s.infeasible`` until ``infeasible >= feasible * (1 - rtol)`` (module docstring).

    Each probe is a secant step on log epsilon against log noise, aimed just above the estimated root (to
    certify a feasible noise) or just below it (an infeasible one), at a bracket width just fine enough to
    decide it; where the bracket of noises did not halve over two probes, the next probe is its geometric
    middle (a bisection step), so the search ends whatever the secant does. An undecided probe is kept as a
    point for the secant. Its bracket also says how far the root can be (the bracket's ends over the slope,
    the slope taken 1.5 times flatter): where that span and a tenth of ``rtol`` each side fit in ``rtol``, the
    next two probes are just outside it, at the same width (decided there, they end the search: a probe
    that lands within 1e-5 of the root no longer costs three ever finer brackets); otherwise the same probe
    twice is asked at an eight times finer width.
    """
    a, b = 0.3 * rtol, 0.6 * rtol  # aim just above the root (feasible) and just below it (infeasible)
    fixed = 1e-9  # the closed forms' width (they ignore it)
    guess = min(max(guess, lo_limit), hi_limit)
    s.probe(guess, fixed if exact else _MAX_WIDTH)
    growth, widths, last, last_w = 0.0, [math.inf], math.nan, _MAX_WIDTH
    pending: list[tuple[float, float]] = []  # (log noise, width): the two probes around an undecided one
    while s.probes < _MAX_PROBES:
        f, i = s.feasible, s.infeasible
        if f is not None and i is not None and i[0] >= f[0] * (1.0 - rtol):
            return
        lo_x = math.log(i[0]) if i is not None else -math.inf
        hi_x = math.log(f[0]) if f is not None else math.inf
        if pending:
            x, w = pending.pop(0)
            if lo_x < x < hi_x and lo_limit < math.exp(x) < hi_limit:
                s.probe(math.exp(x), w)
            continue
        both = f is not None and i is not None
        slope = s.slope(lo_x, hi_x) if both else s.slope()
        root = min(max(s.root(slope), lo_x), hi_x)  # the secant's root, inside the certified bracket
        if f is None:  # find a feasible noise: above the root, above every infeasible one
            x = max(root + a + growth, lo_x + rtol)
            growth = max(2.0 * growth, 0.01)
        elif i is None:  # find an infeasible noise: below the root, below every feasible one
            x = min(root - b - growth, hi_x - rtol)
            growth = max(2.0 * growth, 0.01)
        else:
            widths.append(hi_x - lo_x)
            up, down = root + a, root - b
            x = up if hi_x - up > 0 and (up - lo_x) <= (hi_x - down) else down
            if not lo_x < x < hi_x or (len(widths) > 2 and widths[-1] > 0.5 * widths[-3]):
                x = 0.5 * (lo_x + hi_x)  # bisection: the secant is not narrowing the bracket fast enough
        noise = math.exp(x)
        if noise >= hi_limit:
            if f is None and s.probe(hi_limit, fixed if exact else _MAX_WIDTH) != "feasible":
                raise ValueError(
                    f"epsilon {s.epsilon!r} at delta {s.delta!r} ({s.setting}) cannot be reached within the "
                    "supported noise: "
                    f"even noise {hi_limit!r} (noise / sensitivity {MAX_NOISE_MULTIPLIER:g}) does not certify it"
                )
            continue
        if noise <= lo_limit:
            if i is None and s.probe(lo_limit, fixed if exact else _MAX_WIDTH) != "infeasible":
                raise ValueError(
                    f"epsilon {s.epsilon!r} at delta {s.delta!r} ({s.setting}) is met even at the smallest noise "
                    "searched, "
                    f"{lo_limit!r} (noise / sensitivity {MIN_NOISE_MULTIPLIER:g}): no smallest noise to calibrate"
                )
            continue
        # the bracket must be narrow enough to decide: epsilon there differs from the target by ~|slope| |x - root|,
        # the root known to a tenth of the noises' bracket or a quarter of the secant's extrapolation; a probe meant
        # to be feasible needs only the upper end, refined far below the width (3 times coarser)
        known = 0.1 * (hi_x - lo_x) if both else 0.25 * abs(root - s.nearest())
        need = 0.4 * abs(slope) * max(abs(x - root), known) * (3.0 if x > root else 1.0)
        w = min(max(need, _MIN_WIDTH), _MAX_WIDTH)
        if abs(x - last) <= 1e-12:  # the same probe again: it was undecided, ask for a finer bracket
            w = max(min(w, last_w / 8.0), _MIN_WIDTH)
        last, last_w = x, w
        if s.probe(noise, fixed if exact else w) == "undecided" and s.last is not None and s.last.lower > 0.0:
            flat = abs(slope) / 1.5  # the root within (log upper - log target) / flat above x, and so below
            above = (math.log(s.last.upper) - math.log(s.epsilon)) / flat + 0.1 * rtol
            below = (math.log(s.epsilon) - math.log(s.last.lower)) / flat + 0.1 * rtol
            if above + below <= -math.log1p(-rtol):
                pending = [(x + above, w), (x - below, w)]
    raise ValueError(f"rtol {rtol!r}: the search did not narrow to it in {_MAX_PROBES} probes; ask for a larger rtol")


# --------------------------------------------------------------------------- epsilon over a run


def _check_steps(steps: object) -> NDArray[np.int64]:
    try:
        items = list(steps)  # type: ignore[call-overload]
    except TypeError:
        raise ValueError(f"steps must be a sequence of integers >= 1; got {steps!r}") from None
    if not items:
        raise ValueError("steps must hold at least one step count; got an empty sequence")
    return np.array([check_positive_int("steps", k) for k in items], dtype=np.int64)


def _direction_laws(
    losses: Sequence[Any], h: float, tau: float, grids: dict[tuple[str, int, float, float], Any] | None = None
) -> list[tuple[tuple[Any, float], tuple[Any, float], float]] | None:
    """Per direction: (connect-the-dots law, mass at +inf), (optimistic twin, its rounding), the loss's supremum
    (``grids``: an accountant's, holding the losses' grids at its last step, :func:`dpcore.pld._grid`)."""
    out = []
    for loss in losses:
        twin = _grid(grids, "twin", loss, h, tau)
        if twin is None:
            return None
        out.append((_grid(grids, "dots", loss, h, tau), twin, float(loss.upper)))
    return out


def _run_roots(
    runs: Sequence[_Run],
    counts: list[int],
    targets: Sequence[NDArray[np.float64]],
    h: float,
    guesses: NDArray[np.float64] | None,
    anchor: tuple[int, float] | None,
    near: bool = False,
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """For every count: the largest over directions (one :class:`_Run` and target array a direction) of the
    smallest eps with delta <= target, as :func:`_inverse` finds it on each count's profile, and the direction
    it came from.

    A direction whose delta at the largest root so far is already within its target has its root at or below
    it (delta is non-increasing): one evaluation instead of a search. The counts of a run's batch are searched
    together (:meth:`_RunProfile.inverse`), starting from ``guesses`` (or, for the first direction, the roots of
    the previous one), or, with none, from nine counts searched across their brackets and interpolated in
    ``sqrt(count)`` with ``anchor`` (a count and its root); a count the batch leaves, and every count outside
    it, is searched alone.
    """
    index = {k: i for i, k in enumerate(counts)}
    best = np.full(len(counts), -np.inf)
    decider = np.zeros(len(counts), dtype=np.intp)
    for direction, (run, target) in enumerate(zip(runs, targets, strict=True)):
        for batch, batch_counts in run.chunks():
            at = np.array([index[k] for k in batch_counts], dtype=np.intp)
            rows = np.arange(at.size)
            need = ~np.isfinite(best[at])
            check = np.flatnonzero(~need)
            if check.size:
                need[check] = batch.at(rows[check], best[at[check]])[0] > target[at[check]]
            sub = np.flatnonzero(need)
            if sub.size:
                start = best[at[sub]] if np.isfinite(best[at[sub]]).all() else None  # the root lies above
                close = start is None and near
                if start is None and guesses is not None:
                    start = guesses[at[sub]]
                sizes = np.array(batch_counts, dtype=float)[sub]
                roots = _batch_roots(batch, rows[sub], target[at[sub]], sizes, start, anchor, close)
                for s in np.flatnonzero(np.isnan(roots)).tolist():  # the root above the search range: alone
                    profile = _profile_of(batch.composed(int(rows[sub[s]])), h)
                    roots[s] = _inverse(profile, float(target[at[sub[s]]]), -1e4, 1e4)
                best[at[sub]], decider[at[sub]] = roots, direction
        for k in run.single:
            i = index[k]
            profile = _profile_of(run.composed(k), h)
            if math.isfinite(best[i]) and profile(float(best[i])) <= target[i]:
                continue
            hint = None if guesses is None else float(guesses[i])
            best[i], decider[i] = _inverse(profile, float(target[i]), -1e4, 1e4, hint), direction
    return best, decider


def _batch_roots(
    batch: _RunProfile,
    rows: NDArray[np.intp],
    target: NDArray[np.float64],
    counts: NDArray[np.float64],
    guesses: NDArray[np.float64] | None,
    anchor: tuple[int, float] | None,
    near: bool,
) -> NDArray[np.float64]:
    """:meth:`_RunProfile.inverse` on ``rows`` over ``[-1e4, 1e4]``; without ``guesses``, nine rows first
    (searched across their brackets), the others from their roots interpolated in ``sqrt(count)``."""
    if guesses is not None or rows.size <= 12:
        return batch.inverse(rows, target, -1e4, 1e4, guesses, near=near)
    roots = np.full(rows.size, np.nan)
    ax, ay = (np.array([math.sqrt(anchor[0])]), np.array([anchor[1]])) if anchor else (np.zeros(0), np.zeros(0))
    for spacing in (12, 3, 1):  # waves: each interpolates in sqrt(count) between the roots found before
        wave = np.flatnonzero(np.isnan(roots) & (np.arange(rows.size) % spacing == 0))
        if spacing == 12:
            wave = np.union1d(wave, [rows.size - 1])
        found = np.flatnonzero(np.isfinite(roots))
        x, y = np.concatenate((ax, np.sqrt(counts[found]))), np.concatenate((ay, roots[found]))
        order = np.argsort(x)
        guess = np.interp(np.sqrt(counts[wave]), x[order], y[order]) if x.size >= 2 else None
        roots[wave] = batch.inverse(rows[wave], target[wave], -1e4, 1e4, guess, near=spacing == 1)
    return roots


def _shared_checkpoints(
    laws: list[tuple[tuple[Any, float], tuple[Any, float], float]],
    steps: list[int],
    d: float,
    h: float,
    tau_fft: float,
    width: float,
    query: Callable[[int], PldBracket],
    answers: dict[int, tuple[float, float, str]],
) -> int:
    """The brackets at ``steps`` from each direction's law and twin composed at every count on one grid
    (module docstring), into ``answers`` (which holds the largest count's, an anchor for the searches); a
    checkpoint too wide there is queried on its own. Returns how many.

    The true epsilon is the largest of the directions', so each direction's twin gives a certified lower end;
    only the twins of the directions that decide some checkpoint's upper end are composed (the others' lower
    ends lie below, within the bracket: a direction that decides no upper end is left out, a law fewer).
    """
    top = max(answers)
    top_lower, top_upper, _ = answers[top]
    counts = np.array(steps, dtype=np.int64)
    plan = _RunPlan([law for (dots, _), (twin, _), _ in laws for law in (dots, twin)], steps, tau_fft, h)
    above = [d - np.array([_dots_excess([(inf, k)], tau_fft) for k in steps]) for (_, inf), _, _ in laws]
    below = [d + np.array([_twin_slack([(r, k)], tau_fft) for k in steps]) for _, (_, r), _ in laws]
    dots_runs = [plan.run(2 * i) for i in range(len(laws))]
    uppers, decider = _run_roots(dots_runs, steps, above, h, None, (top, top_upper))
    deciding = sorted(set(decider.tolist()))
    scale = top_lower / top_upper if top_upper > 0.0 else 1.0  # the lower ends sit just below the upper ones
    twin_runs = [plan.run(2 * i + 1) for i in deciding]
    guess = uppers * scale
    roots, _ = _run_roots(twin_runs, steps, [below[i] for i in deciding], h, guess, (top, top_lower), near=True)
    caps = np.max([counts * sup for _, _, sup in laws], axis=0).astype(float)
    refined = 0
    for k, root, up, cap in zip(steps, roots.tolist(), uppers.tolist(), caps.tolist(), strict=True):
        lower, upper = _consistent(min(max(_below_root(root), 0.0), cap), min(max(up, 0.0), cap))
        if upper - lower > width * max(lower, EPSILON_FLOOR) and upper > 0.0:
            br = query(k)  # the shared grid is too coarse here: this checkpoint's own refinement
            answers[k] = (br.lower, br.upper, br.method)
            refined += 1
        else:
            answers[k] = (lower, upper, "pld-shared")
    return refined


def epsilon_over_run(
    mechanism: Mechanism, steps: Sequence[int], delta: float, *, relative_width: float = 1e-3
) -> RunEpsilons:
    r"""Certified epsilon at ``delta`` after each number of releases in ``steps`` of one mechanism.

    One accountant query at the largest checkpoint picks the grid; every direction's loss is discretised once
    on it (connect-the-dots and its optimistic twin) and composed ``k`` times for each checkpoint ``k``: the
    same certificate as a separate query on that grid (module docstring). A checkpoint whose bracket is
    wider than ``relative_width`` (relative to its lower end, or to 0.1 below it, as the accountant's) is
    queried on its own. Closed forms (Gaussian releases, Laplace releases within the exact composition's range)
    are used where the accountant would.

    Parameters
    ----------
    mechanism : Mechanism
        A :mod:`dpcore.mechanisms` object with ``privacy_losses()`` (e.g. one DP-SGD step,
        :class:`dpcore.SubsampledGaussianMechanism`, whose bound assumes Poisson subsampling).
    steps : sequence of int
        The checkpoints, each an integer in [1, 2**63 - 1], in any order, repeats allowed; not empty.
    delta : float
        In [1e-10, 1) (the PLD accountant's ``dpcore.pld.MIN_DELTA``).
    relative_width : float
        The bracket's target width, as :class:`dpcore.PldAccountant`'s, > 0 (default 1e-3).

    Returns
    -------
    RunEpsilons
        ``epsilon`` (certified upper ends) and ``epsilon_lower`` per checkpoint, in the order of ``steps``.

    Raises
    ------
    ValueError
        If ``steps`` is empty or holds a non-integer or a value < 1, ``delta`` is outside [1e-10, 1),
        ``relative_width`` is not > 0, ``mechanism`` has no ``privacy_losses()``, or the accountant refuses a
        checkpoint (as :meth:`dpcore.pld.PldAccountant.epsilon_bracket_details`).
    """
    ks = _check_steps(steps)
    d = check_probability_open("delta", delta)
    if d < MIN_DELTA:
        raise ValueError(f"delta must be >= {MIN_DELTA:g} (the PLD accountant's floor); got {d!r}")
    width = check_positive_finite("relative_width", relative_width)
    if not callable(getattr(mechanism, "privacy_losses", None)):
        raise ValueError(f"mechanism must have privacy_losses() (a dpcore mechanism); got {mechanism!r}")

    def accountant(k: int) -> PldAccountant:
        return PldAccountant(relative_width=width).compose(cast(HasPrivacyLoss, mechanism), k)

    def query(k: int) -> PldBracket:
        return accountant(k).epsilon_bracket_details(d)

    unique = sorted({int(k) for k in ks})
    top = unique[-1]
    acc = accountant(top)
    first = acc.epsilon_bracket_details(d)
    answers: dict[int, tuple[float, float, str]] = {top: (first.lower, first.upper, first.method)}
    h, refined = 0.0, 0
    laws = None
    if first.method == "pld" and first.hoeffding_t == 0.0:
        h = first.value_discretization
        eta = acc._dots_eta(d)  # the accountant's connect-the-dots and twin mass
        # the accountant's own losses (one a direction, composed top times), whose grids at its last step it
        # keeps: the same laws, not built again; otherwise the mechanism's
        parts = acc._discretised()
        mine = [p[0][0] for p in parts] if all(len(p) == 1 and p[0][1] == top for p in parts) else None
        losses, grids = (mine, acc._grids) if mine else (mechanism.privacy_losses(), None)  # type: ignore[attr-defined]
        laws = _direction_laws(losses, h, _part_tau(eta, top), grids)
        tau_fft = _fft_tau(eta)
    if laws is None:  # a closed form, or a loss without a twin: the accountant, checkpoint by checkpoint
        for k in unique[:-1]:
            br = query(k)
            answers[k] = (br.lower, br.upper, br.method)
    elif len(unique) > 1:
        refined = _shared_checkpoints(laws, unique[:-1], d, h, tau_fft, width, query, answers)
    return RunEpsilons(
        steps=ks,
        epsilon=np.array([answers[int(k)][1] for k in ks]),
        epsilon_lower=np.array([answers[int(k)][0] for k in ks]),
        delta=d,
        method=tuple(answers[int(k)][2] for k in ks),
        value_discretization=h,
        refined=refined,
    )
