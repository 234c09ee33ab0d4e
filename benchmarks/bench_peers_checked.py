"""The peers' accountants checked against dpcore's certified bracket (issue 31, item 3).

One command, from the repository root:

    python3 tasks.py bench peers-checked      # or: .venv/bin/python benchmarks/bench_peers_checked.py

On a grid of Gaussian, Laplace and DP-SGD (Poisson-subsampled Gaussian) compositions, at delta 1e-5 and 1e-10,
each peer's epsilon -- dp_accounting's RDP and PLD accountants, autodp's RDP, prv_accountant's [lower, estimate,
upper] -- is set beside dpcore's certified bracket [lower, upper] (``PldAccountant().epsilon_bracket``): a peer
above the upper end is loose (by how much, relative), one below the lower end under-reports (a privacy bug for an
accountant that claims an upper bound). The peers run in the pinned venv ``.venv-bench-accounting``
(``benchmarks/requirements-accounting.txt``, see ``_harness.peer_python``), one worker process per tool, each row
stopped after ``LIMIT`` seconds and each worker capped at ``MEMORY_CAP`` of address space (PRV's and
dp_accounting's PLD grids can blow up). Writes ``benchmarks/results/peers_checked.md`` (the table) and
``benchmarks/results/peers_checked.json`` (the peers' numbers, which chapter 07 reads and checks against a
bracket it computes itself; dp_accounting 0.6.0 needs attrs < 24 and cannot join the book's venv).
"""

from __future__ import annotations

import json
import os
import platform
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import RESULTS, ROOT, peer_python, write_result  # noqa: E402

LIMIT = 120.0  # seconds for one row of one tool
SLACK = 60.0  # extra wait for a worker's imports before its first row
MEMORY_CAP = 4 * 2**30  # address space of one worker (the machine is shared: keep the whole run under ~6 GiB)
DPA_PLD_INTERVAL = 1e-4  # dp_accounting's default value_discretization_interval (0.6.0)
PRV_EPS_ERROR = 1e-3
PRV_DELTA_ERROR_FRACTION = 1e-3  # delta_error = delta / 1000, prv_accountant's own DP-SGD helper's choice
DELTAS = (1e-5, 1e-10)
TOOLS = ("dpa_rdp", "dpa_pld", "autodp_rdp", "prv")


def _rows() -> list[dict]:
    base: list[dict] = []
    for s, q, lq, t in ((1.1, 256 / 60000, "256/60000", 14062), (0.8, 0.01, "0.01", 1000), (0.6, 0.05, "0.05", 200)):
        base.append({"kind": "sgd", "sigma": s, "q": q, "count": t, "label": f"DP-SGD σ={s:g}, q={lq}, T={t}"})
    for s in (0.5, 1.0, 2.0, 5.0):
        for k in (1, 10, 100):
            base.append({"kind": "gauss", "sigma": s, "count": k, "label": f"Gaussian σ={s:g}, k={k}"})
    for b in (1.0, 10.0):
        for k in (1, 10, 100):
            base.append({"kind": "laplace", "b": b, "count": k, "label": f"Laplace b={b:g}, k={k}"})
    rows = []
    for d in DELTAS:
        for r in base:
            params = "|".join(str(r[key]) for key in ("kind", "sigma", "q", "b", "count") if key in r)
            rows.append({**r, "delta": d, "id": f"{params}|{d:g}"})
    return rows


ROWS = _rows()


# ----------------------------------------------------------------------------- workers (peer venv)


