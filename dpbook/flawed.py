"""Deliberately flawed mechanisms, reproduced from the seeds, for negative controls.

Each function here implements a mistake that a reader who trusted a seed
could make. The chapters use them to show that the book's checks *catch*
such mistakes, and the auditing chapter audits them. **Never use them to
release data.** The second half holds miscalibrated twins of the statistical
checks (overconfident variants of :mod:`dpcore.montecarlo` and
:func:`dpcore.audit_epsilon`), which the calibration experiments of
:mod:`dpbook.calibration` must reject.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcore._release import release_with_noise
from dpcore._validation import RNGLike, check_positive_finite, check_probability_open
from dpcore.auditing import AuditResult, audit_epsilon
from dpcore.montecarlo import (
    CheckResult,
    Sampler,
    check_bounded_mean,
    check_cdf,
    check_mean,
    check_probability,
    check_variance,
    clopper_pearson_bounds,
    probability_result,
)

__all__ = [
    "laplace_stray_factor_two",
    "laplace_per_coordinate_sensitivity",
    "gaussian_variance_as_std",
    "seed_002_sigma",
    # miscalibrated twins of the statistical checks (see dpbook.calibration)
    "probability_result_unsplit_alpha",
    "check_probability_unsplit_alpha",
    "clopper_pearson_interval_unsplit",
    "check_mean_alpha_in_numerator",
    "check_bounded_mean_hoeffding_without_sqrt",
    "check_variance_pair_without_half",
    "check_cdf_dkw_without_two",
    "audit_epsilon_confidence_as_alpha",
    "audit_epsilon_ignoring_delta",
    # dependent streams (see dpcore.independence)
    "ReseededEachChunk",
    "AntitheticPairs",
    "SortedByMagnitude",
    "StickySigns",
]


def laplace_stray_factor_two(
    value: ArrayLike, sensitivity: float, epsilon: float, rng: RNGLike = None
) -> float | NDArray[np.float64]:
    r"""Laplace noise of scale :math:`\Delta/(2\varepsilon)`: the stray factor 2 of seed 000.

    Seed 000's ratio derivation writes :math:`e^{-\frac{\varepsilon}{2\Delta f}(\dots)}`;
    an implementer who trusted it would halve the scale. The result is only
    :math:`2\varepsilon`-DP.

    Raises
    ------
    ValueError
        On non-positive or non-finite ``sensitivity``/``epsilon`` or non-finite ``value``.
    """
    scale = check_positive_finite("sensitivity", sensitivity) / (2 * check_positive_finite("epsilon", epsilon))
    return release_with_noise(value, lambda gen, shape: gen.laplace(0.0, scale, size=shape), rng)


def laplace_per_coordinate_sensitivity(
    value: ArrayLike, per_coordinate_sensitivity: float, epsilon: float, rng: RNGLike = None
) -> float | NDArray[np.float64]:
    r"""A d-dimensional Laplace release calibrated to the per-coordinate sensitivity.

    The correct scale is :math:`\Delta_1 f/\varepsilon` with the L1 sensitivity
    of the whole vector; using the per-coordinate bound :math:`\Delta_\infty`
    instead gives only :math:`(\Delta_1/\Delta_\infty)\,\varepsilon`-DP
    (up to :math:`d\varepsilon`).

    Raises
    ------
    ValueError
        On invalid parameters or non-finite ``value``.
    """
    scale = check_positive_finite("per_coordinate_sensitivity", per_coordinate_sensitivity) / check_positive_finite(
        "epsilon", epsilon
    )
    return release_with_noise(value, lambda gen, shape: gen.laplace(0.0, scale, size=shape), rng)


def gaussian_variance_as_std(value: ArrayLike, sigma: float, rng: RNGLike = None) -> float | NDArray[np.float64]:
    r"""Seed 002's sampling line ``numpy.random.normal(0, sigma ** 2)``.

    ``numpy.random.normal`` takes the *standard deviation* as its second
    argument, so this adds noise of standard deviation :math:`\sigma^2`
    instead of :math:`\sigma`: too little whenever :math:`\sigma < 1`.

    Raises
    ------
    ValueError
        On non-positive or non-finite ``sigma`` or non-finite ``value``.
    """
    sigma = check_positive_finite("sigma", sigma)
    return release_with_noise(value, lambda gen, shape: gen.normal(0.0, sigma**2, size=shape), rng)


def seed_002_sigma(
    epsilon: float, delta: float, sensitivity: float = 1.0, *, fixed: bool = False, full_output: bool = False
) -> Any:
    """Seed 002's analytic-Gaussian code, as a function of (epsilon, delta, sensitivity).

    ``fixed=False`` keeps the seed's ``np.sqrt(x**2 + 1)``; ``fixed=True`` uses
    ``np.sqrt(x**2 + epsilon)``, as the seed's own equation says. One change
    is needed to run it at all on NumPy >= 2.4: ``fsolve`` passes ``x`` as a
    shape-(1,) array, which ``quad`` no longer accepts as an integration limit,
    so ``F`` takes its single element. ``full_output=True`` returns
    ``(sigma, ier, msg)`` of ``fsolve``.
    """
    from scipy import optimize
    from scipy.integrate import quad

    k = epsilon if fixed else 1

    def F(x):  # type: ignore[no-untyped-def]
        x = float(np.asarray(x).reshape(-1)[0])  # needed on NumPy >= 2.4
        return quad(lambda t: np.exp(-(t**2)), 0, x)[0]

    def G(x, C):  # type: ignore[no-untyped-def]
        return (math.e**epsilon) * F(np.sqrt(x**2 + k)) - F(x) - C

    C = (2 * delta + math.e**epsilon - 1) * math.sqrt(math.pi) / 2
    X, info, ier, msg = optimize.fsolve(lambda x: G(x, C), np.array([2.0]), full_output=True)
    sig = sensitivity / (math.sqrt(2) * (math.sqrt(X[0] ** 2 + epsilon) - X[0]))
    return (sig, ier, msg) if full_output else sig


# --------------------------------------------------------------------------- miscalibrated twins
#
# Each twin below is a thin variant of a real check of dpcore.montecarlo or
# dpcore.auditing with one plausible fault that makes it *overconfident*: its
# false-alarm rate on a true claim exceeds the alpha it reports. The
# calibration experiments (dpbook.calibration, tests/test_calibration.py)
# must reject every one of them while accepting the real check.


def _twice(alpha: float) -> float:
    a = check_probability_open("alpha", alpha)
    if 2 * a >= 1:
        raise ValueError(f"alpha must be < 1/2 for this twin; got {alpha}")
    return 2 * a


def probability_result_unsplit_alpha(
    hits: int,
    n: int,
    claimed: float,
    *,
    alternative: Literal["two-sided", "less", "greater"] = "two-sided",
    alpha: float = 1e-6,
    name: str = "probability (alpha not split)",
) -> CheckResult:
    r"""Twin of :func:`dpcore.probability_result` that puts ``alpha`` on *each* end of a two-sided test.

    The two-sided Clopper--Pearson test must use :math:`\alpha/2` per end;
    this twin uses :math:`\alpha` per end, so its false-alarm rate is up to
    :math:`2\alpha` while it reports ``alpha``. One-sided tests are unchanged.

    Raises
    ------
    ValueError
        As :func:`dpcore.probability_result`, or if ``alpha`` >= 1/2.
    """
    if alternative != "two-sided":
        return probability_result(hits, n, claimed, alternative=alternative, alpha=alpha, name=name)
    res = probability_result(hits, n, claimed, alternative=alternative, alpha=_twice(alpha), name=name)
    return replace(res, alpha=float(alpha))


def check_probability_unsplit_alpha(
    sampler: Sampler,
    event: Callable[[NDArray[Any]], NDArray[np.bool_]],
    n: int,
    claimed: float,
    *,
    alternative: Literal["two-sided", "less", "greater"] = "two-sided",
    alpha: float = 1e-6,
    rng: RNGLike = None,
    chunk_size: int = 1 << 18,
    name: str = "probability (alpha not split)",
) -> CheckResult:
    r"""Twin of :func:`dpcore.check_probability` with :math:`\alpha` per end of a two-sided test.

    Raises
    ------
    ValueError
        As :func:`dpcore.check_probability`, or if ``alpha`` >= 1/2.
    """
    a = _twice(alpha) if alternative == "two-sided" else alpha
    res = check_probability(
        sampler, event, n, claimed, alternative=alternative, alpha=a, rng=rng, chunk_size=chunk_size, name=name
    )
    return replace(res, alpha=float(alpha))


def clopper_pearson_interval_unsplit(
    hits: ArrayLike, n: int, alpha: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""A "1 - alpha" two-sided Clopper--Pearson interval with each bound at ``alpha`` (not alpha/2).

    Its non-coverage is up to :math:`2\alpha`.

    Raises
    ------
    ValueError
        As :func:`dpcore.montecarlo.clopper_pearson_bounds`.
    """
    return clopper_pearson_bounds(hits, n, alpha)


