"""dpcore.pld: the mean-matched bracket (the fallback of issue 28) contains answers computed outside dpcore.

The accountant uses the mean-matched bracket (module docstring, "Certified bracket": Hoeffding's
t = h sqrt(K log(2/eta_H)/2), eta = eta_H + K tau + tau_F) only where connect-the-dots and its
optimistic twin cannot be built: a loss without its law under Q (``q_cdf is None``), or with atoms off
the grid, or with mass at +infinity. No dpcore mechanism reaches it, so the losses here are built by
hand: Gaussian laws N(mu, 2 mu) and randomised-response laws (atoms at +-eps0) with their own
distribution functions and partial means, and no ``q_cdf``, ``gaussian_mean`` or ``lattice`` (so neither
the closed form nor a step that puts the atoms on the grid is used); a two-atom law with its law under
Q whose atoms share no spacing (at the counts tested the twin fails on it); and randomised response
with a mass at +infinity (the twin is never built for it).

References, sharing no code with dpcore, in 40-digit mpmath: k Gaussian losses N(mu, 2 mu) sum to
N(M, 2M), M = k mu, whose profile is
delta(eps) = Phi(-eps/sqrt(2M) + sqrt(M/2)) - e^eps Phi(-eps/sqrt(2M) - sqrt(M/2)), inverted by
bisection; a composed two-atom law has the atoms j a + (k - j) b with binomial weights, and its profile
is, between consecutive atoms, P(inf) + A - e^eps B (A, B the sums of w and w e^-L over the atoms above),
inverted in closed form on the right piece.

The cases are chosen so that each of three faults of the fallback fails a test: the truncated (and
infinite) tail mass left out of eta (randomised response with a mass at +infinity), Hoeffding's t
without the number K of composed losses (randomised response at K = 500 to 1000, atoms off the grid:
the rounding errors add up like sqrt(K) h), and the bracket's ends swapped (every epsilon case). A last
test is the fault these references found: the inverse FFT's rounding noise clipped at 0 had put delta
1.3e-12 high over 19 million cells (fixed in issue 28: the noise is summed unclipped).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import mpmath as mp
import numpy as np
import pytest
from scipy import special

from dpcore import PldAccountant, PldBracket, PrivacyLoss
from dpcore.pld import EPSILON_FLOOR, MIN_DELTA, atomic_privacy_loss

_DPS = 40

# --------------------------------------------------------------------------- losses that reach the fallback


class _Losses:
    """A mechanism given by its losses alone (``HasPrivacyLoss``): not a dpcore ``Mechanism``, no ``rdp``."""

    def __init__(self, *losses: PrivacyLoss) -> None:
        self.losses = losses

    def privacy_losses(self) -> tuple[PrivacyLoss, ...]:
        return self.losses


def _gaussian_law(mu: float) -> PrivacyLoss:
    """L ~ N(mu, 2 mu) under P, without its law under Q and without ``gaussian_mean`` (so discretised)."""
    sd = math.sqrt(2.0 * mu)

    def cdf(x: np.ndarray) -> np.ndarray:
        return np.asarray(special.ndtr((np.asarray(x, dtype=float) - mu) / sd))

    def sf(x: np.ndarray) -> np.ndarray:
        return np.asarray(special.ndtr((mu - np.asarray(x, dtype=float)) / sd))

    def partial_mean(a: float, b: float) -> float:  # E[L; a < L <= b] = mu (Phi(zb) - Phi(za)) - sd (phi(zb) - phi(za))
        za, zb = (a - mu) / sd, (b - mu) / sd
        dens = (math.exp(-zb * zb / 2) - math.exp(-za * za / 2)) / math.sqrt(2 * math.pi)
        return mu * float(special.ndtr(zb) - special.ndtr(za)) - sd * dens

    return PrivacyLoss(cdf, sf, partial_mean, -math.inf, math.inf, 0.0, f"N({mu}, {2 * mu}) without Q")


def _atomic_law(values: Sequence[float], masses: Sequence[float], infinity_mass: float = 0.0) -> PrivacyLoss:
    """Finitely many atoms (and ``infinity_mass`` at +inf) under P; no law under Q, no lattice."""
    v = np.asarray(values, dtype=float)
    m = np.asarray(masses, dtype=float)
    order = np.argsort(v)
    v, m = v[order], m[order]

    def cdf(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.asarray(np.sum(m * (v <= x[..., None]), axis=-1))

    def sf(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.asarray(np.sum(m * (v > x[..., None]), axis=-1))

    def partial_mean(a: float, b: float) -> float:
        inside = (v > a) & (v <= b)
        return float(np.sum(v[inside] * m[inside]))

    return PrivacyLoss(cdf, sf, partial_mean, float(v[0]), float(v[-1]), infinity_mass, "atoms without Q")


def _rr_law(eps0: float, infinity_mass: float = 0.0) -> PrivacyLoss:
    """Randomised response's loss: +eps0 with P-mass e^eps0/(1+e^eps0), -eps0 with the rest (scaled by 1 - inf)."""
    p = math.exp(eps0) / (1.0 + math.exp(eps0))
    return _atomic_law([eps0, -eps0], [(1 - infinity_mass) * p, (1 - infinity_mass) * (1 - p)], infinity_mass)


