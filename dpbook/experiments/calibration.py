r"""Experiments of the appendix "Calibrating the checks" (``chapters/appendix_calibration.ipynb``).

The appendix checks the book's instruments: the false-alarm rates of the Monte
Carlo checks against their promised ``alpha`` (:func:`check_calibration`),
the power of the Clopper--Pearson test against its exact value
(:func:`power_against_exact`), the constants behind the checks' radii and
bounds (:func:`constants_radii`, :func:`constants_tails`), the independence of
the engines' chunked streams (:func:`stream_independence`) and the auditor on
a :math:`(0, \delta)` mechanism (:func:`audit_zero_epsilon`). Each returns an
:class:`~dpbook.experiments.Experiment` whose ``evidence`` must hold and whose
``controls`` (the miscalibrated twins of :mod:`dpbook.flawed`, the plausible
slips of a constant) must fail; the chapter hands both to
:func:`dpbook.ledger.record`. The symbolic derivations (the DKW and Hoeffding
radii, the variance of the pair statistic) stay in the chapter and come in
as arguments.

:func:`dpbook.figures.calibration_rates` and
:func:`dpbook.figures.calibration_power` draw the appendix's two figures from
these results (the cells that call them are hidden).

Every random draw goes through :mod:`dpcore` (or :mod:`dpbook.calibration`)
with the integer seeds given, so the seed sweep (``tasks.py sweep``) re-runs
each experiment under other streams.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import mpmath
import numpy as np
from numpy.typing import NDArray
from scipy import stats

import dpcore
from dpcore.auditing import AuditResult
from dpcore.event_ratios import event_detection_miss
from dpcore.independence import UniformRecorder, independence_tests, repeat_probability, repeated_values
from dpcore.montecarlo import CheckResult, clopper_pearson_bounds, probability_acceptance

from .. import calibration, flawed
from ..evidence import Close, Compare, Fact, Test
from . import Experiment

__all__ = [
    "BOOK_SAMPLERS",
    "CalibrationSuite",
    "PowerAgainstExact",
    "ConstantsRadii",
    "ConstantsTails",
    "StreamIndependence",
    "ZeroEpsilonAudit",
    "check_calibration",
    "power_against_exact",
    "constants_radii",
    "tail_root",
    "block_radius",
    "constants_tails",
    "stream_independence",
    "audit_zero_epsilon",
]

Sampler = Callable[[np.random.Generator, int], NDArray[Any]]


def _alternating(g: np.random.Generator, s: int) -> NDArray[np.float64]:
    return (np.arange(s) % 2).astype(float)


def _discrete_laplace(g: np.random.Generator, s: int) -> NDArray[Any]:
    return np.asarray(dpcore.sample_discrete_laplace(Fraction(3, 2), s, rng=g))


def _discrete_gaussian(g: np.random.Generator, s: int) -> NDArray[Any]:
    return np.asarray(dpcore.sample_discrete_gaussian(2, s, rng=g))


def _laplace_mechanism(g: np.random.Generator, s: int) -> NDArray[Any]:
    return np.asarray(dpcore.laplace_mechanism(np.zeros(s), 1.0, 1.0, rng=g))


def _laplace_draws(g: np.random.Generator, s: int) -> NDArray[np.float64]:
    return g.laplace(0.0, 1.0, s)


BOOK_SAMPLERS: Mapping[str, Sampler] = MappingProxyType(
    {
        "discrete Laplace": _discrete_laplace,
        "discrete Gaussian": _discrete_gaussian,
        "Laplace mechanism": _laplace_mechanism,
    }
)
"""The book's samplers run through :func:`stream_independence` (each symmetric about 0; read-only)."""


# --------------------------------------------------------------------------- false-alarm rates


@dataclass(frozen=True)
class CalibrationSuite(Experiment):
    """:func:`check_calibration`: every check and its twin, one claim per row.

    Attributes
    ----------
    rows : tuple of dpbook.calibration.SuiteRow
        The rows of :func:`dpbook.calibration.calibration_suite`.
    parts : tuple of Experiment
        One experiment per row (its real check's evidence, its twin's control),
        for one ledger claim each; ``evidence`` and ``controls`` are their union.
    """

    rows: tuple[calibration.SuiteRow, ...] = ()
    parts: tuple[Experiment, ...] = ()

    def table(self) -> str:
        """One line per row: each check's rate and p-value, its twin's, the miss probability."""
        return "\n".join(
            f"{row.real.check[:60]:60s} rate {row.real.rate:.4f} (p "
            f"{row.real.p_value:.2g}) | "
            f"twin rate {row.twin.rate:.4f} (p {row.twin.p_value:.2g}), miss <= "
            f"{row.miss:.1e}"
            for row in self.rows
        )


