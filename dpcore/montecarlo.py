r"""Monte Carlo claims as hypothesis tests with a guaranteed false-alarm rate.

Every chapter of the book checks a derived formula against samples. A check
here is a *hypothesis test* of the claim: it returns a :class:`CheckResult`
with the estimate, a confidence set, the bound used and ``passed``; when the
claim is true, ``passed`` is ``False`` with probability at most ``alpha``
(default ``1e-6``), by the inequality named in each function's docstring.
A check must also be able to fail: applied to a plausible wrong claim, it
should reject, and the chapters assert that it does (negative controls).

Samples are drawn by a ``sampler(rng, size) -> ndarray`` in chunks of
``chunk_size``, chunk ``j`` from child ``j`` of the root stream of ``rng`` --
the engine the auditor uses too (``dpcore._engine``) -- and only running
sums or counts are kept, so memory stays flat however large ``n`` is. Results
are reproducible from ``rng`` (an int seed), and the same whether the chunks
are drawn here or on an ``executor`` (a process pool, or a Dask cluster through
``dask.distributed.Client.get_executor()``).

Inequalities used
-----------------
* probabilities: the exact Clopper--Pearson interval (Clopper & Pearson 1934);
* bounded means: Hoeffding (1963) intersected with the empirical Bernstein
  bound of Maurer & Pontil (2009), each at level ``alpha/2``;
* means of unbounded variables with a known variance bound: the
  median-of-means estimator (Lugosi & Mendelson 2019), with Chebyshev's
  inequality per block and the exact binomial tail across blocks;
* variances with a known kurtosis bound: median of means over the pair
  statistic :math:`(X_{2i}-X_{2i+1})^2/2`;
* whole distributions: the Dvoretzky--Kiefer--Wolfowitz inequality with
  Massart's (1990) constant.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _engine
from ._lazy import lazy_module
from ._validation import (
    RNGLike,
    as_seed_sequence,
    check_positive_finite,
    check_positive_int,
    check_probability_open,
)

special = lazy_module("scipy.special")
_TINY = float(np.finfo(np.float64).tiny)
stats = lazy_module("scipy.stats")

__all__ = [
    "CheckResult",
    "Sampler",
    "DEFAULT_ALPHA",
    "check_probability",
    "probability_result",
    "clopper_pearson_bounds",
    "probability_acceptance",
    "check_bounded_mean",
    "check_mean",
    "check_variance",
    "check_cdf",
    "check_law",
    "median_of_means_radius",
    "MAX_SAMPLES",
    "MAX_CHUNK",
    "MAX_GRID",
    "MAX_COUNT",
    "MAX_ACCEPTANCE_WINDOW",
]

DEFAULT_ALPHA = 1e-6
DEFAULT_CHUNK = 1 << 18

#: Largest ``n`` a check draws (about 10^2 to 10^3 s of sampling at numpy speed); checked before any draw.
#: Raise it explicitly (``dpcore.montecarlo.MAX_SAMPLES = ...``) to go past it.
MAX_SAMPLES = 10**10
#: Largest ``chunk_size``: a chunk is held in memory (8 bytes a sample), so this bounds the memory at 128 MiB.
MAX_CHUNK = 1 << 24
#: Largest ``grid_size`` of :func:`check_cdf` (the grid is the quantiles of the first chunk).
MAX_GRID = 1 << 20
#: Largest trial count ``n`` of :func:`probability_result` and :func:`clopper_pearson_bounds`: above 2**53 a
#: count is no longer exact in the floating point of the beta quantiles.
MAX_COUNT = 1 << 53
#: Largest number of counts :func:`probability_acceptance` sums (80 standard deviations of the binomial).
MAX_ACCEPTANCE_WINDOW = 10**7

Alternative = Literal["two-sided", "less", "greater"]
_ALTERNATIVES = ("two-sided", "less", "greater")

Sampler = Callable[[np.random.Generator, int], NDArray[Any]]


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one Monte Carlo hypothesis test.

    Attributes
    ----------
    name : str
        What was checked.
    claimed : float
        The claimed value (0 for a distribution check: the claimed distance).
    estimate : float
        The Monte Carlo estimate (for a CDF check, the largest observed
        distance between the empirical and the claimed CDF on the grid).
    ci_low, ci_high : float
        The confidence set at level ``1 - alpha``; the claim passes iff it
        lies inside (for a one-sided test one end is infinite).
    passed : bool
        ``True`` iff the claim is consistent with the samples.
    alpha : float
        The guaranteed false-alarm probability.
    n : int
        Number of samples drawn.
    method : str
        The inequality behind the confidence set.
    details : dict
        Method-specific numbers (block count, radius, counts, ...).
    """

    name: str
    claimed: float
    estimate: float
    ci_low: float
    ci_high: float
    passed: bool
    alpha: float
    n: int
    method: str
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    def __str__(self) -> str:
        verdict = "PASS" if self.passed else "REJECT"
        return (
            f"[{verdict}] {self.name}: claimed {self.claimed:.6g}, estimate {self.estimate:.6g}, "
            f"{1 - self.alpha:.7g}-confidence set [{self.ci_low:.6g}, {self.ci_high:.6g}] "
            f"({self.method}, n={self.n:,}, false-alarm <= {self.alpha:.1e})"
        )

    def _repr_html_(self) -> str:  # pragma: no cover - display only
        colour = "#1a7f37" if self.passed else "#b42318"
        verdict = "PASS" if self.passed else "REJECT"
        return (
            f"<span style='color:{colour};font-weight:bold'>{verdict}</span> "
            f"<b>{self.name}</b>: claimed {self.claimed:.6g}, estimate {self.estimate:.6g}, "
            f"confidence set [{self.ci_low:.6g}, {self.ci_high:.6g}] "
            f"<small>({self.method}, n={self.n:,}, false-alarm &le; {self.alpha:.1e})</small>"
        )


