"""Composed calibration and epsilon over a run (issue 31): wall times on this machine, against the targets.

Targets (issue 31): DP-SGD calibration (q = 256/60000, T = 14062, delta = 1e-5) in under 0.5 s on 2 cores;
100 checkpoints of one run in at most twice the time of a single query. Each timing is the median of
``--repeats`` runs after one warm-up (imports, lazy scipy modules). Writes benchmarks/results/calibration_composed.md.

Side by side (the issue's 10x): the same DP-SGD calibrations done by bisection over dp_accounting's
``PLDAccountant`` (pinned in benchmarks/requirements-accounting.txt, run in its venv ``.venv-bench-accounting`` by
``_harness.peer_python``; ``--no-peers`` skips it). Its ``value_discretization_interval`` is the coarsest of
``DPA_INTERVALS`` whose epsilon at dpcore's calibrated sigma is at most dpcore's certified epsilon there (both are
upper bounds, so the smaller is the closer to the truth: equal or better accuracy); that search is not timed.
Then ONE end-to-end run of each calibration is timed: dpcore's ``calibrate_noise`` and the bisection (start at
sigma 1, double or halve until the target is bracketed, then geometric bisection until hi / lo <= 1 + rtol, the
same stopping rule as dpcore's ``noise_below >= noise (1 - rtol)``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _harness import ROOT, peer_python, write_result

sys.path.insert(0, str(ROOT))
import dpcore  # noqa: E402

Q, T, DELTA, RTOL = 256 / 60000, 14062, 1e-5, 1e-3
TARGETS = (1.0, 3.0, 8.0)
DPA_INTERVALS = (1e-4, 3e-5, 1e-5, 3e-6, 1e-6)  # coarse to fine
MEMORY_CAP = 4 * 2**30  # address space of the peer worker


def dpa_worker(job: dict) -> None:
    """In the peer venv: pick dp_accounting's interval per target, then time one bisection; print JSON."""
    import resource
    import warnings

    warnings.simplefilter("ignore")
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    import importlib.metadata as md

    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    def eps(sigma: float, interval: float) -> float:
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=interval)
        acc.compose(dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(sigma)), T)
        return float(acc.get_epsilon(DELTA))

    out = {"version": md.version("dp-accounting"), "rows": []}
    for target, sigma, ours in job["cases"]:
        row: dict = {"target": target, "ladder": []}
        chosen = None
        for h in DPA_INTERVALS:
            try:
                e = eps(sigma, h)
            except MemoryError:
                row["ladder"].append([h, "MemoryError"])
                break
            row["ladder"].append([h, e])
            if e <= ours:
                chosen = h
                break
        row["interval"] = chosen
        if chosen is not None:
            t0 = time.perf_counter()
            probes = 0

            def f(s: float, h: float = chosen) -> float:
                nonlocal probes
                probes += 1
                return eps(s, h)

            lo = hi = 1.0
            if f(1.0) <= target:
                while True:
                    lo /= 2
                    if f(lo) > target:
                        break
                    hi = lo
            else:
                while True:
                    hi *= 2
                    if f(hi) <= target:
                        break
                    lo = hi
            e_hi = None
            while hi / lo > 1 + RTOL:
                mid = (lo * hi) ** 0.5
                e_mid = f(mid)
                if e_mid <= target:
                    hi, e_hi = mid, e_mid
                else:
                    lo = mid
            row.update(
                sigma=hi,
                epsilon=e_hi if e_hi is not None else eps(hi, chosen),
                probes=probes,
                time=time.perf_counter() - t0,
            )
        out["rows"].append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print(json.dumps(out), flush=True)


