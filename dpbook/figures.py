"""The book's figures: one function per figure, drawn from numbers the chapter computed.

A chapter computes and checks; the cell that draws is one call here, tagged
``hide-input`` so that the rendered book shows the figure and not the plotting
code. Each function draws on a new figure, shows it (``plt.show()``, so the
inline backend renders it once) and returns it (for the tests). No function
here computes a number that a claim depends on: what a figure shows beside
the chapter's data (reference curves) is computed from dpcore or scipy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike
from scipy import special, stats

import dpcore
from dpcore._validation import RNGLike

__all__ = [
    "laplace_vs_normal",
    "attack_success",
    "budget_split_error",
    "histogram_release",
    "laplace_density_ratio",
    "privacy_loss_histograms",
    "gaussian_profiles",
    "classic_over_analytic",
    "rdp_curves",
    "composition_bounds",
    "audit_convergence",
    "calibration_rates",
    "calibration_power",
    "dp_sgd_epsilons",
    "averaging_cost",
    "calibrator_true_delta",
]


def _done(fig: Figure) -> Figure:
    fig.tight_layout()
    plt.show()
    return fig


def laplace_vs_normal(cross: float) -> Figure:
    """Chapter 01: Lap(0, 1) against N(0, 2), densities and two-sided tails; the tails cross at ``cross``."""
    grid = np.linspace(-6, 6, 1201)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    axes[0].plot(grid, stats.laplace(0, 1).pdf(grid), label=r"Laplace$(0, b{=}1)$")
    axes[0].plot(grid, stats.norm(0, np.sqrt(2)).pdf(grid), "--", label=r"normal, same variance $2b^2$")
    axes[0].set(xlabel="$x$", ylabel="density", title="Densities")
    axes[0].legend()
    tt = np.linspace(0, 12, 400)
    axes[1].semilogy(tt, np.exp(-tt), label=r"Laplace: $e^{-t/b}$")
    axes[1].semilogy(tt, special.erfc(tt / 2), "--", label=r"normal: erfc$(t/2b)$")
    axes[1].axvline(cross, color="grey", lw=0.8)
    axes[1].set(xlabel="$t / b$", ylabel=r"$P(|X-\mu|>t)$", title="Two-sided tails (log scale)", ylim=(1e-20, 2))
    axes[1].legend()
    return _done(fig)


def attack_success(
    bound: Callable[[float], float],
    eps: Sequence[float],
    attack: Sequence[Sequence[float]],
    flawed: Sequence[Sequence[float]],
    rr_eps: Sequence[float],
    rr_estimates: Sequence[float],
) -> Figure:
    r"""Chapter 02: the differencing attack's success against the bound :math:`e^\varepsilon/(1+e^\varepsilon)`.

    ``attack`` rows are ``(eps, estimate, ci_low, ci_high)`` of the two-query
    attack, ``flawed`` rows ``(eps, estimate, ...)`` of the half-sensitivity
    mechanism.
    """
    eg = np.linspace(0.02, 4.5, 300)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(eg, [bound(e) for e in eg], "k", lw=2, label=r"bound $e^\varepsilon/(1+e^\varepsilon)$")
    ax.plot(eg, 1 - 0.5 * np.exp(-eg / 2), "C0", label=r"best test, $Q_5$ alone ($b=1/\varepsilon$)")
    ax.plot(eg, 1 - 0.5 * np.exp(-eg / 4), "C1", label=r"best test, $(Q_4,Q_5)$ ($b=2/\varepsilon$)")
    ax.plot(eg, 1 - 0.5 * np.exp(-eg), "C3--", label=r"half-sensitivity noise ($b=1/(2\varepsilon)$)")
    est = np.array([r[1] for r in attack])
    err = [est - [r[2] for r in attack], [r[3] for r in attack] - est]
    ax.errorbar(eps, est, yerr=err, fmt="o", color="C1", ms=4, capsize=3, label="Monte Carlo, $(Q_4,Q_5)$")
    ax.plot([r[0] for r in flawed], [r[1] for r in flawed], "s", color="C3", ms=5, label="Monte Carlo, flawed")
    ax.plot(rr_eps, rr_estimates, "D", color="k", ms=5, label="Monte Carlo, randomized response")
    ax.set(
        xlabel=r"$\varepsilon$",
        ylabel="probability the attacker is right",
        ylim=(0.48, 1.0),
        title="Distinguishing $D_1$ from $D_2$",
    )
    ax.legend(fontsize=8, loc="lower right")
    return _done(fig)


def budget_split_error(sensitivity: float, k: int, rng: RNGLike = None) -> Figure:
    r"""Chapter 02: RMSE of one answer at budget :math:`E` against the average of ``k`` answers at :math:`E/k`.

    Lines: the exact RMSEs :math:`\sqrt2\Delta/E` and :math:`\sqrt{2k}\Delta/E`;
    dots: 20,000 simulated releases each (``dpcore.laplace_noise``).
    """
    gen = dpcore.as_generator(rng)
    budgets, mc = np.geomspace(0.1, 10, 60), np.geomspace(0.1, 10, 7)
    rmse = lambda z: float(np.sqrt(np.mean(z**2)))  # noqa: E731
    avg = [rmse(dpcore.laplace_noise(gen, (20_000, k), sensitivity * k / e).mean(axis=1)) for e in mc]
    one = [rmse(dpcore.laplace_noise(gen, 20_000, sensitivity / e)) for e in mc]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.loglog(budgets, np.sqrt(2 * k) * sensitivity / budgets, "C3", label=f"average of {k} answers at $E/{k}$")
    ax.loglog(budgets, np.sqrt(2) * sensitivity / budgets, "C0", label="one answer at $E$")
    ax.loglog(mc, avg, "o", color="C3", ms=4)
    ax.loglog(mc, one, "o", color="C0", ms=4)
    ax.set(xlabel="total privacy budget $E$", ylabel="root mean squared error", title="Same budget, different accuracy")
    ax.legend()
    return _done(fig)


def histogram_release(
    labels: Sequence[str],
    true_hist: ArrayLike,
    noisy_hist: ArrayLike,
    true_count: float,
    n: int,
    eps: Sequence[float],
    count_errors: Sequence[float],
    hist_errors: Sequence[float],
) -> Figure:
    """Chapter 02: a histogram released at epsilon 0.05, and the expected error of a count and a histogram."""
    eg = np.geomspace(0.01, 2, 100)
    bands = len(labels)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    pos = np.arange(bands)
    axes[0].bar(pos - 0.2, np.asarray(true_hist), 0.4, label="true")
    axes[0].bar(pos + 0.2, np.asarray(noisy_hist), 0.4, label=r"released, $\varepsilon = 0.05$")
    axes[0].set_xticks(pos, labels)
    axes[0].set(xlabel="age band", ylabel="patients", title="Histogram release")
    axes[0].legend()
    axes[1].loglog(eg, 1 / (eg * true_count), "C0", label="count: relative error $b/$count")
    axes[1].loglog(eg, bands / (eg * n), "C1", label=f"histogram: L1 error / $n$ = ${bands}b/n$")
    axes[1].loglog(eps, np.asarray(count_errors) / true_count, "o", color="C0")
    axes[1].loglog(eps, np.asarray(hist_errors) / n, "o", color="C1")
    axes[1].set(xlabel=r"$\varepsilon$", ylabel="expected error", title="Utility against privacy")
    axes[1].legend(fontsize=8)
    return _done(fig)


def laplace_density_ratio(u: float, v: float, scale: float, epsilon: float) -> Figure:
    """Chapter 03: the density ratio of Lap(u, b) to Lap(v, b), and with the stray factor 2 (scale b/2)."""
    zs = np.linspace(-2.5, 3.5, 601)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.semilogy(zs, np.exp(dpcore.laplace_privacy_loss(zs, u, v, scale)), label=r"$b=\Delta/\varepsilon$")
    half = np.exp(dpcore.laplace_privacy_loss(zs, u, v, scale / 2))
    ax.semilogy(zs, half, "--", label=r"$b=\Delta/(2\varepsilon)$ (stray factor 2)")
    ax.axhline(math.exp(epsilon), color="k", lw=0.8, ls=":", label=r"$e^{\pm\varepsilon}$")
    ax.axhline(math.exp(-epsilon), color="k", lw=0.8, ls=":")
    ax.axvspan(u, v, color="0.9", zorder=0)
    ax.set_xlabel(f"output $z$   (shaded: between $f(D)={u:g}$ and $f(D')={v:g}$)")
    ax.set_yticks([math.exp(k) for k in range(-2, 3)], [rf"$e^{{{k}}}$" for k in range(-2, 3)])
    ax.minorticks_off()
    ax.set_ylabel("density ratio (log scale)")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(rf"Density ratio $p_D(z)/p_{{D'}}(z)$ of the Laplace mechanism, $\varepsilon = {epsilon:g}$")
    return _done(fig)


def privacy_loss_histograms(loss: ArrayLike, loss_half: ArrayLike, epsilon: float) -> Figure:
    """Chapter 03: histograms of privacy-loss samples, correct scale and stray factor 2 (dotted: +-epsilon)."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    panels = (
        (loss, r"$b = \Delta/\varepsilon$", "C0"),
        (loss_half, r"$b = \Delta/(2\varepsilon)$ (stray factor 2)", "C3"),
    )
    for ax, (data, title, colour) in zip(axes, panels, strict=True):
        d = np.asarray(data)
        ax.hist(d, bins=np.linspace(-2.125, 2.125, 86), weights=np.full(d.size, 1 / d.size), color=colour)
        ax.axvline(-epsilon, color="k", ls=":")
        ax.axvline(epsilon, color="k", ls=":")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(r"privacy loss $L = \log p_D(z)/p_{D'}(z)$, $z\sim M(D)$")
    axes[0].set_ylabel("fraction of samples per bin")
    fig.suptitle(rf"Privacy-loss distribution, $\varepsilon = {epsilon:g}$ (dotted: $\pm\varepsilon$)", fontsize=11)
    return _done(fig)


