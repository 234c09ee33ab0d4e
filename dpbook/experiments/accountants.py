r"""Experiments of chapter 07's practitioner's sections (issue 31): epsilon over a run, the peers checked.

:func:`epsilon_over_epochs` computes the certified epsilon after every epoch of
one DP-SGD run in one call (:func:`dpcore.epsilon_over_run`) beside dpcore's RDP
accountant; :func:`printed_epsilon` traces the ``3.01`` that tutorials print for
the MNIST run to the recipe that printed it; :func:`peers_checked` sets the
epsilons of other accountants (dp_accounting, autodp, prv_accountant, read from
the committed benchmark ``benchmarks/results/peers_checked.json``) beside
dpcore's certified bracket, computed here. Each returns an
:class:`~dpbook.experiments.Experiment` whose ``evidence`` and ``controls`` the
chapter hands to :func:`dpbook.ledger.record`. All evidence is deterministic.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import dpcore
from dpbook.evidence import Close, Compare, Within
from dpbook.experiments import Experiment

__all__ = [
    "TF_PRIVACY_ORDERS",
    "OPACUS_ALPHAS",
    "RUN_ORDERS",
    "RunCurve",
    "epsilon_over_epochs",
    "PrintedEpsilon",
    "printed_epsilon",
    "PEERS",
    "PeersChecked",
    "peers_checked",
]

#: The orders of TensorFlow Privacy's ``compute_dp_sgd_privacy.py`` (the MNIST tutorial's accountant).
TF_PRIVACY_ORDERS = (1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5, *range(5, 64), 128, 256, 512)
#: The grid that seeds :class:`dpcore.RdpAccountant`'s continuous refinement in :func:`epsilon_over_epochs`.
RUN_ORDERS = 1.0 + np.geomspace(0.05, 200.0, 16)
#: Opacus's default RDP orders (``opacus.accountants.rdp.RDPAccountant.DEFAULT_ALPHAS``).
OPACUS_ALPHAS = (*(1 + x / 10 for x in range(1, 100)), *range(12, 64))


@dataclass(frozen=True)
class RunCurve(Experiment):
    """Epsilon after each epoch: the certified PLD bracket and dpcore's RDP answer."""

    epochs: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    steps: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lower: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    upper: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    rdp: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))


