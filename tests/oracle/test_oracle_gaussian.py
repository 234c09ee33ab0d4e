"""Oracle: the Gaussian mechanism -- profile, log profile, inverse, calibrations, composition, RDP -- against mpmath.

An inverse (epsilon at delta, sigma at epsilon and delta) is judged by the true profile at the reported
point and at 1e-9 below it (:meth:`_record.Example.inverse`); ``test_oracle_references.py`` checks the
reference inverses themselves against these two-point verdicts.
"""

from __future__ import annotations

import math

import mpmath as mp
import references as ref
from _harness import HUGE, TINY, oracle_settings, probability, report, spread
from _record import example
from hypothesis import example as hexample
from hypothesis import given
from hypothesis import strategies as st

import dpcore

SIGMA = spread(1e-300, HUGE, core=(1e-2, 1e2), corners=(1.0,))
EPS = st.one_of(spread(TINY, HUGE, core=(1e-6, 1e2)), st.just(0.0))


def backward(delta: float) -> float:
    """The Gaussian solvers' documented backward accuracy (gaussian_epsilon's docstring): the answer is the
    exact inverse for a target within relative 1e-13 (1 + |log delta|) below the one asked."""
    return 1e-13 * (1.0 + abs(math.log(delta)))


def test_gaussian_profile() -> None:
    """gaussian_delta, gaussian_log_delta and GaussianMechanism.delta are Balle & Wang's exact profile."""
    sink: list[str] = []
    family = "gaussian_delta / gaussian_log_delta"
    domain = "sigma, sensitivity in [1e-300, 1e300]; eps in {0} u [5e-324, 1e300]"

    @oracle_settings()
    @given(SIGMA, SIGMA, EPS)
    def run(sigma: float, sens: float, eps: float) -> None:
        with example(family, domain, f"sigma={sigma!r}, sensitivity={sens!r}, eps={eps!r}", sink) as ex:
            truth = ref.gaussian_delta(eps, sigma, sens)
            got = ex.call(("sigma", "sensitivity", "epsilon"), lambda: dpcore.gaussian_delta(sigma, sens, eps))
            ex.close("gaussian_delta", got, truth)
            logd = ex.call(("sigma", "sensitivity", "epsilon"), lambda: dpcore.gaussian_log_delta(sigma, sens, eps))
            if truth > 0:
                ex.close("exp(gaussian_log_delta)", mp.exp(mp.mpf(logd)), truth)
            m = ex.call(("sigma", "sensitivity"), lambda: dpcore.GaussianMechanism(sigma, sens))
            ex.close("GaussianMechanism.delta", m.delta(eps), truth)

    run()
    report(family, sink)


def test_gaussian_epsilon() -> None:
    """gaussian_epsilon is the exact inverse, and the true delta at its answer is at most the target."""
    sink: list[str] = []
    family = "gaussian_epsilon"
    domain = "sigma, sensitivity in [1e-300, 1e300]; delta in [5e-324, 1)"

    @oracle_settings()
    @given(SIGMA, SIGMA, probability())
    def run(sigma: float, sens: float, delta: float) -> None:
        with example(family, domain, f"sigma={sigma!r}, sensitivity={sens!r}, delta={delta!r}", sink) as ex:
            got = ex.call(("sigma", "sensitivity", "delta"), lambda: dpcore.gaussian_epsilon(sigma, delta, sens))
            ex.inverse("epsilon", got, lambda e: ref.gaussian_delta(e, sigma, sens), delta, backward=backward(delta))

    run()
    report(family, sink)


def test_analytic_gaussian_sigma() -> None:
    """analytic_gaussian_sigma(_many): the smallest sigma (1e-9 relative), and it delivers the target delta."""
    sink: list[str] = []
    family = "analytic_gaussian_sigma(_many)"
    domain = "sensitivity in [1e-300, 1e300]; eps in [5e-324, 1e300]; delta in [5e-324, 1)"

    @oracle_settings()
    @given(SIGMA, spread(TINY, HUGE, core=(1e-3, 1e2), corners=(1.0,)), probability())
    @hexample(1.0, 5e-324, 6.9456112808310834e-164)  # chi^2 + eps subnormal: sigma 1.85e-7 too small
    def run(sens: float, eps: float, delta: float) -> None:
        with example(family, domain, f"sensitivity={sens!r}, epsilon={eps!r}, delta={delta!r}", sink) as ex:
            params = ("sensitivity", "epsilon", "delta", "sigma")
            got = ex.call(params, lambda: dpcore.analytic_gaussian_sigma(sens, eps, delta))
            ex.inverse("sigma", got, lambda s: ref.gaussian_delta(eps, s, sens), delta, backward=backward(delta))
            many = ex.call(params, lambda: dpcore.analytic_gaussian_sigma_many(sens, [eps], [delta]))
            ex.at_most("true delta at the reported sigma (_many)", ref.gaussian_delta(eps, float(many[0]), sens), delta)

    run()
    report(family, sink)


