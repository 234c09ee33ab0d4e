"""Oracle: the composed calibration (:func:`dpcore.calibrate_noise`) and epsilon over a run
(:func:`dpcore.epsilon_over_run`) against exact references.

* ``calibrate_noise``: at the returned ``noise`` the *true* delta at the target epsilon is at most the target
  delta (the noise is enough), and at ``noise_below`` it is above it (less noise is not), with
  ``noise_below >= noise (1 - rtol)``. References: ``k`` Gaussian releases are one with sensitivity
  ``sqrt(k) D`` (closed form, mpmath); one subsampled-Gaussian step (closed-form normal tails); up to three
  Laplace releases (the mpmath mixture).
* ``epsilon_over_run``: at each checkpoint ``k`` the true delta at the reported epsilon is at most delta, at the
  lower end at least delta (the true epsilon lies in the bracket), the width as documented (the accountant's
  ``relative_width * max(lower, 0.1)``). References: ``k`` randomized responses (exact binomial sums),
  ``k`` Gaussian releases, and one subsampled-Gaussian step (closed-form normal tails) as the first
  checkpoint of a longer run: randomized response and the subsampled Gaussian take the shared-grid path
  (one discretisation composed at every checkpoint), the second with a continuous loss.
"""

from __future__ import annotations

import math
from fractions import Fraction

import references as ref
from _harness import oracle_settings, report, spread
from _record import example
from hypothesis import given
from hypothesis import strategies as st
from mpmath import mp, mpf

import dpcore

CAL_PARAMS = ("epsilon", "delta", "count", "sensitivity", "sampling_rate", "rtol")
DELTA = spread(1e-10, 0.5, core=(1e-8, 1e-2), corners=(1e-5,))


def _sqrt_k(k: int, sensitivity: float) -> mpf:
    with mp.workdps(60):
        return mp.sqrt(k) * mpf(sensitivity)


def test_calibrate_noise_gaussian() -> None:
    """k Gaussian releases: the sigma is enough, noise_below is not, by the closed form at sqrt(k) D."""
    sink: list[str] = []
    family = "calibrate_noise (Gaussian x k)"
    domain = "epsilon in [1e-3, 50]; delta in [1e-10, 0.5]; count 1..1e9; sensitivity in [1e-3, 1e3]; rtol 1e-3"

    @oracle_settings()
    @given(spread(1e-3, 50.0, core=(0.1, 10.0)), DELTA, st.integers(1, 10**9), spread(1e-3, 1e3, corners=(1.0,)))
    def run(eps: float, delta: float, k: int, sens: float) -> None:
        inputs = f"epsilon={eps!r}, delta={delta!r}, count={k}, sensitivity={sens!r}"
        with example(family, domain, inputs, sink) as ex:
            cal = ex.call(
                CAL_PARAMS,
                lambda: dpcore.calibrate_noise("gaussian", epsilon=eps, delta=delta, count=k, sensitivity=sens),
            )
            d = _sqrt_k(k, sens)
            ex.at_most("true delta at the calibrated sigma", ref.gaussian_delta(eps, cal.noise, d), delta)
            ex.at_least("true delta at noise_below", ref.gaussian_delta(eps, cal.noise_below, d), delta)
            if not cal.noise_below >= cal.noise * (1 - cal.rtol) * (1 - 1e-15):
                ex.fail(f"noise_below {cal.noise_below!r} is below noise * (1 - rtol) = {cal.noise * (1 - cal.rtol)!r}")

    run()
    report(family, sink)


def test_calibrate_noise_subsampled_and_laplace() -> None:
    """One subsampled-Gaussian step (closed-form tails) and up to 3 Laplace releases (the mpmath mixture)."""
    sink: list[str] = []
    family = "calibrate_noise (subsampled Gaussian x 1, Laplace x k <= 3)"
    domain = (
        "epsilon in [0.01, 10]; delta in [1e-10, 0.5]; subsampled q in [1e-3, 1]; Laplace count 1..3; "
        "sensitivity 1; rtol 1e-3"
    )

    @oracle_settings(0.5)
    @given(
        st.booleans(), spread(0.01, 10.0, core=(0.1, 5.0)), DELTA, spread(1e-3, 1.0, corners=(0.01,)), st.integers(1, 3)
    )
    def run(subsampled: bool, eps: float, delta: float, q: float, k: int) -> None:
        inputs = f"subsampled={subsampled}, epsilon={eps!r}, delta={delta!r}, sampling_rate={q!r}, count={k}"
        with example(family, domain, inputs, sink) as ex:
            if subsampled:
                cal = ex.call(
                    CAL_PARAMS,
                    lambda: dpcore.calibrate_noise(
                        "subsampled-gaussian", epsilon=eps, delta=delta, count=1, sampling_rate=q
                    ),
                )
                ex.at_most("true delta at the calibrated sigma", ref.sg_delta(eps, cal.noise, q), delta)
                ex.at_least("true delta at noise_below", ref.sg_delta(eps, cal.noise_below, q), delta)
            else:
                cal = ex.call(CAL_PARAMS, lambda: dpcore.calibrate_noise("laplace", epsilon=eps, delta=delta, count=k))
                # the mechanism's pure epsilon is 1 / scale, exactly (the scale is a double)
                at = ref.laplace_k_delta(eps, 1 / Fraction(cal.noise), k)
                below = ref.laplace_k_delta(eps, 1 / Fraction(cal.noise_below), k)
                ex.at_most("true delta at the calibrated scale", at, delta)
                ex.at_least("true delta at noise_below", below, delta)
            if not cal.noise_below >= cal.noise * (1 - cal.rtol) * (1 - 1e-15):
                ex.fail(f"noise_below {cal.noise_below!r} is below noise * (1 - rtol) = {cal.noise * (1 - cal.rtol)!r}")

    run()
    report(family, sink)


