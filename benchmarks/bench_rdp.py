"""Benchmark dpcore.rdp against Google's dp_accounting (RDP accountant, exact Gaussian, one PLD point).

One command, from the repository root:

    python3 tasks.py bench rdp

It creates .venv-bench-rdp in the checkout (once; ``benchmarks/_harness.py``) with the pinned packages of
benchmarks/requirements-rdp.txt, runs the dp_accounting side there in a
subprocess (``--worker``; dp_accounting is not a dpcore dependency), runs the
dpcore side in this interpreter, computes the exact reference epsilons with
mpmath (50 digits, bisection on the Balle & Wang privacy profile), and writes
benchmarks/results/rdp.md.

Timings are the best of 7 repeats of the mean over many calls
(``timeit``), on whatever machine runs the script.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import ROOT, peer_python, write_result  # noqa: E402

DELTA = 1e-5
SETTINGS = [(sigma, k) for sigma in (1.0, 5.0) for k in (1, 10, 100, 1000)] + [(0.5, 1000), (20.0, 100)]
PLD_POINT = (5.0, 1)  # one small PLD point (their PLD takes ~2 min at sigma = 0.5, k = 1000: skipped)


def best_time(fn, number: int, repeat: int = 7) -> float:
    """Best over ``repeat`` runs of the mean time of ``number`` calls, in seconds."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


# ----------------------------------------------------------------------------- worker (bench venv)


def worker(payload: dict) -> dict:
    import numpy as np
    from dp_accounting import dp_event
    from dp_accounting.gaussian_mechanism import get_epsilon_gaussian
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant

    out: dict = {"rdp": {}, "exact": {}, "pld": None, "version": None}
    import importlib.metadata as md

    out["version"] = md.version("dp-accounting")
    delta = payload["delta"]
    for grid_name, orders in payload["grids"].items():
        for sigma, k in payload["settings"]:
            acc = rdp_privacy_accountant.RdpAccountant(orders=list(orders))
            acc.compose(dp_event.GaussianDpEvent(noise_multiplier=sigma), count=k)
            eps, order = acc.get_epsilon_and_optimal_order(delta)
            t = best_time(lambda acc=acc: acc.get_epsilon(delta), number=50)
            out["rdp"][f"{grid_name}|{sigma}|{k}"] = {"eps": float(eps), "order": float(order), "time": t}
    for sigma, k in payload["settings"]:
        s_eff = sigma / math.sqrt(k)
        eps = get_epsilon_gaussian(s_eff, delta)
        t = best_time(lambda s_eff=s_eff: get_epsilon_gaussian(s_eff, delta), number=20)
        out["exact"][f"{sigma}|{k}"] = {"eps": float(eps), "time": t}
    sigma, k = payload["pld_point"]

    def pld_eps() -> float:
        acc = pld_privacy_accountant.PLDAccountant()
        acc.compose(dp_event.GaussianDpEvent(noise_multiplier=sigma), count=k)
        return float(acc.get_epsilon(delta))

    eps = pld_eps()
    t = best_time(pld_eps, number=1, repeat=3)
    out["pld"] = {"sigma": sigma, "k": k, "eps": eps, "time": t}
    del np
    return out


# ----------------------------------------------------------------------------- driver


def mp_exact_epsilon(mu: float, delta: float) -> float:
    """Exact epsilon of a Gaussian mechanism with mu = sensitivity / sigma (dpbook.reference, 50 digits)."""
    sys.path.insert(0, str(ROOT))
    from dpbook import reference

    return float(reference.gaussian_epsilon(1.0, delta, mu))


