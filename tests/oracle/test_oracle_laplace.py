"""Oracle: the Laplace mechanism (profile, inverse, RDP) and its exact k-fold composition, against mpmath."""

from __future__ import annotations

import math

import references as ref
from _harness import HUGE, TINY, log_uniform, oracle_settings, probability, report, spread
from _record import example
from hypothesis import example as hexample
from hypothesis import given
from hypothesis import strategies as st

import dpcore

SCALE = spread(1e-300, HUGE, core=(1e-3, 1e3), corners=(1.0,))
EPS = st.one_of(spread(TINY, HUGE, core=(1e-6, 1e3)), st.just(0.0))


@st.composite
def _laplace(draw: st.DrawFn) -> tuple[float, float, float]:
    """(scale, sensitivity, epsilon): epsilon anywhere, or a multiple in [0, 2] of the pure epsilon D/b."""
    b, d = draw(SCALE), draw(SCALE)
    if not math.isfinite(d / b) or d / b == 0.0:
        b = d  # keep the ratio a finite positive double
    eps = draw(st.one_of(EPS, st.floats(0.0, 2.0).map(lambda u: u * (d / b))))
    return b, d, min(eps, 1.7e308)


def test_laplace_mechanism_profile() -> None:
    """LaplaceMechanism.delta is the exact profile; .epsilon its exact inverse; .rdp / laplace_rdp Mironov's."""
    sink: list[str] = []
    family = "LaplaceMechanism delta/epsilon/rdp"
    domain = "scale, sensitivity in [1e-300, 1e300] (D/b finite); eps in {0} u [5e-324, 1e300]; delta in [5e-324, 1)"

    @oracle_settings()
    @given(_laplace(), probability(), spread(1.0 + 2.0**-52, 1e6, core=(1.01, 256.0)))
    def run(params: tuple[float, float, float], delta: float, alpha: float) -> None:
        b, d, eps = params
        with example(family, domain, f"scale={b!r}, sensitivity={d!r}, eps={eps!r}, delta={delta!r}", sink) as ex:
            m = ex.call(("scale", "sensitivity"), lambda: dpcore.LaplaceMechanism(b, d))
            ex.close(
                "delta(eps)",
                ex.call(("epsilon", "scale", "sensitivity"), lambda: m.delta(eps)),
                ref.laplace_delta(eps, b, d),
            )
            got = ex.call(("delta", "scale", "sensitivity"), lambda: m.epsilon(delta))
            ex.close("epsilon(delta)", got, ref.laplace_epsilon(delta, b, d))
            ex.at_most("true delta at the reported epsilon", ref.laplace_delta(got, b, d), delta)
            rdp = ex.call(("alpha", "orders", "b", "sensitivity"), lambda: dpcore.laplace_rdp(alpha, b, d))
            ex.close(f"laplace_rdp({alpha!r})", rdp, ref.laplace_rdp(alpha, b, d))

    run()
    report(family, sink)


# --------------------------------------------------------------------------- exact composition

E0 = spread(TINY, 50.0, core=(1e-3, 10.0), corners=(1e-300, 1.0))


@st.composite
def _composition(draw: st.DrawFn) -> tuple[float, int, float, float]:
    """(epsilon0, count <= 4, eps, delta): count small enough for the quadrature reference."""
    e0 = draw(E0)
    k = draw(st.integers(1, 4))
    eps = draw(st.one_of(EPS, st.floats(0.0, 1.05).map(lambda u: u * k * e0)))
    return e0, k, min(eps, 1.7e308), draw(probability())