def _runner(tool: str):  # noqa: ANN202 - returns (run(row) -> dict, notes)
    import importlib.metadata as md

    notes: dict = {}
    if tool.startswith("dpa"):
        from dp_accounting import dp_event
        from dp_accounting.pld import pld_privacy_accountant
        from dp_accounting.rdp import rdp_privacy_accountant

        notes["version"] = md.version("dp-accounting")

        def event(row: dict):  # noqa: ANN202
            if row["kind"] == "sgd":
                return dp_event.PoissonSampledDpEvent(row["q"], dp_event.GaussianDpEvent(row["sigma"]))
            if row["kind"] == "gauss":
                return dp_event.GaussianDpEvent(row["sigma"])
            return dp_event.LaplaceDpEvent(row["b"])

        if tool == "dpa_rdp":

            def run(row: dict) -> dict:
                acc = rdp_privacy_accountant.RdpAccountant()
                acc.compose(event(row), row["count"])
                return {"eps": float(acc.get_epsilon(row["delta"]))}

        else:

            def run(row: dict) -> dict:
                acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=DPA_PLD_INTERVAL)
                acc.compose(event(row), row["count"])
                return {"eps": float(acc.get_epsilon(row["delta"]))}

        return run, notes
    if tool == "autodp_rdp":
        from autodp import mechanism_zoo, transformer_zoo

        notes["version"] = md.version("autodp")

        def run(row: dict) -> dict:
            if row["kind"] == "sgd":
                base = mechanism_zoo.GaussianMechanism(sigma=row["sigma"])
                m = transformer_zoo.AmplificationBySampling(PoissonSampling=True)(
                    base, row["q"], improved_bound_flag=True
                )
            elif row["kind"] == "gauss":
                m = mechanism_zoo.GaussianMechanism(sigma=row["sigma"])
            else:
                m = mechanism_zoo.LaplaceMechanism(b=row["b"])
            composed = transformer_zoo.Composition()([m], [row["count"]])
            return {"eps": float(composed.get_approxDP(row["delta"]))}

        return run, notes
    if tool == "prv":
        import prv_accountant as pa

        notes["version"] = md.version("prv-accountant")

        def run(row: dict) -> dict:
            if row["kind"] == "sgd":
                prv = pa.PoissonSubsampledGaussianMechanism(
                    noise_multiplier=row["sigma"], sampling_probability=row["q"]
                )
            elif row["kind"] == "gauss":
                prv = pa.GaussianMechanism(noise_multiplier=row["sigma"])
            else:
                prv = pa.LaplaceMechanism(mu=1.0 / row["b"])
            acc = pa.PRVAccountant(
                prvs=[prv],
                eps_error=PRV_EPS_ERROR,
                delta_error=row["delta"] * PRV_DELTA_ERROR_FRACTION,
                max_self_compositions=[row["count"]],
            )
            lower, estimate, upper = acc.compute_epsilon(row["delta"], [row["count"]])
            return {"eps": float(estimate), "lower": float(lower), "upper": float(upper)}

        return run, notes
    raise ValueError(f"unknown tool {tool}")