def check_calibration(
    *,
    rng: int = 2026,
    miss: float = 5e-7,
    level: float = 5e-7,
    alpha: float = 0.05,
    audit_alpha: float = 0.1,
    floor: int = 2_000,
    suite: Callable[..., Sequence[calibration.SuiteRow]] = calibration.calibration_suite,
) -> CalibrationSuite:
    r"""Measured false-alarm rates of every check and of its miscalibrated twin.

    Runs :func:`dpbook.calibration.calibration_suite` (each check of
    :mod:`dpcore.montecarlo`, the Clopper--Pearson bounds and ``audit_epsilon``
    :math:`R` times on a true claim at the loose level ``alpha``, or
    ``audit_alpha`` for the auditor, next to its twin from
    :mod:`dpbook.flawed`). With :math:`K` rejections out of :math:`R`, the
    exact binomial p-value :math:`P(\mathrm{Bin}(R, \alpha) \ge K)` of
    "rate :math:`\le \alpha`" is the evidence: it must exceed ``level``, which
    a calibrated check fails with probability at most ``level``. The control
    is the twin's p-value, which must come out :math:`\le 10^{-6}`
    (uncalibrated); its chance of not doing so is the row's computed miss
    probability (at most ``miss`` by the choice of :math:`R`).

    Error budget per row (one claim each): ``level`` + the row's miss
    probability, :math:`\le 10^{-6}` at the defaults.

    Parameters
    ----------
    rng : int
        Root seed of the suite.
    miss : float
        Target miss probability of each twin experiment (chooses :math:`R`).
    level : float
        Level of the binomial test of the real check's rate (its ``alpha``).
    alpha, audit_alpha : float
        The checks' loose levels (the auditor's separately).
    floor : int
        Minimum :math:`R` (:func:`~dpbook.calibration.calibration_suite`).
    suite : callable
        What runs the experiments, called with the keywords above:
        :func:`dpbook.calibration.calibration_suite` (a stand-in lets the
        tests feed known rows: even a small suite runs two pilot audits of
        1000 replications).

    Returns
    -------
    CalibrationSuite
        The rows and one experiment per row.

    Raises
    ------
    ValueError
        As :func:`dpbook.calibration.calibration_suite`; or from the evidence,
        if ``level`` is not in (0, 1].
    """
    rows = tuple(suite(rng=rng, miss=miss, alpha=alpha, audit_alpha=audit_alpha, floor=floor))
    parts = tuple(
        Experiment(
            evidence=(
                Compare(
                    f"{row.real.check}: p-value of 'rate <= {row.real.alpha}' "
                    f"({row.real.rejections} "
                    f"of {row.real.replications})",
                    row.real.p_value,
                    ">",
                    level,
                    kind="monte-carlo",
                    alpha=level,
                ),
            ),
            controls=(
                Compare(
                    f"twin {row.twin.check}: p-value ({row.twin.rejections} of {row.twin.replications}) > 1e-6",
                    row.twin.p_value,
                    ">",
                    calibration.BOOK_LEVEL,
                    kind="monte-carlo",
                    alpha=max(row.miss, 1e-300),
                ),
            ),
        )
        for row in rows
    )
    return CalibrationSuite(
        evidence=tuple(e for p in parts for e in p.evidence),
        controls=tuple(c for p in parts for c in p.controls),
        rows=rows,
        parts=parts,
    )


# --------------------------------------------------------------------------- power


@dataclass(frozen=True)
class PowerAgainstExact(Experiment):
    """:func:`power_against_exact`: measured and exact power of the Clopper--Pearson test.

    Attributes
    ----------
    shifts : tuple of float
        The errors of the claims (0: the true claim).
    measured, exact, unsplit : tuple of float
        The simulated rejection rates, the exact ones, and the exact ones of
        the test that does not halve ``alpha`` (the control).
    lower, upper : tuple of float
        The Clopper--Pearson interval of each measured rate.
    replications : int
        Runs per shift.
    """

    shifts: tuple[float, ...] = ()
    measured: tuple[float, ...] = ()
    exact: tuple[float, ...] = ()
    unsplit: tuple[float, ...] = ()
    lower: tuple[float, ...] = ()
    upper: tuple[float, ...] = ()
    replications: int = 0

    def table(self) -> str:
        """One line per shift: measured and exact power."""
        return "\n".join(
            f"shift {s:.3f}: measured {m:.4f}, exact {e:.4f}"
            for s, m, e in zip(self.shifts, self.measured, self.exact, strict=True)
        )