def check_mean_alpha_in_numerator(
    sampler: Sampler,
    n: int,
    claimed: float,
    *,
    variance_bound: float,
    alpha: float = 1e-6,
    rng: RNGLike = None,
    chunk_size: int = 1 << 18,
    name: str = "mean (alpha in the numerator)",
) -> CheckResult:
    r"""Twin of :func:`dpcore.check_mean` whose radius is too small by the factor ``alpha``.

    With one block the Chebyshev radius is :math:`\sigma/\sqrt{n\alpha}`;
    writing it :math:`\sigma\sqrt{\alpha/n}` (alpha in the numerator)
    multiplies it by :math:`\alpha`. Implemented as the real check with
    variance bound :math:`\alpha^2\sigma^2`, which scales every median-of-means
    radius by exactly :math:`\alpha` and keeps the block count.

    Raises
    ------
    ValueError
        As :func:`dpcore.check_mean`.
    """
    a = check_probability_open("alpha", alpha)
    v = check_positive_finite("variance_bound", variance_bound)
    res = check_mean(sampler, n, claimed, variance_bound=v * a * a, alpha=a, rng=rng, chunk_size=chunk_size, name=name)
    return replace(res, details={**res.details, "variance_bound": v})


def check_bounded_mean_hoeffding_without_sqrt(
    sampler: Sampler,
    n: int,
    claimed: float,
    *,
    lower: float,
    upper: float,
    alpha: float = 1e-6,
    rng: RNGLike = None,
    chunk_size: int = 1 << 18,
    name: str = "bounded mean (Hoeffding without sqrt)",
) -> CheckResult:
    r"""Twin of :func:`dpcore.check_bounded_mean` whose Hoeffding radius lost its square root.

    :math:`r_H = R\ln(4/\alpha)/(2n)` instead of :math:`R\sqrt{\ln(4/\alpha)/(2n)}`:
    far too small once :math:`n > \ln(4/\alpha)/2`. The interval is
    :math:`\bar X \pm \min(r_H, r_B)` as in the real check.

    Raises
    ------
    ValueError
        As :func:`dpcore.check_bounded_mean`.
    """
    res = check_bounded_mean(
        sampler, n, claimed, lower=lower, upper=upper, alpha=alpha, rng=rng, chunk_size=chunk_size, name=name
    )
    r_h = (float(upper) - float(lower)) * math.log(4 / res.alpha) / (2 * res.n)
    r = min(r_h, float(res.details["radius_bernstein"]))
    return replace(
        res,
        ci_low=res.estimate - r,
        ci_high=res.estimate + r,
        passed=bool(abs(res.estimate - float(claimed)) <= r),
        details={**res.details, "radius_hoeffding": r_h},
    )


