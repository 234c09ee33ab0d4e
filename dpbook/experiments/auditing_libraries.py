r"""Chapter 08 (auditing the libraries you use): its experiments, one function each.

The audited mechanisms are the DP libraries' own, built and calibrated by the
library through :func:`dpcore.library_mechanism` (diffprivlib 0.6.6, OpenDP
0.16.0, python-dp 1.1.5, pinned in ``requirements.txt``). They draw their
randomness from their own generators, which cannot be seeded: the seeds passed
here only seed the auditor's own streams, and every claim built on these audits
holds whatever the libraries' random streams are. A "not refuted" record rests
on the audit's validity (:func:`dpcore.audit_epsilon`: a bound above the true
epsilon has probability at most one minus the confidence); a "refuted" record
on a miss probability computed from the refuting event's rates
(:func:`refutation_miss`): the rate under one input is bounded below from an
independent batch of outputs, and the rate under the other input is exactly 0
by IEEE 754 arithmetic (:func:`ieee_multiple_fact`).

The calibrators are checked white-box against an independent 50-digit mpmath
evaluation of the Gaussian mechanism's privacy profile (:func:`exact_delta`,
:func:`exact_sigma`), written here and not taken from dpcore.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import mpmath as mp
import numpy as np
from numpy.typing import NDArray

import dpcore
from dpcore import dyadic_valuation
from dpcore.auditing import AuditResult, audit_epsilon
from dpcore.event_ratios import event_detection_miss
from dpcore.library_adapters import LIBRARY_MECHANISMS
from dpcore.montecarlo import clopper_pearson_bounds

from ..evidence import Compare, Fact
from . import Experiment

__all__ = [
    "CLAIM_EPSILON",
    "CLAIM_DELTA",
    "IEEE_EXPONENT",
    "LibraryAudit",
    "library_audit",
    "audit_table",
    "RateBatch",
    "rate_batch",
    "ieee_multiple_fact",
    "refutation_miss",
    "refuted",
    "not_refuted",
    "python_dp",
    "exact_delta",
    "exact_sigma",
    "CalibratorCheck",
    "calibrator_grid",
    "calibrators",
    "check_calibrators",
    "violation_table",
    "under_noise_grid",
]

CLAIM_EPSILON = 1.0
"""The epsilon every library is asked for."""
CLAIM_DELTA = 1e-5
"""The delta of the Gaussian mechanisms' claims."""
IEEE_EXPONENT = -53
"""Every double ``1 (+) v`` (rounded sum of 1 and a double v) is a multiple of ``2^IEEE_EXPONENT``."""


def _g(x: float) -> str:
    """``x`` for a description: ``1.0`` -> ``1``, ``1e-05`` -> ``1e-5``."""
    return f"{x:g}".replace("e-0", "e-")


# --------------------------------------------------------------------------- black-box audits


@dataclass(frozen=True)
class LibraryAudit:
    """A library mechanism audited twice between inputs 0 and 1: value thresholds, then representation events."""

    library: str
    mechanism: str
    version: str
    epsilon: float
    delta: float
    threshold: AuditResult
    representation: AuditResult
    seconds_threshold: float
    seconds_representation: float

    @property
    def name(self) -> str:
        return f"{self.library} {self.version} {self.mechanism}"

    @property
    def claim(self) -> str:
        return _g(self.epsilon) if not self.delta else f"({_g(self.epsilon)}, {_g(self.delta)})"


def library_audit(
    library: str,
    mechanism: str,
    n: int,
    *,
    confidence: float = 1 - 1e-6,
    seed: int = 0,
    epsilon: float = CLAIM_EPSILON,
    delta: float | None = None,
) -> LibraryAudit:
    r"""Audit ``library``'s ``mechanism``, calibrated by the library to the claim, with ``n`` samples per side.

    Two audits with :func:`dpcore.audit_epsilon` between inputs 0 and 1 at
    ``confidence``: ``events="threshold"`` (the value) and
    ``events="representation"`` (also precision, lattice and value events),
    each timed (wall clock). ``delta`` defaults to :data:`CLAIM_DELTA` for the
    Gaussian mechanisms and 0 for Laplace. ``seed`` seeds the auditor only:
    the libraries draw their own randomness.
    """
    needs_delta = LIBRARY_MECHANISMS[library][mechanism]
    d = (CLAIM_DELTA if needs_delta else 0.0) if delta is None else delta
    mech = dpcore.library_mechanism(library, mechanism, epsilon, d)
    results, seconds = [], []
    for i, events in enumerate(("threshold", "representation")):
        t0 = time.perf_counter()
        res = audit_epsilon(mech, 0.0, 1.0, n, confidence=confidence, delta=d, rng=seed + i, events=events)
        seconds.append(time.perf_counter() - t0)
        results.append(res)
    threshold, representation = results
    return LibraryAudit(library, mechanism, mech.version, epsilon, d, threshold, representation, *seconds)