def power_against_exact(
    shifts: Sequence[float],
    *,
    rng: int = 7,
    n: int = 100,
    p: float = 0.5,
    alpha: float = 0.05,
    replications: int = 20_000,
    budget: float = 1e-6,
    check: Callable[..., CheckResult] = dpcore.probability_result,
) -> PowerAgainstExact:
    r"""Simulated power of the Clopper--Pearson test, compared with its exact value.

    At each shift :math:`s` the test ``check`` (:func:`dpcore.probability_result`,
    two-sided, at ``alpha``) is run on ``replications`` counts
    :math:`K \sim \mathrm{Bin}(n, p)` against the claim :math:`p + s`
    (:func:`dpbook.calibration.power_curve`); its rejection rate must lie in
    the Clopper--Pearson interval around the exact power
    :math:`1 - P(\text{accept})` of :func:`dpcore.montecarlo.probability_acceptance`.
    The control compares the interval at shift 0 with the power of a test
    that does not halve ``alpha`` (acceptance computed at ``2 alpha``): it
    must fall outside. Its risk is computed exactly: the binomial mass, at the
    true rejection rate (the exact power at shift 0), of the rejection counts
    whose interval would contain the unsplit power.

    Error budget: each interval is two-sided at ``level`` per end, with
    ``level = budget / (2 * 2 * len(shifts))``, so the ``len(shifts)``
    evidence pieces, each at ``2 level``, add up to ``budget / 2``; the
    control's computed risk comes on top (the ledger refuses the record if
    the sum exceeds its budget, e.g. for too few replications).

    Parameters
    ----------
    shifts : sequence of float
        The claims' errors.
    rng : int
        Root seed of :func:`~dpbook.calibration.power_curve`.
    n, p, alpha : int, float, float
        Trials, true probability, the test's level.
    replications : int
        Runs per shift.
    budget : float
        Total false-alarm probability of the record.
    check : callable
        The test that is simulated (a twin with the signature of
        :func:`dpcore.probability_result` shows a wrong one failing).

    Returns
    -------
    PowerAgainstExact

    Raises
    ------
    ValueError
        As :func:`dpbook.calibration.power_curve`.
    """
    curve = calibration.power_curve(
        calibration.calibrate_probability_result,
        shifts,
        rng=rng,
        n=n,
        p=p,
        alpha=alpha,
        replications=replications,
        check=check,
    )
    exact = [1 - probability_acceptance(n, p, p + s, alpha=alpha) for s in shifts]
    measured = [r.rate for r in curve.results]
    reps = curve.results[0].replications
    level = budget / (2 * 2 * len(shifts))  # 2 ends, the shifts, evidence and control
    counts = np.array([r.rejections for r in curve.results])
    lo, hi = clopper_pearson_bounds(counts, reps, level)
    unsplit = [1 - probability_acceptance(n, p, p + s, alpha=2 * alpha) for s in shifts]
    evidence = tuple(
        Compare(
            f"shift {s:.3f}: exact power {e:.4f} inside [{lo_:.4f}, {hi_:.4f}]",
            min(e - lo_, hi_ - e),
            ">=",
            0.0,
            kind="monte-carlo",
            alpha=2 * level,
        )
        for s, e, lo_, hi_ in zip(shifts, exact, lo, hi, strict=True)
    )
    # the control holds by chance iff the count at shift 0 (law Bin(reps, exact[0])) gives an interval
    # containing unsplit[0]: the exact mass of those counts
    every = np.arange(reps + 1)
    lo_all, hi_all = clopper_pearson_bounds(every, reps, level)
    covers = (lo_all <= unsplit[0]) & (unsplit[0] <= hi_all)
    risk = float(stats.binom.pmf(every[covers], reps, exact[0]).sum())
    control = Compare(
        "the alpha-not-halved power at shift 0 inside the interval",
        min(unsplit[0] - lo[0], hi[0] - unsplit[0]),
        ">=",
        0.0,
        kind="monte-carlo",
        alpha=max(risk, 1e-300),
    )
    return PowerAgainstExact(
        evidence=evidence,
        controls=(control,),
        shifts=tuple(shifts),
        measured=tuple(measured),
        exact=tuple(exact),
        unsplit=tuple(unsplit),
        lower=tuple(float(x) for x in np.atleast_1d(lo)),
        upper=tuple(float(x) for x in np.atleast_1d(hi)),
        replications=reps,
    )


# --------------------------------------------------------------------------- the constants


@dataclass(frozen=True)
class ConstantsRadii(Experiment):
    """:func:`constants_radii`: the runs whose reported radii were compared.

    Attributes
    ----------
    cdf_run, coin_run : CheckResult
        ``check_cdf`` on N(0, 1) samples and ``check_bounded_mean`` on a fair coin.
    """

    cdf_run: CheckResult | None = None
    coin_run: CheckResult | None = None


