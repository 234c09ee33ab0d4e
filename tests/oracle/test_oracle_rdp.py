"""Oracle: rdp_to_dp / classical_rdp_to_dp (the documented formulas, in mpmath) and, semantically, that the
conversion of a Gaussian mechanism's RDP curve, and the RDP accountant, never promise less than the exact epsilon."""

from __future__ import annotations

import numpy as np
import references as ref
from _harness import oracle_settings, probability, report, spread
from _record import example
from hypothesis import given
from hypothesis import strategies as st

import dpcore

CURVE = st.lists(
    st.tuples(
        spread(1.0 + 2.0**-52, 1e6, core=(1.01, 256.0)),
        st.one_of(spread(1e-300, 1e300, core=(1e-6, 1e3)), st.just(0.0)),
    ),
    min_size=1,
    max_size=8,
)


def test_rdp_to_dp_formula() -> None:
    """rdp_to_dp and classical_rdp_to_dp compute the conversions their docstrings state."""
    sink: list[str] = []
    family = "rdp_to_dp / classical_rdp_to_dp"
    domain = "1..8 orders in (1, 1e6]; rdp in {0} u [1e-300, 1e300]; delta in [5e-324, 1)"

    @oracle_settings()
    @given(CURVE, probability())
    def run(curve: list[tuple[float, float]], delta: float) -> None:
        orders, rdp = [a for a, _ in curve], [r for _, r in curve]
        with example(family, domain, f"orders={orders!r}, rdp={rdp!r}, delta={delta!r}", sink) as ex:
            eps, _ = ex.call(("orders", "rdp", "delta"), lambda: dpcore.rdp_to_dp(orders, rdp, delta))
            ex.close("rdp_to_dp", eps, ref.rdp_to_dp(orders, rdp, delta))
            eps_c, _ = ex.call(("orders", "rdp", "delta"), lambda: dpcore.classical_rdp_to_dp(orders, rdp, delta))
            ex.close("classical_rdp_to_dp", eps_c, ref.classical_rdp_to_dp(orders, rdp, delta))

    run()
    report(family, sink)


def test_rdp_bounds_the_exact_gaussian_epsilon() -> None:
    """RDP is a valid bound: rdp_to_dp of k Gaussians' curve, and RdpAccountant, are >= the exact epsilon."""
    sink: list[str] = []
    family = "rdp_to_dp / RdpAccountant >= exact (Gaussian)"
    domain = "sigma in [0.1, 100]; count 1..1e4; delta in [1e-300, 0.5]"

    @oracle_settings(0.5)
    @given(spread(0.1, 100.0, corners=(1.0,)), st.integers(1, 10**4), spread(1e-300, 0.5, core=(1e-12, 1e-3)))
    def run(sigma: float, k: int, delta: float) -> None:
        with example(family, domain, f"sigma={sigma!r}, count={k}, delta={delta!r}", sink) as ex:
            with ref.mp.workdps(50):
                m_sens = ref.mp.sqrt(k)
            truth = ref.epsilon_of(lambda e: ref.gaussian_delta(e, sigma, m_sens), delta)
            orders = np.asarray(dpcore.DEFAULT_RDP_ORDERS)
            curve = k * np.asarray(dpcore.gaussian_rdp(orders, sigma))
            eps, _ = ex.call(("orders", "rdp", "delta"), lambda: dpcore.rdp_to_dp(orders, curve, delta))
            ex.upper("rdp_to_dp(k Gaussian curves)", eps, truth)
            acc = dpcore.RdpAccountant().compose(dpcore.GaussianMechanism(sigma), k)
            ex.upper("RdpAccountant.epsilon", ex.call(("delta",), lambda: acc.epsilon(delta)), truth)

    run()
    report(family, sink)