def audit_table(audits: Sequence[LibraryAudit], claimed: float = CLAIM_EPSILON) -> str:
    """A Markdown table: library, mechanism, claim, both certified bounds, samples, times, verdict, best event."""
    rows = [
        "| library | mechanism | claimed eps | thresholds: bound | representation: bound "
        "| samples per side | time | verdict | refuting (or best) event, estimation counts |",
        "|---|---|---|---:|---:|---:|---:|---|---|",
    ]
    for a in audits:
        rep = a.representation
        verdict = "**refuted**" if rep.epsilon_lower > claimed else "not refuted"
        rows.append(
            f"| {a.library} {a.version} | {a.mechanism} | {a.claim} | "
            f"{a.threshold.epsilon_lower:.2f} | {rep.epsilon_lower:.2f} | {rep.n_samples:,} | "
            f"{a.seconds_threshold:.1f} s + {a.seconds_representation:.1f} s | {verdict} | "
            f"{rep.best.describe(rep.n_estimation, 0, 1)} |"
        )
    return "\n".join(rows)


@dataclass(frozen=True)
class RateBatch:
    """Independent outputs of one library mechanism: their dyadic valuations on inputs 0 and 1."""

    name: str
    valuations_0: NDArray[np.int64]
    valuations_1: NDArray[np.int64]

    def rate_lower(self, k: int, level: float) -> float:
        r"""Clopper--Pearson lower bound (level ``level``) on :math:`P(\nu(M(0)) < k)`: "not a multiple of 2^k"."""
        hits = int(np.count_nonzero(self.valuations_0 < k))
        return float(clopper_pearson_bounds(hits, self.valuations_0.size, level)[0])


def rate_batch(library: str, mechanism: str, n: int) -> RateBatch:
    """``n`` fresh outputs of the library mechanism on each input (calibrated to the chapter's claim), as valuations."""
    needs_delta = LIBRARY_MECHANISMS[library][mechanism]
    mech = dpcore.library_mechanism(library, mechanism, CLAIM_EPSILON, CLAIM_DELTA if needs_delta else 0.0)
    v0 = dyadic_valuation(mech(0.0, n, None))
    v1 = dyadic_valuation(mech(1.0, n, None))
    return RateBatch(f"{library} {mechanism}", v0, v1)


def ieee_multiple_fact(batch: RateBatch, k: int = IEEE_EXPONENT, side: int = 1) -> Fact:
    r"""Fact: every output of ``batch`` on input ``side`` is a multiple of :math:`2^k` (its valuation is >= k).

    For ``side = 1`` and ``k = -53`` this is what IEEE 754 arithmetic forces on
    an output computed as :math:`1 \oplus v` (the correctly rounded sum of 1 and
    a double :math:`v`): if :math:`|1 + v| \ge 1/2` the result is a double of
    exponent at least :math:`-1`, whose last bit is worth at least
    :math:`2^{-53}`; otherwise :math:`v \in (-3/2, -1/2)` is itself a multiple of
    :math:`2^{-53}` and the sum is exact (Sterbenz's lemma). The fact checks the
    argument on the batch.
    """
    vals = batch.valuations_1 if side == 1 else batch.valuations_0
    return Fact(
        f"{batch.name}: all {vals.size:,} outputs on input {side} are multiples of 2^{k}",
        bool(np.all(vals >= k)),
    )