def _real(name: str, value: Any, *, finite: bool = True) -> float:
    """``value`` as a float: a real number (Python or numpy), not a bool, string or complex; finite if asked."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value[()]  # a 0-d array of a real dtype: its numpy scalar
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number; got {type(value).__name__} {value!r}")
    try:
        x = float(value)
    except OverflowError:  # an int such as 10**400
        raise ValueError(f"{name} must be a finite real number; got an int of {int(value).bit_length()} bits") from None
    if finite and not math.isfinite(x):
        raise ValueError(f"{name} must be a finite real number; got {x}")
    return x


def _probability_closed(name: str, value: Any) -> float:
    """``value`` as a float in [0, 1] (NaN refused)."""
    x = _real(name, value, finite=False)
    if not (0.0 <= x <= 1.0):  # also refuses NaN
        raise ValueError(f"{name} must be a probability in [0, 1]; got {x}")
    return x


def _alternative(value: Any) -> Alternative:
    """``value`` if it is one of the three alternatives; anything else (a typo) is refused."""
    if not isinstance(value, str) or value not in _ALTERNATIVES:
        raise ValueError(f"alternative must be 'two-sided', 'less' or 'greater'; got {value!r}")
    return cast(Alternative, value)


def _count(name: str, value: Any, minimum: int, maximum: int, why: str) -> int:
    """``value`` as an int in [minimum, maximum]; ``why`` explains the maximum."""
    k = check_positive_int(name, value, minimum=minimum)
    if k > maximum:
        shown = str(k) if k < 10**30 else f"an int of {len(str(k))} digits"
        raise ValueError(f"{name} must be at most {maximum} ({why}); got {shown}")
    return k


def _log_ratio(c: float, alpha: float) -> float:
    """``log(c / alpha)`` without overflow for a subnormal ``alpha``."""
    return math.log(c) - math.log(alpha)


def _level(alpha: float, alternative: Alternative) -> float:
    """The Clopper--Pearson level of one end: ``alpha / 2`` two-sided, else ``alpha``; refused if it is 0.

    A subnormal ``alpha`` (5e-324) halves to 0, which is not a level; any ``alpha`` whose level is > 0 is kept.
    """
    a = alpha / 2 if alternative == "two-sided" else alpha
    if a == 0.0:
        raise ValueError(
            f"alpha = {alpha!r} is too small for a two-sided test: alpha / 2 underflows to 0 "
            "(a two-sided test needs alpha >= 1e-323)"
        )
    return a


def _validate_common(n: int, alpha: float, chunk_size: int, minimum_n: int = 1) -> tuple[int, float, int]:
    n = _count("n", n, minimum_n, MAX_SAMPLES, "dpcore.montecarlo.MAX_SAMPLES; raise it explicitly to draw more")
    alpha = check_probability_open("alpha", alpha)
    chunk_size = _count(
        "chunk_size", chunk_size, 1, MAX_CHUNK, "dpcore.montecarlo.MAX_CHUNK: a chunk is held in memory"
    )
    return n, alpha, chunk_size


def _draw(sampler: Sampler, gen: np.random.Generator, size: int) -> NDArray[np.float64]:
    return _engine.draw(sampler, size, gen, what="sampler")


def _chunk_hits(
    sampler: Sampler, event: Callable[[NDArray[Any]], NDArray[np.bool_]], j: int, gen: np.random.Generator, m: int
) -> int:
    """Samples of one chunk in the event."""
    return int(np.count_nonzero(_event_mask(event, _draw(sampler, gen, m))))


def _event_mask(event: Callable[[NDArray[Any]], Any], xs: NDArray[Any]) -> NDArray[np.bool_]:
    """``event(xs)`` checked: booleans (or integers 0/1), one per sample; a float (NaN, 0.5) is never cast to a hit."""
    name = getattr(event, "__name__", type(event).__name__)
    out = np.asarray(event(xs))
    if out.shape != xs.shape:
        raise ValueError(f"event {name} must return a boolean array of length {xs.size}; got shape {out.shape}")
    if out.dtype == np.bool_:
        return out
    if out.dtype.kind in "iu" and np.all((out == 0) | (out == 1)):
        return out.astype(bool)
    bad = out.dtype.kind not in "iu"
    raise ValueError(
        f"event {name} must return booleans (or integers 0/1), one per sample; got "
        + (f"dtype {out.dtype}" if bad else "integers other than 0 and 1")
        + " (a NaN or a float is not a membership)"
    )


def check_probability(
    sampler: Sampler,
    event: Callable[[NDArray[Any]], NDArray[np.bool_]],
    n: int,
    claimed: float,
    *,
    alternative: Literal["two-sided", "less", "greater"] = "two-sided",
    alpha: float = DEFAULT_ALPHA,
    rng: RNGLike = None,
    executor: Executor | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    name: str = "probability",
) -> CheckResult:
    r"""Test a claimed probability :math:`p = P(X \in E)` with the Clopper--Pearson interval.

    The count :math:`K` of samples in the event is Binomial(n, p). The exact
    Clopper--Pearson bounds (Clopper & Pearson 1934)

    .. math:: p_{lo} = B^{-1}(a; K, n-K+1), \qquad p_{hi} = B^{-1}(1-a; K+1, n-K)

    (beta quantiles) satisfy :math:`P(p < p_{lo}) \le a` and
    :math:`P(p > p_{hi}) \le a` for every true ``p``, by the duality between
    the interval and the exact binomial tail test. Hence:

    * ``"two-sided"`` (claim :math:`p = ` ``claimed``): ``a = alpha/2`` per end;
    * ``"less"`` (claim :math:`p \le` ``claimed``): rejects iff :math:`p_{lo} >` ``claimed``, ``a = alpha``;
    * ``"greater"`` (claim :math:`p \ge` ``claimed``): rejects iff :math:`p_{hi} <` ``claimed``, ``a = alpha``.

    In every case the false-alarm probability is at most ``alpha``.

    Parameters
    ----------
    sampler : callable
        ``sampler(rng, size)`` returns ``size`` independent samples.
    event : callable
        Maps an array of samples to a boolean array (membership in the event);
        integers 0/1 are accepted, anything else (floats, NaN) is refused.
    n : int
        Number of samples, in [1, :data:`MAX_SAMPLES`].
    claimed : float
        The claimed probability (or bound), in [0, 1].
    alternative : {"two-sided", "less", "greater"}
        Exactly one of the three (a typo is refused); see above.
    alpha : float
        The false-alarm probability, in (0, 1) (default 1e-6); at least 1e-323 for a two-sided test.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The random stream (:func:`dpcore.as_generator`); an int seed must be >= 0.
    chunk_size : int
        Samples per chunk, an integer in [1, :data:`MAX_CHUNK`] (2**24).
    name : str
        A label for the result.
    executor : concurrent.futures.Executor, optional
        Where the chunks are drawn and counted (``None``: here); the result is
        the same. Every check takes it. A process pool needs a picklable
        ``sampler`` and ``event``; a Dask client's executor also takes closures.

    Raises
    ------
    ValueError
        If ``claimed`` is not a real number in [0, 1], ``alpha`` is outside
        (0, 1) or, for a two-sided test, below 1e-323 (halved, it would underflow to 0),
        ``n`` is not an integer in [1, :data:`MAX_SAMPLES`], ``chunk_size`` not
        in [1, :data:`MAX_CHUNK`], ``alternative`` is not one of the three, the
        sampler returns anything but ``size`` finite reals, or the event anything
        but one boolean (or 0/1) per sample.
    """
    n, alpha, chunk_size = _validate_common(n, alpha, chunk_size)
    claimed_f = _probability_closed("claimed", claimed)
    alternative = _alternative(alternative)
    _level(alpha, alternative)  # refused before any sample is drawn
    sizes = _engine.chunk_sizes(n, chunk_size)
    task = partial(_chunk_hits, sampler, event)
    hits = _engine.fold_chunks(task, operator.add, sizes, as_seed_sequence(rng), executor=executor)
    return probability_result(hits, n, claimed_f, alternative=alternative, alpha=alpha, name=name)


def probability_result(
    hits: int,
    n: int,
    claimed: float,
    *,
    alternative: Literal["two-sided", "less", "greater"] = "two-sided",
    alpha: float = DEFAULT_ALPHA,
    name: str = "probability",
) -> CheckResult:
    """The Clopper--Pearson test of :func:`check_probability`, from a count already made.

    Useful when the samples are shared with other computations. ``hits`` out
    of ``n`` independent trials; the guarantees are those of
    :func:`check_probability`.

    Parameters
    ----------
    hits : int
        The count of successes, an integer in [0, n].
    n : int
        The number of trials, an integer in [1, :data:`MAX_COUNT`] (2**53).
    claimed : float
        The claimed probability (or bound), in [0, 1].
    alternative : {"two-sided", "less", "greater"}
        Exactly one of the three (a typo is refused).
    alpha : float
        The false-alarm probability, in (0, 1) (default 1e-6); at least 1e-323 for a two-sided test
        (halved, it must not underflow to 0).
    name : str
        A label for the result.

    Raises
    ------
    ValueError
        If ``n`` is not an integer in [1, :data:`MAX_COUNT`], ``hits`` not an
        integer in [0, n] (a bool or 2.5 is refused), ``claimed`` not a real
        number in [0, 1] (NaN refused), ``alpha`` outside (0, 1) or, for a
        two-sided test, below 1e-323 (halved, it would underflow to 0), or
        ``alternative`` not exactly one of the three (a typo would otherwise
        run another test).
    """
    n = _count("n", n, 1, MAX_COUNT, "counts above 2**53 are not exact in floating point")
    alpha = check_probability_open("alpha", alpha)
    hits = check_positive_int("hits", hits, minimum=0)
    if hits > n:
        raise ValueError(f"hits must lie in [0, n]; got {hits} with n={n}")
    claimed = _probability_closed("claimed", claimed)
    alternative = _alternative(alternative)
    a = _level(alpha, alternative)
    lo_arr, hi_arr = clopper_pearson_bounds(hits, n, a)
    lo, hi = float(lo_arr), float(hi_arr)
    if alternative == "less":
        hi_report, lo_report = 1.0, lo
        passed = lo <= claimed
    elif alternative == "greater":
        lo_report, hi_report = 0.0, hi
        passed = hi >= claimed
    else:
        lo_report, hi_report = lo, hi
        passed = lo <= claimed <= hi
    return CheckResult(
        name=name,
        claimed=float(claimed),
        estimate=hits / n,
        ci_low=lo_report,
        ci_high=hi_report,
        passed=bool(passed),
        alpha=alpha,
        n=n,
        method=f"Clopper-Pearson ({alternative})",
        details={"hits": hits, "alternative": alternative},
    )


def clopper_pearson_bounds(hits: ArrayLike, n: int, level: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Exact one-sided Clopper--Pearson bounds for ``hits`` successes out of ``n``, vectorised.

    .. math:: p_{lo} = B^{-1}(a; K, n-K+1), \qquad p_{hi} = B^{-1}(1-a; K+1, n-K)

    with :math:`p_{lo} = 0` when :math:`K = 0` and :math:`p_{hi} = 1` when
    :math:`K = n`; each bound fails with probability at most ``level`` = *a*
    (Clopper & Pearson 1934). One beta quantile is computed per distinct count.

    Parameters
    ----------
    hits : int or array_like of int
        Counts, each an integer in [0, n] (vectorised).
    n : int
        The number of trials, an integer in [1, :data:`MAX_COUNT`] (2**53).
    level : float
        The failure probability of each one-sided bound, in (0, 1).

    Returns
    -------
    (lower, upper)
        Arrays of the shape of ``hits``.

    Raises
    ------
    ValueError
        If ``n`` is not an integer in [1, :data:`MAX_COUNT`], ``level`` is
        outside (0, 1), or a count is not an integer in [0, n] (booleans,
        fractions and NaN are refused).
    """
    n = _count("n", n, 1, MAX_COUNT, "counts above 2**53 are not exact in floating point")
    level = check_probability_open("level", level)
    raw = np.asarray(hits)
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"hits must be integer counts; got dtype {raw.dtype}")
    k = raw.astype(float)
    if not np.all(np.isfinite(k)) or np.any(k != np.floor(k)):
        raise ValueError("hits must be integer counts (no fractions, NaN or infinity)")
    if np.any((k < 0) | (k > n)):
        raise ValueError(f"hits must lie in [0, n] = [0, {n}]")
    uk, inv = np.unique(k, return_inverse=True)
    lo, hi = np.zeros(uk.shape), np.ones(uk.shape)
    pos, notall = uk > 0, uk < n
    lo[pos] = special.betaincinv(uk[pos], n - uk[pos] + 1, level)
    hi[notall] = special.betaincinv(uk[notall] + 1, n - uk[notall], 1 - level)
    return lo[inv].reshape(k.shape), hi[inv].reshape(k.shape)


