r"""Experiments of the chapter *Rényi differential privacy* (``05_renyi_dp``).

The chapter derives each result with sympy and calls one function here for
its numerical side: quadratures of Rényi divergences against the closed forms
of :mod:`dpcore`, the nested quadrature of an adaptive composition, a Monte
Carlo test of the composition rule, the behaviour below order 1, sweeps of
the RDP-to-DP conversion and of the accountant over many parameters. Each
returns an :class:`~dpbook.experiments.Experiment` whose ``evidence`` and
``controls`` the chapter hands to :func:`dpbook.ledger.record`.

Quadrature evidence is deterministic (``kind="numeric"``, no false-alarm
probability). The only random evidence is :func:`adaptive_gaussian_montecarlo`
(three median-of-means tests, each with its own ``alpha``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate, stats

import dpcore
from dpbook import reference as mpref
from dpbook.evidence import Close, Compare, Evidence, Fact, Rejected, Test
from dpbook.experiments import Experiment

__all__ = [
    "QuadratureSweep",
    "gaussian_rdp_quadrature",
    "laplace_rdp_quadrature",
    "AdaptiveLaplace",
    "adaptive_laplace_quadrature",
    "InnerAtZeroShift",
    "inner_divergence_at_zero_shift",
    "AdaptiveMonteCarlo",
    "adaptive_gaussian_montecarlo",
    "BelowOrderOne",
    "alpha_below_one",
    "ConversionSweep",
    "conversion_sweep",
    "Accounting",
    "accounting",
    "exact_reference",
]

RdpCurve = Callable[..., Any]
"""An RDP curve ``f(alpha, scale, sensitivity=1.0)`` such as :func:`dpcore.gaussian_rdp`."""


def _label(f: Callable[..., Any]) -> str:
    """``dpcore.name`` for a function of dpcore, else its name (for evidence texts)."""
    name = getattr(f, "__name__", type(f).__name__)
    return f"dpcore.{name}" if getattr(f, "__module__", "").startswith("dpcore") else name


def _num(x: float) -> str:
    """A float as the chapter writes it: ``0.01``, ``1e4``."""
    return f"{x:g}" if abs(x) < 1e4 else f"{x:.0e}".replace("e+0", "e").replace("e+", "e")


def _gauss_log(m: float, sd: float) -> Callable[[Any], Any]:
    """Log-density of N(m, sd^2) (``scipy.stats.norm.logpdf``), vectorised."""
    return lambda z: stats.norm.logpdf(z, m, sd)


def _lap_logpdf(z: Any, m: float, scale: float) -> Any:
    """Log-density of Lap(m, scale) at ``z`` (a float or an array: ``abs`` is NumPy's on arrays).

    Not ``scipy.stats.laplace.logpdf``: the nested quadratures call it with
    single floats millions of times, where scipy's overhead would dominate.
    """
    return -abs(z - m) / scale - math.log(2 * scale)


def _laplace_log(m: float, scale: float) -> Callable[[Any], Any]:
    """:func:`_lap_logpdf` at ``(m, scale)``, as a function of ``z``."""
    return lambda z: _lap_logpdf(z, m, scale)


# --------------------------------------------------------------------------- closed forms


@dataclass(frozen=True)
class QuadratureSweep(Experiment):
    """A closed-form RDP curve against quadrature over a grid of (order, scale).

    Attributes
    ----------
    worst : float
        The largest relative error ``|quadrature / formula - 1|`` over the grid.
    """

    worst: float = 0.0


def _worst_relative(
    formula: RdpCurve,
    log_pair: Callable[[float], tuple[Callable[[Any], Any], Callable[[Any], Any]]],
    orders: Sequence[float],
    scales: Sequence[float],
) -> float:
    """max over the grid of ``|dpcore.renyi_divergence / formula - 1|`` (sensitivity 1)."""
    worst = 0.0
    for a_ in orders:
        for scale in scales:
            logp, logq = log_pair(scale)
            numeric = dpcore.renyi_divergence(logp, logq, a_, points=[0, 1], scale=scale)
            worst = max(worst, abs(numeric / formula(a_, scale) - 1))
    return worst


def gaussian_rdp_quadrature(
    orders: Sequence[float] = (1.05, 2.0, 7.5, 60.0),
    sigmas: Sequence[float] = (0.5, 1.0, 4.0),
    *,
    formula: RdpCurve = dpcore.gaussian_rdp,
    rtol: float = 1e-10,
) -> QuadratureSweep:
    r"""The Gaussian RDP curve against :func:`dpcore.renyi_divergence` (quadrature).

    For every order :math:`\alpha` and noise :math:`\sigma` of the grid,
    :math:`D_\alpha(N(1,\sigma^2)\|N(0,\sigma^2))` is integrated numerically
    (adaptive Gauss--Kronrod in log space, relative tolerance :math:`10^{-12}`)
    and compared with ``formula(alpha, sigma)``, which should be
    :math:`\alpha/(2\sigma^2)` (sensitivity 1). Deterministic: no false alarm.

    Parameters
    ----------
    orders, sigmas : sequence of float
        The grid (the chapter: 4 orders times 3 noise levels).
    formula : callable
        The closed form under test, ``formula(alpha, sigma)``; default
        :func:`dpcore.gaussian_rdp`.
    rtol : float
        The largest relative error that counts as agreement.

    Returns
    -------
    QuadratureSweep
        ``evidence``: ``worst <= rtol``. No controls (the chapter's control
        is symbolic).
    """
    worst = _worst_relative(formula, lambda sd: (_gauss_log(1.0, sd), _gauss_log(0.0, sd)), orders, sigmas)
    n = len(orders) * len(sigmas)
    what = f"quadrature vs {_label(formula)}, {n} (alpha, sigma) (relative)"
    return QuadratureSweep(evidence=(Compare(what, worst, "<=", rtol),), worst=worst)


def laplace_rdp_quadrature(
    orders: Sequence[float] = (1.05, 2.0, 7.5, 60.0),
    scales: Sequence[float] = (0.2, 1.0, 5.0),
    *,
    formula: RdpCurve = dpcore.laplace_rdp,
    rtol: float = 1e-10,
    overflow_at: tuple[float, float] = (1e4, 0.01),
) -> QuadratureSweep:
    r"""The Laplace RDP curve against quadrature, and where the naive formula overflows.

    For every order :math:`\alpha` and scale :math:`b` of the grid,
    :math:`D_\alpha(\mathrm{Lap}(0,b)\|\mathrm{Lap}(1,b))` by
    :func:`dpcore.renyi_divergence` is compared with ``formula(alpha, b)``
    (Mironov's Proposition 6). At ``overflow_at = (alpha, b)`` the first
    term :math:`\frac{\alpha}{2\alpha-1}e^{(\alpha-1)/b}` of the naive
    formula overflows a double while ``formula`` must stay finite.
    Deterministic: no false alarm.

    Parameters
    ----------
    orders, scales : sequence of float
        The grid (the chapter: 4 orders times 3 scales).
    formula : callable
        The closed form under test; default :func:`dpcore.laplace_rdp`.
    rtol : float
        The largest relative error that counts as agreement.
    overflow_at : (float, float)
        The order and scale where the naive formula overflows.

    Returns
    -------
    QuadratureSweep
        ``evidence``: ``worst <= rtol``; the overflow fact.
    """
    worst = _worst_relative(formula, lambda sc: (_laplace_log(0.0, sc), _laplace_log(1.0, sc)), orders, scales)
    a_big, b_small = overflow_at
    with np.errstate(over="ignore"):
        naive = np.log(a_big / (2 * a_big - 1) * np.exp((a_big - 1) / b_small))  # the first term alone overflows
    finite = math.isfinite(formula(a_big, b_small))
    return QuadratureSweep(
        evidence=(
            Compare(f"quadrature vs {_label(formula)} (relative)", worst, "<=", rtol),
            Fact(
                f"naive formula overflows where {_label(formula)}({_num(a_big)}, {_num(b_small)}) is finite",
                (not np.isfinite(naive)) and finite,
            ),
        ),
        worst=worst,
    )


# --------------------------------------------------------------------------- adaptive composition


@dataclass(frozen=True)
class AdaptiveLaplace(Experiment):
    """Rényi divergences of an adaptive Laplace pair, by 2-D and by factorised quadrature.

    Attributes
    ----------
    order, scale_1, scale_2 : float
        The order and the scales of ``f`` and ``g``.
    eps_1, eps_2 : float
        The RDP of ``f`` and of ``g`` at ``order`` (:func:`dpcore.laplace_rdp`).
    const_2d, const_factorised : float
        :math:`D_\\alpha(h(D)\\|h(D'))` for the constant shift 1.
    cos_2d, cos_factorised : float
        The same for the shift :math:`(1+\\cos x)/2`.
    """

    order: float = 3.0
    scale_1: float = 1.0
    scale_2: float = 2.0
    eps_1: float = math.nan
    eps_2: float = math.nan
    const_2d: float = math.nan
    const_factorised: float = math.nan
    cos_2d: float = math.nan
    cos_factorised: float = math.nan

    def __str__(self) -> str:
        e1, e2 = self.eps_1, self.eps_2
        return (
            f"eps1 = {e1:.12f}, eps2 = {e2:.12f}, eps1 + eps2 = {e1 + e2:.12f}\n"
            f"constant shift: 2-D {self.const_2d:.12f}, factorised {self.const_factorised:.12f}\n"
            f"cos shift     : 2-D {self.cos_2d:.12f}, factorised {self.cos_factorised:.12f}"
        )


def _constant_shift(xv: float) -> float:
    return 1.0


def _cos_shift(xv: float) -> float:
    return (1 + math.cos(xv)) / 2


def _joint_log_density(
    xv: float, yv: float, shift: Callable[[float], float], neighbour: bool, scale_1: float, scale_2: float
) -> float:
    """log of the joint density of (X, Y): X ~ Lap(0|1, b1), Y | x ~ Lap(x + shift(x) | x, b2)."""
    if neighbour:  # D'
        return _lap_logpdf(xv, 1.0, scale_1) + _lap_logpdf(yv, xv, scale_2)
    return _lap_logpdf(xv, 0.0, scale_1) + _lap_logpdf(yv, xv + shift(xv), scale_2)


def _joint_renyi_2d(
    shift: Callable[[float], float], order: float, scale_1: float, scale_2: float, epsrel: float
) -> float:
    """D_alpha of h(D) vs h(D'): the joint density integrated over (x, y) by nested quadrature."""
    A = order
    opts: dict[str, Any] = {"epsabs": 0.0, "epsrel": epsrel, "limit": 200}

    def integrand(yv: float, xv: float) -> float:
        return math.exp(
            A * _joint_log_density(xv, yv, shift, False, scale_1, scale_2)
            + (1 - A) * _joint_log_density(xv, yv, shift, True, scale_1, scale_2)
        )

    def over_y(xv: float) -> float:
        lo, hi = sorted((xv, xv + shift(xv)))  # the kinks of the y-integrand
        cuts = [(-np.inf, lo), (lo, hi), (hi, np.inf)]
        return float(sum(integrate.quad(integrand, p, q, args=(xv,), **opts)[0] for p, q in cuts if q > p))

    total = sum(integrate.quad(over_y, p, q, **opts)[0] for p, q in [(-np.inf, 0), (0, 1), (1, np.inf)])
    return math.log(total) / (A - 1)


def _joint_renyi_factorised(
    shift: Callable[[float], float],
    order: float,
    scale_1: float,
    scale_2: float,
    epsrel: float,
    inner_rdp: RdpCurve,
) -> float:
    """The same, as a 1-D outer integral times the closed-form inner integral."""
    A = order
    opts: dict[str, Any] = {"epsabs": 0.0, "epsrel": epsrel, "limit": 200}

    def inner_closed(xv: float) -> float:
        c = shift(xv)
        return 1.0 if c == 0 else math.exp((A - 1) * inner_rdp(A, scale_2, sensitivity=c))

    def outer(xv: float) -> float:
        return math.exp(A * _lap_logpdf(xv, 0.0, scale_1) + (1 - A) * _lap_logpdf(xv, 1.0, scale_1))

    total = sum(
        integrate.quad(lambda xv: outer(xv) * inner_closed(xv), p, q, **opts)[0]
        for p, q in [(-np.inf, 0), (0, 1), (1, np.inf)]
    )
    return math.log(total) / (A - 1)


def adaptive_laplace_quadrature(
    order: float = 3.0,
    scale_1: float = 1.0,
    scale_2: float = 2.0,
    *,
    inner_rdp: RdpCurve = dpcore.laplace_rdp,
    atol: float = 1e-10,
    margin: float = 0.05,
    epsrel: float = 1e-12,
) -> AdaptiveLaplace:
    r"""Proposition 1 for an adaptive Laplace pair, by quadrature of the joint density.

    ``f(D) = Lap(0, b1)``, ``f(D') = Lap(1, b1)``; given the release ``x``,
    ``g(x, D) = Lap(x + c(x), b2)`` and ``g(x, D') = Lap(x, b2)``, for the
    constant shift ``c = 1`` and for ``c(x) = (1 + cos x)/2``. The Rényi
    divergence of the joint law of ``h = (f, g)`` is computed twice:

    * by nested 2-D quadrature of :math:`p^\alpha q^{1-\alpha}` over
      :math:`(x, y)`, split at every kink (relative tolerance
      ``epsrel`` per integral, the chapter's :math:`10^{-12}`);
    * factorised: a 1-D outer integral times the closed-form inner integral
      :math:`e^{(\alpha-1)\,\mathrm{inner\_rdp}(\alpha, b_2, c(x))}`.

    Tests (all deterministic, no false alarm): both ways agree within
    ``atol`` for both shifts; for the constant shift the divergence equals
    :math:`\varepsilon_1+\varepsilon_2` (Proposition 1 is tight there); for
    the cos shift it lies below :math:`\varepsilon_1+\varepsilon_2-` ``margin``.
    Controls (both must fail): the constant-shift divergence equals
    :math:`\max(\varepsilon_1, \varepsilon_2)` (composition costing only the larger
    part, as parallel composition does); the cos-shift divergence is at most
    :math:`\varepsilon_1 + \varepsilon_2(\bar c)`, the inner divergence taken at the
    *average* shift :math:`\bar c = E_{X\sim f(D)}[c(X)]` (by quadrature) instead of its
    supremum over releases -- the careless reading of "each part bounded
    independently".

    Parameters
    ----------
    order : float
        The Rényi order, > 1.
    scale_1, scale_2 : float
        The Laplace scales of ``f`` and ``g`` (sensitivities 1).
    inner_rdp : callable
        The closed form of the inner divergence, ``inner_rdp(alpha, b,
        sensitivity=c)``; default :func:`dpcore.laplace_rdp`.
    atol : float
        Absolute tolerance of the agreements.
    margin : float
        How far below :math:`\varepsilon_1+\varepsilon_2` the cos shift must be.
    epsrel : float
        Relative tolerance asked of every quadrature (the chapter: 1e-12).

    Returns
    -------
    AdaptiveLaplace
        The four divergences, ``eps_1``, ``eps_2``, evidence and controls.
    """
    args = (order, scale_1, scale_2, epsrel)
    e1, e2 = float(dpcore.laplace_rdp(order, scale_1)), float(dpcore.laplace_rdp(order, scale_2))
    c2d, cfac = _joint_renyi_2d(_constant_shift, *args), _joint_renyi_factorised(_constant_shift, *args, inner_rdp)
    k2d, kfac = _joint_renyi_2d(_cos_shift, *args), _joint_renyi_factorised(_cos_shift, *args, inner_rdp)
    density = stats.laplace(0.0, scale_1).pdf  # f(D): the average shift under it, split at the kink
    c_bar = sum(
        integrate.quad(lambda x: _cos_shift(x) * density(x), a, b, epsabs=0, epsrel=epsrel)[0]
        for a, b in ((-np.inf, 0.0), (0.0, np.inf))
    )
    tol = atol
    return AdaptiveLaplace(
        evidence=(
            Close("constant shift: 2-D joint vs factorised", c2d, cfac, atol=tol),
            Close("cos shift: 2-D joint vs factorised", k2d, kfac, atol=tol),
            Close("constant shift: 2-D joint = eps1 + eps2", c2d, e1 + e2, atol=tol),
            Compare(f"cos shift: 2-D joint < eps1 + eps2 - {margin:g}", k2d, "<", e1 + e2 - margin),
        ),
        controls=(
            Close("constant shift: 2-D joint = max(eps1, eps2)", c2d, max(e1, e2), atol=tol),
            Compare(
                f"cos shift: 2-D joint <= eps1 + eps2 at the average shift {c_bar:.4f}",
                k2d,
                "<=",
                e1 + float(inner_rdp(order, scale_2, sensitivity=c_bar)),
            ),
        ),
        order=order,
        scale_1=scale_1,
        scale_2=scale_2,
        eps_1=e1,
        eps_2=e2,
        const_2d=c2d,
        const_factorised=cfac,
        cos_2d=k2d,
        cos_factorised=kfac,
    )


@dataclass(frozen=True)
class InnerAtZeroShift(Experiment):
    """The inner divergence of the adaptive Laplace pair at one release ``x0``.

    Attributes
    ----------
    x0 : float
        The release at which the inner divergence is taken.
    inner_divergence : float
        :math:`D_\\alpha(g(x_0,D)\\|g(x_0,D'))` by quadrature.
    """

    x0: float = math.pi
    inner_divergence: float = math.nan
    sup_inner: float = math.nan


def inner_divergence_at_zero_shift(
    joint: AdaptiveLaplace, x0: float = math.pi, *, grid: int = 64, rtol: float = 1e-9
) -> InnerAtZeroShift:
    r"""The inner bound must hold for every release: the cos-shift pair, its supremum and one ``x0``.

    The inner divergence :math:`D_\alpha(g(x,D)\|g(x,D'))` of the cos-shift
    pair is computed by :func:`dpcore.renyi_divergence` (quadrature) at
    ``grid`` releases equally spaced over one period :math:`[0, 2\pi)` and at
    ``x0``. Evidence (deterministic): its largest value over the grid (at
    :math:`x=0`, shift 1) equals ``joint.eps_2`` to relative ``rtol``, and the
    joint divergence (``joint.cos_2d``, by 2-D quadrature) is at most
    :math:`\varepsilon_1` plus that supremum, as the proof with the uniform
    bound says. Control (must fail): the same comparison with the inner
    divergence at the single release ``x0`` in place of the supremum, the
    reading "the inner integral is bounded for fixed x" taken at one x; at
    :math:`x_0=\pi` the shift vanishes and the inner divergence is 0.

    Parameters
    ----------
    joint : AdaptiveLaplace
        The result of :func:`adaptive_laplace_quadrature` (order, scale of
        ``g``, ``eps_1``, ``eps_2`` and the cos-shift divergence).
    x0 : float
        The single release of the control; at ``pi`` the shift is 0.
    grid : int
        Number of releases in :math:`[0, 2\pi)` over which the supremum is taken.
    rtol : float
        Relative tolerance of supremum vs ``eps_2``.

    Returns
    -------
    InnerAtZeroShift
        ``evidence``: sup = eps2, joint <= eps1 + sup; ``controls``: joint <= eps1 + inner(x0).
    """
    A, b2 = joint.order, joint.scale_2

    def inner_at(xv: float) -> float:
        return float(
            dpcore.renyi_divergence(
                _laplace_log(xv + _cos_shift(xv), b2), _laplace_log(xv, b2), A, points=[xv], scale=b2
            )
        )

    sup = max(inner_at(xv) for xv in np.linspace(0.0, 2 * math.pi, grid, endpoint=False))
    inner = inner_at(x0)
    d, e1 = joint.cos_2d, joint.eps_1
    return InnerAtZeroShift(
        evidence=(
            Close(f"sup of the inner divergence over {grid} releases = eps2 (quadrature)", sup, joint.eps_2, rtol=rtol),
            Compare("joint D <= eps1 + sup of the inner divergence", d, "<=", e1 + sup),
        ),
        controls=(Compare(f"joint D <= eps1 + inner divergence at x = {_x_name(x0)}", d, "<=", e1 + inner),),
        x0=x0,
        inner_divergence=inner,
        sup_inner=sup,
    )


def _x_name(x0: float) -> str:
    return "pi" if x0 == math.pi else f"{x0:g}"


# --------------------------------------------------------------------------- Monte Carlo


@dataclass(frozen=True)
class AdaptiveMonteCarlo(Experiment):
    """Monte Carlo tests of :math:`E_Q[L^\\alpha]` for a non-linear adaptive Gaussian pair.

    ``evidence``/``controls`` go to the claim that the sum rule holds (its
    control: the max rule passes the same test); ``rejections`` (the product
    rule is rejected) to the claim that the wrong rules are false, whose other
    evidence the chapter computes with sympy, and whose control is the test
    of another wrong rule, :math:`\\sqrt{\\varepsilon_1^2+\\varepsilon_2^2}` (the way
    noise standard deviations, not divergences, combine), which must fail.

    Attributes
    ----------
    eps_1, eps_2 : float
        The RDP of the two Gaussian mechanisms at the order.
    variance_bound : float
        The bound on :math:`\\mathrm{Var}_Q[L^\\alpha]` given to the tests.
    truth : float
        :math:`e^{(\\alpha-1)(\\varepsilon_1+\\varepsilon_2)}`, the true mean.
    sum_rule, max_rule, product_rule : dpcore.CheckResult
        The three tests.
    rss_rule : dpcore.CheckResult
        The test of the root-sum-square rule.
    rejections, rejection_controls : tuple
        ``Rejected`` evidence of the product rule; ``Test`` of the
        root-sum-square rule, a wrong rule the same test must reject.
    """

    eps_1: float = math.nan
    eps_2: float = math.nan
    variance_bound: float = math.nan
    truth: float = math.nan
    sum_rule: Any = None
    max_rule: Any = None
    product_rule: Any = None
    rss_rule: Any = None
    rejections: tuple[Any, ...] = field(default=())
    rejection_controls: tuple[Any, ...] = field(default=())

    def __str__(self) -> str:
        return "\n".join(str(r) for r in (self.sum_rule, self.max_rule, self.product_rule, self.rss_rule))


def _likelihood_ratio_power(order: float, scale_1: float, scale_2: float) -> dpcore.Sampler:
    """A sampler of :math:`L^\\alpha` under :math:`Q=h(D')`, with :math:`L=p/q` of the joint (x, y)."""

    def sampler(rng: np.random.Generator, size: int) -> NDArray[np.float64]:
        xs = rng.normal(0.0, scale_1, size)
        ys = rng.normal(np.sin(3 * xs), scale_2)
        log_l = (stats.norm.logpdf(xs, 1.0, scale_1) - stats.norm.logpdf(xs, 0.0, scale_1)) + (
            stats.norm.logpdf(ys, np.sin(3 * xs) + 1.0, scale_2) - stats.norm.logpdf(ys, np.sin(3 * xs), scale_2)
        )
        powers: NDArray[np.float64] = np.exp(order * log_l)
        return powers

    return sampler


def adaptive_gaussian_montecarlo(
    symbolic_variance_bound: float,
    scale_1: float = 2.0,
    scale_2: float = 1.5,
    order: float = 2.0,
    *,
    n: int = 1_000_000,
    alpha: float = 2.5e-7,
    seeds: tuple[int, int, int, int] = (2026, 2027, 2028, 2029),
) -> AdaptiveMonteCarlo:
    r"""Proposition 1 by Monte Carlo for ``f = N(1|0, s1^2)``, ``g(x) = N(sin 3x + 1|sin 3x, s2^2)``.

    Under :math:`Q=h(D')` the likelihood ratio :math:`L=p/q` of the joint
    release satisfies :math:`E_Q[L^\alpha]=e^{(\alpha-1)D_\alpha(P\|Q)}`, and
    for this pair :math:`D_\alpha=\varepsilon_1+\varepsilon_2`. Each rule
    (sum, max, product of the epsilons) is tested by
    :func:`dpcore.check_mean` (median of means) with ``n`` samples, false-alarm
    probability ``alpha`` each, and the variance bound
    :math:`\mathrm{Var}_Q[L^\alpha]\le E_Q[L^{2\alpha}]
    = e^{(2\alpha-1)(\varepsilon_1(2\alpha)+\varepsilon_2(2\alpha))}`,
    computed from :func:`dpcore.gaussian_rdp` and compared with
    ``symbolic_variance_bound`` (the chapter's, from its sympy affinity).

    Error budget. Claim "sum rule": the sum test (``alpha``) plus, as a
    control, the max test, whose chance of passing the wrong rule is bounded
    by :func:`dpbook.evidence.miss_probability` from the truth (the two
    means differ by more than twice the test's radius). Claim "wrong rules
    are false": the product test's ``Rejected`` piece (its miss
    probability, likewise) and, as a control, the root-sum-square test (its
    miss probability, likewise). The ledger adds them up.

    Parameters
    ----------
    symbolic_variance_bound : float
        The variance bound as derived symbolically; must agree with dpcore's.
    scale_1, scale_2 : float
        Noise standard deviations of ``f`` and ``g`` (sensitivities 1).
    order : float
        The Rényi order (the chapter: 2).
    n : int
        Samples per test.
    alpha : float
        False-alarm probability of each test.
    seeds : (int, int, int, int)
        The streams of the sum, max, product and root-sum-square tests.

    Returns
    -------
    AdaptiveMonteCarlo
        The three ``CheckResult`` and both claims' evidence and controls.
    """
    e1 = float(dpcore.gaussian_rdp(order, scale_1))
    e2 = float(dpcore.gaussian_rdp(order, scale_2))
    var_bound = math.exp(
        (2 * order - 1) * (dpcore.gaussian_rdp(2 * order, scale_1) + dpcore.gaussian_rdp(2 * order, scale_2))
    )
    sampler = _likelihood_ratio_power(order, scale_1, scale_2)

    def mc_check(claimed_eps: float, name: str, seed: int) -> dpcore.CheckResult:
        return dpcore.check_mean(
            sampler,
            n,
            math.exp((order - 1) * claimed_eps),
            variance_bound=var_bound,
            alpha=alpha,
            rng=seed,
            name=name,
        )

    truth = math.exp((order - 1) * (e1 + e2))
    lam = f"{order:g}"
    res_sum = mc_check(e1 + e2, f"E_Q[L^{lam}] = exp(eps1 + eps2)", seeds[0])
    res_max = mc_check(max(e1, e2), "wrong rule: exp(max(eps1, eps2))", seeds[1])
    res_prod = mc_check(e1 * e2, "wrong rule: exp(eps1 * eps2)", seeds[2])
    res_rss = mc_check(math.hypot(e1, e2), "wrong rule: exp(sqrt(eps1^2 + eps2^2))", seeds[3])
    d1, d2 = 2 * scale_1**2, 2 * scale_2**2
    return AdaptiveMonteCarlo(
        evidence=(
            res_sum,
            Close(f"eps1 = {lam}/{d1:g} (dpcore.gaussian_rdp)", e1, order / d1, rtol=1e-15),
            Close(f"eps2 = {lam}/{d2:g}", e2, order / d2, rtol=1e-15),
            Close(
                "variance bound from dpcore = from the symbolic affinity",
                var_bound,
                float(symbolic_variance_bound),
                rtol=1e-12,
            ),
        ),
        controls=(Test(res_max.name, result=res_max, true_value=truth),),
        eps_1=e1,
        eps_2=e2,
        variance_bound=var_bound,
        truth=truth,
        sum_rule=res_sum,
        max_rule=res_max,
        product_rule=res_prod,
        rejections=(Rejected(res_prod.name, result=res_prod, true_value=truth),),
        rejection_controls=(Test(res_rss.name, result=res_rss, true_value=truth),),
        rss_rule=res_rss,
    )


# --------------------------------------------------------------------------- order below one


@dataclass(frozen=True)
class BelowOrderOne(Experiment):
    """The proof's steps 3 and 4 and the RDP-to-DP conversion at an order below 1.

    Attributes
    ----------
    inner_at_pi : float
        The inner integral :math:`I(\\pi)`.
    joint_integral : float
        :math:`\\int p^\\alpha q^{1-\\alpha}` of the joint law, by quadrature.
    step3_bound, step4_bound : float
        :math:`e^{(\\alpha-1)\\varepsilon_2}`, :math:`e^{(\\alpha-1)(\\varepsilon_1+\\varepsilon_2)}`.
    bogus : float
        The "epsilon" the conversion formula gives at the order below 1.
    exact_one : float
        The exact epsilon of one Gaussian release (sigma 1) at ``delta``.
    """

    inner_at_pi: float = math.nan
    joint_integral: float = math.nan
    step3_bound: float = math.nan
    step4_bound: float = math.nan
    bogus: float = math.nan
    exact_one: float = math.nan

    def __str__(self) -> str:
        return (
            f"I(pi) = {self.inner_at_pi:.6f} > {self.step3_bound:.6f};  "
            f"joint integral {self.joint_integral:.6f} > {self.step4_bound:.6f}"
        )


def alpha_below_one(
    inner: Callable[[float], float],
    outer: Callable[[float], float],
    eps_1: float,
    eps_2: float,
    divergence: float,
    *,
    order: float = 0.5,
    delta: float = 1e-5,
    grid: int = 64,
) -> BelowOrderOne:
    r"""Why Rényi DP needs an order above 1: Proposition 1's proof and the conversion at an order below 1.

    With :math:`\alpha<1` the factor :math:`\alpha-1` is negative, so
    :math:`D_\alpha\le\varepsilon_2` means :math:`I(x)\ge e^{(\alpha-1)\varepsilon_2}`.
    Given the chapter's derived inner integral :math:`I(x)` and outer integrand
    (both lambdified at the order), :math:`I` is evaluated at ``grid`` releases
    over :math:`[0, 2\pi)` (one period of the cos shift) and the joint integral
    :math:`\int \mathrm{outer}\,I` by quadrature (relative :math:`10^{-12}`).
    Evidence (deterministic): the reversed step 3, :math:`\min_x I(x) \ge
    e^{(\alpha-1)\varepsilon_2}`; the conclusion :math:`D_\alpha=\log(\text{joint})/(\alpha-1)\le
    \varepsilon_1+\varepsilon_2` survives; Mironov's conversion
    :math:`\varepsilon=D_\alpha+\log(1/\delta)/(\alpha-1)` of one Gaussian release
    (sigma 1) is negative; and :func:`dpcore.rdp_to_dp` refuses the order.
    Controls (the proof and the conversion read as if :math:`\alpha>1`, must
    fail): step 3 as written, :math:`\max_x I(x)\le e^{(\alpha-1)\varepsilon_2}`;
    step 4, joint :math:`\le e^{(\alpha-1)(\varepsilon_1+\varepsilon_2)}`; the
    conversion's epsilon is at least the exact one
    (:func:`dpcore.exact_gaussian_composition_epsilon`).

    Parameters
    ----------
    inner, outer : callable
        :math:`I(x)` and the outer integrand :math:`X^\alpha X'^{1-\alpha}` at the order.
    eps_1, eps_2 : float
        The "epsilons" of the two mechanisms at the order.
    divergence : float
        :math:`D_\alpha` of one Gaussian release (sigma 1) at the order, as derived.
    order : float
        The order, in (0, 1).
    delta : float
        The delta of the conversion.
    grid : int
        Releases over one period at which :math:`I` is evaluated.

    Returns
    -------
    BelowOrderOne
        The integrals, bounds and epsilons, evidence and controls.
    """
    joint = integrate.quad(lambda xv: outer(xv) * inner(xv), -np.inf, np.inf, epsabs=0, epsrel=1e-12)[0]
    step3 = math.exp((order - 1) * eps_2)
    step4 = math.exp((order - 1) * (eps_1 + eps_2))
    values = [inner(xv) for xv in np.linspace(0.0, 2 * math.pi, grid, endpoint=False)]
    at_pi = inner(math.pi)
    bogus = divergence + math.log(1 / delta) / (order - 1)
    exact_one = dpcore.exact_gaussian_composition_epsilon(1.0, 1, delta)
    try:
        dpcore.rdp_to_dp([order], [divergence], delta)
        refused = False
    except ValueError as err:
        refused = "orders" in str(err)
    a = "1/2" if order == 0.5 else f"{order:g}"
    return BelowOrderOne(
        evidence=(
            Compare(f"alpha = {a}: min over x of I(x) >= exp((alpha-1) eps2)", min(values), ">=", step3),
            Compare(
                f"alpha = {a}: D_{a} of the pair still <= eps1 + eps2",
                math.log(joint) / (order - 1),
                "<=",
                eps_1 + eps_2,
            ),
            Compare(f"alpha = {a}: the conversion's epsilon is negative", bogus, "<", 0.0),
            Fact("dpcore.rdp_to_dp refuses orders <= 1", refused),
        ),
        controls=(
            Compare(f"alpha = {a}: step 3, max over x of I(x) <= exp((alpha-1) eps2)", max(values), "<=", step3),
            Compare(f"alpha = {a}: step 4, joint integral <= exp((alpha-1)(eps1+eps2))", joint, "<=", step4),
            Compare(f"alpha = {a}: the conversion gives an epsilon >= the exact one", bogus, ">=", exact_one),
        ),
        inner_at_pi=at_pi,
        joint_integral=joint,
        step3_bound=step3,
        step4_bound=step4,
        bogus=bogus,
        exact_one=exact_one,
    )


# --------------------------------------------------------------------------- conversion and accounting


@dataclass(frozen=True)
class ConversionSweep(Experiment):
    """The RDP-to-DP conversion checked against the exact Gaussian and Laplace profiles.

    Attributes
    ----------
    n_checked : int
        How many (order, sigma, k, delta) conversions were checked.
    n_zero : int
        How many returned epsilons were 0.
    worst_delta_ratio, worst_returned, worst_wrong_ratio : float
        Largest delivered/asked delta: of the improved conversion at every
        order, at the returned epsilon, of the slip (alpha for alpha - 1).
    min_excess : float
        Smallest (returned epsilon - exact epsilon).
    lap_ratio, lap_vs_lib : float
        Largest delivered/asked delta for Laplace; the profile vs
        :meth:`dpcore.mechanisms.LaplaceMechanism.delta`.
    """

    n_checked: int = 0
    n_zero: int = 0
    worst_delta_ratio: float = 0.0
    worst_returned: float = 0.0
    worst_wrong_ratio: float = 0.0
    min_excess: float = math.inf
    lap_ratio: float = 0.0
    lap_vs_lib: float = 0.0


def conversion_sweep(
    orders: ArrayLike = dpcore.DEFAULT_RDP_ORDERS,
    sigmas: Sequence[float] = (0.5, 1.0, 5.0, 20.0),
    counts: Sequence[int] = (1, 10, 100, 1000),
    deltas: Sequence[float] = (0.5, 0.2, 0.05, 1e-3, 1e-5, 1e-10),
    laplace_scales: Sequence[float] = (0.1, 0.5, 2.0),
    laplace_deltas: Sequence[float] = (0.5, 0.05, 1e-2, 1e-6),
    *,
    convert: Callable[[Any, Any, float], tuple[float, float]] = dpcore.rdp_to_dp,
) -> ConversionSweep:
    r"""The conversion :math:`\varepsilon=\tau+\log(1-1/\alpha)-(\log\delta+\log\alpha)/(\alpha-1)` is valid.

    For ``k`` Gaussian releases with noise sigma (RDP :math:`\tau=k\alpha/(2\sigma^2)`),
    the exact privacy profile :func:`dpcore.gaussian_delta` with sensitivity
    :math:`\sqrt k` gives the delta actually delivered at an epsilon. Over the
    grid it checks (deterministic, no false alarm):

    * the improved constant :math:`\log(1-1/\alpha)-\log(\alpha)/(\alpha-1)`
      is below the classical 0 at every order;
    * at every order the improved epsilon (where > 0) delivers at most the
      asked delta;
    * ``convert`` (default :func:`dpcore.rdp_to_dp`) returns an epsilon at
      least the exact one (:func:`dpcore.exact_gaussian_composition_epsilon`)
      that delivers at most the asked delta;
    * Laplace: at the epsilon ``convert`` returns, the exact profile
      :math:`1-e^{(\varepsilon-1/b)/2}` is at most the asked delta and agrees
      with :meth:`dpcore.mechanisms.LaplaceMechanism.delta` to 1e-15.

    Control (must fail): Mironov's conversion with :math:`\alpha` for
    :math:`\alpha-1`, :math:`\min_\alpha \tau - \log\delta/\alpha`, delivers
    at most the asked delta.

    Parameters
    ----------
    orders : array_like
        The grid of orders (default ``dpcore.DEFAULT_RDP_ORDERS``).
    sigmas, counts, deltas : sequence
        The Gaussian grid.
    laplace_scales, laplace_deltas : sequence of float
        The Laplace grid (sensitivity 1).
    convert : callable
        The conversion under test, ``convert(orders, rdp, delta) -> (eps, order)``.

    Returns
    -------
    ConversionSweep
        The worst ratios and counts, evidence and the control.
    """
    grid = np.asarray(orders, dtype=float)
    c_improved = np.log1p(-1 / grid) - np.log(grid) / (grid - 1)
    worst_delta_ratio, worst_wrong_ratio, min_excess, n_checked = 0.0, 0.0, np.inf, 0
    worst_returned, n_zero = 0.0, 0
    for sig in sigmas:
        for k in counts:
            for dlt in deltas:
                tau_k = k * dpcore.gaussian_rdp(grid, sig)
                eps_each = tau_k + c_improved - math.log(dlt) / (grid - 1)
                eps_each = eps_each[eps_each > 0]
                delivered = dpcore.gaussian_delta(sig, math.sqrt(k), eps_each)  # at every order
                worst_delta_ratio = max(worst_delta_ratio, float(np.max(delivered, initial=0)) / dlt)
                eps_best, _ = convert(grid, tau_k, dlt)
                worst_returned = max(worst_returned, float(dpcore.gaussian_delta(sig, math.sqrt(k), eps_best)) / dlt)
                n_zero += eps_best == 0.0
                min_excess = min(min_excess, eps_best - dpcore.exact_gaussian_composition_epsilon(sig, k, dlt))
                # a plausible slip: Mironov's conversion with alpha for alpha - 1
                eps_wrong = float(np.min(tau_k - math.log(dlt) / grid))
                worst_wrong_ratio = max(
                    worst_wrong_ratio, float(dpcore.gaussian_delta(sig, math.sqrt(k), eps_wrong)) / dlt
                )
                n_checked += len(eps_each)
    lap_ratio, lap_vs_lib = 0.0, 0.0
    for scale in laplace_scales:
        for dlt in laplace_deltas:
            eps_l, _ = convert(grid, dpcore.laplace_rdp(grid, scale), dlt)
            exact_delta = -math.expm1((eps_l - 1 / scale) / 2) if eps_l < 1 / scale else 0.0
            lap_ratio = max(lap_ratio, exact_delta / dlt)
            lib = float(dpcore.LaplaceMechanism(scale).delta(eps_l))  # the same profile
            lap_vs_lib = max(lap_vs_lib, abs(lib - exact_delta))
    n_lap = len(laplace_scales) * len(laplace_deltas)
    return ConversionSweep(
        evidence=(
            Fact("improved constant < classical (0) at every order", bool(np.all(c_improved < 0))),
            Compare(
                f"Gaussian: largest delivered/asked delta over {n_checked} (order, sigma, k, delta)",
                worst_delta_ratio,
                "<=",
                1.0,
            ),
            Compare(f"{getattr(convert, '__name__', 'convert')} - exact epsilon (smallest)", min_excess, ">=", 0.0),
            Compare(
                f"Gaussian: delivered/asked delta at the returned epsilon ({n_zero} of them 0)",
                worst_returned,
                "<=",
                1.0,
            ),
            Compare(f"Laplace: largest delivered/asked delta ({n_lap} cases)", lap_ratio, "<=", 1.0),
            Compare("the profile above vs dpcore.LaplaceMechanism.delta", lap_vs_lib, "<=", 1e-15),
        ),
        controls=(Compare("alpha for alpha - 1: largest delivered/asked delta", worst_wrong_ratio, "<=", 1.0),),
        n_checked=n_checked,
        n_zero=int(n_zero),
        worst_delta_ratio=worst_delta_ratio,
        worst_returned=worst_returned,
        worst_wrong_ratio=worst_wrong_ratio,
        min_excess=float(min_excess),
        lap_ratio=lap_ratio,
        lap_vs_lib=lap_vs_lib,
    )


@dataclass(frozen=True)
class Accounting(Experiment):
    """Total epsilon of ``k`` Gaussian releases by five methods, one row per ``k``.

    Attributes
    ----------
    k, basic, advanced, classical, improved, exact : numpy.ndarray
        The counts and, for each, the epsilon of basic composition, advanced
        composition (Dwork--Rothblum--Vadhan), RDP with the classical and the
        improved conversion, and the exact epsilon.
    """

    k: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    basic: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    advanced: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    classical: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    improved: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    exact: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))

    @property
    def bounds(self) -> dict[str, NDArray[np.float64]]:
        """The four upper bounds, labelled for :func:`dpbook.figures.composition_bounds`."""
        return {
            "basic composition": self.basic,
            "advanced composition (DRV)": self.advanced,
            "RDP, classical conversion": self.classical,
            "RDP, improved conversion": self.improved,
        }


def accounting(
    sigma: float = 5.0,
    delta: float = 1e-5,
    counts: Sequence[int] | None = None,
    *,
    exact_epsilon: Callable[[float, int, float], float] = dpcore.exact_gaussian_composition_epsilon,
) -> Accounting:
    r"""Basic, advanced and RDP composition of ``k`` Gaussian releases against the exact epsilon.

    For each ``k`` (default 25 counts geometrically spaced in [1, 1000]):
    basic composition :math:`k\varepsilon_0(\delta/k)`; advanced composition
    :math:`\sqrt{2k\log(2/\delta)}\,\varepsilon_0+k\varepsilon_0(e^{\varepsilon_0}-1)`
    with :math:`\varepsilon_0=\varepsilon_0(\delta/(2k))`;
    :class:`dpcore.RdpAccountant` with the improved and the classical
    conversion; and ``exact_epsilon(sigma, k, delta)`` (default
    :func:`dpcore.exact_gaussian_composition_epsilon`). Deterministic
    evidence: exact <= improved <= classical; improved within 10 % of exact
    and its ratio falls with ``k``; improved closes more than 30 % of the
    gap classical - exact; advanced > basic here; every answer >= exact and
    delivers at most ``delta`` by the exact profile
    (:func:`dpcore.gaussian_delta`). Control (must fail): the same validity
    check of the answer of a plausible slip, RDP curves composed like
    standard deviations (:math:`\sqrt k` times one release's curve, converted
    by :func:`dpcore.rdp_to_dp`): it delivers at most ``delta``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation of each release (sensitivity 1).
    delta : float
        The target delta.
    counts : sequence of int, optional
        The numbers of releases.
    exact_epsilon : callable
        The exact epsilon under comparison.

    Returns
    -------
    Accounting
        The rows, evidence and the control.
    """
    ks = np.unique(np.geomspace(1, 1000, 25).round().astype(int)) if counts is None else np.asarray(counts)
    rows = []
    for k in ks:
        k = int(k)
        eps0 = dpcore.gaussian_epsilon(sigma, delta / k)
        basic = k * eps0
        eps0_adv = dpcore.gaussian_epsilon(sigma, delta / (2 * k))
        advanced = math.sqrt(2 * k * math.log(2 / delta)) * eps0_adv + k * eps0_adv * math.expm1(eps0_adv)
        acc = dpcore.RdpAccountant()
        acc.compose_gaussian(sigma, count=k)
        improved = acc.epsilon(delta)
        classical, _ = dpcore.classical_rdp_to_dp(acc.orders, acc.rdp, delta)
        exact = exact_epsilon(sigma, k, delta)
        # the control's slip: RDP curves composed like standard deviations, sqrt(k) x one curve
        sqrt_rule, _ = dpcore.rdp_to_dp(acc.orders, math.sqrt(k) * dpcore.gaussian_rdp(acc.orders, sigma), delta)
        rows.append((k, basic, advanced, classical, improved, exact, sqrt_rule))
    K, BASIC, ADV, CLASSICAL, IMPROVED, EXACT, SQRT = np.array(rows).T
    cols = [("basic", BASIC), ("advanced", ADV), ("classical", CLASSICAL), ("improved", IMPROVED)]
    k_first, k_last = int(K[0]), int(K[-1])
    return Accounting(
        evidence=(
            Compare("max (exact - improved)", float(np.max(EXACT - IMPROVED)), "<=", 0.0),
            Compare("max (improved - classical)", float(np.max(IMPROVED - CLASSICAL)), "<=", 0.0),
            Compare("max improved/exact (within 10 %)", float(np.max(IMPROVED / EXACT)), "<", 1.10),
            Compare(
                f"improved/exact falls from k = {k_first} to k = {k_last}",
                (IMPROVED / EXACT)[-1],
                "<",
                (IMPROVED / EXACT)[0],
            ),
            Compare(
                "max (improved - exact)/(classical - exact)",
                float(np.max((IMPROVED - EXACT) / (CLASSICAL - EXACT))),
                "<",
                0.7,
            ),
            Compare(f"min (advanced - basic) at sigma = {sigma:g}, k <= {k_last}", float(np.min(ADV - BASIC)), ">", 0),
            *[Compare(f"{name}: min (answer - exact)", float(np.min(col - EXACT)), ">=", 0.0) for name, col in cols],
            *[
                Compare(
                    f"{name}: max delivered/asked delta",
                    max(dpcore.gaussian_delta(sigma, math.sqrt(k), e) for k, e in zip(K, col, strict=True)) / delta,
                    "<=",
                    1.0,
                )
                for name, col in cols
            ],
        ),
        controls=(
            Compare(
                "wrong: RDP composed as sqrt(k) x one curve: max delivered/asked delta",
                max(dpcore.gaussian_delta(sigma, math.sqrt(k), e) for k, e in zip(K, SQRT, strict=True)) / delta,
                "<=",
                1.0,
            ),
        ),
        k=K,
        basic=BASIC,
        advanced=ADV,
        classical=CLASSICAL,
        improved=IMPROVED,
        exact=EXACT,
    )


def exact_reference(
    quoted: Mapping[float, Sequence[float]],
    delta: float = 1e-5,
    counts: Sequence[int] = (1, 10, 100, 1000),
    *,
    rtol: float = 1e-12,
) -> Experiment:
    r"""The exact epsilons the chapter quotes, against a 50-digit reference.

    ``k`` Gaussian releases of noise :math:`\sigma` (sensitivity 1) compose
    exactly to one release of sensitivity :math:`\sqrt k`, so the reference is
    :func:`dpbook.reference.gaussian_epsilon` ``(sigma, delta,
    sensitivity=sqrt(k))`` (mpmath, independent of dpcore). For each noise
    sigma in ``quoted`` and each count ``k`` in ``counts`` (exact facts, no
    false alarm): :func:`dpcore.exact_gaussian_composition_epsilon` (sigma,
    k, delta) is within ``rtol`` of the reference, and the quoted value is the
    reference rounded to 4 significant digits. Control (must fail): the RDP
    accountant's answer for the first sigma and count rounds to the same 4
    digits as the reference.

    Parameters
    ----------
    quoted : mapping of float to sequence of float
        For each sigma, the quoted epsilons, one per count.
    delta : float
        The delta of the quoted epsilons.
    counts : sequence of int
        The numbers of releases.
    rtol : float
        Relative tolerance of dpcore against the reference.

    Returns
    -------
    Experiment
        Per point a ``Close`` (dpcore) and a ``Fact`` (the quoted value); the
        accountant's control.

    Raises
    ------
    ValueError
        If a sigma's values are not one per count.
    """
    checks: list[Evidence] = []
    for sig, values in quoted.items():
        for k, value in zip(counts, values, strict=True):
            ref = float(mpref.gaussian_epsilon(sig, delta, sensitivity=math.sqrt(k)))
            got = dpcore.exact_gaussian_composition_epsilon(sig, k, delta)
            checks.append(Close(f"sigma = {sig}, k = {k}: dpcore vs mpmath reference", got, ref, rtol=rtol))
            checks.append(Fact(f"sigma = {sig}, k = {k}: mpmath {ref:.6g} rounds to {value}", _digits4(ref) == value))
    sig0 = next(iter(quoted))
    ref0 = float(mpref.gaussian_epsilon(sig0, delta, sensitivity=math.sqrt(counts[0])))
    rdp_one = dpcore.RdpAccountant()
    rdp_one.compose_gaussian(sig0, count=counts[0])
    return Experiment(
        evidence=tuple(checks),
        controls=(
            Fact(
                f"the RDP accountant's answer for sigma = {sig0:g}, k = {counts[0]} rounds to "
                f"{_digits4(ref0):g} (mpmath)",
                _digits4(rdp_one.epsilon(delta)) == _digits4(ref0),
            ),
        ),
    )


def _digits4(x: float) -> float:
    """``x`` rounded to 4 significant digits."""
    return float(f"{x:.4g}")
