r"""Chapter 06 (auditing mechanisms by sampling): its experiments, one function each.

Every function runs the numerical side of one claim of the chapter with the
seeds, sample sizes and false-alarm levels the chapter passes (the defaults
are the chapter's), and returns an :class:`~dpbook.experiments.Experiment`
subclass whose ``evidence`` must hold and whose ``controls`` must fail, plus
the numbers the chapter prints or plots. All randomness comes from
:mod:`dpcore` streams seeded with the integers given, each call its own
stream, so the results do not depend on the order of the calls.

The auditors are :func:`dpcore.auditing.audit_epsilon` (events chosen on a
selection split, power shown but without formula) and
:func:`dpcore.auditing.audit_threshold_events` (events fixed in advance, whose
miss probability :func:`dpcore.event_ratios.event_detection_miss` bounds).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

import dpcore
from dpcore import discrete as dd
from dpcore import floating_point as fp
from dpcore.auditing import AuditResult, ReleaseOutputs, audit_epsilon, audit_threshold_events
from dpcore.event_ratios import event_detection_miss
from dpcore.montecarlo import (
    CheckResult,
    check_cdf,
    check_probability,
    clopper_pearson_bounds,
    probability_acceptance,
    probability_result,
)

from .. import flawed
from .. import reference as mpref
from ..evidence import Close, Compare, Fact, Rejected, Test
from . import Experiment

__all__ = [
    "T_LAP",
    "T_PC",
    "T_G",
    "INT_SUPPORT",
    "DL_GRID",
    "DG_GRID",
    "ValidityRate",
    "CorrectLaplace",
    "CorrectGaussian",
    "BugAudit",
    "VarianceAsStd",
    "Convergence",
    "ScaleOut",
    "FloatAttack",
    "FloatEventAudit",
    "SamplerChecks",
    "DiscreteAttack",
    "plug_in_audit",
    "laplace_laws",
    "audit_miss",
    "privacy_loss_statistic",
    "attack_trials",
    "validity_rate",
    "correct_laplace",
    "correct_gaussian",
    "stray_factor_two",
    "per_coordinate",
    "variance_as_std",
    "convergence",
    "scale_out",
    "float_attack",
    "float_event_audit",
    "float_not_dp",
    "discrete_laplace_sampler",
    "discrete_gaussian_sampler",
    "discrete_attack",
]

Mechanism = Callable[[Any, int, np.random.Generator], NDArray[Any]]
Sampler = Callable[[np.random.Generator, int], NDArray[Any]]

T_LAP = np.linspace(-3.0, 4.0, 15)
"""Fixed thresholds of the scalar Laplace audits (inputs 0 and 1)."""
T_PC = np.r_[np.linspace(-1.5, 1.0, 6), 1.5 - 1e-9]
"""Fixed thresholds of the privacy-loss statistic of the 3-dimensional release; the top one
(just below ``k eps = 1.5``) is the event {all y_i <= 0} (to 1e-9)."""
T_G = np.round(np.linspace(-0.6, 0.7, 14), 12)
"""Fixed thresholds of the Gaussian audits at sensitivity 0.1."""
INT_SUPPORT = np.arange(-60, 61)
"""The integers on which the discrete samplers' CDFs are tabulated (beyond: 0 or 1 to double precision)."""
DL_GRID = np.arange(-20, 21)
"""Where the discrete Laplace CDF (scale 2) is tested."""
DG_GRID = np.arange(-8, 9)
"""Where the discrete Gaussian CDF (variance 1/2) is tested."""


def _g(x: float) -> str:
    """``x`` for a claim's description: ``1.0`` -> ``1``, ``1e-05`` -> ``1e-5``."""
    return f"{x:g}".replace("e-0", "e-")


def _audit_compare(what: str, result: AuditResult, epsilon: float, alpha: float) -> Compare:
    """Monte Carlo evidence ``result.epsilon_lower <= epsilon``, wrong with probability <= ``alpha``."""
    return Compare(what, result.epsilon_lower, "<=", epsilon, kind="monte-carlo", alpha=alpha)


# --------------------------------------------------------------------------- helpers


Cdf = Callable[[float], float]
"""A continuous distribution function ``F(t) = P(Y < t)`` of a mechanism's output on one input."""


def laplace_laws(scale: float, d: float = 0.0, d_prime: float = 1.0) -> tuple[Cdf, Cdf]:
    """The distribution functions of Lap(d, scale) and Lap(d_prime, scale): the audited laws."""
    return (
        lambda t: float(stats.laplace.cdf(t, d, scale)),
        lambda t: float(stats.laplace.cdf(t, d_prime, scale)),
    )


def audit_miss(result: AuditResult, laws: tuple[Cdf, Cdf], claimed: float) -> float:
    r"""Exact bound on the chance that ``result``'s estimation phase does *not* refute ``claimed``, given its events.

    :func:`~dpcore.auditing.audit_epsilon` keeps :math:`m` events chosen on
    the selection samples only, then bounds each on independent estimation
    samples with Clopper--Pearson bounds at level :math:`a=(1-c)/(2m)`
    (:math:`c` the confidence). Conditionally on the kept events they are
    fixed sets; with their true probabilities :math:`p, q` (``laws``: the
    distribution functions on ``d`` and ``d_prime``, ``result.delta``), an
    event with :math:`p > e^{\varepsilon}q + \delta` fails to refute
    :math:`\varepsilon` = ``claimed`` with probability at most
    :func:`~dpcore.event_ratios.event_detection_miss` ``(p, q, n_e, n_e, claimed,
    events=1, alpha=4a, delta)`` (one event, each bound at level :math:`a`:
    two exact binomial tails). The audit misses only if every kept event
    misses, so the conditional miss is at most the smallest of these; 1 if no
    kept event violates the claim. A selection that keeps weak events
    (or none that violates the claim) gets a large value: the records that
    use it then fail.
    """
    m = len(result.events)
    a = (1.0 - result.confidence) / (2 * m)
    n_e = result.n_estimation
    best = 1.0
    for ev in result.events:
        below = [law(ev.threshold) for law in laws]
        probs = below if ev.tail == "lower" else [1.0 - b for b in below]
        p, q = probs if ev.numerator == "d" else probs[::-1]
        if p > math.exp(claimed) * q + result.delta:
            miss = event_detection_miss(p, q, n_e, n_e, claimed, events=1, alpha=4 * a, delta=result.delta)
            best = min(best, miss)
    return best


def _refutes(what: str, result: AuditResult, laws: tuple[Cdf, Cdf], claimed: float) -> tuple[Compare, float]:
    """Monte Carlo evidence ``result.epsilon_lower > claimed``; misses with probability <= :func:`audit_miss`."""
    miss = audit_miss(result, laws, claimed)
    return Compare(what, result.epsilon_lower, ">", claimed, kind="monte-carlo", alpha=max(miss, 1e-300)), miss


def plug_in_audit(mechanism: Mechanism, d: Any, d_prime: Any, n: int, seed: int) -> float:
    r"""The naive auditor: :math:`\max_t |\ln(\hat p_t/\hat q_t)|` on the same samples, no split, no confidence.

    Draws ``n`` outputs on ``d`` then ``n`` on ``d_prime`` from one generator
    seeded with ``seed``, and maximises the absolute log ratio of the empirical
    frequencies of the lower and upper tails over 198 thresholds at the
    quantiles of the pooled samples (infinite and undefined ratios dropped).

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, size, rng)``, as for :func:`dpcore.audit_epsilon`.
    d, d_prime
        The two neighbouring inputs.
    n : int
        Samples per side.
    seed : int
        Seed of the one generator.

    Returns
    -------
    float
        The plug-in "estimate" of epsilon (biased upwards: it is the maximum of
        396 noisy ratios chosen on the samples that estimate them).
    """
    g = dpcore.as_generator(seed)
    x, y = np.sort(mechanism(d, n, g)), np.sort(mechanism(d_prime, n, g))
    t = np.quantile(np.concatenate([x, y]), np.linspace(0, 1, 200)[1:-1])
    below_x, below_y = np.searchsorted(x, t) / n, np.searchsorted(y, t) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.concatenate([np.log(below_x / below_y), np.log((1 - below_x) / (1 - below_y))])
    return float(np.abs(ratios[np.isfinite(ratios)]).max())