def gaussian_profiles(sigmas: Sequence[float]) -> Figure:
    r"""Chapter 04: the exact privacy profile :math:`\delta_\sigma(\varepsilon)` (``dpcore.gaussian_delta``)."""
    eps = np.linspace(0, 12, 400)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for sig in sigmas:
        ax.semilogy(eps, dpcore.gaussian_delta(sig, 1.0, eps), label=rf"$\sigma/\Delta = {sig}$")
    ax.set(xlabel=r"$\varepsilon$", ylabel=r"$\delta_\sigma(\varepsilon)$", ylim=(1e-30, 1.5))
    ax.set_title("Exact privacy profile of the Gaussian mechanism")
    ax.legend()
    return _done(fig)


def classic_over_analytic(deltas: Sequence[float], classic: Callable[[float, float], float]) -> Figure:
    """Chapter 04: the classic sigma ``classic(eps, delta)`` over the analytic one, against epsilon."""
    eps = np.geomspace(0.01, 20, 120)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for d in deltas:
        ratio = np.array([classic(e, d) for e in eps]) / dpcore.analytic_gaussian_sigma_many(1.0, eps, d)
        ax.loglog(eps, ratio, label=rf"$\delta = 10^{{{int(np.log10(d))}}}$")
    ax.axhline(1, color="grey", lw=0.8)
    ax.axvspan(1, 20, color="grey", alpha=0.15, lw=0)
    ax.text(1.1, 0.68, "outside the\nclassic theorem", fontsize=9)
    ax.set(xlabel=r"$\varepsilon$", ylabel=r"$\sigma_{\rm classic}/\sigma_{\rm analytic}$")
    ax.set_title("Classic over analytic calibration")
    ax.legend(loc="upper right")
    return _done(fig)


