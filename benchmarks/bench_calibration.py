"""Composed calibration and epsilon over a run (issue 31): wall times on this machine, against the targets.

Targets (issue 31): DP-SGD calibration (q = 256/60000, T = 14062, delta = 1e-5) in under 0.5 s on 2 cores;
100 checkpoints of one run in at most twice the time of a single query. Each timing is the median of
``--repeats`` runs after one warm-up (imports, lazy scipy modules). Writes benchmarks/results/calibration_composed.md.
The comparison with a bisection over dp_accounting's PLD (the issue's 10x) is not measured here.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _harness import write_result

import dpcore


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
    args = parser.parse_args()
    q, T, delta = 256 / 60000, 14062, 1e-5
    lines = [
        "# Composed calibration and epsilon over a run",
        "",
        f"`python benchmarks/bench_calibration.py` on {os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f} at "
        f"the start: another job was running); median of {args.repeats} runs after a "
        "warm-up. Calibration: `dpcore.calibrate_noise` at rtol 1e-3 (sigma certified to meet epsilon; sigma_below "
        ">= sigma (1 - 1e-3) certified to exceed it). Target: DP-SGD (q = 256/60000, T = 14062, delta = 1e-5) "
        "under 0.5 s.",
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
    write_result("calibration_composed", lines)


if __name__ == "__main__":
    main()