def privacy_loss_statistic(
    release: Callable[..., Any],
    d0: NDArray[Any],
    d1: NDArray[Any],
    claimed_epsilon: float,
    /,
    **params: Any,
) -> Mechanism:
    r"""A vector release post-processed to its privacy loss, a real statistic.

    :math:`L(y) = \varepsilon\sum_i(|y_i-d_{1,i}| - |y_i-d_{0,i}|)`, where
    :math:`\varepsilon` = ``claimed_epsilon`` is the claimed per-release epsilon with sensitivity 1 per
    coordinate, i.e. :math:`1/b` for the scale :math:`b` the implementation
    believes in. Post-processing cannot increase epsilon, so an audit of the
    statistic bounds the release's epsilon from below.

    Returns
    -------
    callable
        ``mechanism(data, size, rng)``: runs ``release(np.tile(data, (size, 1)), rng=rng, **params)``
        and returns the ``size`` values of :math:`L`.
    """

    def mechanism(data: Any, size: int, rng: np.random.Generator) -> NDArray[np.float64]:
        y = np.asarray(release(np.tile(data, (size, 1)), rng=rng, **params), dtype=float)
        loss: NDArray[np.float64] = (np.abs(y - d1).sum(axis=1) - np.abs(y - d0).sum(axis=1)) * claimed_epsilon
        return loss

    return mechanism


def attack_trials(mechanism: Mechanism, guess: Callable[[NDArray[Any]], NDArray[Any]]) -> Sampler:
    """The membership game as a sampler: ``sampler(rng, n)`` returns the success indicators of n games.

    Each game draws a fair secret bit ``s``, runs the mechanism on input ``s``
    (both inputs are run on the whole batch, the bit picks one output) and
    scores 1 when ``guess(output) == s``.
    """

    def sampler(g: np.random.Generator, n: int) -> NDArray[np.float64]:
        secret = g.integers(0, 2, size=n)
        y = np.where(secret == 0, mechanism(0, n, g), mechanism(1, n, g))
        hits: NDArray[np.bool_] = np.asarray(guess(y)) == secret
        return hits.astype(float)

    return sampler


# --------------------------------------------------------------------------- validity of the auditor


@dataclass(frozen=True)
class ValidityRate(Experiment):
    """:func:`validity_rate`'s counts and tests."""

    over: int = 0
    over_plug_in: int = 0
    over_plug_in_bound: int = 0
    runs: int = 0
    rate_ok: CheckResult | None = None
    plug_in: CheckResult | None = None
    plug_in_rate_lower: float = 0.0
    plug_in_miss: float = 1.0


def validity_rate(
    mechanism: Mechanism | None = None,
    epsilon: float = 1.0,
    *,
    runs: int = 200,
    n: int = 5_000,
    audit_seed: int = 10_000,
    plug_in_seed: int = 20_000,
    level: float = 0.05,
    alpha: float = 5e-7,
    bound_level: float = 1e-7,
) -> ValidityRate:
    r"""How often the audit of an epsilon-DP mechanism exceeds epsilon, against the plug-in auditor.

    Runs ``runs`` audits ``audit_epsilon(mechanism, 0, 1, n, rng=audit_seed + i)``
    at confidence ``1 - level`` and counts those with ``epsilon_lower > epsilon``;
    likewise ``plug_in_audit(..., plug_in_seed + i)``. By the validity theorem the
    count is :math:`\mathrm{Bin}(\text{runs}, r)` with :math:`r \le` ``level``.

    Evidence: the one-sided Clopper--Pearson test of :math:`r \le` ``level``
    (false alarm ``alpha``). Control: the same test of the same claim for the
    plug-in auditor, which a careless author would believe valid too; it must
    reject. Its miss probability is computed: ``runs`` further, independent
    plug-in audits (``rng=plug_in_seed + runs + i``) give a Clopper--Pearson
    lower bound :math:`r_{lo}` on the plug-in's violation rate at level
    ``bound_level``, and the test passes a rate :math:`\ge r_{lo}` with
    probability at most ``probability_acceptance(runs, r_lo, level)`` (exact
    binomial; acceptance only falls as the rate grows). Budget: ``alpha`` +
    ``bound_level`` + that acceptance.

    Parameters
    ----------
    mechanism : callable, optional
        The audited mechanism, claimed ``epsilon``-DP between inputs 0 and 1;
        default ``dpcore.LaplaceMechanism(1.0)`` (exactly 1-DP).
    epsilon : float
        The claimed epsilon.
    runs, n : int
        Number of audits and samples per side of each.
    audit_seed, plug_in_seed : int
        Audit ``i`` uses seed ``audit_seed + i`` (``plug_in_seed + i`` for the plug-in,
        ``plug_in_seed + runs + i`` for the plug-in's independent bounding batch).
    level : float
        ``1 - confidence`` of each audit: the violation rate allowed.
    alpha : float
        False-alarm probability of the rate tests.
    bound_level : float
        Level of the lower bound on the plug-in's violation rate.

    Returns
    -------
    ValidityRate
        The counts ``over``, ``over_plug_in`` (and ``over_plug_in_bound`` of the
        bounding batch) out of ``runs``, the two tests, the rate's lower bound
        and the control's miss probability.
    """
    mech: Mechanism = dpcore.LaplaceMechanism(1.0) if mechanism is None else mechanism
    over = sum(
        audit_epsilon(mech, 0.0, 1.0, n, rng=audit_seed + seed, confidence=1 - level).epsilon_lower > epsilon
        for seed in range(runs)
    )
    plug = [plug_in_audit(mech, 0.0, 1.0, n, plug_in_seed + seed) > epsilon for seed in range(2 * runs)]
    over_plug_in, over_bound = sum(plug[:runs]), sum(plug[runs:])
    pct = f"{_g(100 * level)}%"
    rate_ok = probability_result(
        over, runs, level, alternative="less", alpha=alpha, name=f"audit violation rate <= {pct}"
    )
    plug_in = probability_result(
        over_plug_in, runs, level, alternative="less", alpha=alpha, name=f"wrong: plug-in violation rate <= {pct}"
    )
    r_lo = float(clopper_pearson_bounds(int(over_bound), runs, bound_level)[0])
    miss = bound_level + probability_acceptance(runs, r_lo, level, alternative="less", alpha=alpha)
    return ValidityRate(
        evidence=(rate_ok,),
        controls=(Test(plug_in.name, result=plug_in, miss=min(miss, 1.0)),),
        over=int(over),
        over_plug_in=int(over_plug_in),
        over_plug_in_bound=int(over_bound),
        runs=runs,
        rate_ok=rate_ok,
        plug_in=plug_in,
        plug_in_rate_lower=r_lo,
        plug_in_miss=min(miss, 1.0),
    )


# --------------------------------------------------------------------------- correct mechanisms


@dataclass(frozen=True)
class CorrectLaplace(Experiment):
    """:func:`correct_laplace`'s audits (by epsilon) and, for each, the chance that it misses epsilon/2."""

    audits: Mapping[float, AuditResult] = field(default_factory=dict)
    half_misses: Mapping[float, float] = field(default_factory=dict)


def correct_laplace(
    epsilons: Sequence[float] = (0.5, 1.0, 2.0),
    *,
    n: int = 200_000,
    seed: int = 101,
    alpha: float = 1e-6 / 4,
    release: Callable[..., Any] = dpcore.laplace_mechanism,
    wrong_factor: float = 0.5,
) -> CorrectLaplace:
    r"""Audit ``dpcore.laplace_mechanism`` calibrated at each epsilon, between 0 and 1 (sensitivity 1).

    Evidence: for each ``epsilons[j]``, ``audit_epsilon(..., n, rng=seed + j,
    confidence=1 - alpha).epsilon_lower <= eps`` (false alarm ``alpha`` each,
    by the validity theorem of the chapter).

    Controls, one per audit: the wrong claim that the release is
    ``wrong_factor * eps``-DP (seed 000's ratio chain, with its stray
    :math:`\tfrac12`, makes Laplace noise of scale :math:`\Delta/\varepsilon`
    look :math:`\varepsilon/2`-DP), checked by the same comparison, lower bound
    <= ``wrong_factor * eps``; it must fail. Given the events the audit kept, it
    holds by chance with probability at most :func:`audit_miss` at the true
    laws :math:`\mathrm{Lap}(0, 1/\varepsilon)`, :math:`\mathrm{Lap}(1, 1/\varepsilon)`
    (exact binomial tails), which is its risk: an audit whose selection keeps
    weak events fails the record. Budget: ``len(epsilons) * alpha`` + the
    controls' risks.

    Parameters
    ----------
    epsilons : sequence of float
        The epsilons at which the release is calibrated and claimed.
    n : int
        Samples per side of every audit.
    seed : int
        The audit of ``epsilons[j]`` uses ``rng=seed + j``.
    alpha : float
        False-alarm probability of each audit.
    release : callable
        The release audited, ``release(value, sensitivity=1, epsilon=eps, rng=)``;
        the controls' risks assume ``dpcore.laplace_mechanism``'s laws.
    wrong_factor : float
        The controls claim ``wrong_factor * eps``.

    Returns
    -------
    CorrectLaplace
        ``audits[eps]`` the :class:`~dpcore.auditing.AuditResult` of each epsilon and
        ``half_misses[eps]`` its control's risk.

    Raises
    ------
    ValueError
        From dpcore, on a non-positive epsilon or sample size.
    """
    audits, half_misses, controls = {}, {}, []
    for j, eps in enumerate(epsilons):
        mech = ReleaseOutputs(release, sensitivity=1.0, epsilon=eps)
        audits[eps] = audit_epsilon(mech, 0.0, 1.0, n, rng=seed + j, confidence=1 - alpha)
        wrong = wrong_factor * eps
        half_misses[eps] = audit_miss(audits[eps], laplace_laws(1.0 / eps), wrong)
        controls.append(
            _audit_compare(
                f"wrong: the release at eps = {_g(eps)} is {_g(wrong)}-DP (lower bound <= {_g(wrong)})",
                audits[eps],
                wrong,
                max(half_misses[eps], 1e-300),
            )
        )
    return CorrectLaplace(
        evidence=tuple(
            _audit_compare(f"audit of eps = {e}: lower bound <= eps", r, e, alpha) for e, r in audits.items()
        ),
        controls=tuple(controls),
        audits=audits,
        half_misses=half_misses,
    )