def refutation_miss(result: AuditResult, batch: RateBatch, claimed: float, level: float) -> float:
    r"""Bound on the chance that ``result``'s estimation phase does *not* refute ``claimed``, given its events.

    Given the events the selection kept, the estimation counts are binomial
    with the events' true rates, and the audit misses only if every kept event
    misses. For a kept precision event "not a multiple of :math:`2^k`" with
    :math:`k \le -53` and input 0 in the numerator, the rate :math:`q` on input 1
    is exactly 0 (:func:`ieee_multiple_fact`), and the rate :math:`p` on input 0
    is at least the Clopper--Pearson lower bound at level ``level`` from the
    independent ``batch``. The miss is decreasing in :math:`p`, so with
    probability at least :math:`1 -` ``level`` it is at most
    :func:`~dpcore.event_ratios.event_detection_miss` ``(p_lo, 0, n_e, n_e,
    claimed, events=1, alpha=4a, delta)``, each Clopper--Pearson bound of the
    audit at its level :math:`a = (1-c)/(2m)`: two exact binomial tails. The
    returned bound adds ``level``; it is 1 if no kept event is of that kind.
    """
    m = len(result.events)
    a = (1.0 - result.confidence) / (2 * m)
    best = 1.0
    for ev in result.events:
        k = int(ev.threshold)
        if not (ev.kind == "precision" and ev.tail == "lower" and ev.numerator == "d"):
            continue
        if k > IEEE_EXPONENT:
            continue
        p_lo = batch.rate_lower(k, level)
        if p_lo > result.delta:
            miss = event_detection_miss(
                p_lo, 0.0, result.n_estimation, result.n_estimation, claimed,
                events=1, alpha=4 * a, delta=result.delta,
            )  # fmt: skip
            best = min(best, miss)
    return min(1.0, best + level)


def _refuted_evidence(audit: LibraryAudit, batch: RateBatch, claimed: float, level: float) -> tuple[Compare, float]:
    """Monte Carlo evidence ``bound > claimed`` of the representation audit, with :func:`refutation_miss` as alpha."""
    miss = refutation_miss(audit.representation, batch, claimed, level)
    what = f"{audit.name} at claim {audit.claim}: representation audit certifies eps > {_g(claimed)}"
    return Compare(what, audit.representation.epsilon_lower, ">", claimed, kind="monte-carlo", alpha=miss), miss


def _not_refuted_evidence(audit: LibraryAudit, claimed: float) -> Compare:
    """Monte Carlo evidence ``bound <= claimed``: wrong with probability <= 1 - confidence if the claim holds."""
    alpha = 1.0 - audit.representation.confidence
    what = f"{audit.name} at claim {audit.claim}: representation audit bound <= {_g(claimed)}"
    return Compare(what, audit.representation.epsilon_lower, "<=", claimed, kind="monte-carlo", alpha=alpha)


@dataclass(frozen=True)
class Refutation(Experiment):
    """:func:`refuted`'s numbers: the miss probability of each refutation."""

    misses: Mapping[str, float] = field(default_factory=dict)


def refuted(
    audits: Sequence[LibraryAudit],
    batches: Sequence[RateBatch],
    control: LibraryAudit,
    *,
    claimed: float = 5.0,
    level: float = 1e-8,
) -> Refutation:
    r"""Evidence that each of ``audits`` certifies :math:`\varepsilon >` ``claimed``, with computed miss probabilities.

    Per audited mechanism (``batches`` in the same order): the representation
    audit's bound exceeds ``claimed`` (false alarm: :func:`refutation_miss`),
    and every output of its batch on input 1 is a multiple of :math:`2^{-53}`
    (:func:`ieee_multiple_fact`). Control: the wrong claim that the same check
    refutes any library, i.e. also ``control`` (a library that samples
    exactly): its representation audit's bound must *not* exceed ``claimed``;
    it does so by chance with probability at most one minus its confidence,
    counted in the budget.
    """
    evidence: list[Any] = []
    misses = {}
    for audit, batch in zip(audits, batches, strict=True):
        ev, miss = _refuted_evidence(audit, batch, claimed, level)
        evidence += [ev, ieee_multiple_fact(batch)]
        misses[audit.name] = miss
    rep = control.representation
    ctl = Compare(
        f"wrong: {control.name} at claim {control.claim} is refuted too (bound > {_g(claimed)})",
        rep.epsilon_lower, ">", claimed, kind="monte-carlo", alpha=1.0 - rep.confidence,
    )  # fmt: skip
    return Refutation(evidence=tuple(evidence), controls=(ctl,), misses=misses)


