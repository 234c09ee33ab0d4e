"""dpcore.laplace_composition: the exact Laplace composition against answers computed outside it.

References: a 40-digit mpmath evaluation of the profile from a different
decomposition (the number of uniform parts j and of + atoms, each term an
Irwin--Hall density integrated by mpmath.quad); the closed form of one release;
the PLD accountant's grid bracket (``closed_form=False``), certified by a
different argument (connect-the-dots and its optimistic twin).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from _hypothesis_helpers import FAST, answer_or_value_error, any_value
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

import dpcore
from dpcore import laplace_composition as lc


def _mp_delta(eps: float, e0: float, k: int) -> mp.mpf:
    r"""delta(eps) of k Laplace releases: pi = (1-p) (atoms at +-e0) + p U(-e0, e0), p = e0 / (2 + e0).

    delta = Z^k e^{-k e0/2} E[(e^{S/2} - e^{eps - S/2})_+], S ~ pi^{*k}, Z = 1 + e0/2; S is a binomial
    number of atoms plus an Irwin--Hall sum of j uniforms, whose density is integrated by quadrature.
    """
    with mp.workdps(40):
        e0m, epsm = mp.mpf(e0), mp.mpf(eps)
        p = e0m / (2 + e0m)

        def g(s: mp.mpf) -> mp.mpf:
            return mp.exp(s / 2) - mp.exp(epsm - s / 2) if s > epsm else mp.mpf(0)

        def irwin_hall(j: int, y: mp.mpf) -> mp.mpf:  # density of the sum of j U(0, 1) at y
            terms = ((-1) ** i * mp.binomial(j, i) * (y - i) ** (j - 1) for i in range(int(mp.floor(y)) + 1))
            return sum(terms) / mp.factorial(j - 1)

        total = mp.mpf(0)
        for j in range(k + 1):
            wj = mp.binomial(k, j) * p**j * (1 - p) ** (k - j)
            for a in range(k - j + 1):
                shift = (2 * a - (k - j)) * e0m
                w = wj * mp.binomial(k - j, a) / mp.mpf(2) ** (k - j)
                if j == 0:
                    total += w * g(shift)
                    continue

                # S_j = 2 e0 Y - j e0, Y ~ Irwin-Hall(j); integrate over the unit pieces of Y, split at the kink
                def integrand(y: mp.mpf, j: int = j, shift: mp.mpf = shift) -> mp.mpf:
                    return g(shift + 2 * e0m * y - j * e0m) * irwin_hall(j, y)

                kink = (epsm - shift + j * e0m) / (2 * e0m)
                points = sorted({mp.mpf(i) for i in range(j + 1)} | ({kink} if 0 < kink < j else set()))
                total += w * mp.quad(integrand, points)
        return (1 + e0m / 2) ** k * mp.exp(-k * e0m / 2) * total


@pytest.mark.parametrize("e0, k", [(1.0, 2), (0.3, 3), (2.5, 4), (1.0, 5)])
def test_delta_bracket_contains_an_independent_40_digit_evaluation(e0, k):
    for eps in (0.0, 0.1 * k * e0, 0.37 * k * e0, 0.8 * k * e0):
        ref = _mp_delta(eps, e0, k)
        lo, hi = dpcore.laplace_composition_delta(eps, e0, k)
        assert lo <= float(ref) <= hi, (eps, lo, float(ref), hi)
        assert hi - lo <= 1e-11 * float(ref) + 1e-300
        # control: epsilon0 off by one part in a million moves the profile outside the bracket
        lo1, hi1 = dpcore.laplace_composition_delta(eps, e0 * (1 + 1e-6), k)
        assert hi < lo1 or hi1 < lo


def test_one_release_is_the_closed_form():
    mech = dpcore.LaplaceMechanism(scale=0.7)
    for eps in (0.0, 0.3, 1.0, 1.4):
        lo, hi = dpcore.laplace_composition_delta(eps, mech.pure_epsilon, 1)
        assert lo <= float(mech.delta(eps)) <= hi
    for delta in (1e-10, 1e-5, 0.2):
        lo, hi = dpcore.laplace_composition_epsilon(delta, mech.pure_epsilon, 1)
        assert lo <= mech.epsilon(delta) <= hi * (1 + 1e-15)


@pytest.mark.parametrize("e0, k", [(1.0, 10), (0.1, 100), (1.0, 100), (3.0, 40)])
def test_epsilon_bracket_lies_inside_the_grid_bracket(e0, k):
    lo, hi = dpcore.laplace_composition_epsilon(1e-5, e0, k)
    grid = dpcore.PldAccountant(closed_form=False, relative_width=1e-5).compose(dpcore.LaplaceMechanism(1.0 / e0), k)
    g_lo, g_hi = grid.epsilon_bracket(1e-5)
    assert g_lo <= lo <= hi <= g_hi
    assert hi - lo <= 1e-11 * hi  # the rounding alone: a million times narrower than that grid's bracket
    # control: one release fewer falls below the grid bracket
    assert dpcore.laplace_composition_epsilon(1e-5, e0, k - 1)[1] < g_lo


@pytest.mark.parametrize("e0, k, delta", [(1.0, 100, 1e-5), (0.1, 100, 1e-5), (2.0, 7, 0.3), (0.01, 128, 1e-10)])
def test_epsilon_and_delta_brackets_agree(e0, k, delta):
    lo, hi = dpcore.laplace_composition_epsilon(delta, e0, k)
    assert dpcore.laplace_composition_delta(hi, e0, k)[1] <= delta  # certified: the profile at upper <= delta
    assert dpcore.laplace_composition_delta(lo, e0, k)[0] > delta or lo == 0.0
    assert lo <= hi


def test_epsilon_is_zero_when_delta_is_reached_at_zero():
    d0 = dpcore.laplace_composition_delta(0.0, 1.0, 3)[1]
    assert dpcore.laplace_composition_epsilon(min(d0 * 1.01, 0.99), 1.0, 3) == (0.0, 0.0)


def test_the_bernstein_subdivision_matches_de_casteljau_in_mpmath():
    rng = np.random.default_rng(0)
    for d in (0, 1, 5, 40):
        b = rng.random(d + 1)
        for s in (0.0, 0.2, 0.5, 0.77, 0.999):
            got = lc._right_part(b, s)
            with mp.workdps(40):
                level = [mp.mpf(x) for x in b]
                want = [level[-1]]
                for _ in range(d):
                    level = [(1 - s) * level[i] + s * level[i + 1] for i in range(len(level) - 1)]
                    want.append(level[-1])
                want = want[::-1]
            assert np.allclose(got, [float(w) for w in want], rtol=1e-13, atol=0)


def test_scipy_hyp1f1_is_within_the_assumed_error_where_it_is_used():
    rng = np.random.default_rng(1)
    worst = 0.0
    for d in (0, 1, 9, 127, 1023):
        for c in (0.0, 1e-9, *rng.uniform(0, lc.MAX_EPSILON0, 6)):
            for i in sorted({0, d // 4, d // 2, d}):
                ref = mp.hyp1f1(i + 1, d + 2, mp.mpf(c))
                worst = max(worst, float(abs(mp.mpf(float(special.hyp1f1(i + 1.0, d + 2.0, c))) - ref) / ref))
    assert worst <= lc.HYP1F1_RELATIVE_ERROR / 10  # measured about 2.5e-15


def test_the_accountant_composes_laplace_exactly_up_to_its_limit():
    delta = 1e-5
    a = dpcore.PldAccountant().compose(dpcore.LaplaceMechanism(1.0), 60).compose(dpcore.LaplaceMechanism(2.0, 2.0), 40)
    br = a.epsilon_bracket_details(delta)
    assert br.method == "exact-laplace"
    assert (br.lower, br.upper) == dpcore.laplace_composition_epsilon(delta, 1.0, 100)
    assert a.epsilon(delta) == br.upper
    assert a.delta_bracket(70.0) == dpcore.laplace_composition_delta(70.0, 1.0, 100)
    grid = dpcore.PldAccountant(closed_form=False).compose(dpcore.LaplaceMechanism(1.0), 100).delta_bracket(70.0)
    assert grid[0] <= a.delta_bracket(70.0)[0] <= a.delta_bracket(70.0)[1] <= grid[1]
    # at the work limit: 149 releases at epsilon0 = 1 are exact, 150 are not (J = 115 and 116)
    assert dpcore.PldAccountant().compose(dpcore.LaplaceMechanism(1.0), 149).epsilon_bracket_details(0.1).method == (
        "exact-laplace"
    )
    # other compositions stay on the grid: beyond the limit, two pure epsilons, a Gaussian beside, closed_form off
    for acc in (
        dpcore.PldAccountant().compose(dpcore.LaplaceMechanism(1.0), 150),  # 150 J^2 > LAPLACE_EXACT_MAX_WORK
        dpcore.PldAccountant().compose(dpcore.LaplaceMechanism(1.0), 5).compose(dpcore.LaplaceMechanism(2.0), 5),
        dpcore.PldAccountant().compose(dpcore.LaplaceMechanism(1.0), 5).compose(dpcore.GaussianMechanism(3.0)),
        dpcore.PldAccountant(closed_form=False).compose(dpcore.LaplaceMechanism(1.0), 5),
    ):
        assert acc.epsilon_bracket_details(delta).method == "pld"


@pytest.mark.parametrize(
    "args, match",
    [
        ((1e-5, 0.0, 3), "epsilon0"),
        ((1e-5, math.nan, 3), "epsilon0"),
        ((1e-5, 51.0, 3), "epsilon0 must be <= 50"),
        ((1e-5, 1.0, 0), "count"),
        ((1e-5, 1.0, 1025), "count"),
        ((1e-5, 1.0, 2.5), "count"),
        ((1e-5, 40.0, 200), "count \\* log"),
        ((0.0, 1.0, 3), "delta"),
        ((1.0, 1.0, 3), "delta"),
    ],
)
def test_epsilon_refuses_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        dpcore.laplace_composition_epsilon(*args)


@pytest.mark.parametrize("eps", [-0.1, math.nan, math.inf, True, "1", None, 10**400])
def test_delta_refuses_a_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        dpcore.laplace_composition_delta(eps, 1.0, 3)


@pytest.mark.filterwarnings("error")
def test_answers_beyond_the_double_range_of_e_to_the_epsilon_are_computed_without_overflow():
    # epsilon about 656 and 7350: e^eps overflows, Q(L > eps) underflows, their product does neither
    lo, hi = dpcore.laplace_composition_epsilon(0.1, 10.0, 71)
    g_lo, g_hi = dpcore.PldAccountant(closed_form=False).compose(dpcore.LaplaceMechanism(0.1), 71).epsilon_bracket(0.1)
    assert g_lo <= lo <= hi <= g_hi and hi - lo <= 1e-11 * hi
    lo, hi = dpcore.laplace_composition_epsilon(0.5, 50.0, 150)
    assert 7000 < lo <= hi < 7500 and hi - lo <= 1e-11 * hi  # mean of the loss: 150 (50 - 1 + e^-50)


# --------------------------------------------------------------------------- properties (hypothesis)

ANY = any_value(int_bound=10**400, text_size=5, complex_magnitude=10)


@FAST
@given(delta=ANY, e0=ANY, k=ANY)
def test_any_input_gives_an_ordered_bracket_or_a_value_error(delta, e0, k):
    br = answer_or_value_error(lambda: dpcore.laplace_composition_epsilon(delta, e0, k), warnings_are_errors=True)
    if br is not None:
        lo, hi = br
        assert 0.0 <= lo <= hi <= k * e0 and math.isfinite(hi)


@settings(max_examples=40, deadline=None)
@given(
    delta=st.floats(min_value=1e-12, max_value=0.99),
    e0=st.floats(min_value=1e-4, max_value=lc.MAX_EPSILON0),
    k=st.integers(min_value=1, max_value=200),
)
def test_the_epsilon_bracket_is_certified_by_the_delta_bracket(delta, e0, k):
    br = answer_or_value_error(lambda: dpcore.laplace_composition_epsilon(delta, e0, k), warnings_are_errors=True)
    if br is None:  # only the tilt's range may refuse these
        assert k * math.log1p(e0 / 2) > lc.MAX_LOG_TILT
        return
    lo, hi = br
    assert dpcore.laplace_composition_delta(hi, e0, k)[1] <= delta
    assert lo == 0.0 or dpcore.laplace_composition_delta(lo, e0, k)[0] > delta
    assert hi - lo <= 1e-9 * max(hi, 0.1)  # relative, and absolute below epsilon 0.1 (as the accountant)


def test_the_pure_bound_is_rounded_up() -> None:
    """Issue 28 (oracle): k * epsilon0 rounded down (3 x 5.9e-217) is a point where delta is still positive, so an
    upper end capped there did not deliver delta 1e-289; the cap is now the smallest double >= k epsilon0."""
    from fractions import Fraction

    e0, k = 5.855862069002934e-217, 3
    lo, hi = dpcore.laplace_composition_epsilon(1.0892646411546312e-289, e0, k)
    assert lo == 0.0 and Fraction(hi) >= k * Fraction(e0)


@pytest.mark.parametrize(
    ("delta", "e0"), [(5.114619722834587e-87, 0.2019741930152825), (2.116642126599655e-164, 1.5477814920507809)]
)
def test_upper_end_is_the_pure_bound_when_the_steps_run_out_uncertified(delta, e0):
    """Every double below k e0 has a true delta of at least P(top atom) (k e0 - x) >= 2^-3 2^-55 (an atom of
    mass 1/8 at k e0), far above these targets: the upper end must be k e0 rounded up. It was the double just
    below, "certified" by sums that placed the atom k e0, rounded down to a double, at or below eps (true
    delta 3.5e-18 for a target of 5e-87: found by the oracle's run at 10^4 examples)."""
    from fractions import Fraction

    lo, hi = dpcore.laplace_composition_epsilon(delta, e0, 3)
    assert 0.0 <= lo <= hi and Fraction(hi) >= 3 * Fraction(e0) > Fraction(math.nextafter(hi, 0.0))


@pytest.mark.parametrize(
    ("delta", "e0", "k"),
    [(0.049999999999999996, 0.10016447058501778, 2), (0.9999965292008868, 9.772372209558107, 4)],
)
def test_a_lower_end_next_to_zero_is_found_not_dropped_to_zero(delta: float, e0: float, k: int) -> None:
    """Found by the oracle at 10^4 examples: steps of a few ulps of epsilon that left delta - error exactly at
    the target stalled the downward search until its steps ran out, and the lower end fell to 0 although the
    profile at 0 is certifiably above delta. The lower end must be a point where the 40-digit profile exceeds
    delta, within the documented gap (twice the certified error over the slope) of the upper end."""
    lo, hi = dpcore.laplace_composition_epsilon(delta, e0, k)
    assert 0.0 < lo <= hi
    assert _mp_delta(lo, e0, k) > delta and _mp_delta(hi, e0, k) <= delta
    assert hi - lo <= 1e-7 * hi