# --------------------------------------------------------------------------- references (mpmath, no dpcore)


def _gauss_delta(m_total: float, eps: mp.mpf, with_factor: bool = True) -> mp.mpf:
    """Profile of N(M, 2M) against N(-M, 2M); ``with_factor=False`` drops e^eps (a wrong reference)."""
    with mp.workdps(_DPS):
        m_total, eps = mp.mpf(m_total), mp.mpf(eps)
        a, b = -eps / mp.sqrt(2 * m_total), mp.sqrt(m_total / 2)
        return mp.ncdf(a + b) - (mp.exp(eps) if with_factor else 1) * mp.ncdf(a - b)


def _gauss_epsilon(m_total: float, delta: float, with_factor: bool = True) -> float:
    """Smallest eps >= 0 with delta(eps) <= delta, by 200 bisections at 40 digits."""
    with mp.workdps(_DPS):
        lo, hi = mp.mpf(0), mp.mpf(m_total) + 20 * mp.sqrt(2 * m_total) + 50
        if _gauss_delta(m_total, lo, with_factor) <= delta:
            return 0.0
        for _ in range(200):
            mid = (lo + hi) / 2
            if _gauss_delta(m_total, mid, with_factor) <= delta:
                hi = mid
            else:
                lo = mid
        return float(hi)


def _two_atoms_composed(a: float, pa: float, b: float, k: int) -> tuple[list[mp.mpf], list[mp.mpf]]:
    """Atoms (ascending) and weights of the sum of k losses that are ``a`` w.p. ``pa`` and ``b`` (< a) else."""
    with mp.workdps(_DPS):
        a_, b_, p_ = mp.mpf(a), mp.mpf(b), mp.mpf(pa)
        atoms = [j * a_ + (k - j) * b_ for j in range(k + 1)]
        weights = [mp.binomial(k, j) * p_**j * (1 - p_) ** (k - j) for j in range(k + 1)]
        return atoms, weights


def _atoms_delta(
    atoms: list[mp.mpf], weights: list[mp.mpf], eps: float, at_inf: mp.mpf = 0, tail_only: bool = False
) -> mp.mpf:
    """``at_inf + sum_j w_j (1 - e^(eps - L_j))_+``; ``tail_only``: ``sum w_j [L_j > eps]`` (a wrong reference)."""
    with mp.workdps(_DPS):
        e = mp.mpf(eps)
        s = mp.mpf(at_inf)
        for v, w in zip(atoms, weights, strict=True):
            if v > e:
                s += w if tail_only else w * (1 - mp.exp(e - v))
        return s


def _atoms_epsilon(atoms: list[mp.mpf], weights: list[mp.mpf], delta: float, at_inf: mp.mpf = 0) -> float:
    """Smallest eps >= 0 with ``_atoms_delta(eps) <= delta``: on the piece below atom i the profile is
    ``at_inf + A_i - e^eps B_i`` (sums over the atoms from i up), solved exactly on the piece holding delta."""
    with mp.workdps(_DPS):
        target = mp.mpf(delta)
        assert target > at_inf  # else the true epsilon is infinite
        big_a, big_b = mp.mpf(0), mp.mpf(0)
        for i in range(len(atoms) - 1, -1, -1):
            big_a += weights[i]
            big_b += weights[i] * mp.exp(-atoms[i])
            below = atoms[i - 1] if i > 0 else -mp.inf
            if i == 0 or at_inf + big_a - mp.exp(below) * big_b >= target:
                return float(max(mp.log((at_inf + big_a - target) / big_b), 0))
        raise AssertionError("unreachable")


def _rr_reference(eps0: float, k: int, infinity_mass: float = 0.0) -> tuple[list[mp.mpf], list[mp.mpf], mp.mpf]:
    """The composed atoms and weights of ``_rr_law(eps0, infinity_mass)`` (finite part) and P(some loss is inf)."""
    p = mp.exp(mp.mpf(eps0)) / (1 + mp.exp(mp.mpf(eps0)))
    atoms, weights = _two_atoms_composed(eps0, p, -eps0, k)
    with mp.workdps(_DPS):
        finite = (1 - mp.mpf(infinity_mass)) ** k
        return atoms, [w * finite for w in weights], 1 - finite


