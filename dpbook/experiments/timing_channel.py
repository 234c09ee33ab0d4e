r"""Chapter 08: the timing side channel of Jin et al. (2022), measured on discrete noise samplers.

An exact sampler of discrete noise loops until a coin comes up a certain way;
if the number of loops grows with the magnitude of the value drawn, the time a
release takes tells an observer how large its noise was, and with the output
itself, the input. Wall time on a shared machine depends on the load, so
**nothing here is asserted**: every number is a measurement, shown with its
test statistic and p-value, and none is handed to the ledger.

Samplers measured, one draw per call (so the cost of the draw is timed, not
that of a vectorised batch): OpenDP 0.16's ``make_laplace`` and
``make_gaussian`` on integers (discrete Laplace and Gaussian, exact, from the
operating system's randomness), and dpcore's :func:`dpcore.sample_discrete_laplace`
and :func:`dpcore.sample_discrete_gaussian` at ``size=1``. For dpcore a second,
machine-independent quantity is counted too: the 64-bit words its draw takes
from a PCG64 bit generator, read off the generator's state (no change to the
sampler).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

import dpcore

__all__ = [
    "opendp_release",
    "dpcore_release",
    "TimingResult",
    "time_releases",
    "count_words",
    "timing_table",
    "AttackResult",
    "timing_attack",
    "plot_timing",
]

_BUCKETS = ((0, 0), (1, 2), (3, 5), (6, 10), (11, 20), (21, 10**9))


def opendp_release(kind: str, scale: float) -> Callable[[int], int]:
    """OpenDP's integer mechanism ``make_laplace`` / ``make_gaussian`` at ``scale``: ``x -> x + noise``."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    make = {"laplace": dp.m.make_laplace, "gaussian": dp.m.make_gaussian}[kind]
    m = make(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale)
    return lambda x: int(m(x))


def dpcore_release(kind: str, parameter: int, rng: Any = None) -> Callable[[int], int]:
    """dpcore's exact sampler (scale ``b``, or ``sigma^2``), one draw per call: ``x -> x + noise``.

    ``rng=None``: the operating system's randomness, as dpcore draws by default; a seed or a Generator
    gives one reproducible stream over all calls.
    """
    f = {"laplace": dpcore.sample_discrete_laplace, "gaussian": dpcore.sample_discrete_gaussian}[kind]
    gen = None if rng is None else dpcore.as_generator(rng)  # one stream, not a fresh seed per call
    f(parameter, size=1, rng=gen)  # build the tables before timing
    return lambda x: x + int(f(parameter, size=1, rng=gen)[0])


@dataclass(frozen=True)
class TimingResult:
    """Per-draw cost (ns, or words) against the magnitude of the noise drawn, with Spearman's test."""

    name: str
    unit: str
    noise: NDArray[np.int64]
    cost: NDArray[np.float64]
    rho: float
    pvalue: float

    def auc(self, small: int = 0, large: int = 3) -> float:
        """P(cost of a draw with ``|noise| >= large`` > cost of one with ``|noise| <= small``), ties half."""
        from scipy import stats

        a = np.abs(self.noise)
        hi, lo = self.cost[a >= large], self.cost[a <= small]
        if not (hi.size and lo.size):
            return float("nan")
        return float(stats.mannwhitneyu(hi, lo).statistic) / (hi.size * lo.size)

    def buckets(self) -> list[tuple[str, int, float]]:
        """``(|noise| range, count, median time or mean words)`` per bucket of :data:`_BUCKETS` (non-empty ones)."""
        out = []
        a = np.abs(self.noise)
        for lo, hi in _BUCKETS:
            sel = (a >= lo) & (a <= hi)
            if sel.any():
                label = f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi < 10**9 else f">= {lo}")
                centre = np.median if self.unit == "ns" else np.mean  # times have outliers; words do not
                out.append((label, int(sel.sum()), float(centre(self.cost[sel]))))
        return out