def check_variance_pair_without_half(
    sampler: Sampler,
    n: int,
    claimed: float,
    *,
    kurtosis_bound: float,
    alpha: float = 1e-6,
    rng: RNGLike = None,
    chunk_size: int = 1 << 18,
    name: str = "variance (pair statistic without 1/2)",
) -> CheckResult:
    r"""Twin of :func:`dpcore.check_variance` whose pair statistic is :math:`(X_1 - X_2)^2` (no 1/2).

    Its mean is :math:`2\sigma^2`, so a true claim is rejected almost surely
    once ``n`` is moderate. Implemented by feeding the real check the samples
    times :math:`\sqrt 2`.

    Raises
    ------
    ValueError
        As :func:`dpcore.check_variance`.
    """
    root2 = math.sqrt(2.0)

    def scaled(gen: np.random.Generator, size: int) -> NDArray[np.float64]:
        return root2 * np.asarray(sampler(gen, size), dtype=float)

    return check_variance(
        scaled, n, claimed, kurtosis_bound=kurtosis_bound, alpha=alpha, rng=rng, chunk_size=chunk_size, name=name
    )


def check_cdf_dkw_without_two(
    sampler: Sampler,
    n: int,
    cdf: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    grid: NDArray[np.float64] | None = None,
    grid_size: int = 4097,
    alpha: float = 1e-6,
    rng: RNGLike = None,
    chunk_size: int = 1 << 18,
    name: str = "CDF (DKW without the factor 2)",
) -> CheckResult:
    r"""Twin of :func:`dpcore.check_cdf` whose DKW radius drops the factor 2 of the two-sided bound.

    :math:`t = \sqrt{\ln(1/\alpha)/(2n)}` (from :math:`e^{-2nt^2} = \alpha`,
    the one-sided bound) instead of :math:`\sqrt{\ln(2/\alpha)/(2n)}`; the
    false-alarm rate tends to :math:`2\alpha`. Implemented as the real check
    at level :math:`2\alpha`, whose radius is exactly that.

    Raises
    ------
    ValueError
        As :func:`dpcore.check_cdf`, or if ``alpha`` >= 1/2.
    """
    res = check_cdf(
        sampler, n, cdf, grid=grid, grid_size=grid_size, alpha=_twice(alpha), rng=rng, chunk_size=chunk_size, name=name
    )
    return replace(res, alpha=float(alpha))