# --------------------------------------------------------------------------- checks shared by the cases


def _fallback_bracket(acc: PldAccountant, delta: float) -> PldBracket:
    """The accountant's bracket, checked to come from the mean-matched path (a Hoeffding term, no twin)."""
    br = acc.epsilon_bracket_details(delta)
    assert br.method == "pld" and br.hoeffding_t > 0.0 and br.eta > 0.0  # the twin path reports t = 0
    return br


def _assert_contains(br: PldBracket, truth: float, relative_width: float) -> None:
    assert br.lower <= truth <= br.upper, (br.lower, truth, br.upper)
    # the documented width: relative_width times the lower end (times EPSILON_FLOOR below it)
    assert br.upper - br.lower <= relative_width * max(br.lower, EPSILON_FLOOR)


# --------------------------------------------------------------------------- Gaussian laws without Q


@pytest.mark.parametrize(
    "mu, k, delta", [(0.5, 1, 1e-5), (0.01, 100, 1e-6), (0.05, 50, MIN_DELTA), (0.002, 1000, MIN_DELTA), (2.0, 3, 1e-3)]
)
def test_gaussian_law_without_q_is_bracketed_by_the_mean_matched_path(mu, k, delta):
    acc = PldAccountant().compose(_Losses(_gaussian_law(mu)), k)
    assert not acc._has_dots()  # no law under Q: neither connect-the-dots nor the twin
    br = _fallback_bracket(acc, delta)
    assert br.connect_dots_step == 0.0 and acc.epsilon(delta) == br.upper
    _assert_contains(br, _gauss_epsilon(k * mu, delta), acc.relative_width)


def test_gaussian_negative_control_without_the_exponential_factor_is_rejected():
    # the profile written as Phi(a + b) - Phi(a - b) (e^eps dropped) is larger, so its epsilon is too large:
    # the same comparison rejects it (by far more than the bracket's width)
    mu, k, delta = 0.01, 100, 1e-6
    br = _fallback_bracket(PldAccountant().compose(_Losses(_gaussian_law(mu)), k), delta)
    wrong = _gauss_epsilon(k * mu, delta, with_factor=False)
    assert not br.lower <= wrong <= br.upper
    assert wrong - br.upper > 100 * (br.upper - br.lower)


# --------------------------------------------------------------------------- randomised response without Q

# (eps0, k, delta, relative_width): atoms off every step the accountant picks (no lattice is declared);
# the large counts at relative_width 1e-2 keep the FFT short (about 1e6 points)
_RR_CASES = [
    (0.3, 50, MIN_DELTA, 1e-3),
    (0.5, 100, 1e-7, 1e-3),
    (1.3, 20, 1e-6, 1e-3),
    (0.1, 1000, 1e-5, 1e-2),
    (0.05, 1000, 1e-6, 1e-2),
    (0.2, 500, 1e-8, 1e-2),
]


@pytest.mark.parametrize("eps0, k, delta, relative_width", _RR_CASES)
def test_randomized_response_without_q_is_bracketed_by_the_mean_matched_path(eps0, k, delta, relative_width):
    acc = PldAccountant(relative_width=relative_width).compose(_Losses(_rr_law(eps0)), k)
    assert not acc._has_dots()
    br = _fallback_bracket(acc, delta)
    atoms, weights, _ = _rr_reference(eps0, k)
    _assert_contains(br, _atoms_epsilon(atoms, weights, delta), relative_width)


def test_randomized_response_negative_control_tail_probability_is_rejected():
    # P(L > eps) in place of E[(1 - e^(eps - L))_+] (a common slip) gives a larger epsilon: rejected
    eps0, k, delta = 0.5, 100, 1e-7
    br = _fallback_bracket(PldAccountant().compose(_Losses(_rr_law(eps0)), k), delta)
    atoms, weights, _ = _rr_reference(eps0, k)
    # the wrong profile is a step function: its epsilon is the highest atom with more than delta at or above it
    wrong = max(float(v) for v in atoms if _atoms_delta(atoms, weights, float(v) - 1e-9, tail_only=True) > delta)
    assert _atoms_delta(atoms, weights, wrong, tail_only=True) <= delta
    assert not br.lower <= wrong <= br.upper and wrong - br.upper > 0.1


# --------------------------------------------------------------------------- atoms off the grid, with Q


