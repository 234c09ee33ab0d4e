#!/usr/bin/env python3
"""Analytic Gaussian calibration: exactness and speed of dpcore against what a user would otherwise pick.

One command, from the repository root (any Python >= 3.11)::

    python3 tasks.py bench gaussian

On first use it creates the benchmark venv ``.venv-bench-gaussian`` in the
checkout (override with ``BENCH_VENV=/path``; see ``benchmarks/_harness.py``), installs
``benchmarks/requirements-gaussian.txt`` into it (pinned dp-accounting,
autodp, diffprivlib 0.6.6 with scikit-learn < 1.6, mpmath, sympy) and
re-executes itself there; dpcore is imported from this checkout.

What it measures, on an 80-point grid (10 epsilons log-spaced over
[1e-3, 100] x 8 deltas log-spaced over [1e-300, 0.5]) with sensitivity 1:

* the truth: the analytic sigma solved at 50 significant digits with mpmath
  (Balle & Wang 2018, Theorem 8, in the chi form of Bao et al. 2021);
* per implementation: mean wall time per call over the grid (best of a few
  repeats), worst relative error of sigma against the truth, and the number
  of grid points at which the returned sigma *violates* the target, i.e. its
  true delta (at 50 digits) exceeds the requested delta, or no usable sigma
  (NaN, non-positive, an exception) comes back.

Writes ``benchmarks/results/gaussian.md``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import ROOT as REPO  # noqa: E402
from _harness import peer_python, write_result  # noqa: E402


def _bootstrap() -> None:
    """Re-run this script inside the venv of requirements-gaussian.txt (created on first use)."""
    py = peer_python("requirements-gaussian.txt")
    if Path(sys.prefix).resolve() != py.parent.parent.resolve():
        os.execv(str(py), [str(py), str(Path(__file__).resolve()), *sys.argv[1:]])


if __name__ == "__main__":
    _bootstrap()

# ----------------------------------------------------------------------------- inside the venv
import math  # noqa: E402
import platform  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from importlib import metadata  # noqa: E402

sys.path.insert(0, str(REPO))

import mpmath as mp  # noqa: E402
import numpy as np  # noqa: E402

import dpcore  # noqa: E402
from dpbook import reference as mpref  # noqa: E402

DPS = mpref.DPS  # the truth: dpbook.reference (50-digit profile, root of the chi equation)
EPS = np.geomspace(1e-3, 100.0, 10)
DELTA = np.geomspace(1e-300, 0.5, 8)
GRID = [(float(e), float(d)) for e in EPS for d in DELTA]


# ----------------------------------------------------------------------------- the truth
# ----------------------------------------------------------------------------- contenders
def seed_recipe(epsilon: float, delta: float, *, fixed: bool) -> float:
    """Seed 002's code (dpbook.flawed.seed_002_sigma: verbatim but for the NumPy >= 2.4 fix), sensitivity 1."""
    from dpbook.flawed import seed_002_sigma

    return float(seed_002_sigma(epsilon, delta, 1.0, fixed=fixed))


def make_contenders():
    from autodp.calibrator_zoo import ana_gaussian_calibrator
    from diffprivlib.mechanisms import GaussianAnalytic
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian

    autodp_cal = ana_gaussian_calibrator()
    return {
        f"dp_accounting {metadata.version('dp-accounting')} `get_sigma_gaussian`": lambda e, d: get_sigma_gaussian(
            e, d
        ),
        f"autodp {metadata.version('autodp')} `ana_gaussian_calibrator`": lambda e, d: autodp_cal.param_from_eps_delta(
            lambda sigma: sigma, e, d
        ),
        f"diffprivlib {metadata.version('diffprivlib')} `GaussianAnalytic`": lambda e, d: (
            GaussianAnalytic(epsilon=e, delta=d, sensitivity=1.0)._scale
        ),
        "seed 002 recipe as coded (`fsolve` over `quad`, `sqrt(x**2 + 1)`)": lambda e, d: seed_recipe(
            e, d, fixed=False
        ),
        "seed 002 recipe, epsilon bug fixed (`sqrt(x**2 + epsilon)`)": lambda e, d: seed_recipe(e, d, fixed=True),
        "**dpcore `analytic_gaussian_sigma`** (scalar)": lambda e, d: dpcore.analytic_gaussian_sigma(1.0, e, d),
    }


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # pragma: no cover - only on a hang
    raise _Timeout


def run_scalar(fn, repeats: int) -> tuple[list[float | None], float]:
    """Call fn on every grid point; return outputs and the best mean time per call."""
    outs: list[float | None] = []
    signal.signal(signal.SIGALRM, _alarm)
    for e, d in GRID:
        signal.alarm(20)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outs.append(float(fn(e, d)))
        except Exception:  # noqa: BLE001 - any failure is a failure to calibrate
            outs.append(None)
        finally:
            signal.alarm(0)
    best = math.inf
    ok_points = [(e, d) for (e, d), o in zip(GRID, outs, strict=True) if o is not None]
    for _ in range(repeats):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e, d in ok_points:
                fn(e, d)
        best = min(best, (time.perf_counter() - t0) / max(len(ok_points), 1))
    return outs, best


def run_vectorised(repeats: int) -> tuple[list[float], float]:
    E = np.array([e for e, _ in GRID])
    D = np.array([d for _, d in GRID])
    out = dpcore.analytic_gaussian_sigma_many(1.0, E, D)
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        dpcore.analytic_gaussian_sigma_many(1.0, E, D)
        best = min(best, (time.perf_counter() - t0) / len(GRID))
    return [float(x) for x in out], best


