r"""Calibration of the book's statistical checks: measured false-alarm rates, coverage and power.

Every Monte Carlo check of :mod:`dpcore.montecarlo` and the auditor
:func:`dpcore.auditing.audit_epsilon` promises a false-alarm probability of
at most ``alpha``: applied to a TRUE claim, it rejects with probability
:math:`\le \alpha`. The functions here *measure* that promise. Each one runs a
check :math:`R` times, on independent samples, on a claim known to be true,
at a deliberately loose level (``alpha = 0.05`` or ``0.1``, so that
rejections are frequent enough to count), and counts the rejections
:math:`K`. If the check is calibrated, :math:`K` is stochastically at most
:math:`\mathrm{Binomial}(R, \alpha)`, and the exact one-sided binomial test of
:math:`H_0: \text{rate} \le \alpha` (``scipy.stats.binomtest``, alternative
``"greater"``),

.. math:: \text{p-value} = P(\mathrm{Bin}(R, \alpha) \ge K),

rejects :math:`H_0` with probability at most ``level`` (the book's
:math:`10^{-6}`) whenever the check is calibrated. The verdict
``calibrated`` is ``p-value > level``. For an interval estimate the count is
the number of intervals that fail to cover the truth.

The experiment can fail: a miscalibrated twin whose true false-alarm rate is
:math:`\rho > \alpha` is declared uncalibrated unless
:math:`K < c`, with :math:`c` the smallest count whose p-value is
:math:`\le` ``level`` (:func:`rejection_threshold`); that miss has
probability :math:`P(\mathrm{Bin}(R, \rho) < c)` (:func:`miss_probability`),
and :func:`replications_for` returns the smallest :math:`R` making it
:math:`\le 10^{-6}`.

Power curves (:func:`power_curve`) apply the same machinery to claims wrong by
a known ``shift``; the reported rate is then the probability of catching the
error.

Random streams: one root :class:`numpy.random.SeedSequence` (from ``rng``
through :func:`dpcore.as_seed_sequence`) is spawned into :math:`R`
independent children, one per replication, for checks that draw their own
samples; experiments that only need counts draw all :math:`R` counts at once,
vectorised, from a generator on the root.

Measured rates at a loose ``alpha`` only show that a check is not *over*
confident. Checks built on Chebyshev or Hoeffding are far more conservative
than ``alpha`` (their measured rates are orders of magnitude below it), so a
constant that is wrong by a factor of 2 can stay invisible here; those
constants are tested exactly against their derivations in
``tests/test_constants.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from dpcore._validation import RNGLike, as_generator, as_seed_sequence, check_positive_int, check_probability_open
from dpcore.auditing import AuditResult, audit_epsilon
from dpcore.gaussian import gaussian_delta
from dpcore.mechanisms import GaussianMechanism, LaplaceMechanism
from dpcore.montecarlo import (
    CheckResult,
    check_bounded_mean,
    check_cdf,
    check_mean,
    check_probability,
    check_variance,
    clopper_pearson_bounds,
    median_of_means_radius,
    probability_acceptance,
    probability_result,
)

from . import flawed as F

__all__ = [
    "BOOK_LEVEL",
    "CalibrationResult",
    "PowerCurve",
    "summarize",
    "rejection_threshold",
    "miss_probability",
    "replications_for",
    "calibrate_probability_result",
    "calibrate_check_probability",
    "calibrate_clopper_pearson",
    "calibrate_check_mean",
    "calibrate_check_bounded_mean",
    "calibrate_check_variance",
    "calibrate_check_cdf",
    "calibrate_audit",
    "power_curve",
    "exact_probability_rate",
    "exact_cdf_rate_bounds",
    "exact_gaussian_mean_rate",
    "exact_gaussian_variance_rate",
    "coin_hoeffding_without_sqrt_rate_lower",
    "SuiteRow",
    "calibration_suite",
]

BOOK_LEVEL = 1e-6
"""The book's level: the false-alarm probability of every assert."""

Alternative = Literal["two-sided", "less", "greater"]


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class CalibrationResult:
    r"""Outcome of one calibration (or power) experiment.

    Attributes
    ----------
    check : str
        Which check was run (and on what configuration).
    replications : int
        :math:`R`, the number of independent runs.
    rejections : int
        :math:`K`, the number of runs that rejected the claim (for an interval,
        that failed to cover the truth).
    alpha : float
        The check's nominal false-alarm level.
    rate : float
        :math:`K/R`.
    p_value : float
        Exact one-sided binomial p-value of :math:`H_0: \text{rate} \le \alpha`,
        :math:`P(\mathrm{Bin}(R, \alpha) \ge K)`.
    rate_upper : float
        Clopper--Pearson upper bound of the rate at ``level``.
    rate_lower : float
        Clopper--Pearson lower bound of the rate at ``level``.
    calibrated : bool
        ``p_value > level``: the measured rate is consistent with at most ``alpha``.
    shift : float
        How wrong the claim was (0 for a true claim; power experiments only).
    level : float
        The level of the binomial test and of the bounds (default :data:`BOOK_LEVEL`).
    """

    check: str
    replications: int
    rejections: int
    alpha: float
    rate: float
    p_value: float
    rate_upper: float
    rate_lower: float
    calibrated: bool
    shift: float = 0.0
    level: float = BOOK_LEVEL

    def __str__(self) -> str:
        verdict = "calibrated" if self.calibrated else "MISCALIBRATED"
        return (
            f"[{verdict}] {self.check}: {self.rejections}/{self.replications} rejections "
            f"(rate {self.rate:.4g}, alpha {self.alpha:g}, shift {self.shift:g}; "
            f"rate in [{self.rate_lower:.3g}, {self.rate_upper:.3g}] at level {self.level:g}; "
            f"p-value of rate <= alpha: {self.p_value:.3g})"
        )