@dataclass(frozen=True)
class CorrectGaussian(Experiment):
    """:func:`correct_gaussian`'s audits (by sensitivity) and the tight event of sensitivity 1."""

    audits: Mapping[float, AuditResult] = field(default_factory=dict)
    p_tight: float = math.nan
    q_tight: float = math.nan
    eps_tight: float = math.nan


def correct_gaussian(
    sensitivities: Sequence[float] = (1.0, 0.1),
    epsilon: float = 1.0,
    delta: float = 1e-5,
    *,
    n: int = 400_000,
    seed: int = 110,
    alpha: float = 1e-6 / 2,
    sigma: Callable[[float, float, float], float] = dpcore.analytic_gaussian_sigma,
) -> CorrectGaussian:
    r"""Audit ``dpcore.gaussian_mechanism`` at (``epsilon``, ``delta``) and compute its tight event.

    Evidence: for each sensitivity :math:`\Delta_j`, ``audit_epsilon`` between 0 and
    :math:`\Delta_j` at this ``delta`` (``rng=seed + j``, confidence ``1 - alpha``)
    gives a lower bound <= epsilon (false alarm ``alpha`` each; budget
    ``len(sensitivities) * alpha``). For :math:`\Delta = 1` and the analytic
    :math:`\sigma`, the privacy loss event :math:`L(y) \ge \varepsilon \iff
    y \le c = \Delta/2 - \varepsilon\sigma^2/\Delta` has :math:`p = \Phi(c/\sigma)`,
    :math:`q = \Phi((c-\Delta)/\sigma)` with :math:`\ln((p-\delta)/q) = \varepsilon`
    (a ``Close`` at relative 1e-6, numeric) and :math:`10^{-5} < q < p < 10^{-3}`
    (a ``Fact``), and the exact epsilon of that :math:`\sigma` at ``delta`` by the
    50-digit reference :func:`dpbook.reference.gaussian_epsilon` is ``epsilon``
    (relative 1e-9). Control: the same reference computation for the classical
    calibration :math:`\sigma = \sqrt{2\ln(1.25/\delta)}\,\Delta/\varepsilon` (Dwork and
    Roth), which a careless author would take for tight as well, must not give
    ``epsilon`` (it is loose).

    Parameters
    ----------
    sensitivities : sequence of float
        The sensitivities audited (neighbours 0 and :math:`\Delta`).
    epsilon, delta : float
        The claim.
    n : int
        Samples per side of each audit.
    seed : int
        The audit of ``sensitivities[j]`` uses ``rng=seed + j``.
    alpha : float
        False-alarm probability of each audit.
    sigma : callable
        ``sigma(sensitivity, epsilon, delta)``, the formula whose tight event is
        computed (the audited mechanism is always ``dpcore.gaussian_mechanism``).

    Returns
    -------
    CorrectGaussian
        ``audits[sensitivity]``, and ``p_tight``, ``q_tight``, ``eps_tight``.
    """
    audits = {}
    for j, sens in enumerate(sensitivities):
        mech = ReleaseOutputs(dpcore.gaussian_mechanism, sensitivity=sens, epsilon=epsilon, delta=delta)
        audits[sens] = audit_epsilon(mech, 0.0, sens, n, rng=seed + j, delta=delta, confidence=1 - alpha)
    sigma_1 = sigma(1.0, epsilon, delta)
    c_tight = 0.5 - epsilon * sigma_1**2
    p_tight = float(stats.norm.cdf(c_tight / sigma_1))
    q_tight = float(stats.norm.cdf((c_tight - 1.0) / sigma_1))
    eps_tight = math.log((p_tight - delta) / q_tight)
    sigma_c = math.sqrt(2 * math.log(1.25 / delta)) / epsilon  # classical, sensitivity 1
    return CorrectGaussian(
        evidence=(
            *(
                _audit_compare(
                    f"audit at delta = {_g(delta)}, sensitivity {s}: lower bound <= {_g(epsilon)}", r, epsilon, alpha
                )
                for s, r in audits.items()
            ),
            Close("the tight event: ln((p - delta)/q) = eps", eps_tight, epsilon, rtol=1e-6),
            Fact("... with probabilities between 1e-5 and 1e-3", bool(1e-5 < q_tight < p_tight < 1e-3)),
            Close(
                f"the analytic sigma {sigma_1:.4g} is tight: its exact eps at delta is {_g(epsilon)} (mpmath)",
                float(mpref.gaussian_epsilon(sigma_1, delta)),
                epsilon,
                rtol=1e-9,
            ),
        ),
        controls=(
            Close(
                f"wrong: the classical sigma {sigma_c:.4g} is tight too: exact eps at delta = {_g(epsilon)}",
                float(mpref.gaussian_epsilon(sigma_c, delta)),
                epsilon,
                rtol=1e-9,
            ),
        ),
        audits=audits,
        p_tight=p_tight,
        q_tight=q_tight,
        eps_tight=eps_tight,
    )


# --------------------------------------------------------------------------- the bugs


@dataclass(frozen=True)
class BugAudit(Experiment):
    """A flawed mechanism's audits: ``audit_epsilon``'s bound (shown), the fixed-event check
    that must reject the claim with its miss bound, and the same check of a correct mechanism."""

    audit: AuditResult | None = None
    audit_miss: float = 1.0
    check: CheckResult | None = None
    miss: float = 1.0
    correct_check: CheckResult | None = None
    correct_audit: AuditResult | None = None
    mechanism: Mechanism | None = field(default=None, repr=False)


