"""Oracle: the Poisson-subsampled Gaussian (one step: profile, inverse, RDP) and the privacy-loss laws' profiles."""

from __future__ import annotations

import math

import references as ref
from _harness import HUGE, TINY, oracle_settings, probability, report, spread
from _record import example
from hypothesis import example as hexample
from hypothesis import given
from hypothesis import strategies as st

import dpcore

SIGMA = spread(1e-3, 1e4, core=(0.3, 30.0), corners=(1.0, 2.0))
SIGMA_WIDE = spread(1e-300, HUGE, core=(0.3, 30.0))
RATE = st.one_of(spread(1e-9, 1.0, core=(1e-6, 1.0), corners=(0.5,)), st.just(1.0))
SG_PARAMS = ("sigma", "sensitivity", "sampling_rate", "epsilon", "delta")
EPS = st.one_of(spread(TINY, 1e4, core=(1e-4, 20.0)), st.just(0.0))


def test_subsampled_gaussian_one_step() -> None:
    """SubsampledGaussianMechanism.delta (both directions) and .epsilon against closed-form normal tails."""
    sink: list[str] = []
    family = "SubsampledGaussianMechanism delta/epsilon"
    domain = (
        "sigma/sensitivity in [1e-3, 1e4] (and [1e-300, 1e300] for delta); q in [1e-9, 1]; "
        "eps in {0} u [5e-324, 1e4]; delta in [5e-324, 1)"
    )

    @oracle_settings()
    @given(st.one_of(SIGMA, SIGMA_WIDE), RATE, EPS, probability())
    @hexample(2.0, 0.05, 1.0, 1e-10)  # issue 28: epsilon(1e-10) was 0.48133, truth 0.59589
    @hexample(1.5, 0.001, 0.01, 0.5)  # issue 28: delta(0.01) was 1.5e-18, truth 8.1e-8
    @hexample(2.0, 0.01, 0.0, 0.5)  # issue 28: delta(0) was 5.9e-12, truth 1.97e-3
    @hexample(1.0, 1.0, 24.30326369600613, 6.208066672018622e-127)  # add direction at q ~ 1: 5e-5 off
    @hexample(1e32, 1.0, 3.2058065831010477e-19, 2.378158569891875e-44)  # e^{-eps} rounded to 1: 4e-33
    def run(sigma: float, q: float, eps: float, delta: float) -> None:
        with example(family, domain, f"sigma={sigma!r}, sampling_rate={q!r}, eps={eps!r}, delta={delta!r}", sink) as ex:
            m = ex.call(("sigma", "sampling_rate"), lambda: dpcore.SubsampledGaussianMechanism(sigma, q))
            ex.close("delta(eps)", ex.call(SG_PARAMS, lambda: m.delta(eps)), ref.sg_delta(eps, sigma, q))
            if 1e-3 <= sigma <= 1e4:
                got = ex.call(SG_PARAMS, lambda: m.epsilon(delta))
                # backward accuracy 2e-11 (documented: the profile's own relative error, flat as delta nears 1)
                ex.inverse("epsilon", got, lambda e: ref.sg_delta(e, sigma, q), delta, backward=2e-11)

    run()
    report(family, sink)


def test_subsampled_gaussian_rdp() -> None:
    """subsampled_gaussian_rdp: the binomial sum at integer orders, the integral (quadrature) at fractional ones."""
    sink: list[str] = []
    family = "subsampled_gaussian_rdp"
    domain = (
        "alpha integer 2..1e6 or fractional in (1, 256] (an upper bound, at most 1e-7 above: documented); "
        "sigma in [0.1, 100]; q in [1e-9, 1]"
    )

    @oracle_settings()
    @given(
        st.one_of(st.integers(2, 64), st.integers(2, 10**6), spread(1.0 + 2.0**-52, 256.0, core=(1.01, 64.0))),
        spread(0.1, 100.0, core=(0.5, 20.0), corners=(1.0,)),
        RATE,
    )
    @hexample(1.45524779116863, 0.1, 0.5)  # 1.5e-9 above the truth: the quadrature's error estimate added
    def run(alpha: float, sigma: float, q: float) -> None:
        with example(family, domain, f"alpha={alpha!r}, sigma={sigma!r}, sampling_rate={q!r}", sink) as ex:
            got = ex.call(("alpha", "sigma", "sampling_rate"), lambda: dpcore.subsampled_gaussian_rdp(alpha, sigma, q))
            truth = ref.sg_rdp(alpha, sigma, q)
            if alpha == int(alpha) or q == 1.0:  # the exact sum: within 1e-9 either way
                ex.close(f"rdp({alpha!r})", got, truth)
            else:  # quadrature with its error estimate added: never below, at most 1e-7 above (documented)
                ex.upper(f"rdp({alpha!r})", got, truth)
                ex.close(f"rdp({alpha!r}) tightness", got, truth, slack=1e-7)

    run()
    report(family, sink)