@dataclass(frozen=True)
class PowerCurve:
    """Rejection rates of a check against claims wrong by each of ``shifts``.

    Attributes
    ----------
    check : str
        Which check was run.
    shifts : tuple of float
        The errors of the claims (0 is the true claim).
    results : tuple of CalibrationResult
        One experiment per shift, in the order of ``shifts``.
    """

    check: str
    shifts: tuple[float, ...]
    results: tuple[CalibrationResult, ...]

    @property
    def rates(self) -> tuple[float, ...]:
        """Observed rejection rates, one per shift."""
        return tuple(r.rate for r in self.results)


def _level(level: float) -> float:
    return check_probability_open("level", level)


def summarize(
    check: str, rejections: int, replications: int, alpha: float, *, shift: float = 0.0, level: float = BOOK_LEVEL
) -> CalibrationResult:
    r"""Turn a count of rejections into a :class:`CalibrationResult`.

    The p-value is that of the exact binomial test of
    :math:`H_0: \text{rate} \le \alpha` against :math:`\text{rate} > \alpha`,
    ``scipy.stats.binomtest(K, R, alpha, alternative="greater")``, i.e.
    :math:`P(\mathrm{Bin}(R,\alpha) \ge K)`; the rate bounds are the
    Clopper--Pearson bounds (Clopper & Pearson 1934) at ``level`` each.

    Raises
    ------
    ValueError
        If ``replications`` < 1, ``rejections`` is not in [0, replications],
        or ``alpha`` or ``level`` is not in (0, 1).
    """
    replications = check_positive_int("replications", replications)
    rejections = check_positive_int("rejections", rejections, minimum=0)
    if rejections > replications:
        raise ValueError(f"rejections must lie in [0, replications]; got {rejections} > {replications}")
    alpha = check_probability_open("alpha", alpha)
    level = _level(level)
    p_value = float(stats.binomtest(rejections, replications, alpha, alternative="greater").pvalue)
    lo, hi = clopper_pearson_bounds(rejections, replications, level)
    return CalibrationResult(
        check=check,
        replications=replications,
        rejections=rejections,
        alpha=alpha,
        rate=rejections / replications,
        p_value=p_value,
        rate_upper=float(hi),
        rate_lower=float(lo),
        calibrated=p_value > level,
        shift=float(shift),
        level=level,
    )


def rejection_threshold(replications: int, alpha: float, level: float = BOOK_LEVEL) -> int:
    r"""Smallest count :math:`c` of rejections that declares a check miscalibrated.

    :math:`c = \min\{k : P(\mathrm{Bin}(R, \alpha) \ge k) \le \text{level}\}`;
    ``calibrated`` is ``False`` iff :math:`K \ge c`. Returns ``R + 1`` if no
    count is extreme enough (then the experiment cannot fail: choose a larger R).

    Raises
    ------
    ValueError
        If ``replications`` < 1 or ``alpha``, ``level`` are not in (0, 1).
    """
    replications = check_positive_int("replications", replications)
    alpha = check_probability_open("alpha", alpha)
    level = _level(level)
    # binom.isf(level) is the smallest k with P(Bin > k) <= level, so c = that + 1;
    # the neighbourhood is re-checked exactly against binomtest's own tail.
    c = int(stats.binom.isf(level, replications, alpha)) + 1
    while c > 0 and stats.binom.sf(c - 2, replications, alpha) <= level:
        c -= 1
    while c <= replications and stats.binom.sf(c - 1, replications, alpha) > level:
        c += 1
    return min(c, replications + 1)


def miss_probability(replications: int, alpha: float, true_rate: float, level: float = BOOK_LEVEL) -> float:
    r"""Probability that the calibration experiment passes a check whose true rate is ``true_rate``.

    :math:`P(\mathrm{Bin}(R, \rho) < c)` with :math:`c` from
    :func:`rejection_threshold`; for :math:`\rho > \alpha` it is the miss
    probability (type II error) of the experiment, decreasing in :math:`\rho`,
    so a lower bound on the twin's rate gives an upper bound on the miss.

    Raises
    ------
    ValueError
        If ``true_rate`` is not in [0, 1] or the other arguments are invalid.
    """
    rho = float(true_rate)
    if not (0.0 <= rho <= 1.0):
        raise ValueError(f"true_rate must be a probability in [0, 1]; got {true_rate}")
    c = rejection_threshold(replications, alpha, level)
    return float(stats.binom.cdf(c - 1, replications, rho))


def replications_for(
    alpha: float, true_rate: float, *, miss: float = BOOK_LEVEL, level: float = BOOK_LEVEL, maximum: int = 10**8
) -> int:
    r"""Smallest :math:`R` (on a doubling-then-bisection search) with miss probability :math:`\le` ``miss``.

    Raises
    ------
    ValueError
        If ``true_rate <= alpha`` (no R can detect a calibrated check) or no
        :math:`R \le` ``maximum`` suffices.
    """
    alpha = check_probability_open("alpha", alpha)
    miss = check_probability_open("miss", miss)
    if not (alpha < float(true_rate) <= 1.0):
        raise ValueError(f"true_rate must lie in (alpha, 1] = ({alpha}, 1]; got {true_rate}")
    hi = 16
    while miss_probability(hi, alpha, true_rate, level) > miss:
        hi *= 2
        if hi > maximum:
            raise ValueError(f"no replications <= maximum={maximum} reach miss probability {miss}")
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if miss_probability(mid, alpha, true_rate, level) <= miss:
            hi = mid
        else:
            lo = mid
    return hi