def stray_factor_two(
    epsilon: float = 1.0,
    *,
    n: int = 200_000,
    seeds: tuple[int, int, int] = (120, 121, 122),
    alpha: float = 5e-7,
    thresholds: ArrayLike = T_LAP,
    release: Callable[..., Any] = flawed.laplace_stray_factor_two,
    miss_bound: float = 1e-7,
) -> BugAudit:
    r"""Audit the stray-factor-two Laplace mechanism (``dpbook.flawed``), claimed ``epsilon``-DP, between 0 and 1.

    Evidence, two audits that must refute the claim, each with a computed miss
    probability:

    * ``audit_epsilon`` at confidence ``1 - alpha`` (``rng=seeds[0]``): its
      lower bound exceeds ``epsilon``. Given the events its selection kept,
      it misses with probability at most :func:`audit_miss` (exact binomial
      tails at the true probabilities of the halved scale); that number is
      the evidence's false-alarm probability, so an audit whose selection
      keeps weak events fails the record (the ledger refuses a budget above
      :data:`~dpbook.evidence.BOOK_ALPHA`), and it is also compared with
      ``miss_bound``;
    * the audit on the fixed thresholds (``rng=seeds[1]``, false alarm
      ``alpha``) rejects the claim; it misses with probability at most
      :func:`~dpcore.event_ratios.event_detection_miss` on :math:`\{y \le 0\}`,
      whose probabilities are :math:`1/2` and :math:`e^{-2\varepsilon}/2`.

    Control (a wrong claim the same fixed-event check must not make): it also
    rejects ``dpcore.LaplaceMechanism`` of scale ``1/epsilon`` (``rng=seeds[2]``),
    which is exactly ``epsilon``-DP; it does so with probability at most its
    ``alpha``. Budget: the two misses + ``alpha``.

    Parameters
    ----------
    epsilon : float
        The claimed epsilon (the release is calibrated with it).
    n : int
        Samples per side of every audit.
    seeds : (int, int, int)
        Seeds of the shown audit, the fixed-event audit and the control.
    alpha : float
        False-alarm probability of each audit.
    thresholds : array_like
        The fixed thresholds (one of them >= 0, for the miss bound).
    release : callable
        The release audited (``release(value, sensitivity=1, epsilon=epsilon, rng=)``);
        the miss bounds assume the stray factor's halved scale.
    miss_bound : float
        The largest conditional miss probability of ``audit_epsilon`` accepted.

    Returns
    -------
    BugAudit
        ``audit`` and its ``audit_miss``, ``check`` and its ``miss`` bound,
        ``correct_check`` (the control's test) and the audited ``mechanism``.
    """
    mech = ReleaseOutputs(release, sensitivity=1.0, epsilon=epsilon)
    t = np.asarray(thresholds, dtype=float)
    audit = audit_epsilon(mech, 0.0, 1.0, n, rng=seeds[0], confidence=1 - alpha)
    check = audit_threshold_events(mech, 0.0, 1.0, n, t, alpha=alpha, rng=seeds[1]).check(
        epsilon, name=f"fixed events: the stray-factor mechanism is {epsilon:g}-DP"
    )
    miss = event_detection_miss(0.5, 0.5 * math.exp(-2.0 * epsilon), n, n, epsilon, events=2 * t.size, alpha=alpha)
    correct = dpcore.LaplaceMechanism(1.0 / epsilon)
    correct_check = audit_threshold_events(correct, 0.0, 1.0, n, t, alpha=alpha, rng=seeds[2]).check(
        epsilon, name=f"fixed events: the Laplace mechanism is {epsilon:g}-DP"
    )
    refutes, audit_beta = _refutes(
        f"audit_epsilon: lower bound > {epsilon:g}", audit, laplace_laws(0.5 / epsilon), epsilon
    )
    return BugAudit(
        evidence=(
            refutes,
            Compare("audit_epsilon: miss probability given its kept events", audit_beta, "<=", miss_bound),
            Rejected(check.name, result=check, miss=miss),
        ),
        controls=(Rejected(correct_check.name, result=correct_check, miss=alpha),),
        audit=audit,
        audit_miss=audit_beta,
        check=check,
        miss=miss,
        correct_check=correct_check,
        mechanism=mech,
    )


def per_coordinate(
    epsilon: float = 0.5,
    k: int = 3,
    *,
    n: int = 200_000,
    seeds: tuple[int, int, int, int] = (130, 131, 132, 133),
    alpha: float = 1e-6 / 3,
    thresholds: ArrayLike = T_PC,
    release: Callable[..., Any] = flawed.laplace_per_coordinate_sensitivity,
) -> BugAudit:
    r"""Audit a k-dimensional Laplace release calibrated per coordinate, claimed ``epsilon``-DP.

    Inputs :math:`0^k` and :math:`1^k` (L1 sensitivity k). Both the flawed
    ``release(..., per_coordinate_sensitivity=1, epsilon=epsilon)`` and the correct
    ``dpcore.laplace_mechanism(..., sensitivity=k, epsilon=epsilon)`` are audited
    through :func:`privacy_loss_statistic`. ``audit_epsilon`` of the flawed one
    (95 %, ``rng=seeds[0]``) is shown.

    Evidence: the fixed-event audit of the flawed release (``rng=seeds[2]``)
    rejects the claim, missing with probability at most ``event_detection_miss``
    on :math:`\{L > k\varepsilon - 10^{-9}\} = \{\text{all } y_i \le 0\}`:
    :math:`p = 2^{-k}`, :math:`q \le (e^{-\varepsilon}/2)^k + k\cdot 10^{-9}` (the slack
    only enlarges the bound); and ``audit_epsilon`` of the correct release
    (``rng=seeds[1]``, confidence ``1 - alpha``) is at most epsilon (false alarm
    ``alpha``). Control: the fixed-event audit of the correct release
    (``rng=seeds[3]``) must not reject (risk ``alpha``). Budget: 3 ``alpha``.

    Parameters
    ----------
    epsilon : float
        The claimed epsilon.
    k : int
        The dimension (the query moves by at most 1 per coordinate).
    n : int
        Samples per side of every audit.
    seeds : (int, int, int, int)
        Seeds of the flawed release's ``audit_epsilon`` (shown), the correct
        release's, and of the two fixed-event audits (flawed, correct).
    alpha : float
        False-alarm probability of each recorded audit.
    thresholds : array_like
        Thresholds of the privacy loss; the miss bound is computed for the top
        one, which must be :math:`k\varepsilon - 10^{-9}` (the default's).
    release : callable
        The flawed release, ``release(value, per_coordinate_sensitivity=1,
        epsilon=epsilon, rng=)``.

    Returns
    -------
    BugAudit
        ``audit`` (shown), ``check`` and its ``miss`` bound, ``correct_audit``,
        ``correct_check`` and the audited statistic ``mechanism``.
    """
    d0, d1 = np.zeros(k), np.ones(k)
    t = np.asarray(thresholds, dtype=float)
    flawed_pc = privacy_loss_statistic(release, d0, d1, epsilon, per_coordinate_sensitivity=1.0, epsilon=epsilon)
    correct_pc = privacy_loss_statistic(
        dpcore.laplace_mechanism, d0, d1, epsilon, sensitivity=float(k), epsilon=epsilon
    )
    audit = audit_epsilon(flawed_pc, d0, d1, n, rng=seeds[0])
    correct_l1 = audit_epsilon(correct_pc, d0, d1, n, rng=seeds[1], confidence=1 - alpha)
    check = audit_threshold_events(flawed_pc, d0, d1, n, t, alpha=alpha, rng=seeds[2]).check(
        epsilon, name="fixed events: per-coordinate"
    )
    l1_check = audit_threshold_events(correct_pc, d0, d1, n, t, alpha=alpha, rng=seeds[3]).check(
        epsilon, name="fixed events: L1-calibrated"
    )
    q_top = (0.5 * math.exp(-epsilon)) ** k + k * 1e-9
    miss = event_detection_miss(0.5**k, q_top, n, n, epsilon, events=2 * t.size, alpha=alpha)
    return BugAudit(
        evidence=(
            Rejected(check.name, result=check, miss=miss),
            _audit_compare(
                f"audit_epsilon of the L1-calibrated release: lower bound <= {epsilon:g}", correct_l1, epsilon, alpha
            ),
        ),
        controls=(Rejected(l1_check.name, result=l1_check, miss=alpha),),
        audit=audit,
        check=check,
        miss=miss,
        correct_check=l1_check,
        correct_audit=correct_l1,
        mechanism=flawed_pc,
    )


@dataclass(frozen=True)
class VarianceAsStd(BugAudit):
    """:func:`variance_as_std`'s audits and the analytic sigma."""

    sigma: float = math.nan