def constants_radii(
    dkw_radius: Callable[[int, float], float],
    hoeffding_radius: Callable[[int, float], float],
    bernstein_radius: Callable[[int, float, float], float],
    *,
    n: int = 1000,
    alpha: float = 1e-3,
    seeds: tuple[int, int] = (11, 12),
) -> ConstantsRadii:
    r"""The radii that ``check_cdf`` and ``check_bounded_mean`` report, against derived formulas.

    Runs :func:`dpcore.check_cdf` on ``n`` standard normal draws (seed
    ``seeds[0]``) and :func:`dpcore.check_bounded_mean` on ``n`` fair coin
    flips in [0, 1] (seed ``seeds[1]``), both at ``alpha``, and compares
    (relative tolerance :math:`10^{-12}`):

    * the DKW radius with the reported ``dkw_radius(n, alpha)`` (the chapter's
      root of :math:`2 e^{-2 n t^2} = \alpha`);
    * the Hoeffding radius with ``hoeffding_radius(n, alpha)`` (root of
      :math:`2 e^{-2 n r^2 / W^2} = \alpha / 2`, :math:`W = 1`);
    * the empirical Bernstein radius with
      ``bernstein_radius(n, alpha, V)`` at the run's sample variance :math:`V`.

    Controls (each must fail, at relative tolerance :math:`10^{-6}`): the
    one-sided DKW radius :math:`\sqrt{\log(1/\alpha)/(2n)}` and the Hoeffding
    radius at :math:`\alpha` instead of :math:`\alpha/2`,
    :math:`\sqrt{\log(2/\alpha)/(2n)}`.

    Error budget: none; the comparisons are deterministic given the runs
    (the radii do not depend on the draws, except Bernstein's through
    :math:`V`, which both sides use).

    Parameters
    ----------
    dkw_radius, hoeffding_radius : callable
        ``(n, alpha) -> radius``, the derived formulas.
    bernstein_radius : callable
        ``(n, alpha, V) -> radius``.
    n, alpha : int, float
        Sample size and level of both runs.
    seeds : (int, int)
        Seeds of the ``check_cdf`` and ``check_bounded_mean`` runs.

    Returns
    -------
    ConstantsRadii
    """
    cdf_run = dpcore.check_cdf(calibration._standard_normal, n, stats.norm.cdf, alpha=alpha, rng=seeds[0])
    coin_run = dpcore.check_bounded_mean(
        calibration._fair_coin, n, 0.5, lower=0.0, upper=1.0, alpha=alpha, rng=seeds[1]
    )
    evidence = (
        Close(
            "check_cdf's radius vs the derived DKW radius",
            cdf_run.details["dkw_radius"],
            dkw_radius(n, alpha),
            rtol=1e-12,
        ),
        Close(
            "check_bounded_mean's Hoeffding radius vs derived",
            coin_run.details["radius_hoeffding"],
            hoeffding_radius(n, alpha),
            rtol=1e-12,
        ),
        Close(
            "its empirical Bernstein radius vs derived",
            coin_run.details["radius_bernstein"],
            bernstein_radius(n, alpha, coin_run.details["sample_variance"]),
            rtol=1e-12,
        ),
    )
    controls = (
        Close(
            "check_cdf's radius = the one-sided sqrt(log(1/alpha)/(2n))",
            cdf_run.details["dkw_radius"],
            math.sqrt(math.log(1 / alpha) / (2 * n)),
            rtol=1e-6,
        ),
        Close(
            "Hoeffding radius at alpha (not alpha/2)",
            coin_run.details["radius_hoeffding"],
            math.sqrt(math.log(2 / alpha) / (2 * n)),
            rtol=1e-6,
        ),
    )
    return ConstantsRadii(evidence=evidence, controls=controls, cdf_run=cdf_run, coin_run=coin_run)


def tail_root(k: int, n: int, level: float, upper: bool = False) -> float:
    r"""Clopper--Pearson bound by mpmath at 30 digits, independently of scipy's ``betaincinv``.

    The lower bound is the :math:`p` with :math:`P(\mathrm{Bin}(n, p) \ge k) =`
    ``level``, i.e. :math:`I_p(k, n - k + 1) = \text{level}`; the upper bound
    (``upper=True``) the :math:`p` with :math:`P(\mathrm{Bin}(n, p) \le k) =`
    ``level``, i.e. :math:`I_p(k + 1, n - k) = 1 - \text{level}`. Solved by the
    Illinois method to :math:`10^{-25}` in a bracket of
    :math:`\hat p \pm (15 \sqrt{k(n-k)}/n^{3/2} + 50/n)`.

    Parameters
    ----------
    k, n : int
        Successes and trials, :math:`0 < k < n`.
    level : float
        The tail probability.
    upper : bool
        The upper bound instead of the lower.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If mpmath finds no root in the bracket.
    """
    with mpmath.workdps(30):
        if upper:

            def f(p: Any) -> Any:
                return mpmath.betainc(k + 1, n - k, 0, p, regularized=True) - (1 - level)
        else:

            def f(p: Any) -> Any:
                return mpmath.betainc(k, n - k + 1, 0, p, regularized=True) - level

        p_hat, pad = k / n, 15 * math.sqrt(k * (n - k)) / n**1.5 + 50 / n  # brackets the root
        bracket = (mpmath.mpf(max(p_hat - pad, 1e-15)), mpmath.mpf(min(p_hat + pad, 1 - 1e-15)))
        return float(mpmath.findroot(f, bracket, solver="illinois", tol=mpmath.mpf(10) ** -25))