def dpcore_state() -> str:
    """Which dpcore was timed: the checkout's commit, and whether dpcore/ had uncommitted changes."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    dirty = bool(git("status", "--porcelain", "--", "dpcore"))
    return f"dpcore at commit {git('rev-parse', '--short', 'HEAD')}" + (
        " with uncommitted changes in dpcore/" if dirty else " (dpcore/ clean)"
    )


def side_by_side() -> list[str]:
    """dpcore.calibrate_noise and a bisection over dp_accounting's PLD, one timed run each per target."""
    dpcore.calibrate_noise("subsampled-gaussian", epsilon=2.0, delta=DELTA, count=10, sampling_rate=0.1)  # warm-up
    ours = []
    for target in TARGETS:
        t0 = time.perf_counter()
        cal = dpcore.calibrate_noise("subsampled-gaussian", epsilon=target, delta=DELTA, count=T, sampling_rate=Q)
        ours.append((cal, time.perf_counter() - t0))
    job = {"cases": [[target, cal.noise, cal.epsilon] for target, (cal, _) in zip(TARGETS, ours, strict=True)]}
    python = peer_python("requirements-accounting.txt")
    t_peer = time.perf_counter()
    proc = subprocess.run(
        [str(python), __file__, "--dpa-worker"], input=json.dumps(job), capture_output=True, text=True, cwd=ROOT
    )
    t_peer = time.perf_counter() - t_peer
    if proc.returncode != 0:
        return ["", f"Bisection over dp_accounting's PLD failed: {proc.stderr.strip().splitlines()[-1:]}", ""]
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    lines = [
        "",
        "## Against a bisection over dp_accounting's PLD",
        "",
        f"DP-SGD, q = 256/60000, T = {T}, delta = {DELTA:g}, relative tolerance {RTOL:g}; one end-to-end run each "
        f"(load average {os.getloadavg()[0]:.1f} at the end). dpcore: `calibrate_noise` (default relative_width "
        f"1e-3), after one untimed warm-up on another setting. dp_accounting {theirs['version']}: bisection over "
        "`PLDAccountant(value_discretization_interval=h).compose(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), "
        "T).get_epsilon(delta)` (start at sigma 1, double or halve to bracket, geometric bisection to hi/lo <= 1 + "
        "rtol), at the coarsest h of "
        + ", ".join(f"{h:g}" for h in DPA_INTERVALS)
        + " whose epsilon at dpcore's sigma is at most dpcore's certified epsilon there (equal or better accuracy; "
        "the ladder column shows each h tried: its epsilon at dpcore's sigma). Whole peer process "
        f"{t_peer:.0f} s (venv check, imports, ladder and bisections).",
        "",
        "| target epsilon | dpcore sigma | its certified epsilon | dpcore time (s) | dpcore probes | ladder: h -> "
        "dp_accounting epsilon at dpcore's sigma | h used | dp_accounting sigma | its epsilon | probes | "
        "bisection time (s) | speed-up |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (cal, t_ours), row in zip(ours, theirs["rows"], strict=True):
        ladder = "; ".join(f"{h:g} -> {e:.7g}" if isinstance(e, float) else f"{h:g} -> {e}" for h, e in row["ladder"])
        if row["interval"] is None:
            lines.append(
                f"| {row['target']:g} | {cal.noise:.6g} | {cal.epsilon:.7g} | {t_ours:.3f} | {cal.probes} | {ladder} "
                "| none reached dpcore's accuracy | — | — | — | — | — |"
            )
            continue
        lines.append(
            f"| {row['target']:g} | {cal.noise:.6g} | {cal.epsilon:.7g} | {t_ours:.3f} | {cal.probes} | {ladder} | "
            f"{row['interval']:g} | {row['sigma']:.6g} | {row['epsilon']:.7g} | {row['probes']} | "
            f"{row['time']:.2f} | {row['time'] / t_ours:.0f}x |"
        )
    lines.append("")
    return lines


def _median_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    out = fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-peers", action="store_true", help="skip the bisection over dp_accounting's PLD")
    args = parser.parse_args()
    q, T, delta = Q, globals()["T"], DELTA
    side = [] if args.no_peers else side_by_side()
    lines = [
        "# Composed calibration and epsilon over a run",
        "",
        f"`python benchmarks/bench_calibration.py` on {os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f} at "
        f"the start: another job was running); median of {args.repeats} runs after a "
        "warm-up. Calibration: `dpcore.calibrate_noise` at rtol 1e-3 (sigma certified to meet epsilon; sigma_below "
        ">= sigma (1 - 1e-3) certified to exceed it). Target: DP-SGD (q = 256/60000, T = 14062, delta = 1e-5) "
        f"under 0.5 s. {dpcore_state()}.",
        "",
        "| mechanism | count | target epsilon | noise | certified epsilon | noise_below / noise | probes | time (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    cases: list[tuple[str, dict[str, Any]]] = [
        ("subsampled-gaussian", {"epsilon": e, "delta": delta, "count": T, "sampling_rate": q}) for e in (1.0, 3.0, 8.0)
    ]
    cases += [("gaussian", {"epsilon": 1.0, "delta": delta, "count": 1000})]
    cases += [("laplace", {"epsilon": 1.0, "delta": 1e-6, "count": k}) for k in (10, 1000)]
    for family, kw in cases:
        t, cal = _median_time(lambda f=family, k=kw: dpcore.calibrate_noise(f, **k), args.repeats)
        lines.append(
            f"| {family} | {kw['count']} | {kw['epsilon']:g} | {cal.noise:.6g} | {cal.epsilon:.6g} ({cal.method}) | "
            f"{cal.noise_below / cal.noise:.5f} | {cal.probes} | {t:.3f} |"
        )
    sgd = dpcore.SubsampledGaussianMechanism(sigma=1.1, sampling_rate=q)
    single, br = _median_time(
        lambda: dpcore.PldAccountant().compose(sgd, T).epsilon_bracket_details(delta), args.repeats
    )
    steps = np.unique(np.linspace(T / 100, T, 100).round().astype(int))
    many, run = _median_time(lambda: dpcore.epsilon_over_run(sgd, steps, delta), args.repeats)
    lines += [
        "",
        f"Epsilon over a run: sigma 1.1, q = 256/60000, delta 1e-5; {steps.size} checkpoints (every 1 % of T = {T}) "
        "by `dpcore.epsilon_over_run` (one discretisation, composed k times for each checkpoint) against one "
        "`PldAccountant.epsilon_bracket_details` at T. Target: at most twice the single query.",
        "",
        "| what | time (s) | ratio to the single query | result |",
        "|---|---|---|---|",
        f"| single query at T | {single:.3f} | 1 | [{br.lower:.6g}, {br.upper:.6g}] |",
        f"| {steps.size} checkpoints | {many:.3f} | {many / single:.1f} | at T [{run.epsilon_lower[-1]:.6g}, "
        f"{run.epsilon[-1]:.6g}]; {run.refined} refined on their own grid |",
        "",
    ]
    write_result("calibration_composed", lines + side)


if __name__ == "__main__":
    if sys.argv[1:] == ["--dpa-worker"]:
        dpa_worker(json.loads(sys.stdin.read()))
    else:
        main()
