"""Oracle: randomized response, discrete Laplace and discrete Gaussian mechanisms, against exact mpmath sums."""

from __future__ import annotations

import math
from fractions import Fraction

import references as ref
from _harness import HUGE, TINY, oracle_settings, probability, report, spread
from _record import example
from hypothesis import example as hexample
from hypothesis import given
from hypothesis import strategies as st

import dpcore

EPS = st.one_of(spread(TINY, HUGE, core=(1e-6, 1e2)), st.just(0.0))
ORDER = spread(1.0 + 2.0**-52, 1e6, core=(1.01, 256.0))


def test_randomized_response() -> None:
    """RandomizedResponse.delta / .epsilon / .rdp against the two-outcome law."""
    sink: list[str] = []
    family = "RandomizedResponse delta/epsilon/rdp"
    domain = "epsilon0 in [5e-324, 1e300]; eps in {0} u [5e-324, 1e300]; delta in [5e-324, 1); alpha in (1, 1e6]"

    @oracle_settings()
    @given(spread(TINY, HUGE, core=(1e-3, 20.0), corners=(6000.0,)), EPS, probability(), ORDER)
    @hexample(40.53726257989577, 1.0, 0.9999999999999999, 2.0)  # epsilon(delta) near 1 was 0.6 % high
    def run(e0: float, eps: float, delta: float, alpha: float) -> None:
        with example(family, domain, f"epsilon0={e0!r}, eps={eps!r}, delta={delta!r}, alpha={alpha!r}", sink) as ex:
            m = ex.call(("epsilon0", "epsilon"), lambda: dpcore.RandomizedResponse(e0))
            ex.close(
                "delta(eps)",
                ex.call(("epsilon", "epsilon0", "scale", "sigma2", "sensitivity"), lambda: m.delta(eps)),
                ref.rr_delta(eps, e0),
            )
            got = ex.call(("delta", "epsilon0", "scale", "sigma2", "sensitivity"), lambda: m.epsilon(delta))
            ex.close("epsilon(delta)", got, ref.rr_epsilon(delta, e0))
            ex.at_most("true delta at the reported epsilon", ref.rr_delta(got, e0), delta)
            ex.close(f"rdp({alpha!r})", ex.call(("orders", "alpha"), lambda: m.rdp(alpha)), ref.rr_rdp(alpha, e0))

    run()
    report(family, sink)


@st.composite
def _rational(draw: st.DrawFn, lo: float, hi: float) -> Fraction:
    """A positive rational with numerator and denominator below 2**24 (the discrete mechanisms' domain)."""
    x = draw(spread(lo, hi, core=(0.1, 100.0), corners=(1.0,)))
    return Fraction(x).limit_denominator(2**24 - 1) if x < 2**24 - 1 else Fraction(2**24 - 1)


def test_discrete_laplace() -> None:
    """DiscreteLaplaceMechanism.delta / .epsilon / .rdp against geometric sums."""
    sink: list[str] = []
    family = "DiscreteLaplaceMechanism delta/epsilon/rdp"
    domain = "scale rational in [2^-24, 2^24); sensitivity 1..1e7; eps in {0} u [5e-324, 1e300]; delta in [5e-324, 1)"

    @oracle_settings()
    @given(
        _rational(2.0**-24, 2.0**24),
        st.one_of(st.integers(1, 10), st.integers(1, 10**7)),
        EPS,
        probability(),
        spread(1.0 + 2.0**-52, 1e4, core=(1.01, 64.0)),
    )
    @hexample(Fraction(3, 7), 25001, 58330.99999999999, 0.5, 2.0)  # next to the kink (D - 2)/b
    def run(b: Fraction, d: int, eps: float, delta: float, alpha: float) -> None:
        inputs = f"scale={b!r}, sensitivity={d}, eps={eps!r}, delta={delta!r}, alpha={alpha!r}"
        with example(family, domain, inputs, sink) as ex:
            m = ex.call(("scale", "sensitivity"), lambda: dpcore.DiscreteLaplaceMechanism(b, d))
            ex.close(
                "delta(eps)",
                ex.call(("epsilon", "epsilon0", "scale", "sigma2", "sensitivity"), lambda: m.delta(eps)),
                ref.discrete_laplace_delta(eps, b, d),
            )
            got = ex.call(("delta", "epsilon0", "scale", "sigma2", "sensitivity"), lambda: m.epsilon(delta))
            ex.inverse("epsilon", got, lambda e: ref.discrete_laplace_delta(e, b, d), delta)
            rdp = ex.call(("orders", "alpha"), lambda: m.rdp(alpha))
            ex.close(f"rdp({alpha!r})", rdp, ref.discrete_laplace_rdp(alpha, b, d))

    run()
    report(family, sink)


def test_discrete_gaussian() -> None:
    """DiscreteGaussianMechanism.delta / .epsilon / .rdp against sums over the integers (theta functions)."""
    sink: list[str] = []
    family = "DiscreteGaussianMechanism delta/epsilon/rdp"
    domain = "sigma2 rational in [2^-24, 2^24); sensitivity 1..1e6; eps in {0} u [5e-324, 1e300]; delta in [5e-324, 1)"

    @oracle_settings()
    @given(
        _rational(2.0**-24, 2.0**24),
        st.one_of(st.integers(1, 10), st.integers(1, 10**6)),
        EPS,
        probability(),
        spread(1.0 + 2.0**-52, 1e4, core=(1.01, 64.0)),
    )
    # the double just below the largest loss D^2/(2 sigma2) ~ 1.4e11: delta was 5e-96, truth 1.09e-5
    @hexample(Fraction(7, 3072), 25001, 137153828790.85713, 1e-5, 2.0)
    def run(s2: Fraction, d: int, eps: float, delta: float, alpha: float) -> None:
        inputs = f"sigma2={s2!r}, sensitivity={d}, eps={eps!r}, delta={delta!r}, alpha={alpha!r}"
        with example(family, domain, inputs, sink) as ex:
            m = ex.call(("sigma2", "sensitivity"), lambda: dpcore.DiscreteGaussianMechanism(s2, d))
            ex.close(
                "delta(eps)",
                ex.call(("epsilon", "epsilon0", "scale", "sigma2", "sensitivity"), lambda: m.delta(eps)),
                ref.discrete_gaussian_delta(eps, s2, d),
            )
            got = ex.call(("delta", "epsilon0", "scale", "sigma2", "sensitivity"), lambda: m.epsilon(delta))
            # forward tightness (1e-9 below the answer the profile exceeds delta), or, as delta nears 1 and the
            # profile flattens, the backward bound of the Gaussian solvers (the profile at the answer within
            # relative 1e-13 (1 + |log delta|) of delta)
            eta = 1e-13 * (1.0 + abs(math.log(delta)))
            ex.inverse("epsilon", got, lambda e: ref.discrete_gaussian_delta(e, s2, d), delta, backward=eta)
            rdp = ex.call(("orders", "alpha"), lambda: m.rdp(alpha))
            ex.close(f"rdp({alpha!r})", rdp, ref.discrete_gaussian_rdp(alpha, s2, d))

    run()
    report(family, sink)