def probability_acceptance(
    n: int,
    true_p: float,
    claimed: float,
    *,
    alternative: Literal["two-sided", "less", "greater"] = "two-sided",
    alpha: float = DEFAULT_ALPHA,
) -> float:
    r"""Probability that :func:`probability_result` passes ``claimed`` when the truth is ``true_p``.

    With :math:`K \sim \mathrm{Binomial}(n, p)` and :math:`A` the set of counts
    for which the Clopper--Pearson test of ``claimed`` passes,

    .. math:: P(\text{pass}) = \sum_{k \in A} \binom{n}{k} p^k (1-p)^{n-k},

    summed exactly over the counts within 40 standard deviations of
    :math:`np` (every count outside that window is counted as passing, so the
    result is an upper bound, exact to far below 1e-300 in practice). When
    ``claimed`` is wrong this is the probability that the test misses the
    error (its type II error): a negative control whose wrong claim has
    acceptance probability at most 1e-6 fails at the book's level.

    Parameters
    ----------
    n : int
        The number of trials, an integer in [1, :data:`MAX_COUNT`] (2**53), with the window of counts
        summed at most :data:`MAX_ACCEPTANCE_WINDOW` (about :math:`np(1-p) \le 1.5 \cdot 10^{10}`).
    true_p : float
        The true probability, in [0, 1].
    claimed : float
        The claimed probability (or bound), in [0, 1].
    alternative : {"two-sided", "less", "greater"}
        Exactly one of the three (a typo is refused).
    alpha : float
        The false-alarm probability, in (0, 1) (default 1e-6); at least 1e-323 for a two-sided test
        (halved, it must not underflow to 0).

    Raises
    ------
    ValueError
        If ``n`` is not an integer in [1, :data:`MAX_COUNT`], ``true_p`` or
        ``claimed`` is not a real number in [0, 1], ``alpha`` is not in
        (0, 1) or, for a two-sided test, below 1e-323 (halved, it would underflow to 0),
        ``alternative`` is not one of the three, or the window of counts to
        sum exceeds :data:`MAX_ACCEPTANCE_WINDOW` (about
        :math:`n p (1-p) > 1.5 \cdot 10^{10}`).
    """
    n = _count("n", n, 1, MAX_COUNT, "counts above 2**53 are not exact in floating point")
    alpha = check_probability_open("alpha", alpha)
    p = _probability_closed("true_p", true_p)
    c = _probability_closed("claimed", claimed)
    alternative = _alternative(alternative)
    sd = math.sqrt(n * p * (1.0 - p))
    k_lo = max(0, math.floor(n * p - 40.0 * sd) - 1)
    k_hi = min(n, math.ceil(n * p + 40.0 * sd) + 1)
    if k_hi - k_lo + 1 > MAX_ACCEPTANCE_WINDOW:
        raise ValueError(
            f"n * true_p * (1 - true_p) = {n * p * (1 - p):.4g} needs a sum over {k_hi - k_lo + 1} counts, "
            f"more than dpcore.montecarlo.MAX_ACCEPTANCE_WINDOW = {MAX_ACCEPTANCE_WINDOW}"
        )
    k = np.arange(k_lo, k_hi + 1)
    lo, hi = clopper_pearson_bounds(k, n, _level(alpha, alternative))
    if alternative == "less":
        accept = lo <= c
    elif alternative == "greater":
        accept = hi >= c
    else:
        accept = (lo <= c) & (c <= hi)
    inside = float(stats.binom.pmf(k[accept], n, p).sum())
    outside = float(stats.binom.cdf(k_lo - 1, n, p) + stats.binom.sf(k_hi, n, p))
    return min(1.0, inside + outside)