def block_radius(n: int, k: int, var: float, alpha: float) -> float:
    r"""Median-of-means radius for ``k`` blocks, from the exact binomial tail (mpmath, 30 digits).

    The median of :math:`k` block means misses by more than :math:`r` only if
    at least :math:`h = \lceil k/2 \rceil` blocks do; each does with
    probability at most :math:`p^*` when :math:`r = \sqrt{\sigma^2/(m p^*)}`
    (Chebyshev, :math:`m = \lfloor n/k \rfloor` per block), and :math:`p^*`
    solves :math:`P(\mathrm{Bin}(k, p^*) \ge h) = \alpha`.

    Parameters
    ----------
    n, k : int
        Sample size and number of blocks.
    var : float
        The variance bound :math:`\sigma^2`.
    alpha : float
        The level.

    Returns
    -------
    float
    """
    h = (k + 1) // 2
    with mpmath.workdps(30):
        p_star = mpmath.findroot(
            lambda p: mpmath.betainc(h, k - h + 1, 0, p, regularized=True) - alpha,
            (mpmath.mpf(1e-30), mpmath.mpf(1) / 2),
            solver="illinois",
        )
        return math.sqrt(var / ((n // k) * float(p_star)))


@dataclass(frozen=True)
class ConstantsTails(Experiment):
    """:func:`constants_tails`: the runs whose bounds and radii were recomputed.

    Attributes
    ----------
    cp : CheckResult
        The two-sided Clopper--Pearson test.
    mean_run, var_run, alternating : CheckResult
        ``check_mean`` and ``check_variance`` on N(0, 1); ``check_variance`` on 0, 1, 0, 1, ...
    audit_run : AuditResult
        ``audit_epsilon`` of a Laplace mechanism.
    fixed_run : Any
        ``event_ratio_bounds`` of fixed counts.
    """

    cp: CheckResult | None = None
    mean_run: CheckResult | None = None
    var_run: CheckResult | None = None
    alternating: CheckResult | None = None
    audit_run: AuditResult | None = None
    fixed_run: Any = None


def constants_tails(
    var_bound: float,
    wrong_var_bound: float,
    *,
    k: int = 37,
    n: int = 120,
    p: float = 0.3,
    alpha: float = 0.01,
    n_mean: int = 20_000,
    alpha_mean: float = 1e-6,
    n_alternating: int = 4_000,
    chunk_size: int = 250,
    n_audit: int = 4_000,
    hits: tuple[int, int] = (37, 80),
    hits_prime: tuple[int, int] = (20, 60),
    seeds: tuple[int, int, int] = (13, 14, 15),
) -> ConstantsTails:
    r"""Clopper--Pearson bounds, median-of-means radii and union bounds, recomputed independently.

    Compares, by :func:`tail_root` and :func:`block_radius` (mpmath), with
    what the code reports:

    * the two-sided Clopper--Pearson bounds of ``k`` of ``n`` against ``p``
      at ``alpha``: tail roots at :math:`\alpha/2` per end;
    * ``check_mean``'s radius (``n_mean`` N(0, 1) draws, variance bound 1,
      ``alpha_mean``, seed ``seeds[0]``) and ``check_variance``'s (kurtosis
      bound 3, seed ``seeds[1]``; ``n_mean // 2`` pairs) with the
      median-of-means radius, the latter for the variance ``var_bound`` of
      the pair statistic :math:`(X_1 - X_2)^2/2` derived by the chapter;
    * ``check_variance`` on the stream 0, 1, 0, 1, ... in chunks of
      ``chunk_size``: every disjoint pair gives exactly 1/2;
    * ``audit_epsilon`` of ``LaplaceMechanism(0.25)`` (``n_audit`` per side,
      confidence :math:`1 - \alpha`, seed ``seeds[2]``): each kept event's
      :math:`p_{lo}` and :math:`q_{hi}` at :math:`\alpha/(2m)` for :math:`m`
      events; ``event_ratio_bounds`` of ``hits`` and ``hits_prime`` of ``n``:
      four bounds per event, each at :math:`\alpha/(4 \cdot 2)`.

    Relative tolerances :math:`10^{-9}` (tail roots), :math:`10^{-8}` (radii),
    :math:`10^{-15}` (the alternating stream). Controls (each must fail): the
    Clopper--Pearson lower bound at :math:`\alpha`, the variance radius for
    ``wrong_var_bound`` (the chapter's :math:`(\kappa - 1)\sigma^4/2`), the
    alternating stream giving 0 (same-parity pairs), the audit's
    :math:`p_{lo}` at :math:`\alpha/m` and ``event_ratio_bounds`` at
    :math:`\alpha/4`.

    Error budget: none; every comparison is deterministic given the runs.

    Parameters
    ----------
    var_bound, wrong_var_bound : float
        The derived bound on Var[(X1 - X2)^2 / 2] at kappa = 3, sigma^2 = 1,
        and the slipped one (the control).
    k, n, p, alpha : int, int, float, float
        The Clopper--Pearson configuration (``n`` and ``alpha`` also serve
        ``event_ratio_bounds`` and the audit).
    n_mean, alpha_mean : int, float
        Sample size and level of ``check_mean`` and ``check_variance``.
    n_alternating, chunk_size : int
        The alternating stream's length and chunk size.
    n_audit : int
        Samples per side of the audit.
    hits, hits_prime : (int, int)
        The counts of ``event_ratio_bounds``.
    seeds : (int, int, int)
        Seeds of ``check_mean``, ``check_variance`` and ``audit_epsilon``.

    Returns
    -------
    ConstantsTails
    """
    cp = dpcore.probability_result(k, n, p, alpha=alpha)
    mean_run = dpcore.check_mean(
        calibration._standard_normal, n_mean, 0.0, variance_bound=1.0, alpha=alpha_mean, rng=seeds[0]
    )
    var_run = dpcore.check_variance(
        calibration._standard_normal, n_mean, 1.0, kurtosis_bound=3, alpha=alpha_mean, rng=seeds[1]
    )
    alternating = dpcore.check_variance(
        _alternating, n_alternating, 0.5, kurtosis_bound=1, alpha=alpha_mean, chunk_size=chunk_size
    )
    audit_run = dpcore.audit_epsilon(
        dpcore.LaplaceMechanism(0.25), 0.0, 1.0, n_audit, confidence=1 - alpha, rng=seeds[2]
    )
    m = len(audit_run.events)
    a_ev, n_est = alpha / (2 * m), audit_run.n_estimation
    fixed_run = dpcore.event_ratio_bounds(list(hits), n, list(hits_prime), n, alpha=alpha)
    union = [
        Close(
            f"audit event {i}: p_lower at alpha/(2 x {m} events)",
            ev.p_lower,
            tail_root(ev.hits_numerator, n_est, a_ev),
            rtol=1e-9,
        )
        for i, ev in enumerate(audit_run.events)
    ]
    union += [
        Close(
            f"audit event {i}: q_upper at alpha/(2 x {m} events)",
            ev.q_upper,
            tail_root(ev.hits_denominator, n_est, a_ev, upper=True),
            rtol=1e-9,
        )
        for i, ev in enumerate(audit_run.events)
    ]
    union += [
        Close(
            "event_ratio_bounds: p_low of event 0 at alpha/(4 x 2)",
            fixed_run.p_low[0],
            tail_root(hits[0], n, alpha / 8),
            rtol=1e-9,
        ),
        Close(
            "event_ratio_bounds: p'_high of event 1 at alpha/(4 x 2)",
            fixed_run.p_prime_high[1],
            tail_root(hits_prime[1], n, alpha / 8, upper=True),
            rtol=1e-9,
        ),
    ]
    ev0 = audit_run.events[0]
    evidence = (
        Close("two-sided CP lower bound vs the tail root at alpha/2", cp.ci_low, tail_root(k, n, alpha / 2), rtol=1e-9),
        Close(
            "two-sided CP upper bound vs the tail root at alpha/2",
            cp.ci_high,
            tail_root(k, n, alpha / 2, upper=True),
            rtol=1e-9,
        ),
        Close(
            "check_mean's radius vs the median-of-means radius (mpmath)",
            mean_run.details["radius"],
            block_radius(n_mean, mean_run.details["blocks"], 1.0, alpha_mean),
            rtol=1e-8,
        ),
        Close(
            "check_variance's radius vs the derived one (kappa = 3)",
            var_run.details["radius"],
            block_radius(n_mean // 2, var_run.details["blocks"], var_bound, alpha_mean),
            rtol=1e-8,
        ),
        Close(
            "check_variance on 0, 1, 0, 1, ...: every disjoint pair gives 1/2",
            alternating.estimate,
            0.5,
            rtol=1e-15,
        ),
        *union,
    )
    controls = (
        Close("two-sided CP lower bound at alpha (not alpha/2)", cp.ci_low, tail_root(k, n, alpha), rtol=1e-9),
        Close(
            "check_variance's radius with kappa - 1",
            var_run.details["radius"],
            block_radius(n_mean // 2, var_run.details["blocks"], wrong_var_bound, alpha_mean),
            rtol=1e-8,
        ),
        Close(
            "check_variance on 0, 1, 0, 1, ...: 0, as same-parity pairs would give",
            alternating.estimate,
            0.0,
            atol=1e-15,
        ),
        Close(
            "audit event 0: p_lower at alpha/events (two bounds per event not split)",
            ev0.p_lower,
            tail_root(ev0.hits_numerator, n_est, 2 * a_ev),
            rtol=1e-9,
        ),
        Close(
            "event_ratio_bounds: p_low at alpha/(2 x 2) (two bounds per event)",
            fixed_run.p_low[0],
            tail_root(hits[0], n, alpha / 4),
            rtol=1e-9,
        ),
    )
    return ConstantsTails(
        evidence=evidence,
        controls=controls,
        cp=cp,
        mean_run=mean_run,
        var_run=var_run,
        alternating=alternating,
        audit_run=audit_run,
        fixed_run=fixed_run,
    )


# --------------------------------------------------------------------------- independent streams


@dataclass(frozen=True)
class StreamIndependence(Experiment):
    """:func:`stream_independence`: the tests of the engines and samplers, and of the dependent twins.

    Attributes
    ----------
    tests : tuple of CheckResult
        Three exact tests per stream (engines first, then the samplers).
    twin_results : tuple of CheckResult
        Per twin, the test of the statistic it breaks (the controls' results).
    """

    tests: tuple[CheckResult, ...] = ()
    twin_results: tuple[CheckResult, ...] = ()


def stream_independence(
    *,
    n: int = 30_000,
    n_mean: int = 30_500,
    n_audit: int = 20_000,
    chunk_mean: int = 1_000,
    chunk_audit: int = 500,
    alpha: float = 1.6e-7,
    seeds: tuple[int, int, int] = (21, 22, 23),
    samplers: Mapping[str, Sampler] | None = None,
) -> StreamIndependence:
    r"""Independence of the draws of the chunked engines, threads and the book's samplers.

    Records the uniform draws of :func:`dpcore.check_mean` (``n_mean`` draws
    in chunks of ``chunk_mean``, seed ``seeds[0]``) and of
    :func:`dpcore.audit_epsilon` (``n_audit`` per side in chunks of
    ``chunk_audit``, seed ``seeds[1]``, serially and through a pool of two
    threads) with :class:`dpcore.independence.UniformRecorder`, and draws
    ``n`` values from each of ``samplers`` (default :data:`BOOK_SAMPLERS`) on
    one generator seeded ``seeds[2]``. On each stream
    :func:`dpcore.independence.independence_tests` runs three exact
    Clopper--Pearson tests of :math:`\mathrm{Binomial}(\cdot, 1/2)` laws (sign
    changes, sign concordance at the chunk lag, first-half magnitude smaller),
    each at ``alpha / 3``. :math:`N` independent 53-bit draws repeat a value
    with probability at most :math:`\binom{N}{2} 2^{-53}`
    (:func:`~dpcore.independence.repeat_probability`), so the engines'
    recorded draws must show no repeated value; the threaded audit must draw
    exactly the serial run's chunks.

    Controls: the twins of :mod:`dpbook.flawed` (``check_mean`` re-seeded on
    every chunk, antithetic pairs, sorted by magnitude, sticky signs) must
    be rejected by the test of the statistic each breaks (true rates 1, 0, 1
    and 1/4), with miss probabilities computed exactly
    (:func:`dpcore.probability_acceptance`); the re-seeded engine must show
    repeated values.

    Error budget: ``alpha`` per family of three tests (5 streams), the two
    repeat probabilities, and the four twins' miss probabilities.

    Parameters
    ----------
    n : int
        Draws per sampler and twin.
    n_mean, n_audit : int
        Draws of ``check_mean``; samples per side of ``audit_epsilon``.
    chunk_mean, chunk_audit : int
        Their chunk sizes (and the lags of the concordance tests).
    alpha : float
        False-alarm probability of each family of three tests.
    seeds : (int, int, int)
        Seeds of ``check_mean`` (and its twin), ``audit_epsilon`` and the samplers' generator.
    samplers : mapping of str to sampler, optional
        The samplers tested (default the book's three).

    Returns
    -------
    StreamIndependence
    """
    samplers = BOOK_SAMPLERS if samplers is None else samplers
    engine, serial, threads = UniformRecorder(), UniformRecorder(), UniformRecorder()
    dpcore.check_mean(engine, n_mean, 0.5, variance_bound=1 / 12, chunk_size=chunk_mean, rng=seeds[0])
    dpcore.audit_epsilon(serial.mechanism, 0.0, 1.0, n_audit, chunk_size=chunk_audit, rng=seeds[1])
    with ThreadPoolExecutor(2) as pool:
        dpcore.audit_epsilon(threads.mechanism, 0.0, 1.0, n_audit, chunk_size=chunk_audit, rng=seeds[1], executor=pool)
    gen = np.random.default_rng(seeds[2])
    tests = [
        *independence_tests(engine.symmetric(), lag=chunk_mean, alpha=alpha, name="check_mean"),
        *independence_tests(serial.symmetric(), lag=chunk_audit, alpha=alpha, name="audit_epsilon"),
    ]
    for label, sampler in samplers.items():
        tests += independence_tests(sampler(gen, n), alpha=alpha, name=label)
    twin_engine = UniformRecorder()
    dpcore.check_mean(
        flawed.ReseededEachChunk(twin_engine),
        n_mean,
        0.5,
        variance_bound=1 / 12,
        chunk_size=chunk_mean,
        rng=seeds[0],
    )
    twins = {  # twin: (its tests, which statistic, that statistic's true rate)
        "re-seeded chunks": (independence_tests(twin_engine.symmetric(), lag=chunk_mean, alpha=alpha), 1, 1.0),
        "antithetic pairs": (
            independence_tests(flawed.AntitheticPairs(_discrete_laplace)(gen, n), alpha=alpha),
            1,
            0.0,
        ),
        "sorted by magnitude": (
            independence_tests(flawed.SortedByMagnitude(_discrete_laplace)(gen, n), alpha=alpha),
            2,
            1.0,
        ),
        "sticky signs": (independence_tests(flawed.StickySigns(_laplace_draws)(gen, n), alpha=alpha), 0, 0.25),
    }
    controls = [
        Test(
            f"{name}: {res[i].name}",
            result=res[i],
            miss=probability_acceptance(res[i].n, rate, 0.5, alpha=alpha / 3),
        )
        for name, (res, i, rate) in twins.items()
    ]
    same_chunks = sorted(map(bytes, serial.chunks)) == sorted(map(bytes, threads.chunks))
    evidence = (
        *tests,
        Compare(
            f"check_mean's {engine.total} draws: repeated values",
            repeated_values(engine.chunks),
            "==",
            0,
            kind="monte-carlo",
            alpha=repeat_probability(engine.total),
        ),
        Compare(
            f"audit_epsilon's {serial.total} draws (both phases, both sides): repeated values",
            repeated_values(serial.chunks),
            "==",
            0,
            kind="monte-carlo",
            alpha=repeat_probability(serial.total),
        ),
        Fact("audit_epsilon through a thread pool draws exactly the serial run's chunks", same_chunks),
    )
    return StreamIndependence(
        evidence=evidence,
        controls=(
            *controls,
            Compare("re-seeded chunks: repeated values", repeated_values(twin_engine.chunks), "==", 0),
        ),
        tests=tuple(tests),
        twin_results=tuple(c.result for c in controls),
    )


# --------------------------------------------------------------------------- a (0, delta) mechanism


@dataclass(frozen=True)
class ZeroEpsilonAudit(Experiment):
    """:func:`audit_zero_epsilon`: the audits of ``LeakOutputs``.

    Attributes
    ----------
    audit, no_delta : AuditResult
        ``audit_epsilon`` at the claimed delta, and without delta (shown, not recorded).
    fixed, doubled : CheckResult
        ``audit_threshold_events`` checks of :math:`(\\varepsilon_0, \\delta)` for
        the leak and for twice the leak (the control).
    """

    audit: AuditResult | None = None
    no_delta: AuditResult | None = None
    fixed: CheckResult | None = None
    doubled: CheckResult | None = None


def audit_zero_epsilon(
    *,
    leak: float = 0.05,
    delta: float | None = None,
    alpha: float = 1e-7,
    n: int = 50_000,
    eps0: float = 1e-12,
    seeds: tuple[int, int, int] = (31, 32, 33),
) -> ZeroEpsilonAudit:
    r"""The auditor on :math:`(0, \delta)`-DP ``dpcore.LeakOutputs(leak)``: it must report 0.

    ``LeakOutputs(leak)`` outputs 0, except that with probability ``leak`` it
    publishes its input; between the inputs 0 and 1 every event's
    probability moves by at most ``leak``, so at :math:`\delta =` ``leak``
    the audit's lower bound :math:`\ln((p_{lo} - \delta)/q_{hi})` on
    :math:`\varepsilon` must be :math:`\le 0` (``audit_epsilon``, ``n`` per
    side, confidence :math:`1 - \alpha`, seed ``seeds[0]``), and the
    fixed-event check ``audit_threshold_events`` (threshold 0.5, seed
    ``seeds[1]``) must accept :math:`(\varepsilon_0, \delta)`. The audit
    without :math:`\delta` is shown, not recorded. Control: ``LeakOutputs(2
    leak)`` (seed ``seeds[2]``) claimed :math:`(\varepsilon_0, \delta)`-DP
    must be rejected; its miss probability is bounded by
    :func:`dpcore.event_ratios.event_detection_miss`.

    Error budget: ``alpha`` (the audit) + ``alpha`` (the fixed-event check)
    + the control's miss probability.

    Parameters
    ----------
    leak : float
        The mechanism's leak probability.
    delta : float, optional
        The claimed delta (default ``leak``, the true one).
    alpha : float
        Level of the audit and of each fixed-event check.
    n : int
        Samples per side.
    eps0 : float
        The epsilon claimed for the fixed-event checks (near 0).
    seeds : (int, int, int)
        Seeds of the audit (also without delta), the check and the control.

    Returns
    -------
    ZeroEpsilonAudit
    """
    delta = leak if delta is None else delta
    audit = dpcore.audit_epsilon(dpcore.LeakOutputs(leak), 0, 1, n, delta=delta, confidence=1 - alpha, rng=seeds[0])
    no_delta = dpcore.audit_epsilon(dpcore.LeakOutputs(leak), 0, 1, n, confidence=1 - alpha, rng=seeds[0])
    fixed = dpcore.audit_threshold_events(dpcore.LeakOutputs(leak), 0, 1, n, [0.5], alpha=alpha, rng=seeds[1]).check(
        eps0, delta=delta
    )
    doubled = dpcore.audit_threshold_events(
        dpcore.LeakOutputs(2 * leak), 0, 1, n, [0.5], alpha=alpha, rng=seeds[2]
    ).check(eps0, delta=delta)
    evidence = (
        Compare(
            f"audit_epsilon of LeakOutputs({leak}) at delta = {delta}: epsilon_lower",
            audit.epsilon_lower,
            "<=",
            0.0,
            kind="monte-carlo",
            alpha=alpha,
        ),
        fixed,
    )
    control = Test(
        f"LeakOutputs({2 * leak}) claimed (0, {delta})-DP",
        result=doubled,
        miss=event_detection_miss(2 * leak, 0.0, n, n, eps0, events=2, alpha=alpha, delta=delta),
    )
    return ZeroEpsilonAudit(
        evidence=evidence, controls=(control,), audit=audit, no_delta=no_delta, fixed=fixed, doubled=doubled
    )
