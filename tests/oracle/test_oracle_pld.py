"""Oracle: the PLD accountant's brackets against exact references.

For each composition with an exact reference -- randomized response (binomial sums), Gaussian (one
Gaussian with sqrt(k) D), Laplace up to 3 releases (the mpmath mixture), the subsampled Gaussian at one
step (closed-form tails) and two steps (quadrature over the first step) -- and with ``closed_form`` both
on (the accountant's exact routes) and off (its grid):

* ``epsilon_bracket(delta)``: the true delta at ``lower`` is at least delta and at ``upper`` at most
  delta (the true epsilon lies in it, to 1e-9 relative on the delta scale); its width is at most
  ``relative_width * max(lower, EPSILON_FLOOR)`` (documented, default 1e-3 and 0.1);
* ``epsilon(delta)``: the true delta there is at most delta, and it is not below the bracket's upper end;
* ``delta_bracket(eps)``: the true delta lies in it.

delta is sampled in [MIN_DELTA = 1e-10, 1), the accountant's documented domain.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import references as ref
from _harness import oracle_settings, report, spread
from _record import Example, example
from hypothesis import example as hexample
from hypothesis import given
from hypothesis import strategies as st
from mpmath import mpf

import dpcore

DELTA = st.one_of(spread(1e-10, 0.5, core=(1e-8, 1e-2), corners=(1e-5,)), spread(1e-10, 0.1).map(lambda u: 1.0 - u))
PARAMS = ("delta", "epsilon", "count", "mechanism", "relative_width", "value_discretization")


def _judge(ex: Example, acc: dpcore.PldAccountant, profile: Callable[[float], mpf], delta: float, eps: float) -> None:
    lo, hi = ex.call(PARAMS, lambda: acc.epsilon_bracket(delta))
    for name, v in (("epsilon_bracket lower", lo), ("epsilon_bracket upper", hi)):
        if not (isinstance(v, float) and math.isfinite(v) and v >= 0.0):
            ex.fail(f"{name} = {v!r} is not a finite epsilon >= 0")
            return
    ex.at_most("true delta at epsilon_bracket's upper end", profile(hi), delta)
    if lo > 0.0:
        ex.at_least("true delta at epsilon_bracket's lower end", profile(lo), delta)
    ex.width("epsilon", lo, hi, acc.relative_width * max(lo, dpcore.pld.EPSILON_FLOOR))
    up = ex.call(PARAMS, lambda: acc.epsilon(delta))
    if not hi <= up * (1 + 1e-12):
        ex.fail(f"epsilon() = {up!r} is below the bracket's upper end {hi!r} (documented: never larger)")
    ex.at_most("true delta at epsilon()", profile(up), delta)
    dlo, dhi = ex.call(PARAMS, lambda: acc.delta_bracket(eps))
    truth = profile(eps)
    ex.lower("delta_bracket lower", dlo, truth)
    ex.upper("delta_bracket upper", dhi, truth)


EPS = st.one_of(st.just(0.0), spread(1e-4, 200.0, core=(0.01, 20.0)))


@st.composite
def _rr(draw: st.DrawFn) -> tuple[float, int]:
    """(epsilon0, count) with count * epsilon0 <= 60 (the grid at step 1e-4 stays cheap)."""
    e0 = draw(spread(1e-3, 60.0, core=(0.05, 5.0)))
    return e0, draw(st.integers(1, max(1, min(300, int(60 / e0)))))


@st.composite
def _gaussian(draw: st.DrawFn) -> tuple[float, int]:
    """(sigma, count) with count / (2 sigma^2) <= 20 (the composed loss's mean)."""
    sigma = draw(spread(0.3, 30.0, corners=(1.0,)))
    return sigma, draw(st.integers(1, max(1, min(1000, int(40 * sigma * sigma)))))


def test_pld_randomized_response() -> None:
    """k randomized responses: exact binomial sums."""
    sink: list[str] = []
    family = "PldAccountant: randomized response x k"
    domain = (
        "epsilon0 in [1e-3, 60]; count 1..300 with count * epsilon0 <= 60; closed_form on/off; "
        "delta in [1e-10, 1); eps in {0} u [1e-4, 200]"
    )

    @oracle_settings(0.5)
    @given(_rr(), st.booleans(), DELTA, EPS)
    @hexample((6000.0, 2), True, 1e-5, 1.0)  # issue 28: epsilon_bracket(1e-5) was (9991, 10000), truth 11999.99999
    @hexample((1.0, 100), True, 1e-5, 90.0)  # issue 28: delta_bracket(90) lower end 1.7567056e-9 > exact 1.7566827e-9
    def run(params: tuple[float, int], closed: bool, delta: float, eps: float) -> None:
        e0, k = params
        inputs = f"epsilon0={e0!r}, count={k}, closed_form={closed}, delta={delta!r}, eps={eps!r}"
        with example(family, domain, inputs, sink) as ex:
            acc = dpcore.PldAccountant(closed_form=closed).compose(dpcore.RandomizedResponse(e0), k)
            _judge(ex, acc, lambda e: ref.rr_delta(e, e0, k), delta, eps)

    run()
    report(family, sink)


def test_pld_gaussian() -> None:
    """k Gaussian mechanisms: one Gaussian of sensitivity sqrt(k) D (closed form)."""
    sink: list[str] = []
    family = "PldAccountant: Gaussian x k"
    domain = (
        "sigma in [0.3, 30]; count 1..1000 with count/(2 sigma^2) <= 20; closed_form on/off; "
        "delta in [1e-10, 1); eps in {0} u [1e-4, 200]"
    )

    @oracle_settings(0.5)
    @given(_gaussian(), st.booleans(), DELTA, EPS)
    def run(params: tuple[float, int], closed: bool, delta: float, eps: float) -> None:
        sigma, k = params
        inputs = f"sigma={sigma!r}, count={k}, closed_form={closed}, delta={delta!r}, eps={eps!r}"
        with example(family, domain, inputs, sink) as ex:
            with ref.mp.workdps(50):
                m_sens = ref.mp.sqrt(k)
            acc = dpcore.PldAccountant(closed_form=closed).compose(dpcore.GaussianMechanism(sigma), k)
            _judge(ex, acc, lambda e: ref.gaussian_delta(e, sigma, m_sens), delta, eps)

    run()
    report(family, sink)


def test_pld_laplace() -> None:
    """Up to 3 Laplace releases: the mpmath mixture reference (exact route and grid)."""
    sink: list[str] = []
    family = "PldAccountant: Laplace x k (k <= 3)"
    domain = "epsilon0 in [1e-3, 20]; count 1..3; closed_form on/off; delta in [1e-10, 1); eps in {0} u [1e-4, 200]"

    @oracle_settings(0.5)
    @given(spread(1e-3, 20.0, core=(0.05, 5.0), corners=(1.0,)), st.integers(1, 3), st.booleans(), DELTA, EPS)
    @hexample(20.0, 3, True, 0.9999999999, 1e-4)  # the exact route's bracket (0, 4.96) passed as 1e-3 wide
    def run(e0: float, k: int, closed: bool, delta: float, eps: float) -> None:
        inputs = f"epsilon0={e0!r}, count={k}, closed_form={closed}, delta={delta!r}, eps={eps!r}"
        with example(family, domain, inputs, sink) as ex:
            b = 1.0 / e0
            acc = dpcore.PldAccountant(closed_form=closed).compose(dpcore.LaplaceMechanism(b), k)
            exact_e0 = Fraction(1) / Fraction(b)  # the mechanism's pure epsilon D/b, exactly
            _judge(ex, acc, lambda e: ref.laplace_k_delta(e, exact_e0, k), delta, eps)

    run()
    report(family, sink)


def test_pld_subsampled_gaussian() -> None:
    """The subsampled Gaussian at one step: the closed-form normal tails."""
    sink: list[str] = []
    family = "PldAccountant: subsampled Gaussian x 1"
    domain = "sigma in [0.5, 20]; q in [1e-4, 1]; closed_form on/off; delta in [1e-10, 1); eps in {0} u [1e-4, 200]"

    @oracle_settings(0.5)
    @given(spread(0.5, 20.0, corners=(1.0,)), spread(1e-4, 1.0, corners=(0.01,)), st.booleans(), DELTA, EPS)
    def run(sigma: float, q: float, closed: bool, delta: float, eps: float) -> None:
        inputs = f"sigma={sigma!r}, sampling_rate={q!r}, closed_form={closed}, delta={delta!r}, eps={eps!r}"
        with example(family, domain, inputs, sink) as ex:
            acc = dpcore.PldAccountant(closed_form=closed).compose(dpcore.SubsampledGaussianMechanism(sigma, q), 1)
            _judge(ex, acc, lambda e: ref.sg_delta(e, sigma, q), delta, eps)

    run()
    report(family, sink)


def test_pld_subsampled_gaussian_two_steps() -> None:
    """Two composed subsampled-Gaussian steps: mpmath quadrature over the first step of the second's closed form.

    The reference is a quadrature whose integrand is itself an adaptive-precision closed form (about 1.5 s a
    profile value), so this family runs a smaller share of the examples (3 %: 300 at ``--examples 10000``).
    """
    sink: list[str] = []
    family = "PldAccountant: subsampled Gaussian x 2"
    domain = "sigma in [0.5, 20]; q in [1e-4, 1]; closed_form on/off; delta in [1e-10, 1); eps in {0} u [1e-4, 200]"

    @oracle_settings(0.03)
    @given(spread(0.5, 20.0, corners=(1.0,)), spread(1e-4, 1.0, corners=(0.01,)), st.booleans(), DELTA, EPS)
    def run(sigma: float, q: float, closed: bool, delta: float, eps: float) -> None:
        inputs = f"sigma={sigma!r}, sampling_rate={q!r}, closed_form={closed}, delta={delta!r}, eps={eps!r}"
        with example(family, domain, inputs, sink) as ex:
            acc = dpcore.PldAccountant(closed_form=closed).compose(dpcore.SubsampledGaussianMechanism(sigma, q), 2)
            _judge(ex, acc, lambda e: ref.sg2_delta(e, sigma, q), delta, eps)

    run()
    report(family, sink)


class _WithoutQ:
    """A mechanism's losses stripped of their law under Q (and of any closed form): the accountant can then
    build neither connect-the-dots nor the optimistic twin, and answers with its mean-matched bracket
    (Hoeffding's t over the K composed roundings, the truncated tails in eta), the fallback that no built-in
    mechanism reaches. Not a dpcore Mechanism, so no closed form or exact route applies either."""

    def __init__(self, mechanism: object) -> None:
        import dataclasses

        self._losses = tuple(
            dataclasses.replace(loss, q_cdf=None, q_sf=None, gaussian_mean=None, lattice=None, profile=None)
            for loss in mechanism.privacy_losses()  # type: ignore[attr-defined]
        )

    def privacy_losses(self) -> tuple[object, ...]:
        return self._losses


P_INF = 3e-9  # the +inf mass of the "rr-inf" law: k P_INF is of the order of the deltas asked


def _rr_with_infinity(e0: float, p_inf: float) -> object:
    """Randomized response's loss (+-e0, P(+e0) = e^e0/(1+e^e0)) scaled by 1 - p_inf, with p_inf at +inf."""
    import numpy as np

    p = math.exp(e0) / (1 + math.exp(e0))
    w = 1.0 - p_inf

    def cdf(x: object) -> object:
        x = np.asarray(x, dtype=float)
        return w * np.where(x < -e0, 0.0, np.where(x < e0, 1 - p, 1.0))

    def sf(x: object) -> object:
        x = np.asarray(x, dtype=float)
        return w * np.where(x < -e0, 1.0, np.where(x < e0, p, 0.0))

    def partial_mean(a: float, b: float) -> float:
        return w * (((1 - p) * -e0 if a < -e0 <= b else 0.0) + (p * e0 if a < e0 <= b else 0.0))

    loss = dpcore.PrivacyLoss(cdf, sf, partial_mean, -e0, e0, p_inf, "randomized response with +inf mass")  # type: ignore[arg-type]

    class _Mech:
        def privacy_losses(self) -> tuple[object, ...]:
            return (loss,)

    return _Mech()


def test_pld_mean_matched_fallback() -> None:
    """The fallback bracket (no law under Q) contains the truth: randomized response and Gaussian compositions."""
    sink: list[str] = []
    family = "PldAccountant: mean-matched fallback (losses without Q)"
    domain = (
        "randomized response epsilon0 in [0.05, 2], count 1..200 with count * epsilon0 <= 20; Gaussian sigma in "
        "[0.5, 10], count 1..200; delta in [1e-10, 0.1]; eps in [1e-3, 20]"
    )

    @st.composite
    def case(draw: st.DrawFn) -> tuple[str, float, int]:
        kind = draw(st.sampled_from(["rr", "gauss", "rr-inf"]))
        if kind == "gauss":
            return "gauss", draw(spread(0.5, 10.0, corners=(1.0,))), draw(st.integers(1, 200))
        e0 = draw(spread(0.05, 2.0, corners=(0.1, 1.0)))
        return kind, e0, draw(st.integers(1, max(1, min(200, int(20 / e0)))))

    @oracle_settings(0.5)
    @given(case(), spread(1e-10, 0.1, corners=(1e-10, 1e-5)), spread(1e-3, 20.0, corners=(1.0,)))
    @hexample(("rr", 0.1, 200), 1e-10, 5.0)  # many roundings: Hoeffding's t must count K
    @hexample(("gauss", 1.0, 100), 1e-6, 5.0)
    @hexample(("rr-inf", 0.3, 60), 1e-6, 5.0)  # mass at +inf: it must count in eta
    def run(params: tuple[str, float, int], delta: float, eps: float) -> None:
        kind, par, k = params
        inputs = f"{kind}({par!r}) x {k}, delta={delta!r}, eps={eps!r}"
        with example(family, domain, inputs, sink) as ex:
            if kind == "rr":
                mech: object = dpcore.RandomizedResponse(par)

                def profile(e: float) -> mpf:
                    return ref.rr_delta(e, par, k)

            elif kind == "rr-inf":  # randomized response whose loss is +inf with probability P_INF
                mech = _rr_with_infinity(par, P_INF)

                def profile(e: float) -> mpf:  # any infinite loss makes the sum infinite
                    finite = (1 - ref.mpf(P_INF)) ** k
                    return 1 - finite + finite * ref.rr_delta(e, par, k)

            else:
                mech = dpcore.GaussianMechanism(par)
                with ref.mp.workdps(50):
                    m_sens = ref.mp.sqrt(k)

                def profile(e: float) -> mpf:
                    return ref.gaussian_delta(e, par, m_sens)

            acc = dpcore.PldAccountant(relative_width=1e-2).compose(_WithoutQ(mech), k)  # type: ignore[arg-type]
            br = ex.call(PARAMS, lambda: acc.epsilon_bracket_details(delta))
            if br.hoeffding_t <= 0.0:
                ex.fail(f"not the mean-matched bracket (hoeffding_t = {br.hoeffding_t!r}, method {br.method!r})")
                return
            ex.at_most("true delta at the fallback bracket's upper end", profile(br.upper), delta)
            if br.lower > 0.0:
                ex.at_least("true delta at the fallback bracket's lower end", profile(br.lower), delta)
            dlo, dhi = ex.call(PARAMS, lambda: acc.delta_bracket(eps, value_discretization=1e-3))
            truth = profile(eps)
            ex.lower("fallback delta_bracket lower", dlo, truth)
            ex.upper("fallback delta_bracket upper", dhi, truth)

    run()
    report(family, sink)