def _chunk_moments(
    sampler: Sampler, lower: float, upper: float, j: int, gen: np.random.Generator, m: int
) -> tuple[int, float, float]:
    """Count, mean and sum of squared deviations of one chunk, whose samples must lie in ``[lower, upper]``."""
    xs = _draw(sampler, gen, m)
    if xs.min() < lower or xs.max() > upper:
        raise ValueError(
            f"a sample lies outside [lower, upper] = [{lower}, {upper}]: range seen [{xs.min()}, {xs.max()}]"
        )
    cm = float(xs.mean())
    return m, cm, float(((xs - cm) ** 2).sum())


def _merge_moments(a: tuple[int, float, float], b: tuple[int, float, float]) -> tuple[int, float, float]:
    """The moments of two parts merged (Chan, Golub & LeVeque's parallel update)."""
    (count, mean, m2), (m, cm, cm2) = a, b
    delta_ = cm - mean
    total = count + m
    return total, mean + delta_ * m / total, m2 + cm2 + delta_**2 * count * m / total


def check_bounded_mean(
    sampler: Sampler,
    n: int,
    claimed: float,
    *,
    lower: float,
    upper: float,
    alpha: float = DEFAULT_ALPHA,
    rng: RNGLike = None,
    executor: Executor | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    name: str = "bounded mean",
) -> CheckResult:
    r"""Test a claimed mean of a variable known to lie in ``[lower, upper]``.

    Two radii are computed, each valid with probability :math:`1-\alpha/2`
    (so their intersection is valid with :math:`1-\alpha` by the union bound),
    with :math:`R = ` ``upper - lower``:

    * Hoeffding (1963): :math:`r_H = R\sqrt{\ln(4/\alpha)/(2n)}`, since
      :math:`P(|\bar X - \mu| \ge r) \le 2e^{-2nr^2/R^2}`;
    * empirical Bernstein (Maurer & Pontil 2009, Theorem 4, applied to each
      side at level :math:`\alpha/4`):
      :math:`r_B = \sqrt{2 V_n \ln(8/\alpha)/n} + 7R\ln(8/\alpha)/(3(n-1))`,
      with :math:`V_n` the unbiased sample variance. It is much tighter when
      the variance is small.

    A sample outside ``[lower, upper]`` refutes the premise and is reported
    as a :class:`ValueError`, not silently clipped.

    Parameters
    ----------
    sampler : callable
        ``sampler(rng, size)`` returning ``size`` independent finite real samples.
    n : int
        Number of samples, an integer in [2, :data:`MAX_SAMPLES`] (10**10).
    claimed : float
        The claimed mean, a finite real number.
    lower, upper : float
        Finite bounds of every sample, ``lower < upper`` with ``upper - lower`` finite.
    alpha : float
        The false-alarm probability, in (0, 1) (default 1e-6).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The random stream (:func:`dpcore.as_generator`); an int seed must be >= 0.
    executor : concurrent.futures.Executor, optional
        Where the chunks are drawn (``None``: here); the result is the same.
    chunk_size : int
        Samples per chunk, an integer in [1, :data:`MAX_CHUNK`] (2**24).
    name : str
        A label for the result.

    Raises
    ------
    ValueError
        If ``lower`` or ``upper`` is not a finite real number, ``lower >= upper``,
        ``upper - lower`` overflows, ``claimed`` is not a finite real number,
        ``n`` is not an integer in [2, :data:`MAX_SAMPLES`], or a sample lies
        outside the bounds.
    """
    n, alpha, chunk_size = _validate_common(n, alpha, chunk_size, minimum_n=2)
    lower_f, upper_f = _real("lower", lower), _real("upper", upper)
    claimed = _real("claimed", claimed)
    if not (lower_f < upper_f and math.isfinite(upper_f - lower_f)):
        raise ValueError(f"lower and upper must satisfy lower < upper with a finite width; got [{lower}, {upper}]")
    task = partial(_chunk_moments, sampler, lower_f, upper_f)
    sizes = _engine.chunk_sizes(n, chunk_size)
    _, mean, m2 = _engine.fold_chunks(task, _merge_moments, sizes, as_seed_sequence(rng), executor=executor)
    var = m2 / (n - 1)
    width = upper_f - lower_f
    r_h = width * math.sqrt(_log_ratio(4, alpha) / (2 * n))
    r_b = math.sqrt(2 * var * _log_ratio(8, alpha) / n) + 7 * width * _log_ratio(8, alpha) / (3 * (n - 1))
    r = min(r_h, r_b)
    return CheckResult(
        name=name,
        claimed=float(claimed),
        estimate=mean,
        ci_low=mean - r,
        ci_high=mean + r,
        passed=bool(abs(mean - float(claimed)) <= r),
        alpha=alpha,
        n=n,
        method="Hoeffding / empirical Bernstein",
        details={"radius_hoeffding": r_h, "radius_bernstein": r_b, "sample_variance": var},
    )