def not_refuted(
    audits: Sequence[LibraryAudit],
    control: LibraryAudit,
    control_batch: RateBatch,
    *,
    claimed: float = CLAIM_EPSILON,
    level: float = 1e-8,
) -> Refutation:
    r"""Evidence that none of ``audits`` refutes its claim; control: the same check passing a refuted library.

    Evidence: each representation audit's bound is at most ``claimed`` (false
    alarm: one minus its confidence, whatever the library's random stream, if
    the library keeps its claim). Control: the wrong claim that ``control``
    (a float sampler) passes the same check, bound :math:`\le` ``claimed``;
    its chance of passing is :func:`refutation_miss` at ``claimed``, from
    ``control_batch``.
    """
    evidence = tuple(_not_refuted_evidence(a, claimed) for a in audits)
    miss = refutation_miss(control.representation, control_batch, claimed, level)
    ctl = Compare(
        f"wrong: {control.name} at claim {control.claim} passes too (bound <= {_g(claimed)})",
        control.representation.epsilon_lower, "<=", claimed, kind="monte-carlo", alpha=miss,
    )  # fmt: skip
    return Refutation(evidence=evidence, controls=(ctl,), misses={control.name: miss})


def python_dp(
    laplace: LibraryAudit,
    gaussian: LibraryAudit,
    laplace_batch: RateBatch,
    gaussian_batch: RateBatch,
    *,
    claimed: float = 5.0,
    snap: int = -40,
    level: float = 1e-8,
) -> Refutation:
    r"""python-dp: the Laplace mechanism is not refuted and snaps, the Gaussian mechanism is refuted.

    Evidence: the Laplace audit's bound is at most :data:`CLAIM_EPSILON` (false
    alarm one minus its confidence); every Laplace output of its batch, on both
    inputs, is a multiple of :math:`2^{\text{snap}}` (the snapping, exact); the
    Gaussian audit's bound exceeds ``claimed`` (false alarm
    :func:`refutation_miss`) and its input-1 outputs are multiples of
    :math:`2^{-53}` (:func:`ieee_multiple_fact`). Controls, the same checks on
    the two wrong claims a reader might make: the Gaussian mechanism is snapped
    like the Laplace one (every output of its batch on input 0 a multiple of
    :math:`2^{\text{snap}}`; exact), and the Laplace mechanism is refuted like
    the Gaussian one (bound above ``claimed``: chance one minus its confidence).
    """
    ev_g, miss = _refuted_evidence(gaussian, gaussian_batch, claimed, level)
    rep_l = laplace.representation
    evidence = (
        _not_refuted_evidence(laplace, CLAIM_EPSILON),
        ieee_multiple_fact(laplace_batch, snap, side=0),
        ieee_multiple_fact(laplace_batch, snap, side=1),
        ev_g,
        ieee_multiple_fact(gaussian_batch),
    )
    controls = (
        Fact(
            f"wrong: {gaussian.name} is snapped too: all outputs on input 0 are multiples of 2^{snap}",
            bool(np.all(gaussian_batch.valuations_0 >= snap)),
        ),
        Compare(
            f"wrong: {laplace.name} is refuted too (bound > {_g(claimed)})",
            rep_l.epsilon_lower, ">", claimed, kind="monte-carlo", alpha=1.0 - rep_l.confidence,
        ),
    )  # fmt: skip
    return Refutation(evidence=evidence, controls=controls, misses={gaussian.name: miss})


# --------------------------------------------------------------------------- white-box: the calibrators

DPS = 50
"""Significant digits of the reference computations."""


def exact_delta(sigma: float, epsilon: float, sensitivity: float = 1.0, dps: int = DPS) -> mp.mpf:
    r"""The Gaussian mechanism's :math:`\delta(\varepsilon)` at noise ``sigma``, in mpmath at ``dps`` digits.

    Balle & Wang (2018), Theorem 8: :math:`\Phi(\tfrac{\Delta}{2\sigma} - \tfrac{\varepsilon\sigma}{\Delta})
    - e^{\varepsilon}\Phi(-\tfrac{\Delta}{2\sigma} - \tfrac{\varepsilon\sigma}{\Delta})`, evaluated directly.
    """
    with mp.workdps(dps):
        s = mp.mpf(sigma) / mp.mpf(sensitivity)
        e = mp.mpf(epsilon)
        return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)


