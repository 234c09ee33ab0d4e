#!/usr/bin/env python3
"""Exact discrete samplers against numpy's float Laplace: samples per second, and whether time depends on values.

One command, from the repository root::

    /work/main/.venv/bin/python benchmarks/bench_samplers.py            # batches of 10^6 and 10^7
    /work/main/.venv/bin/python benchmarks/bench_samplers.py --quick    # 10^6 only

What it measures (same machine, same process, side by side):

* rate: samples per second of ``numpy.random.Generator.laplace`` (float),
  ``dpcore.sample_discrete_laplace(scale)`` and ``dpcore.sample_discrete_gaussian``
  (with ``sigma2 = scale**2``, i.e. sigma = scale, where that is a valid parameter,
  and with ``sigma2 = scale``), for scales 1e-3 ... 1e6 and batch sizes 10^6, 10^7.
  End to end: the dpcore tables are built inside the timed call (their caches are
  cleared before every repeat), the Generator is created inside the timed call.
  Median of ``REPEATS`` repeats; ratio = numpy rate / dpcore rate (goal: <= 3).
* timing versus values drawn: (a) per-call time of the scalar path
  (``size=None``, one sample per call, tables warm) grouped by ``|x|``;
  (b) time of small batches (1000 samples) against the batch's mean ``|x|``
  (Spearman rank correlation); (c) the cost of the rare exact refinement
  (a forced tie ``u == threshold``), which happens with probability about
  (number of thresholds) / 2**32 per word drawn.

Writes ``benchmarks/results/samplers.md`` with the machine load (``uptime``) before and after.
"""

from __future__ import annotations

import platform
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import write_result  # noqa: E402

from dpcore import discrete as dd  # noqa: E402

SCALES = ["0.001", "0.1", "1", "10", "1000", "1000000"]
REPEATS = 5


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def _cold() -> None:
    dd._laplace_tables.cache_clear()
    dd._gaussian_tables.cache_clear()


def _median_time(fn, n: int) -> float:
    times = []
    for r in range(REPEATS):
        _cold()
        t0 = time.perf_counter()
        fn(n, r)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _paired(fns: list, n: int) -> list[tuple[float, float] | None]:
    """Per function: (median time, median of time / numpy's time in the same repeat); fns[0] is numpy.

    The functions run back to back in every repeat (cold tables each time), so a change in the
    machine's load between repeats affects numpy and dpcore alike; the ratio is taken per repeat.
    """
    times = [[] for _ in fns]
    for r in range(REPEATS):
        for i, fn in enumerate(fns):
            if fn is None:
                continue
            _cold()
            t0 = time.perf_counter()
            fn(n, r)
            times[i].append(time.perf_counter() - t0)
    base = np.array(times[0])
    return [
        None if fn is None else (float(np.median(t)), float(np.median(np.array(t) / base)))
        for fn, t in zip(fns, times, strict=True)
    ]


def _numpy_laplace(scale: str):
    b = float(Fraction(scale))
    return lambda n, r: np.random.default_rng(r).laplace(0.0, b, n)


def _dlap(scale: str):
    return lambda n, r: dd.sample_discrete_laplace(scale, n, rng=r)


def _dgauss(sigma2: Fraction | str):
    return lambda n, r: dd.sample_discrete_gaussian(sigma2, n, rng=r)


def _sigma2_of_sigma(scale: str) -> Fraction | None:
    s2 = Fraction(scale) ** 2
    return s2 if s2.numerator < 2**24 and s2.denominator < 2**24 else None