def median_of_means_radius(n: int, variance_bound: float, alpha: float) -> tuple[float, int]:
    r"""Radius and block count of the median-of-means confidence interval.

    Split ``n`` samples into an odd number ``k`` of blocks of ``m = n // k``.
    By Chebyshev each block mean misses :math:`\mu` by :math:`\ge r` with
    probability at most :math:`p = \sigma^2/(m r^2)`; the median misses by
    :math:`\ge r` only if at least :math:`h = (k+1)/2` blocks do, which has
    probability at most the binomial tail
    :math:`P(\mathrm{Bin}(k,p) \ge h) = I_p(h, k-h+1)`. Setting that tail to
    ``alpha`` gives :math:`p^* = I^{-1}_{\alpha}(h, k-h+1)` and
    :math:`r = \sigma/\sqrt{m p^*}`; the odd ``k`` giving the smallest ``r``
    is returned (Lugosi & Mendelson 2019 use the cruder :math:`e^{-k/8}`).

    Returns
    -------
    (radius, k)

    Every finite ``variance_bound`` > 0 (subnormal or near the largest double)
    and every ``alpha`` in (0, 1), subnormal ones included, is supported: where
    :math:`\sigma^2/(m p^*)` leaves the double range, the radius is computed as
    :math:`\sigma/\sqrt{m p^*}`.

    Parameters
    ----------
    n : int
        The number of samples, an integer in [1, :data:`MAX_COUNT`] (2**53).
    variance_bound : float
        An upper bound on the variance, finite and > 0.
    alpha : float
        The failure probability of the radius, in (0, 1).

    Raises
    ------
    ValueError
        If ``n`` is not an integer in [1, :data:`MAX_COUNT`], ``variance_bound``
        is not finite and > 0, ``alpha`` is outside (0, 1), or the smallest
        radius exceeds the largest double (``variance_bound`` near 1e308 with a
        subnormal ``alpha``).
    """
    n = _count("n", n, 1, MAX_COUNT, "counts above 2**53 are not exact in floating point")
    variance_bound = check_positive_finite("variance_bound", variance_bound)
    alpha = check_probability_open("alpha", alpha)
    ks = np.arange(1, min(n, 2001) + 1, 2)
    h = (ks + 1) // 2
    p_star = special.betaincinv(h, ks - h + 1, alpha)
    m = n // ks
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        mp = m * p_star
        ratio = variance_bound / mp
        radii = np.sqrt(ratio)
        # the quotient over- or underflowed (variance_bound near 1e308 or subnormal, p* subnormal): the square
        # roots apart, which stay in range (elsewhere the quotient's square root, bit for bit as before)
        apart = (mp > 0) & ~((ratio >= _TINY) & (ratio < np.inf))
        radii[apart] = math.sqrt(variance_bound) / np.sqrt(mp[apart])
    radii[~np.isfinite(radii)] = np.inf
    best = int(np.argmin(radii))
    if not math.isfinite(radii[best]):
        raise ValueError(
            f"variance_bound = {variance_bound!r} with alpha = {alpha!r} gives a median-of-means radius beyond "
            "the largest double; use a smaller variance_bound or a larger alpha"
        )
    return float(radii[best]), int(ks[best])


