r"""Chapter 01, the Laplace distribution: its Monte Carlo checks and numerical experiments.

The chapter derives the formulas with sympy; the functions here take the
derived expressions as arguments and check them: seed 000's branch of the
distribution function against the integral (:func:`cdf_right_branch`), the
derived law against samples of :class:`dpcore.LaplaceMechanism`
(:class:`DerivedLaw`, :func:`law_checks`) and plausible wrong claims against
the same samples (:func:`wrong_law_checks`), the crossing of the Laplace and
normal tails (:func:`tail_crossing`), the moment generating function
(:func:`mgf_check`), the most probable window about the mode
(:func:`window_probability`), why pure DP needs exponential tails
(:func:`tail_necessity`) and the Fejer counterexample: heavier tails are not
enough (:func:`fejer_counterexample`). Every random draw
goes through :mod:`dpcore` with the integer seeds the chapter passes, so the
chapter prints the numbers its former inline code printed. Only the symbolic
checks import sympy.

Every Monte Carlo test wrongly rejects a true claim with probability at most
its ``alpha`` (:mod:`dpcore.montecarlo`); the ledger adds these up (union
bound) and keeps the total under :data:`dpbook.evidence.BOOK_ALPHA`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import mpmath
import numpy as np
from numpy.typing import NDArray
from scipy import special, stats
from scipy.optimize import brentq

import dpcore
from dpcore.montecarlo import CheckResult, Sampler

from ..evidence import Close, Compare, Equal, Evidence, Fact, Rejected, Test, miss_probability
from . import Experiment

__all__ = [
    "cdf_right_branch",
    "laplace_sampler",
    "DerivedLaw",
    "LawChecks",
    "law_checks",
    "WrongLawChecks",
    "wrong_law_checks",
    "TailCrossing",
    "tail_crossing",
    "MGFCheck",
    "mgf_check",
    "WindowCheck",
    "window_probability",
    "TailNecessity",
    "tail_necessity",
    "FejerCounterexample",
    "fejer_counterexample",
]

Array = NDArray[np.float64]


def laplace_sampler(loc: float, scale: float) -> Sampler:
    r"""Samples of :math:`\mathrm{Lap}(\mu, b)`: ``dpcore.LaplaceMechanism(scale)`` releasing ``loc``.

    Returns
    -------
    callable
        ``sampler(rng, size)``, the signature of :mod:`dpcore.montecarlo`.

    Raises
    ------
    ValueError
        If ``scale`` is not finite and > 0 (from the mechanism).
    """
    mechanism = dpcore.LaplaceMechanism(scale)
    return lambda gen, size: mechanism.sample(loc, size, gen)


def cdf_right_branch(integrated: Any, corrected: Any, seed_branch: Any) -> Experiment:
    r"""Seed 000's right branch of :math:`F` against the corrected one, both against the integral.

    Evidence (symbolic and exact: no false alarm): the integrated
    :math:`F(\mu + s)`, :math:`s > 0`, equals ``corrected`` at
    :math:`x = \mu + s` (:class:`~dpbook.evidence.Equal`, proved by sympy),
    and ``corrected`` at :math:`x = \mu + 2b` is :math:`\ge 0`, as a
    distribution function must be. Controls (each must fail): the same two
    checks of ``seed_branch``.

    Parameters
    ----------
    integrated : sympy expression
        :math:`F(\mu + s)` in the symbols ``mu, b, s`` of :mod:`dpbook.symbolic`.
    corrected, seed_branch : sympy expressions
        The branch for :math:`x \ge \mu`, in ``x, mu, b``: the corrected one
        and the seed's.

    Returns
    -------
    Experiment
        Evidence: the corrected branch; controls: the seed's.
    """
    from ..symbolic import b, mu, s, x

    at_2b = {x: mu + 2 * b}
    return Experiment(
        evidence=(
            Equal("integrated F(mu + s) = corrected", integrated, corrected.subs(x, mu + s)),
            Compare("corrected F(mu + 2b) >= 0", float(corrected.subs(at_2b)), ">=", 0, kind="exact"),
        ),
        controls=(
            Equal("integrated F(mu + s) = seed's", integrated, seed_branch.subs(x, mu + s)),
            Compare("seed's F(mu + 2b) >= 0", float(seed_branch.subs(at_2b)), ">=", 0, kind="exact"),
        ),
    )


@dataclass(frozen=True)
class DerivedLaw:
    r"""The chapter's derived formulas for :math:`\mathrm{Lap}(\mu, b)`, as numerical functions.

    Attributes
    ----------
    cdf : callable
        ``cdf(x, mu, b)``, the distribution function (vectorised in ``x``).
    mean, variance : callable
        ``mean(mu, b)`` and ``variance(mu, b)``.
    kurtosis : float
        :math:`E[(X-\mu)^4]/\mathrm{Var}[X]^2`.
    tail : callable
        ``tail(t, b)`` = :math:`P(|X-\mu| > t)`.
    """

    cdf: Callable[[Array, float, float], Array]
    mean: Callable[[float, float], float]
    variance: Callable[[float, float], float]
    kurtosis: float
    tail: Callable[[float, float], float]

    @classmethod
    def from_sympy(
        cls, cdf_left: Any, cdf_right: Any, mean: Any, variance: Any, kurtosis: Any, tail: Any
    ) -> DerivedLaw:
        r"""Lambdify the chapter's derived sympy expressions (symbols of :mod:`dpbook.symbolic`).

        ``cdf_left`` and ``cdf_right`` are :math:`F(\mu - s)` and
        :math:`F(\mu + s)` for :math:`s > 0` (as from
        :func:`dpbook.symbolic.laplace_cdf_by_integration`); they are joined
        into :math:`F(x)` (``cdf_left`` at :math:`s = \mu - x` for
        :math:`x < \mu`, ``cdf_right`` at :math:`s = x - \mu` otherwise).
        ``mean`` and ``variance`` are expressions in :math:`\mu, b`,
        ``kurtosis`` a number, ``tail`` :math:`P(|X-\mu| > s)` in :math:`s, b`.
        The very expressions derived are evaluated, none is retyped.
        """
        import sympy as sp

        from ..symbolic import b, mu, s, x

        cdf = sp.Piecewise((cdf_left.subs(s, mu - x), x < mu), (cdf_right.subs(s, x - mu), True))
        return cls(
            cdf=sp.lambdify((x, mu, b), cdf, "numpy"),
            mean=sp.lambdify((mu, b), mean),
            variance=sp.lambdify((mu, b), variance),
            kurtosis=float(kurtosis),
            tail=sp.lambdify((s, b), tail),
        )

    def at(self, loc: float, scale: float) -> dict[str, Any]:
        r"""The claims and premises of :func:`dpcore.check_law` at :math:`(\mu, b)`.

        The event is :math:`|X-\mu| > 2b`; the grid of the CDF check is
        :math:`\mu + b\,[-10, 10]` (4001 points). The variance bound of the
        mean check and the kurtosis bound of the variance check are the
        derived variance and kurtosis.
        """
        variance = float(self.variance(loc, scale))
        return dict(
            cdf=lambda g: self.cdf(g, loc, scale),
            mean=float(self.mean(loc, scale)),
            variance=variance,
            variance_bound=variance,
            kurtosis_bound=float(self.kurtosis),
            event=lambda v: np.abs(v - loc) > 2 * scale,
            event_probability=float(self.tail(2 * scale, scale)),
            grid=loc + scale * np.linspace(-10, 10, 4001),
        )


@dataclass(frozen=True)
class LawChecks(Experiment):
    """The four tests of :func:`dpcore.check_law` per law; ``results`` in the order run."""

    results: tuple[CheckResult, ...] = field(default=())


def law_checks(
    law: DerivedLaw,
    params: Sequence[tuple[float, float]],
    *,
    n: int,
    alpha: float,
    seed: int,
    sampler: Callable[[float, float], Sampler] = laplace_sampler,
) -> LawChecks:
    r"""Test the derived law against samples of :math:`\mathrm{Lap}(\mu, b)` for each ``(mu, b)``.

    For each law, :func:`dpcore.check_law` runs four tests, each at level
    ``alpha/4``:

    * the CDF: DKW with Massart's constant,
      :math:`P(\sup_x|F_n - F| > r) \le 2e^{-2nr^2}`;
    * the mean: median of means, premise :math:`\mathrm{Var}[X] \le` the
      derived variance (Chebyshev per block, binomial tail across blocks);
    * the variance: median of means over :math:`(X_1-X_2)^2/2`, premise
      kurtosis :math:`\le` the derived kurtosis;
    * the tail :math:`P(|X-\mu| > 2b)`: exact Clopper--Pearson interval.

    Error budget: a true law fails with probability at most ``alpha`` (union
    bound over its four tests), all laws together at most
    ``len(params) * alpha``.

    Parameters
    ----------
    law : DerivedLaw
        The chapter's derived formulas.
    params : sequence of (mu, b)
        The laws to sample.
    n : int
        Samples per test.
    alpha : float
        False-alarm probability per law.
    seed : int
        Law ``i`` uses the stream ``seed + i``.
    sampler : callable
        ``sampler(mu, b)`` gives the sampler tested (default
        :func:`laplace_sampler`; a flawed one must fail some test).

    Returns
    -------
    LawChecks
        ``evidence`` and ``results``: the ``4 * len(params)`` results (each
        must pass); no controls (see :func:`wrong_law_checks`).
    """
    results: list[CheckResult] = []
    for i, (loc, scale) in enumerate(params):
        results += dpcore.check_law(
            sampler(loc, scale),
            n,
            **law.at(loc, scale),
            alpha=alpha,
            rng=seed + i,
            name=f"mu={loc}, b={scale}",
        )
    return LawChecks(evidence=tuple(results), results=tuple(results))


@dataclass(frozen=True)
class WrongLawChecks(Experiment):
    """The tests of :func:`law_checks` applied to wrong claims.

    ``results`` are the five tests, ``truths`` the true values of the tested
    quantities, ``as_controls`` the first four as :class:`~dpbook.evidence.Test`
    controls (each must fail) for the record of the derived law.
    """

    results: tuple[CheckResult, ...] = field(default=())
    truths: tuple[float, ...] = field(default=())
    as_controls: tuple[Evidence, ...] = field(default=())


def wrong_law_checks(
    law: DerivedLaw,
    loc: float,
    scale: float,
    checked: Sequence[CheckResult],
    *,
    n: int,
    alpha: float,
    seed: int,
    cdf_seed: int,
    sampler: Sampler | None = None,
) -> WrongLawChecks:
    r"""Apply the law tests to five plausible wrong claims about :math:`\mathrm{Lap}(\mu, b)`.

    The wrong claims: :math:`F` is the normal CDF of the same mean and
    variance; :math:`E[X] = \mu + b`; :math:`\mathrm{Var}[X] = b^2`;
    :math:`P(|X-\mu| > 2b) = e^{-2}/2` (one tail); and :math:`F` is the
    Laplace CDF of scale :math:`b/\sqrt2` (from ``law.cdf``). The first four
    go through :func:`dpcore.check_law` at level ``alpha`` (premises: the
    derived variance and kurtosis, as in :func:`law_checks`), the last
    through :func:`dpcore.check_cdf` at ``alpha/4``.

    Each test must reject. Its miss probability (it passes the wrong claim)
    is bounded by :func:`dpbook.evidence.miss_probability` from the true
    value of the tested quantity: the sup distance between the derived and
    the wrong CDF over the grid, :math:`\mu`, :math:`2b^2`, :math:`e^{-2}`.
    The ledger adds those miss probabilities to the budget.

    Power, claimed where it can be computed: each rejection's certified
    miss probability is at most the test's own level (evidence,
    deterministic given the results). Resolution, the plausible wrong claim
    "a million samples resolve a 1 % error": the same bound for the errors
    ``F`` = Laplace CDF of scale :math:`1.01 b`, :math:`E[X] = \mu + 0.01 b`,
    :math:`\mathrm{Var}[X] = 2.02 b^2` and :math:`P(|X-\mu| > 2b) = 1.01 e^{-2}`
    is at most the test's level (controls, each must fail: the gap is below
    twice the radius of the fixed-radius tests, and the exact binomial
    acceptance probability of the Clopper--Pearson test is large).

    Parameters
    ----------
    law : DerivedLaw
        The chapter's derived formulas (the premises, the true CDF).
    loc, scale : float
        The law :math:`\mathrm{Lap}(\mu, b)` sampled.
    checked : sequence of CheckResult
        Results of tests of true claims (from :func:`law_checks`); kept in
        the signature for callers, not used as controls (a true claim
        rejected would be the other record's evidence with the roles swapped).
    n : int
        Samples per test.
    alpha : float
        Level of the four-test law check; the extra CDF test has ``alpha/4``.
    seed, cdf_seed : int
        Streams of the law check and of the extra CDF test.
    sampler : callable, optional
        ``sampler(rng, size)``; default :func:`laplace_sampler` ``(loc, scale)``.

    Returns
    -------
    WrongLawChecks
        ``evidence``: the five rejections and their certified miss bounds;
        ``controls``: the certified miss bounds of the four 1 % errors;
        ``as_controls``: the first four tests as tests that must fail (for
        the record of the derived law).
    """
    derived = law.at(loc, scale)
    grid = derived["grid"]
    normal_cdf = stats.norm(loc, np.sqrt(2) * scale).cdf

    def narrow_cdf(g: Array) -> Array:
        return law.cdf(g, loc, scale / 2**0.5)

    claims = dict(cdf=normal_cdf, mean=loc + scale, variance=scale**2)
    claims["event_probability"] = float(np.exp(-2) / 2)
    sampler = laplace_sampler(loc, scale) if sampler is None else sampler
    wrong = dpcore.check_law(sampler, n, **{**derived, **claims}, alpha=alpha, rng=seed, name="wrong")
    wrong.append(
        dpcore.check_cdf(
            sampler,
            n,
            narrow_cdf,
            grid=grid,
            alpha=alpha / 4,
            rng=cdf_seed,
            name="CDF (wrong: Laplace of scale b/sqrt 2)",
        )
    )

    def gap(cdf: Callable[[Array], Array]) -> float:
        return float(np.abs(derived["cdf"](grid) - cdf(grid)).max())

    def wide_cdf(g: Array) -> Array:
        return law.cdf(g, loc, 1.01 * scale)

    truths = (gap(normal_cdf), loc, 2 * scale**2, float(np.exp(-2)), gap(narrow_cdf))
    rejected = tuple(Rejected(r.name, result=r, true_value=t) for r, t in zip(wrong, truths, strict=True))
    # the resolution limit: the same tests, the same n and alpha, 1 % errors (certified miss bounds)
    near = (
        ("CDF: Laplace of scale 1.01 b", wrong[4], gap(wide_cdf)),
        ("E[X] = mu + 0.01 b", replace(wrong[1], claimed=loc + 0.01 * scale), loc),
        ("Var[X] = 2.02 b^2", replace(wrong[2], claimed=2.02 * scale**2), 2 * scale**2),
        ("P(|X - mu| > 2b) = 1.01 e^-2", replace(wrong[3], claimed=1.01 * float(np.exp(-2))), float(np.exp(-2))),
    )
    power = tuple(
        Compare(f"certified miss probability of '{r.name}' <= its level", e.alpha, "<=", r.alpha, kind="exact")
        for r, e in zip(wrong, rejected, strict=True)
    )
    resolution = tuple(
        Compare(
            f"certified miss probability against the 1 % error '{nm}' <= its level",
            miss_probability(r, t),
            "<=",
            r.alpha,
            kind="exact",
        )
        for nm, r, t in near
    )
    return WrongLawChecks(
        evidence=(*rejected, *power),
        controls=resolution,
        results=tuple(wrong),
        truths=truths,
        as_controls=tuple(Test(r.name, result=r, true_value=t) for r, t in zip(wrong[:4], truths[:4], strict=True)),
    )


@dataclass(frozen=True)
class TailCrossing(Experiment):
    """Where the two-sided tails of Lap(0, b) and N(0, 2b^2) cross, in units of b."""

    cross: float = math.nan
    cross_mp: Any = None  # mpmath.mpf


def tail_crossing(
    bracket: tuple[float, float] = (0.5, 10.0),
    guess: float = 2.4,
    dps: int = 30,
    far: float = 30.0,
) -> TailCrossing:
    r"""Where the two-sided tails :math:`e^{-u}` (Laplace) and :math:`\operatorname{erfc}(u/2)` (normal) cross.

    :math:`u = t/b`; the laws are :math:`\mathrm{Lap}(0, b)` and
    :math:`N(0, 2b^2)`, of equal variance. The root of
    :math:`d(u) = e^{-u} - \operatorname{erfc}(u/2)` is found twice,
    ``scipy.optimize.brentq`` on ``bracket`` and ``mpmath.findroot`` from
    ``guess`` at ``dps`` digits, which must agree to a relative 1e-10. Then
    "heavier beyond the crossing" is checked where it can fail: on 3000 points
    of :math:`(0, u^*)` the Laplace tail is the *lighter* one
    (:math:`\max d < 0`) and on 3000 points of :math:`(u^*, \text{far}]` the
    heavier one (:math:`\min d > 0`), with :math:`d` in mpmath at ``dps``
    digits (no cancellation near the root). No randomness, no false alarm.

    Control (must fail), the careless reading of "heavier tails": the
    Laplace tail is at least the normal one at *every* :math:`u > 0`
    (:math:`\min d \ge 0` over both grids).

    Returns
    -------
    TailCrossing
        ``cross`` (brentq), ``cross_mp`` (mpmath).

    Raises
    ------
    ValueError
        If the function does not change sign on ``bracket`` (brentq).
    """
    cross = brentq(lambda u: np.exp(-u) - special.erfc(u / 2), *bracket)
    with mpmath.workdps(dps):
        cross_mp = mpmath.findroot(lambda u: mpmath.exp(-u) - mpmath.erfc(u / 2), guess)

        def d(u: float) -> float:
            return float(mpmath.exp(-mpmath.mpf(u)) - mpmath.erfc(mpmath.mpf(u) / 2))

        root = float(cross_mp)
        inside = [d(u) for u in np.linspace(0.0, root, 3002)[1:-1]]
        beyond = [d(u) for u in np.linspace(root, far, 3001)[1:]]
    return TailCrossing(
        evidence=(
            Close("crossing point: brentq = mpmath", cross, float(cross_mp), rtol=1e-10),
            Compare("max of e^-u - erfc(u/2) on (0, u*): Laplace tail lighter", max(inside), "<", 0),
            Compare(f"min of e^-u - erfc(u/2) on (u*, {far:g}]: Laplace tail heavier", min(beyond), ">", 0),
        ),
        controls=(
            Compare(
                "careless reading: Laplace tail >= normal tail at every u > 0",
                min(inside + beyond),
                ">=",
                0,
            ),
        ),
        cross=float(cross),
        cross_mp=cross_mp,
    )


@dataclass(frozen=True)
class MGFCheck(Experiment):
    """The Monte Carlo test of the MGF and of the one-sided (wrong) MGF: ``checks``."""

    checks: tuple[CheckResult, ...] = field(default=())


def mgf_check(
    mgf: Callable[[float, float], float],
    *,
    scale: float,
    n: int,
    alpha: float,
    seeds: tuple[int, int],
) -> MGFCheck:
    r"""Test the derived MGF :math:`M(\lambda) = E[e^{\lambda X}]` of Lap(0, b) at :math:`\lambda = 1/(4b)`.

    The mean of :math:`Y = e^{\lambda X}` is tested by median of means
    (:func:`dpcore.check_mean`), whose premise is the variance bound
    :math:`\mathrm{Var}[Y] = M(2\lambda) - M(\lambda)^2`, exact and finite
    because :math:`2\lambda < 1/b`. The claim is :math:`M(\lambda)` (16/15
    for the correct MGF); the negative control is the one-sided
    exponential MGF :math:`1/(1 - b\lambda) = 4/3`.

    Error budget: the test of the claim has false-alarm ``alpha``; the
    control's miss probability is ``alpha`` as well when
    :math:`|4/3 - M(\lambda)| \ge 2r` (fixed radius ``r``), else 1.

    Parameters
    ----------
    mgf : callable
        ``mgf(lambda, b)``, the chapter's derived MGF (location 0).
    scale : float
        :math:`b`.
    n : int
        Samples per test.
    alpha : float
        Level of each test.
    seeds : (int, int)
        Streams of the test of the claim and of the control.

    Returns
    -------
    MGFCheck
        ``checks`` (claim, control); ``evidence``: the claim's test;
        ``controls``: the one-sided MGF's test, with the true value
        :math:`M(\lambda)`.
    """
    lam = 1 / (4 * scale)
    var_bound = mgf(2 * lam, scale) - mgf(lam, scale) ** 2
    sampler = laplace_sampler(0.0, scale)

    def exp_smp(gen: np.random.Generator, size: int) -> Array:
        return np.exp(lam * sampler(gen, size))

    ok, wrong = (
        dpcore.check_mean(exp_smp, n, c, variance_bound=var_bound, rng=sd, alpha=alpha, name=nm)
        for c, sd, nm in [
            (mgf(lam, scale), seeds[0], "E[exp(X/4b)] = 16/15"),
            (1 / (1 - scale * lam), seeds[1], "wrong: one-sided exponential MGF 4/3"),
        ]
    )
    return MGFCheck(
        evidence=(Test(ok.name, result=ok),),
        controls=(Test(wrong.name, result=wrong, true_value=mgf(lam, scale)),),
        checks=(ok, wrong),
    )


@dataclass(frozen=True)
class WindowCheck(Experiment):
    """The tests of the window probability and of its density-times-length reading: ``checks``."""

    checks: tuple[CheckResult, ...] = field(default=())
    exact: float = math.nan


def window_probability(
    *,
    loc: float,
    scale: float,
    half_width: float,
    n: int,
    alpha: float,
    seeds: tuple[int, int],
    sampler: Sampler | None = None,
) -> WindowCheck:
    r"""Test :math:`P(|X - \mu| < h) = 1 - e^{-h/b}` for :math:`X \sim \mathrm{Lap}(\mu, b)`, ``h = half_width``.

    The window of width :math:`2h` about the mode is the most probable one
    (the chapter proves it); its exact probability is
    :math:`1 - e^{-h/b}`. The count of samples in it is binomial, and the
    exact Clopper--Pearson interval (:func:`dpcore.check_probability`,
    two-sided, level ``alpha``) tests that value. Control: the plausible
    reading of the mode as "probability = density times length",
    :math:`P(|X-\mu| < h) = 2h f(\mu) = h/b`, tested the same way (its own
    samples, level ``alpha``); its miss probability is the exact binomial
    acceptance probability at the true value
    (:func:`dpbook.evidence.miss_probability`).

    Parameters
    ----------
    loc, scale : float
        :math:`\mu` and :math:`b`.
    half_width : float
        :math:`h > 0`.
    n : int
        Samples per test.
    alpha : float
        Level of each test.
    seeds : (int, int)
        Streams of the two tests.
    sampler : callable, optional
        ``sampler(rng, size)``; default :func:`laplace_sampler` ``(loc, scale)``.

    Returns
    -------
    WindowCheck
        ``checks`` (claim, control); ``exact``; ``evidence``: the claim's
        test; ``controls``: the density-times-length claim, with the true value.
    """
    smp = laplace_sampler(loc, scale) if sampler is None else sampler
    exact = -math.expm1(-half_width / scale)

    def in_window(v: Array) -> NDArray[np.bool_]:
        return np.abs(v - loc) < half_width

    ok, linear = (
        dpcore.check_probability(smp, in_window, n, p, alpha=alpha, rng=sd, name=nm)
        for p, sd, nm in [
            (exact, seeds[0], "P(|X - mu| < h) = 1 - e^(-h/b)"),
            (half_width / scale, seeds[1], "wrong: P(|X - mu| < h) = 2h f(mu) = h/b"),
        ]
    )
    return WindowCheck(
        evidence=(ok,),
        controls=(Test(linear.name, result=linear, true_value=exact),),
        checks=(ok, linear),
        exact=exact,
    )


@dataclass(frozen=True)
class TailNecessity(Experiment):
    """Half-line event log-ratios of additive Laplace and normal noise; the largest of each."""

    laplace_max: float = math.nan
    normal_far: float = math.nan


def tail_necessity(*, scale: float, shift: float, far: float, epsilon: float) -> TailNecessity:
    r"""Pure DP needs tails at least exponential: Laplace noise meets it, normal noise of equal variance fails.

    For additive noise :math:`Z` and answers :math:`0` and :math:`\Delta`
    (``shift``), the events :math:`S_t = (t, \infty)` have probabilities
    :math:`P(Z > t)` and :math:`P(Z > t - \Delta)`; :math:`\varepsilon`-DP needs
    :math:`\log P(Z > t - \Delta) - \log P(Z > t) \le \varepsilon` for every
    :math:`t`, so :math:`P(Z > t) \ge e^{-\varepsilon t/\Delta} P(Z > 0)`
    along :math:`t = k\Delta`: tails at least exponential. Computed exactly
    in floating point from ``scipy.stats`` log-survival functions (no sampling):

    * Laplace :math:`\mathrm{Lap}(0, b)`: the largest log-ratio over 4001
      points of :math:`t \in [-\text{far}, \text{far}]` equals
      :math:`\Delta/b` (relative 1e-9; evidence);
    * normal :math:`N(0, 2b^2)`, the same variance: the log-ratio at
      :math:`t = \text{far}` exceeds ``epsilon`` (evidence: not
      ``epsilon``-DP; the log-ratio grows like :math:`t\Delta/(2b^2)`).

    Control (must fail), the plausible claim that tails do not matter: the
    normal noise of the same variance is ``epsilon``-DP, i.e. its log-ratio
    at ``far`` is at most ``epsilon``.
    """
    ts = np.linspace(-far, far, 4001)
    lap = stats.laplace(0.0, scale)
    lap_ratio = lap.logsf(ts - shift) - lap.logsf(ts)
    nrm = stats.norm(0.0, math.sqrt(2) * scale)
    normal_far = float(nrm.logsf(far - shift) - nrm.logsf(far))
    return TailNecessity(
        evidence=(
            Close(
                "Laplace: largest half-line log-ratio = Delta/b",
                float(lap_ratio.max()),
                shift / scale,
                rtol=1e-9,
            ),
            Compare(
                f"normal, same variance: half-line log-ratio at t = {far:g} > eps = {epsilon:g}",
                normal_far,
                ">",
                epsilon,
            ),
        ),
        controls=(
            Compare(
                f"tails do not matter: normal noise of the same variance is {epsilon:g}-DP "
                f"(log-ratio at t = {far:g} <= {epsilon:g})",
                normal_far,
                "<=",
                epsilon,
            ),
        ),
        laplace_max=float(lap_ratio.max()),
        normal_far=normal_far,
    )


@dataclass(frozen=True)
class FejerCounterexample(Experiment):
    """Heavier tails without privacy: the Fejer tail beyond ``t`` and the Laplace tail ``e^-t``."""

    fejer: float = math.nan
    laplace: float = math.nan


def fejer_counterexample(density: Any, antiderivative: Any, *, t: int = 20, log_ratio: int = 10) -> FejerCounterexample:
    r"""Check the chapter's Fejer counterexample: heavier tails than Lap(0, 1), and no privacy.

    The Fejer density :math:`f(x) = (1-\cos x)/(\pi x^2)` has tails of order
    :math:`1/t`, yet a shift of 1 is not private: :math:`f` vanishes at
    :math:`2\pi` but not at :math:`2\pi - 1`, so the density ratio of releases
    of 0 and of 1 at :math:`z = 2\pi` is infinite. Every number below is
    computed here from ``density`` and ``antiderivative``. Evidence (symbolic
    and deterministic: no false alarm):

    * the integral of ``density`` over the line (sympy) is 1;
    * ``antiderivative`` :math:`G(u)` has derivative :math:`\pi f(u)` (sympy
      differentiates it), and :math:`f` is even;
    * so the tail :math:`P(|X| > t) = 2 (G(\infty) - G(t))/\pi` (the limit by
      sympy, evaluated at 30 digits) exceeds :math:`e^{-t}`, the tail of
      :math:`\mathrm{Lap}(0, 1)`;
    * ``density`` is exactly 0 at :math:`2\pi` and positive at :math:`2\pi - 1`;
    * the contrast, independent of the inputs: the privacy loss of the Laplace
      mechanism of scale 1 for answers 0 and 1
      (:func:`dpcore.laplace_privacy_loss`) stays within :math:`1 + 10^{-12}`
      on 6001 points of [-30, 30] (the bound :math:`|L| \le \Delta/b = 1`).

    Control (must fail): :math:`f(2\pi) \ge e^{-c} f(2\pi - 1)`, i.e. the
    density ratio at :math:`2\pi` is at most :math:`e^{c}`, ``c = log_ratio``.

    Parameters
    ----------
    density : sympy expression
        :math:`f`, in one real symbol.
    antiderivative : sympy expression
        :math:`G(u)`, in one positive symbol, with :math:`G' = \pi f`.
    t : int
        The tail's threshold.
    log_ratio : int
        :math:`c` of the control.

    Returns
    -------
    FejerCounterexample
        ``fejer`` (the Fejer tail :math:`P(|X| > t)`) and ``laplace``
        (:math:`e^{-t}`, the Laplace tail).
    """
    import sympy as sp  # exact values: only the symbolic experiments need sympy

    (var,) = density.free_symbols
    (u,) = antiderivative.free_symbols
    mass = sp.integrate(density, (var, -sp.oo, sp.oo))
    tail = 2 * (sp.limit(antiderivative, u, sp.oo) - antiderivative.subs(u, t)) / sp.pi
    fejer_tail = float(sp.N(tail, 30))
    at_zero, before_zero = density.subs(var, 2 * sp.pi), density.subs(var, 2 * sp.pi - 1)
    laplace_tail = float(np.exp(-t))
    loss = dpcore.laplace_privacy_loss(np.linspace(-30, 30, 6001), 0.0, 1.0, 1.0)
    return FejerCounterexample(
        evidence=(
            Equal("the Fejer density integrates to 1", mass, 1),
            Equal(
                "G(u) = Si(u) - (1 - cos u)/u is an antiderivative of pi f",
                sp.diff(antiderivative, u),
                sp.pi * density.subs(var, u),
            ),
            Equal("f is even: P(|X| > t) = 2 (G(oo) - G(t))/pi", density.subs(var, -var), density),
            Compare(
                f"its tail P(|X| > {t}) exceeds the Laplace tail e^-{t}",
                fejer_tail,
                ">",
                laplace_tail,
                kind="exact",
            ),
            Fact("it vanishes at 2 pi but not at 2 pi - 1", bool(at_zero == 0 and before_zero.is_positive)),
            Compare(
                "Laplace, b = 1, shift 1: max |privacy loss| (dpcore)",
                float(np.abs(loss).max()),
                "<=",
                1.0 + 1e-12,
            ),
        ),
        controls=(
            Compare(
                f"heavier tails, shift 1: density ratio at 2 pi <= e^{log_ratio}, i.e. "
                f"f(2 pi) >= e^-{log_ratio} f(2 pi - 1)",
                float(at_zero),
                ">=",
                float(sp.exp(-log_ratio) * before_zero),
                kind="exact",
            ),
        ),
        fejer=fejer_tail,
        laplace=laplace_tail,
    )
