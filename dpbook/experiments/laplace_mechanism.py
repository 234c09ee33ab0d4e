r"""Experiments of the chapter *The Laplace mechanism is epsilon-DP* (``03_laplace_mechanism``).

Each function runs one experiment of the chapter with the parameters and the
integer seeds the chapter passes, and returns an :class:`~dpbook.experiments.Experiment`
(or a subclass carrying the numbers the chapter prints) whose ``evidence`` must
hold and whose ``controls`` must fail. The symbolic derivations of the chapter
(the density ratio, the triangle step region by region, the law and the mean
of the privacy loss) stay in the notebook; the functions here receive what
the notebook derived (a lambdified formula, the region table) where a check
compares it with :mod:`dpcore`.

A *release* here is a callable ``release(values, rng)`` returning one noisy
release per entry of ``values`` (see :func:`laplace_release`); the functions
take them as arguments so that the flawed mechanisms of :mod:`dpbook.flawed`
can be passed in their place.

Error budgets: every Monte Carlo test carries its false-alarm probability
``alpha``; the ledger adds the alphas of one record (union bound) and refuses
a record above :data:`dpbook.evidence.BOOK_ALPHA`. The defaults below are the
chapter's: each function's docstring lists its tests and their alphas.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

import dpcore
from dpbook import flawed
from dpbook.evidence import Close, Compare, Equal, Fact, Rejected, Test
from dpbook.experiments import Experiment
from dpcore._validation import check_positive_finite
from dpcore.event_ratios import EventRatioBounds, event_detection_miss, event_ratio_bounds, sample_interval_ratio_bounds
from dpcore.montecarlo import CheckResult, check_bounded_mean, check_cdf, check_probability
from dpcore.privacy_loss import (
    IntervalRatioMax,
    laplace_interval_probability,
    laplace_kl_divergence,
    laplace_max_interval_log_ratio,
    laplace_privacy_loss,
)

__all__ = [
    "Release",
    "laplace_release",
    "stray_factor_two_release",
    "declared_loss",
    "loss_cdf",
    "seed000_point_probability",
    "privacy_loss_formula",
    "TriangleStep",
    "triangle_step",
    "VectorL1",
    "vector_l1",
    "seed004_chain",
    "IntervalRatios",
    "interval_ratios",
    "ProbabilityAsDensity",
    "probability_as_density",
    "noiseless_release",
    "EventSetAsRange",
    "event_set_as_range",
    "ReleaseLaw",
    "release_law",
    "LossDistribution",
    "privacy_loss_distribution",
    "kl_against_dpcore",
    "KLMean",
    "kl_mean",
    "EventRatios",
    "event_ratios",
    "StrayFactorTwo",
    "best_test_success",
    "stray_factor_two",
    "VectorCalibrations",
    "vector_releases",
    "vector_calibrations",
    "SumUpperLimit",
    "sum_upper_limit",
]

Release = Callable[[NDArray[np.float64], np.random.Generator], Any]
"""``release(values, rng)``: one noisy release of each entry (row) of ``values``."""

TOL = 1e-12
"""Floating-point slack of the exact (quadrature-free, closed-form) comparisons."""


# --------------------------------------------------------------------------- releases and samplers


def laplace_release(sensitivity: float, epsilon: float) -> Release:
    """The Laplace mechanism :func:`dpcore.laplace_mechanism` as a release ``(values, rng) -> values + noise``."""
    return lambda vals, r: dpcore.laplace_mechanism(vals, sensitivity, epsilon, rng=r)


def stray_factor_two_release(sensitivity: float, epsilon: float) -> Release:
    r"""Noise of scale :math:`\Delta/(2\varepsilon)` (:func:`dpbook.flawed.laplace_stray_factor_two`) as a release."""
    return lambda vals, r: flawed.laplace_stray_factor_two(vals, sensitivity, epsilon, rng=r)


def declared_loss(
    release: Release, value: float, value_prime: float, scale: float
) -> Callable[[np.random.Generator, int], Any]:
    r"""Sampler of the privacy loss of ``release``'s outputs on ``value``, from the *declared* densities.

    Each draw is :math:`L(z) = \log p_D(z)/p_{D'}(z)` computed with
    :func:`dpcore.laplace_privacy_loss` for :math:`\mathrm{Lap}(\text{value}, \text{scale})`
    against :math:`\mathrm{Lap}(\text{value\_prime}, \text{scale})`, at
    :math:`z` drawn from ``release`` (which may be a flawed mechanism).
    """
    return lambda rng_, size: laplace_privacy_loss(
        release(np.full(size, float(value)), rng_), value, value_prime, scale
    )


def loss_cdf(
    cdf_inner: Callable[[Any, float], Any], levels: ArrayLike, epsilon: float, power: float = 1.0
) -> NDArray[np.float64]:
    r"""CDF of the privacy loss :math:`L` at ``levels``, from the derived CDF on :math:`[-\varepsilon, \varepsilon)`.

    ``cdf_inner(l, eps)`` is the derived :math:`P[L \le l]` for
    :math:`-\varepsilon \le l < \varepsilon`; below :math:`-\varepsilon` the CDF
    is 0 and from :math:`\varepsilon` on it is 1 (the atom :math:`P[L=\varepsilon]`).
    ``power = 2`` gives the law of :math:`L` (computed from the declared scale)
    when the noise has half the declared scale: then
    :math:`2 P[L\le l] = (2 F(l))^2` with :math:`F` the derived inner CDF.
    """
    l_ = np.asarray(levels, dtype=float)
    inner = cdf_inner(np.clip(l_, -epsilon, epsilon), epsilon)
    inner = 0.5 * (2 * inner) ** power
    return np.where(l_ < -epsilon, 0.0, np.where(l_ >= epsilon, 1.0, inner))


def seed000_point_probability(y: ArrayLike, epsilon: float, sensitivity: float) -> float:
    r"""Seed 000's "probability" of the output point ``y`` (a density, not a probability).

    :math:`\prod_i \frac{\varepsilon}{2\Delta} e^{-\varepsilon|y_i|/\Delta}` is the
    *density* of :math:`M(D)` at ``y`` for :math:`f(D) = 0`; a point has probability 0.
    """
    return float(np.prod(epsilon / (2 * sensitivity) * np.exp(-epsilon * np.abs(y) / sensitivity)))


def _rel_gap(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Largest relative gap ``max |a - b| / b``."""
    return float(np.max(np.abs(a - b) / b))


def _declared_loss_cdf(levels: ArrayLike, u: float, v: float, scale: float, noise_scale: float) -> NDArray[np.float64]:
    r"""Exact CDF of the declared loss :math:`L(z) = (|z-v| - |z-u|)/\text{scale}`, :math:`z \sim \mathrm{Lap}(u, b_n)`.

    :math:`b_n` is ``noise_scale``.

    :math:`L` is monotone in :math:`z` between the points and constant
    (:math:`\pm|v-u|/\text{scale}`) beyond them, so each value of the CDF is
    one interval probability (:func:`dpcore.laplace_interval_probability`):
    independent of any derived formula, it is the true law of a release whose
    noise scale is ``noise_scale``.
    """
    l_ = np.asarray(levels, dtype=float)
    d, mid = abs(v - u) / scale, (u + v) / 2
    cut = np.clip(l_, -d, d) * scale / 2
    if u < v:  # L decreases in z: L <= l iff z >= mid - l scale / 2
        inner = laplace_interval_probability(mid - cut, np.inf, u, noise_scale)
    else:
        inner = laplace_interval_probability(-np.inf, mid + cut, u, noise_scale)
    return np.where(l_ < -d, 0.0, np.where(l_ >= d, 1.0, inner))


def _best_detection_miss(p: NDArray[np.float64], q: NDArray[np.float64], n: int, epsilon: float, alpha: float) -> float:
    """Smallest :func:`dpcore.event_ratios.event_detection_miss` over the events and both directions.

    ``p[k]``, ``q[k]``: the true probabilities of event ``k`` under :math:`D`
    and :math:`D'` (``n`` releases each, all events tested together). The
    check misses only if it misses every violation, so the smallest bound
    over the violated events bounds the miss; ``nan`` if no event is violated
    (by more than a relative :math:`10^{-9}`, so that rounding makes no violation).
    """
    misses = [
        event_detection_miss(a_, b_, n, n, epsilon, events=p.size, alpha=alpha)
        for a_, b_ in [*zip(p, q, strict=True), *zip(q, p, strict=True)]
        if a_ > math.exp(epsilon) * b_ * (1 + 1e-9)  # a tie within rounding is no violation
    ]
    return min(misses, default=math.nan)


# --------------------------------------------------------------------------- step (i): the density ratio


def privacy_loss_formula(
    log_ratio: Callable[[NDArray[np.float64]], Any],
    u: float = 0.0,
    v: float = 1.0,
    sensitivity: float = 1.0,
    epsilon: float = 1.0,
    z_grid: ArrayLike | None = None,
) -> Experiment:
    r"""The derived log density ratio against :func:`dpcore.laplace_privacy_loss` on a grid of outputs.

    Evidence: :math:`\max_z |\log r(z) - L_{\rm dpcore}(z)| \le 10^{-12}` over
    ``z_grid`` (default: 71 points in :math:`[-3, 4]`), where ``log_ratio`` is the
    chapter's derived :math:`\log p_D(z)/p_{D'}(z)` lambdified at
    :math:`u, v, \Delta, \varepsilon`, and dpcore's loss uses the scale
    :func:`dpcore.laplace_scale` ``(sensitivity, epsilon)``. Deterministic: no
    false-alarm budget.

    Parameters
    ----------
    log_ratio : callable
        The derived log ratio as a function of ``z`` (numpy-vectorised).
    u, v : float
        :math:`f(D)` and :math:`f(D')`.
    sensitivity, epsilon : float
        :math:`\Delta` and :math:`\varepsilon`.
    z_grid : array_like, optional
        The outputs compared.

    Returns
    -------
    Experiment
        One :class:`~dpbook.evidence.Compare`, no controls.
    """
    zs = np.linspace(-3.0, 4.0, 71) if z_grid is None else np.asarray(z_grid, dtype=float)
    loss_lib = laplace_privacy_loss(zs, u, v, dpcore.laplace_scale(sensitivity, epsilon))
    gap = float(np.max(np.abs(log_ratio(zs) - loss_lib)))
    return Experiment(
        evidence=(Compare("formula vs dpcore.laplace_privacy_loss (max abs difference)", gap, "<=", TOL),)
    )