def epsilon_over_epochs(sigma: float, n: int, batch: int, epochs: int, delta: float) -> RunCurve:
    r"""Certified epsilon after each of ``epochs`` epochs of DP-SGD (rate ``batch/n``) against RDP.

    Epoch ``e`` ends after :math:`\lfloor e\,n/\mathrm{batch}\rfloor` steps. The
    bracket at every epoch comes from one call of :func:`dpcore.epsilon_over_run`;
    RDP from :class:`dpcore.RdpAccountant` composing the step ``T`` times, its
    order optimised continuously (the grid :data:`RUN_ORDERS`, 16 orders, only
    seeds that refinement: cheaper than the default 256, and the same optimum on
    this run). Evidence (deterministic): the PLD upper end is at most RDP at
    every epoch; the lower end rises strictly from epoch to epoch; at the first,
    middle and last epoch the bracket overlaps a separate
    :class:`dpcore.PldAccountant` query for that step count. Controls (must
    fail): RDP is as tight as the PLD over the run (within 5 % of the upper end
    at every epoch); epsilon adds up over epochs (after the last epoch within
    50 % of ``epochs`` times the first epoch's).
    """
    mech = dpcore.SubsampledGaussianMechanism(sigma=sigma, sampling_rate=batch / n)
    ep = np.arange(1, epochs + 1)
    steps = (ep * n) // batch
    run = dpcore.epsilon_over_run(mech, steps, delta)
    rd = np.array([dpcore.RdpAccountant(RUN_ORDERS).compose(mech, int(T)).epsilon(delta) for T in steps])
    lo, hi = run.epsilon_lower, run.epsilon
    spots = sorted({0, epochs // 2 - 1, epochs - 1})
    overlap = []
    for i in spots:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b = dpcore.PldAccountant().compose(mech, int(steps[i])).epsilon_bracket(delta)
        overlap.append(min(b, hi[i]) - max(a, lo[i]))
    return RunCurve(
        evidence=(
            Compare("max over epochs (PLD upper - RDP)", float(np.max(hi - rd)), "<=", 0.0),
            Compare("min over epochs of the rise of the lower end", float(np.min(np.diff(lo))), ">", 0.0),
            Compare(
                f"min overlap with separate queries at epochs {[int(ep[i]) for i in spots]}",
                float(min(overlap)),
                ">=",
                0.0,
            ),
        ),
        controls=(
            Compare("RDP tight: max over epochs (RDP / PLD upper - 1)", float(np.max(rd / hi - 1)), "<=", 0.05),
            Close(f"epsilon adds up: epoch {epochs} vs {epochs} x epoch 1", hi[-1], epochs * hi[0], rtol=0.5),
        ),
        epochs=ep,
        steps=steps.astype(np.int64),
        lower=lo,
        upper=hi,
        rdp=rd,
    )


@dataclass(frozen=True)
class PrintedEpsilon(Experiment):
    """The printed epsilon, its recipe, and the certified bracket at the same run."""

    steps: int = 0
    classical: float = 0.0
    improved: float = 0.0
    opacus_steps: int = 0
    opacus_classical: float = 0.0
    bracket: tuple[float, float] = (0.0, 0.0)


def printed_epsilon(
    sigma: float,
    n: int,
    batch: int,
    epochs: int,
    delta: float,
    *,
    printed: float,
    opacus_rate: float,
    opacus_printed: float,
) -> PrintedEpsilon:
    r"""Reproduce a tutorial's printed epsilon from its recipe and place it against the certified bracket.

    TensorFlow Privacy's ``compute_dp_sgd_privacy.py`` takes
    :math:`T = \lceil \mathrm{epochs}\cdot n/\mathrm{batch}\rceil` steps at rate
    ``batch/n``, the RDP of the subsampled Gaussian at :data:`TF_PRIVACY_ORDERS` and
    Mironov's classical conversion, and prints three significant digits. Opacus's
    MNIST example runs at ``opacus_rate`` for ``epochs`` epochs of
    :math:`\lceil 1/\mathrm{rate}\rceil` steps, RDP at :data:`OPACUS_ALPHAS`, the
    same conversion. The RDP curve is dpcore's (``SubsampledGaussianMechanism.rdp``).
    Evidence (deterministic): the recipe gives ``printed`` and Opacus's setting
    ``opacus_printed`` (each to within 0.005, the rounding of the print); ``printed``
    is above the certified PLD bracket's upper end at the same ``T`` (a loose
    bound, not an under-report). Controls (must fail): ``printed`` is the improved
    conversion on the same orders; ``printed`` holds for Opacus's setting (as its
    README once said); ``printed`` lies in the certified bracket (is tight).
    """
    T = math.ceil(epochs * n / batch)
    mech = dpcore.SubsampledGaussianMechanism(sigma=sigma, sampling_rate=batch / n)
    orders = np.array(TF_PRIVACY_ORDERS, dtype=float)
    curve = T * np.asarray(mech.rdp(orders), dtype=float)
    classical, _ = dpcore.classical_rdp_to_dp(orders, curve, delta)
    improved, _ = dpcore.rdp_to_dp(orders, curve, delta)
    T_op = epochs * math.ceil(1 / opacus_rate)
    alphas = np.array(OPACUS_ALPHAS, dtype=float)
    op_mech = dpcore.SubsampledGaussianMechanism(sigma=sigma, sampling_rate=opacus_rate)
    op_classical, _ = dpcore.classical_rdp_to_dp(alphas, T_op * np.asarray(op_mech.rdp(alphas)), delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, hi = dpcore.PldAccountant().compose(mech, T).epsilon_bracket(delta)
    return PrintedEpsilon(
        evidence=(
            Close(f"classical RDP at TF Privacy's orders, T = {T}, vs printed", classical, printed, atol=0.005),
            Close(
                f"same at Opacus's rate {opacus_rate:g}, T = {T_op}, its orders, vs its README",
                op_classical,
                opacus_printed,
                atol=0.005,
            ),
            Compare(f"printed vs certified upper end at T = {T}", printed, ">", hi),
        ),
        controls=(
            Close("improved conversion, same orders, vs printed", improved, printed, atol=0.005),
            Close(f"Opacus's setting (T = {T_op}) vs printed", op_classical, printed, atol=0.005),
            Within("printed in the certified bracket", printed, lo, hi),
        ),
        steps=T,
        classical=float(classical),
        improved=float(improved),
        opacus_steps=T_op,
        opacus_classical=float(op_classical),
        bracket=(float(lo), float(hi)),
    )


#: The peers' columns of ``peers_checked.json``: (tool, key) -> the name shown.
PEERS = {
    ("dpa_rdp", "eps"): "dp_accounting RDP",
    ("dpa_pld", "eps"): "dp_accounting PLD",
    ("autodp_rdp", "eps"): "autodp RDP",
    ("prv", "upper"): "PRV upper",
    ("prv", "eps"): "PRV estimate",
}


@dataclass(frozen=True)
class PeersChecked(Experiment):
    """The peers' epsilons against dpcore's bracket, row by row."""

    labels: tuple[str, ...] = ()
    deltas: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    lower: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    upper: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    values: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)


def _mechanism(row: dict[str, Any]) -> Any:
    if row["kind"] == "sgd":
        return dpcore.SubsampledGaussianMechanism(sigma=row["sigma"], sampling_rate=row["q"])
    if row["kind"] == "gauss":
        return dpcore.GaussianMechanism(sigma=row["sigma"])
    return dpcore.LaplaceMechanism(scale=row["b"])


def _autodp(row: dict[str, Any]) -> float:
    """autodp's RDP answer for one row, as benchmarks/bench_peers_checked.py asks it."""
    from autodp import mechanism_zoo, transformer_zoo

    if row["kind"] == "sgd":
        base = mechanism_zoo.GaussianMechanism(sigma=row["sigma"])
        m = transformer_zoo.AmplificationBySampling(PoissonSampling=True)(base, row["q"], improved_bound_flag=True)
    elif row["kind"] == "gauss":
        m = mechanism_zoo.GaussianMechanism(sigma=row["sigma"])
    else:
        m = mechanism_zoo.LaplaceMechanism(b=row["b"])
    with warnings.catch_warnings():  # its scipy optimiser warns on flat stretches
        warnings.simplefilter("ignore")
        return float(transformer_zoo.Composition()([m], [row["count"]]).get_approxDP(row["delta"]))


def _prv(row: dict[str, Any], eps_error: float) -> tuple[float, float, float]:
    """prv_accountant's (lower, estimate, upper) for one row, as benchmarks/bench_peers_checked.py asks it."""
    import prv_accountant as pa

    if row["kind"] == "sgd":
        prv = pa.PoissonSubsampledGaussianMechanism(noise_multiplier=row["sigma"], sampling_probability=row["q"])
    elif row["kind"] == "gauss":
        prv = pa.GaussianMechanism(noise_multiplier=row["sigma"])
    else:
        prv = pa.LaplaceMechanism(mu=1.0 / row["b"])
    acc = pa.PRVAccountant(
        prvs=[prv], eps_error=eps_error, delta_error=row["delta"] * 1e-3, max_self_compositions=[row["count"]]
    )
    lower, estimate, upper = acc.compute_epsilon(row["delta"], [row["count"]])
    return float(lower), float(estimate), float(upper)


def peers_checked(
    path: str | Path, *, bounds: Sequence[str], tight: str, slack: float = 1e-9, prv_max_count: int = 10
) -> PeersChecked:
    r"""Each peer's epsilon on the benchmark's grid against dpcore's certified bracket computed here.

    ``path`` is ``benchmarks/results/peers_checked.json`` (written by
    ``benchmarks/bench_peers_checked.py`` in the pinned peer venv). For every row
    the bracket :math:`[\ell, u]` of ``PldAccountant().epsilon_bracket(delta)``
    is computed here; autodp is re-run here on every row and prv_accountant on the
    Gaussian and Laplace rows of at most ``prv_max_count`` releases, which it
    answers in well under a second (both are pinned beside the book;
    dp_accounting cannot be). Evidence (deterministic): their
    answers here equal the committed ones (relative 1e-9: the file is what the
    pinned peers print); every peer named in
    ``bounds`` (an accountant that reports an upper bound) is at least
    :math:`\ell\,(1 - \mathrm{slack})` at every row where it answered (no
    under-report; ``slack`` absorbs floating point where both are exact); PRV's point
    estimate falls below :math:`\ell\,(1 - \mathrm{slack})` at some row (it is an
    estimate, not a bound). Controls (must fail): the peer ``tight`` is within 1 % of
    :math:`u` at every row; PRV's point estimate is an upper bound (at least
    :math:`u\,(1-\mathrm{slack})` at every row).
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = data["rows"]
    lower, upper, live, committed, prv_live, prv_committed = [], [], [], [], [], []
    for row in rows:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lo, hi = dpcore.PldAccountant().compose(_mechanism(row), row["count"]).epsilon_bracket(row["delta"])
        lower.append(lo)
        upper.append(hi)
        rec = row["peers"]["autodp_rdp"]
        if "eps" in rec:
            live.append(_autodp(row))
            committed.append(rec["eps"])
        rec = row["peers"]["prv"]
        if "eps" in rec and row["kind"] != "sgd" and row["count"] <= prv_max_count:
            prv_live.append(_prv(row, float(data["settings"]["prv_eps_error"])))
            prv_committed.append((rec["lower"], rec["eps"], rec["upper"]))
    if prv_max_count > 0 and not prv_live:
        raise ValueError(f"no PRV row of {path} with at most {prv_max_count} releases: nothing to re-run")
    lo_a, hi_a = np.array(lower), np.array(upper)
    values = {
        name: np.array([row["peers"][tool].get(key, np.nan) for row in rows], dtype=float)
        for (tool, key), name in PEERS.items()
    }

    def worst(name: str, ref: NDArray[np.float64]) -> float:
        v = values[name]
        ok = np.isfinite(v)
        return float(np.min(v[ok] / ref[ok] - 1.0))

    ev: list[Any] = [
        Compare(
            "autodp here vs committed: max relative difference",
            float(np.max(np.abs(np.array(live) / np.array(committed) - 1.0))),
            "<=",
            1e-9,
        )
    ]
    if prv_live:
        ev.append(
            Compare(
                f"PRV (lower, estimate, upper) here vs committed on {len(prv_live)} rows: max relative difference",
                float(np.max(np.abs(np.array(prv_live) / np.array(prv_committed) - 1.0))),
                "<=",
                1e-9,
            )
        )
    ev += [
        Compare(f"{name}: min over rows (value / lower end - 1)", worst(name, lo_a), ">=", -slack) for name in bounds
    ]
    ev.append(Compare("PRV estimate: min over rows (value / lower end - 1)", worst("PRV estimate", lo_a), "<", -slack))
    t = values[tight]
    controls = (
        Compare(
            f"{tight} tight: max over rows (value / upper end - 1)",
            float(np.nanmax(t / hi_a - 1.0)),
            "<=",
            0.01,
        ),
        Compare(
            "PRV estimate an upper bound: min over rows (value / upper end - 1)",
            worst("PRV estimate", hi_a),
            ">=",
            -slack,
        ),
    )
    return PeersChecked(
        evidence=tuple(ev),
        controls=controls,
        labels=tuple(r["label"] for r in rows),
        deltas=np.array([r["delta"] for r in rows], dtype=float),
        lower=lo_a,
        upper=hi_a,
        values=values,
        versions=dict(data["versions"]),
    )