def test_privacy_loss_laws() -> None:
    """PrivacyLoss.delta of every law constructor, at any real epsilon (-inf and +inf included)."""
    sink: list[str] = []
    family = "PrivacyLoss.delta (gaussian, laplace, atomic, subsampled laws)"
    domain = "eps in [-inf, inf]; mu, epsilon0 in [1e-6, 1e3]; subsampled s in [0.1, 100], q in [1e-6, 1]"
    real_eps = st.one_of(
        st.sampled_from([-math.inf, math.inf, 0.0, -1.0]),
        st.floats(-50.0, 50.0),
        spread(1e-6, 1e3).map(lambda x: -x),
        spread(1e-6, 1e3),
    )

    @oracle_settings()
    @given(
        st.sampled_from(["gaussian", "laplace", "atomic", "remove", "add"]),
        spread(1e-6, 1e3, core=(0.01, 10.0)),
        spread(0.1, 100.0, corners=(1.0,)),
        spread(1e-6, 1.0, corners=(0.01,)),
        real_eps,
    )
    @hexample("gaussian", 1.0, 1.0, 0.01, -math.inf)  # issue 28: gaussian_privacy_loss(1.0).delta(-inf) returned 0
    @hexample("atomic", 1.0000000000000009, 0.1, 1.0, 1.0)  # quadrature over 4 doubles: 12.5 % low
    @hexample("laplace", 1000.0, 100.0, 3.475523257254744e-05, -20.03539087734387)  # quadrature: 1.7e-9 low
    @hexample("laplace", 1.000000000000023, 3.8110055662326077, 1.0, 1.0)  # quadrature next to the atom: 0.3 %
    @hexample("add", 0.5, 0.7349547727799877, 1e-06, 1e-06)  # eps ~ q: e^-eps - 1 + q nearly cancels
    def run(law: str, par: float, s: float, q: float, eps: float) -> None:
        with example(family, domain, f"law={law}, parameter={par!r}, s={s!r}, q={q!r}, eps={eps!r}", sink) as ex:
            if law == "gaussian":  # N(mu, 2 mu): the Gaussian mechanism with D/sigma = sqrt(2 mu)
                loss = ex.call(("mu",), lambda: dpcore.gaussian_privacy_loss(par))
                truth = ref.gaussian_delta(eps, 1.0, math.sqrt(2.0 * par))
            elif law == "laplace":
                loss = ex.call(("epsilon0",), lambda: dpcore.laplace_privacy_loss_law(par))
                truth = ref.laplace_delta(eps, 1.0, par)
            elif law == "atomic":  # randomized response's two atoms
                loss = ex.call(("epsilon0",), lambda: dpcore.RandomizedResponse(par).privacy_losses()[0])
                truth = ref.rr_delta(eps, par)
            else:
                losses = ex.call(
                    ("s", "q", "sigma", "sampling_rate"), lambda: dpcore.subsampled_gaussian_privacy_losses(s, q)
                )
                loss = losses[0] if law == "remove" else losses[1]
                truth = ref.sg_delta_direction(eps, s, q, law)
            got = ex.call(("epsilon",), lambda: loss.delta(eps))
            ex.close("delta(eps)", got, truth)

    run()
    report(family, sink)