def score(outs, truth) -> tuple[float, int, int, float, int]:
    """Worst relative error of sigma, violated and failed counts, worst log(true delta / target),
    and the number of points violated by more than a relative 1e-6 (beyond rounding-level)."""
    worst, violated, failed, excess, material = 0.0, 0, 0, mp.mpf(-math.inf), 0
    for (e, d), o, t in zip(GRID, outs, truth, strict=True):
        if o is None or not math.isfinite(o) or o <= 0:
            failed += 1
            violated += 1
            material += 1
            worst = math.inf
            continue
        worst = max(worst, float(abs((mp.mpf(o) - t) / t)))
        log_ratio = mpref.gaussian_log_delta(o, e) - mp.log(mp.mpf(d))
        excess = max(excess, log_ratio)
        if log_ratio > 0:
            violated += 1
        if log_ratio > mp.log1p(mp.mpf("1e-6")):
            material += 1
    return worst, violated, failed, excess, material


def big_batch_time(n: int = 100_000) -> float:
    rng = np.random.default_rng(0)
    E = 10 ** rng.uniform(-3, 2, n)
    D = 10 ** rng.uniform(-300, math.log10(0.5), n)
    t0 = time.perf_counter()
    dpcore.analytic_gaussian_sigma_many(1.0, E, D)
    return (time.perf_counter() - t0) / n


def main() -> None:
    t_start = time.perf_counter()
    truth = [mpref.analytic_sigma(e, d) for e, d in GRID]
    rows = []
    for name, fn in make_contenders().items():
        reps = 2 if "seed" in name or "diffprivlib" in name or "dp_accounting" in name else 7
        outs, per_call = run_scalar(fn, reps)
        worst, viol, failed, exc, mat = score(outs, truth)
        rows.append((name, per_call, worst, viol, failed, exc, mat))
        print(
            f"{name}: {per_call * 1e6:.1f} us/call, worst rel {worst:.2e}, violated {viol}, failed {failed}", flush=True
        )
    outs, per_call = run_vectorised(20)
    worst, viol, failed, exc, mat = score(outs, truth)
    name = (
        "**dpcore `analytic_gaussian_sigma_many`** (the 80 pairs in one call; below 150 pairs it loops "
        "over the scalar solver, which is faster there)"
    )
    rows.append((name, per_call, worst, viol, failed, exc, mat))
    print(f"{name}: {per_call * 1e6:.2f} us/pair, worst rel {worst:.2e}, violated {viol}", flush=True)
    big = big_batch_time()

    def fmt_t(t):
        return f"{t * 1e6:,.1f} µs" if t >= 1e-6 else f"{t * 1e9:.0f} ns"

    def fmt_e(w):
        return "—" if not math.isfinite(w) else f"{w:.1e}"

    lines = [
        "# Analytic Gaussian calibration: exactness and speed",
        "",
        "Generated by `python3 benchmarks/bench_gaussian.py` "
        f"on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()}, "
        f"numpy {np.__version__}, scipy {metadata.version('scipy')}, {os.cpu_count()} CPU(s) "
        "(shared with other jobs: timings are indicative).",
        "",
        f"Grid: {len(EPS)} epsilons log-spaced in [1e-3, 100] x {len(DELTA)} deltas log-spaced in "
        f"[1e-300, 0.5] = {len(GRID)} points, sensitivity 1. Truth: sigma solved with mpmath at {DPS} digits. "
        "*Violated*: the returned sigma's exact delta (50 digits) exceeds the target, or no usable sigma "
        "came back (*failed*: NaN, <= 0 or an exception; counted in *violated* too); the next column counts "
        "the violations by more than a relative 1e-6, i.e. beyond a root finder's rounding. Last column: the "
        "largest ratio of the exact delta delivered to the delta asked for (over the usable outputs; <= 1 "
        "means safe everywhere). Time: mean per call over the grid, best of several repeats. The seed's code "
        "crashes on NumPy >= 2.4 as printed (`quad` gets `fsolve`'s shape-(1,) array as its limit); it is run "
        "with that one line adapted.",
        "",
        "| implementation | time per call | worst relative error of sigma | violated points "
        "| of which by > 1e-6 relative | failed | worst (true delta / target delta) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, t, w, v, f, x, m in rows:
        ratio = f"{mp.nstr(mp.exp(x), 3)}" if x > 1 else f"1 {float(mp.expm1(x)):+.1e}"
        lines.append(f"| {name} | {fmt_t(t)} | {fmt_e(w)} | {v} / {len(GRID)} | {m} | {f} | {ratio} |")
    byname = {r[0].split(" ")[0]: r for r in rows}
    t_scalar = rows[-2][1]
    t_vec = rows[-1][1]
    t_auto = byname["autodp"][1]
    t_dpa = byname["dp_accounting"][1]
    lines += [
        "",
        f"Vectorised (array) path on a random batch of 100,000 (epsilon, delta) pairs, epsilon log-uniform in "
        f"[1e-3, 100], delta log-uniform in [1e-300, 0.5]: {fmt_t(big)} per pair.",
        "",
        "Speed ratios (time of the other / time of dpcore):",
        "",
        f"- dpcore scalar vs autodp: {t_auto / t_scalar:.1f}x faster; "
        f"vs dp_accounting: {t_dpa / t_scalar:.0f}x faster.",
        f"- dpcore vectorised (80 pairs) vs autodp: {t_auto / t_vec:.0f}x; vs dp_accounting: {t_dpa / t_vec:.0f}x; "
        f"100,000-pair batch vs autodp: {t_auto / big:.0f}x.",
        "",
        f"Total benchmark wall time: {time.perf_counter() - t_start:.0f} s.",
        "",
    ]
    write_result("gaussian", lines)


if __name__ == "__main__":
    main()