def _spearman(noise: NDArray[np.int64], cost: NDArray[np.float64]) -> tuple[float, float]:
    """Spearman's rank correlation of ``|noise|`` and cost, two-sided p-value (scipy, t approximation)."""
    from scipy import stats

    mag = np.abs(noise)
    if np.all(cost == cost[0]) or np.all(mag == mag[0]):
        return 0.0, 1.0  # a constant: no dependence at all (Spearman's rho is undefined)
    res = stats.spearmanr(mag, cost)
    return float(res.statistic), float(res.pvalue)


def time_releases(name: str, release: Callable[[int], int], n: int, x: int = 0) -> TimingResult:
    """``n`` releases of ``release(x)``, each timed with ``time.perf_counter_ns``; noise = output - x."""
    noise = np.empty(n, dtype=np.int64)
    cost = np.empty(n)
    clock = time.perf_counter_ns
    for i in range(n):
        t0 = clock()
        y = release(x)
        cost[i] = clock() - t0
        noise[i] = y - x
    return TimingResult(name, "ns", noise, cost, *_spearman(noise, cost))


def count_words(kind: str, parameter: int, n: int, seed: int = 0, limit: int = 10_000) -> TimingResult:
    """Per draw of dpcore's sampler (``size=1``), the 64-bit words it takes from a PCG64 bit generator.

    Counted from outside: a copy of the generator's state before the draw is stepped one raw word
    at a time until it equals the state after it (at most ``limit`` steps).
    """
    f = {"laplace": dpcore.sample_discrete_laplace, "gaussian": dpcore.sample_discrete_gaussian}[kind]
    gen = dpcore.as_generator(seed)
    bg = gen.bit_generator
    ref = np.random.PCG64()
    f(parameter, size=1, rng=gen)
    noise = np.empty(n, dtype=np.int64)
    words = np.empty(n)
    for i in range(n):
        before = bg.state
        noise[i] = int(f(parameter, size=1, rng=gen)[0])
        after = bg.state["state"]["state"]
        ref.state = before
        k = 0
        while ref.state["state"]["state"] != after:
            ref.random_raw(1)
            k += 1
            if k > limit:
                raise RuntimeError("word count above the limit")
        words[i] = k
    return TimingResult(f"dpcore {kind} (PCG64 words)", "words", noise, words, *_spearman(noise, words))