def variance_as_std(
    sensitivity: float = 0.1,
    epsilon: float = 1.0,
    delta: float = 1e-5,
    *,
    n: int = 200_000,
    seeds: tuple[int, int, int] = (140, 141, 142),
    alpha: float = 5e-7,
    thresholds: ArrayLike = T_G,
    event_index: int = 3,
    release: Callable[..., Any] = flawed.gaussian_variance_as_std,
) -> VarianceAsStd:
    r"""Audit seed 002's ``normal(0, sigma**2)``, claimed (``epsilon``, ``delta``)-DP, between 0 and ``sensitivity``.

    :math:`\sigma` is the analytic Gaussian sigma; the flawed release adds noise
    of standard deviation :math:`\sigma^2`. ``audit_epsilon`` at 95 %
    (``rng=seeds[0]``) is shown.

    Evidence: the analytic :math:`\sigma` gives epsilon at ``delta`` by the
    50-digit reference :func:`dpbook.reference.gaussian_epsilon` (relative
    1e-9), and the noise actually used, of standard deviation :math:`\sigma^2`,
    has an exact :math:`\delta(\varepsilon)` above ``delta``
    (:func:`dpbook.reference.gaussian_delta`); the fixed-event audit (``rng=seeds[1]``) rejects the claim, missing with
    probability at most ``event_detection_miss`` on :math:`\{y \le t\}`,
    ``t = thresholds[event_index]``, of probabilities :math:`\Phi(t/\sigma^2)` and
    :math:`\Phi((t-\Delta)/\sigma^2)`. Control: the same audit of
    ``dpcore.gaussian_mechanism`` (``rng=seeds[2]``) must not reject (risk ``alpha``).
    Budget: 2 ``alpha`` (the chapter: ``5e-7`` each).

    Parameters
    ----------
    sensitivity, epsilon, delta : float
        The query's sensitivity (neighbours 0 and ``sensitivity``) and the claim.
    n : int
        Samples per side of every audit.
    seeds : (int, int, int)
        Seeds of the shown audit, the fixed-event audit and the control.
    alpha : float
        False-alarm probability of each fixed-event audit.
    thresholds : array_like
        The fixed thresholds.
    event_index : int
        Which threshold's lower tail the miss bound is computed for.
    release : callable
        The flawed release, ``release(value, sigma=sigma, rng=)``.

    Returns
    -------
    VarianceAsStd
        As :class:`BugAudit`, and the analytic ``sigma``.
    """
    sigma = dpcore.analytic_gaussian_sigma(sensitivity, epsilon, delta)
    t = np.asarray(thresholds, dtype=float)
    mech = ReleaseOutputs(release, sigma=sigma)
    audit = audit_epsilon(mech, 0.0, sensitivity, n, rng=seeds[0], delta=delta)
    check = audit_threshold_events(mech, 0.0, sensitivity, n, t, alpha=alpha, rng=seeds[1]).check(
        epsilon, delta=delta, name=f"fixed events: normal(0, sigma**2) is ({_g(epsilon)}, {_g(delta)})-DP"
    )
    ok = ReleaseOutputs(dpcore.gaussian_mechanism, sensitivity=sensitivity, epsilon=epsilon, delta=delta)
    ok_check = audit_threshold_events(ok, 0.0, sensitivity, n, t, alpha=alpha, rng=seeds[2]).check(
        epsilon, delta=delta, name=f"fixed events: gaussian_mechanism is ({_g(epsilon)}, {_g(delta)})-DP"
    )
    t_star = t[event_index]
    p_vs = float(stats.norm.cdf(t_star / sigma**2))
    q_vs = float(stats.norm.cdf((t_star - sensitivity) / sigma**2))
    miss = event_detection_miss(p_vs, q_vs, n, n, epsilon, events=2 * t.size, alpha=alpha, delta=delta)
    return VarianceAsStd(
        evidence=(
            Close(
                f"the analytic sigma delivers eps = {_g(epsilon)} at delta = {_g(delta)} (mpmath)",
                float(mpref.gaussian_epsilon(sigma, delta, sensitivity=sensitivity)),
                epsilon,
                rtol=1e-9,
            ),
            Compare(
                f"the noise std used, sigma^2, gives delta(eps = {_g(epsilon)}) above {_g(delta)} (mpmath)",
                float(mpref.gaussian_delta(sigma**2, epsilon, sensitivity=sensitivity)),
                ">",
                delta,
            ),
            Rejected(check.name, result=check, miss=miss),
        ),
        controls=(Rejected(ok_check.name, result=ok_check, miss=alpha),),
        audit=audit,
        check=check,
        miss=miss,
        correct_check=ok_check,
        mechanism=mech,
        sigma=sigma,
    )


# --------------------------------------------------------------------------- convergence, scale


@dataclass(frozen=True)
class Convergence(Experiment):
    """:func:`convergence`'s lower bounds: ``curves[name]`` has one row per repetition, one column per size.

    ``misses[name]`` (for the mechanisms with known laws) holds, per audit, the
    chance that it does not refute the claim given its kept events (:func:`audit_miss`).
    """

    sizes: tuple[int, ...] = ()
    curves: Mapping[str, NDArray[np.float64]] = field(default_factory=dict)
    misses: Mapping[str, NDArray[np.float64]] = field(default_factory=dict)


def convergence(
    mechanisms: Mapping[str, tuple[Mechanism, int]],
    sizes: Sequence[int] = (1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000),
    epsilon: float = 1.0,
    *,
    correct: str = "correct",
    repetitions: int = 3,
    alpha: float = 1e-6 / 22,
    laws: Mapping[str, tuple[Cdf, Cdf]] | None = None,
) -> Convergence:
    r"""Audited lower bounds against the sample size, between 0 and 1.

    ``mechanisms[name] = (mechanism, base)``: repetition ``s`` at ``sizes[i]``
    runs ``audit_epsilon(mechanism, 0, 1, n, rng=base + 100 s + i,
    confidence=1 - alpha)``. Evidence: every bound of the mechanism named
    ``correct`` (claimed ``epsilon``-DP) is at most ``epsilon`` (false alarm
    ``alpha`` each: ``repetitions * len(sizes) * alpha``, 21/22 of the book's level
    in the chapter, the rest for the control).

    Controls: for every other mechanism whose distribution functions on 0 and 1
    are given in ``laws`` (the chapter: the stray-factor-two mechanism, really
    2-DP), the wrong claim that it too is ``epsilon``-DP, checked by the same
    comparison: all its bounds are at most ``epsilon``. That needs every one of
    its audits to miss, so given their kept events its probability is at most
    the smallest :func:`audit_miss` of them (exact binomial tails), its risk.

    Parameters
    ----------
    mechanisms : mapping
        ``name -> (mechanism, base seed)``; must contain ``correct``.
    sizes : sequence of int
        Samples per side.
    epsilon : float
        The epsilon claimed for every mechanism.
    correct : str
        The name of the mechanism whose bounds are evidence.
    repetitions : int
        Independent audits per size.
    alpha : float
        ``1 - confidence`` of every audit.
    laws : mapping, optional
        ``name -> (F_0, F_1)``, the distribution functions of the outputs on
        0 and 1 of the mechanisms that are not ``epsilon``-DP (controls).

    Returns
    -------
    Convergence
        ``curves[name]``, an array ``repetitions x len(sizes)`` of lower bounds,
        ``misses[name]`` for the controls, and ``sizes``.
    """
    results = {
        name: [
            [audit_epsilon(m, 0.0, 1.0, n, rng=base + 100 * s + i, confidence=1 - alpha) for i, n in enumerate(sizes)]
            for s in range(repetitions)
        ]
        for name, (m, base) in mechanisms.items()
    }
    curves = {name: np.array([[r.epsilon_lower for r in row] for row in rows]) for name, rows in results.items()}
    misses = {
        name: np.array([[audit_miss(r, law, epsilon) for r in row] for row in results[name]])
        for name, law in (laws or {}).items()
    }
    evidence = tuple(
        Compare(
            f"{correct} mechanism, n = {n:,}, audit {s + 1}: lower bound <= {epsilon:g}",
            curves[correct][s, i],
            "<=",
            epsilon,
            kind="monte-carlo",
            alpha=alpha,
        )
        for s in range(repetitions)
        for i, n in enumerate(sizes)
    )
    controls = tuple(
        Compare(
            f"wrong: the {name} mechanism is {epsilon:g}-DP (all {curves[name].size} lower bounds <= {epsilon:g})",
            float(curves[name].max()),
            "<=",
            epsilon,
            kind="monte-carlo",
            alpha=max(float(misses[name].min()), 1e-300),
        )
        for name in misses
    )
    return Convergence(evidence=evidence, controls=controls, sizes=tuple(sizes), curves=curves, misses=misses)


@dataclass(frozen=True)
class ScaleOut(Experiment):
    """:func:`scale_out`'s three audits."""

    serial: AuditResult | None = None
    parallel: AuditResult | None = None
    other_seed: AuditResult | None = None


def scale_out(
    mechanism: Mechanism | None = None,
    n: int = 2_000_000,
    *,
    seed: int = 150,
    other_seed: int = 151,
    workers: int = 2,
) -> ScaleOut:
    """The same audit serially and on a process pool of ``workers``; another seed as control.

    Evidence (exact): the pool's :class:`~dpcore.auditing.AuditResult` equals the
    serial one for the same ``seed``. Control: the audit with ``other_seed``
    equals it too (it must not: the seed matters).

    Parameters
    ----------
    mechanism : callable, optional
        Picklable ``mechanism(data, size, rng)`` (default ``dpcore.LaplaceMechanism(1.0)``),
        audited between 0 and 1 at confidence 0.95.
    n : int
        Samples per side.
    seed, other_seed : int
        The seed of the serial and pool audits, and the control's.
    workers : int
        Processes of the pool.

    Returns
    -------
    ScaleOut
        The three :class:`~dpcore.auditing.AuditResult`.
    """
    mech: Mechanism = dpcore.LaplaceMechanism(1.0) if mechanism is None else mechanism
    serial = audit_epsilon(mech, 0.0, 1.0, n, rng=seed)
    with ProcessPoolExecutor(workers) as pool:
        parallel = audit_epsilon(mech, 0.0, 1.0, n, rng=seed, executor=pool)
    other = audit_epsilon(mech, 0.0, 1.0, n, rng=other_seed)
    return ScaleOut(
        evidence=(Fact(f"{workers}-process pool result == serial result (same seed)", parallel == serial),),
        controls=(Fact("another seed gives the same result", other == serial),),
        serial=serial,
        parallel=parallel,
        other_seed=other,
    )