# --------------------------------------------------------------------------- helpers


def _children(rng: RNGLike, replications: int) -> list[np.random.SeedSequence]:
    """``replications`` independent child streams of one root SeedSequence."""
    return as_seed_sequence(rng).spawn(replications)


def _count(
    name: str,
    replications: int,
    alpha: float,
    rng: RNGLike,
    run_once: Callable[[np.random.SeedSequence], bool],
    shift: float,
    level: float,
) -> CalibrationResult:
    """Run ``run_once`` (True = reject) on R independent child streams and summarize."""
    replications = check_positive_int("replications", replications)
    rejections = sum(1 for child in _children(rng, replications) if run_once(child))
    return summarize(name, rejections, replications, alpha, shift=shift, level=level)


def _check_alpha(alpha: float) -> float:
    return check_probability_open("alpha", alpha)


def _chunk_kw(chunk_size: int | None) -> dict[str, int]:
    """``{"chunk_size": c}`` to pass to a check, or ``{}`` for its default."""
    return {} if chunk_size is None else {"chunk_size": check_positive_int("chunk_size", chunk_size)}


def _chunk_note(chunk_size: int | None) -> str:
    return "" if chunk_size is None else f", chunk={chunk_size}"


def _label(check: Any, n: int, sampler: Any, chunk_size: int | None) -> str:
    cname, sname = getattr(check, "__name__", "check"), getattr(sampler, "__name__", "sampler")
    return f"{cname}(n={n}, {sname}{_chunk_note(chunk_size)})"


def _finite(name: str, value: float) -> float:
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite; got {value}")
    return x


# --------------------------------------------------------------------------- probability checks


def exact_probability_rate(n: int, p: float, alpha: float, alternative: Alternative = "two-sided") -> float:
    r"""Exact false-alarm rate of :func:`dpcore.probability_result` on the true claim ``p``.

    :math:`1 - P(\text{pass})` with the acceptance probability summed exactly
    over the binomial counts by :func:`dpcore.probability_acceptance`.
    (Up to its window truncation, which only makes this a lower bound by less
    than 1e-300.)

    Raises
    ------
    ValueError
        As :func:`dpcore.probability_acceptance`.
    """
    return 1.0 - probability_acceptance(n, p, p, alternative=alternative, alpha=alpha)


def _shifted_probability(p: float, shift: float) -> float:
    c = p + shift
    if not (0.0 <= c <= 1.0):
        raise ValueError(f"shift must keep the claim p + shift in [0, 1]; got p={p}, shift={shift}")
    return c


def _probability_args(n: int, p: float, alternative: str) -> tuple[int, float]:
    n = check_positive_int("n", n)
    p = float(p)
    if not (0.0 <= p <= 1.0):
        raise ValueError(f"p must be a probability in [0, 1]; got {p}")
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(f"alternative must be 'two-sided', 'less' or 'greater'; got {alternative!r}")
    return n, p


def calibrate_probability_result(
    n: int,
    p: float,
    *,
    alternative: Alternative = "two-sided",
    alpha: float = 0.05,
    replications: int = 10_000,
    rng: RNGLike = None,
    shift: float = 0.0,
    check: Callable[..., CheckResult] = probability_result,
    level: float = BOOK_LEVEL,
) -> CalibrationResult:
    r"""False-alarm rate of the Clopper--Pearson test :func:`dpcore.probability_result`.

    Draws :math:`R` counts :math:`K_i \sim \mathrm{Binomial}(n, p)` at once
    (vectorised) and runs ``check(K_i, n, p + shift, alternative=..., alpha=alpha)``
    on each; with ``shift = 0`` the claim is true, and
    :func:`dpcore.probability_result` guarantees a rejection probability
    :math:`\le \alpha` (:func:`exact_probability_rate` gives it exactly).

    Parameters
    ----------
    n, p : int, float
        Trials per run and the true probability.
    alternative, alpha
        Passed to ``check``.
    replications : int
        :math:`R`.
    rng : None, int, SeedSequence or Generator
        Root of the random stream.
    shift : float
        The claim is ``p + shift`` (kept in [0, 1]).
    check : callable
        :func:`dpcore.probability_result` or a twin with its signature.
    level : float
        Level of the binomial test of the rate.

    Raises
    ------
    ValueError
        If ``n`` < 1, ``p`` or ``p + shift`` is outside [0, 1], ``alpha`` is
        outside (0, 1), ``alternative`` is unknown or ``replications`` < 1.
    """
    n, p = _probability_args(n, p, alternative)
    alpha = _check_alpha(alpha)
    replications = check_positive_int("replications", replications)
    claimed = _shifted_probability(p, shift)
    hits = as_generator(rng).binomial(n, p, size=replications)
    # one check per distinct count: the verdict is a function of the count
    values, counts = np.unique(hits, return_counts=True)
    rejections = 0
    for k, c in zip(values, counts, strict=True):
        if not check(int(k), n, claimed, alternative=alternative, alpha=alpha).passed:
            rejections += int(c)
    name = f"{getattr(check, '__name__', 'check')}(n={n}, p={p:g}, {alternative})"
    return summarize(name, rejections, replications, alpha, shift=shift, level=level)