# --------------------------------------------------------------------------- step (ii): the triangle step


@dataclass(frozen=True)
class TriangleStep(Experiment):
    """The region table of the triangle step: ``rows`` of (order, region, g, ``|u-v|``, slack)."""

    rows: tuple[tuple[Any, ...], ...] = ()

    @property
    def table(self) -> str:
        """The table as the chapter prints it, one line per region."""
        return "\n".join(
            f"{r[0]:7s} {r[1]:11s}  g = {str(r[2]):7s} |u-v| = {str(r[3]):6s} slack = {r[4]}" for r in self.rows
        )


def triangle_step(rows: Sequence[tuple[Any, ...]]) -> TriangleStep:
    r"""Verdicts on the triangle step :math:`g(z) = |z-v| - |z-u| \le |u-v|` from the derived region table.

    ``rows`` are the chapter's sympy results, one per region of :math:`z`:
    ``(order, region, g, |u-v|, slack)`` with ``slack = |u-v| - g`` simplified
    under :math:`p, q \ge 0`. Evidence: on each region sympy *proves*
    ``slack >= 0`` (``is_nonnegative is True``; an undecided sign counts as
    false). Control, the same proof for the bound with seed 000's stray factor
    :math:`\tfrac12`: :math:`g \le |u-v|/2` on every region (sympy must fail to
    prove :math:`|u-v|/2 - g \ge 0` on some region: beyond both points on the
    side of :math:`u` it is :math:`-|u-v|/2`). Deterministic: no false-alarm budget.

    Parameters
    ----------
    rows : sequence of tuple
        ``(order, region, g, distance, slack)`` per region (sympy expressions).

    Returns
    -------
    TriangleStep
        The rows (``.table`` prints them) with one Fact per region and one control.
    """
    rows_t = tuple(tuple(r) for r in rows)
    return TriangleStep(
        evidence=tuple(Fact(f"slack >= 0 ({r[0]}, {r[1]})", r[4].is_nonnegative is True) for r in rows_t),
        controls=(
            Fact(
                "with the stray 1/2: g <= |u - v|/2 on every region",
                all((r[3] / 2 - r[2]).is_nonnegative is True for r in rows_t),
            ),
        ),
        rows=rows_t,
    )


# --------------------------------------------------------------------------- vector queries


@dataclass(frozen=True)
class VectorL1(Experiment):
    """Symbolic vector case: ``ratios[d]`` is the simplified density ratio for dimension ``d``."""

    ratios: Mapping[int, Any] = field(default_factory=dict)


def _vector_case(dim: int, regions: Mapping[Any, Mapping[Any, Any]], scale: Any, p: Any, q: Any) -> dict[str, Any]:
    """Ratio, slacks on every region combination and the corner values, for dimension ``dim``."""
    import sympy as sp

    from dpbook.symbolic import laplace_density, u, v, z

    us, vs = sp.symbols(f"u1:{dim + 1}", real=True), sp.symbols(f"v1:{dim + 1}", real=True)
    zs_ = sp.symbols(f"z1:{dim + 1}", real=True)
    ps = sp.symbols(f"p1:{dim + 1}", nonnegative=True)
    qs = sp.symbols(f"q1:{dim + 1}", nonnegative=True)
    dens_d = sp.Mul(*[laplace_density(zi, ui, scale) for zi, ui in zip(zs_, us, strict=False)])
    dens_dp = sp.Mul(*[laplace_density(zi, vi, scale) for zi, vi in zip(zs_, vs, strict=False)])
    rat = sp.simplify(dens_d / dens_dp)
    exponent = sum(sp.Abs(zi - vi) - sp.Abs(zi - ui) for zi, ui, vi in zip(zs_, us, vs, strict=False))
    l1 = sum(sp.Abs(ui - vi) for ui, vi in zip(us, vs, strict=False))
    l2 = sp.sqrt(sum((ui - vi) ** 2 for ui, vi in zip(us, vs, strict=False)))
    per_coord = []
    for i in range(dim):  # the six region parametrisations, renamed per coordinate
        ren = {u: us[i], v: vs[i], z: zs_[i], p: ps[i], q: qs[i]}
        per_coord.append([{k.subs(ren): w.subs(ren) for k, w in sub.items()} for sub in regions.values()])
    slacks = [
        sp.expand((l1 - exponent).subs({k: w for part in c for k, w in part.items()}))
        for c in itertools.product(*per_coord)
    ]
    corners = []
    for signs in itertools.product((1, -1), repeat=dim):
        sub = {}
        for i, sgn in enumerate(signs):  # v_i = u_i + sgn q_i; z_i beyond both, on u's side
            sub[vs[i]] = us[i] + sgn * qs[i]
            sub[zs_[i]] = us[i] - sgn * ps[i]
        corners.append((rat.subs(sub), l1.subs(sub), l2.subs(sub)))
    return dict(rat=rat, exponent=exponent, slacks=slacks, corners=corners)


def vector_l1(
    regions: Mapping[Any, Mapping[Any, Any]], scale: Any, p: Any, q: Any, dims: Sequence[int] = (2, 3)
) -> VectorL1:
    r"""The :math:`\ell_1` bound for vector queries, symbolically, for each dimension in ``dims``.

    For :math:`d` coordinates sympy (a) simplifies the ratio of the product
    densities :math:`\prod_i p(z_i; u_i, b)/\prod_i p(z_i; v_i, b)` to
    :math:`\exp(\varepsilon \sum_i (|z_i-v_i| - |z_i-u_i|)/\Delta)`, (b) checks
    :math:`\|u-v\|_1 - \sum_i (|z_i-v_i| - |z_i-u_i|) \ge 0` on each of the
    :math:`6^d` combinations of the chapter's region parametrisations
    (``regions``, in the symbols ``u, v, z`` of :mod:`dpbook.symbolic` and the
    non-negative ``p, q``), and (c) shows equality with
    :math:`e^{\varepsilon\|u-v\|_1/\Delta}` at the corner beyond both points in
    each coordinate, for the :math:`2^d` sign patterns of :math:`v-u`.
    Control: at a ``d = 2`` corner the ratio is *not* :math:`e^{\varepsilon\|u-v\|_2/\Delta}`.
    Symbolic: no false-alarm budget.

    Parameters
    ----------
    regions : mapping
        The six region substitutions of the scalar triangle step.
    scale : sympy expression
        The noise scale, :math:`\Delta/\varepsilon`.
    p, q : sympy symbols
        The non-negative parameters of ``regions``.
    dims : sequence of int
        The dimensions checked (the chapter: 2 and 3); the control is made
        only when 2 is among them.

    Returns
    -------
    VectorL1
        ``ratios[d]`` the simplified ratio; evidence per dimension, one control.
    """
    import sympy as sp

    from dpbook.symbolic import Delta, epsilon

    vec = {dim: _vector_case(dim, regions, scale, p, q) for dim in dims}
    evidence: list[Any] = []
    for dim, cv in vec.items():
        evidence += [
            Equal(
                f"d={dim}: ratio = exp(eps sum(|z-v| - |z-u|)/Delta)",
                cv["rat"],
                sp.exp(epsilon * cv["exponent"] / Delta),
            ),
            Fact(
                f"d={dim}: slack >= 0 on all {len(cv['slacks'])} region combinations",
                all(s_.is_nonnegative is True for s_ in cv["slacks"]),
            ),
            *[
                Equal(f"d={dim}: corner {j} attains exp(eps ||u-v||_1/Delta)", r_, sp.exp(epsilon * l1_ / Delta))
                for j, (r_, l1_, _) in enumerate(cv["corners"])
            ],
        ]
    controls: tuple[Any, ...] = ()
    if 2 in vec:  # in one dimension the l2 and l1 norms coincide: no control there
        r_c, _, l2_c = vec[2]["corners"][0]
        controls = (Equal("d=2: corner ratio = exp(eps ||u-v||_2/Delta)", r_c, sp.exp(epsilon * l2_c / Delta)),)
    return VectorL1(evidence=tuple(evidence), controls=controls, ratios={d: cv["rat"] for d, cv in vec.items()})