# --------------------------------------------------------------------------- floating point


@dataclass(frozen=True)
class FloatAttack(Experiment):
    """:func:`float_attack`'s samples, support tests and attack test."""

    epsilon: float = math.nan
    scale: float = math.nan
    bound: float = math.nan
    y0: NDArray[np.float64] = field(default_factory=lambda: np.empty(0), repr=False)
    y1: NDArray[np.float64] = field(default_factory=lambda: np.empty(0), repr=False)
    impossible_under_1: NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, bool), repr=False)
    impossible_under_0: NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, bool), repr=False)
    attack: CheckResult | None = None

    def mechanism(self, x: float, n: int, g: np.random.Generator) -> NDArray[np.float64]:
        """The textbook floating-point Laplace mechanism of this scale on input ``x``."""
        return np.asarray(fp.naive_laplace_mechanism(float(x), self.scale, n, rng=g))

    def support_statistic(self, x: float, n: int, g: np.random.Generator) -> NDArray[np.float64]:
        """1.0 where an output on input ``x`` is a possible output on input 0, else 0.0 (a post-processing)."""
        return fp.naive_laplace_support_contains(self.mechanism(x, n, g), 0.0, self.scale).astype(float)


def float_attack(
    epsilon: float = 0.5,
    scale: float = 2.0,
    *,
    n: int = 20_000,
    seeds: tuple[int, int, int] = (160, 161, 162),
    n_attack: int = 40_000,
    attack_alpha: float = 0.05,
) -> FloatAttack:
    r"""Mironov's attack on the textbook floating-point Laplace mechanism, inputs 0 and 1.

    Draws ``n`` outputs on each input (``rng=seeds[0]``, ``seeds[1]``) and
    decides exactly, with ``fp.naive_laplace_support_contains``, which of them
    the other input cannot produce. Then plays the membership game with
    ``fp.floating_point_attack`` ``n_attack`` times (``rng=seeds[2]``) and tests the
    success rate against the bound :math:`e^{\varepsilon}/(1+e^{\varepsilon})` of any
    epsilon-DP mechanism (one-sided Clopper--Pearson at ``attack_alpha``, shown:
    it rejects). No evidence of its own: :func:`float_event_audit` and
    :func:`float_not_dp` record on these samples.

    Parameters
    ----------
    epsilon : float
        The epsilon of the bound (the mechanism's scale is ``scale``, 1/epsilon for
        sensitivity 1 in the chapter).
    scale : float
        The Laplace scale of the floating-point mechanism.
    n : int
        Outputs drawn on each input.
    seeds : (int, int, int)
        Seeds of the outputs on 0, on 1, and of the game.
    n_attack, attack_alpha : int, float
        Games played and the test's false-alarm probability.

    Returns
    -------
    FloatAttack
        The samples ``y0``, ``y1``, the masks ``impossible_under_1`` (outputs of
        :math:`M(0)` that :math:`M(1)` cannot produce) and ``impossible_under_0``,
        the ``attack`` test and the ``bound``; its methods ``mechanism`` and
        ``support_statistic`` are the mechanism and the attack's statistic.
    """
    bound = math.exp(epsilon) / (1 + math.exp(epsilon))
    y0 = np.asarray(fp.naive_laplace_mechanism(0.0, scale, n, rng=seeds[0]))
    y1 = np.asarray(fp.naive_laplace_mechanism(1.0, scale, n, rng=seeds[1]))
    game = FloatAttack(epsilon=epsilon, scale=scale, bound=bound, y0=y0, y1=y1)
    attack = check_probability(
        attack_trials(game.mechanism, lambda y: fp.floating_point_attack(y, 0.0, 1.0, scale)),
        lambda s: s > 0.5,
        n_attack,
        bound,
        alternative="less",
        rng=seeds[2],
        alpha=attack_alpha,
        name=f"naive float Laplace: success <= e^eps/(1+e^eps) (shown at {_g(100 * (1 - attack_alpha))} %)",
    )
    return FloatAttack(
        epsilon=epsilon,
        scale=scale,
        bound=bound,
        y0=y0,
        y1=y1,
        impossible_under_1=~fp.naive_laplace_support_contains(y0, 1.0, scale),
        impossible_under_0=~fp.naive_laplace_support_contains(y1, 0.0, scale),
        attack=attack,
    )


@dataclass(frozen=True)
class FloatEventAudit(Experiment):
    """:func:`float_event_audit`'s audits of the support statistic."""

    audit: AuditResult | None = None
    audit_small: AuditResult | None = None
    check: CheckResult | None = None
    miss: float = 1.0
    discrete_check: CheckResult | None = None


def float_event_audit(
    game: FloatAttack,
    *,
    n: int = 20_000,
    n_small: int = 2_000,
    seeds: tuple[int, int, int] = (170, 171, 172),
    claimed_factor: float = 10.0,
    alpha: float = 2e-7,
    level: float = 1e-7,
    statistic: Mechanism | None = None,
    control_seed: int = 174,
) -> FloatEventAudit:
    r"""Audit ``game``'s mechanism through its support statistic, claimed ``claimed_factor * eps``-DP.

    ``audit_epsilon`` at 95 % with ``n`` and ``n_small`` samples (``rng=seeds[0]``,
    ``seeds[1]``) is shown. Evidence: the audit on the fixed event
    {statistic <= 1/2} (``rng=seeds[2]``, false alarm ``alpha``) rejects the claim.
    The event is impossible under input 0 and has probability :math:`p` under
    input 1; :math:`p` is bounded below by the Clopper--Pearson bound at level
    ``level`` from ``game.y1`` (independent samples), so the miss probability is
    at most ``level + event_detection_miss(p_lo, 0, ...)``. Control: the same
    fixed-event check of the same statistic (membership in the support of
    :math:`M(0)`) rejects the claim for the exact discrete Laplace mechanism of
    the same scale too (``rng=control_seed``), i.e. the refutation comes from
    the statistic and not from the floating point; there every output is in
    the support, so it may reject only by a false alarm (probability <= ``alpha``).
    Budget: that miss + ``alpha``.

    Parameters
    ----------
    game : FloatAttack
        The samples of :func:`float_attack` (its ``y1`` bounds :math:`p`; the
        fixed-event audit draws as many samples as ``game.y1`` has).
    n, n_small : int
        Samples per side of the two shown audits.
    seeds : (int, int, int)
        Seeds of the two shown audits and of the fixed-event audit.
    claimed_factor : float
        The claim audited is ``claimed_factor * game.epsilon``-DP.
    alpha : float
        False-alarm probability of the fixed-event audit.
    level : float
        Level of the Clopper--Pearson lower bound on :math:`p`.
    statistic : callable, optional
        The statistic audited, ``statistic(x, n, rng)``; default
        ``game.support_statistic`` (the miss bound assumes it).
    control_seed : int
        Seed of the control's fixed-event audit of the discrete mechanism.

    Returns
    -------
    FloatEventAudit
        ``audit``, ``audit_small`` (shown), ``check`` and its ``miss`` bound,
        ``discrete_check`` (the control's test).
    """
    n_game = game.impossible_under_0.size
    stat: Mechanism = game.support_statistic if statistic is None else statistic
    audit = audit_epsilon(stat, 0, 1, n, rng=seeds[0])
    audit_small = audit_epsilon(stat, 0, 1, n_small, rng=seeds[1])
    claimed = claimed_factor * game.epsilon
    p_lo = float(clopper_pearson_bounds(int(game.impossible_under_0.sum()), n_game, level)[0])
    check = audit_threshold_events(stat, 0, 1, n_game, [0.5], alpha=alpha, rng=seeds[2]).check(
        claimed, name=f"fixed event: {claimed:g}-DP"
    )
    miss = level + event_detection_miss(p_lo, 0.0, n_game, n_game, claimed, events=2, alpha=alpha)
    exact_eps = _fraction(1.0 / game.scale)

    def discrete_support(x: float, m: int, g: np.random.Generator) -> NDArray[np.float64]:
        y = dd.discrete_laplace_mechanism(np.full(m, int(x)), 1, exact_eps, rng=g)
        return (np.asarray(dd.discrete_laplace_pmf(y, game.scale)) > 0).astype(float)

    discrete_check = audit_threshold_events(discrete_support, 0, 1, n_game, [0.5], alpha=alpha, rng=control_seed).check(
        claimed, name=f"wrong: the same fixed event refutes {claimed:g}-DP of the exact discrete mechanism"
    )
    return FloatEventAudit(
        evidence=(Rejected(check.name, result=check, miss=miss),),
        controls=(Rejected(discrete_check.name, result=discrete_check, miss=alpha),),
        audit=audit,
        audit_small=audit_small,
        check=check,
        miss=miss,
        discrete_check=discrete_check,
    )