def calibrate_check_probability(
    n: int,
    p: float,
    *,
    alternative: Alternative = "two-sided",
    alpha: float = 0.05,
    replications: int = 2_000,
    rng: RNGLike = None,
    shift: float = 0.0,
    check: Callable[..., CheckResult] = check_probability,
    chunk_size: int = 1 << 18,
    level: float = BOOK_LEVEL,
) -> CalibrationResult:
    r"""False-alarm rate of :func:`dpcore.check_probability` with its own sampler path.

    Each run draws ``n`` uniform samples from its own child stream and checks
    the claim :math:`P(U < p) = p + \text{shift}` (true when ``shift = 0``);
    a small ``chunk_size`` exercises the chunked path. Slower than
    :func:`calibrate_probability_result` (one sampler call per chunk and run)
    but it tests the sampling and counting code too.

    Raises
    ------
    ValueError
        As :func:`calibrate_probability_result`.
    """
    n, p = _probability_args(n, p, alternative)
    alpha = _check_alpha(alpha)
    claimed = _shifted_probability(p, shift)

    def sampler(gen: np.random.Generator, size: int) -> NDArray[np.float64]:
        return gen.random(size)

    def event(x: NDArray[Any]) -> NDArray[np.bool_]:
        return np.asarray(x < p)

    def once(child: np.random.SeedSequence) -> bool:
        res = check(sampler, event, n, claimed, alternative=alternative, alpha=alpha, rng=child, chunk_size=chunk_size)
        return not res.passed

    name = f"{getattr(check, '__name__', 'check')}(n={n}, p={p:g}, {alternative}, chunk={chunk_size})"
    return _count(name, replications, alpha, rng, once, shift, level)