def _chunk_block_sums(
    sampler: Sampler,
    transform: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None,
    per_chunk: int,
    m: int,
    k: int,
    j: int,
    gen: np.random.Generator,
    size: int,
) -> NDArray[np.float64]:
    """Sums per block of ``m`` values of chunk ``j``'s (transformed) values, which start at ``j per_chunk``."""
    xs = _draw(sampler, gen, size)
    vals = transform(xs) if transform is not None else xs
    idx = (j * per_chunk + np.arange(vals.size)) // m
    return np.asarray(np.bincount(idx, weights=vals, minlength=k)[:k], dtype=float)


def _block_means(
    sampler: Sampler,
    root: np.random.SeedSequence,
    n_used: int,
    k: int,
    chunk_size: int,
    transform: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None,
    executor: Executor | None,
    group: int = 1,
) -> NDArray[np.float64]:
    """Means of ``k`` consecutive blocks of the (transformed) sample stream."""
    m = n_used // k  # values per block after the transform
    chunk_size = max(group, chunk_size - chunk_size % group)
    sizes = _engine.chunk_sizes(n_used * group, chunk_size)
    task = partial(_chunk_block_sums, sampler, transform, chunk_size // group, m, k)
    sums: NDArray[np.float64] = _engine.fold_chunks(task, operator.add, sizes, root, executor=executor)
    return sums / m


def check_mean(
    sampler: Sampler,
    n: int,
    claimed: float,
    *,
    variance_bound: float,
    alpha: float = DEFAULT_ALPHA,
    rng: RNGLike = None,
    executor: Executor | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    name: str = "mean",
) -> CheckResult:
    r"""Test a claimed mean of a variable with variance at most ``variance_bound``.

    No finite-sample test of a mean is possible for arbitrary unbounded
    variables (Bahadur & Savage 1956), so this check assumes a variance bound
    :math:`\sigma^2`. It then uses the median-of-means estimator, whose
    interval :math:`[\hat\mu - r, \hat\mu + r]` covers the true mean with
    probability at least :math:`1-\alpha` by Chebyshev per block and the exact
    binomial tail across blocks (see :func:`median_of_means_radius`;
    Lugosi & Mendelson 2019). The claim passes iff it lies in the interval.

    Parameters
    ----------
    sampler : callable
        ``sampler(rng, size)`` returning ``size`` independent finite real samples.
    n : int
        Number of samples, an integer in [1, :data:`MAX_SAMPLES`] (10**10).
    claimed : float
        The claimed mean, a finite real number.
    variance_bound : float
        The premise: an upper bound on the variance, finite and > 0.
    alpha : float
        The false-alarm probability, in (0, 1) (default 1e-6).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The random stream (:func:`dpcore.as_generator`); an int seed must be >= 0.
    executor : concurrent.futures.Executor, optional
        Where the chunks are drawn (``None``: here); the result is the same.
    chunk_size : int
        Samples per chunk, an integer in [1, :data:`MAX_CHUNK`] (2**24).
    name : str
        A label for the result.

    Raises
    ------
    ValueError
        If ``claimed`` is not a finite real number (NaN refused),
        ``variance_bound`` is not finite and > 0, ``n`` is not an integer in
        [1, :data:`MAX_SAMPLES`], or ``alpha`` is outside (0, 1).
    """
    n, alpha, chunk_size = _validate_common(n, alpha, chunk_size)
    claimed = _real("claimed", claimed)
    r, k = median_of_means_radius(n, variance_bound, alpha)
    n_used = (n // k) * k
    means = _block_means(sampler, as_seed_sequence(rng), n_used, k, chunk_size, None, executor)
    est = float(np.median(means))
    return CheckResult(
        name=name,
        claimed=float(claimed),
        estimate=est,
        ci_low=est - r,
        ci_high=est + r,
        passed=bool(abs(est - float(claimed)) <= r),
        alpha=alpha,
        n=n_used,
        method="median of means (Chebyshev + binomial tail)",
        details={"blocks": k, "radius": r, "variance_bound": float(variance_bound)},
    )


def _pair_variance(name: str, claimed: float, kurtosis_bound: float) -> float:
    """``Var[Y] <= (kurtosis_bound + 1) claimed**2 / 2``, refused (naming ``name``) outside the normal doubles."""
    var_y = (kurtosis_bound + 1) * (claimed * claimed) / 2
    if not (_TINY <= var_y < math.inf):
        raise ValueError(
            f"{name} = {claimed!r} with kurtosis_bound = {kurtosis_bound!r} gives the pair statistic's variance "
            f"bound (kurtosis_bound + 1) * {name}**2 / 2 = {var_y!r}, outside the normal doubles "
            f"[{_TINY:.3g}, 1.8e308]: {name} must lie in about [1.5e-154, 1.3e154 / sqrt(kurtosis_bound + 1)]"
        )
    return var_y


def _pair_stat(xs: NDArray[np.float64]) -> NDArray[np.float64]:
    """``(x_{2i} - x_{2i+1})^2 / 2`` of consecutive disjoint pairs: unbiased for the variance."""
    return (xs[0::2] - xs[1::2]) ** 2 / 2


def check_variance(
    sampler: Sampler,
    n: int,
    claimed: float,
    *,
    kurtosis_bound: float,
    alpha: float = DEFAULT_ALPHA,
    rng: RNGLike = None,
    executor: Executor | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    name: str = "variance",
) -> CheckResult:
    r"""Test a claimed variance :math:`\sigma^2`, given a bound on the kurtosis.

    Pairs of independent samples give :math:`Y = (X_1 - X_2)^2 / 2` with
    :math:`E[Y] = \sigma^2` (whatever the mean) and
    :math:`\mathrm{Var}[Y] = (\mu_4 + \sigma^4)/2`, where :math:`\mu_4` is the
    fourth central moment. Under the claim, and with the kurtosis bound
    :math:`\mu_4/\sigma^4 \le \kappa`, :math:`\mathrm{Var}[Y] \le (\kappa+1)\sigma^4/2`,
    so :func:`check_mean` applied to ``Y`` is a test of the claim with
    false-alarm probability at most ``alpha`` (median of means, Chebyshev).
    ``n`` counts the raw samples (``n // 2`` pairs).

    For instance :math:`\kappa = 3` for a Gaussian and 6 for a Laplace law.

    Parameters
    ----------
    sampler : callable
        ``sampler(rng, size)`` returning ``size`` independent finite real samples.
    n : int
        Number of samples, an integer in [2, :data:`MAX_SAMPLES`] (10**10).
    claimed : float
        The claimed variance, finite and > 0 (about [1.5e-154, 1.3e154 / sqrt(kurtosis_bound + 1)]).
    kurtosis_bound : float
        The premise: an upper bound on the kurtosis, finite and >= 1.
    alpha : float
        The false-alarm probability, in (0, 1) (default 1e-6).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The random stream (:func:`dpcore.as_generator`); an int seed must be >= 0.
    executor : concurrent.futures.Executor, optional
        Where the chunks are drawn (``None``: here); the result is the same.
    chunk_size : int
        Samples per chunk, an integer in [1, :data:`MAX_CHUNK`] (2**24).
    name : str
        A label for the result.

    Raises
    ------
    ValueError
        If ``claimed`` is not finite and > 0, ``kurtosis_bound`` is not finite
        or < 1, ``n`` < 2, or the variance bound of the pair statistic,
        :math:`(\kappa+1)\sigma^4/2`, is not a normal double (supported:
        ``claimed`` in about [1.5e-154, 1.3e154 / sqrt(kurtosis_bound + 1)]).
    """
    n, alpha, chunk_size = _validate_common(n, alpha, chunk_size, minimum_n=2)
    claimed = check_positive_finite("claimed", claimed)
    kurtosis_bound = check_positive_finite("kurtosis_bound", kurtosis_bound)
    if kurtosis_bound < 1:
        raise ValueError(f"kurtosis_bound must be >= 1 (every law has kurtosis >= 1); got {kurtosis_bound}")
    pairs = n // 2
    var_y = _pair_variance("claimed", claimed, kurtosis_bound)
    r, k = median_of_means_radius(pairs, var_y, alpha)
    pairs_used = (pairs // k) * k

    means = _block_means(sampler, as_seed_sequence(rng), pairs_used, k, chunk_size, _pair_stat, executor, group=2)
    est = float(np.median(means))
    return CheckResult(
        name=name,
        claimed=claimed,
        estimate=est,
        ci_low=est - r,
        ci_high=est + r,
        passed=bool(abs(est - claimed) <= r),
        alpha=alpha,
        n=2 * pairs_used,
        method="median of means over pair statistic (Chebyshev + binomial tail)",
        details={"blocks": k, "radius": r, "kurtosis_bound": kurtosis_bound},
    )


def _chunk_cdf_counts(
    sampler: Sampler, g: NDArray[np.float64], j: int, gen: np.random.Generator, m: int
) -> NDArray[np.int64]:
    """Counts of one chunk's samples in the cells ``(-inf, g_0], (g_0, g_1], ..., (g_last, inf)``."""
    return np.bincount(np.searchsorted(g, _draw(sampler, gen, m), side="left"), minlength=g.size + 1)


def check_cdf(
    sampler: Sampler,
    n: int,
    cdf: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    grid: NDArray[np.float64] | None = None,
    grid_size: int = 4097,
    alpha: float = DEFAULT_ALPHA,
    rng: RNGLike = None,
    executor: Executor | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    name: str = "CDF",
) -> CheckResult:
    r"""Test that samples follow a claimed CDF :math:`F`, with the DKW inequality.

    The Dvoretzky--Kiefer--Wolfowitz inequality with Massart's (1990) tight
    constant,

    .. math:: P\Big(\sup_x |F_n(x) - F(x)| > t\Big) \le 2 e^{-2 n t^2},

    holds for every true continuous :math:`F` and every ``t`` with
    :math:`e^{-2nt^2} \le 1/2`. With :math:`t = \sqrt{\ln(2/\alpha)/(2n)}` the
    false-alarm probability is at most ``alpha``. The supremum is evaluated on
    a grid (counts only, so memory stays flat); a supremum over fewer points is
    no larger, so the bound still holds even for a grid chosen from the data.
    By default the grid is the ``grid_size`` quantiles of the first chunk.

    Parameters
    ----------
    sampler : callable
        ``sampler(rng, size)`` returning ``size`` independent finite real samples.
    n : int
        Number of samples, an integer in [1, :data:`MAX_SAMPLES`] (10**10).
    cdf : callable
        The claimed CDF, vectorised, with values in [0, 1] on the grid.
    grid : array_like, optional
        Points where the CDFs are compared, non-empty and finite (default: ``grid_size`` quantiles of
        the first chunk).
    grid_size : int
        An integer in [2, :data:`MAX_GRID`] (2**20), used when ``grid`` is not given.
    alpha : float
        The false-alarm probability, in (0, 1) (default 1e-6).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The random stream (:func:`dpcore.as_generator`); an int seed must be >= 0.
    executor : concurrent.futures.Executor, optional
        Where the chunks are drawn (``None``: here); the result is the same.
    chunk_size : int
        Samples per chunk, an integer in [1, :data:`MAX_CHUNK`] (2**24).
    name : str
        A label for the result.

    Raises
    ------
    ValueError
        If ``cdf`` returns values outside [0, 1] or NaN, ``grid`` is empty or
        not finite, ``grid_size`` is not an integer in [2, :data:`MAX_GRID`],
        or other arguments are invalid (as :func:`check_probability`).
    """
    n, alpha, chunk_size = _validate_common(n, alpha, chunk_size)
    if grid is None:
        grid_size = _count("grid_size", grid_size, 2, MAX_GRID, "dpcore.montecarlo.MAX_GRID")
    else:
        try:
            grid = np.asarray(grid, dtype=float).ravel()
        except (TypeError, ValueError):
            raise ValueError(f"grid must be real numbers; got {type(grid).__name__}") from None
        if grid.size == 0 or not np.all(np.isfinite(grid)):
            raise ValueError("grid must be a non-empty array of finite real numbers (no NaN or infinity)")
    root, sizes = as_seed_sequence(rng), _engine.chunk_sizes(n, chunk_size)
    if grid is None:  # the quantiles of chunk 0, which is then counted here
        first = _draw(sampler, _engine.chunk_rng(root, 0), sizes[0])
        g = np.unique(np.quantile(first, np.linspace(0, 1, grid_size)))
        counts = np.bincount(np.searchsorted(g, first, side="left"), minlength=g.size + 1)
        if len(sizes) > 1:
            task = partial(_chunk_cdf_counts, sampler, g)
            counts = counts + _engine.fold_chunks(task, operator.add, sizes, root, executor=executor, start=1)
    else:
        g = np.unique(np.asarray(grid, dtype=float))
        counts = _engine.fold_chunks(
            partial(_chunk_cdf_counts, sampler, g), operator.add, sizes, root, executor=executor
        )
    empirical = np.cumsum(counts)[:-1] / n  # F_n(g_j) = #{x <= g_j} / n
    claimed_f = np.asarray(cdf(g), dtype=float)
    if claimed_f.shape != g.shape or not np.all((claimed_f >= 0) & (claimed_f <= 1)):
        raise ValueError("cdf must map the grid to values in [0, 1] (no NaN)")
    dev = np.abs(empirical - claimed_f)
    worst = int(np.argmax(dev))
    t = math.sqrt(_log_ratio(2, alpha) / (2 * n))
    # confidence set for the distance sup|F - F_claimed| over the grid: [dev - t, dev + t] (>= 0);
    # the claim "distance 0" passes iff it lies inside, i.e. iff dev <= t
    return CheckResult(
        name=name,
        claimed=0.0,
        estimate=float(dev[worst]),
        ci_low=max(0.0, float(dev[worst]) - t),
        ci_high=float(dev[worst]) + t,
        passed=bool(dev[worst] <= t),
        alpha=alpha,
        n=n,
        method="DKW (Massart constant), sup over grid",
        details={"grid_points": int(g.size), "argmax": float(g[worst]), "dkw_radius": t},
    )


def check_law(
    sampler: Sampler,
    n: int,
    *,
    cdf: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    mean: float,
    variance: float,
    variance_bound: float,
    kurtosis_bound: float,
    event: Callable[[NDArray[np.float64]], NDArray[np.bool_]],
    event_probability: float,
    grid: NDArray[np.float64] | None = None,
    alpha: float = DEFAULT_ALPHA,
    rng: RNGLike = None,
    executor: Executor | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    name: str = "",
) -> list[CheckResult]:
    r"""Test a claimed law of ``sampler`` four ways: its CDF, mean, variance and one event's probability.

    The four checks are :func:`check_cdf` (DKW), :func:`check_mean` (median of
    means, premise: variance at most ``variance_bound``), :func:`check_variance`
    (median of means over disjoint pairs, premise: kurtosis at most
    ``kurtosis_bound``) and :func:`check_probability` (Clopper--Pearson), each
    at level :math:`\alpha/4` on its own child stream of ``rng``'s root, so a
    true claim fails any of them with probability at most ``alpha`` (union
    bound). The premises are separate from the claims, so that a wrong
    claimed variance does not change the mean check's interval.

    Parameters
    ----------
    sampler : callable
        ``sampler(rng, size)`` returning ``size`` independent finite real samples.
    n : int
        Number of samples, an integer in [2, :data:`MAX_SAMPLES`] (10**10).
    cdf : callable
        The claimed CDF (as :func:`check_cdf`).
    mean : float
        The claimed mean, a finite real number.
    variance : float
        The claimed variance, finite and > 0 (as :func:`check_variance`).
    variance_bound : float
        The premise of the mean check, finite and > 0.
    kurtosis_bound : float
        The premise of the variance check, finite and >= 1.
    event : callable
        The event of the probability check (as :func:`check_probability`).
    event_probability : float
        The claimed probability of ``event``, in [0, 1].
    grid : array_like, optional
        As :func:`check_cdf`.
    alpha : float
        The total false-alarm probability, in (0, 1) and at least about 4e-323 (default 1e-6).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The random stream (:func:`dpcore.as_generator`); an int seed must be >= 0.
    executor : concurrent.futures.Executor, optional
        Where the chunks are drawn (``None``: here); the result is the same.
    chunk_size : int
        Samples per chunk, an integer in [1, :data:`MAX_CHUNK`] (2**24).
    name : str
        A label for the result.

    Returns
    -------
    list of CheckResult
        CDF, mean, variance and event checks, in that order, named
        ``"<check> (name)"``.

    Raises
    ------
    ValueError
        As the four checks, naming ``mean``, ``variance`` and
        ``event_probability`` (the checks' ``claimed``); or if ``alpha`` is
        outside (0, 1) or below about 4e-323 (each check gets ``alpha / 4``,
        which the two-sided event check halves again: it must not underflow to 0).
    """
    alpha = check_probability_open("alpha", alpha)
    if alpha / 4 / 2 == 0.0:
        raise ValueError(
            f"alpha = {alpha!r} is too small: each of the four checks gets alpha / 4, halved again by the "
            "two-sided event check, which underflows to 0 (alpha must be at least about 4e-323)"
        )
    mean = _real("mean", mean)
    variance = check_positive_finite("variance", variance)
    kurtosis_bound = check_positive_finite("kurtosis_bound", kurtosis_bound)
    if kurtosis_bound >= 1:  # else check_variance refuses it
        _pair_variance("variance", variance, kurtosis_bound)
    event_probability = _probability_closed("event_probability", event_probability)
    a = alpha / 4
    root = as_seed_sequence(rng)
    streams = [_engine.child(root, i) for i in range(4)]  # root.spawn(4), without advancing a given root
    label = f" ({name})" if name else ""
    common: dict[str, Any] = {"alpha": a, "chunk_size": chunk_size, "executor": executor}
    return [
        check_cdf(sampler, n, cdf, grid=grid, rng=streams[0], name=f"CDF{label}", **common),
        check_mean(sampler, n, mean, variance_bound=variance_bound, rng=streams[1], name=f"mean{label}", **common),
        check_variance(
            sampler, n, variance, kurtosis_bound=kurtosis_bound, rng=streams[2], name=f"variance{label}", **common
        ),
        check_probability(sampler, event, n, event_probability, rng=streams[3], name=f"event{label}", **common),
    ]