def test_classic_gaussian_sigma() -> None:
    """classic_gaussian_sigma is D sqrt(2 log(1.25/delta))/eps, and (Dwork & Roth, Thm A.1) delivers delta."""
    sink: list[str] = []
    family = "classic_gaussian_sigma"
    domain = "sensitivity in [1e-300, 1e300]; eps in [5e-324, 1); delta in [5e-324, 1)"

    @oracle_settings(0.5)
    @given(SIGMA, st.one_of(spread(TINY, 0.99, core=(1e-3, 0.99)), st.just(1.0 - 2.0**-53)), probability())
    def run(sens: float, eps: float, delta: float) -> None:
        with example(family, domain, f"sensitivity={sens!r}, epsilon={eps!r}, delta={delta!r}", sink) as ex:
            got = ex.call(
                ("sensitivity", "epsilon", "delta", "sigma"), lambda: dpcore.classic_gaussian_sigma(sens, eps, delta)
            )
            ex.close("classic_gaussian_sigma", got, ref.classic_sigma(eps, delta, sens))
            ex.at_most("true delta at the classic sigma", ref.gaussian_delta(eps, got, sens), delta)

    run()
    report(family, sink)


def test_gaussian_composition() -> None:
    """k Gaussian releases = one with sqrt(k) D: exact_gaussian_composition_epsilon and self_composition."""
    sink: list[str] = []
    family = "exact_gaussian_composition_epsilon"
    domain = "sigma, sensitivity in [1e-300, 1e300]; count 1..1e9; delta in [5e-324, 1)"

    @oracle_settings(0.5)
    @given(SIGMA, SIGMA, st.one_of(st.integers(1, 100), st.integers(1, 10**9)), probability())
    def run(sigma: float, sens: float, k: int, delta: float) -> None:
        with example(family, domain, f"sigma={sigma!r}, sensitivity={sens!r}, count={k}, delta={delta!r}", sink) as ex:
            params = ("sigma", "sensitivity", "count", "delta")
            got = ex.call(params, lambda: dpcore.exact_gaussian_composition_epsilon(sigma, k, delta, sens))
            with mp.workdps(50):  # the composition's sensitivity sqrt(k) D, exactly (not rounded to a double)
                m_sens = mp.sqrt(k) * mp.mpf(sens)
            ex.inverse(
                "exact_gaussian_composition_epsilon",
                got,
                lambda e: ref.gaussian_delta(e, sigma, m_sens),
                delta,
                backward=backward(delta),
            )
            comp = ex.call(params, lambda: dpcore.GaussianMechanism(sigma, sens).self_composition(k))
            e2 = ex.call(params, lambda: comp.epsilon(delta))
            ex.at_most("true delta at self_composition(k).epsilon", ref.gaussian_delta(e2, sigma, m_sens), delta)

    run()
    report(family, sink)


def test_gaussian_rdp() -> None:
    """gaussian_rdp is alpha D^2/(2 sigma^2)."""
    sink: list[str] = []
    family = "gaussian_rdp"
    domain = "alpha in (1, 1e300]; sigma, sensitivity in [1e-300, 1e300]"

    @oracle_settings(0.5)
    @given(spread(1.0 + 2.0**-52, HUGE, core=(1.01, 1e4)), SIGMA, SIGMA)
    def run(alpha: float, sigma: float, sens: float) -> None:
        with example(family, domain, f"alpha={alpha!r}, sigma={sigma!r}, sensitivity={sens!r}", sink) as ex:
            got = ex.call(("alpha", "sigma", "sensitivity"), lambda: dpcore.gaussian_rdp(alpha, sigma, sens))
            ex.close("gaussian_rdp", got, ref.gaussian_rdp(alpha, sigma, sens))

    run()
    report(family, sink)