def rates(n: int) -> list[str]:
    rows = [
        f"### Batch of {n:,} samples",
        "",
        "| scale | numpy `laplace` (float) | `sample_discrete_laplace` | ratio | "
        "`sample_discrete_gaussian`, sigma = scale | ratio | `sample_discrete_gaussian`, sigma2 = scale | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    worst = 0.0
    for scale in SCALES:
        s2 = _sigma2_of_sigma(scale)
        fns = [_numpy_laplace(scale), _dlap(scale), _dgauss(s2) if s2 is not None else None, _dgauss(scale)]
        res = _paired(fns, n)
        assert res[0] is not None
        cells = [scale, f"{n / res[0][0] / 1e6:.1f} M/s"]
        for item in res[1:]:
            if item is None:
                cells += ["n/a (sigma2 = 1e12 > parameter limit 2**24)", ""]
            else:
                worst = max(worst, item[1])
                cells += [f"{n / item[0] / 1e6:.1f} M/s", f"{item[1]:.2f}x"]
        rows.append("| " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    rows += ["", f"Worst ratio (time of dpcore / time of numpy) in this table: **{worst:.2f}x**.", ""]
    return rows


def secure_rates(n: int) -> list[str]:
    """The default ``rng=None``: every word from the OS CSPRNG (``secrets.token_bytes``)."""
    import os

    t0 = time.perf_counter()
    os.urandom(16 * n)
    urandom_mb = 16 * n / (time.perf_counter() - t0) / 1e6
    rows = [
        f"### Default randomness (`rng=None`: OS CSPRNG), batch of {n:,}",
        "",
        "The tables above use a seeded PCG64 Generator, like numpy's `laplace`. With the default "
        "`rng=None` every 32-bit word comes from `secrets.token_bytes` (`os.urandom`), which delivers "
        f"{urandom_mb:,.0f} MB/s on this machine at the time of the run; a discrete Laplace sample uses "
        "about 8 bytes at scales >= 8 (about 4 below), a discrete Gaussian sample about 4:",
        "",
        "| sampler | scale | numpy `laplace` (PCG64) | dpcore, `rng=None` | ratio |",
        "|---|---|---:|---:|---:|",
    ]
    cases = [("sample_discrete_laplace", dd.sample_discrete_laplace, sc) for sc in SCALES]
    cases += [("sample_discrete_gaussian (sigma2 = scale)", dd.sample_discrete_gaussian, sc) for sc in SCALES]
    worst = 0.0
    for name, sampler, scale in cases:
        make = lambda sc, f=sampler: lambda m, r: f(sc, m)  # noqa: E731
        (t_np, _), (t, ratio) = _paired([_numpy_laplace(scale), make(scale)], n)  # type: ignore[misc]
        worst = max(worst, ratio)
        rows.append(f"| {name} | {scale} | {n / t_np / 1e6:.1f} M/s | {n / t / 1e6:.1f} M/s | {ratio:.2f}x |")
        print(rows[-1], flush=True)
    rows += ["", f"Worst ratio with `rng=None` in this table: **{worst:.2f}x**.", ""]
    return rows


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def timing_vs_values() -> list[str]:
    rows = ["## Does the time depend on the values drawn?", ""]
    spread: list[tuple[float, str]] = []  # (max/min of the class medians, sampler)
    corr: list[tuple[float, str]] = []  # (Spearman of batch time with mean |x|, sampler)
    # (a) scalar path, tables warm
    rows += [
        "(a) Scalar path (`size=None`, one sample per call, tables cached), 20,000 calls each, "
        "per-call time (perf_counter, ns) by `|x|` class (median and 99th percentile; a p99 in the "
        "milliseconds is the scheduler giving the core to another job for a time slice, which hits any call):",
        "",
        "| sampler | class of abs(x) | calls | median time | p99 time |",
        "|---|---|---:|---:|---:|",
    ]
    for name, fn, edges in (
        ("discrete Laplace, scale 10", lambda g: dd.sample_discrete_laplace(10, rng=g), [0, 1, 5, 20, 10**9]),
        (
            "discrete Laplace, scale 1e6",
            lambda g: dd.sample_discrete_laplace(10**6, rng=g),
            [0, 10**5, 10**6, 3 * 10**6, 10**12],
        ),
        ("discrete Gaussian, sigma2 100", lambda g: dd.sample_discrete_gaussian(100, rng=g), [0, 1, 5, 15, 10**9]),
        (
            "discrete Gaussian, sigma2 1e6",
            lambda g: dd.sample_discrete_gaussian(10**6, rng=g),
            [0, 100, 1000, 2500, 10**9],
        ),
    ):
        g = np.random.default_rng(7)
        fn(g)  # warm the tables
        xs, ts = np.empty(20_000, dtype=np.int64), np.empty(20_000)
        for i in range(xs.size):
            t0 = time.perf_counter_ns()
            xs[i] = fn(g)
            ts[i] = time.perf_counter_ns() - t0
        ax = np.abs(xs)
        medians = []
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            sel = (ax >= lo) & (ax < hi)
            if sel.sum() >= 20:
                medians.append(float(np.median(ts[sel])))
                rows.append(
                    f"| {name} | [{lo:,}, {hi:,}) | {int(sel.sum()):,} | {np.median(ts[sel]):,.0f} ns | "
                    f"{np.percentile(ts[sel], 99):,.0f} ns |"
                )
        rows.append(f"| {name} | Spearman(time, abs(x)) over all calls | | {_spearman(ts, ax):+.3f} | |")
        spread.append((max(medians) / min(medians), name))
    rows.append("")
    # (b) small batches
    rows += [
        "(b) 3,000 batches of 1,000 samples each (tables cached): Spearman rank correlation between a batch's "
        "time and its mean `|x|`, and mean time of the batches in the top and bottom decile of mean `|x|`:",
        "",
        "| sampler | Spearman(time, mean abs x) | time, lowest decile of mean abs x | time, highest decile |",
        "|---|---:|---:|---:|",
    ]
    for name, fn in (
        ("discrete Laplace, scale 10", lambda g: dd.sample_discrete_laplace(10, 1000, rng=g)),
        ("discrete Laplace, scale 1e6", lambda g: dd.sample_discrete_laplace(10**6, 1000, rng=g)),
        ("discrete Gaussian, sigma2 1e6", lambda g: dd.sample_discrete_gaussian(10**6, 1000, rng=g)),
    ):
        g = np.random.default_rng(8)
        fn(g)
        means, ts = np.empty(3000), np.empty(3000)
        for i in range(means.size):
            t0 = time.perf_counter_ns()
            x = fn(g)
            ts[i] = time.perf_counter_ns() - t0
            means[i] = np.abs(x).mean()
        lo, hi = np.quantile(means, [0.1, 0.9])
        corr.append((_spearman(ts, means), name))
        rows.append(
            f"| {name} | {_spearman(ts, means):+.3f} | {ts[means <= lo].mean() / 1e3:,.1f} µs | "
            f"{ts[means >= hi].mean() / 1e3:,.1f} µs |"
        )
    rows.append("")
    # (c) the exact refinement of a tie
    tab = dd._laplace_tables(1, 10)
    src = dd._Uniform(9)
    t0 = time.perf_counter_ns()
    for _ in range(200):
        dd._lazy_less([int(tab.inv.asc[-1]), 32], tab.inv.oracle(1), src)
    tie = (time.perf_counter_ns() - t0) / 200
    gtab = dd._gaussian_tables(10**6, 1)
    t0 = time.perf_counter_ns()
    for _ in range(200):
        dd._lazy_less([int(gtab.table[gtab.size // 2]), 32], gtab.oracle(gtab.size // 2), src)
    gtie = (time.perf_counter_ns() - t0) / 200
    rows += [
        f"(c) One exact refinement of a tie (`u == threshold`, scalar Python, integer arithmetic): "
        f"{tie / 1e3:,.0f} µs for the discrete Laplace threshold of P(Z != 0) (scale 10), "
        f"{gtie / 1e3:,.0f} µs for a discrete Gaussian CDF threshold (sigma2 1e6). A tie occurs with "
        f"probability about (number of thresholds met) / 2**32 per word; the Gaussian table for "
        f"sigma2 = 1e6 has {gtab.size:,} thresholds, so about {gtab.size / 2**32 * 1e6:.1f} ties per million samples.",
        "",
    ]
    worst_spread, worst_corr = max(spread), max(corr)
    rows += [
        "**Finding (computed from the tables above).** The time is *not* independent of the values drawn. "
        f"Per call (scalar path), the median times of the `|x|` classes differ by up to "
        f"{100 * (worst_spread[0] - 1):.0f} % ({worst_spread[1]}); per batch, time and mean `|x|` have a rank "
        f"correlation up to {worst_corr[0]:+.2f} ({worst_corr[1]}). Where it comes from: the inversion "
        "tables answer most words with one look-up in a guide table, but words in a bucket that holds a "
        "threshold take a binary search as well, and those buckets are where the thresholds crowd (the tail "
        "of the law: large `|x|`); an exact tie (`u == threshold`) takes a scalar refinement of microseconds "
        "to tens of microseconds. The number of rejection rounds for the low part of a large-scale Laplace "
        "draw is independent of the value accepted (a property of rejection sampling), so it adds noise but "
        "no dependence. (CKS20's Algorithm 2 draws the high part of `|x|` with one Bernoulli trial per unit "
        "of `|x|/t`, so its time grows with `|x|`; that is from the algorithm's structure, not measured "
        "here.) Here the dependence is a small fraction of the time, but the samplers are not constant-time: "
        "a caller who must hide values from a timing observer should draw noise for whole batches at once "
        "(the per-batch effect is diluted over the batch) and not rely on constant time.",
        "",
    ]
    return rows


def main() -> None:
    quick = "--quick" in sys.argv
    start = time.time()
    load_before = _uptime()
    lines = [
        "# Exact discrete samplers against numpy's float Laplace",
        "",
        f"Generated by `python benchmarks/bench_samplers.py{' --quick' if quick else ''}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Python {platform.python_version()}, "
        f"numpy {np.__version__}, {platform.machine()}.",
        "",
        f"Machine load before: `{load_before}`. The machine has 2 cores shared with other jobs, so the "
        "absolute rates are indicative; the ratios are measured side by side in one process.",
        "",
        "Rates are samples per second, end to end (the dpcore tables for the scale are built inside "
        "the timed call: their caches are cleared before every repeat; numpy's Generator is created inside "
        f"the timed call); numpy and the dpcore samplers run back to back in each of {REPEATS} repeats. Rates: "
        "from the median time; *ratio*: the median over repeats of dpcore's time / numpy's time in the same "
        "repeat "
        "(the issue's goal: <= 3x). The discrete Gaussian is timed with sigma = scale (sigma2 = scale**2, "
        "n/a where that exceeds the rational-parameter limit of 2**24) and with sigma2 = scale.",
        "",
    ]
    for n in (10**6,) if quick else (10**6, 10**7):
        lines += rates(n)
    lines += secure_rates(10**6)
    lines += timing_vs_values()
    lines += [
        f"Machine load after: `{_uptime()}`.",
        "",
        f"Total benchmark wall time: {time.time() - start:.0f} s.",
        "",
    ]
    write_result("samplers", lines)


if __name__ == "__main__":
    main()