def rdp_curves(scales: Sequence[float]) -> Figure:
    r"""Chapter 05: RDP curves of the Gaussian (:math:`\sigma = \sqrt2 b`) and Laplace (scale b) mechanisms."""
    orders = dpcore.DEFAULT_RDP_ORDERS
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for b in scales:
        ax.plot(
            orders, dpcore.gaussian_rdp(orders, math.sqrt(2) * b), label=rf"Gaussian, $\sigma=\sqrt{{2}}\cdot{b:g}$"
        )
        ax.plot(orders, dpcore.laplace_rdp(orders, b), "--", label=f"Laplace, $b={b:g}$")
    ax.set(xscale="log", yscale="log", xlabel=r"order $\alpha$", ylabel=r"$\varepsilon(\alpha)$")
    ax.set_title(r"RDP curves ($\Delta=1$)")
    ax.legend(fontsize=8)
    return _done(fig)


def composition_bounds(k: ArrayLike, bounds: Mapping[str, ArrayLike], exact: ArrayLike, title: str) -> Figure:
    """Chapter 05: epsilon after ``k`` releases by each bound, and its ratio to the exact epsilon."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    styles = [":", "-.", "--", "-"]
    series: list[tuple[str, Any, str]] = [(n, b, styles[i % 4]) for i, (n, b) in enumerate(bounds.items())]
    for label, col, st in [*series, ("exact", exact, "k-")]:
        ax1.plot(k, col, st, label=label)
        ax2.plot(k, np.asarray(col) / np.asarray(exact), st, label=label)
    ax1.set(xscale="log", yscale="log", xlabel="number of releases $k$", ylabel=r"$\varepsilon$", title=title)
    ax2.set(xscale="log", yscale="log", xlabel="number of releases $k$", ylabel="ratio to exact", title="overestimate")
    ax1.legend(fontsize=8)
    return _done(fig)


def audit_convergence(sizes: Sequence[int], curves: Mapping[str, tuple[ArrayLike, float]], claimed: float) -> Figure:
    """Chapter 06: audited lower bounds against the sample size; ``curves[name] = (runs x sizes, true epsilon)``."""
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for (name, (vals, true_eps)), colour in zip(curves.items(), ("C0", "C3", "C2", "C4"), strict=False):
        runs = np.atleast_2d(np.asarray(vals))
        for j, row in enumerate(runs):
            label = f"{name} (true $\\varepsilon$ = {true_eps:g})" if j == 0 else "_nolegend_"
            ax.plot(sizes, row, "o-", color=colour, alpha=0.7, label=label)
        ax.axhline(true_eps, color=colour, ls=":", lw=1)
    ax.axhline(claimed, color="k", lw=1, label=f"claimed $\\varepsilon$ = {claimed:g}")
    ax.set(xscale="log", xlabel="samples per side", ylabel="audited lower bound on $\\varepsilon$")
    ax.legend(loc="lower right", fontsize=8)
    return _done(fig)


def calibration_rates(suite: Any, labels: Sequence[str]) -> Figure:
    """Appendix: measured false-alarm rates with upper bounds, real checks and twins, against the promised alpha.

    ``suite`` is a :class:`dpbook.experiments.calibration.CalibrationSuite`; ``labels`` name its rows.
    """
    rows = suite.rows
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    y = np.arange(len(rows))
    for off, attr, colour, label in (
        (-0.15, "real", "C0", "real check"),
        (0.15, "twin", "C3", "miscalibrated twin"),
    ):
        res = [getattr(r, attr) for r in rows]
        rate = np.array([r.rate for r in res])
        upper = np.array([r.rate_upper for r in res])
        ax.errorbar(
            rate, y + off, xerr=[np.zeros_like(rate), upper - rate], fmt="o", color=colour, capsize=3, label=label
        )
    for i, r in enumerate(rows):
        ax.plot([r.real.alpha] * 2, [i - 0.4, i + 0.4], color="k", lw=1)
    ax.set_yticks(y, list(labels))
    ax.set(
        xscale="symlog",
        xlabel="false-alarm rate (black: the promised alpha)",
        title="Measured false-alarm rates on true claims",
    )
    ax.set_xlim(-0.001, 1.1)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    plt.show()
    return fig


def calibration_power(power: Any, n: int = 100, alpha: float = 0.05) -> Figure:
    """Appendix: measured against exact power of the Clopper--Pearson test (``power``: a ``PowerAgainstExact``)."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(power.shifts, power.exact, "k-", label="exact (binomial sum)")
    ax.plot(
        power.shifts,
        power.measured,
        "o",
        color="C0",
        label=f"measured ({power.replications:,} runs each)".replace(",", " "),
    )
    ax.axhline(alpha, color="grey", lw=0.8, ls=":")
    ax.set(
        xlabel="claimed p - true p",
        ylabel="rejection rate",
        title=f"Power of the Clopper-Pearson test, n = {n}",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()
    return fig


def dp_sgd_epsilons(steps: ArrayLike, curves: Mapping[str, ArrayLike], title: str) -> Figure:
    """Chapter 07: epsilon against the number of DP-SGD steps, one line per accountant (log-log)."""
    fig, ax = plt.subplots(figsize=(6.4, 4))
    styles = ("o-", "s--", "^-.", "x:")
    for (label, values), style in zip(curves.items(), styles * len(curves), strict=False):
        ax.loglog(np.asarray(steps), np.asarray(values), style, label=label)
    ax.set(xlabel="training steps $T$", ylabel=r"$\varepsilon$ at $\delta=10^{-5}$", title=title)
    ax.legend(fontsize=8)
    return _done(fig)


def averaging_cost(k: ArrayLike, epsilon: ArrayLike, sd: ArrayLike, epsilon0: float) -> Figure:
    """Chapter 07: k fresh Laplace answers to one query: epsilon (PLD) and the standard deviation of their average."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    kk = np.asarray(k, dtype=float)
    axes[0].loglog(kk, np.asarray(epsilon), "o-", label="PLD (upper end)")
    axes[0].loglog(kk, epsilon0 * kk, "--", label=r"basic: $k\varepsilon_0$")
    axes[0].axhline(epsilon0, color="grey", lw=0.8, label=r"the seed's reading: $\varepsilon_0$")
    axes[0].set(xlabel="answers $k$", ylabel=r"$\varepsilon$ at $\delta=10^{-5}$", title="Privacy spent")
    axes[0].legend(fontsize=8)
    axes[1].loglog(kk, np.asarray(sd), "o-", label="sd of the average")
    axes[1].set(xlabel="answers $k$", ylabel="standard deviation", title="Error of the average")
    axes[1].legend(fontsize=8)
    return _done(fig)


def calibrator_true_delta(rows: Mapping[str, Sequence[tuple[float, float, float, Any, Any]]]) -> Figure:
    r"""Chapter 08: the true delta at each calibrator's sigma against the delta asked for (log-log).

    ``rows[name]`` lists ``(epsilon, delta, sigma, true_delta, exact_sigma)`` (the chapter's check); a point
    above the diagonal is a calibrator that under-noises. Right: the under-noise :math:`1 - \sigma/\sigma_*`.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, 4))
    markers = ("o", "s", "^", "x")
    for (name, pts), marker in zip(rows.items(), markers * len(rows), strict=False):
        target = np.array([float(r[1]) for r in pts])
        true = np.array([max(float(r[3]), 1e-320) for r in pts])
        short = np.array([float(1 - r[2] / float(r[4])) for r in pts])
        left.loglog(target, true, marker, alpha=0.6, label=name, fillstyle="none")
        right.semilogx(target, 100 * short, marker, alpha=0.6, label=name, fillstyle="none")
    lo = min(float(r[1]) for pts in rows.values() for r in pts)
    left.loglog([lo, 1.0], [lo, 1.0], "k-", lw=0.8, label="true delta = delta asked")
    left.set(xlabel=r"$\delta$ asked for", ylabel=r"true $\delta$ at the returned $\sigma$")
    right.axhline(0.0, color="k", lw=0.8)
    right.set(xlabel=r"$\delta$ asked for", ylabel=r"under-noise $1 - \sigma/\sigma_*$ (%)")
    left.legend(fontsize=7)
    return _done(fig)