def exact_sigma(epsilon: float, delta: float, sensitivity: float = 1.0, dps: int = DPS) -> mp.mpf:
    r"""The exact analytic sigma: the root of :math:`\delta_\sigma(\varepsilon) = \delta` (decreasing in sigma).

    Bracketed by halving and doubling from the classical
    :math:`\sqrt{2\ln(1.25/\delta)}\,\Delta/\varepsilon`, then bisection on
    :math:`\ln\sigma` of :math:`\ln\delta_\sigma(\varepsilon) - \ln\delta` to a
    relative width :math:`10^{-(dps-10)}`: slow, but needs no derivative.
    """
    with mp.workdps(dps):
        target = mp.log(mp.mpf(delta))

        def f(log_s: mp.mpf) -> mp.mpf:
            return mp.log(exact_delta(mp.exp(log_s), epsilon, 1.0, dps)) - target

        guess = mp.log(mp.sqrt(2 * mp.log(mp.mpf(1.25) / mp.mpf(delta))) / mp.mpf(epsilon))
        lo, hi = guess - 1, guess + 1
        while f(lo) < 0:
            lo -= 1
        while f(hi) > 0:
            hi += 1
        tol = mp.mpf(10) ** -(dps - 10)
        while hi - lo > tol:
            mid = (lo + hi) / 2
            if f(mid) > 0:
                lo = mid
            else:
                hi = mid
        return mp.exp(hi) * mp.mpf(sensitivity)


def calibrator_grid() -> list[tuple[float, float]]:
    """The 80 (epsilon, delta) points: 10 epsilons log-spaced in [0.01, 10] x 8 deltas from 1e-2 to 1e-200."""
    eps = np.geomspace(0.01, 10.0, 10)
    deltas = (1e-2, 1e-5, 1e-10, 1e-15, 1e-30, 1e-50, 1e-100, 1e-200)
    return [(float(e), d) for e in eps for d in deltas]


def calibrators() -> dict[str, Callable[[float, float], float]]:
    """The sigma (sensitivity 1) each calibrator returns for (epsilon, delta): diffprivlib, autodp and dpcore."""
    from importlib.metadata import version

    from autodp.calibrator_zoo import ana_gaussian_calibrator
    from diffprivlib.mechanisms import GaussianAnalytic

    autodp = ana_gaussian_calibrator()
    return {
        f"diffprivlib {version('diffprivlib')} GaussianAnalytic": (
            lambda e, d: float(GaussianAnalytic(epsilon=e, delta=d, sensitivity=1.0)._scale)
        ),
        f"autodp {version('autodp')} ana_gaussian_calibrator": (
            lambda e, d: float(autodp.param_from_eps_delta(lambda s: s, e, d))
        ),
        "dpcore analytic_gaussian_sigma": lambda e, d: float(dpcore.analytic_gaussian_sigma(1.0, e, d)),
    }


@dataclass(frozen=True)
class CalibratorCheck(Experiment):
    """:func:`check_calibrators`' table: per calibrator and grid point, its sigma, the true delta and the exact sigma.

    ``rows[name]`` lists ``(epsilon, delta, sigma, true_delta, exact_sigma)``,
    the last two as mpmath numbers.
    """

    rows: Mapping[str, list[tuple[float, float, float, Any, Any]]] = field(default_factory=dict)
    material: Mapping[str, int] = field(default_factory=dict)
    violated: Mapping[str, int] = field(default_factory=dict)