@st.composite
def _checkpoints(draw: st.DrawFn, top: int) -> list[int]:
    return draw(st.lists(st.integers(1, top), min_size=1, max_size=16))  # over 12: the waves of guesses


def test_epsilon_over_run() -> None:
    """Checkpoints of k randomized responses (binomial sums), k Gaussian releases (closed form), and a
    subsampled-Gaussian run whose first checkpoint is one step (closed-form tails)."""
    sink: list[str] = []
    family = "epsilon_over_run (randomized response, Gaussian, subsampled Gaussian at step 1)"
    domain = (
        "randomized response epsilon0 in [0.01, 2], checkpoints 1..min(300, 60/epsilon0); Gaussian sigma in "
        "[0.5, 20], checkpoints 1..min(1000, 40 sigma^2) (up to 16 of them); subsampled Gaussian sigma in [0.5, 20], "
        "q in [1e-4, 1], checkpoints 1 and up to 16 in 2..1000 (step 1 checked); delta in [1e-10, 0.5]; "
        "relative_width 1e-3"
    )

    @st.composite
    def setting(draw: st.DrawFn) -> tuple[str, tuple[float, float], list[int]]:
        kind = draw(st.sampled_from(("rr", "gaussian", "sgd")))
        if kind == "rr":
            e0 = draw(spread(0.01, 2.0, corners=(1.0,)))
            return "rr", (e0, 0.0), draw(_checkpoints(max(1, min(300, int(60 / e0)))))
        sigma = draw(spread(0.5, 20.0, corners=(1.0,)))
        if kind == "gaussian":
            return "gaussian", (sigma, 0.0), draw(_checkpoints(max(1, min(1000, int(40 * sigma * sigma)))))
        q = draw(spread(1e-4, 1.0, corners=(0.01,)))
        return "sgd", (sigma, q), [1, *draw(st.lists(st.integers(2, 1000), min_size=1, max_size=16))]

    @oracle_settings(0.5)
    @given(setting(), DELTA)
    def run(s: tuple[str, tuple[float, float], list[int]], delta: float) -> None:
        kind, (p, q), steps = s
        inputs = f"{kind} {p!r}{f', q={q!r}' if q else ''}, steps={steps}, delta={delta!r}"
        with example(family, domain, inputs, sink) as ex:
            mech: dpcore.Mechanism = (
                dpcore.RandomizedResponse(p)
                if kind == "rr"
                else dpcore.GaussianMechanism(p)
                if kind == "gaussian"
                else dpcore.SubsampledGaussianMechanism(p, q)
            )
            run_ = ex.call(("steps", "delta", "relative_width"), lambda: dpcore.epsilon_over_run(mech, steps, delta))
            for k, hi, lo in zip(steps, run_.epsilon.tolist(), run_.epsilon_lower.tolist(), strict=True):

                def profile(e: float, k: int = k) -> mpf:
                    if kind == "sgd":
                        return ref.sg_delta(e, p, q)  # only checkpoint 1 is compared
                    return ref.rr_delta(e, p, k) if kind == "rr" else ref.gaussian_delta(e, p, _sqrt_k(k, 1.0))

                if not (math.isfinite(hi) and 0.0 <= lo <= hi):
                    ex.fail(f"checkpoint {k}: bracket ({lo!r}, {hi!r}) is not an ordered finite bracket")
                    continue
                if kind == "sgd" and k != 1:
                    ex.width(f"checkpoint {k}", lo, hi, 1e-3 * max(lo, dpcore.pld.EPSILON_FLOOR))
                    continue
                ex.at_most(f"true delta at checkpoint {k}'s epsilon", profile(hi), delta)
                if lo > 0.0:
                    ex.at_least(f"true delta at checkpoint {k}'s lower end", profile(lo), delta)
                ex.width(f"checkpoint {k}", lo, hi, 1e-3 * max(lo, dpcore.pld.EPSILON_FLOOR))

    run()
    report(family, sink)