def seed004_chain(
    epsilon: float = 1.0,
    sensitivity: float = 1.0,
    noise_scale: float = 3.0,
    *,
    n: int = 100_000,
    dim: int = 3,
    seed: int = 20260401,
) -> Experiment:
    r"""Seed 004's five relations for a vector query: four at ``n`` random triples, the last in sympy.

    Draws (one stream, ``seed``): :math:`f(x) \sim N(0, 2^2)^d`; a step
    :math:`f(y) - f(x)` of random direction and :math:`\ell_1` norm uniform on
    :math:`[0, \Delta]` (``sensitivity``); :math:`z = f(x) + \mathrm{Lap}(0, \text{noise\_scale})^d`.
    With :math:`p(c) = \prod_i \frac{\varepsilon}{2\Delta} e^{-\varepsilon|c_i - z_i|/\Delta}` the chain is

    1. :math:`p(f(x))/p(f(y))`
    2. :math:`= \prod_i e^{-\varepsilon|f(x)_i-z_i|/\Delta}/e^{-\varepsilon|f(y)_i-z_i|/\Delta}`
    3. :math:`= \prod_i e^{\varepsilon(|f(y)_i-z_i| - |f(x)_i-z_i|)/\Delta}`
    4. :math:`\le \prod_i e^{\varepsilon|f(x)_i-f(y)_i|/\Delta}` (triangle step)
    5. :math:`= e^{\varepsilon\|f(x)-f(y)\|_1/\Delta} \le e^{\varepsilon}`.

    Relations 1 = 2, 2 = 3 and 4 = 5 are identities of the expressions this
    function writes (they hold for any input), so they are not recorded.
    Evidence: relation 1, computed independently from :func:`scipy.stats.laplace`
    log densities (scale :func:`dpcore.laplace_scale`), equals expression 3 (relative gap
    :math:`10^{-12}`), and 3 :math:`\le` 4 (slack :math:`10^{-12}`), at every triple.
    The last relation, :math:`e^{\varepsilon t/\Delta} \le e^{\varepsilon}` for
    :math:`t = \|f(x)-f(y)\|_1 \le \Delta`, would hold at the drawn triples by
    construction of the step (its norm is drawn below :math:`\Delta`), so it is not
    sampled: sympy proves :math:`\varepsilon - \varepsilon t/\Delta \ge 0` for
    :math:`t = \Delta - s`, :math:`s \ge 0` (the definition of :math:`\Delta` as
    the largest :math:`\ell_1` distance).

    Controls: the triangle step is an equality (relative gap :math:`10^{-12}` at
    every triple); the last relation with :math:`\Delta` read as the
    :math:`\ell_2` sensitivity (seed 000's ":math:`p`"): at the drawn
    directions rescaled to :math:`\ell_2` norm exactly ``sensitivity``,
    :math:`\max e^{\varepsilon\|f(x)-f(y)\|_1/\Delta} \le e^{\varepsilon}(1 + 10^{-12})`
    -- false wherever a step has two non-zero coordinates (its :math:`\ell_1`
    norm then exceeds its :math:`\ell_2` norm). The draws only choose the
    points; every relation is checked deterministically at them, so there is
    no false-alarm budget.

    Returns
    -------
    Experiment
        Two Compares and one Fact (sympy), two controls.
    """
    import sympy as sp

    rng = dpcore.as_generator(seed)
    fx = rng.normal(0, 2, size=(n, dim))
    direction = rng.normal(size=(n, dim))
    step = direction * rng.uniform(0, sensitivity, size=(n, 1)) / np.abs(direction).sum(axis=1, keepdims=True)
    fy, zz = fx + step, fx + rng.laplace(0, noise_scale, size=(n, dim))
    eps, sens = epsilon, sensitivity
    # relation 1, p_x(z) / p_y(z), from scipy's Laplace density at dpcore's scale (not the chain's expressions)
    law_x, law_y = (
        stats.laplace(fx, dpcore.laplace_scale(sens, eps)),
        stats.laplace(fy, dpcore.laplace_scale(sens, eps)),
    )
    first = np.exp((law_x.logpdf(zz) - law_y.logpdf(zz)).sum(axis=1))
    third = np.prod(np.exp(eps * (np.abs(fy - zz) - np.abs(fx - zz)) / sens), axis=1)
    fourth = np.prod(np.exp(eps * np.abs(fx - fy) / sens), axis=1)
    # the last relation in sympy: t = ||f(x) - f(y)||_1 = Delta - s with s >= 0 (Delta is the largest such t)
    e_s, d_s = sp.Symbol("epsilon", positive=True), sp.Symbol("Delta", positive=True)
    s_s = sp.Symbol("s", nonnegative=True)
    gap5 = sp.simplify(e_s - e_s * (d_s - s_s) / d_s)  # log e^eps - log e^(eps t / Delta)
    # the control: neighbours at l2 distance Delta (the l2 reading of the sensitivity)
    step_l2 = sens * direction / np.linalg.norm(direction, axis=1, keepdims=True)
    fifth_l2 = np.exp(eps * np.abs(step_l2).sum(axis=1) / sens)
    return Experiment(
        evidence=(
            Compare("first (scipy's Laplace densities) = third (max relative gap)", _rel_gap(first, third), "<=", TOL),
            Compare("third <= fourth (max of third/fourth)", float(np.max(third / fourth)), "<=", 1 + TOL),
            Fact(
                f"sympy: eps - eps t/Delta = {gap5} >= 0 for t = Delta - s <= Delta (fifth <= e^eps)",
                gap5.is_nonnegative is True,
                kind="symbolic",
            ),
        ),
        controls=(
            Compare("the triangle step is an equality", _rel_gap(third, fourth), "<=", TOL),
            Compare(
                "Delta read as the l2 sensitivity: fifth <= e^eps at l2 distance Delta",
                float(fifth_l2.max()),
                "<=",
                math.exp(eps) * (1 + TOL),
            ),
        ),
    )


# --------------------------------------------------------------------------- step (iii): sets


@dataclass(frozen=True)
class IntervalRatios(Experiment):
    """Exact interval ratios: the grid at the scale, at half the scale, and the ratios of :math:`(-\\infty, c]`."""

    grid: IntervalRatioMax | None = None
    grid_half: IntervalRatioMax | None = None
    cs: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    ratios_c: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))

    @property
    def summary(self) -> str:
        """The number of intervals and the extreme log ratios, as the chapter prints them."""
        g = self.grid
        assert g is not None
        return (
            f"{g.n_events:,} intervals; max log ratio {g.log_ratio_max:.15f} on "
            f"({g.argmax_lower}, {g.argmax_upper}]; min {g.log_ratio_min:.15f}"
        )