def main() -> None:
    sys.path.insert(0, str(ROOT))
    import numpy as np

    import dpcore
    from dpcore.gaussian import exact_gaussian_composition_epsilon
    from dpcore.rdp import DEFAULT_RDP_ORDERS, RdpAccountant

    their_default = [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]
    grids = {
        "dpcore default (256 orders)": DEFAULT_RDP_ORDERS.tolist(),
        "dp_accounting-style (156 orders)": their_default,
    }
    payload = {"delta": DELTA, "settings": SETTINGS, "grids": grids, "pld_point": PLD_POINT}

    python = peer_python("requirements-rdp.txt")
    print("running dp_accounting side ...", flush=True)
    proc = subprocess.run(
        [str(python), __file__, "--worker"], input=json.dumps(payload), capture_output=True, text=True, check=True
    )
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])

    print("running dpcore side ...", flush=True)
    exact = {(s, k): mp_exact_epsilon(math.sqrt(k) / s, DELTA) for s, k in SETTINGS}
    rows_rdp, rows_exact = [], []
    ok_rdp = ok_speed = ok_exact = ok_exact_speed = True
    for grid_name, orders in grids.items():
        for sigma, k in SETTINGS:
            acc = RdpAccountant(orders=orders)
            acc.compose_gaussian(sigma, count=k)
            eps, order = acc.epsilon_and_order(DELTA)
            t = best_time(lambda acc=acc: acc.epsilon(DELTA), number=2000)
            th = theirs["rdp"][f"{grid_name}|{sigma}|{k}"]
            ex = exact[(sigma, k)]
            not_looser = eps <= th["eps"] + 1e-9
            valid = eps >= ex and float(dpcore.gaussian_delta(sigma, math.sqrt(k), eps)) <= DELTA
            ok_rdp &= not_looser and valid
            ok_speed &= th["time"] / t >= 10
            rows_rdp.append(
                f"| {grid_name} | {sigma:g} | {k} | {ex:.6g} | {eps:.10g} | {th['eps']:.10g} | "
                f"{eps - th['eps']:+.1e} | {100 * (eps / ex - 1):.2f} % | {100 * (th['eps'] / ex - 1):.2f} % | "
                f"{t * 1e6:.1f} | {th['time'] * 1e6:.1f} | {th['time'] / t:.0f}x | "
                f"{'yes' if not_looser and valid else 'NO'} |"
            )
    for sigma, k in SETTINGS:
        ex = exact[(sigma, k)]
        ours = exact_gaussian_composition_epsilon(sigma, k, DELTA)
        t = best_time(lambda sigma=sigma, k=k: exact_gaussian_composition_epsilon(sigma, k, DELTA), number=200)
        th = theirs["exact"][f"{sigma}|{k}"]
        rel_ours, rel_theirs = abs(ours / ex - 1), abs(th["eps"] / ex - 1)
        ok_exact &= rel_ours <= 1e-9
        ok_exact_speed &= th["time"] / t >= 10
        rows_exact.append(
            f"| {sigma:g} | {k} | {ex:.12g} | {rel_ours:.1e} | {rel_theirs:.1e} | "
            f"{t * 1e6:.1f} | {th['time'] * 1e6:.1f} | {th['time'] / t:.0f}x |"
        )
    pld = theirs["pld"]
    pld_ex = (
        exact[tuple(PLD_POINT)]
        if tuple(PLD_POINT) in exact
        else mp_exact_epsilon(PLD_POINT[1] ** 0.5 / PLD_POINT[0], DELTA)
    )
    t_ours_pld = best_time(lambda: exact_gaussian_composition_epsilon(PLD_POINT[0], PLD_POINT[1], DELTA), number=200)

    lines = [
        "# Rényi DP accountant: dpcore vs dp_accounting",
        "",
        "Written by `benchmarks/bench_rdp.py` (one command: `.venv/bin/python benchmarks/bench_rdp.py`).",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"numpy {np.__version__}; dp_accounting {theirs['version']} (pinned in benchmarks/requirements-rdp.txt).",
        f"Gaussian mechanisms, sensitivity 1, composed k times; delta = {DELTA:g}. 'exact' is the 50-digit mpmath",
        "root of the Balle & Wang privacy profile with mu = sqrt(k)/sigma. Times are per epsilon query, best of 7",
        "repeats of the mean over many calls, in microseconds.",
        "",
        "## RDP accountant, equal orders",
        "",
        "Goals: ours <= theirs + 1e-9 and ours >= exact (checked also as gaussian_delta(ours) <= delta); "
        "query >= 10x faster.",
        "",
        "| orders | sigma | k | exact eps | dpcore eps | dp_accounting eps | ours - theirs | dpcore over exact | "
        "dp_accounting over exact | dpcore us | dp_accounting us | speed-up | goal met |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows_rdp,
        "",
        f"All RDP accuracy goals met: **{ok_rdp}**; all >= 10x faster: **{ok_speed}**.",
        "",
        "## Exact Gaussian composition",
        "",
        "dpcore `exact_gaussian_composition_epsilon` (through `dpcore.gaussian_epsilon`) vs dp_accounting "
        "`get_epsilon_gaussian(sigma / sqrt(k), delta)`. Goals: 1e-9 relative, >= 10x faster.",
        "",
        "| sigma | k | exact eps | dpcore rel. error | dp_accounting rel. error | dpcore us | dp_accounting us "
        "| speed-up |",
        "|---|---|---|---|---|---|---|---|",
        *rows_exact,
        "",
        f"All within 1e-9: **{ok_exact}**; all >= 10x faster: **{ok_exact_speed}**.",
        "",
        "## One PLD point",
        "",
        f"dp_accounting `PLDAccountant` (default discretisation), sigma = {pld['sigma']:g}, k = {pld['k']}: "
        f"eps = {pld['eps']:.10g} (exact {pld_ex:.10g}, rel. error {abs(pld['eps'] / pld_ex - 1):.1e}) in "
        f"{pld['time'] * 1e3:.1f} ms per accountant; dpcore exact route {t_ours_pld * 1e6:.1f} us. "
        "The PLD accountant at sigma = 0.5, k = 1000 (about 2 minutes) is not run.",
        "",
    ]
    write_result("rdp", lines)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        print(json.dumps(worker(json.loads(sys.stdin.read()))))
    else:
        main()
