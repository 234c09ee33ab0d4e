r"""Chapter 04 (the Gaussian mechanism): its experiments, one function each.

The chapter derives the privacy loss, Theorem 8 of Balle and Wang and the
chi equation of Bao et al. with sympy; the functions here run the numerical
side and return :class:`~dpbook.experiments.Experiment` objects whose
``evidence`` and ``controls`` go to :func:`dpbook.ledger.record`:

* :func:`theorem8_monte_carlo` -- Theorem 8 by Monte Carlo and by quadrature;
* :func:`classic_loose`, :func:`classic_beyond_theorem` -- the classic
  calibration for :math:`\varepsilon < 1` and beyond its theorem;
* :func:`chi_form_accuracy` -- the chi form and ``gaussian_log_delta`` against
  50-digit Theorem 8;
* :func:`newton_paths` -- Newton's method with the correct and with the seed's
  :math:`G'`;
* :func:`seed_code_table`, :func:`fsolve_cancellation` -- seed 002's code;
* :func:`variance_as_std`, :func:`mechanism_distribution` -- the seed's
  ``normal(0, sigma ** 2)`` and ``dpcore.gaussian_mechanism``;
* :func:`vector_sensitivity` -- the seed's L2 sensitivity "(max - min)" for a
  :math:`d`-dimensional datum;
* :func:`balle_wang_identities`, :func:`balle_wang_agreement` -- Balle and
  Wang's Algorithm 1 against the chi equation, symbolically and numerically;
* :func:`analytic_sigma_exact`, :func:`epsilon_exact` -- ``dpcore`` against
  50-digit references.

Every random draw goes through :mod:`dpcore` with the integer seeds given, so
the book's seed sweep moves every stream. Each Monte Carlo test keeps the
false-alarm probability ``alpha`` it is given; the ledger adds them up.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mpmath as mp
import numpy as np
from numpy.typing import NDArray
from scipy import optimize, stats
from scipy.integrate import quad

import dpcore
from dpbook import flawed
from dpbook import reference as mpref
from dpbook.evidence import Close, Compare, Fact, Test
from dpbook.experiments import Experiment
from dpcore._validation import check_positive_finite, check_probability_open
from dpcore.montecarlo import CheckResult

__all__ = [
    "loss_sampler",
    "theorem8_monte_carlo",
    "Theorem8MonteCarlo",
    "classic_loose",
    "ClassicLoose",
    "classic_formula",
    "classic_beyond_theorem",
    "ClassicBeyondTheorem",
    "chi_form_accuracy",
    "ChiFormAccuracy",
    "newton",
    "newton_paths",
    "NewtonPaths",
    "seed_code_table",
    "SeedCodeTable",
    "seed_C",
    "fsolve_cancellation",
    "FsolveCancellation",
    "variance_as_std",
    "VarianceAsStd",
    "mechanism_distribution",
    "MechanismDistribution",
    "vector_sensitivity",
    "VectorSensitivity",
    "balle_wang_identities",
    "balle_wang_algorithm1",
    "balle_wang_agreement",
    "BalleWangAgreement",
    "analytic_sigma_exact",
    "AnalyticSigmaExact",
    "epsilon_exact",
    "EpsilonExact",
    "phi_via_erf",
]

Profile = Callable[[float, float, float], Any]
"""``profile(sigma, sensitivity, epsilon)``: a privacy profile, like ``dpcore.gaussian_delta``."""
Calibrator = Callable[[float, float, float], float]
"""``calibrate(sensitivity, epsilon, delta)``: a sigma, like ``dpcore.analytic_gaussian_sigma``."""
Sampler = Callable[[np.random.Generator, int], NDArray[np.float64]]


def _short(x: float) -> str:
    """``x`` in the shortest exact e-notation, as the chapter writes it: ``1e-5``, not ``1e-05``."""
    text = next(t for t in (f"{x:.{p}e}" for p in range(17)) if float(t) == x)
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", text).replace("e+", "e")


# --------------------------------------------------------------------------- Theorem 8


def loss_sampler(
    sig: float,
    eps: float,
    sens: float = 1.0,
    noise_std: float | None = None,
    *,
    noise: Sampler | None = None,
) -> Sampler:
    r"""A sampler of :math:`(1 - e^{\varepsilon - L})_+` for :math:`Y \sim N(0, \mathtt{noise\_std}^2)`.

    :math:`L = (\Delta^2 - 2 Y \Delta)/(2\sigma^2)` is the privacy loss of
    :math:`N(0,\sigma^2)` against :math:`N(\Delta,\sigma^2)` (``sig`` is
    :math:`\sigma`, ``sens`` is :math:`\Delta`); ``noise_std`` defaults to
    ``sig`` (the output of :math:`M(D)` itself). ``noise(rng, n)``, if given,
    draws the :math:`Y` instead (e.g. the seed's release of 0). The values lie
    in [0, 1].
    """
    std = sig if noise_std is None else noise_std

    def sampler(rng: np.random.Generator, n: int) -> NDArray[np.float64]:
        yy = rng.normal(0.0, std, n) if noise is None else noise(rng, n)
        L = (sens**2 - 2 * yy * sens) / (2 * sig**2)
        return -np.expm1(np.minimum(eps - L, 0.0))

    return sampler


@dataclass(frozen=True, kw_only=True)
class Theorem8MonteCarlo(Experiment):
    """:func:`theorem8_monte_carlo`: the tests at each case, the control's test, the quadratures."""

    tests: tuple[CheckResult, ...]
    control_test: CheckResult
    quadratures: tuple[float, ...]


def theorem8_monte_carlo(
    cases: Sequence[tuple[float, float]] = ((0.5, 0.5), (1.0, 0.1), (1.0, 1.0), (2.0, 0.05), (0.3, 3.0)),
    *,
    n: int = 1_000_000,
    alpha: float = 1e-6 / 6,
    seed: int = 100,
    control_seed: int = 200,
    control_case: tuple[float, float] = (1.0, 1.0),
    profile: Profile = dpcore.gaussian_delta,
) -> Theorem8MonteCarlo:
    r"""Theorem 8 checked at each :math:`(\sigma, \varepsilon)` of ``cases`` (sensitivity 1), twice.

    * Monte Carlo: :math:`\delta(\varepsilon) = E[(1 - e^{\varepsilon - L})_+]`
      with :math:`Y \sim M(D) = N(0, \sigma^2)` (:func:`loss_sampler`); the
      variable lies in [0, 1], so ``dpcore.check_bounded_mean`` (Hoeffding and
      empirical Bernstein) tests the claimed ``profile(sigma, 1, eps)`` with
      ``n`` draws, false-alarm probability ``alpha``, seed ``seed + i`` for
      case ``i``.
    * Quadrature (the definition): :math:`\int_{-\infty}^{y^*} (p - e^\varepsilon q)`
      with :math:`p = N(0,\sigma^2)`, :math:`q = N(1,\sigma^2)` and
      :math:`y^* = 1/2 - \varepsilon\sigma^2` where :math:`L = \varepsilon`,
      compared with ``profile`` to ``rtol=1e-8``, ``atol=1e-15``.

    The control tests the plausible mistake :math:`\delta = P[L > \varepsilon]
    = \Phi(1/(2\sigma) - \varepsilon\sigma)` at ``control_case`` (seed
    ``control_seed``, the same ``n`` and ``alpha``); its miss probability is
    computed from the true value ``dpcore.gaussian_delta``.

    Error budget: ``len(cases)`` tests and one control, each with false-alarm
    (or miss) probability at most ``alpha``; the chapter takes
    ``alpha = 1e-6 / 6`` for 5 cases.

    Parameters
    ----------
    cases : sequence of (sigma, epsilon)
    n : int
        Draws per Monte Carlo test.
    alpha : float
        False-alarm probability of each test.
    seed, control_seed : int
        Seeds: ``seed + i`` for case ``i``; ``control_seed`` for the control.
    control_case : (sigma, epsilon)
    profile : callable
        The profile under test, ``profile(sigma, sensitivity, epsilon)``.

    Returns
    -------
    Theorem8MonteCarlo
        ``evidence``: the tests, then the quadrature comparisons; ``controls``:
        the test of the wrong profile.
    """
    tests, quad_checks, quads = [], [], []
    for i, (sig, eps) in enumerate(cases):
        target = profile(sig, 1.0, eps)
        tests.append(
            dpcore.check_bounded_mean(
                loss_sampler(sig, eps),
                n,
                target,
                lower=0.0,
                upper=1.0,
                alpha=alpha,
                rng=seed + i,
                name=f"delta(eps={eps}) at sigma={sig}",
            )
        )
        p_, q_ = stats.norm(0, sig).pdf, stats.norm(1, sig).pdf
        ys_ = 0.5 - eps * sig**2  # where L = eps

        def gap(t: float, p_: Any = p_, q_: Any = q_, eps: float = eps) -> float:
            return float(p_(t) - math.exp(eps) * q_(t))

        hs = quad(gap, -np.inf, ys_, epsabs=1e-15)[0]
        quads.append(hs)
        quad_checks.append(
            Close(
                f"int (p - e^eps q)_+ (quadrature) vs dpcore.gaussian_delta (sigma={sig}, eps={eps})",
                hs,
                target,
                rtol=1e-8,
                atol=1e-15,
            )
        )
    sig, eps = control_case
    wrong = stats.norm.cdf(1 / (2 * sig) - eps * sig)
    neg = dpcore.check_bounded_mean(
        loss_sampler(sig, eps),
        n,
        wrong,
        lower=0.0,
        upper=1.0,
        alpha=alpha,
        rng=control_seed,
        name="wrong: delta = P[L > eps]",
    )
    return Theorem8MonteCarlo(
        evidence=(*tests, *quad_checks),
        controls=(Test(neg.name, result=neg, true_value=dpcore.gaussian_delta(sig, 1.0, eps)),),
        tests=tuple(tests),
        control_test=neg,
        quadratures=tuple(quads),
    )


# --------------------------------------------------------------------------- the classic calibration


@dataclass(frozen=True, kw_only=True)
class ClassicLoose(Experiment):
    """:func:`classic_loose`: ``ratios[(eps, delta)]`` = classic / analytic sigma, and delta delivered / asked."""

    ratios: dict[tuple[float, float], float]
    delivered: tuple[float, ...]

    def summary(self) -> str:
        """The line the chapter prints."""
        return (
            f"sigma_classic / sigma_analytic ranges over {min(self.ratios.values()):.3f} .. "
            f"{max(self.ratios.values()):.3f}"
        )


def classic_loose(
    epsilons: Sequence[float] = (0.01, 0.1, 0.3, 0.6, 0.9, 0.99),
    deltas: Sequence[float] = (1e-12, 1e-8, 1e-5, 1e-2),
    *,
    classic: Calibrator = dpcore.classic_gaussian_sigma,
    analytic: Calibrator = dpcore.analytic_gaussian_sigma,
) -> ClassicLoose:
    r"""The classic calibration for :math:`\varepsilon < 1`: valid, and larger than needed.

    For each ``delta`` and each ``epsilon`` (all < 1, sensitivity 1) the classic
    :math:`\sigma_c = \sqrt{2\ln(1.25/\delta)}/\varepsilon` and the analytic
    :math:`\sigma_a` are computed. Evidence (deterministic, double precision):
    the largest :math:`\delta_{\sigma_c}(\varepsilon)/\delta \le 1` (valid), the
    smallest :math:`\sigma_c/\sigma_a > 1` (always larger), the largest
    :math:`> 10` (up to an order of magnitude). Control (must fail): at the
    smallest ``delta`` of the grid the classic sigma is within 10 % of the
    analytic one for some ``epsilon`` (:math:`\min_\varepsilon \sigma_c/\sigma_a
    \le 1.1`): the careless reading that both grow as
    :math:`\sqrt{2\ln(1/\delta)}/\varepsilon`, so that for tiny ``delta`` the
    classic calibration is as good as optimal.

    Parameters
    ----------
    epsilons, deltas : sequences of float
        The grid (epsilons in (0, 1)).
    classic, analytic : callable
        ``(sensitivity, epsilon, delta) -> sigma``.

    Returns
    -------
    ClassicLoose
    """
    ratios: dict[tuple[float, float], float] = {}
    delivered = []
    for d in deltas:
        for e in epsilons:
            sc, sa = classic(1.0, e, d), analytic(1.0, e, d)
            ratios[(e, d)] = sc / sa
            delivered.append(dpcore.gaussian_delta(sc, 1.0, e) / d)
    return ClassicLoose(
        evidence=(
            Compare("largest delta delivered / delta asked (classic, eps < 1)", max(delivered), "<=", 1.0),
            Compare("smallest sigma_classic / sigma_analytic", min(ratios.values()), ">", 1.0),
            Compare("largest sigma_classic / sigma_analytic", max(ratios.values()), ">", 10.0),
        ),
        controls=(
            Compare(
                f"at delta = {min(deltas):g} the classic sigma is within 10 % of the analytic: "
                "smallest sigma_classic / sigma_analytic there",
                min(r for (_, d), r in ratios.items() if d == min(deltas)),
                "<=",
                1.1,
            ),
        ),
        ratios=ratios,
        delivered=tuple(float(x) for x in delivered),
    )


def classic_formula(e: float, d: float, sens: float = 1.0) -> float:
    r"""The classic formula :math:`\Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon` itself.

    Without its theorem's condition :math:`\varepsilon < 1`.
    """
    return sens * math.sqrt(2 * math.log(1.25 / d)) / e


@dataclass(frozen=True, kw_only=True)
class ClassicBeyondTheorem(Experiment):
    """:func:`classic_beyond_theorem`: the threshold (double and 50 digits), the grid, dpcore's refusal."""

    eps_star: float
    eps_star_mp: float
    delta: float
    eps_far: float
    delta_far: float
    refusal: str

    def summary(self) -> str:
        """The lines the chapter prints."""
        out = (
            f"classic formula at delta = {_short(self.delta)}: valid up to eps = {self.eps_star:.4f} (mpmath "
            f"{self.eps_star_mp:.4f}), violated on the whole grid beyond; at eps = {self.eps_far:g} it "
            f"delivers delta = {self.delta_far:.3g}"
        )
        return out + (f"\ndpcore refuses: {self.refusal}" if self.refusal else "")


def classic_beyond_theorem(
    delta: float = 1e-5,
    epsilons: NDArray[np.float64] | None = None,
    *,
    refused_eps: float = 8.5,
    violated_eps: Sequence[float] = (8.5, 12.0, 20.0),
    control_eps: Sequence[float] = (1.0, 2.0, 4.0),
    classic: Callable[[float, float], float] = classic_formula,
) -> ClassicBeyondTheorem:
    r"""The classic formula applied for :math:`\varepsilon \ge 1`: where it starts to violate ``delta``.

    On the grid ``epsilons`` (default 1, 1.25, ..., 20) the profile
    :math:`\delta_{\sigma_c(\varepsilon)}(\varepsilon)` of the classic
    :math:`\sigma_c` is compared with ``delta``. The threshold
    :math:`\varepsilon^*` is the root of
    :math:`\log\delta_{\sigma_c(\varepsilon)}(\varepsilon) = \log\delta`
    (``brentq`` on ``dpcore.gaussian_log_delta``, bracketed by the first grid
    point that violates and the one before), confirmed by ``mp.findroot`` on
    :func:`dpbook.reference.gaussian_delta` at 50 digits. Evidence
    (deterministic): the two roots agree to ``rtol=1e-6``; the grid is valid
    exactly below :math:`\varepsilon^*`; the 50-digit profile exceeds ``delta``
    at each ``violated_eps``; ``dpcore.classic_gaussian_sigma`` refuses
    ``refused_eps`` with a message naming "epsilon < 1". Controls: the claim
    "not private for eps >= 1", i.e. the profile exceeds ``delta`` at each
    ``control_eps``.

    Parameters
    ----------
    delta : float
    epsilons : array, optional
        The grid; it must contain a violation after a valid point.
    refused_eps : float
    violated_eps, control_eps : sequences of float
    classic : callable
        ``(epsilon, delta) -> sigma``, the classic formula in double precision
        (the 50-digit root uses its own copy of the formula).

    Returns
    -------
    ClassicBeyondTheorem

    Raises
    ------
    ValueError
        If the grid does not bracket a change from valid to violated.
    """
    d_target = delta
    eps_big = np.round(np.arange(1.0, 20.01, 0.25), 2) if epsilons is None else np.asarray(epsilons, dtype=float)
    delivered = np.array([dpcore.gaussian_delta(classic(e, d_target), 1.0, e) for e in eps_big])
    bad = delivered > d_target
    first_bad = int(np.argmax(bad))
    if not bad[first_bad] or first_bad == 0:
        raise ValueError("the grid does not bracket the threshold (a valid point, then a violation)")

    def excess(e: float) -> float:
        return float(dpcore.gaussian_log_delta(classic(e, d_target), 1.0, e)) - math.log(d_target)

    eps_star = optimize.brentq(excess, eps_big[first_bad - 1], eps_big[first_bad], xtol=1e-14)
    with mp.workdps(50):

        def sig_mp(e: Any) -> Any:
            return mp.sqrt(2 * mp.log(mp.mpf(1.25) / d_target)) / e

        eps_star_mp = mp.findroot(
            lambda e: mp.log(mpref.gaussian_delta(sig_mp(e), e)) - mp.log(d_target),
            (eps_big[first_bad - 1], eps_big[first_bad]),
            solver="illinois",
        )
    eps_far = float(eps_big[-1])
    delta_far = dpcore.gaussian_delta(classic(eps_far, d_target), 1.0, eps_far)
    try:
        dpcore.classic_gaussian_sigma(1.0, refused_eps, d_target)
        refusal = ""
    except ValueError as err:
        refusal = str(err)
    return ClassicBeyondTheorem(
        evidence=(
            Close(
                "threshold eps* (brentq on gaussian_log_delta) vs mpmath findroot at 50 digits",
                eps_star,
                float(eps_star_mp),
                rtol=1e-6,
            ),
            Fact(
                "valid on the whole grid below eps*, violated on the whole grid above",
                bool(np.all(bad == (eps_big > eps_star))),
            ),
            *[
                Compare(
                    f"mpmath: delta delivered at eps = {e} > {_short(d_target)}",
                    float(mpref.gaussian_delta(classic(e, d_target), e)),
                    ">",
                    d_target,
                )
                for e in violated_eps
            ],
            Fact("dpcore.classic_gaussian_sigma refuses eps >= 1", "epsilon < 1" in refusal),
        ),
        controls=tuple(
            Compare(
                f"'not private for eps >= 1': delta delivered at eps = {e} > {_short(d_target)}",
                float(dpcore.gaussian_delta(classic(e, d_target), 1.0, e)),
                ">",
                d_target,
            )
            for e in control_eps
        ),
        eps_star=float(eps_star),
        eps_star_mp=float(eps_star_mp),
        delta=d_target,
        eps_far=eps_far,
        delta_far=float(delta_far),
        refusal=refusal,
    )


# --------------------------------------------------------------------------- the chi equation


@dataclass(frozen=True, kw_only=True)
class ChiFormAccuracy(Experiment):
    """:func:`chi_form_accuracy`: the worst relative differences found."""

    worst_forms: float
    worst_dp: float

    def summary(self) -> str:
        """The line the chapter prints."""
        return (
            f"chi form vs Theorem 8 (50 digits): {self.worst_forms:.1e};  "
            f"gaussian_log_delta vs Theorem 8: {self.worst_dp:.1e}"
        )


def chi_form_accuracy(
    sigmas: Sequence[float] = (0.05, 0.3, 1.0, 3.0, 20.0),
    epsilons: Sequence[float] = (0.0, 1e-3, 0.1, 1.0, 5.0, 30.0),
    *,
    chi_form: Callable[[float, float], Any] = mpref.gaussian_delta_chi,
    log_delta: Profile = dpcore.gaussian_log_delta,
) -> ChiFormAccuracy:
    r"""The chi form and ``dpcore.gaussian_log_delta`` against Theorem 8 at 50 digits.

    At each :math:`(\sigma, \varepsilon)` (sensitivity 1), with ``ref`` the
    direct 50-digit evaluation of Theorem 8
    (:func:`dpbook.reference.gaussian_delta`):

    * ``chi_form(sigma, eps)`` (50 digits) vs ``ref``: worst relative
      difference, must be :math:`\le 10^{-30}`;
    * ``log_delta(sigma, 1, eps)`` (double precision) vs :math:`\log` ``ref``,
      relative in log space, :math:`|a - b|/\max(1, |b|)`: worst must be
      :math:`\le 10^{-13}` (in logs because :math:`\delta` underflows a double
      at some points, e.g. :math:`\sigma = 20, \varepsilon = 30`).

    Deterministic; no controls here (the chapter's symbolic control goes with
    them).

    Parameters
    ----------
    sigmas, epsilons : sequences of float
        The grid (sensitivity 1).
    chi_form : callable
        ``(sigma, epsilon) -> delta``, the chi form at 50 digits.
    log_delta : callable
        ``(sigma, sensitivity, epsilon) -> log delta`` in double precision.

    Returns
    -------
    ChiFormAccuracy
    """
    worst_forms = worst_dp = 0.0
    for sig in sigmas:
        for e in epsilons:
            ref, alt = mpref.gaussian_delta(sig, e), chi_form(sig, e)
            with mp.workdps(50):  # at the default 15 digits alt/ref - 1 rounds to 0
                rel = abs(mp.mpf(alt) / mp.mpf(ref) - 1)
            worst_forms = max(worst_forms, float(rel))
            log_err = abs(log_delta(sig, 1.0, e) - mp.log(ref)) / max(1, abs(mp.log(ref)))
            worst_dp = max(worst_dp, float(log_err))
    n_points = len(sigmas) * len(epsilons)
    return ChiFormAccuracy(
        evidence=(
            Compare(f"chi form vs Theorem 8, {n_points} points at 50 digits (relative)", worst_forms, "<=", 1e-30),
            Compare("dpcore.gaussian_log_delta vs Theorem 8 (relative, log space)", worst_dp, "<=", 1e-13),
        ),
        worst_forms=worst_forms,
        worst_dp=worst_dp,
    )


# --------------------------------------------------------------------------- Newton with the seed's G'


def newton(g: Callable[[Any], Any], g_prime: Callable[[Any], Any], x0: Any, C: Any, steps: int) -> list[Any]:
    """Newton's method for ``g(x) = C`` from ``x0``: the ``steps + 1`` iterates."""
    xs = [x0]
    for _ in range(steps):
        xs.append(xs[-1] - (g(xs[-1]) - C) / g_prime(xs[-1]))
    return xs


@dataclass(frozen=True, kw_only=True)
class NewtonPaths(Experiment):
    """:func:`newton_paths`: both paths (mpmath numbers) and dpcore's root."""

    true_path: tuple[Any, ...]
    seed_path: tuple[Any, ...]
    chi_exact: float

    def summary(self) -> str:
        """The line the chapter prints."""
        return (
            f"root chi = {self.chi_exact:.12f}; Newton with the correct G': {float(self.true_path[-1]):.12f}; "
            f"with the seed's G' after {len(self.seed_path) - 1} steps: {float(self.seed_path[-1]):.6f}"
        )


def newton_paths(
    g: Callable[[Any], Any],
    g_prime: Callable[[Any], Any],
    seed_g_prime: Callable[[Any], Any],
    epsilon: float = 1.0,
    delta: float = 1e-5,
    *,
    x0: float = 2.0,
    steps: int = 8,
    seed_steps: int = 50,
    dps: int = 30,
) -> NewtonPaths:
    r"""Newton's method for :math:`G(x) = C` with the correct and with the seed's derivative.

    ``g``, ``g_prime``, ``seed_g_prime`` are the chapter's derived
    :math:`G(x) = e^\varepsilon F(\sqrt{x^2+\varepsilon}) - F(x)`, its derivative
    and the seed's :math:`G'`, at this ``epsilon``, as functions of ``x``
    evaluated in mpmath (``dps`` digits); :math:`C = \frac{\sqrt\pi}{2}(2\delta
    - 1 + e^\varepsilon)`. The root is dpcore's:
    :math:`\chi = (\varepsilon\sigma - 1/(2\sigma))/\sqrt2` with
    :math:`\sigma` = ``dpcore.analytic_gaussian_sigma(1, epsilon, delta)``.

    Evidence (deterministic): ``steps`` Newton steps with ``g_prime`` end within
    ``1e-10`` of :math:`\chi`. Control: ``seed_steps`` steps with
    ``seed_g_prime`` end within ``1e-3`` of it.

    Parameters
    ----------
    g, g_prime, seed_g_prime : callable
        Functions of ``x`` (mpmath numbers in, mpmath numbers out).
    epsilon, delta : float
        The seed's example is (1, 1e-5).
    x0 : float
        The start (the seed's is 2).
    steps, seed_steps : int
        Newton steps with ``g_prime`` and with ``seed_g_prime``.
    dps : int
        mpmath digits of the iteration.

    Returns
    -------
    NewtonPaths
    """
    with mp.workdps(dps):
        C1 = mp.sqrt(mp.pi) / 2 * (2 * mp.mpf(delta) - 1 + mp.exp(epsilon))
        seed_path = newton(g, seed_g_prime, mp.mpf(x0), C1, seed_steps)
        true_path = newton(g, g_prime, mp.mpf(x0), C1, steps)
    sig_exact = dpcore.analytic_gaussian_sigma(1.0, epsilon, delta)
    chi_exact = (epsilon * sig_exact - 1 / (2 * sig_exact)) / math.sqrt(2)
    return NewtonPaths(
        evidence=(
            Close("Newton with the correct G' reaches dpcore's root", float(true_path[-1]), chi_exact, atol=1e-10),
        ),
        controls=(Close("Newton with the seed's G' reaches the root", float(seed_path[-1]), chi_exact, atol=1e-3),),
        true_path=tuple(true_path),
        seed_path=tuple(seed_path),
        chi_exact=chi_exact,
    )


# --------------------------------------------------------------------------- the seed's code


@dataclass(frozen=True, kw_only=True)
class SeedCodeTable(Experiment):
    """:func:`seed_code_table`: rows (eps, delta, seed's sigma, exact sigma, fsolve ier, delta delivered)."""

    rows: tuple[tuple[Any, ...], ...]
    seed_example: float
    fixed_at_01: float

    def table(self) -> object:
        """The rows as the chapter's HTML table (:func:`dpbook.display.table`)."""
        from dpbook.display import table

        heads = ["ε", "δ asked", "σ (seed's code)", "σ exact", "fsolve ier", "δ delivered"]
        return table(self.rows, heads, ["", ".0e", ".6g", ".6g", "", ".3g"])


def seed_code_table(
    epsilons: Sequence[float] = (1.0, 0.1, 0.5, 2.0, 5.0),
    delta: float = 1e-5,
    tiny: Sequence[tuple[float, float]] = ((0.5, 1e-60), (0.2, 1e-150)),
    *,
    recipe: Callable[..., Any] = flawed.seed_002_sigma,
    example_sensitivity: float = math.sqrt(2),
) -> SeedCodeTable:
    r"""Seed 002's code (``recipe``, with its ``sqrt(x**2 + 1)``) against the analytic sigma.

    Rows: each :math:`\varepsilon` of ``epsilons`` at ``delta``, then the
    ``tiny`` pairs; each with the recipe's :math:`\sigma`, ``fsolve``'s
    ``ier``, the exact ``dpcore.analytic_gaussian_sigma`` and the
    :math:`\delta` the recipe's :math:`\sigma` really delivers
    (``dpcore.gaussian_delta``). All deterministic. Evidence:

    * at :math:`\varepsilon = 1` (where :math:`\sqrt{x^2+1}` is right) the
      recipe with the seed's example sensitivity :math:`\sqrt2` gives the
      analytic sigma (``rtol=1e-9``);
    * at :math:`\varepsilon = 0.1` the recipe with
      :math:`\sqrt{x^2+\varepsilon}` (``fixed=True``) gives it (``rtol=1e-6``).

    Controls (the seed's code is right): its sigma at 0.1 is the analytic one;
    ``fsolve`` converges (``ier = 1``) at 2 and at 5; it delivers at most the
    asked :math:`\delta` at each ``tiny`` pair.

    Parameters
    ----------
    epsilons : sequence of float
        The epsilons at ``delta``; must contain 0.1, 2 and 5.
    delta : float
    tiny : sequence of (epsilon, delta)
        Extra rows at tiny deltas (controls: the recipe delivers them).
    recipe : callable
        ``recipe(epsilon, delta, sensitivity, *, fixed=False, full_output=False)``
        like :func:`dpbook.flawed.seed_002_sigma`.
    example_sensitivity : float
        The seed's example sensitivity (:math:`\sqrt2`).

    Returns
    -------
    SeedCodeTable

    Raises
    ------
    KeyError
        If ``epsilons`` lacks 0.1, 2 or 5.
    """
    rows = []
    for e, d in [(e, delta) for e in epsilons] + list(tiny):
        s_seed, ier, _ = recipe(e, d, 1.0, full_output=True)
        s_true = dpcore.analytic_gaussian_sigma(1.0, e, d)
        rows.append((e, d, s_seed, s_true, ier, dpcore.gaussian_delta(s_seed, 1.0, e)))
    seed_example = recipe(1.0, delta, example_sensitivity)
    fixed_01 = recipe(0.1, delta, 1.0, fixed=True)
    by_case = {(r[0], r[1]): r for r in rows}
    r01, r2, r5 = by_case[(0.1, delta)], by_case[(2.0, delta)], by_case[(5.0, delta)]
    evidence = (
        Close(
            "eps = 1: the seed's code = analytic sigma",
            seed_example,
            dpcore.analytic_gaussian_sigma(example_sensitivity, 1.0, delta),
            rtol=1e-9,
        ),
        Close("eps = 0.1, sqrt(x**2 + epsilon): = analytic sigma", fixed_01, r01[3], rtol=1e-6),
    )
    controls = (
        Close("seed's code at eps = 0.1 = analytic sigma", r01[2], r01[3], rtol=1e-6),
        Fact("seed's code converges at eps = 2 (fsolve ier = 1)", r2[4] == 1),
        Fact("seed's code converges at eps = 5 (fsolve ier = 1)", r5[4] == 1),
        *[
            Compare(f"seed's code delivers delta <= {r[1]:.0e} at eps = {r[0]}", r[5], "<=", r[1])
            for r in rows[len(epsilons) :]
        ],
    )
    return SeedCodeTable(
        evidence=evidence, controls=controls, rows=tuple(rows), seed_example=seed_example, fixed_at_01=fixed_01
    )


def seed_C(e: float, d: float) -> float:
    r"""The seed's right-hand side :math:`C = (2\delta + e^\varepsilon - 1)\sqrt\pi/2`.

    In double precision, as the seed's code computes it.
    """
    return float((2 * d + math.e**e - 1) * math.sqrt(math.pi) / 2)


@dataclass(frozen=True, kw_only=True)
class FsolveCancellation(Experiment):
    """:func:`fsolve_cancellation`: the recipe's sigmas and the deltas they deliver, per delta."""

    epsilon: float
    deltas: tuple[float, ...]
    sigmas: tuple[float, ...]
    delivered: tuple[float, ...]

    def summary(self) -> str:
        """The line the chapter prints."""
        parts = [
            f"delta = {_short(d)} -> sigma {s:.10g} (delivers {dd:.3g})"
            for d, s, dd in zip(self.deltas, self.sigmas, self.delivered, strict=True)
        ]
        return f"eps = {self.epsilon:g}: " + "; ".join(parts)


def fsolve_cancellation(
    epsilon: float = 40.0,
    deltas: Sequence[float] = (1e-3, 1e-10),
    *,
    recipe: Callable[..., Any] = flawed.seed_002_sigma,
    calibrate: Calibrator = dpcore.analytic_gaussian_sigma,
) -> FsolveCancellation:
    r"""The recipe's equation stops depending on :math:`\delta` (cancellation in double precision).

    Evidence (deterministic): the seed's :math:`C` (:func:`seed_C`) at
    ``epsilon`` is the same for each :math:`\delta` of ``deltas`` as at 0;
    ``calibrate`` (dpcore)
    at ``epsilon`` delivers each :math:`\delta` of ``deltas``. Controls: the
    recipe's sigma (``fixed=True``) differs between the first two ``deltas``;
    it delivers each asked :math:`\delta`.

    Parameters
    ----------
    epsilon : float
    deltas : sequence of float
        At least two.
    recipe : callable
        Like :func:`dpbook.flawed.seed_002_sigma` (called with ``fixed=True``).
    calibrate : callable
        ``(sensitivity, epsilon, delta) -> sigma``, dpcore's analytic sigma.

    Returns
    -------
    FsolveCancellation
    """
    sigmas = [recipe(epsilon, d, 1.0, fixed=True) for d in deltas]
    delivered = [dpcore.gaussian_delta(s, 1.0, epsilon) for s in sigmas]
    return FsolveCancellation(
        evidence=(
            Fact(
                f"C({epsilon:g}, delta) == C({epsilon:g}, 0) in double precision for delta in "
                f"{', '.join(_short(d) for d in deltas)}",
                all(seed_C(epsilon, d) == seed_C(epsilon, 0.0) for d in deltas),
            ),
            *[
                Compare(
                    f"dpcore at eps = {epsilon:g} delivers delta <= {d:.0e}",
                    dpcore.gaussian_delta(calibrate(1.0, epsilon, d), 1.0, epsilon),
                    "<=",
                    d,
                )
                for d in deltas
            ],
        ),
        controls=(
            Fact(f"the recipe's sigma depends on delta at eps = {epsilon:g}", sigmas[0] != sigmas[1]),
            *[
                Compare(f"the recipe delivers delta <= {_short(d)} at eps = {epsilon:g}", dd, "<=", d)
                for d, dd in zip(deltas, delivered, strict=True)
            ],
        ),
        epsilon=epsilon,
        deltas=tuple(deltas),
        sigmas=tuple(sigmas),
        delivered=tuple(float(x) for x in delivered),
    )


# --------------------------------------------------------------------------- normal(0, sigma ** 2)


@dataclass(frozen=True, kw_only=True)
class VarianceAsStd(Experiment):
    """:func:`variance_as_std`: the sigma, what the noise really delivers, and the two tests."""

    epsilon: float
    delta: float
    seed_example: float
    sigma: float
    real_delta: float
    real_eps: float
    real_test: CheckResult
    claim_test: CheckResult

    def summary(self) -> str:
        """The lines the chapter prints."""
        return (
            f"the seed's example: sigma = {self.seed_example:.4f}, noise std used {self.seed_example**2:.4f}\n"
            f"sigma = {self.sigma:.6f}, noise std used = sigma^2 = {self.sigma**2:.6f}: delta really "
            f"{self.real_delta:.4f} (promised {self.delta}); epsilon really {self.real_eps:.2f} at delta = "
            f"{_short(self.delta)}\n{self.real_test}\n{self.claim_test}"
        )


def variance_as_std(
    seed_example: float,
    epsilon: float = 10.0,
    delta: float = 1e-5,
    *,
    n: int = 1_000_000,
    seed: int = 300,
    claim_seed: int = 301,
    alpha: float = 5e-7,
    sampler: Callable[..., Any] = flawed.gaussian_variance_as_std,
) -> VarianceAsStd:
    r"""The :math:`\delta` really delivered by noise of standard deviation :math:`\sigma^2` instead of :math:`\sigma`.

    :math:`\sigma` = ``dpcore.analytic_gaussian_sigma(1, epsilon, delta)``; the
    noise really used has standard deviation :math:`s = \sigma^2`, so its exact
    profile is ``dpcore.gaussian_delta(sigma**2, 1, epsilon)`` and its
    :math:`\varepsilon` at ``delta`` is ``dpcore.gaussian_epsilon(sigma**2,
    delta)``. Monte Carlo: :math:`E[(1 - e^{\varepsilon - L})_+]` over the
    outputs of ``sampler(0, sigma, rng)`` (:func:`dpbook.flawed.gaussian_variance_as_std`)
    with :math:`L = (1 - 2y)/(2 s^2)`, by ``dpcore.check_bounded_mean`` (values
    in [0, 1]): the real :math:`\delta` must pass (seed ``seed``) and the
    promised ``delta`` is the control (seed ``claim_seed``, miss probability
    from the real value).

    Evidence: the test of the real delta (false alarm ``alpha``); the real
    :math:`\varepsilon > 2` ``epsilon``. Controls: the
    promised ``delta`` passes the test (miss probability <= ``alpha``); the
    real :math:`\delta` <= ``delta``. Error budget: ``2 alpha``.

    Parameters
    ----------
    seed_example : float
        The sigma of the seed's own example (its code at (1, 1e-5), sensitivity
        :math:`\sqrt2`), printed in the summary only.
    epsilon, delta : float
    n : int
        Draws per test.
    seed, claim_seed : int
        Seeds of the test of the real delta and of the promised one.
    alpha : float
        False-alarm probability of each test.
    sampler : callable
        ``sampler(value, sigma, rng=...)``: the seed's noisy release.

    Returns
    -------
    VarianceAsStd
    """
    e10, d10 = epsilon, delta
    s10 = dpcore.analytic_gaussian_sigma(1.0, e10, d10)
    real_delta = float(dpcore.gaussian_delta(s10**2, 1.0, e10))
    real_eps = dpcore.gaussian_epsilon(s10**2, d10)

    # the loss of N(0, s10^2) vs N(1, s10^2) at the seed's releases of 0 (their std is s10^2, not s10)
    flawed_profile = loss_sampler(s10**2, e10, noise=lambda rng, n: sampler(np.zeros(n), s10, rng=rng))
    real = dpcore.check_bounded_mean(
        flawed_profile,
        n,
        real_delta,
        lower=0.0,
        upper=1.0,
        rng=seed,
        alpha=alpha,
        name="delta delivered by normal(0, sigma**2)",
    )
    claim = dpcore.check_bounded_mean(
        flawed_profile,
        n,
        d10,
        lower=0.0,
        upper=1.0,
        rng=claim_seed,
        alpha=alpha,
        name=f"claimed: ({e10:g}, {_short(d10)})-DP",
    )
    return VarianceAsStd(
        evidence=(
            real,
            Compare(f"epsilon really > 2 x {e10:g} at delta = {_short(d10)}", real_eps, ">", 2 * e10),
        ),
        controls=(
            Test(claim.name, result=claim, true_value=real_delta),
            Compare(f"std sigma^2 delivers delta <= {_short(d10)}", real_delta, "<=", d10),
        ),
        epsilon=e10,
        delta=d10,
        seed_example=seed_example,
        sigma=s10,
        real_delta=real_delta,
        real_eps=real_eps,
        real_test=real,
        claim_test=claim,
    )


@dataclass(frozen=True, kw_only=True)
class MechanismDistribution(Experiment):
    """:func:`mechanism_distribution`: the two DKW tests and the flawed sampler's true distance."""

    ok: CheckResult
    bad: CheckResult
    bad_distance: float


def mechanism_distribution(
    value: float = 3.0,
    epsilon: float = 2.0,
    delta: float = 1e-6,
    *,
    n: int = 200_000,
    seed: int = 400,
    flawed_seed: int = 401,
    alpha: float = 5e-7,
    mechanism: Callable[..., Any] = dpcore.gaussian_mechanism,
) -> MechanismDistribution:
    r"""DKW tests of ``mechanism``'s output law against :math:`N(f(D), \sigma^2)` (sensitivity 1).

    :math:`\sigma` = ``dpcore.analytic_gaussian_sigma(1, epsilon, delta)``.
    ``dpcore.check_cdf`` (DKW with Massart's constant: :math:`P(\sup|F_n - F| > t)
    \le 2e^{-2nt^2}`) on the grid :math:`f(D) + \sigma\,[-8, 8]` (4001
    points), ``n`` draws, false alarm ``alpha``. Evidence: ``mechanism(value,
    1, epsilon, delta, rng)`` passes (seed ``seed``). Control: the seed's
    ``normal(0, sigma ** 2)`` (:func:`dpbook.flawed.gaussian_variance_as_std`,
    seed ``flawed_seed``) is rejected; its miss probability comes from its true
    sup distance to the claimed CDF over the grid. Error budget: ``2 alpha``.

    Parameters
    ----------
    value : float
        :math:`f(D)`.
    epsilon, delta : float
    n : int
        Draws per test.
    seed, flawed_seed : int
        Seeds of the test of ``mechanism`` and of the seed's sampler.
    alpha : float
        False-alarm probability of each test.
    mechanism : callable
        ``mechanism(value, sensitivity, epsilon, delta, rng=...)`` like
        ``dpcore.gaussian_mechanism``.

    Returns
    -------
    MechanismDistribution
    """
    sig_m = dpcore.analytic_gaussian_sigma(1.0, epsilon, delta)

    def mech(rng: np.random.Generator, n: int) -> Any:
        return mechanism(np.full(n, value), 1.0, epsilon, delta, rng=rng)

    def seed_mech(rng: np.random.Generator, n: int) -> Any:
        return flawed.gaussian_variance_as_std(np.full(n, value), sig_m, rng=rng)

    grid_m = value + sig_m * np.linspace(-8, 8, 4001)
    target_cdf = stats.norm(value, sig_m).cdf
    ok = dpcore.check_cdf(mech, n, target_cdf, grid=grid_m, rng=seed, alpha=alpha, name="gaussian_mechanism")
    bad = dpcore.check_cdf(
        seed_mech, n, target_cdf, grid=grid_m, rng=flawed_seed, alpha=alpha, name="normal(0, sigma**2)"
    )
    bad_distance = float(np.max(np.abs(stats.norm(value, sig_m**2).cdf(grid_m) - target_cdf(grid_m))))
    return MechanismDistribution(
        evidence=(ok,),
        controls=(Test(bad.name, result=bad, true_value=bad_distance),),
        ok=ok,
        bad=bad,
        bad_distance=bad_distance,
    )


# --------------------------------------------------------------------------- the L2 sensitivity of a d-vector


@dataclass(frozen=True, kw_only=True)
class VectorSensitivity(Experiment):
    """:func:`vector_sensitivity`: per dimension, the true L2 sensitivity and both calibrations' exact deltas."""

    lo: float
    hi: float
    epsilon: float
    delta: float
    rows: tuple[tuple[int, float, float, float, float, float], ...]
    brute: tuple[tuple[int, float], ...]

    def table(self) -> object:
        """The rows as the chapter's HTML table (:func:`dpbook.display.table`)."""
        from dpbook.display import table

        heads = ["d", "L2 sensitivity", "σ for (max − min)", "δ it delivers", "σ for (max − min)√d", "δ it delivers"]
        return table(self.rows, heads, ["", ".4g", ".6g", ".3g", ".6g", ".3g"])


def vector_sensitivity(
    lo: float = 0.0,
    hi: float = 1.0,
    dims: Sequence[int] = (1, 2, 4, 16, 100),
    epsilon: float = 1.0,
    delta: float = 1e-5,
    *,
    brute_dims: Sequence[int] = (1, 2, 3, 4),
    calibrate: Calibrator = dpcore.analytic_gaussian_sigma,
    profile: Profile = dpcore.gaussian_delta,
) -> VectorSensitivity:
    r"""Seed 002's L2 sensitivity "(max - min)" for a :math:`d`-dimensional datum, and what it delivers.

    One datum is a vector in :math:`[\text{lo}, \text{hi}]^d`; replacing it
    moves the released vector by at most
    :math:`\Delta_2 = (\text{hi}-\text{lo})\sqrt d`. Brute force, for each
    :math:`d` of ``brute_dims``: the largest :math:`\ell_2` distance between
    two vertices of the cube (the distance is convex, so its maximum over the
    cube is at a pair of vertices), compared with that value (relative
    :math:`10^{-15}`). For each :math:`d` of ``dims``: the seed's
    :math:`\sigma_s` = ``calibrate(hi - lo, epsilon, delta)`` and the corrected
    :math:`\sigma_c` = ``calibrate((hi - lo) sqrt d, epsilon, delta)``, and the
    *exact* :math:`\delta` each delivers against neighbours at the true
    distance :math:`\Delta_2`: Theorem 8 at 50 digits
    (:func:`dpbook.reference.gaussian_delta` with sensitivity :math:`\Delta_2`).

    Evidence (deterministic): the brute-force maxima; :math:`\sigma_c` delivers
    at most ``delta`` at every :math:`d`; at :math:`d = 1` (where the seed's
    rule is right) :math:`\sigma_s` does too; ``profile`` (dpcore's double
    precision Theorem 8) agrees with the 50-digit value at every
    :math:`\sigma_s` (relative :math:`10^{-9}`). Controls, the seed's statement:
    the largest distance at the largest ``brute_dims`` is :math:`\text{hi}-\text{lo}`
    (relative :math:`10^{-15}`), and :math:`\sigma_s` delivers at most ``delta``
    at each :math:`d > 1` of ``dims``.

    Returns
    -------
    VectorSensitivity
    """
    import itertools

    width = check_positive_finite("hi - lo", hi - lo)
    brute = []
    for d in brute_dims:
        vertices = np.array(list(itertools.product((lo, hi), repeat=d)), dtype=float)
        gaps = vertices[:, None, :] - vertices[None, :, :]
        brute.append((int(d), float(np.sqrt((gaps**2).sum(axis=-1)).max())))
    rows = []
    for d in dims:
        true_sens = width * math.sqrt(d)
        s_seed, s_fix = calibrate(width, epsilon, delta), calibrate(true_sens, epsilon, delta)
        rows.append(
            (
                int(d),
                true_sens,
                s_seed,
                float(mpref.gaussian_delta(s_seed, epsilon, true_sens)),
                s_fix,
                float(mpref.gaussian_delta(s_fix, epsilon, true_sens)),
            )
        )
    evidence = (
        *[
            Close(
                f"d = {d}: largest l2 distance in the cube = (max - min) sqrt(d)", m, width * math.sqrt(d), rtol=1e-15
            )
            for d, m in brute
        ],
        *[
            Compare(f"d = {r[0]}: sigma for (max - min) sqrt(d) delivers delta <= {_short(delta)}", r[5], "<=", delta)
            for r in rows
        ],
        *[
            Compare(f"d = 1: sigma for (max - min) delivers delta <= {_short(delta)}", r[3], "<=", delta)
            for r in rows
            if r[0] == 1
        ],
        *[
            Close(
                f"d = {r[0]}: dpcore.gaussian_delta vs 50 digits at the seed's sigma",
                float(profile(r[2], r[1], epsilon)),
                r[3],
                rtol=1e-9,
            )
            for r in rows
        ],
    )
    d_max, m_max = brute[-1]
    controls = (
        Close(f"seed: the largest l2 distance at d = {d_max} is max - min", m_max, width, rtol=1e-15),
        *[
            Compare(f"seed: at d = {r[0]} sigma for (max - min) delivers delta <= {_short(delta)}", r[3], "<=", delta)
            for r in rows
            if r[0] > 1
        ],
    )
    return VectorSensitivity(
        evidence=evidence,
        controls=controls,
        lo=float(lo),
        hi=float(hi),
        epsilon=float(epsilon),
        delta=float(delta),
        rows=tuple(rows),
        brute=tuple(brute),
    )


# --------------------------------------------------------------------------- Balle and Wang's Algorithm 1


def balle_wang_identities(B_minus: Any, B_plus: Any, chi_profile: Any, sigma_chi: Any, chi: Any, v: Any) -> Experiment:
    r"""Symbolic: Balle and Wang's Algorithm 1 is the chi equation at :math:`\chi = \pm\sqrt{\varepsilon v/2}`.

    ``B_minus``, ``B_plus`` are the chapter's :math:`B^\mp_\varepsilon(v)` (in
    the symbol ``v``), ``chi_profile`` is the left side of the chi equation
    divided by 2 and ``sigma_chi`` its :math:`\sigma(\chi)`, in the symbol
    ``chi`` (with ``epsilon`` and ``Delta`` of :mod:`dpbook.symbolic`). For
    :math:`B^-` with :math:`\chi = \sqrt{\varepsilon v/2}` and
    :math:`\alpha = \sqrt{1+v/2} + \sqrt{v/2}`, then :math:`B^+` with
    :math:`\chi = -\sqrt{\varepsilon v/2}` and
    :math:`\alpha = \sqrt{1+v/2} - \sqrt{v/2}`, the evidence is
    :class:`~dpbook.evidence.Equal` (sympy proves it, confirmed at random
    points): :math:`B` = ``chi_profile`` at that :math:`\chi` (both rewritten
    with erfc), and ``sigma_chi`` at that :math:`\chi` is
    :math:`\alpha\Delta/\sqrt{2\varepsilon}`. Control: :math:`B^-` = ``chi_profile``
    at the other sign. Deterministic (no false-alarm budget).

    Parameters
    ----------
    B_minus, B_plus, chi_profile, sigma_chi : sympy.Expr
    chi, v : sympy.Symbol

    Returns
    -------
    Experiment
    """
    import sympy as sp

    from dpbook.evidence import Equal
    from dpbook.symbolic import Delta, epsilon

    mapping = []
    for sign, B, alpha_v in (
        (1, B_minus, sp.sqrt(1 + v / 2) + sp.sqrt(v / 2)),
        (-1, B_plus, sp.sqrt(1 + v / 2) - sp.sqrt(v / 2)),
    ):
        at_v = {chi: sign * sp.sqrt(epsilon * v / 2)}
        name = "B-" if sign > 0 else "B+"
        mapping += [
            Equal(f"{name} = chi form", B.rewrite(sp.erfc), chi_profile.subs(at_v).rewrite(sp.erfc)),
            Equal(
                f"{name}: sigma",
                sp.radsimp(sigma_chi.subs(at_v)),
                sp.radsimp(alpha_v * Delta / sp.sqrt(2 * epsilon)),
            ),
        ]
    control = Equal(
        "B- = chi form at chi = -sqrt(eps v/2) (the other sign)",
        B_minus.rewrite(sp.erfc),
        chi_profile.subs({chi: -sp.sqrt(epsilon * v / 2)}).rewrite(sp.erfc),
    )
    return Experiment(evidence=tuple(mapping), controls=(control,))


def balle_wang_algorithm1(e: float, d: float) -> float:
    r"""Algorithm 1 of Balle & Wang (2018), with ``brentq`` for the scalar search; :math:`\Delta = 1`.

    With :math:`\delta_0 = \Phi(0) - e^\varepsilon\Phi(-\sqrt{2\varepsilon})`:
    for :math:`\delta \ge \delta_0` solve :math:`B^+_\varepsilon(v) = \delta`
    and take :math:`\alpha = \sqrt{1+v/2} - \sqrt{v/2}`, otherwise
    :math:`B^-_\varepsilon(v) = \delta` and :math:`\alpha = \sqrt{1+v/2} + \sqrt{v/2}`;
    return :math:`\sigma = \alpha/\sqrt{2\varepsilon}`.

    Raises
    ------
    ValueError
        If ``e`` (epsilon) is not finite and in (0, 700] (:math:`e^\varepsilon`
        overflows a double beyond 709.78), or ``d`` (delta) is not in (0, 1)
        (for :math:`\delta \ge 1` the search for a bracket would never end).
    """
    e = check_positive_finite("e (epsilon)", e)
    d = check_probability_open("d (delta)", d)
    if e > 700:
        raise ValueError(f"e (epsilon) must be <= 700 (exp(e) overflows a double beyond 709.78); got {e}")
    Phi_n = stats.norm.cdf
    d0 = Phi_n(0) - math.exp(e) * Phi_n(-math.sqrt(2 * e))
    if d >= d0:

        def B(v: float) -> float:
            return float(Phi_n(math.sqrt(e * v)) - math.exp(e) * Phi_n(-math.sqrt(e * (v + 2))) - d)

        def alpha_of(v: float) -> float:
            return math.sqrt(1 + v / 2) - math.sqrt(v / 2)

    else:

        def B(v: float) -> float:
            return float(d - (Phi_n(-math.sqrt(e * v)) - math.exp(e) * Phi_n(-math.sqrt(e * (v + 2)))))

        def alpha_of(v: float) -> float:
            return math.sqrt(1 + v / 2) + math.sqrt(v / 2)

    hi = 1.0
    while B(hi) < 0:
        hi *= 2
        if hi > 1e300:  # not reached for valid e, d; a guarantee against an endless loop
            raise ValueError(f"no bracket for B(v) = d found below v = 1e300 (e={e}, d={d})")
    v = optimize.brentq(B, 0.0, hi, xtol=1e-300, rtol=1e-15)
    return alpha_of(v) / math.sqrt(2 * e)


@dataclass(frozen=True, kw_only=True)
class BalleWangAgreement(Experiment):
    """:func:`balle_wang_agreement`: the worst relative difference in sigma."""

    worst: float
    n_points: int

    def summary(self) -> str:
        """The line the chapter prints."""
        return f"Algorithm 1 vs the chi equation: worst relative difference in sigma {self.worst:.1e}"


def balle_wang_agreement(
    epsilons: Sequence[float] | None = None,
    deltas: Sequence[float] | None = None,
    *,
    algorithm: Callable[[float, float], float] = balle_wang_algorithm1,
    calibrate: Calibrator = dpcore.analytic_gaussian_sigma,
) -> BalleWangAgreement:
    r"""Balle and Wang's Algorithm 1 against the chi equation (``dpcore.analytic_gaussian_sigma``).

    On the grid (default 7 epsilons from 0.01 to 10 times 7 deltas from
    :math:`10^{-8}` to 0.5, geometric) the worst relative difference
    :math:`|\sigma_{\rm BW}/\sigma - 1|` must be :math:`\le 10^{-9}`
    (deterministic). No controls here (the chapter's symbolic control: the
    other sign of :math:`\chi`).

    Parameters
    ----------
    epsilons, deltas : sequences of float, optional
        The grid.
    algorithm : callable
        ``(epsilon, delta) -> sigma``, default :func:`balle_wang_algorithm1`.
    calibrate : callable
        ``(sensitivity, epsilon, delta) -> sigma``, dpcore's analytic sigma.

    Returns
    -------
    BalleWangAgreement
    """
    eps_grid = np.geomspace(0.01, 10, 7) if epsilons is None else epsilons
    delta_grid = np.geomspace(1e-8, 0.5, 7) if deltas is None else deltas
    worst = max(abs(algorithm(e, d) / calibrate(1.0, e, d) - 1) for e in eps_grid for d in delta_grid)
    n_points = len(eps_grid) * len(delta_grid)
    return BalleWangAgreement(
        evidence=(
            Compare(f"Algorithm 1 vs dpcore.analytic_gaussian_sigma, {n_points} points (relative)", worst, "<=", 1e-9),
        ),
        worst=worst,
        n_points=n_points,
    )


# --------------------------------------------------------------------------- dpcore against 50 digits


@dataclass(frozen=True, kw_only=True)
class AnalyticSigmaExact(Experiment):
    """:func:`analytic_sigma_exact`: worst relative error, violations, points, and the recipe's error."""

    worst_rel: float
    n_violated: int
    n_points: int
    recipe_rel: float

    def summary(self) -> str:
        """The line the chapter prints."""
        return f"{self.n_points} points: worst relative error {self.worst_rel:.1e}, violated {self.n_violated}"


def analytic_sigma_exact(
    recipe_sigma: float,
    epsilons: Sequence[float] | None = None,
    deltas: Sequence[float] = (1e-300, 1e-150, 1e-50, 1e-10, 1e-3, 0.99),
    *,
    recipe_at: tuple[float, float] = (0.1, 1e-5),
    calibrate: Calibrator = dpcore.analytic_gaussian_sigma,
) -> AnalyticSigmaExact:
    r"""``calibrate`` (dpcore's analytic sigma) against a 50-digit solution of the chi equation.

    At each :math:`(\varepsilon, \delta)` (default 8 epsilons from
    :math:`10^{-3}` to :math:`10^3`, geometric; sensitivity 1) the relative
    error against :func:`dpbook.reference.analytic_sigma`, and whether the
    sigma delivers more than :math:`\delta` (50-digit profile). Evidence
    (deterministic): worst relative error :math:`\le 10^{-12}`; no violation.
    Control: the seed's recipe's ``recipe_sigma`` at ``recipe_at`` has relative
    error :math:`\le 10^{-12}`.

    Parameters
    ----------
    recipe_sigma : float
        The seed's recipe's sigma at ``recipe_at`` (the control).
    epsilons, deltas : sequences of float
        The grid (epsilons default to 8 from 1e-3 to 1e3).
    recipe_at : (epsilon, delta)
    calibrate : callable
        ``(sensitivity, epsilon, delta) -> sigma``, dpcore's analytic sigma.

    Returns
    -------
    AnalyticSigmaExact
    """
    eps_grid = np.geomspace(1e-3, 1e3, 8) if epsilons is None else epsilons
    worst_rel, n_violated, n_points = 0.0, 0, 0
    for e in eps_grid:
        for d in deltas:
            s = calibrate(1.0, e, d)
            ref = mpref.analytic_sigma(e, d)
            worst_rel = max(worst_rel, float(abs(mp.mpf(s) / ref - 1)))
            n_violated += bool(mpref.gaussian_delta(s, e) > d)
            n_points += 1
    recipe_rel = float(abs(mp.mpf(recipe_sigma) / mpref.analytic_sigma(*recipe_at) - 1))
    return AnalyticSigmaExact(
        evidence=(
            Compare(f"worst relative error over {n_points} points", worst_rel, "<=", 1e-12),
            Fact("no point delivers more than its delta", n_violated == 0),
        ),
        controls=(
            Compare(
                f"the seed's recipe at ({recipe_at[0]:g}, {_short(recipe_at[1])}): relative error",
                recipe_rel,
                "<=",
                1e-12,
            ),
        ),
        worst_rel=worst_rel,
        n_violated=n_violated,
        n_points=n_points,
        recipe_rel=recipe_rel,
    )


@dataclass(frozen=True, kw_only=True)
class EpsilonExact(Experiment):
    """:func:`epsilon_exact`: worst errors, violations, and the points where 0 is the answer."""

    worst_inv: float
    worst_classic: float
    n_violated: int
    n_points: int
    zero_pairs: tuple[tuple[float, float, float], ...] = field(default=())

    def summary(self) -> str:
        """The line the chapter prints."""
        return (
            f"{self.n_points - len(self.zero_pairs)} points with eps > 0: worst relative error "
            f"{self.worst_inv:.1e}; {len(self.zero_pairs)} points where delta >= delta_sigma(0): eps returned "
            f"{sorted({g for _, _, g in self.zero_pairs})}"
        )


def epsilon_exact(
    sigmas: Sequence[float] = (0.5, 1.0, 2.0, 5.0),
    deltas: Sequence[float] = (1e-12, 1e-8, 1e-5, 1e-3, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5),
    *,
    inverse: Callable[[float, float], float] = dpcore.gaussian_epsilon,
) -> EpsilonExact:
    r"""``inverse`` (``dpcore.gaussian_epsilon``) against the 50-digit root of Theorem 8.

    At each :math:`(\sigma, \delta)` (sensitivity 1): where the reference
    :func:`dpbook.reference.gaussian_epsilon` is 0 (:math:`\delta \ge
    \delta_\sigma(0)`) the answer must be exactly 0; elsewhere the relative
    error must be :math:`\le 10^{-12}` and the answer must not deliver more
    than :math:`\delta` (50-digit profile). Deterministic. Controls: the
    inverse of the classic calibration,
    :math:`\sqrt{2\ln(1.25/\delta)}/\sigma` (:func:`classic_formula` with
    :math:`\sigma` for :math:`\varepsilon`), within :math:`10^{-12}`.

    Parameters
    ----------
    sigmas, deltas : sequences of float
        The grid (sensitivity 1).
    inverse : callable
        ``(sigma, delta) -> epsilon``, like ``dpcore.gaussian_epsilon``.

    Returns
    -------
    EpsilonExact
    """
    worst_inv, worst_classic, n_violated = 0.0, 0.0, 0
    zero_pairs: list[tuple[float, float, float]] = []
    for sig in sigmas:
        for d in deltas:
            got, ref = inverse(sig, d), mpref.gaussian_epsilon(sig, d)
            if ref == 0:
                zero_pairs.append((sig, d, got))
                continue
            worst_inv = max(worst_inv, float(abs(got / ref - 1)))
            n_violated += bool(mpref.gaussian_delta(sig, got) > d)
            classic_eps = classic_formula(sig, d)  # sqrt(2 ln(1.25/d))/sigma: sigma and eps swap
            worst_classic = max(worst_classic, float(abs(classic_eps / ref - 1)))
    return EpsilonExact(
        evidence=(
            Compare("gaussian_epsilon vs the 50-digit root (worst relative error)", worst_inv, "<=", 1e-12),
            Fact("no answer delivers more than its delta", n_violated == 0),
            Fact(
                f"0 exactly at the {len(zero_pairs)} points with delta >= delta_sigma(0)",
                len(zero_pairs) > 0 and all(g == 0.0 for _, _, g in zero_pairs),
            ),
        ),
        controls=(
            Compare(
                "the classic inverse sqrt(2 ln(1.25/delta))/sigma (worst relative error)", worst_classic, "<=", 1e-12
            ),
        ),
        worst_inv=worst_inv,
        worst_classic=worst_classic,
        n_violated=n_violated,
        n_points=len(sigmas) * len(deltas),
        zero_pairs=tuple(zero_pairs),
    )


def phi_via_erf(t: float) -> float:
    r""":math:`\Phi(t)` as ``autodp`` and ``diffprivlib`` evaluate it, :math:`(1 + \operatorname{erf}(t/\sqrt2))/2`."""
    return 0.5 * (1 + math.erf(t / math.sqrt(2)))