def float_not_dp(game: FloatAttack, *, level: float = 1e-7, control_seed: int = 173) -> Experiment:
    r"""A certificate that ``game``'s mechanism is not epsilon-DP for any epsilon: an impossible output.

    Evidence: an output of :math:`M(1)` in the second half of ``game.y1`` is
    impossible under :math:`M(0)` (exact support test). The first half bounds
    the chance :math:`p` of such an output from below (Clopper--Pearson, level
    ``level``), so the certificate is missed with probability at most
    ``level + (1 - p_lo)^(n/2)`` (the Fact's alpha); and every output in
    ``game.y0`` lies in the support of :math:`M(0)` (exact). Control: the same
    search among ``n`` outputs of the exact discrete Laplace mechanism on input 1
    (``rng=control_seed``, pmf at the game's scale) finds no impossible output.

    Parameters
    ----------
    game : FloatAttack
        The samples of :func:`float_attack`.
    level : float
        Level of the Clopper--Pearson lower bound on :math:`p`.
    control_seed : int
        Seed of the control's discrete Laplace outputs (as many as ``game.y1``).

    Returns
    -------
    Experiment
        The evidence and the control.
    """
    imp = game.impossible_under_0
    half = imp.size // 2
    p_half_lo = float(clopper_pearson_bounds(int(imp[:half].sum()), half, level)[0])
    no_certificate = math.exp(half * math.log1p(-min(p_half_lo, 1 - 1e-16)))
    eps = game.epsilon
    exact = dd.discrete_laplace_mechanism(np.ones(imp.size, dtype=int), 1, _fraction(eps), rng=control_seed)
    return Experiment(
        evidence=(
            Fact(
                "an output of M(1) is impossible under M(0) (exact support test)",
                bool(imp[half:].any()),
                kind="monte-carlo",
                alpha=min(1.0, level + no_certificate),
            ),
            Fact(
                "every output of M(0) lies in its own support",
                bool(fp.naive_laplace_support_contains(game.y0, 0.0, game.scale).all()),
            ),
        ),
        controls=(
            Fact(
                "exact integer mechanism: an output of M(1) impossible under M(0)",
                bool(np.any(dd.discrete_laplace_pmf(exact, game.scale) == 0)),
            ),
        ),
    )


def _fraction(x: float) -> str:
    """``x`` as the exact fraction string dpcore.discrete takes (``0.5`` -> ``"1/2"``)."""
    f = Fraction(x).limit_denominator(10**6)
    return f"{f.numerator}/{f.denominator}"


# --------------------------------------------------------------------------- exact discrete samplers


@dataclass(frozen=True)
class SamplerChecks(Experiment):
    """A discrete sampler's tests (``checks``), the rounded-law controls' tests, and ``P(Z = 0)``."""

    checks: tuple[CheckResult, ...] = ()
    rounded: tuple[CheckResult, ...] = ()
    p0: float = math.nan

    @property
    def shown(self) -> tuple[CheckResult, ...]:
        """Every test, the sampler's first, in the chapter's order."""
        return (*self.checks, *self.rounded)


def _table_cdf(pmf: NDArray[np.float64]) -> Callable[[NDArray[Any]], NDArray[np.float64]]:
    """The CDF of a law on :data:`INT_SUPPORT` from its pmf there (clipped beyond)."""
    table = np.cumsum(pmf)
    lo, hi = int(INT_SUPPORT[0]), int(INT_SUPPORT[-1])
    return lambda g: table[np.clip(g.astype(int) - lo, 0, hi - lo)]


def discrete_laplace_sampler(
    scale: int = 2,
    *,
    n: int = 200_000,
    n_cdf_control: int = 400_000,
    seeds: tuple[int, int, int, int, int] = (180, 181, 182, 183, 184),
    alpha: float = 1e-6 / 5,
    grid: ArrayLike = DL_GRID,
    sampler: Sampler | None = None,
) -> SamplerChecks:
    r"""Test ``dd.sample_discrete_laplace(scale)`` against the exact pmf :math:`\tanh(1/(2b)) e^{-|z|/b}`.

    Evidence: ``dd.discrete_laplace_pmf(0, scale) = tanh(1/(2 scale))`` (numeric,
    relative 1e-14); two-sided Clopper--Pearson tests of :math:`P(Z=0)` and
    :math:`P(Z=2)` (``rng=seeds[0]``, ``seeds[1]``) and a DKW test of the CDF on
    ``grid`` (``rng=seeds[2]``), ``alpha`` each. Controls: the rounded continuous
    Laplace law, :math:`P(Z=0) = 1 - e^{-1/(2b)}` (``rng=seeds[3]``; miss: the
    exact binomial acceptance at the true pmf) and :math:`P(Z \le k) =
    F_{\mathrm{Lap}(0,b)}(k + 1/2)` with ``n_cdf_control`` samples (``rng=seeds[4]``; at
    4e5 samples the true sup distance 0.0119 exceeds twice the DKW radius, so a
    miss has probability at most ``alpha``). Budget: 5 ``alpha``.

    Parameters
    ----------
    scale : int
        The scale :math:`b` (``b = 2``: epsilon 1/2 at sensitivity 1).
    n : int
        Samples of each recorded test and of the P(Z=0) control.
    n_cdf_control : int
        Samples of the CDF control (large enough that twice the DKW radius is
        below the true distance, else its miss bound is 1).
    seeds : (int, int, int, int, int)
        Seeds of the three tests and the two controls.
    alpha : float
        False-alarm probability of each test.
    grid : array_like
        The integers where the CDFs are compared (within :data:`INT_SUPPORT`).
    sampler : callable, optional
        ``sampler(rng, n)``, the sampler tested; default the discrete Laplace
        sampler of ``scale``.

    Returns
    -------
    SamplerChecks
        ``checks`` (the evidence's tests), ``rounded`` (the controls' tests),
        ``p0`` = ``dd.discrete_laplace_pmf(0, scale)``.
    """
    b = scale
    sample: Sampler = (lambda g, m: dd.sample_discrete_laplace(b, m, rng=g)) if sampler is None else sampler
    p = dd.discrete_laplace_pmf(INT_SUPPORT, b)
    cdf = _table_cdf(p)
    p0, p2 = float(dd.discrete_laplace_pmf(0, b)), float(dd.discrete_laplace_pmf(2, b))
    grid = np.asarray(grid)
    checks = (
        check_probability(sample, lambda v: v == 0, n, p0, rng=seeds[0], alpha=alpha, name="P(Z=0)"),
        check_probability(sample, lambda v: v == 2, n, p2, rng=seeds[1], alpha=alpha, name="P(Z=2)"),
        check_cdf(sample, n, cdf, grid=grid, rng=seeds[2], alpha=alpha, name="CDF on the integers"),
    )

    def rounded_cdf(g: NDArray[Any]) -> NDArray[np.float64]:
        return np.asarray(stats.laplace.cdf(g + 0.5, scale=b))

    rounded = check_probability(
        sample,
        lambda v: v == 0,
        n,
        1 - math.exp(-1 / (2 * b)),
        rng=seeds[3],
        alpha=alpha,
        name="rounded continuous Laplace: P(Z=0)",
    )
    rounded_c = check_cdf(
        sample,
        n_cdf_control,
        rounded_cdf,
        grid=grid,
        rng=seeds[4],
        alpha=alpha,
        name="rounded continuous Laplace: CDF on the integers",
    )
    distance = float(np.max(np.abs(cdf(grid) - rounded_cdf(grid))))
    return SamplerChecks(
        evidence=(
            Close(f"dpcore.discrete_laplace_pmf(0, {b}) = tanh(1/{2 * b})", p0, math.tanh(1 / (2 * b)), rtol=1e-14),
            *checks,
        ),
        controls=(
            Test(rounded.name, result=rounded, true_value=p0),
            Test(rounded_c.name, result=rounded_c, true_value=distance),
        ),
        checks=checks,
        rounded=(rounded, rounded_c),
        p0=p0,
    )