def interval_ratios(
    u: float = 0.0,
    v: float = 1.0,
    scale: float = 1.0,
    epsilon: float = 1.0,
    *,
    edges: ArrayLike | None = None,
    cs: ArrayLike = (1.0, 0.5, 0.25, 0.1, 0.01, 0.0),
) -> IntervalRatios:
    r"""Exact ratios :math:`P[M(D)\in S]/P[M(D')\in S]` of every interval on a grid and of half-lines.

    With ``edges`` (default: 1201 points in :math:`[-10, 11]` plus :math:`\pm\infty`,
    so :math:`1203\cdot1202/2 = 723\,003` intervals),
    :func:`dpcore.laplace_max_interval_log_ratio` computes the extremes of the
    log ratio exactly for :math:`\mathrm{Lap}(u, b)` vs :math:`\mathrm{Lap}(v, b)`.
    Evidence: all intervals counted; :math:`\max|\log r| \le \varepsilon + 10^{-12}`;
    max :math:`= \varepsilon` and min :math:`= -\varepsilon` to :math:`10^{-12}`;
    the worst intervals lie beyond both points; the ratio of
    :math:`P(z\le c)` increases as :math:`c` decreases to 0 and equals
    :math:`e^{\varepsilon}` at :math:`c = 0` (relative :math:`10^{-14}`).
    Control: at scale :math:`b/2` the max :math:`|\log r|` stays within :math:`\varepsilon`.
    Deterministic: no false-alarm budget.

    Returns
    -------
    IntervalRatios
        ``grid``, ``grid_half`` (scale/2), ``ratios_c``; ``summary`` the printed line.
    """
    edges_a = np.r_[-np.inf, np.linspace(-10, 11, 1201), np.inf] if edges is None else np.asarray(edges, dtype=float)
    grid = laplace_max_interval_log_ratio(u, v, scale, edges_a)
    grid_half = laplace_max_interval_log_ratio(u, v, scale / 2, edges_a)
    cs_a = np.asarray(cs, dtype=float)
    ratios_c = np.asarray(
        laplace_interval_probability(-np.inf, cs_a, u, scale) / laplace_interval_probability(-np.inf, cs_a, v, scale)
    )
    m = edges_a.size
    evidence = (
        Fact(f"all {m} x {m - 1} / 2 intervals", grid.n_events == m * (m - 1) // 2),
        Compare("max |log ratio| over the intervals", grid.max_abs_log_ratio, "<=", epsilon + TOL),
        Close("max log ratio attained = eps", grid.log_ratio_max, epsilon, atol=TOL),
        Close("min log ratio attained = -eps", grid.log_ratio_min, -epsilon, atol=TOL),
        Fact(
            "worst intervals lie beyond both points",
            bool(grid.argmax_upper <= min(u, v) and grid.argmin_lower >= max(u, v)),
        ),
        Fact("ratio of P(z <= c) increases as c decreases to 0", bool(np.all(np.diff(ratios_c) > 0))),
        Close("P(z <= 0) ratio = e^eps", ratios_c[-1], math.exp(epsilon), rtol=1e-14),
    )
    controls = (Compare("scale Delta/(2 eps): max |log ratio|", grid_half.max_abs_log_ratio, "<=", epsilon + TOL),)
    return IntervalRatios(
        evidence=evidence, controls=controls, grid=grid, grid_half=grid_half, cs=cs_a, ratios_c=ratios_c
    )


@dataclass(frozen=True)
class ProbabilityAsDensity(Experiment):
    """Seed 000's point "probability" against exact interval probabilities and a sampled one."""

    refusal: str = ""
    window: float = math.nan
    window_probability: float = math.nan
    seed_value: float = math.nan
    test: CheckResult | None = None
    seed_test: CheckResult | None = None
    hs: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    probs: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    set_ratios: tuple[tuple[float, float, float], ...] = ()
    pointwise: float = math.nan

    @property
    def summary(self) -> str:
        """The refusal, the two tests and the shrinking intervals, as printed."""
        return "\n".join(
            [
                *([f"check_probability: {self.refusal}"] if self.refusal else []),
                f"S = (f(D) - {self.window:g}, f(D) + {self.window:g}]: P[M(D) in S] = "
                f"{self.window_probability:.6f} (exact); the seed's product of densities: {self.seed_value:g}",
                str(self.test),
                str(self.seed_test),
                " ".join(str(x) for x in ("P[|M(D)| <= h]:", self.probs, " ratio to 2h:", self.probs / (2 * self.hs))),
            ]
        )

    @property
    def set_summary(self) -> str:
        """Set ratios against the pointwise ratio at z = -1, as printed."""
        return "\n".join(
            f"S = ({a_}, {c_}]: set ratio {r_:.6f}; pointwise ratio at z = -1: {self.pointwise:.6f}"
            for a_, c_, r_ in self.set_ratios
        )


def probability_as_density(
    release: Release,
    u: float = 0.0,
    v: float = 1.0,
    scale: float = 1.0,
    epsilon: float = 1.0,
    sensitivity: float = 1.0,
    *,
    n: int = 1_000_000,
    seeds: tuple[int, int] = (1, 2),
    alpha: float = 5e-7,
    window: float = 0.5,
    hs: ArrayLike = (1e-1, 1e-3, 1e-6),
    sets: Sequence[tuple[float, float]] = ((-np.inf, np.inf), (-1.0, 2.0), (-3.0, -1.0)),
    large_epsilon: float = 4.0,
) -> ProbabilityAsDensity:
    r"""Seed 000's "probability of an output" is a density: the evidence against it.

    Seed 000 writes :math:`\Pr[M(D)\in S] = \prod_i \frac{\varepsilon}{2\Delta}e^{-\varepsilon|y_i|/\Delta}`,
    the density :math:`p_D(y)` at one output. The correct statement is
    :math:`\Pr[M(D)\in S] = \int_S p_D`.

    * Monte Carlo (the correct statement): ``n`` releases of ``release`` on
      :math:`f(D) = u` (seed ``seeds[0]``); the two-sided Clopper--Pearson test
      (:func:`dpcore.montecarlo.check_probability`, false alarm ``alpha``) of
      :math:`P[M(D) \in (u - w, u + w]] = \int_{u-w}^{u+w} p_D`, computed exactly by
      :func:`dpcore.laplace_interval_probability` (:math:`w` = ``window``; the
      chapter: :math:`w = 1/2`, :math:`b = 1`, :math:`1 - e^{-1/2} = 0.393\ldots`).
      Numeric: that probability equals the closed form :math:`1 - e^{-w/b}`
      (relative :math:`10^{-14}`).
    * Control (the seed's statement, same test, same count, seed ``seeds[1]``):
      that probability is the seed's product of densities at the centre,
      :math:`p_D(u) = 1/(2b)`. Its miss probability is the exact binomial
      acceptance probability at the true value (:func:`dpbook.evidence.miss_probability`),
      counted in the budget; at the chapter's numbers it is below :math:`10^{-300}`.
    * Exact: :math:`P[|M(D)-u| \le h]/(2h) \to 1/(2b)` (relative :math:`10^{-5}` at
      the smallest ``h``) while :math:`P \to 0` (:math:`< 10^{-5}`): a point has
      probability 0, its density is the limit. The set :math:`(-1, 2]` has ratio
      1 (:math:`10^{-15}`) though the pointwise ratio inside, at :math:`z=-1`, is
      :math:`e^{\varepsilon}` (relative :math:`10^{-15}`).
    * :func:`dpcore.montecarlo.check_probability` refuses the seed's value at
      :math:`\varepsilon =` ``large_epsilon``, :math:`\Delta =` ``sensitivity``
      (the chapter: 4 and 1, where it is 2); the control "that value is
      :math:`\le 1`" is computed at the same two numbers.

    Error budget: ``alpha`` (the test) + the control's miss probability.

    Returns
    -------
    ProbabilityAsDensity
        The two tests, ``probs`` for ``hs``, the set ratios; ``summary`` and
        ``set_summary`` the printed text.
    """
    large_value = seed000_point_probability(np.zeros(1), large_epsilon, sensitivity)
    try:  # the probability test refuses a "probability" above 1 outright
        check_probability(
            lambda r, n_: laplace_release(sensitivity, large_epsilon)(np.zeros(n_), r),
            lambda x_: x_ == 0.0,
            1000,
            large_value,
        )
        refusal = ""
    except ValueError as err:
        refusal = str(err)
    # a fixed window around f(D): its probability is the integral of the density, not the density
    w_ = check_positive_finite("window", window)
    p_window = float(laplace_interval_probability(u - w_, u + w_, u, scale))
    seed_value = seed000_point_probability(np.zeros(1), epsilon, sensitivity)  # p_D(u) = eps/(2 Delta)
    sampler = lambda r, n_: release(np.full(n_, float(u)), r)  # noqa: E731
    in_window = lambda x_: (x_ > u - w_) & (x_ <= u + w_)  # noqa: E731
    test = check_probability(
        sampler, in_window, n, p_window, rng=seeds[0], alpha=alpha, name="P[M(D) in S] = integral of p_D over S"
    )
    seed_test = check_probability(
        sampler,
        in_window,
        n,
        seed_value,
        rng=seeds[1],
        alpha=alpha,
        name="P[M(D) in S] = p_D(f(D)) (seed 000)",
    )
    # the density is the limit of P[|M(D) - y| <= h] / (2h), while P itself -> 0
    hs_a = np.asarray(hs, dtype=float)
    probs = np.asarray(laplace_interval_probability(-hs_a, hs_a, u, scale))

    def set_ratio(a_: float, c_: float) -> float:
        return float(laplace_interval_probability(a_, c_, u, scale) / laplace_interval_probability(a_, c_, v, scale))

    pointwise = float(np.exp(laplace_privacy_loss(-1.0, u, v, scale)))
    evidence = (
        test,
        Close("P[M(D) in S] = 1 - e^(-w/b) (closed form)", p_window, -math.expm1(-w_ / scale), rtol=1e-14),
        Close(
            "P[|M(D)| <= h]/(2h) -> the density 1/(2b)", float(probs[-1] / (2 * hs_a[-1])), 1 / (2 * scale), rtol=1e-5
        ),
        Compare("P[|M(D)| <= 1e-6]", float(probs[-1]), "<", 1e-5),
        Fact(f"check_probability refuses a 'probability' of {large_value:g}", bool(refusal)),
        Close("set ratio of (-1, 2] is 1", set_ratio(-1.0, 2.0), 1.0, atol=1e-15),
        Close("while the pointwise ratio inside is e^eps", pointwise, math.exp(epsilon), rtol=1e-15),
    )
    controls = (
        Test(seed_test.name, result=seed_test, true_value=p_window),
        Compare(f"seed's 'probability' at eps = {large_epsilon:g} is <= 1", large_value, "<=", 1.0),
    )
    return ProbabilityAsDensity(
        evidence=evidence,
        controls=controls,
        refusal=refusal,
        window=w_,
        window_probability=p_window,
        seed_value=seed_value,
        test=test,
        seed_test=seed_test,
        hs=hs_a,
        probs=probs,
        set_ratios=tuple((a_, c_, set_ratio(a_, c_)) for a_, c_ in sets),
        pointwise=pointwise,
    )


def noiseless_release() -> Release:
    """The release without noise, :math:`M(D) = f(D)`, as a release ``(values, rng) -> values`` (``rng`` unused)."""
    return lambda vals, r: np.array(vals, dtype=float)


@dataclass(frozen=True)
class EventSetAsRange(Experiment):
    """The sampled event-ratio check of a release over every interval of a grid, and over the range alone."""

    all_events: EventRatioBounds | None = None
    all_test: CheckResult | None = None
    range_test: CheckResult | None = None
    miss: float = math.nan

    @property
    def summary(self) -> str:
        """Both tests and the miss bound, as printed."""
        return f"{self.all_test}\n{self.range_test}\nmiss probability of the first test <= {self.miss:.1e}"


def event_set_as_range(
    release: Release,
    u: float = 0.0,
    v: float = 1.0,
    epsilon: float = 1.0,
    *,
    n: int = 100_000,
    seed: int = 11,
    alpha: float = 5e-7,
    edges: ArrayLike | None = None,
) -> EventSetAsRange:
    r"""The :math:`\varepsilon`-DP inequality over every interval, and over :math:`S =` the range only, on samples.

    ``n`` releases of ``release`` on :math:`u` and on :math:`v` (one stream,
    seed ``seed``; the chapter passes the noiseless release
    :func:`noiseless_release`). The same sampled check as
    :func:`event_ratios` (:func:`dpcore.event_ratios.sample_interval_ratio_bounds`,
    one-sided Clopper--Pearson bounds, union bound, false alarm ``alpha``), on
    two families of events fixed in advance:

    * every interval between the points of ``edges`` (default
      :math:`-\infty, -3, -2.5, \dots, 3, \infty`: 105 intervals). Evidence: it
      rejects ":math:`\varepsilon`-DP" (``Rejected``). Its miss probability is
      :func:`dpcore.event_ratios.event_detection_miss` for the interval
      :math:`(u - 1/2, u]` (one of the 105 when :math:`u` and :math:`u - 1/2` are grid points)
      at the release's true probabilities: 1 under :math:`D` and 0 under
      :math:`D'` for the noiseless release with :math:`|u - v| \ge 1/2`.
    * :math:`S = \mathbb R` only, the seed's "all observed outputs, like the
      range". Control (the seed's reading: that event suffices to judge a
      release): the check rejects. It cannot, for any release (both
      probabilities are 1); as a control its risk is the test's own ``alpha``.

    Error budget: the evidence's miss probability + ``alpha`` (the control).

    Raises
    ------
    ValueError
        If :math:`u - 1/2` or :math:`u` is not a grid point or :math:`|u - v| < 1/2`
        (the miss bound is computed for that interval only).
    """
    ev_edges = np.r_[-np.inf, np.arange(-3, 3.01, 0.5), np.inf] if edges is None else np.asarray(edges, dtype=float)
    if not (np.any(ev_edges == u - 0.5) and np.any(ev_edges == u)) or abs(v - u) < 0.5:
        raise ValueError(f"u - 1/2 and u = {u} must be grid points and |u - v| >= 1/2 (v = {v})")
    ii, jj = np.triu_indices(ev_edges.size, 1)
    rng_ = dpcore.as_generator(seed)
    x_ = np.asarray(release(np.full(n, float(u)), rng_), dtype=float)
    y_ = np.asarray(release(np.full(n, float(v)), rng_), dtype=float)
    all_events = sample_interval_ratio_bounds(x_, y_, ev_edges[ii], ev_edges[jj], alpha=alpha)
    all_test = all_events.check(epsilon, name=f"every interval: event ratios <= e^eps ({ii.size} intervals)")
    whole = sample_interval_ratio_bounds(x_, y_, np.array([-np.inf]), np.array([np.inf]), alpha=alpha)
    range_test = whole.check(epsilon, name="S = the range only: event ratio <= e^eps")
    # the noiseless release puts all of M(D) in (u - 1/2, u] and none of M(D')
    miss = event_detection_miss(1.0, 0.0, n, n, epsilon, events=int(ii.size), alpha=alpha)
    return EventSetAsRange(
        evidence=(Rejected(all_test.name, result=all_test, miss=miss),),
        controls=(Rejected(range_test.name, result=range_test, miss=1.0),),
        all_events=all_events,
        all_test=all_test,
        range_test=range_test,
        miss=miss,
    )


# --------------------------------------------------------------------------- Monte Carlo: the privacy loss


@dataclass(frozen=True)
class ReleaseLaw(Experiment):
    """DKW tests of the releases' law: the mechanism (``ok``) and the flawed one (``flawed``)."""

    ok: CheckResult | None = None
    flawed: CheckResult | None = None
    loss_max: float = math.nan
    loss_max_flawed: float = math.nan

    @property
    def summary(self) -> str:
        """The largest absolute loss on the grid for both scales, then both test results."""
        return (
            f"max |L(z)| on the grid: {self.loss_max:.15f} at scale b, {self.loss_max_flawed:.15f} at b/2\n"
            f"{self.ok}\n{self.flawed}"
        )


def release_law(
    release: Release,
    flawed_release: Release,
    u: float = 0.0,
    v: float = 1.0,
    scale: float = 1.0,
    epsilon: float = 1.0,
    *,
    flawed_scale: float,
    n: int = 1_000_000,
    grid: ArrayLike | None = None,
    seeds: tuple[int, int] = (3, 4),
    alpha: float = 5e-7,
) -> ReleaseLaw:
    r"""The releases follow :math:`\mathrm{Lap}(f(D), b)`, whose privacy loss is bounded by :math:`\varepsilon`.

    * Numeric, independent of :func:`dpcore.laplace_privacy_loss` (which clips
      its result to :math:`\pm|u - v|/b` and so could not fail): the loss
      :math:`L(z) = \log p_D(z) - \log p_{D'}(z)` from :func:`scipy.stats.laplace`
      log densities at scale ``scale`` (:math:`b`, the chapter's
      :func:`dpcore.laplace_scale`), over ``grid`` (default: 2001 points in
      :math:`[-12, 13]`, fixed in advance, reaching beyond both points).
      Evidence: :math:`\max_z |L(z)| \le \varepsilon(1 + 10^{-12})`, and the
      maximum is attained: :math:`= \varepsilon` to :math:`10^{-12}` relative.
    * Monte Carlo: a DKW test (:func:`dpcore.montecarlo.check_cdf`, sup over
      ``grid``) that ``n`` releases of ``release`` on :math:`u` (seed
      ``seeds[0]``) have CDF :math:`\mathrm{Lap}(u, b)`; false alarm ``alpha``.
      This ties the densities above to the sampler.
    * Controls, the claim for ``flawed_release`` (the chapter: seed 000's stray
      factor 2, true scale ``flawed_scale`` = :math:`b/2`): (1) the same
      computation with its true densities, :math:`\mathrm{Lap}(\cdot, \text{flawed\_scale})`,
      gives :math:`\max|L| \le \varepsilon(1 + 10^{-12})` (false: it is
      :math:`|u-v|/\text{flawed\_scale} = 2\varepsilon`); (2) the DKW test says its
      releases follow :math:`\mathrm{Lap}(u, b)`; its true sup distance on the
      grid is known, from which its miss probability is computed
      (:func:`dpbook.evidence.miss_probability`) and counted.

    Error budget: ``alpha`` + the DKW control's miss probability.
    """
    out_grid = np.linspace(-12.0, 13.0, 2001) if grid is None else np.asarray(grid, dtype=float)
    flawed_scale = check_positive_finite("flawed_scale", flawed_scale)
    lap_cdf = stats.laplace(u, scale).cdf

    def sampler(rel: Release) -> Callable[[np.random.Generator, int], Any]:
        return lambda rng_, size: rel(np.full(size, float(u)), rng_)

    out_ok = check_cdf(
        sampler(release),
        n,
        lap_cdf,
        grid=out_grid,
        rng=seeds[0],
        alpha=alpha,
        name="releases of M(D) follow Lap(f(D), Delta/eps)",
    )
    out_half = check_cdf(
        sampler(flawed_release),
        n,
        lap_cdf,
        grid=out_grid,
        rng=seeds[1],
        alpha=alpha,
        name="scale Delta/(2 eps): releases follow Lap(f(D), Delta/eps)",
    )
    half_distance = float(np.max(np.abs(stats.laplace(u, flawed_scale).cdf(out_grid) - lap_cdf(out_grid))))

    def max_abs_loss(b_: float) -> float:
        """The largest absolute difference of the two log densities over the grid (scipy's Laplace, scale b_)."""
        return float(np.max(np.abs(stats.laplace(u, b_).logpdf(out_grid) - stats.laplace(v, b_).logpdf(out_grid))))

    loss_max, loss_max_half = max_abs_loss(scale), max_abs_loss(flawed_scale)
    return ReleaseLaw(
        evidence=(
            Compare("max |L(z)| over the output grid (scipy log densities)", loss_max, "<=", epsilon * (1 + TOL)),
            Close("the maximum is eps (attained beyond both points)", loss_max, epsilon, rtol=TOL),
            out_ok,
        ),
        controls=(
            Compare(
                "scale Delta/(2 eps): max |L(z)| over the grid (its true densities) <= eps",
                loss_max_half,
                "<=",
                epsilon * (1 + TOL),
            ),
            Test(out_half.name, result=out_half, true_value=half_distance),
        ),
        ok=out_ok,
        flawed=out_half,
        loss_max=loss_max,
        loss_max_flawed=loss_max_half,
    )


@dataclass(frozen=True)
class LossDistribution(Experiment):
    """Tests of the derived law of :math:`L`: CDF and lower atom, for the mechanism and the flawed one."""

    cdf: CheckResult | None = None
    atom: CheckResult | None = None
    cdf_flawed: CheckResult | None = None
    atom_flawed: CheckResult | None = None

    @property
    def summary(self) -> str:
        """The four test results, one per line."""
        return "\n".join(str(r) for r in (self.cdf, self.atom, self.cdf_flawed, self.atom_flawed))


def privacy_loss_distribution(
    cdf_inner: Callable[[Any, float], Any],
    p_low: float,
    release: Release,
    flawed_release: Release,
    u: float = 0.0,
    v: float = 1.0,
    scale: float = 1.0,
    epsilon: float = 1.0,
    *,
    flawed_scale: float,
    n: int = 1_000_000,
    seeds: tuple[int, int, int, int] = (5, 6, 7, 8),
    alpha: float = 1e-6 / 4,
) -> LossDistribution:
    r"""Monte Carlo tests of the derived law of the privacy loss :math:`L` under :math:`M(D)`.

    ``cdf_inner(l, eps)`` is the chapter's derived :math:`P[L\le l] = e^{-(\varepsilon-l)/2}/2`
    on :math:`[-\varepsilon, \varepsilon)` (lambdified), completed by :func:`loss_cdf`;
    ``p_low`` the derived atom :math:`P[L=-\varepsilon] = e^{-\varepsilon}/2`.
    :math:`L` is computed from the declared densities (:func:`declared_loss`)
    at releases of ``release`` (seeds ``seeds[0:2]``) and of ``flawed_release``
    (whose true noise scale is ``flawed_scale``, required; seeds ``seeds[2:4]``).
    The derived law has its atoms at :math:`\pm\varepsilon`, so :math:`|v - u|`
    must be :math:`\varepsilon \cdot` ``scale`` (full sensitivity).

    * DKW test of the CDF on 481 points of :math:`[-1.2, 1.2]` minus the atoms
      (alpha each); Clopper--Pearson test of :math:`P[L \le -\varepsilon(1-10^{-9})] = p_{\rm low}` (alpha).
    * Controls: the same two tests on the flawed mechanism; their miss
      probabilities are computed from its true law, the exact CDF of the
      declared loss under :math:`\mathrm{Lap}(u, \text{flawed\_scale})` (one
      interval probability per level, :func:`dpcore.laplace_interval_probability`;
      at scale :math:`b/2` the atom is :math:`e^{-2\varepsilon}/2`).

    Error budget: 2 ``alpha`` + the two miss probabilities (the chapter: alpha
    :math:`= 10^{-6}/4`, 2 tests and 2 controls).

    Raises
    ------
    ValueError
        If ``flawed_scale`` is not positive and finite, or if ``u, v`` are not
        at distance ``epsilon * scale``.
    """
    flawed_scale = check_positive_finite("flawed_scale", flawed_scale)
    if not math.isclose(abs(v - u), epsilon * scale, rel_tol=1e-12):
        raise ValueError(f"u, v must lie at distance epsilon * scale = {epsilon * scale}; got |v - u| = {abs(v - u)}")
    cdf_grid = np.linspace(-1.2, 1.2, 481)
    # grid points avoid the atoms at +-eps themselves, where rounding of L decides the side
    cdf_grid = cdf_grid[np.abs(np.abs(cdf_grid) - epsilon) > 1e-6]

    def pld_cdf(l_: Any) -> NDArray[np.float64]:
        return loss_cdf(cdf_inner, l_, epsilon)

    loss_d = declared_loss(release, u, v, scale)
    loss_h = declared_loss(flawed_release, u, v, scale)  # L from the declared densities, samples from the flawed one
    low_level = -epsilon * (1 - 1e-9)
    low_atom = lambda l_: l_ <= low_level  # noqa: E731
    res_cdf = check_cdf(loss_d, n, pld_cdf, grid=cdf_grid, rng=seeds[0], alpha=alpha, name="CDF of L (derived)")
    res_atom = check_probability(loss_d, low_atom, n, p_low, rng=seeds[1], alpha=alpha, name="P[L = -eps] = e^(-eps)/2")
    res_cdf_half = check_cdf(
        loss_h, n, pld_cdf, grid=cdf_grid, rng=seeds[2], alpha=alpha, name="CDF of L, scale Delta/(2 eps)"
    )
    res_atom_half = check_probability(
        loss_h,
        low_atom,
        n,
        p_low,
        rng=seeds[3],
        alpha=alpha,
        name="P[L = -eps] = e^(-eps)/2, scale Delta/(2 eps)",
    )
    flawed_cdf = _declared_loss_cdf(cdf_grid, u, v, scale, flawed_scale)  # the flawed release's true law of L
    half_cdf_distance = float(np.max(np.abs(flawed_cdf - pld_cdf(cdf_grid))))
    half_atom = float(_declared_loss_cdf(low_level, u, v, scale, flawed_scale))
    return LossDistribution(
        evidence=(res_cdf, res_atom),
        controls=(
            Test(res_cdf_half.name, result=res_cdf_half, true_value=half_cdf_distance),
            Test(res_atom_half.name, result=res_atom_half, true_value=half_atom),
        ),
        cdf=res_cdf,
        atom=res_atom,
        cdf_flawed=res_cdf_half,
        atom_flawed=res_atom_half,
    )


def kl_against_dpcore(
    kl_exact: Callable[[str, str], float],
    kl2_exact: Callable[[str, str, str], float],
    points: Sequence[tuple[str, str]] = (("1", "1"), ("2", "0.5"), ("0.1", "3"), ("1e-6", "1")),
    points2: Sequence[tuple[str, str, str]] = (("1", "1", "2"), ("0.5", "3", "1"), ("2", "0.25", "0.5")),
) -> Experiment:
    r"""The derived KL divergences against :func:`dpcore.laplace_kl_divergence`, at 30-digit reference values.

    ``kl_exact(w, b)`` is the chapter's derived
    :math:`\mathrm{KL}(\mathrm{Lap}(0,b)\,\|\,\mathrm{Lap}(w,b))` evaluated exactly
    (the arguments are decimal strings, read as rationals) and
    ``kl2_exact(w, b, b2)`` the two-scale form
    :math:`\mathrm{KL}(\mathrm{Lap}(0,b)\,\|\,\mathrm{Lap}(w,b_2))`. Evidence:
    dpcore's closed form agrees with each to relative :math:`10^{-14}` at
    ``points`` and ``points2``. Deterministic: no false-alarm budget.
    """
    out: list[Any] = []
    for w_val, b_val in points:
        out.append(
            Close(
                f"dpcore.laplace_kl_divergence(0, {w_val}, {b_val}) vs sympy",
                laplace_kl_divergence(0.0, float(w_val), float(b_val)),
                float(kl_exact(w_val, b_val)),
                rtol=1e-14,
            )
        )
    for w_val, b_val, b2_val in points2:
        out.append(
            Close(
                f"dpcore.laplace_kl_divergence(0, {w_val}, {b_val}, {b2_val}) vs sympy",
                laplace_kl_divergence(0.0, float(w_val), float(b_val), float(b2_val)),
                float(kl2_exact(w_val, b_val, b2_val)),
                rtol=1e-14,
            )
        )
    return Experiment(evidence=tuple(out))


@dataclass(frozen=True)
class KLMean(Experiment):
    """The mean privacy loss: ``kl`` from dpcore and the two bounded-mean tests."""

    kl: float = math.nan
    test: CheckResult | None = None
    wrong: CheckResult | None = None

    @property
    def summary(self) -> str:
        """Both test results, one per line."""
        return f"{self.test}\n{self.wrong}"


def kl_mean(
    release: Release,
    u: float = 0.0,
    v: float = 1.0,
    scale: float = 1.0,
    epsilon: float = 1.0,
    *,
    n: int = 1_000_000,
    seeds: tuple[int, int] = (9, 10),
    alpha: float = 5e-7,
) -> KLMean:
    r""":math:`E[L(M(D))] = \mathrm{KL}(\mathrm{Lap}(u,b)\,\|\,\mathrm{Lap}(v,b))`, by a bounded-mean test.

    ``KL`` is :func:`dpcore.laplace_kl_divergence` ``(u, v, scale)`` (checked
    against the derivation by :func:`kl_against_dpcore`). The losses
    (:func:`declared_loss` of ``release``) lie in :math:`[-\varepsilon, \varepsilon]`
    (widened by :math:`10^{-9}` relative), so :func:`dpcore.montecarlo.check_bounded_mean`
    (Hoeffding / empirical Bernstein) is valid: evidence, the test of ``KL``
    (seed ``seeds[0]``, alpha). Control: the same test of the wrong claim
    :math:`E[L] = \varepsilon` (seed ``seeds[1]``), its miss probability computed
    from the true mean ``KL``.

    Error budget: ``alpha`` + the control's miss probability.
    """
    kl = laplace_kl_divergence(u, v, scale)
    loss_d = declared_loss(release, u, v, scale)
    lo, hi = -epsilon * (1 + 1e-9), epsilon * (1 + 1e-9)
    res_kl = check_bounded_mean(loss_d, n, kl, lower=lo, upper=hi, rng=seeds[0], alpha=alpha, name="E[L] = KL")
    res_wrong = check_bounded_mean(
        loss_d, n, epsilon, lower=lo, upper=hi, rng=seeds[1], alpha=alpha, name="E[L] = eps (wrong)"
    )
    return KLMean(
        evidence=(res_kl,),
        controls=(Test(res_wrong.name, result=res_wrong, true_value=kl),),
        kl=kl,
        test=res_kl,
        wrong=res_wrong,
    )


# --------------------------------------------------------------------------- Monte Carlo: event ratios


@dataclass(frozen=True)
class EventRatios(Experiment):
    """Event-ratio bounds from samples, for the mechanism and the flawed one, and the control's miss bound."""

    bounds: EventRatioBounds | None = None
    test: CheckResult | None = None
    flawed_bounds: EventRatioBounds | None = None
    flawed_test: CheckResult | None = None
    miss: float = math.nan
    epsilon: float = math.nan

    @property
    def summary(self) -> str:
        """The two tests and the largest lower bound on a ratio, as printed."""
        assert self.bounds is not None
        return (
            f"{self.test}\n{self.flawed_test}\n"
            f"largest lower bound on a ratio: {math.exp(self.bounds.epsilon_lower):.4f} "
            f"(e^eps = {math.exp(self.epsilon):.4f}); miss probability of the control <= {self.miss:.1e}"
        )


def event_ratios(
    release: Release,
    flawed_release: Release,
    u: float = 0.0,
    v: float = 1.0,
    epsilon: float = 1.0,
    *,
    flawed_scale: float,
    n: int = 1_000_000,
    seeds: tuple[int, int] = (12, 13),
    alpha: float = 5e-7,
    edges: ArrayLike | None = None,
) -> EventRatios:
    r"""Clopper--Pearson lower bounds on event ratios from samples; none may exceed :math:`e^\varepsilon`.

    The events are the intervals between the points of ``edges`` (default
    :math:`-\infty, -3, -2.5, \dots, 3, \infty`: 105 intervals, fixed in advance).
    For each, :func:`dpcore.event_ratios.sample_interval_ratio_bounds` gives
    :math:`4m` one-sided Clopper--Pearson bounds at level ``alpha``:math:`/(4m)`
    (union bound: all hold with probability :math:`\ge 1 - \alpha`), and
    :meth:`~dpcore.event_ratios.EventRatioBounds.check` tests
    ":math:`\log p_{lo}/p'_{hi} \le \varepsilon` in both directions".
    Releases of ``release`` on :math:`u` then :math:`v` from one stream (seed
    ``seeds[0]``). Evidence: the test (alpha). Control: the test on
    ``flawed_release`` (seed ``seeds[1]``), whose true law is
    :math:`\mathrm{Lap}(\cdot, \text{flawed\_scale})` (required; the chapter's
    :func:`stray_factor_two_release` has scale :math:`\Delta/(2\varepsilon)`).
    Its miss probability is the smallest
    :func:`dpcore.event_ratios.event_detection_miss` over the events that
    law violates (either direction), from their exact probabilities
    (:func:`dpcore.laplace_interval_probability`) at ``u``, ``v``.

    Error budget: ``alpha`` + the control's miss probability.

    Raises
    ------
    ValueError
        If ``edges`` is not an increasing 1-D sequence of at least two points,
        or ``flawed_scale`` is not positive and finite or gives no violated
        event (then the control's miss cannot be bounded).
    """
    ev_edges = np.r_[-np.inf, np.arange(-3, 3.01, 0.5), np.inf] if edges is None else np.asarray(edges, dtype=float)
    if ev_edges.ndim != 1 or ev_edges.size < 2 or not np.all(np.diff(ev_edges) > 0):
        raise ValueError(f"edges must be an increasing 1-D sequence of at least two points; got {edges!r}")
    flawed_scale = check_positive_finite("flawed_scale", flawed_scale)
    ii, jj = np.triu_indices(ev_edges.size, 1)
    lo, hi = ev_edges[ii], ev_edges[jj]

    def check(rel: Release, name: str, seed: int) -> tuple[EventRatioBounds, CheckResult]:
        rng_ = dpcore.as_generator(seed)
        x_ = rel(np.full(n, u), rng_)
        y_ = rel(np.full(n, v), rng_)
        bounds = sample_interval_ratio_bounds(x_, y_, lo, hi, alpha=alpha)
        return bounds, bounds.check(epsilon, name=name)

    ev_bounds, res_events = check(release, "event ratios <= e^eps, Laplace mechanism", seeds[0])
    half_bounds, res_half = check(flawed_release, "event ratios <= e^eps, scale Delta/(2 eps)", seeds[1])
    # the flawed law's exact event probabilities under D and D': the best-detected violation bounds the miss
    miss_half = _best_detection_miss(
        laplace_interval_probability(lo, hi, u, flawed_scale),
        laplace_interval_probability(lo, hi, v, flawed_scale),
        n,
        epsilon,
        alpha,
    )
    if math.isnan(miss_half):
        raise ValueError(
            f"flawed_scale = {flawed_scale} (u = {u}, v = {v}): no event is violated, the control's miss has no bound"
        )
    return EventRatios(
        evidence=(res_events,),
        controls=(Test(res_half.name, result=res_half, miss=miss_half),),
        bounds=ev_bounds,
        test=res_events,
        flawed_bounds=half_bounds,
        flawed_test=res_half,
        miss=miss_half,
        epsilon=epsilon,
    )


# --------------------------------------------------------------------------- negative controls


@dataclass(frozen=True)
class StrayFactorTwo(Experiment):
    """The best test's success at scale b and b/2 against the eps-DP bound, and the exact max ratio at b/2."""

    bound: float = math.nan
    success: float = math.nan
    success_half: float = math.nan
    half_max_abs_log_ratio: float = math.nan
    n_events: int = 0

    @property
    def summary(self) -> str:
        """The bound and both successes, as printed."""
        return (
            f"bound at eps = 1: {self.bound:.4f}; best test, scale Delta/eps: {self.success:.4f}; "
            f"scale Delta/(2 eps): {self.success_half:.4f}"
        )

    @property
    def exact_summary(self) -> str:
        """The exact largest absolute log ratio at half the scale, as printed."""
        return (
            f"exact: max |log ratio| over {self.n_events:,} intervals, scale Delta/(2 eps) = "
            f"{self.half_max_abs_log_ratio:.12f}"
        )


def best_test_success(u: float, v: float, scale: float) -> float:
    r"""Success of the best test between :math:`\mathrm{Lap}(u, b)` and :math:`\mathrm{Lap}(v, b)`, equal priors.

    :math:`\tfrac12(P[M(D) < m] + P[M(D') \ge m])` with :math:`m = (u+v)/2`
    (guess :math:`D` iff :math:`z < m`), computed exactly.
    """
    mid = (u + v) / 2
    return float(
        0.5
        * (laplace_interval_probability(-np.inf, mid, u, scale) + laplace_interval_probability(mid, np.inf, v, scale))
    )


def stray_factor_two(u: float, v: float, scale: float, epsilon: float, half_grid: IntervalRatioMax) -> StrayFactorTwo:
    r"""What trusting seed 000's stray factor 2 (noise scale :math:`b/2`) costs, exactly.

    Evidence: the best test's success at scale :math:`b = \Delta/\varepsilon` is
    :math:`1 - e^{-\varepsilon/2}/2` (relative :math:`10^{-14}`) and within the
    :math:`\varepsilon`-DP bound :math:`e^\varepsilon/(1+e^\varepsilon)`; at
    :math:`b/2` it is :math:`1 - e^{-\varepsilon}/2`; the exact max log interval ratio at :math:`b/2`
    (``half_grid``, from :func:`interval_ratios`) is :math:`2\varepsilon` to
    :math:`10^{-12}`. Control: scale :math:`b/2` keeps the test bound.
    Deterministic: no false-alarm budget.
    """
    bound_eps = math.exp(epsilon) / (1 + math.exp(epsilon))
    succ_ok, succ_half = best_test_success(u, v, scale), best_test_success(u, v, scale / 2)
    evidence = (
        Close("best test at scale Delta/eps = 1 - e^(-eps/2)/2", succ_ok, 1 - math.exp(-epsilon / 2) / 2, rtol=1e-14),
        Compare("... within the eps-DP bound", succ_ok, "<=", bound_eps),
        Close("best test at scale Delta/(2 eps) = 1 - e^(-eps)/2", succ_half, 1 - math.exp(-epsilon) / 2, rtol=1e-14),
        Close(
            "trusting the 1/2 (scale Delta/(2 eps)) gives max log ratio 2 eps",
            half_grid.max_abs_log_ratio,
            2 * epsilon,
            atol=TOL,
        ),
    )
    controls = (Compare("scale Delta/(2 eps) keeps the eps-DP test bound", succ_half, "<=", bound_eps),)
    return StrayFactorTwo(
        evidence=evidence,
        controls=controls,
        bound=bound_eps,
        success=succ_ok,
        success_half=succ_half,
        half_max_abs_log_ratio=half_grid.max_abs_log_ratio,
        n_events=half_grid.n_events,
    )


@dataclass(frozen=True)
class VectorCalibrations(Experiment):
    """Exact box ratios and corner-event tests for each calibration of the d-dimensional query.

    ``rows[name] = (exact, bounds, test, scale, miss)`` in the order of the
    calibrations (the first is the correct one, then per-coordinate, L2, half L1).
    ``per_coordinate`` and ``p_norm`` are the evidence of the chapter's two
    other records that use these runs.
    """

    rows: Mapping[str, tuple[IntervalRatioMax, EventRatioBounds, CheckResult, float, float]] = field(
        default_factory=dict
    )
    per_coordinate: Experiment = field(default_factory=Experiment)
    p_norm: Experiment = field(default_factory=Experiment)

    @property
    def summary(self) -> str:
        """One line per calibration, as printed."""
        return "\n".join(
            f"{k_:15s} scale {scale:.1f}: exact max log box ratio {exact.log_ratio_max:.12f}; "
            f"event check {'PASS' if ev.passed else 'REJECT'} (epsilon_lower {bnds.epsilon_lower:.3f})"
            for k_, (exact, bnds, ev, scale, _) in self.rows.items()
        )

    @property
    def correct(self) -> tuple[IntervalRatioMax, EventRatioBounds, CheckResult, float, float]:
        """The row of the first (correct) calibration."""
        return next(iter(self.rows.values()))


def vector_releases(
    u: ArrayLike, v: ArrayLike, epsilon: float, correct: Release | None = None
) -> dict[str, tuple[Release, float]]:
    r"""Four calibrations of a vector query: :math:`\ell_1` (correct), per-coordinate, :math:`\ell_2`, half-scale.

    Values ``(release, scale)``; the first three scales are :math:`\Delta_p/\varepsilon` with
    :math:`\Delta_p = \|v - u\|_p`, the fourth :math:`\Delta_1/(2\varepsilon)` (seed
    000's stray factor 2, :func:`dpbook.flawed.laplace_stray_factor_two`). ``correct`` replaces the first release
    (e.g. by a flawed mechanism, for tests) while keeping its declared scale.
    """
    diff = np.asarray(v, dtype=float) - np.asarray(u, dtype=float)
    l1, l2, linf = float(np.abs(diff).sum()), float(np.linalg.norm(diff)), float(np.abs(diff).max())
    return {
        "L1 (correct)": (
            correct if correct is not None else (lambda vals, r: dpcore.laplace_mechanism(vals, l1, epsilon, rng=r)),
            l1 / epsilon,
        ),
        "per-coordinate": (
            lambda vals, r: flawed.laplace_per_coordinate_sensitivity(vals, linf, epsilon, rng=r),
            linf / epsilon,
        ),
        "L2": (lambda vals, r: dpcore.laplace_mechanism(vals, l2, epsilon, rng=r), l2 / epsilon),
        "L1, stray 1/2": (
            lambda vals, r: flawed.laplace_stray_factor_two(vals, l1, epsilon, rng=r),
            l1 / (2 * epsilon),
        ),
    }


def vector_calibrations(
    calibrations: Mapping[str, tuple[Release, float]],
    u: ArrayLike,
    v: ArrayLike,
    epsilon: float = 1.0,
    *,
    n: int = 400_000,
    seed: int = 14,
    alpha: float = 2.5e-7,
    edges: ArrayLike | None = None,
    corner_c: ArrayLike | None = None,
) -> VectorCalibrations:
    r"""Exact box ratios and sampled corner-event ratios for the calibrations of a vector query.

    For each calibration ``(release, scale)`` (in order: the correct
    :math:`\ell_1` one, per-coordinate, :math:`\ell_2`, half the :math:`\ell_1` scale;
    see :func:`vector_releases`):

    * exact: :func:`dpcore.laplace_max_interval_log_ratio` over every box whose
      sides have ends on ``edges`` (default 421 points in :math:`[-10, 11]` plus
      :math:`\pm\infty`; :math:`(423\cdot422/2)^d` boxes), at the declared scale;
    * Monte Carlo (seed ``seed + j`` for the j-th calibration): ``n`` releases on
      :math:`u` and on :math:`v`; counts of the 26 corner events
      :math:`\{\max_i z_i \le c\}`, :math:`\{\min_i z_i > c\}` for 13 values of
      :math:`c` (``corner_c``, default :math:`-3, -2.5, \dots, 3`); their
      Clopper--Pearson ratio bounds (:func:`dpcore.event_ratios.event_ratio_bounds`,
      alpha) and the test "every ratio :math:`\le e^\varepsilon`". A wrong
      calibration's miss probability is the smallest
      :func:`dpcore.event_ratios.event_detection_miss` over the corner events it
      violates (either direction), from their exact probabilities under
      :math:`\mathrm{Lap}(u, b)` and :math:`\mathrm{Lap}(v, b)` at its scale
      :math:`b` (the ``scale`` of the calibration must be the noise scale its
      release really uses); ``nan`` where no event is violated, e.g. for the
      correct calibration, whose test is then no control.

    Three records use these runs; no record's control is another's evidence.
    ``laplace-mech.box-ratio-exact`` (returned evidence): exact max log box
    ratio :math:`=\varepsilon` (:math:`10^{-12}`), the correct calibration's
    test (alpha); controls, seed 000's stray factor 2 carried to the vector
    query (scale :math:`\Delta_1/(2\varepsilon)`) is :math:`\varepsilon`-DP: its
    exact ratio :math:`\le \varepsilon` (it is :math:`2\varepsilon`) and its
    test (miss probability). ``per_coordinate``: exact ratio
    :math:`(\Delta_1/\Delta_\infty)\varepsilon` (:math:`4\varepsilon`), its test
    rejected (miss probability); controls, the plausible underestimate
    "it costs a factor :math:`\sqrt d`", i.e. the per-coordinate calibration
    is :math:`(\Delta_1/\Delta_2)\varepsilon` (:math:`2\varepsilon`)-DP: its exact
    ratio is that value (:math:`10^{-12}`), and the same corner-event
    bounds checked at that level pass (miss probability from
    :func:`dpcore.event_ratios.event_detection_miss` at that level).
    ``p_norm``: exact ratios :math:`\varepsilon` (p = 1) and
    :math:`(\Delta_1/\Delta_2)\varepsilon` (p = 2), the correct test; controls,
    the :math:`\ell_2` exact ratio :math:`\le\varepsilon` and its test.

    Error budget per record: the tests' alphas plus the controls' miss probabilities.
    """
    u_a, v_a = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    dim = u_a.size
    diff = v_a - u_a
    l1, l2, linf = float(np.abs(diff).sum()), float(np.linalg.norm(diff)), float(np.abs(diff).max())
    corner = np.linspace(-3, 3, 13) if corner_c is None else np.asarray(corner_c, dtype=float)
    edges_a = np.r_[-np.inf, np.linspace(-10, 11, 421), np.inf] if edges is None else np.asarray(edges, dtype=float)

    def corner_events_check(release: Release, name: str, seed_: int) -> tuple[EventRatioBounds, CheckResult]:
        rng_ = dpcore.as_generator(seed_)
        x_ = release(np.tile(u_a, (n, 1)), rng_)
        y_ = release(np.tile(v_a, (n, 1)), rng_)
        hx = np.r_[(x_.max(1)[:, None] <= corner).sum(0), (x_.min(1)[:, None] > corner).sum(0)]
        hy = np.r_[(y_.max(1)[:, None] <= corner).sum(0), (y_.min(1)[:, None] > corner).sum(0)]
        bounds = event_ratio_bounds(hx, n, hy, n, alpha=alpha)
        return bounds, bounds.check(epsilon, name=name)

    def corner_probabilities(at: NDArray[np.float64], scale: float) -> NDArray[np.float64]:
        """Exact probabilities of the corner events {max z_i <= c}, {min z_i > c} under Lap(at, scale)."""
        below = laplace_interval_probability(-np.inf, corner[:, None], at[None, :], scale)
        above = laplace_interval_probability(corner[:, None], np.inf, at[None, :], scale)
        return np.r_[np.prod(below, axis=1), np.prod(above, axis=1)]

    def corner_miss(scale: float, level: float = epsilon) -> float:
        """Miss bound of the corner-event test at ``level`` for noise of this scale; nan where nothing is violated."""
        return _best_detection_miss(corner_probabilities(u_a, scale), corner_probabilities(v_a, scale), n, level, alpha)

    rows = {}
    for j, (k_, (release, scale)) in enumerate(calibrations.items()):
        exact = laplace_max_interval_log_ratio(u_a, v_a, scale, edges_a)
        bnds, ev = corner_events_check(release, f"corner-event ratios <= e^eps, d={dim}, {k_}", seed + j)
        rows[k_] = (exact, bnds, ev, scale, corner_miss(scale))
    good, percoord, l2cal, halfcal = rows.values()
    sqrt_d_level = l1 / l2 * epsilon  # the per-coordinate calibration's cost misread as a factor sqrt(d)
    sqrt_d_test = percoord[1].check(sqrt_d_level, name=f"per-coordinate: corner-event ratios <= e^({l1 / l2:g} eps)")
    per_coordinate = Experiment(
        evidence=(
            Close(
                f"exact max log box ratio = {l1 / linf:g} eps", percoord[0].log_ratio_max, l1 / linf * epsilon, atol=TOL
            ),
            Rejected(percoord[2].name, result=percoord[2], miss=percoord[4]),
        ),
        controls=(
            Close(
                f"it costs sqrt(d): exact max log box ratio = {l1 / l2:g} eps",
                percoord[0].log_ratio_max,
                sqrt_d_level,
                atol=TOL,
            ),
            Test(sqrt_d_test.name, result=sqrt_d_test, miss=corner_miss(percoord[3], sqrt_d_level)),
        ),
    )
    p_norm = Experiment(
        evidence=(
            Close("p = 1: exact max log box ratio = eps", good[0].log_ratio_max, epsilon, atol=TOL),
            good[2],
            Close(
                f"p = 2 instead: exact max log box ratio = {l1 / l2:g} eps",
                l2cal[0].log_ratio_max,
                l1 / l2 * epsilon,
                atol=TOL,
            ),
        ),
        controls=(
            Compare("p = 2: exact max log box ratio <= eps", l2cal[0].log_ratio_max, "<=", epsilon + TOL),
            Test(l2cal[2].name, result=l2cal[2], miss=l2cal[4]),
        ),
    )
    return VectorCalibrations(
        evidence=(
            Close("scale Delta_1/eps: exact max log box ratio = eps", good[0].log_ratio_max, epsilon, atol=TOL),
            good[2],
        ),
        controls=(
            Compare(
                "scale Delta_1/(2 eps) (the stray 1/2): exact max log box ratio <= eps",
                halfcal[0].log_ratio_max,
                "<=",
                epsilon + TOL,
            ),
            Test(halfcal[2].name, result=halfcal[2], miss=halfcal[4]),
        ),
        rows=rows,
        per_coordinate=per_coordinate,
        p_norm=p_norm,
    )


@dataclass(frozen=True)
class SumUpperLimit(Experiment):
    """Seed 000's sums to n: the inequality's two sides for each upper limit n, and the truncated calibration."""

    lhs: float = math.nan
    rhs: tuple[tuple[int, float], ...] = ()
    truncated: IntervalRatioMax | None = None

    @property
    def summary(self) -> str:
        """One line per upper limit n, as printed."""
        return "\n".join(
            f"n = {n_}: sum_(i<=d) = {self.lhs}  vs  sum_(i<=n) = {r_}  -> "
            f"inequality {'holds' if self.lhs <= r_ else 'FAILS'}"
            for n_, r_ in self.rhs
        )


def sum_upper_limit(
    u: ArrayLike,
    v: ArrayLike,
    epsilon: float,
    correct_log_ratio_max: float,
    *,
    y: ArrayLike | None = None,
    truncate_at: int = 2,
    edges: ArrayLike | None = None,
) -> SumUpperLimit:
    r"""Seed 000 sums to :math:`n` over :math:`d` coordinates: the inequality and the sensitivity it gives.

    With :math:`\Delta x = v - u` and :math:`y` below both points (default
    :math:`-1` in each coordinate),
    :math:`\sum_{i\le d}(|y_i-\Delta x_i| - |y_i|)` is compared with
    :math:`\sum_{i\le n}|\Delta x_i|` for :math:`n = 1..d`. Evidence: the
    inequality with :math:`n = d`; the correct calibration's exact max log box
    ratio ``correct_log_ratio_max`` (from :func:`vector_calibrations`) is
    :math:`\varepsilon` (:math:`10^{-12}`). Controls: the inequality for each
    :math:`n < d`; the exact max log box ratio of the calibration to the sum
    truncated at ``truncate_at`` is :math:`\le \varepsilon`. Deterministic: no
    false-alarm budget.
    """
    u_a, v_a = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    dim = u_a.size
    dx = v_a - u_a
    y_pt = np.full(dim, -1.0) if y is None else np.asarray(y, dtype=float)
    edges_a = np.r_[-np.inf, np.linspace(-10, 11, 421), np.inf] if edges is None else np.asarray(edges, dtype=float)
    lhs = np.sum(np.abs(y_pt - dx) - np.abs(y_pt))
    rhs = tuple((n_, np.sum(np.abs(dx[:n_]))) for n_ in range(1, dim + 1))
    trunc = laplace_max_interval_log_ratio(u_a, v_a, np.sum(np.abs(dx[:truncate_at])) / epsilon, edges_a)
    return SumUpperLimit(
        evidence=(
            Compare("sums to d: sum (|y - dx| - |y|) <= sum_(i<=d) |dx_i|", lhs, "<=", np.sum(np.abs(dx))),
            Close("Delta from n = d gives max log box ratio eps", correct_log_ratio_max, epsilon, atol=TOL),
        ),
        controls=(
            *[Compare(f"sums to n = {n_}", lhs, "<=", r_) for n_, r_ in rhs[:-1]],
            Compare(
                f"Delta from n = {truncate_at}: max log box ratio <= eps", trunc.log_ratio_max, "<=", epsilon + TOL
            ),
        ),
        lhs=lhs,
        rhs=rhs,
        truncated=trunc,
    )
