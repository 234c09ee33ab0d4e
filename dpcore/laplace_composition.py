r"""Exact composition of the Laplace mechanism: the privacy profile of ``count`` releases, up to rounding.

One release of the Laplace mechanism with :math:`\varepsilon_0 = \Delta/b` has the
privacy loss (under :math:`P`) with atoms :math:`P(L=\varepsilon_0) = 1/2`,
:math:`P(L=-\varepsilon_0) = e^{-\varepsilon_0}/2` and the density
:math:`\tfrac14 e^{(\ell-\varepsilon_0)/2}` on :math:`(-\varepsilon_0, \varepsilon_0)`
(:func:`dpcore.laplace_privacy_loss_law`). That law is an exponential tilt,
:math:`P(d\ell) = Z e^{(\ell-\varepsilon_0)/2}\,\pi(d\ell)` with
:math:`Z = 1 + \varepsilon_0/2`, of the *symmetric* probability

.. math:: \pi = \tfrac{1}{2Z}\big(\delta_{\varepsilon_0} + \delta_{-\varepsilon_0}\big)
          + \tfrac{1}{4Z}\,\mathrm{Leb}\big|_{(-\varepsilon_0, \varepsilon_0)} ,

and tilts multiply under convolution, so the sum of :math:`k` losses has
:math:`P_k(d\ell) = Z^k e^{(\ell-k\varepsilon_0)/2}\,\pi^{*k}(d\ell)` and
:math:`Q_k(d\ell) = e^{-\ell} P_k(d\ell)`. The profile
:math:`\delta(\varepsilon) = P_k(L>\varepsilon) - e^{\varepsilon} Q_k(L>\varepsilon)` needs only :math:`\pi^{*k}`:
atoms on the lattice :math:`(-k + 2m)\varepsilon_0` and, between consecutive
lattice points, a polynomial density of degree :math:`k-1`.

:math:`\pi` is a mixture, :math:`(1-p)A + pU` with :math:`A` the two atoms,
:math:`U` uniform on :math:`(-\varepsilon_0, \varepsilon_0)` and
:math:`p = \varepsilon_0/(2+\varepsilon_0)`, so :math:`\pi^{*k}` is a binomial mixture over the number
:math:`j` of uniform parts of :math:`U^{*j} * A^{*(k-j)}`. :func:`_convolution_power`
sums it by Horner's scheme in :math:`U`, with each polynomial piece in the
Bernstein basis of its cell: a convolution with :math:`U` is a window
integral :math:`\int_{x-\varepsilon_0}^{x+\varepsilon_0}`, which in that basis is the head and tail
*partial sums* of the coefficients of two adjacent cells. Every operation adds
or scales nonnegative numbers: there is no subtraction anywhere, so each
coefficient carries a relative rounding error of at most about
:math:`(J^2/2 + 16k)u` (:math:`u = 2^{-53}`), and no cancellation can make it larger.
Under :math:`P` the number of uniform parts is binomial with success
probability :math:`(1-e^{-\varepsilon_0})/2`; the terms beyond its
:math:`1 - 10^{-30}` quantile :math:`J` are dropped (:data:`TRUNCATION`, added to the
error bound), so the degree is at most :math:`J - 1` and the work about
:math:`kJ^2`. Cells that can no longer reach :math:`\varepsilon > 0` are dropped
exactly. The exponential weights are integrated exactly against each
Bernstein polynomial,
:math:`\int_0^1 B_{i,d}(t) e^{ct}\,dt = {}_1F_1(i+1; d+2; c)/(d+1)` (``scipy.special.hyp1f1``, with
arguments :math:`c \ge 0` only: a positive series), and a cell cut by
:math:`\varepsilon` is split by de Casteljau's algorithm (convex combinations).

The answer is a bracket: :math:`\hat\delta(\varepsilon) \pm \rho\,(\hat P + e^{\varepsilon}\hat Q) + \lambda`,
with :math:`\rho` the relative error bound above plus :data:`HYP1F1_RELATIVE_ERROR`
and :math:`\lambda` the dropped terms' mass plus a bound on what gradual
underflow can lose; the epsilon bracket is where these two ends cross
``delta``. Its width was between :math:`10^{-14}` and :math:`10^{-10}` relative
in the tests. The part under :math:`Q` is kept as :math:`e^{x}Q` on each cell
(the same order as :math:`P`), so answers beyond
:math:`e^{\varepsilon} \approx 10^{308}` neither overflow nor lose :math:`Q` to underflow.
It takes about 3 ms for :math:`k = 100` at :math:`\varepsilon_0 = 0.1` and 5 ms at
:math:`\varepsilon_0 = 1` (about 1.3 s for :math:`k = 1000` at :math:`\varepsilon_0 = 1`), so
:class:`dpcore.PldAccountant` uses it up to ``dpcore.pld.LAPLACE_EXACT_MAX_WORK``
and its grid beyond.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from ._lazy import lazy_module
from ._rounding import ceil_double
from ._validation import check_positive_finite, check_positive_int, check_probability_open, check_real

special = lazy_module("scipy.special")

__all__ = ["laplace_composition_delta", "laplace_composition_epsilon"]

#: Largest ``count`` answered (work about ``count * J**2``, see the module docstring: about 1.3 s for 1000 releases
#: at epsilon0 = 1 on one core; memory a few ``count * J`` doubles).
MAX_COUNT = 1024

#: Largest ``epsilon0`` answered; scipy's ``hyp1f1`` is checked against mpmath up to it (in the tests).
MAX_EPSILON0 = 50.0

#: Largest ``count * log(1 + epsilon0 / 2)``: the tilt's weights stay below e^600, far from overflow.
MAX_LOG_TILT = 600.0

#: Bound on the relative error of ``scipy.special.hyp1f1(a, b, c)`` for 0 < a < b <= MAX_COUNT + 1 and
#: 0 <= c <= MAX_EPSILON0 (measured against mpmath at 1e-15 or less; 100 times that is assumed).
HYP1F1_RELATIVE_ERROR = 1e-13

_U = 2.0**-53
_TINY = 2.0**-1074
_NORMAL = 2.0**-1022


def _check(epsilon0: float, count: int) -> tuple[float, int]:
    e0 = check_positive_finite("epsilon0", epsilon0)
    k = check_positive_int("count", count, maximum=MAX_COUNT)
    if e0 > MAX_EPSILON0:
        raise ValueError(f"epsilon0 must be <= {MAX_EPSILON0:g} for the exact composition; got {e0:g}")
    if e0 < _NORMAL:  # a subnormal epsilon0 has few significant bits: the atoms' arithmetic gave NaN (issue 28)
        raise ValueError(
            f"epsilon0 must be >= {_NORMAL:.17g} (the smallest normal double) for the exact composition; got {e0!r}"
        )
    if k * math.log1p(e0 / 2.0) > MAX_LOG_TILT:
        raise ValueError(
            f"count * log(1 + epsilon0/2) must be <= {MAX_LOG_TILT:g} (the tilt's weights would overflow); "
            f"got count={k}, epsilon0={e0:g}: use dpcore.PldAccountant"
        )
    return e0, k


#: The terms with more than J uniform parts are dropped, J the smallest with P(more than J) <= this (a
#: probability under P, added to the error bound: the profile is at most the P-mass of what is dropped).
TRUNCATION = 1e-30


@functools.lru_cache(maxsize=8)
def _uniform_parts(e0: float, k: int) -> tuple[int, float]:
    r"""``(J, dropped)``: the most uniform parts kept and the P-mass of the terms with more (module docstring).

    Under P each release's loss falls strictly between its atoms with probability
    :math:`(1 - e^{-\varepsilon_0})/2`, independently, so the number of uniform parts is binomial;
    ``J`` is the smallest with :math:`P(\text{more than } J) \le` :data:`TRUNCATION` (``scipy.special.bdtrc``).
    The work of the composition is about ``k * J**2`` multiply-adds. Cached: the accountant asks for it to
    route a query, then the composition needs it again.
    """
    tails = special.bdtrc(np.arange(k), k, -math.expm1(-e0) / 2.0)
    small = np.nonzero(tails <= TRUNCATION)[0]
    big_j = max(int(small[0]), 1) if small.size else k
    return big_j, (float(tails[big_j]) if big_j < k else 0.0)


def _convolution_power(e0: float, k: int) -> tuple[int, NDArray[np.float64], NDArray[np.float64], float, int]:
    r"""Atoms and Bernstein coefficients of :math:`\pi^{*k}` on :math:`[0, \infty)` (module docstring).

    :math:`\pi = (1-p)A + pU` with :math:`A` the two atoms, :math:`U` uniform on
    :math:`(-\varepsilon_0, \varepsilon_0)` and :math:`p = \varepsilon_0/(2+\varepsilon_0)`, so
    :math:`\pi^{*k} = \sum_j w_j\, U^{*j} * A^{*(k-j)}` with binomial weights :math:`w_j`, evaluated by
    Horner's scheme in :math:`U`: :math:`R_J = w_J A^{*(k-J)}`, :math:`R_j = w_j A^{*(k-j)} + U * R_{j+1}`,
    :math:`R_0 = \pi^{*k}` (up to the dropped terms :math:`j > J`). A convolution with :math:`U` is the
    window integral over :math:`[x-\varepsilon_0, x+\varepsilon_0]`: the tail and head partial sums of the
    Bernstein coefficients of two adjacent cells (one degree more), plus each atom spread over the cell
    centred on it. No degree elevation is needed, and the degree stops at ``J - 1``.

    Returns ``(lo, alpha, beta, dropped, J)``: ``alpha[i]`` the atom at :math:`(-k+2m)\varepsilon_0`,
    ``m = lo + i``, up to ``m = k``; ``beta[i]`` the Bernstein coefficients (degree ``J - 1``) of the
    density on the cell :math:`[(-k+2m)\varepsilon_0, (-k+2m+2)\varepsilon_0]`, ``m = lo + i`` up to
    ``k - 1``; ``dropped`` the P-mass of the terms ``j > J``. Cells below are dropped as soon as they can no
    longer reach :math:`(0, \infty)` (each convolution with :math:`U` moves mass by at most
    :math:`\varepsilon_0`); those kept are exact. Only sums and products of nonnegative numbers.
    """
    p = e0 / (2.0 + e0)  # pi's uniform share
    big_j, dropped = _uniform_parts(e0, k)
    # w_j = C(k, j) p^j (1-p)^(k-j) by cumulative products of positive ratios; (1-p)^k = Z^-k >= e^-600
    j = np.arange(big_j, dtype=np.float64)
    w = np.empty(big_j + 1)
    w[0] = math.exp(k * math.log1p(-p))
    np.cumprod((k - j) / (j + 1.0) * (p / (1.0 - p)), out=w[1:])
    w[1:] *= w[0]

    def pascal(n: int) -> NDArray[np.float64]:  # Binomial(n, 1/2) on its n + 1 atoms, C(n, a) < 2^1024
        a = np.arange(n, dtype=np.float64)
        row = np.empty(n + 1)
        row[0] = 1.0
        np.cumprod((n - a) / (a + 1.0), out=row[1:])
        return np.asarray(row * 2.0**-n, dtype=np.float64)

    inv = 1.0 / (2.0 * e0)  # U's density
    lo = 0
    atoms = w[big_j] * pascal(k - big_j)  # R_J: the atoms of stage J, at (-(k-J) + 2m) e0
    cells = np.zeros((0, 0))
    for stage in range(big_j - 1, -1, -1):  # R_{stage+1} -> R_stage: k - stage cells of degree J - 1 - stage
        # new cell m (at -(k-stage)+2m) reaches (0, inf) in `stage` more convolutions iff 2m + 2 + stage > k - stage
        new_lo = max(lo, (k - 2 * stage - 2) // 2)
        nn = k - stage - new_lo  # new cells new_lo .. k-stage-1, cell m centred on old atom m
        d1 = cells.shape[1]  # old number of coefficients (0 at the first stage)
        new = np.empty((nn, d1 + 1))
        new[:] = (atoms[new_lo - lo : new_lo - lo + nn] * (inv * max(d1, 1)))[:, None]
        if d1:
            head = np.empty((cells.shape[0], d1 + 1))  # head[r, i] = sum_{t<i} cells[r, t]
            head[:, 0] = 0.0
            np.cumsum(cells, axis=1, out=head[:, 1:])
            tail = np.empty((cells.shape[0], d1 + 1))  # tail[r, i] = sum_{t>=i} cells[r, t]
            tail[:, -1] = 0.0
            np.cumsum(cells[:, ::-1], axis=1, out=tail[:, -2::-1])
            # old cell m (row m - lo) up to t, and old cell m - 1 from t on
            new[: cells.shape[0] - (new_lo - lo)] += head[new_lo - lo :]
            first = new_lo - 1 - lo  # row of old cell new_lo - 1: -1 when it is not kept (empty)
            if first < 0:
                new[1:] += tail
            else:
                new += tail[first : first + nn]
            new *= 1.0 / d1
        cells = new
        lo = new_lo
        atoms = w[stage] * pascal(k - stage)[lo:]
    return lo, atoms, cells, dropped, big_j


def _tilt_integrals(d: int, c: float) -> NDArray[np.float64]:
    r""":math:`\int_0^1 B_{i,d}(t) e^{ct} dt`, ``i = 0..d``: :math:`{}_1F_1(i+1; d+2; c)/(d+1)`, with ``c >= 0`` only.

    For ``c < 0`` the reflection :math:`t \to 1-t` gives :math:`e^{c} \int_0^1 B_{d-i,d}(t) e^{-ct} dt`.
    """
    i = np.arange(d + 1, dtype=np.float64)
    if c >= 0.0:
        return np.asarray(special.hyp1f1(i + 1.0, d + 2.0, c), dtype=np.float64) / (d + 1)
    return math.exp(c) * np.asarray(special.hyp1f1(d + 1.0 - i, d + 2.0, -c), dtype=np.float64) / (d + 1)


def _right_part(b: NDArray[np.float64], s: float) -> NDArray[np.float64]:
    r"""Bernstein coefficients on ``[s, 1]`` (rescaled to ``[0, 1]``) of the polynomial with coefficients ``b``.

    De Casteljau's subdivision in closed form, :math:`\gamma_i = \sum_j B_{j, d-i}(s)\, b_{i+j}`, with
    the binomial weights built as cumulative products of positive factors: for :math:`s \le 1/2`,
    :math:`B_{j,n}(s) = (1-s)^n \binom{n}{j} q^j` with :math:`q = s/(1-s) \le 1`; else the mirror image
    in :math:`r = (1-s)/s`. No subtraction; the weights stay below :math:`2^{n}` (no overflow for
    :math:`n \le 1023`).
    """
    d = b.size - 1
    if d == 0:
        return b.copy()
    n = d - np.arange(d + 1, dtype=np.float64)  # degree of the sum for gamma_i
    small = s <= 0.5
    ratio = s / (1.0 - s) if small else (1.0 - s) / s
    ell = np.arange(1, d + 1, dtype=np.float64)
    weights = np.ones((d + 1, d + 1))  # [i, j] = C(n_i, j) ratio^j, 0 for j > n_i
    np.cumprod(np.maximum(n[:, None] - ell + 1.0, 0.0) / ell * ratio, axis=1, out=weights[:, 1:])
    if small:  # gamma_i = (1-s)^{n_i} sum_j C(n_i, j) q^j b_{i+j}
        window = np.lib.stride_tricks.sliding_window_view(np.concatenate((b, np.zeros(d))), d + 1)
        return np.asarray((1.0 - s) ** n * np.einsum("ij,ij->i", weights, window), dtype=np.float64)
    # gamma_i = s^{n_i} sum_{j'} C(n_i, j') r^{j'} b_{i + n_i - j'} and i + n_i = d
    return np.asarray(s**n * (weights @ b[::-1]), dtype=np.float64)


@dataclass(frozen=True)
class _Sums:
    """``P(L > eps)`` and ``e^eps Q(L > eps)`` as computed (``p``, ``eq``) at one ``eps``; both at most 1."""

    eps: float
    p: float
    eq: float

    @property
    def delta(self) -> float:
        return self.p - self.eq


class _ComposedLaplace:
    """The profile of ``count`` Laplace releases of pure epsilon ``e0``, with its rounding bound."""

    def __init__(self, e0: float, k: int) -> None:
        self.e0, self.k = e0, k
        lo, alpha, self.beta, dropped, big_j = _convolution_power(e0, k)
        self.lo = lo
        self.log_tilt = k * math.log1p(e0 / 2.0) - k * e0 / 2.0  # log of Z^k e^{-k e0/2}
        self.x = (2.0 * np.arange(lo, k + 1) - k) * e0  # the lattice kept: atoms and cell edges
        d = self.beta.shape[1] - 1  # the cells' degree, J - 1
        weight = np.exp(self.log_tilt + self.x / 2.0)  # the tilt at the lattice points
        # under P; and e^x times the part under Q, x the cell's left end (Q = e^{-l} P: the same order as P)
        p_cells = 2.0 * e0 * weight[:-1] * (self.beta @ _tilt_integrals(d, e0))
        eq_cells = 2.0 * e0 * weight[:-1] * (self.beta @ _tilt_integrals(d, -e0))
        p_atoms = alpha * weight  # an atom's e^x Q-mass is its P-mass
        # from the top, [m] = over atoms (cells) m, m+1, ...; the Q-sums discounted by e^{-(x_j - x_m)}:
        # then e^eps Q(L > eps) never forms e^eps alone (it overflows when Q underflows). Nonnegative terms only.
        self.p_atoms, self.p_cells = _suffix(p_atoms), _suffix(p_cells)
        self.eq_atoms, self.eq_cells = _suffix(p_atoms, 2.0 * e0), _suffix(eq_cells, 2.0 * e0)
        # relative rounding of the recursion, the final sums, exp of arguments up to k e0, and hyp1f1
        self.rho = _U * (big_j * big_j / 2.0 + 16.0 * k + 64.0 + 2.0 * k * e0) + HYP1F1_RELATIVE_ERROR
        # gradual underflow: at most 2^-1074 lost per operation or weight, 32 (k+1)^3 of them, times the largest
        # weight they are multiplied by
        self.lost = 32.0 * (k + 1) ** 3 * _TINY * max(2.0 * e0, 1.0) * math.exp(k * math.log1p(e0 / 2.0) + e0)
        self.lost += 2.0 * dropped  # the terms with more than J uniform parts (twice: bdtrc's own rounding)

    def sums(self, eps: float) -> _Sums:
        """``P(L > eps)`` and ``e^eps Q(L > eps)`` as computed, ``eps >= 0``."""
        m = int(np.searchsorted(self.x, eps, side="right")) - 1  # x[m] <= eps < x[m+1], in doubles
        # The lattice points are the rationals j e0 (j = 2 (lo + m) - k), each rounded to a double: within ulps
        # of one, the rounding decides whether an atom lies above eps (the top atom k e0 rounded down, at
        # delta 5e-87 an upper end was "certified" where the true delta was 3.5e-18). So the bracketing
        # points and the distances to them are taken exactly.
        fe, fe0 = Fraction(eps), Fraction(self.e0)

        def exact(i: int) -> Fraction:
            return (2 * (self.lo + i) - self.k) * fe0

        while m + 1 < self.x.size and exact(m + 1) <= fe:
            m += 1
        while m > 0 and exact(m) > fe:
            m -= 1
        if m >= self.x.size - 1:
            return _Sums(eps, 0.0, 0.0)
        up = math.exp(-float(exact(m + 1) - fe))  # discount from the next lattice point down to eps (<= 1)
        s = float(fe - exact(m)) / (2.0 * self.e0)
        if s <= 0.0:  # eps on the lattice: all of cell m is above it
            p = self.p_atoms[m + 1] + self.p_cells[m]
            return _Sums(eps, float(p), float(up * self.eq_atoms[m + 1] + self.eq_cells[m]))
        p = float(self.p_atoms[m + 1] + self.p_cells[m + 1])
        eq = up * float(self.eq_atoms[m + 1] + self.eq_cells[m + 1])
        g = _right_part(self.beta[m], s)  # cell m from eps on
        c = self.e0 * (1.0 - s)
        w = 2.0 * self.e0 * (1.0 - s) * math.exp(self.log_tilt + eps / 2.0)
        p += w * float(g @ _tilt_integrals(g.size - 1, c))
        eq += w * float(g @ _tilt_integrals(g.size - 1, -c))
        return _Sums(eps, p, eq)

    def error(self, t: _Sums) -> float:
        """Bound on the difference between ``t.delta`` and the true profile at ``t.eps``."""
        return self.rho * (t.p + t.eq) * (1.0 + 4.0 * _U) + self.lost

    def delta_bracket(self, eps: float) -> tuple[float, float]:
        t = self.sums(eps)
        err = self.error(t)
        return float(max(t.delta - err, 0.0)), float(min(t.delta + err, 1.0))

    def _newton(self, target: float) -> _Sums:
        """The root of the computed profile at ``target``, from below (the profile is convex in e^eps)."""
        eq = math.exp(-2.0 * self.e0) * self.eq_atoms[1:] + self.eq_cells  # at x[m]: atoms from x[m+1] on
        on_lattice = self.p_atoms[1:] + self.p_cells - eq
        above = np.nonzero(on_lattice > target)[0]  # decreasing along the lattice
        t = self.sums(max(float(self.x[above[-1]]), 0.0) if above.size else 0.0)
        for _ in range(100):
            excess = t.delta - target
            if excess <= 0.0 or t.eq <= 0.0:
                break
            step = math.log1p(excess / t.eq)  # Newton in x = e^eps: stays below the root
            t = self.sums(t.eps + step)
            if step <= 4.0 * math.ulp(t.eps):
                break
        return t

    def epsilon_bracket(self, target: float) -> tuple[float, float]:
        """``(lower, upper)``: the true epsilon at ``target`` lies in it."""
        top = ceil_double(self.k * Fraction(self.e0), "count * epsilon0")  # delta(k e0) = 0: rounded up
        root = self._newton(target)
        t = root
        certified = False
        grow = 1.0  # doubles each step: a Newton step below the resolution of delta cannot stall the search
        for _ in range(200):  # up until the bound certifies delta(upper) <= target
            excess = t.delta + self.error(t) - target
            if excess <= 0.0:
                certified = True
                break
            if t.eps >= top:
                break
            step = max(excess, math.ulp(target)) / max(t.eq, 1e-300)  # the slope in eps: -e^eps Q(L > eps)
            t = self.sums(min(t.eps + grow * max(step, 4.0 * math.ulp(t.eps), 1e-300), top))
            grow *= 2.0
        # a point the bound has not certified is never an upper end (the 200 steps can run out below the pure
        # bound, where delta is at or below the error: 3.5e-18 at the upper end for a target of 5e-87 once)
        upper = min(t.eps, top) if certified else top
        t, grow = root, 1.0
        for _ in range(200):  # down until the bound certifies delta(lower) > target
            short = target - (t.delta - self.error(t))
            if short < 0.0 or t.eps <= 0.0:
                break
            # at least a step that moves delta by an ulp of the target, and growing: a step of a few ulps of
            # eps that leaves delta - error exactly at the target stalled here until the steps ran out and
            # the lower end fell to 0 (oracle at 10^4: (0, 1.03e-5) where the truth is 1.0292e-5)
            step = max(short, math.ulp(target)) / max(t.eq, 1e-300)
            t = self.sums(max(t.eps - grow * max(step, 4.0 * math.ulp(t.eps)), 0.0))
            grow *= 2.0
        lower = max(t.eps, 0.0) if short < 0.0 else 0.0
        return float(lower), float(upper)


def _suffix(v: NDArray[np.float64], rate: float = 0.0) -> NDArray[np.float64]:
    """``out[m] = v[m] + e^-rate v[m+1] + e^-2rate v[m+2] + ...``, with a trailing 0 (one longer than ``v``)."""
    out = np.zeros(v.size + 1)
    if rate == 0.0:
        np.cumsum(v[::-1], out=out[-2::-1])
        return out
    discount = math.exp(-rate)
    for m in range(v.size - 1, -1, -1):  # at most MAX_COUNT + 1 terms
        out[m] = v[m] + discount * out[m + 1]
    return out


@functools.lru_cache(maxsize=8)
def _composed(e0: float, k: int) -> _ComposedLaplace:
    return _ComposedLaplace(e0, k)


def laplace_composition_delta(epsilon: float, epsilon0: float, count: int) -> tuple[float, float]:
    r"""Bracket on :math:`\delta(\varepsilon)` of ``count`` Laplace releases of pure epsilon ``epsilon0``.

    The composition is exact (module docstring); the bracket only accounts for floating-point rounding
    (about 1e-12 of ``P(L > epsilon)``). ``epsilon0`` is :math:`\Delta/b`; the neighbouring relation is that of the
    mechanism (its loss is symmetric).

    Parameters
    ----------
    epsilon : float
        Where to evaluate the profile, finite and >= 0.
    epsilon0 : float
        The pure epsilon of one release, in [2.2e-308, :data:`MAX_EPSILON0`] (a normal double: a subnormal
        one keeps too few bits for the composition's arithmetic).
    count : int
        Number of releases, 1 .. :data:`MAX_COUNT`, with ``count * log(1 + epsilon0/2) <= 600``.

    Returns
    -------
    (lower, upper) : tuple of float
        The true delta lies in it.

    Raises
    ------
    ValueError
        If an argument breaks its rule above.
    """
    e0, k = _check(epsilon0, count)
    eps = check_real("epsilon", epsilon)
    if eps < 0.0:
        raise ValueError(f"epsilon must be >= 0; got {eps}")
    return _composed(e0, k).delta_bracket(eps)


def laplace_composition_epsilon(delta: float, epsilon0: float, count: int) -> tuple[float, float]:
    r"""Bracket on :math:`\varepsilon(\delta)` of ``count`` Laplace releases of pure epsilon ``epsilon0``.

    ``upper`` is a certified upper bound (the profile there, with its rounding bound, is at most ``delta``);
    ``lower`` a point where the profile certainly exceeds ``delta``. Solved by Newton's method in
    :math:`e^\varepsilon`, where the profile is convex.

    The gap is not bounded relatively: it is the profile's certified error (the half-width of
    :func:`laplace_composition_delta`'s bracket, an absolute error of a few ``count`` times 1e-16 of the
    masses summed, plus the truncated mass) divided by the profile's slope
    :math:`e^\varepsilon Q(L > \varepsilon)`, about twice that to first order. Where ``delta`` is well above that
    error the gap is 1e-14 to 1e-10 relative (the tests), but it can exceed 1e-9 relative when the slope is
    small (``laplace_composition_epsilon(1e-10, 3.293271260822799e-05, 4)``: 4.6e-13 on 1.3e-4, 3.5e-9), and
    where ``delta`` is at or below the error (about 1e-16 and less, e.g. ``delta = 1e-77``, or
    ``epsilon0`` so small that the whole profile is within the error) no point is certified above ``delta``:
    ``lower`` is 0 and ``upper`` can be as large as the pure bound ``count * epsilon0`` (always a valid, safe
    upper end; ``(5e-324, 50.0, 1)`` gives ``(0.0, 50.0)``). Likewise where ``1 - delta`` is at or below the
    error at epsilon 0 (``delta`` within about 1e-13 of 1): ``lower`` is then 0 even when the true
    profile at 0 is just above ``delta`` (``(1 - 2e-15, 50.0, 3)`` gives ``(0.0, 150.0)``).

    Parameters
    ----------
    delta : float
        In (0, 1).
    epsilon0, count
        As :func:`laplace_composition_delta`.

    Returns
    -------
    (lower, upper) : tuple of float

    Raises
    ------
    ValueError
        If ``delta`` is not in (0, 1), or ``epsilon0`` or ``count`` breaks its rule.
    """
    d = check_probability_open("delta", delta)
    e0, k = _check(epsilon0, count)
    return _composed(e0, k).epsilon_bracket(d)