def audit_epsilon_confidence_as_alpha(
    mechanism: Callable[[Any, int, np.random.Generator], NDArray[Any]],
    d: Any,
    d_prime: Any,
    n_samples: int,
    *,
    confidence: float = 0.95,
    **kwargs: Any,
) -> AuditResult:
    r"""Twin of :func:`dpcore.audit_epsilon` that passes ``alpha`` where the confidence is due.

    Calls the auditor with ``confidence = 1 - confidence`` (e.g. 0.05 where
    0.95 was meant) and reports the intended confidence: each Clopper--Pearson
    bound is then at level :math:`(1-\alpha)/(2m)` instead of :math:`\alpha/(2m)`.

    Raises
    ------
    ValueError
        As :func:`dpcore.audit_epsilon`.
    """
    c = check_probability_open("confidence", confidence)
    res = audit_epsilon(mechanism, d, d_prime, n_samples, confidence=1.0 - c, **kwargs)
    return replace(res, confidence=c)


def audit_epsilon_ignoring_delta(
    mechanism: Callable[[Any, int, np.random.Generator], NDArray[Any]],
    d: Any,
    d_prime: Any,
    n_samples: int,
    *,
    delta: float = 0.0,
    **kwargs: Any,
) -> AuditResult:
    r"""Twin of :func:`dpcore.audit_epsilon` that drops :math:`\delta` from the bound.

    Reports :math:`\ln(p^{lo}/q^{hi})` where :math:`\ln((p^{lo}-\delta)/q^{hi})`
    is due, i.e. audits the mechanism as if it claimed pure
    :math:`\varepsilon`-DP: for a Gaussian mechanism, whose far tails have
    unbounded likelihood ratio, it overstates epsilon almost surely.

    Raises
    ------
    ValueError
        As :func:`dpcore.audit_epsilon`.
    """
    delta_f = float(delta)
    if not (0.0 <= delta_f < 1.0):
        raise ValueError(f"delta must lie in [0, 1); got {delta}")
    res = audit_epsilon(mechanism, d, d_prime, n_samples, delta=0.0, **kwargs)
    return replace(res, delta=delta_f)


# --------------------------------------------------------------------------- dependent streams
# Twins of a correct sampler ``sampler(gen, size)`` whose every marginal law is right but whose
# draws are not independent; the exact tests of :mod:`dpcore.independence` must reject them.


class ReseededEachChunk:
    """A sampler re-seeded from the same ``seed`` on every call: each chunk repeats the stream.

    The slip of writing ``numpy.random.default_rng(seed)`` inside the chunk loop.
    """

    def __init__(self, sampler: Sampler, seed: int = 0) -> None:
        self.sampler = sampler
        self.seed = int(seed)

    def __call__(self, gen: np.random.Generator, size: int) -> NDArray[Any]:
        return np.asarray(self.sampler(np.random.default_rng(self.seed), size))


class AntitheticPairs:
    """Draws in antithetic pairs ``y, -y`` (variance reduction): right marginals, dependent pairs.

    Valid only for laws symmetric about 0, whose marginals it then keeps exact.
    """

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler

    def __call__(self, gen: np.random.Generator, size: int) -> NDArray[Any]:
        y = np.asarray(self.sampler(gen, (size + 1) // 2))
        out = np.empty(2 * y.size, dtype=y.dtype)
        out[0::2], out[1::2] = y, -y
        return out[:size]


class SortedByMagnitude:
    """Each call's draws returned in increasing magnitude (output order depends on the values)."""

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler

    def __call__(self, gen: np.random.Generator, size: int) -> NDArray[Any]:
        x = np.asarray(self.sampler(gen, size))
        return x[np.argsort(np.abs(x), kind="stable")]


class StickySigns:
    r"""Magnitudes of ``sampler``, signs from a Markov chain that keeps the previous sign w.p. ``stay``.

    For a law symmetric about 0 without an atom at 0 each marginal is right,
    and the sign changes are i.i.d. Bernoulli(``1 - stay``) instead of
    Bernoulli(1/2).
    """

    def __init__(self, sampler: Sampler, stay: float = 0.75) -> None:
        self.sampler = sampler
        self.stay = check_probability_open("stay", stay)

    def __call__(self, gen: np.random.Generator, size: int) -> NDArray[Any]:
        mag = np.abs(np.asarray(self.sampler(gen, size), dtype=float))
        flips = gen.random(size) >= self.stay
        flips[0] = gen.random() < 0.5
        sign = np.where(np.cumsum(flips) % 2 == 0, 1.0, -1.0)
        return sign * mag