def check_calibrators(
    grid: Sequence[tuple[float, float]],
    named: Mapping[str, Callable[[float, float], float]],
    *,
    reference: str = "dpcore analytic_gaussian_sigma",
    rel: float = 1e-6,
    check_dps: int = 80,
    tiny_delta: float = 1e-100,
) -> CalibratorCheck:
    r"""Each calibrator's sigma at each grid point, its true delta (:func:`exact_delta`) and the exact sigma.

    A point is *violated* when the true delta exceeds the claimed delta, and
    *materially* violated when it exceeds it by more than a relative ``rel``
    (beyond a root finder's rounding). Evidence: each calibrator other than
    ``reference`` violates materially at some point, and returns at least
    40 % too little noise (:math:`1 - \sigma/\sigma_{\text{exact}} \ge 0.4`) at
    every point with :math:`\delta \le` ``tiny_delta``; ``reference`` violates
    at none; the true deltas of the violated points agree at ``check_dps``
    digits to a relative :math:`10^{-30}` (the 50-digit evaluation is accurate);
    the exact sigmas meet their delta to a relative :math:`10^{-30}`. Controls:
    the wrong claim that each of the others meets every point (violations = 0),
    checked by the same count.
    """
    exact = {pt: exact_sigma(*pt) for pt in grid}
    rows: dict[str, list[tuple[float, float, float, Any, Any]]] = {}
    material, violated = {}, {}
    worst_precision, worst_root = mp.mpf(0), mp.mpf(0)
    for name, fn in named.items():
        out = []
        for e, d in grid:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s = fn(e, d)
            true = exact_delta(s, e)
            out.append((e, d, s, true, exact[(e, d)]))
            if true > d:
                with mp.workdps(check_dps):
                    again = exact_delta(s, e, dps=check_dps)
                    worst_precision = max(worst_precision, abs(again / true - 1))
        rows[name] = out
        violated[name] = sum(1 for r in out if r[3] > r[1])
        material[name] = sum(1 for r in out if r[3] > r[1] * (1 + rel))
    for (e, d), s in exact.items():
        with mp.workdps(DPS):
            worst_root = max(worst_root, abs(exact_delta(s, e) / mp.mpf(d) - 1))
    evidence: list[Any] = [
        Compare(f"{name}: points where the true delta exceeds the claim by > {rel:g} relative", k, ">=", 1)
        for name, k in material.items()
        if name != reference
    ]
    for name, out in rows.items():
        with mp.workdps(DPS):
            under = [float(1 - mp.mpf(r[2]) / r[4]) for r in out if r[1] <= tiny_delta]
        if name != reference and under:
            least = min(under)
            evidence.append(
                Compare(f"{name}: least under-noise 1 - sigma/exact at delta <= {tiny_delta:g}", least, ">=", 0.4)
            )
    evidence += [
        Compare(f"{reference}: points where the true delta exceeds the claim", violated[reference], "==", 0),
        Compare(
            f"true delta at 50 vs {check_dps} digits (violated points), relative", float(worst_precision), "<=", 1e-30
        ),
        Compare("exact sigma: |delta(sigma)/delta - 1| over the grid", float(worst_root), "<=", 1e-30),
    ]
    controls = tuple(
        Compare(f"wrong: {name} meets (eps, delta) at every grid point (violations)", k, "==", 0)
        for name, k in violated.items()
        if name != reference
    )
    return CalibratorCheck(evidence=tuple(evidence), controls=controls, rows=rows, material=material, violated=violated)


def violation_table(
    check: CalibratorCheck, name: str, rel: float = 1e-6, epsilons: Sequence[float] | None = None
) -> str:
    r"""Markdown: the materially violated points of ``name`` (at ``epsilons`` only, if given): its sigma, the exact
    sigma, the under-noise :math:`1 - \sigma/\sigma_{\text{exact}}` and the true delta at its sigma."""
    lines = [
        "| epsilon | delta claimed | sigma returned | exact sigma | under-noise | true delta at that sigma |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for e, d, s, true, ex in check.rows[name]:
        keep = epsilons is None or any(abs(e - x) <= 1e-9 * x for x in epsilons)
        if keep and true > d * (1 + rel):
            with mp.workdps(DPS):
                under = float(1 - mp.mpf(s) / ex)
            lines.append(
                f"| {e:.3g} | {d:.0e} | {s:.6g} | {mp.nstr(ex, 7)} | {100 * under:.3g} % | {mp.nstr(true, 3)} |"
            )
    return "\n".join(lines)


def under_noise_grid(check: CalibratorCheck, name: str, rel: float = 1e-6) -> str:
    r"""Markdown: epsilon by delta, the under-noise :math:`1 - \sigma/\sigma_{\text{exact}}` in % where the true
    delta exceeds the claim by more than a relative ``rel``, ``·`` where the claim is met."""
    rows = check.rows[name]
    deltas = sorted({r[1] for r in rows}, reverse=True)
    eps = sorted({r[0] for r in rows})
    cell = {}
    for e, d, s, true, ex in rows:
        with mp.workdps(DPS):
            under = float(1 - mp.mpf(s) / ex)
        cell[(e, d)] = f"{100 * under:.2g}" if true > d * (1 + rel) else "·"
    head = "| epsilon \\ delta | " + " | ".join(f"{d:.0e}" for d in deltas) + " |"
    lines = [head, "|---:|" + "---:|" * len(deltas)]
    lines += [f"| {e:.3g} | " + " | ".join(cell[(e, d)] for d in deltas) + " |" for e in eps]
    return "\n".join(lines)
