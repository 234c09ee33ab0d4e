r"""Event-ratio confidence bounds from samples, for audits and Monte Carlo checks of a privacy claim.

For two samples, of :math:`M(D)` and of :math:`M(D')`, and a family of events
:math:`S_k` (intervals here): Clopper--Pearson bounds on each event
probability, combined by a union bound into simultaneous confidence intervals
for every log ratio :math:`\log P[M(D)\in S_k]/P[M(D')\in S_k]`
(:func:`event_ratio_bounds`, :func:`interval_counts`,
:func:`sample_interval_ratio_bounds`), and the probability that such a test
misses a violation of a given size (:func:`event_detection_miss`). The
auditor, :func:`dpcore.audit_epsilon`, is built on them.

Reference: Clopper & Pearson (1934).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._limits import check_limit, check_limit_value
from ._validation import (
    check_alpha,
    check_finite_array,
    check_positive_finite,
    check_positive_int,
    check_real,
)
from .montecarlo import CheckResult, clopper_pearson_bounds
from .privacy_loss import _validate_interval

#: Largest ``epsilon`` of :func:`event_detection_miss`: log of the largest double, where e^epsilon overflows.
_MAX_LOG = math.log(float(np.finfo(np.float64).max))

#: Default ``max_samples`` of :func:`event_detection_miss` (about 19 s at this size on the build machine).
MAX_MISS_SAMPLES = 10**8

__all__ = [
    "interval_counts",
    "EventRatioBounds",
    "event_ratio_bounds",
    "sample_interval_ratio_bounds",
    "event_detection_miss",
]


def interval_counts(samples: ArrayLike, lower: ArrayLike, upper: ArrayLike) -> NDArray[np.int64]:
    r"""Count the samples in each interval :math:`(\mathrm{lower}_k, \mathrm{upper}_k]`.

    The samples are sorted once; each count is then two binary searches, so
    ``m`` intervals cost :math:`O((n + m)\log n)`.

    Raises
    ------
    ValueError
        If ``samples`` is not a non-empty 1-D finite array, or the intervals
        are invalid (see :func:`laplace_interval_log_probability`).
    """
    xs = check_finite_array("samples", samples)
    if xs.ndim != 1 or xs.size == 0:
        raise ValueError(f"samples must be a non-empty 1-D array; got shape {xs.shape}")
    lo, hi = _validate_interval(lower, upper)
    lo, hi = np.broadcast_arrays(lo, hi)
    xs = np.sort(xs)
    return (np.searchsorted(xs, hi, side="right") - np.searchsorted(xs, lo, side="right")).astype(np.int64)


@dataclass(frozen=True)
class EventRatioBounds:
    r"""Simultaneous confidence intervals for event log ratios, from sample counts.

    Attributes
    ----------
    log_ratio_estimate : numpy.ndarray
        Plug-in :math:`\log(\hat p / \hat p')` per event (``nan``-free: ``±inf``
        when a count is zero).
    log_ratio_lower, log_ratio_upper : numpy.ndarray
        :math:`\log(p_{lo}/p'_{hi})` and :math:`\log(p_{hi}/p'_{lo})`: with
        probability at least ``1 - alpha`` **every** event's true log ratio lies
        between them.
    p_low, p_high, p_prime_low, p_prime_high : numpy.ndarray
        The one-sided Clopper--Pearson bounds, each at level ``alpha/(4m)``.
    alpha : float
        Overall false-alarm probability.
    n, n_prime : int
        Sample sizes under :math:`D` and :math:`D'`.
    """

    log_ratio_estimate: NDArray[np.float64]
    log_ratio_lower: NDArray[np.float64]
    log_ratio_upper: NDArray[np.float64]
    p_low: NDArray[np.float64]
    p_high: NDArray[np.float64]
    p_prime_low: NDArray[np.float64]
    p_prime_high: NDArray[np.float64]
    alpha: float
    n: int
    n_prime: int

    @property
    def epsilon_lower(self) -> float:
        r"""A ``1 - alpha`` lower confidence bound on the mechanism's epsilon.

        :math:`\max\big(0, \max_S \log(p_{lo}/p'_{hi}), \max_S \log(p'_{lo}/p_{hi})\big)`:
        if every interval covers its event's true log ratio, the true epsilon
        (which bounds every :math:`|\log|` event ratio) is at least this.
        """
        return self.epsilon_lower_at(0.0)

    def epsilon_lower_at(self, delta: float) -> float:
        r"""A ``1 - alpha`` lower confidence bound on epsilon for an (epsilon, ``delta``)-DP claim.

        :math:`\max\big(0, \max_S \log((p_{lo}-\delta)/p'_{hi}), \max_S \log((p'_{lo}-\delta)/p_{hi})\big)`,
        since :math:`P[M(D)\in S] \le e^\varepsilon P[M(D')\in S] + \delta` for every event
        (terms with :math:`p_{lo} \le \delta` certify nothing).

        Parameters
        ----------
        delta : float
            In [0, 1).

        Raises
        ------
        ValueError
            If ``delta`` is not in [0, 1).
        """
        d = check_real("delta", delta)
        if not (0.0 <= d < 1.0):
            raise ValueError(f"delta must lie in [0, 1); got {delta}")
        with np.errstate(divide="ignore", invalid="ignore"):
            fwd = np.where(
                self.p_low > d, np.log(np.maximum(self.p_low - d, 1e-320)) - np.log(self.p_prime_high), -np.inf
            )
            bwd = np.where(
                self.p_prime_low > d, np.log(np.maximum(self.p_prime_low - d, 1e-320)) - np.log(self.p_high), -np.inf
            )
        return float(max(0.0, np.max(fwd), np.max(bwd)))

    def check(self, epsilon: float, name: str = "event ratios <= e^epsilon", *, delta: float = 0.0) -> CheckResult:
        r"""Test the claim "the mechanism is epsilon-DP on these events" (one-sided).

        Rejects iff :attr:`epsilon_lower` > ``epsilon``, i.e. iff some event's
        lower confidence bound on the ratio (either direction) exceeds
        :math:`e^\varepsilon`. When the claim is true this happens with
        probability at most ``alpha`` (Clopper--Pearson + union bound).
        """
        epsilon = check_positive_finite("epsilon", epsilon)
        finite = self.log_ratio_estimate[np.isfinite(self.log_ratio_estimate)]
        est = float(np.max(np.abs(finite))) if finite.size else float("nan")
        lo = self.epsilon_lower_at(delta)
        return CheckResult(
            name=name,
            claimed=epsilon,
            estimate=est,
            ci_low=lo,
            ci_high=float("inf"),
            passed=bool(lo <= epsilon),
            alpha=self.alpha,
            n=self.n + self.n_prime,
            method=f"Clopper-Pearson, union bound over {4 * self.log_ratio_lower.size} one-sided bounds",
            details={
                "events": int(self.log_ratio_lower.size),
                "n": self.n,
                "n_prime": self.n_prime,
                "delta": float(delta),
            },
        )


def _counts(name: str, hits: ArrayLike, n: int) -> NDArray[np.int64]:
    arr = np.asarray(hits)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.issubdtype(arr.dtype, np.integer):
        if not (np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
            raise ValueError(f"{name} must be integer counts; got dtype {arr.dtype}")
    if (arr < 0).any() or (arr > n).any():  # before the cast: a float such as 1e308 does not fit in int64
        raise ValueError(f"{name} must lie in [0, {n}]")
    return np.atleast_1d(arr.astype(np.int64))


def event_ratio_bounds(
    hits: ArrayLike,
    n: int,
    hits_prime: ArrayLike,
    n_prime: int,
    *,
    alpha: float = 1e-6,
) -> EventRatioBounds:
    r"""Confidence intervals for :math:`\log P[M(D)\in S_k] / P[M(D')\in S_k]`, simultaneous over ``m`` events.

    ``hits[k]`` of ``n`` independent samples of :math:`M(D)` fell in
    :math:`S_k`, and ``hits_prime[k]`` of ``n_prime`` samples of :math:`M(D')`.
    Each count is Binomial, so the exact one-sided Clopper--Pearson bounds
    (Clopper & Pearson 1934) at level :math:`a`,

    .. math:: p_{lo} = B^{-1}(a; K, n-K+1), \qquad p_{hi} = B^{-1}(1-a; K+1, n-K),

    each fail with probability at most :math:`a`. Four bounds are formed per
    event (:math:`p_{lo}, p_{hi}, p'_{lo}, p'_{hi}`), :math:`4m` in all, each
    at :math:`a = \alpha/(4m)`; by the **union bound** (Bonferroni) all hold
    at once with probability at least :math:`1-\alpha`, whatever the
    dependence between the counts. On that event, for every :math:`k`,

    .. math:: \log\frac{p_{lo}}{p'_{hi}} \le \log\frac{P[M(D)\in S_k]}{P[M(D')\in S_k]} \le \log\frac{p_{hi}}{p'_{lo}} .

    The events must be fixed before the samples are seen (or chosen on
    independent samples); choosing them on the same samples voids the bound.

    Parameters
    ----------
    hits, n, hits_prime, n_prime
        Counts (integer arrays of the same shape, one entry per event, each in ``[0, n]``
        or ``[0, n_prime]``) and sample sizes, integers in [1, 2**53] (:data:`dpcore.montecarlo.MAX_COUNT`).
    alpha : float
        Overall probability that any of the intervals misses, in [1e-300, 1).

    Raises
    ------
    ValueError
        If a sample size is not an integer in [1, 2**53], counts are not integers in
        ``[0, n]``, the shapes differ, or ``alpha`` is outside [1e-300, 1).
    """
    n = check_positive_int("n", n)
    n_prime = check_positive_int("n_prime", n_prime)
    alpha = check_alpha("alpha", alpha)
    k = _counts("hits", hits, n)
    kp = _counts("hits_prime", hits_prime, n_prime)
    if k.shape != kp.shape:
        raise ValueError(f"hits and hits_prime must have the same shape; got {k.shape} and {kp.shape}")
    k, kp = k.ravel(), kp.ravel()
    a = alpha / (4 * k.size)

    p_lo, p_hi = clopper_pearson_bounds(k, n, a)
    q_lo, q_hi = clopper_pearson_bounds(kp, n_prime, a)
    with np.errstate(divide="ignore"):
        log_lo = np.log(p_lo) - np.log(q_hi)
        log_hi = np.log(p_hi) - np.log(q_lo)
        log_p, log_q = np.log(k / n), np.log(kp / n_prime)
    with np.errstate(invalid="ignore"):
        est = np.where((k == 0) & (kp == 0), 0.0, log_p - log_q)
    return EventRatioBounds(
        log_ratio_estimate=est,
        log_ratio_lower=log_lo,
        log_ratio_upper=log_hi,
        p_low=p_lo,
        p_high=p_hi,
        p_prime_low=q_lo,
        p_prime_high=q_hi,
        alpha=alpha,
        n=n,
        n_prime=n_prime,
    )


def sample_interval_ratio_bounds(
    samples: ArrayLike,
    samples_prime: ArrayLike,
    lower: ArrayLike,
    upper: ArrayLike,
    *,
    alpha: float = 1e-6,
) -> EventRatioBounds:
    r"""Event-ratio confidence intervals for intervals :math:`(\mathrm{lower}_k, \mathrm{upper}_k]`, from samples.

    Counts the samples of :math:`M(D)` and :math:`M(D')` in each interval
    (:func:`interval_counts`) and applies :func:`event_ratio_bounds`
    (Clopper--Pearson bounds, union bound over the :math:`4m` one-sided
    bounds, overall false-alarm probability ``alpha``).

    Parameters
    ----------
    samples, samples_prime : array_like
        Samples of :math:`M(D)` and :math:`M(D')`: non-empty, one-dimensional, finite; at most
        2**53 of each.
    lower, upper : array_like
        Interval ends, broadcast together, at least one interval; no NaN, ``lower <= upper``,
        ``lower < +inf`` and ``upper > -inf``.
    alpha : float
        Overall false-alarm probability, in [1e-300, 1).

    Raises
    ------
    ValueError
        As :func:`interval_counts` and :func:`event_ratio_bounds`, and if
        ``lower`` and ``upper`` give no interval (an empty array).
    """
    xs = check_finite_array("samples", samples)
    ys = check_finite_array("samples_prime", samples_prime)  # named here: interval_counts would call it samples
    if ys.ndim != 1 or ys.size == 0:
        raise ValueError(f"samples_prime must be a non-empty 1-D array; got shape {ys.shape}")
    hits = interval_counts(xs, lower, upper)
    if hits.size == 0:
        raise ValueError(
            f"lower and upper must give at least one interval (one per event); got sizes "
            f"{np.size(lower)} and {np.size(upper)}"
        )
    hits_prime = interval_counts(ys, lower, upper)
    return event_ratio_bounds(hits, int(xs.size), hits_prime, int(ys.size), alpha=alpha)


def event_detection_miss(
    p: float,
    p_prime: float,
    n: int,
    n_prime: int,
    epsilon: float,
    *,
    events: int,
    alpha: float = 1e-6,
    delta: float = 0.0,
    max_samples: int = MAX_MISS_SAMPLES,
) -> float:
    r"""Bound on the chance that :meth:`EventRatioBounds.check` misses a violation on one event.

    Suppose one of the ``events`` fixed events has true probabilities ``p``
    under :math:`M(D)` and ``p_prime`` under :math:`M(D')` with
    :math:`p > e^\varepsilon p'` (the mechanism is not epsilon-DP there). The
    check rejects when :math:`p_{lo}/p'_{hi} > e^\varepsilon`, each bound at
    level :math:`a = \alpha/(4m)`. With thresholds :math:`t' = p' r` and
    :math:`t = e^\varepsilon t' (1 + 10^{-12})`, :math:`r = \sqrt{p/(e^\varepsilon p')}`
    (so :math:`p' < t' ` and :math:`t < p`), a miss needs :math:`p_{lo} \le t`
    or :math:`p'_{hi} \ge t'`, so

    .. math:: P(\text{miss}) \le P(p_{lo} \le t) + P(p'_{hi} \ge t'),

    both exact binomial sums (:func:`dpcore.montecarlo.probability_acceptance`).
    For an (epsilon, ``delta``) claim (``check(epsilon, delta=delta)``) the
    violation is :math:`p > e^\varepsilon p' + \delta` and :math:`t = e^\varepsilon t' (1 + 10^{-12}) + \delta`.

    Each binomial sum runs over the counts within 40 standard deviations of
    the mean, with a beta quantile per count, so the time grows like
    :math:`\sqrt{n}`: 5 s at :math:`n = n' = 10^7` and 19 s at :math:`10^8` on
    the book's build machine. Sizes above ``max_samples`` (default
    :data:`MAX_MISS_SAMPLES` = 10^8) are refused before any work; raise it
    explicitly to go further.

    Parameters
    ----------
    p, p_prime : float
        The true probabilities of the event under :math:`M(D)` and :math:`M(D')`: ``p`` in (0, 1],
        ``p_prime`` in [0, 1], with :math:`p > e^\varepsilon p' + \delta`.
    n, n_prime : int
        Sample sizes, integers in [1, ``max_samples``].
    epsilon : float
        The claimed epsilon, in (0, 709.78] (:math:`e^\varepsilon` a double).
    events : int
        The number of events checked simultaneously, an integer >= 1.
    alpha : float
        The check's overall false-alarm probability, in [1e-300, 1).
    delta : float
        The claimed delta, in [0, 1).
    max_samples : int
        The largest sample size accepted (default :data:`MAX_MISS_SAMPLES` = 10**8), an integer >= 1.

    Raises
    ------
    ValueError
        If ``p <= e^epsilon p_prime`` (no violation to detect), a probability is
        not a real number in [0, 1], ``epsilon`` is above log(largest double) = 709.78, ``alpha``
        is not in [1e-300, 1), a size or ``events`` is invalid, or ``n`` or
        ``n_prime`` exceeds ``max_samples``.
    """
    from .montecarlo import probability_acceptance

    epsilon = check_positive_finite("epsilon", epsilon)
    n = check_positive_int("n", n)
    n_prime = check_positive_int("n_prime", n_prime)
    max_samples = check_limit_value("max_samples", max_samples)
    cost = "the time grows like sqrt(n): 19 s at 10**8"
    check_limit("n", n, "max_samples", max_samples, cost)
    check_limit("n_prime", n_prime, "max_samples", max_samples, cost)
    events = check_positive_int("events", events)
    alpha = check_alpha("alpha", alpha)
    p, p_prime = check_real("p", p), check_real("p_prime", p_prime)
    if not (0.0 <= p_prime <= 1.0 and 0.0 < p <= 1.0):
        raise ValueError(f"p and p_prime must be probabilities (p > 0); got {p}, {p_prime}")
    d = check_real("delta", delta)
    if not (0.0 <= d < 1.0):
        raise ValueError(f"delta must lie in [0, 1); got {delta}")
    if epsilon > _MAX_LOG:  # e^epsilon overflowed (issue 28: an OverflowError at 1e308)
        raise ValueError(f"epsilon must be <= {_MAX_LOG:.6g} (e^epsilon must be a double); got {epsilon!r}")
    bound = math.exp(epsilon) * p_prime + d
    if not p > bound:
        raise ValueError(f"p must exceed e^epsilon p_prime + delta (a violation); got {p} vs {bound}")
    a = alpha / (4 * events)
    if p_prime == 0.0:  # no hit under D' for sure: its upper bound is 1 - a^(1/n')
        t_prime, t = 0.0, math.exp(epsilon) * -math.expm1(math.log(a) / n_prime) * (1 + 1e-12) + d
        if t >= p:
            return 1.0
    else:
        r = math.sqrt((p - d) / (math.exp(epsilon) * p_prime))
        t_prime = p_prime * r
        t = math.exp(epsilon) * t_prime * (1 + 1e-12) + d
    miss_p = probability_acceptance(n, p, min(t, 1.0), alternative="less", alpha=a)
    miss_q = (
        0.0
        if p_prime == 0.0
        else probability_acceptance(n_prime, p_prime, min(t_prime, 1.0), alternative="greater", alpha=a)
    )
    return min(1.0, miss_p + miss_q)