def timing_table(results: Sequence[TimingResult]) -> str:
    """Markdown: sampler, draws, Spearman's rho of the noise's magnitude and the cost, its p-value, the AUC
    of the cost between magnitudes >= 3 and 0 (:meth:`TimingResult.auc`), and by magnitude the median
    time (ns) or the mean number of words (number of draws in brackets)."""
    labels = [f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi < 10**9 else f">= {lo}") for lo, hi in _BUCKETS]
    head = (
        "| sampler | draws | Spearman rho | p-value | AUC, >= 3 vs 0 | "
        + " | ".join(f"magnitude {b}" for b in labels)
        + " |"
    )
    lines = [head, "|---|---:|---:|---:|---:|" + "---:|" * len(labels)]
    for r in results:
        med = {b: (c, m) for b, c, m in r.buckets()}
        cells = [
            (f"{med[b][1]:,.0f} ({med[b][0]})" if r.unit == "ns" else f"{med[b][1]:.3f} ({med[b][0]})")
            if b in med else "·"
            for b in labels
        ]  # fmt: skip
        lines.append(
            f"| {r.name} | {r.noise.size:,} | {r.rho:.3f} | {r.pvalue:.2g} | {r.auc():.3f} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class AttackResult:
    """:func:`timing_attack`'s success rates on the test releases, with the output alone and with its time;
    the guesses where only the timed (only the plain) rule is right; the sign test's p-value."""

    name: str
    n_test: int
    success_output: float
    success_timed: float
    levels: dict[int, float] = field(default_factory=dict)
    disagree: tuple[int, int] = (0, 0)
    sign_pvalue: float = 1.0


def timing_attack(
    name: str,
    release: Callable[[int], int],
    scale: float,
    n_train: int,
    n_test: int,
    seed: int = 0,
    cap: int = 8,
    bins: int = 20,
) -> AttackResult:
    r"""Guess a secret bit :math:`x \in \{0, 1\}` from one release :math:`y = x + Z` and the time it took.

    Training (the attacker's own calls, :math:`x` known): a histogram of the time in ``bins`` bins
    (training quantiles) for each noise level :math:`k = \min(|Z|, \text{cap})`, add-one smoothed.
    Test (the other calls, drawn interleaved with the training ones in random order; :math:`x` uniform
    from ``seed``): for each candidate :math:`x` the noise would be
    :math:`y - x`; score :math:`-|y - x|/\text{scale}` (the Laplace prior) plus the log of the time's
    bin frequency at that level (a naive Bayes classifier); guess the better. Without the time only the
    prior counts (guess 1 iff :math:`y \ge 1`). On the guesses where the two rules disagree, a two-sided
    sign test (scipy's exact binomial test) of whether the timed rule is right as often as the other.
    Success rates and p-value are measurements, not asserted.
    """
    gen = dpcore.as_generator(seed)
    clock = time.perf_counter_ns

    def run(xs: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        ys = np.empty(xs.size, dtype=np.int64)
        ts = np.empty(xs.size)
        for i, x in enumerate(xs.tolist()):
            t0 = clock()
            ys[i] = release(x)
            ts[i] = clock() - t0
        return ys, ts

    x_all = gen.integers(0, 2, n_train + n_test)
    y_all, t_all = run(x_all)
    train = np.zeros(x_all.size, dtype=bool)
    train[gen.permutation(x_all.size)[:n_train]] = True  # interleaved: load drift hits both alike
    xs, ys, ts = x_all[train], y_all[train], t_all[train]
    lev = np.minimum(np.abs(ys - xs), cap)
    edges = np.quantile(ts, np.linspace(0, 1, bins + 1)[1:-1])
    hist = np.ones((cap + 1, bins))  # add-one smoothing
    np.add.at(hist, (lev, np.searchsorted(edges, ts)), 1)
    loglik = np.log(hist / hist.sum(axis=1, keepdims=True))
    med = {k: float(np.median(ts[lev == k])) for k in range(cap + 1) if np.any(lev == k)}
    xt, yt, tt = x_all[~train], y_all[~train], t_all[~train]
    col = np.searchsorted(edges, tt)

    def score(x: int) -> NDArray[np.float64]:
        return -np.abs(yt - x) / scale + loglik[np.minimum(np.abs(yt - x), cap), col]

    guess_timed = (score(1) > score(0)).astype(np.int64)
    guess_plain = (yt >= 1).astype(np.int64)
    from scipy import stats

    only_timed = int(np.count_nonzero((guess_timed == xt) & (guess_plain != xt)))
    only_plain = int(np.count_nonzero((guess_plain == xt) & (guess_timed != xt)))
    p = float(stats.binomtest(only_timed, only_timed + only_plain).pvalue) if only_timed + only_plain else 1.0
    return AttackResult(
        name,
        n_test,
        float(np.mean(guess_plain == xt)),
        float(np.mean(guess_timed == xt)),
        med,
        (only_timed, only_plain),
        p,
    )


def plot_timing(results: Sequence[TimingResult]) -> Any:
    """Median time (left) and mean words (right) per ``|noise|`` up to 20, one line per sampler."""
    import matplotlib.pyplot as plt

    units = [u for u in ("ns", "words") if any(r.unit == u for r in results)]
    fig, axes = plt.subplots(1, len(units), figsize=(4.8 * len(units), 3.4), squeeze=False)
    for ax, unit in zip(axes[0], units, strict=True):
        for r in (r for r in results if r.unit == unit):
            a = np.abs(r.noise)
            ks = [k for k in range(21) if np.count_nonzero(a == k) >= 20]
            ys = [np.median(r.cost[a == k]) / 1e3 if unit == "ns" else np.mean(r.cost[a == k]) for k in ks]
            ax.plot(ks, ys, "o-", ms=3, label=r.name)
        ax.set_xlabel("|noise drawn|")
        ax.set_ylabel("median time per call (µs)" if unit == "ns" else "mean words per draw")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