def discrete_gaussian_sampler(
    sigma2: str = "1/2",
    *,
    n: int = 200_000,
    seeds: tuple[int, int, int, int] = (190, 191, 192, 193),
    alpha: float = 1e-6 / 4,
    grid: ArrayLike = DG_GRID,
    sampler: Sampler | None = None,
) -> SamplerChecks:
    r"""Test ``dd.sample_discrete_gaussian(sigma2)`` against its pmf, :math:`\propto e^{-z^2/(2\sigma^2)}` on Z.

    Evidence: ``dd.discrete_gaussian_pmf(0, sigma2)`` equals :math:`1/\sum_{|j| \le 40}
    e^{-j^2/(2\sigma^2)}` (relative 1e-14; the omitted terms are below 1e-300);
    a two-sided Clopper--Pearson test of :math:`P(Z=0)` (``rng=seeds[0]``) and a
    DKW test of the CDF on ``grid`` (``rng=seeds[1]``), ``alpha`` each. Controls:
    the rounded continuous Gaussian, :math:`P(Z=0) = \operatorname{erf}(1/(2\sqrt2\sigma))`
    (``rng=seeds[2]``) and :math:`P(Z\le k) = \Phi((k+1/2)/\sigma)` (``rng=seeds[3]``),
    their miss probabilities computed from the true values. Budget: 4 ``alpha``.

    Parameters
    ----------
    sigma2 : str
        The variance parameter as an exact fraction.
    n : int
        Samples of each test.
    seeds : (int, int, int, int)
        Seeds of the two tests and the two controls.
    alpha : float
        False-alarm probability of each test.
    grid : array_like
        The integers where the CDFs are compared (within :data:`INT_SUPPORT`).
    sampler : callable, optional
        ``sampler(rng, n)``, the sampler tested; default the discrete Gaussian
        sampler of ``sigma2``.

    Returns
    -------
    SamplerChecks
        ``checks``, ``rounded`` and ``p0`` = ``dd.discrete_gaussian_pmf(0, sigma2)``.
    """
    s2 = float(_as_float_fraction(sigma2))
    sample: Sampler = (lambda g, m: dd.sample_discrete_gaussian(sigma2, m, rng=g)) if sampler is None else sampler
    cdf = _table_cdf(dd.discrete_gaussian_pmf(INT_SUPPORT, sigma2))
    grid = np.asarray(grid)
    p0 = float(dd.discrete_gaussian_pmf(0, sigma2))
    checks = (
        check_probability(sample, lambda v: v == 0, n, p0, rng=seeds[0], alpha=alpha, name="discrete Gaussian P(Z=0)"),
        check_cdf(sample, n, cdf, grid=grid, rng=seeds[1], alpha=alpha, name="discrete Gaussian CDF"),
    )

    def rounded_cdf(g: NDArray[Any]) -> NDArray[np.float64]:
        return np.asarray(stats.norm.cdf(g + 0.5, scale=math.sqrt(s2)))

    rounded = check_probability(
        sample,
        lambda v: v == 0,
        n,
        math.erf(0.5 / math.sqrt(2 * s2)),
        rng=seeds[2],
        alpha=alpha,
        name="rounded continuous Gaussian: P(Z=0)",
    )
    rounded_c = check_cdf(
        sample, n, rounded_cdf, grid=grid, rng=seeds[3], alpha=alpha, name="rounded continuous Gaussian: CDF"
    )
    theta = sum(math.exp(-j * j / (2 * s2)) for j in range(-40, 41))
    exponent = "-z^2" if s2 == 0.5 else f"-z^2/{_g(2 * s2)}"
    return SamplerChecks(
        evidence=(
            Close(f"dpcore.discrete_gaussian_pmf(0, {sigma2}) = 1/sum e^({exponent})", p0, 1 / theta, rtol=1e-14),
            *checks,
        ),
        controls=(
            Test(rounded.name, result=rounded, true_value=p0),
            Test(rounded_c.name, result=rounded_c, true_value=float(np.max(np.abs(cdf(grid) - rounded_cdf(grid))))),
        ),
        checks=checks,
        rounded=(rounded, rounded_c),
        p0=p0,
    )


def _as_float_fraction(x: str | float) -> float:
    """``"1/2"`` -> 0.5 (the fractions dpcore.discrete takes as strings)."""
    return float(Fraction(x))


# --------------------------------------------------------------------------- the attack on the fix


@dataclass(frozen=True)
class DiscreteAttack(Experiment):
    """:func:`discrete_attack`'s tests and audit."""

    bound: float = math.nan
    within: CheckResult | None = None
    exact: CheckResult | None = None
    wrong: CheckResult | None = None
    audit: AuditResult | None = None


def discrete_attack(
    epsilon: str = "1/2",
    *,
    n: int = 200_000,
    seeds: tuple[int, int, int, int] = (200, 201, 202, 203),
    alpha: float = 1e-6 / 4,
    wrong_success: float | None = None,
    mechanism: Mechanism | None = None,
) -> DiscreteAttack:
    r"""The likelihood-ratio attack on ``dd.discrete_laplace_mechanism`` (sensitivity 1), inputs 0 and 1.

    The attacker guesses 1 iff :math:`y \ge 1`; its success is exactly
    :math:`e^{\varepsilon}/(1+e^{\varepsilon})`. Evidence: the one-sided test of
    success <= bound (``rng=seeds[0]``), the two-sided test of success = bound
    (``rng=seeds[1]``) and ``audit_epsilon`` (``rng=seeds[3]``, confidence
    ``1 - alpha``) at most epsilon, ``alpha`` each. Control: the two-sided test of
    success = ``wrong_success`` (``rng=seeds[2]``; miss: exact binomial acceptance
    at the true bound), by default the success of the same attack on the
    *continuous* Laplace mechanism of the same epsilon,
    :math:`1 - e^{-\varepsilon/2}/2` (guess 1 iff :math:`y \ge 1/2`), which a careless
    author would expect the integer mechanism to share. Budget: 3 ``alpha`` + the
    control's miss.

    Parameters
    ----------
    epsilon : str
        The mechanism's epsilon as an exact fraction.
    n : int
        Games per test and samples per side of the audit.
    seeds : (int, int, int, int)
        Seeds of the one-sided test, the two-sided test, the control and the audit.
    alpha : float
        False-alarm probability of each test and of the audit.
    wrong_success : float, optional
        The control's wrong claim (default: the continuous mechanism's success).
    mechanism : callable, optional
        ``mechanism(x, n, rng)`` attacked and audited, claimed epsilon-DP;
        default the discrete Laplace mechanism.

    Returns
    -------
    DiscreteAttack
        The tests ``within``, ``exact``, ``wrong``, the ``audit`` and the ``bound``.
    """
    eps = _as_float_fraction(epsilon)
    bound = math.exp(eps) / (1 + math.exp(eps))
    if wrong_success is None:
        wrong_success = 1 - math.exp(-eps / 2) / 2  # continuous Lap(0|1, 1/eps), guess 1 iff y >= 1/2

    def discrete(x: Any, m: int, g: np.random.Generator) -> NDArray[Any]:
        return np.asarray(dd.discrete_laplace_mechanism(np.full(m, x), 1, epsilon, rng=g))

    mech: Mechanism = discrete if mechanism is None else mechanism
    trials = attack_trials(mech, lambda y: (y >= 1).astype(int))

    def game(claimed: float, seed: int, name: str, alternative: Any = "two-sided") -> CheckResult:
        return check_probability(
            trials, lambda s: s > 0.5, n, claimed, alternative=alternative, rng=seed, alpha=alpha, name=name
        )

    within = game(bound, seeds[0], "discrete Laplace: success <= e^eps/(1+e^eps)", "less")
    exact = game(bound, seeds[1], "discrete Laplace: success = e^eps/(1+e^eps)")
    wrong = game(wrong_success, seeds[2], f"wrong: success = {wrong_success:.4f}")
    audit = audit_epsilon(mech, 0, 1, n, rng=seeds[3], confidence=1 - alpha)
    return DiscreteAttack(
        evidence=(within, exact, _audit_compare("audit lower bound <= eps", audit, eps, alpha)),
        controls=(Test(wrong.name, result=wrong, true_value=bound),),
        bound=bound,
        within=within,
        exact=exact,
        wrong=wrong,
        audit=audit,
    )