def _bracket_checks(ex: object, e0: float, k: int, eps: float, delta: float) -> None:
    from _record import Example

    assert isinstance(ex, Example)
    lo, hi = ex.call(("epsilon", "epsilon0", "count"), lambda: dpcore.laplace_composition_delta(eps, e0, k))
    truth = ref.laplace_k_delta(eps, e0, k)
    ex.lower("delta bracket lower", lo, truth)
    ex.upper("delta bracket upper", hi, truth)
    lo, hi = ex.call(("delta", "epsilon0", "count"), lambda: dpcore.laplace_composition_epsilon(delta, e0, k))
    for name, v in (("epsilon lower", lo), ("epsilon upper", hi)):
        if not (isinstance(v, float) and math.isfinite(v) and v >= 0.0):
            ex.fail(f"{name} = {v!r} is not a finite epsilon >= 0")
            return
    ex.at_most("true delta at the epsilon bracket's upper end", ref.laplace_k_delta(hi, e0, k), delta)
    if lo > 0.0:  # the true epsilon is above lo iff the true delta there exceeds the target
        ex.at_least("true delta at the epsilon bracket's lower end", ref.laplace_k_delta(lo, e0, k), delta)
    # documented width (laplace_composition_epsilon's docstring): the gap is the profile's certified error
    # divided by its slope, about twice that: so either it is within 1e-9 relative, or the true profile falls
    # across it by at most 4 times the delta bracket's width at the upper end (the error it cannot resolve)
    if hi - lo > 1e-9 * max(hi, 1e-300):
        d_lo, d_hi = dpcore.laplace_composition_delta(hi, e0, k)
        fall = (ref.laplace_k_delta(lo, e0, k) if lo > 0.0 else ref.mpf(1)) - ref.laplace_k_delta(hi, e0, k)
        err = 4 * (ref.mpf(d_hi) - ref.mpf(d_lo)) + ref.mpf(1e-15)  # the certified error, with rounding
        if lo > 0.0 and delta > err and fall > err:  # delta at or below the error: any width (documented)
            ex.fail(f"epsilon bracket ({lo!r}, {hi!r}) is wider than its certified delta error implies")
        z_lo, z_hi = dpcore.laplace_composition_delta(0.0, e0, k)  # the certified error where lo = 0 is decided
        err0 = 4 * (ref.mpf(z_hi) - ref.mpf(z_lo)) + ref.mpf(1e-15)
        if lo == 0.0 and not (delta <= err or ref.laplace_k_delta(0.0, e0, k) <= delta + max(err, err0)):
            ex.fail(f"epsilon bracket ({lo!r}, {hi!r}): lower 0 though delta(0) is certifiably above delta")


def test_laplace_composition() -> None:
    """laplace_composition_delta / _epsilon brackets contain the truth (mpmath mixture reference, k <= 4)."""
    sink: list[str] = []
    family = "laplace_composition_delta/epsilon"
    domain = "epsilon0 in [5e-324, 50]; count 1..4; eps in {0} u [5e-324, 1e300]; delta in [5e-324, 1)"

    @oracle_settings()
    @given(_composition())
    # the certifying steps ran out below the pure bound: true delta 3.5e-18 at the upper end (10^4 run)
    @hexample((0.2019741930152825, 3, 100.0, 5.114619722834587e-87))
    def run(params: tuple[float, int, float, float]) -> None:
        e0, k, eps, delta = params
        with example(family, domain, f"epsilon0={e0!r}, count={k}, eps={eps!r}, delta={delta!r}", sink) as ex:
            _bracket_checks(ex, e0, k, eps, delta)

    run()
    report(family, sink)


def test_laplace_composition_tiny_epsilon0() -> None:
    """Up to MAX_COUNT releases whose total variation k (1 - e^{-e0/2}) is below delta: the true epsilon is 0."""
    sink: list[str] = []
    family = "laplace_composition_epsilon (delta >= TV bound)"
    domain = "epsilon0 in [5e-324, 1e-6]; count 1..1024; delta in [k (1 - e^{-e0/2}), 1)"

    @st.composite
    def tiny(draw: st.DrawFn) -> tuple[float, int, float]:
        e0, k = draw(log_uniform(TINY, 1e-6)), draw(st.integers(1, 1024))
        bound = float(ref.laplace_k_tv_bound(e0, k))
        return e0, k, min(max(bound * draw(log_uniform(1.0, 1e300)), TINY), 0.5)

    @oracle_settings(0.5)
    @given(tiny())
    @hexample((5e-324, 10, 1e-5))  # issue 28: laplace_composition_epsilon(1e-5, 5e-324, 10) returned (0.0, nan)
    def run(params: tuple[float, int, float]) -> None:
        e0, k, delta = params
        with example(family, domain, f"epsilon0={e0!r}, count={k}, delta={delta!r}", sink) as ex:
            lo, hi = ex.call(("delta", "epsilon0", "count"), lambda: dpcore.laplace_composition_epsilon(delta, e0, k))
            truth = ref.mpf(0)
            ex.lower("epsilon lower", lo, truth)
            ex.upper("epsilon upper", hi, truth)
            if not (isinstance(hi, float) and math.isfinite(hi) and hi >= 0.0):
                ex.fail(f"epsilon upper = {hi!r} is not a finite epsilon >= 0 (truth 0)")

    run()
    report(family, sink)