def worker(tool: str, rows: list[dict]) -> None:
    """Run ``rows`` with ``tool``; one JSON line per row after a first line of notes."""
    import resource
    import warnings

    warnings.simplefilter("ignore")
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    run, notes = _runner(tool)
    print(json.dumps({"notes": notes}), flush=True)
    for row in rows:
        rec: dict = {"id": row["id"]}
        t0 = time.perf_counter()
        try:
            rec.update(run(row))
        except MemoryError:
            rec["error"] = f"MemoryError (worker capped at {MEMORY_CAP / 2**30:.0f} GiB)"
        except Exception as exc:  # a peer's refusal is a result too
            rec["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
        rec["time"] = time.perf_counter() - t0
        print(json.dumps(rec), flush=True)


def run_tool(python: Path, tool: str, rows: list[dict]) -> tuple[dict, dict]:
    """Run ``tool`` over ``rows`` in worker processes; a row over LIMIT seconds is stopped and recorded."""
    results: dict = {}
    notes: dict = {}
    todo = list(rows)
    while todo:
        proc = subprocess.Popen(
            [str(python), __file__, "--worker", tool],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
        )
        lines: queue.Queue = queue.Queue()

        def pump(out=proc.stdout, lines=lines) -> None:  # noqa: ANN001
            for line in out:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        proc.stdin.write(json.dumps(todo))
        proc.stdin.close()
        started = False
        while todo:
            try:
                line = lines.get(timeout=LIMIT + (0 if started else SLACK))
            except queue.Empty:
                proc.kill()
                proc.wait()
                results[todo.pop(0)["id"]] = {"error": f"too slow: > {LIMIT:.0f} s (stopped)", "time": None}
                break
            if line is None:
                proc.wait()
                results[todo.pop(0)["id"]] = {"error": f"worker died (exit {proc.returncode})", "time": None}
                break
            rec = json.loads(line)
            if "notes" in rec:
                notes, started = rec["notes"], True
                continue
            results[rec["id"]] = rec
            todo = [r for r in todo if r["id"] != rec["id"]]
            shown = rec.get("error") or f"eps {rec['eps']:.6g}"
            print(f"  {tool}: {rec['id']}: {shown} in {rec['time']:.3g} s", flush=True)
        else:
            proc.wait()
    return results, notes


# ----------------------------------------------------------------------------- driver (book venv)


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from bench_calibration import dpcore_state

    import dpcore

    wall0 = time.perf_counter()
    load = os.getloadavg()
    ours: dict[str, dict] = {}
    for row in ROWS:
        if row["kind"] == "sgd":
            mech = dpcore.SubsampledGaussianMechanism(sigma=row["sigma"], sampling_rate=row["q"])
        elif row["kind"] == "gauss":
            mech = dpcore.GaussianMechanism(sigma=row["sigma"])
        else:
            mech = dpcore.LaplaceMechanism(scale=row["b"])
        lo, hi = dpcore.PldAccountant().compose(mech, row["count"]).epsilon_bracket(row["delta"])
        ours[row["id"]] = {"lower": float(lo), "upper": float(hi)}
    python = peer_python("requirements-accounting.txt")
    res: dict[str, dict] = {}
    notes: dict[str, dict] = {}
    for tool in TOOLS:
        print(f"running {tool} ...", flush=True)
        res[tool], notes[tool] = run_tool(python, tool, ROWS)
    versions = {t: notes[t].get("version", "?") for t in TOOLS}
    data = {
        "what": "peers' epsilons on the grid of benchmarks/bench_peers_checked.py (issue 31)",
        "versions": {
            "dp_accounting": versions["dpa_rdp"],
            "autodp": versions["autodp_rdp"],
            "prv_accountant": versions["prv"],
        },
        "settings": {
            "dpa_pld_value_discretization_interval": DPA_PLD_INTERVAL,
            "prv_eps_error": PRV_EPS_ERROR,
            "prv_delta_error": "delta * 1e-3",
        },
        "rows": [
            {**row, "peers": {t: res[t].get(row["id"], {"error": "not run"}) for t in TOOLS}, "dpcore": ours[row["id"]]}
            for row in ROWS
        ],
    }
    (RESULTS / "peers_checked.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

    def cell(rec: dict, key: str = "eps") -> str:
        return rec.get("error") or f"{rec[key]:.6g}"

    def verdict(value: float, br: dict) -> str:
        if value < br["lower"]:
            return f"**below lower end by {value / br['lower'] - 1:+.2e}**"
        if value <= br["upper"]:
            return "in bracket"
        return f"+{value / br['upper'] - 1:.2e}"

    lines = [
        "# The peers' accountants against dpcore's certified bracket",
        "",
        "Written by `benchmarks/bench_peers_checked.py`. Machine: "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; load average at the "
        f"start {load[0]:.2f}; {dpcore_state()}. Peers pinned in benchmarks/requirements-accounting.txt: dp_accounting "
        f"{versions['dpa_rdp']}, autodp {versions['autodp_rdp']}, prv_accountant {versions['prv']}. "
        f"dp_accounting: `RdpAccountant()` (its default orders), `PLDAccountant(value_discretization_interval="
        f"{DPA_PLD_INTERVAL:g})` (its default). autodp: `Composition()` of `GaussianMechanism`, `LaplaceMechanism` "
        "or `AmplificationBySampling(PoissonSampling=True)` (improved bound) of the Gaussian, `get_approxDP`. PRV: "
        f"`PRVAccountant(eps_error={PRV_EPS_ERROR:g}, delta_error=delta/1000)`, `compute_epsilon` -> [lower, "
        "estimate, upper]. dpcore: `PldAccountant().epsilon_bracket(delta)` (certified). Each peer cell: its "
        "epsilon, then its relative excess over dpcore's upper end (`+x`), `in bracket`, or **below lower end** "
        f"(under-reports). Rows stopped after {LIMIT:.0f} s; workers capped at {MEMORY_CAP / 2**30:.0f} GiB.",
        "",
        "| row | delta | dpcore [lower, upper] | dp_accounting RDP | dp_accounting PLD | autodp RDP "
        "| PRV upper | PRV estimate |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in data["rows"]:
        br, p = row["dpcore"], row["peers"]
        cells = []
        for tool, key in (
            ("dpa_rdp", "eps"),
            ("dpa_pld", "eps"),
            ("autodp_rdp", "eps"),
            ("prv", "upper"),
            ("prv", "eps"),
        ):
            rec = p[tool]
            cells.append(cell(rec, key) + ("" if "error" in rec else f" ({verdict(rec[key], br)})"))
        lines.append(
            f"| {row['label']} | {row['delta']:g} | [{br['lower']:.6g}, {br['upper']:.6g}] | "
            + " | ".join(cells)
            + " |"
        )
    times = {t: sum(r.get("time") or 0.0 for r in res[t].values()) for t in TOOLS}
    lines += [
        "",
        "Wall time per tool over all rows: " + ", ".join(f"{t} {v:.0f} s" for t, v in times.items()) + "; "
        f"whole run {time.perf_counter() - wall0:.0f} s.",
        "",
    ]
    write_result("peers_checked", lines)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2], json.loads(sys.stdin.read()))
    else:
        main()