@pytest.mark.parametrize("k, delta", [(10, 1e-3), (100, 1e-5)])
def test_two_atoms_without_a_common_spacing_fall_back_from_the_twin(k, delta):
    # P = (0.7, 0.3), Q = (0.2, 0.8) on two outcomes: losses log 3.5 and log(3/8), ratio not rational (no
    # lattice), so no step puts both on the grid; at these counts the optimistic twin is not built (it is at
    # some others, e.g. 30 releases at 1e-6); connect-the-dots still gives the upper end, the lower end is the
    # mean-matched one
    a, b = math.log(0.7 / 0.2), math.log(0.3 / 0.8)
    loss = atomic_privacy_loss([a, b], [0.7, 0.3])
    assert loss.lattice is None and loss.q_cdf is not None
    acc = PldAccountant().compose(_Losses(loss), k)
    assert acc._has_dots()
    br = _fallback_bracket(acc, delta)
    atoms, weights = _two_atoms_composed(a, 0.7, b, k)
    _assert_contains(br, _atoms_epsilon(atoms, weights, delta), acc.relative_width)


# --------------------------------------------------------------------------- mass at +infinity

# (eps0, k, delta, infinity mass of each release): k times the infinite mass is about 1 % of delta, enough to
# move epsilon by more than the bracket's width if eta leaves it out
_INFINITE_CASES = [(0.3, 100, 1e-6, 1e-10), (0.5, 20, 1e-5, 5e-9), (0.2, 300, 1e-8, 3e-13)]


@pytest.mark.parametrize("eps0, k, delta, infinity_mass", _INFINITE_CASES)
def test_mass_at_infinity_counts_in_eta(eps0, k, delta, infinity_mass):
    # the discretised law keeps the infinite mass at its last cell (a finite loss): only eta's tail term
    # (K tau, here at least K times the infinite mass) accounts for it
    acc = PldAccountant().compose(_Losses(_rr_law(eps0, infinity_mass)), k)
    br = _fallback_bracket(acc, delta)
    atoms, weights, at_inf = _rr_reference(eps0, k, infinity_mass)
    _assert_contains(br, _atoms_epsilon(atoms, weights, delta, at_inf), acc.relative_width)
    assert br.eta >= float(at_inf)


@pytest.mark.parametrize("eps0, k, delta, infinity_mass", [(0.3, 100, 1e-6, 2e-9), (0.2, 300, 1e-8, 1e-12)])
def test_mass_at_infinity_delta_bracket(eps0, k, delta, infinity_mass):
    # here k times the infinite mass is 20 to 30 % of delta (too much for the epsilon bracket's width)
    acc = PldAccountant().compose(_Losses(_rr_law(eps0, infinity_mass)), k)
    atoms, weights, at_inf = _rr_reference(eps0, k, infinity_mass)
    eps = _atoms_epsilon(atoms, weights, delta, at_inf)
    lower, upper = acc.delta_bracket(eps, value_discretization=1e-4)
    truth = float(_atoms_delta(atoms, weights, eps, at_inf))
    assert lower <= truth <= upper and upper < 2.0 * truth


# --------------------------------------------------------------------------- delta brackets


@pytest.mark.parametrize("eps0, k, eps", [(0.1, 1000, 5.0), (0.1, 1000, 12.0), (0.1, 1000, 17.8), (0.37, 60, 9.0)])
def test_randomized_response_without_q_delta_bracket(eps0, k, eps):
    # h = 3e-4 leaves +-eps0 a third of a cell off the grid: the rounding errors add up over the k releases
    acc = PldAccountant().compose(_Losses(_rr_law(eps0)), k)
    lower, upper = acc.delta_bracket(eps, value_discretization=3e-4)
    atoms, weights, _ = _rr_reference(eps0, k)
    truth = float(_atoms_delta(atoms, weights, eps))
    assert lower <= truth <= upper
    assert 0.0 < lower and upper < 2.0 * truth  # informative, not a trivial [0, 1]


@pytest.mark.parametrize("mu, k, eps", [(0.01, 100, 2.0), (0.01, 100, 7.0), (0.002, 1000, 14.2)])
def test_gaussian_without_q_delta_bracket(mu, k, eps):
    acc = PldAccountant().compose(_Losses(_gaussian_law(mu)), k)
    lower, upper = acc.delta_bracket(eps, value_discretization=1e-3)
    truth = float(_gauss_delta(k * mu, eps))
    assert lower <= truth <= upper
    assert 0.0 < lower and upper < 2.0 * truth


# --------------------------------------------------------------------------- a fault found by these references


def test_randomized_response_at_the_smallest_delta_and_many_releases():
    # on e5c9453 (noise clipped): bracket [24.41473, 24.41553], true epsilon 24.40670 (the exactly composed
    # discretised law gives 24.40659: the discretisation is within t, the miss was the profile's rounding)
    eps0, k, delta = 0.1, 1000, MIN_DELTA
    acc = PldAccountant().compose(_Losses(_rr_law(eps0)), k)
    br = _fallback_bracket(acc, delta)
    atoms, weights, _ = _rr_reference(eps0, k)
    _assert_contains(br, _atoms_epsilon(atoms, weights, delta), acc.relative_width)