def _two_sided_cp(hits: NDArray[np.int64], n: int, alpha: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The two-sided 1 - alpha Clopper--Pearson interval: each bound at alpha/2."""
    return clopper_pearson_bounds(hits, n, alpha / 2)


def calibrate_clopper_pearson(
    n: int,
    p: float,
    *,
    side: Literal["both", "lower", "upper"] = "both",
    alpha: float = 0.05,
    replications: int = 100_000,
    rng: RNGLike = None,
    interval: Callable[..., tuple[NDArray[np.float64], NDArray[np.float64]]] | None = None,
    level: float = BOOK_LEVEL,
) -> CalibrationResult:
    r"""Non-coverage rate of the Clopper--Pearson bounds :func:`dpcore.montecarlo.clopper_pearson_bounds`.

    Counts :math:`K_i \sim \mathrm{Binomial}(n, p)`, :math:`i \le R`, are drawn
    at once and the bounds computed vectorised. ``side``:

    * ``"both"``: the two-sided interval ``interval(K, n, alpha)`` (default:
      each bound at :math:`\alpha/2`) misses ``p`` if :math:`p < p_{lo}` or
      :math:`p > p_{hi}`; guaranteed rate :math:`\le 2 \cdot \alpha/2 = \alpha`;
    * ``"lower"`` / ``"upper"``: the one-sided bound at level ``alpha``,
      :math:`P(p < p_{lo}) \le \alpha`, :math:`P(p > p_{hi}) \le \alpha`.

    Raises
    ------
    ValueError
        If ``side`` is unknown, or as :func:`calibrate_probability_result`.
    """
    n, p = _probability_args(n, p, "two-sided")
    alpha = _check_alpha(alpha)
    replications = check_positive_int("replications", replications)
    if side not in ("both", "lower", "upper"):
        raise ValueError(f"side must be 'both', 'lower' or 'upper'; got {side!r}")
    hits = as_generator(rng).binomial(n, p, size=replications)
    if side == "both":
        fn = interval if interval is not None else _two_sided_cp
        lo, hi = fn(hits, n, alpha)
        misses = (p < lo) | (p > hi)
        fname = "clopper_pearson_bounds at alpha/2" if interval is None else getattr(fn, "__name__", "interval")
    else:
        lo, hi = clopper_pearson_bounds(hits, n, alpha)
        misses = (p < lo) if side == "lower" else (p > hi)
        fname = "clopper_pearson_bounds"
    name = f"{fname} non-coverage ({side}, n={n}, p={p:g})"
    return summarize(name, int(np.count_nonzero(misses)), replications, alpha, level=level)


# --------------------------------------------------------------------------- means and variances


def _standard_normal(gen: np.random.Generator, size: int) -> NDArray[np.float64]:
    return gen.standard_normal(size)


def _fair_coin(gen: np.random.Generator, size: int) -> NDArray[np.float64]:
    return gen.integers(0, 2, size=size).astype(float)


def calibrate_check_mean(
    n: int,
    *,
    sampler: Callable[[np.random.Generator, int], NDArray[Any]] = _standard_normal,
    mean: float = 0.0,
    variance_bound: float = 1.0,
    alpha: float = 0.05,
    replications: int = 2_000,
    rng: RNGLike = None,
    shift: float = 0.0,
    check: Callable[..., CheckResult] = check_mean,
    chunk_size: int | None = None,
    level: float = BOOK_LEVEL,
) -> CalibrationResult:
    r"""False-alarm rate of the median-of-means test :func:`dpcore.check_mean`.

    Each run draws ``n`` samples of ``sampler`` (true mean ``mean``, variance
    at most ``variance_bound``; default the standard normal) on its own child
    stream and tests the claim ``mean + shift``. The guarantee (Chebyshev per
    block, exact binomial tail across blocks) is rate :math:`\le \alpha`;
    for a Gaussian it is far below (e.g. 7.7e-6 at ``alpha = 0.05``, a
    single block: :math:`P(|Z| > 1/\sqrt{0.05})`).

    Raises
    ------
    ValueError
        If ``mean``/``shift`` are not finite, or as :func:`dpcore.check_mean`.
    """
    n = check_positive_int("n", n)
    alpha = _check_alpha(alpha)
    claimed = _finite("mean", mean) + _finite("shift", shift)

    extra = _chunk_kw(chunk_size)

    def once(child: np.random.SeedSequence) -> bool:
        return not check(sampler, n, claimed, variance_bound=variance_bound, alpha=alpha, rng=child, **extra).passed

    name = _label(check, n, sampler, chunk_size)
    return _count(name, replications, alpha, rng, once, shift, level)


def calibrate_check_bounded_mean(
    n: int,
    *,
    sampler: Callable[[np.random.Generator, int], NDArray[Any]] = _fair_coin,
    mean: float = 0.5,
    lower: float = 0.0,
    upper: float = 1.0,
    alpha: float = 0.05,
    replications: int = 2_000,
    rng: RNGLike = None,
    shift: float = 0.0,
    check: Callable[..., CheckResult] = check_bounded_mean,
    chunk_size: int | None = None,
    level: float = BOOK_LEVEL,
) -> CalibrationResult:
    r"""False-alarm rate of the Hoeffding / empirical-Bernstein test :func:`dpcore.check_bounded_mean`.

    Default law: a fair coin on {0, 1} (the largest variance a [0, 1] law can
    have, where Hoeffding is closest to tight). Claim ``mean + shift``.

    Raises
    ------
    ValueError
        If ``mean``/``shift`` are not finite, or as :func:`dpcore.check_bounded_mean`.
    """
    n = check_positive_int("n", n, minimum=2)
    alpha = _check_alpha(alpha)
    claimed = _finite("mean", mean) + _finite("shift", shift)

    extra = _chunk_kw(chunk_size)

    def once(child: np.random.SeedSequence) -> bool:
        return not check(sampler, n, claimed, lower=lower, upper=upper, alpha=alpha, rng=child, **extra).passed

    name = _label(check, n, sampler, chunk_size)
    return _count(name, replications, alpha, rng, once, shift, level)


def calibrate_check_variance(
    n: int,
    *,
    sampler: Callable[[np.random.Generator, int], NDArray[Any]] = _standard_normal,
    variance: float = 1.0,
    kurtosis_bound: float = 3.0,
    alpha: float = 0.05,
    replications: int = 2_000,
    rng: RNGLike = None,
    shift: float = 0.0,
    check: Callable[..., CheckResult] = check_variance,
    chunk_size: int | None = None,
    level: float = BOOK_LEVEL,
) -> CalibrationResult:
    r"""False-alarm rate of the pair-statistic median-of-means test :func:`dpcore.check_variance`.

    Default law: the standard normal (variance 1, kurtosis 3). Claim
    ``variance + shift`` (must stay > 0).

    Raises
    ------
    ValueError
        If ``variance + shift`` is not finite and > 0, or as :func:`dpcore.check_variance`.
    """
    n = check_positive_int("n", n, minimum=2)
    alpha = _check_alpha(alpha)
    claimed = _finite("variance", variance) + _finite("shift", shift)
    if claimed <= 0:
        raise ValueError(f"shift must keep the claim variance + shift > 0; got {claimed}")

    extra = _chunk_kw(chunk_size)

    def once(child: np.random.SeedSequence) -> bool:
        return not check(sampler, n, claimed, kurtosis_bound=kurtosis_bound, alpha=alpha, rng=child, **extra).passed

    name = _label(check, n, sampler, chunk_size)
    return _count(name, replications, alpha, rng, once, shift, level)


# --------------------------------------------------------------------------- distributions


def exact_cdf_rate_bounds(
    n: int, alpha: float, *, radius_alpha: float | None = None, grid_gap: float = 0.0
) -> tuple[float, float]:
    r"""Bounds on the false-alarm rate of the DKW test :func:`dpcore.check_cdf` for a continuous law.

    With :math:`D_n = \sup_x |F_n(x) - F(x)|` (exact law: ``scipy.stats.kstwo``)
    and :math:`t = \sqrt{\ln(2/a)/(2n)}` the radius (``a = radius_alpha``,
    default ``alpha``), the check rejects iff the supremum over its grid
    exceeds :math:`t`. A grid supremum is at most :math:`D_n`, and at least
    :math:`D_n - g` when consecutive grid points are at most :math:`g` apart in
    :math:`F` (``grid_gap``; :math:`F_n` is monotone), so

    .. math:: P(D_n > t + g) \le \text{rate} \le P(D_n > t).

    Returns
    -------
    (lower, upper)

    Raises
    ------
    ValueError
        If ``n`` < 1, ``alpha`` or ``radius_alpha`` is not in (0, 1), or ``grid_gap`` < 0.
    """
    n = check_positive_int("n", n)
    a = check_probability_open("radius_alpha", alpha if radius_alpha is None else radius_alpha)
    _check_alpha(alpha)
    if not (math.isfinite(grid_gap) and grid_gap >= 0):
        raise ValueError(f"grid_gap must be finite and >= 0; got {grid_gap}")
    t = math.sqrt(math.log(2 / a) / (2 * n))
    return float(stats.kstwo.sf(t + grid_gap, n)), float(stats.kstwo.sf(t, n))


def calibrate_check_cdf(
    n: int,
    *,
    grid: NDArray[np.float64] | None = None,
    alpha: float = 0.05,
    replications: int = 2_000,
    rng: RNGLike = None,
    shift: float = 0.0,
    check: Callable[..., CheckResult] = check_cdf,
    chunk_size: int | None = None,
    level: float = BOOK_LEVEL,
) -> CalibrationResult:
    r"""False-alarm rate of the DKW test :func:`dpcore.check_cdf`.

    Samples are standard normal; the claimed CDF is :math:`\Phi(x - \text{shift})`
    (true when ``shift = 0``). ``grid`` is passed to the check (``None``: its
    default grid from the first chunk). See :func:`exact_cdf_rate_bounds` for
    the exact rate.

    Raises
    ------
    ValueError
        If ``shift`` is not finite, or as :func:`dpcore.check_cdf`.
    """
    n = check_positive_int("n", n)
    alpha = _check_alpha(alpha)
    loc = _finite("shift", shift)

    def cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(stats.norm.cdf(x - loc))

    extra = _chunk_kw(chunk_size)

    def once(child: np.random.SeedSequence) -> bool:
        return not check(_standard_normal, n, cdf, grid=grid, alpha=alpha, rng=child, **extra).passed

    gname = "default grid" if grid is None else f"grid of {np.size(grid)}"
    name = f"{getattr(check, '__name__', 'check')}(n={n}, normal, {gname}{_chunk_note(chunk_size)})"
    return _count(name, replications, alpha, rng, once, shift, level)


# --------------------------------------------------------------------------- auditing


def calibrate_audit(
    *,
    mechanism: Callable[[Any, int, np.random.Generator], NDArray[Any]] | None = None,
    epsilon: float = 1.0,
    delta: float = 0.0,
    d: Any = 0.0,
    d_prime: Any = 1.0,
    n_samples: int = 2_000,
    bins: int = 64,
    alpha: float = 0.1,
    replications: int = 1_000,
    rng: RNGLike = None,
    shift: float = 0.0,
    check: Callable[..., AuditResult] = audit_epsilon,
    level: float = BOOK_LEVEL,
) -> CalibrationResult:
    r"""False-alarm rate of :func:`dpcore.audit_epsilon` on a mechanism whose epsilon is known exactly.

    A false alarm is ``epsilon_lower > epsilon - shift``: with ``shift = 0``
    and a mechanism that is exactly :math:`(\varepsilon, \delta)`-DP between
    ``d`` and ``d_prime``, the auditor promises a rate :math:`\le \alpha`
    (``confidence = 1 - alpha``). Defaults: without ``delta``, Laplace noise
    of scale :math:`1/\varepsilon` between 0 and 1 (exactly
    :math:`\varepsilon`-DP: every tail beyond the shift has ratio
    :math:`e^{\varepsilon}`); with ``delta > 0`` and no ``mechanism``, the
    Gaussian mechanism :math:`N(\cdot, 1)` and ``delta`` must be its exact
    :math:`\delta(\varepsilon)` (:func:`dpcore.gaussian_delta`), which is
    tight, so the Gaussian tail events nearly attain it. ``shift > 0`` gives
    a power experiment (the claim understates epsilon by ``shift``).
    Each run uses ``chunk_size = n_samples`` and its own child stream.

    Raises
    ------
    ValueError
        If ``epsilon`` is not finite and > 0, ``delta`` not in [0, 1), or as
        :func:`dpcore.audit_epsilon`.
    """
    eps = _finite("epsilon", epsilon)
    if eps <= 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon}")
    delta_f = float(delta)
    if not (0.0 <= delta_f < 1.0):
        raise ValueError(f"delta must lie in [0, 1); got {delta}")
    alpha = _check_alpha(alpha)
    n_samples = check_positive_int("n_samples", n_samples, minimum=2)
    if mechanism is None:
        mechanism = LaplaceMechanism(1.0 / eps) if delta_f == 0.0 else GaussianMechanism(1.0)
    claim = eps - _finite("shift", shift)

    def once(child: np.random.SeedSequence) -> bool:
        res = check(
            mechanism,
            d,
            d_prime,
            n_samples,
            confidence=1.0 - alpha,
            rng=child,
            delta=delta_f,
            bins=bins,
            chunk_size=n_samples,
        )
        return bool(res.epsilon_lower > claim)

    name = f"{getattr(check, '__name__', 'check')}({mechanism!r}, eps={eps:g}, delta={delta_f:.4g}, n={n_samples})"
    return _count(name, replications, alpha, rng, once, shift, level)


# --------------------------------------------------------------------------- power


def power_curve(
    calibrate: Callable[..., CalibrationResult],
    shifts: Sequence[float],
    *,
    rng: RNGLike = None,
    **kwargs: Any,
) -> PowerCurve:
    r"""Rejection rates of one check against claims wrong by each of ``shifts``.

    Calls ``calibrate(shift=s, rng=child_s, **kwargs)`` for every ``s``,
    each on its own child of the root stream. At ``s = 0`` the rate is the
    false-alarm rate; elsewhere it is the power, :math:`1 - ` the miss rate
    (its ``calibrated`` flag is then meaningless: a check *should* reject a
    wrong claim more often than ``alpha``).

    Raises
    ------
    ValueError
        If ``shifts`` is empty or not finite, or as ``calibrate``.
    """
    grid = tuple(float(s) for s in shifts)
    if not grid or not all(math.isfinite(s) for s in grid):
        raise ValueError("shifts must be a non-empty sequence of finite numbers")
    kids = _children(rng, len(grid))
    results = tuple(calibrate(shift=s, rng=kid, **kwargs) for s, kid in zip(grid, kids, strict=True))
    return PowerCurve(check=results[0].check, shifts=grid, results=results)


# --------------------------------------------------------------------------- exact rates on Gaussian data


def exact_gaussian_mean_rate(n: int, alpha: float, *, radius_scale: float = 1.0) -> float:
    r"""Exact rejection rate of :func:`dpcore.check_mean` on :math:`N(0, 1)` samples, true claim 0, variance bound 1.

    With ``k`` blocks of ``m`` (from :func:`dpcore.montecarlo.median_of_means_radius`),
    the block means are independent :math:`N(0, 1/m)` and the median of the
    odd number ``k`` exceeds :math:`r` iff at least :math:`h = (k+1)/2` of them do:

    .. math:: \text{rate} = 2\,P(\mathrm{Bin}(k, q) \ge h), \qquad q = 1 - \Phi(r\sqrt m).

    ``radius_scale`` multiplies the radius (``alpha`` gives the twin
    :func:`dpbook.flawed.check_mean_alpha_in_numerator`).

    Raises
    ------
    ValueError
        If ``n`` < 1, ``alpha`` not in (0, 1) or ``radius_scale`` not finite and > 0.
    """
    alpha = _check_alpha(alpha)
    scale = _finite("radius_scale", radius_scale)
    if scale <= 0:
        raise ValueError(f"radius_scale must be > 0; got {radius_scale}")
    r, k = median_of_means_radius(check_positive_int("n", n), 1.0, alpha)
    m, h = n // k, (k + 1) // 2
    q = float(stats.norm.sf(scale * r * math.sqrt(m)))
    return float(2 * stats.binom.sf(h - 1, k, q))


def exact_gaussian_variance_rate(n: int, alpha: float, *, kurtosis_bound: float = 3.0, scale2: float = 1.0) -> float:
    r"""Exact rejection rate of :func:`dpcore.check_variance` on :math:`N(0, s)` samples for the claim 1.

    :math:`Y = (X_1 - X_2)^2/2 \sim s\,\chi^2_1`, so a block mean of ``m`` is
    :math:`s\,\chi^2_m/m`; with ``k`` blocks and :math:`h = (k+1)/2`,

    .. math:: \text{rate} = P(\mathrm{Bin}(k, q_+) \ge h) + P(\mathrm{Bin}(k, q_-) \ge h),

    :math:`q_\pm` the chi-square tails beyond :math:`1 \pm r`. ``s = scale2``
    (1: true claim; 2: the twin :func:`dpbook.flawed.check_variance_pair_without_half`).

    Raises
    ------
    ValueError
        If ``n`` < 2, ``alpha`` not in (0, 1), ``kurtosis_bound`` < 1 or ``scale2`` not > 0.
    """
    alpha = _check_alpha(alpha)
    n = check_positive_int("n", n, minimum=2)
    kappa = _finite("kurtosis_bound", kurtosis_bound)
    if kappa < 1:
        raise ValueError(f"kurtosis_bound must be >= 1; got {kurtosis_bound}")
    s = _finite("scale2", scale2)
    if s <= 0:
        raise ValueError(f"scale2 must be > 0; got {scale2}")
    pairs = n // 2
    r, k = median_of_means_radius(pairs, (kappa + 1) / 2, alpha)
    m, h = pairs // k, (k + 1) // 2
    up = float(stats.chi2.sf(m * (1 + r) / s, m))
    down = float(stats.chi2.cdf(m * (1 - r) / s, m)) if r < 1 else 0.0
    return float(stats.binom.sf(h - 1, k, up) + stats.binom.sf(h - 1, k, down))


def coin_hoeffding_without_sqrt_rate_lower(n: int, alpha: float) -> float:
    r"""Lower bound on the false-alarm rate of :func:`dpbook.flawed.check_bounded_mean_hoeffding_without_sqrt`.

    On a fair coin the twin's radius is at most :math:`r = \ln(4/\alpha)/(2n)`, so it
    rejects at least when :math:`|K/n - 1/2| > r`, :math:`K \sim \mathrm{Bin}(n, 1/2)`;
    that probability is summed exactly.

    Raises
    ------
    ValueError
        If ``n`` < 2 or ``alpha`` not in (0, 1).
    """
    n = check_positive_int("n", n, minimum=2)
    alpha = _check_alpha(alpha)
    r = math.log(4 / alpha) / (2 * n)
    k = np.arange(n + 1)
    return float(stats.binom.pmf(k[np.abs(k / n - 0.5) > r], n, 0.5).sum())


# --------------------------------------------------------------------------- the whole experiment


@dataclass(frozen=True)
class SuiteRow:
    """One line of :func:`calibration_suite`: a real check, its twin, and the experiment's miss probability.

    Attributes
    ----------
    real : CalibrationResult
        The real check on a true claim (expected ``calibrated``).
    twin : CalibrationResult
        Its miscalibrated twin on the same configuration (expected not ``calibrated``).
    twin_rate : float
        The twin's true false-alarm rate, exactly or a lower bound (see ``twin_rate_source``).
    twin_rate_source : str
        How ``twin_rate`` was obtained.
    miss : float
        :func:`miss_probability` of the twin experiment at ``twin_rate``: the
        probability that the twin would have passed (<= 1e-6 by the choice of R).
    """

    real: CalibrationResult
    twin: CalibrationResult
    twin_rate: float
    twin_rate_source: str
    miss: float

    @property
    def ok(self) -> bool:
        """The real check is accepted and the twin rejected."""
        return self.real.calibrated and not self.twin.calibrated


def calibration_suite(
    *, alpha: float = 0.05, audit_alpha: float = 0.1, rng: RNGLike = 0, miss: float = BOOK_LEVEL, floor: int = 2_000
) -> tuple[SuiteRow, ...]:
    r"""Run every real check and its twin from :mod:`dpbook.flawed` through a calibration experiment.

    For each pair, R is :func:`replications_for` the twin's true rate (exact
    where a closed form exists -- Clopper--Pearson by exact summation,
    median of means on Gaussian data, DKW through ``scipy.stats.kstwo`` --
    otherwise a Clopper--Pearson lower bound at ``miss/2`` from an independent
    pilot of 1000 runs, with R then chosen for a miss of ``miss/2``), but at
    least ``floor`` (100 ``floor`` for the count-only experiments), so the
    twin is caught with probability :math:`\ge 1 -` ``miss``, while the real
    check is wrongly flagged with probability :math:`\le 10^{-6}`.

    Configurations: two-sided Clopper--Pearson test and interval at n = 100,
    p = 1/2; the sampling path of ``check_probability`` with chunks of 37;
    ``check_mean`` and ``check_variance`` on N(0, 1), n = 100; ``check_bounded_mean``
    on a fair coin, n = 100; ``check_cdf`` on N(0, 1), n = 100, with a grid of
    1999 normal quantiles; ``audit_epsilon`` on Laplace(1/epsilon), epsilon = 1,
    and on N(., 1) at its exact delta(1), 2000 samples per side.

    Raises
    ------
    ValueError
        If ``alpha`` or ``audit_alpha`` is not in (0, 1/2) or ``floor`` < 1.
    """
    alpha = _check_alpha(alpha)
    audit_alpha = check_probability_open("audit_alpha", audit_alpha)
    if alpha >= 0.5 or audit_alpha >= 0.5:
        raise ValueError("alpha and audit_alpha must be < 1/2 (the twins double them)")
    floor = check_positive_int("floor", floor)
    kids = iter(_children(rng, 32))
    rows: list[SuiteRow] = []

    def pair(
        run: Callable[..., CalibrationResult],
        twin_check: Any,
        twin_rate: float,
        source: str,
        a: float,
        minimum: int,
        budget: float = miss,
        **kw: Any,
    ) -> None:
        reps = max(replications_for(a, twin_rate, miss=budget), minimum)
        real = run(alpha=a, replications=reps, rng=next(kids), **kw)
        twin = run(alpha=a, replications=reps, rng=next(kids), check=twin_check, **kw)
        rows.append(SuiteRow(real, twin, twin_rate, source, miss_probability(reps, a, twin_rate)))

    n = 100
    cp_twin = exact_probability_rate(n, 0.5, 2 * alpha)
    pair(
        calibrate_probability_result,
        F.probability_result_unsplit_alpha,
        cp_twin,
        "exact (binomial sum)",
        alpha,
        100 * floor,
        n=n,
        p=0.5,
    )

    def cp_interval(*, check: Any = None, **kw: Any) -> CalibrationResult:
        return calibrate_clopper_pearson(interval=check, **kw)

    pair(
        cp_interval, F.clopper_pearson_interval_unsplit, cp_twin, "exact (binomial sum)", alpha, 100 * floor, n=n, p=0.5
    )
    pair(
        calibrate_check_probability,
        F.check_probability_unsplit_alpha,
        cp_twin,
        "exact (binomial sum)",
        alpha,
        floor,
        n=n,
        p=0.5,
        chunk_size=37,
    )
    pair(
        calibrate_check_mean,
        F.check_mean_alpha_in_numerator,
        exact_gaussian_mean_rate(n, alpha, radius_scale=alpha),
        "exact (Gaussian block means)",
        alpha,
        floor,
        n=n,
    )
    pair(
        calibrate_check_bounded_mean,
        F.check_bounded_mean_hoeffding_without_sqrt,
        coin_hoeffding_without_sqrt_rate_lower(n, alpha),
        "lower bound (binomial sum)",
        alpha,
        floor,
        n=n,
    )
    pair(
        calibrate_check_variance,
        F.check_variance_pair_without_half,
        exact_gaussian_variance_rate(n, alpha, scale2=2.0),
        "exact (chi-square block means)",
        alpha,
        floor,
        n=n,
    )
    gap = 1 / 2000
    grid = np.asarray(stats.norm.ppf(np.arange(1, 2000) * gap))
    dkw_lo, _ = exact_cdf_rate_bounds(n, alpha, radius_alpha=2 * alpha, grid_gap=gap)
    pair(
        calibrate_check_cdf,
        F.check_cdf_dkw_without_two,
        dkw_lo,
        "lower bound (kstwo, grid gap 5e-4)",
        alpha,
        floor,
        n=n,
        grid=grid,
    )
    for twin_check, delta in (
        (F.audit_epsilon_confidence_as_alpha, 0.0),
        (F.audit_epsilon_ignoring_delta, float(gaussian_delta(1.0, 1.0, 1.0))),
    ):
        cfg: dict[str, Any] = {"epsilon": 1.0, "delta": delta, "n_samples": 2000}
        pilot = calibrate_audit(
            alpha=audit_alpha, replications=1000, rng=next(kids), check=twin_check, level=miss / 2, **cfg
        )
        pair(
            calibrate_audit,
            twin_check,
            pilot.rate_lower,
            f"lower bound (pilot of 1000, level {miss / 2:g})",
            audit_alpha,
            floor,
            budget=miss / 2,
            **cfg,
        )
    return tuple(rows)
