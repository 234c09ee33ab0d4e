r"""Floating-point-safe mechanisms: exact discrete Laplace and Gaussian sampling on the integers.

Why
---
The textbook Laplace mechanism ``value + b * sign * log(U)`` with ``U`` a
uniform double is :math:`\varepsilon`-DP over the reals but not over the
doubles: the set of doubles it can output depends on the input, so an
attacker who sees one output can often tell the input exactly
(Mironov 2012); :mod:`dpcore.floating_point` implements that textbook
mechanism and the attack.

The fix used here is to never touch floating point: integer-valued queries
get integer noise from the discrete Laplace or discrete Gaussian law
(Canonne, Kamath & Steinke 2020, "CKS20"), sampled *exactly* with integer
arithmetic only. Both supports are all of :math:`\mathbb Z`, so no output is
impossible under one input and possible under the other.

How the sampling is exact and fast
----------------------------------
Every random decision is a comparison ``U < p`` of a uniform real
:math:`U \in [0, 1)` with a fixed irrational (or exactly 1) probability
:math:`p`, such as :math:`e^{-x}` for a rational :math:`x`. :math:`U` is
revealed 32 bits at a time: the first word ``u`` gives
:math:`U \in [u/2^{32}, (u+1)/2^{32})`. Each :math:`p` is precomputed as the
exact integer ``T = floor(p 2**32)`` (rigorous interval arithmetic on Python
integers, :func:`_exp_neg_bounds`, refined until the floor is certain). Then
``u < T`` proves :math:`U < p`, ``u > T`` proves :math:`U > p`, and only
``u == T`` (probability :math:`2^{-32}`; the discrete Laplace also uses
16-bit words against ``floor(p 2**16)`` for one trial, where the tie has
probability :math:`2^{-16}`) is undecided: that element draws
more words of :math:`U` and compares them with ever tighter integer bounds on
:math:`p` (:func:`_lazy_less`) until the comparison is decided, which happens
with probability 1. So every Bernoulli trial has *exactly* probability
:math:`p`: no floating-point number, no ``exp`` or ``log`` of a float, occurs
anywhere in the sampling path, and the vectorised fast path (numpy ``uint32``
comparisons against tables of such thresholds) and the scalar refinement
together realise the exact comparison ``U < p``.

The laws are built from such comparisons (see :func:`sample_discrete_laplace`
and :func:`sample_discrete_gaussian` for the proofs), a whole array at a time;
a loop in Python runs once per rejection *round* over all pending elements,
never once per sample.

Randomness
----------
With ``rng=None`` every uniform word comes from the operating system's
cryptographically secure generator (:func:`secrets.token_bytes`, i.e.
``os.urandom``). An int seed or a ``numpy.random.Generator`` is accepted for
*reproducible verification only* (PCG64 is not a cryptographic generator).

Limits
------
At most :data:`MAX_SIZE` samples per call (checked before any work; the work
is done in blocks of 65,536, so the memory beyond the output array stays
flat). Rational parameters have numerator and denominator below ``2**24``.
The threshold tables are built once per parameter (milliseconds; up to
about 0.2 s at the largest scales, 2**24) and cached for 64 parameters.
Timing is *not* constant: a word that lands where the thresholds crowd (the
tails of the law) takes a binary search besides the guide-table look-up, and
a tie takes a scalar refinement, so the time depends a little on the values
drawn; the number of rejection rounds adds noise independent of the value
accepted (see ``benchmarks/results/samplers.md``).
"""

from __future__ import annotations

import math
import numbers
import secrets
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import RNGLike, as_generator, check_finite_array, check_positive_finite, check_positive_int

__all__ = [
    "MAX_SIZE",
    "as_fraction",
    "bernoulli_exp",
    "sample_discrete_laplace",
    "sample_discrete_gaussian",
    "discrete_laplace_pmf",
    "discrete_gaussian_pmf",
    "discrete_laplace_mechanism",
    "discrete_gaussian_mechanism",
]

MAX_SIZE = 10**8
"""Largest number of samples (or mechanism coordinates) per call: 800 MB of int64 output."""

_MAX_PARAM = 1 << 24
_MAX_ABS = (1 << 62) - 1  # |noise| <= _MAX_ABS and |value| <= 2**62, so value + noise never leaves int64
_W = 32  # bits of U revealed per word
_WMAX = (1 << _W) - 1
_BLOCK = 1 << 16  # elements per vectorised block (keeps temporaries in cache and memory flat)

Oracle = Callable[[int], tuple[int, int]]
"""``oracle(P) -> (lo, hi)`` with ``lo <= p * 2**P <= hi`` (integers, hi - lo small)."""


# --------------------------------------------------------------------------- exact arithmetic


def _exp_pos_bounds(f: Fraction, g: int) -> tuple[int, int]:
    """Integers ``lo <= e**f * 2**g <= hi`` for rational ``0 <= f <= 1`` (Taylor series, directed rounding).

    Every term :math:`f^i/i!` is rounded down in ``lo`` and up in ``hi``; the
    series stops when the rounded-up term is <= 1, and the rest of the series
    (terms at most halving, :math:`f \\le 1`, :math:`i \\ge 1`) is at most that term, added to ``hi``.
    """
    a, b = f.numerator, f.denominator
    one = 1 << g
    tl = th = one
    lo = hi = one
    i = 1
    while a and th > 1:
        tl = tl * a // (b * i)
        th = -((-th * a) // (b * i))
        lo += tl
        hi += th
        i += 1
    return lo, hi + (1 if a else 0)


def _exp_neg_bounds(x: Fraction, p: int) -> tuple[int, int]:
    r"""Integers ``lo <= exp(-x) * 2**p <= hi`` for rational ``x >= 0``; ``hi - lo`` is a few units.

    :math:`e^{x} = e^{n} e^{f}` with :math:`n = \lfloor x\rfloor`, both factors
    bounded by :func:`_exp_pos_bounds` at a working precision with
    :math:`2\log_2 n + 16` guard bits, the power by squaring with floors in the
    lower and ceilings in the upper bound; then :math:`2^{p+g}/e^{x}` is
    rounded outwards. Only integer operations.
    """
    if x == 0:
        return 1 << p, 1 << p
    if 10 * x >= 7 * p + 10:  # e^-x <= e^{-0.7 p - 1} < 2**-p
        return 0, 1
    n = x.numerator // x.denominator
    f = x - n
    g = p + 2 * n.bit_length() + 16
    one = 1 << g
    lo, hi = _exp_pos_bounds(f, g)
    if n:
        el, eh = _exp_pos_bounds(Fraction(1), g)
        pl, ph = one, one  # e^n by squaring
        k = n
        while k:
            if k & 1:
                pl, ph = pl * el >> g, -((-ph * eh) >> g)
            k >>= 1
            if k:
                el, eh = el * el >> g, -((-eh * eh) >> g)
        lo, hi = lo * pl >> g, -((-hi * ph) >> g)
    num = 1 << (p + g)
    return num // hi, -((-num) // lo)


def _exp_oracle(x: Fraction) -> Oracle:
    return lambda p: _exp_neg_bounds(x, p)


def _indexed_exp(idx: NDArray[Any], x: Fraction) -> Callable[[int], Oracle]:
    """Element ``i`` -> the oracle of ``exp(-idx[i] x)``."""
    return lambda i: _exp_oracle(int(idx[i]) * x)


def _threshold(oracle: Oracle, bits: int = _W) -> int:
    """The exact integer ``floor(p * 2**bits)``, capped at ``2**bits - 1`` (``p`` irrational or exactly 0 or 1)."""
    p, cap = 96, (1 << bits) - 1
    while p <= 1 << 14:
        lo, hi = oracle(p)
        tl, th = min(lo >> (p - bits), cap), min(hi >> (p - bits), cap)
        if tl == th:
            return tl
        p *= 2
    raise RuntimeError("internal: threshold not resolved at 16384 bits")  # pragma: no cover


def _scaled_exp_oracle(lead: Oracle, x: Fraction) -> Oracle:
    """Bounds of ``c * exp(-x)`` from the bounds of ``c`` (``lead``) and of ``exp(-x)``, 8 guard bits."""

    def bounds(p: int) -> tuple[int, int]:
        q = p + 8
        cl, ch = lead(q)
        el, eh = _exp_neg_bounds(x, q)
        return cl * el >> (q + 8), -((-ch * eh) >> (q + 8))

    return bounds


def _power_table(x: Fraction, size: int, lead: Oracle | None = None, bits: int = _W) -> NDArray[np.uint32]:
    """Thresholds ``floor(c exp(-j x) 2**bits)`` (capped at ``2**bits-1``) for ``j < size``, exactly.

    ``c`` is 1, or the number bounded by ``lead``. Interval recurrence
    ``c exp(-(j+1)x) = c exp(-jx) exp(-x)`` at ``p`` bits with directed
    rounding; an entry whose floor the interval does not settle is recomputed
    directly by :func:`_threshold`.
    """
    p = 96 + size.bit_length()
    bl, bh = _exp_neg_bounds(x, p)
    lo, hi = (1 << p, 1 << p) if lead is None else lead(p)
    out = np.empty(size, dtype=np.uint32)
    sh, cap = p - bits, (1 << bits) - 1
    for j in range(size):
        tl, th = min(lo >> sh, cap), min(hi >> sh, cap)
        if tl == th:
            out[j] = tl
        else:
            out[j] = _threshold(_exp_oracle(j * x) if lead is None else _scaled_exp_oracle(lead, j * x), bits)
        lo, hi = lo * bl >> p, -((-hi * bh) >> p)
    return out


# --------------------------------------------------------------------------- randomness


class _Uniform:
    """Uniform 32-bit words, vectorised: OS CSPRNG (``rng=None``) or a numpy Generator."""

    _RAW64 = (np.random.PCG64, np.random.PCG64DXSM, np.random.SFC64, np.random.Philox)

    def __init__(self, rng: RNGLike) -> None:
        self.secure = rng is None
        self.gen = None if self.secure else as_generator(rng)
        # these bit generators' raw outputs are 64 uniform bits (MT19937's are 32 bits in a uint64)
        self.raw64 = self.gen is not None and isinstance(self.gen.bit_generator, self._RAW64)

    def words(self, size: int) -> NDArray[np.uint32]:
        if self.gen is None:
            return np.frombuffer(secrets.token_bytes(4 * size), dtype=np.uint32)
        if not self.raw64:
            return self.gen.integers(0, 1 << 32, size=size, dtype=np.uint32)
        raw = self.gen.bit_generator.random_raw((size + 1) // 2)
        return np.asarray(raw, dtype=np.uint64).view(np.uint32)[:size]

    def halves(self, size: int) -> NDArray[np.uint16]:
        """``size`` uniform 16-bit integers (the halves of ``ceil(size/2)`` words)."""
        return self.words((size + 1) // 2).view(np.uint16)[:size]

    def word(self) -> int:
        return int(self.words(1)[0])

    def bits(self, size: int) -> NDArray[np.bool_]:
        """``size`` fair coins (bits of ``ceil(size/32)`` words)."""
        return np.unpackbits(self.words((size + 31) // 32).view(np.uint8))[:size].view(bool)


def _lazy_less(state: list[int], oracle: Oracle, src: _Uniform) -> bool:
    r"""Decide :math:`U < p` exactly, ``U`` known to lie in ``[v/2**w, (v+1)/2**w)`` with ``state = [v, w]``.

    With ``lo <= p 2**w <= hi``: ``v + 1 <= lo`` proves :math:`U < p`,
    ``v >= hi`` proves :math:`U \ge p`; otherwise one more word of ``U`` is
    drawn (``state`` is extended, so later comparisons with the same ``U``
    see the same bits) and the bounds are recomputed at the new precision.
    """
    while True:
        v, w = state
        lo, hi = oracle(w)
        if v + 1 <= lo:
            return True
        if v >= hi:
            return False
        state[0], state[1] = (v << _W) | src.word(), w + _W


def _bernoulli(
    src: _Uniform, thr: NDArray[Any] | np.uint32, n: int, oracle: Callable[[int], Oracle], bits: int = _W
) -> Any:
    """``n`` exact Bernoulli(p_i) trials: ``u < floor(p_i 2**bits)``, ties ``u == T`` refined by :func:`_lazy_less`.

    ``u`` is a uniform word of ``bits`` = 32 or 16 bits (then ``thr`` must be thresholds at 16 bits);
    ``oracle(i)`` gives the bounds of ``p_i`` for element ``i`` (only called on ties).
    """
    u = src.words(n) if bits == _W else src.halves(n)
    acc = u < thr
    for i in np.flatnonzero(u == thr):
        acc[i] = _lazy_less([int(u[i]), bits], oracle(int(i)), src)
    return acc


# --------------------------------------------------------------------------- inversion by guide table


class _GuideTable:
    r"""Count the thresholds of an ascending table below (or above) a 32-bit word, by a guide table.

    ``table`` holds thresholds ``T_0 <= T_1 <= ...`` (int64, in ``[0, 2**32)``).
    :meth:`lookup` returns, for each word ``u``, the number of thresholds
    ``T < u`` (``above=False``: ``searchsorted(table, u, "left")``) or
    ``T > u`` (``above=True``: ``len(table) - searchsorted(table, u, "right")``),
    and the indices of the words equal to some threshold (the ties, which the
    caller refines exactly). The top ``gb`` bits of ``u`` (``min_bits <= gb <=
    20``, about 16 buckets a threshold) select a bucket of words; a bucket that
    contains no threshold has one count for all its words, stored in the guide,
    and only the words in the other buckets (stored as -1) take a binary search.
    """

    def __init__(self, table: NDArray[np.int64], above: bool, min_bits: int) -> None:
        self.table, self.above, self.size = table, above, len(table)
        gb = min(20, max(min_bits, (16 * self.size).bit_length()))
        starts = np.arange(1 << gb, dtype=np.int64) << (_W - gb)
        ends = starts + ((1 << (_W - gb)) - 1)
        lo = np.searchsorted(table, starts, "left")
        hi = np.searchsorted(table, ends, "right")
        count = self.size - hi if above else lo  # lo == hi in a bucket with no threshold
        self.shift = np.uint32(_W - gb)
        self.guide = np.where(lo == hi, count, -1).astype(np.int16 if self.size < 2**15 else np.int32)

    def lookup(self, u: NDArray[np.uint32]) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
        """(count for each word, indices of the words that equal a threshold)."""
        count: NDArray[np.int64] = self.guide[u >> self.shift].astype(np.int64)
        dirty = np.flatnonzero(count < 0)
        if not dirty.size:
            return count, dirty
        ud = u[dirty].astype(np.int64)
        if self.above:
            right = np.searchsorted(self.table, ud, "right")
            count[dirty] = self.size - right
            nearest = self.table[np.maximum(right - 1, 0)]  # the largest threshold <= u, if any
        else:
            left = np.searchsorted(self.table, ud, "left")
            count[dirty] = left
            nearest = self.table[np.minimum(left, self.size - 1)]  # the smallest threshold >= u, if any
        return count, dirty[nearest == ud]


# --------------------------------------------------------------------------- geometric, Laplace, Gaussian


class _Geometric:
    r"""Exact inversion of :math:`P(V \ge v) = c\, r^{v-1}` (:math:`v \ge 1`), :math:`r = e^{-x}`, :math:`x > 0`.

    With ``lead=None``, :math:`c = r` and :math:`V` is geometric,
    :math:`P(V = a) = (1 - r) r^a`; otherwise :math:`0 < c \le 1` is the number
    bounded by the oracle ``lead`` (the discrete Laplace uses
    :math:`c = P(Z \ne 0)`). :math:`V = \#\{v \ge 1 : U < c\,r^{v-1}\}` for one
    uniform :math:`U`. With ``T_v = floor(c r^(v-1) 2**32)`` (v = 1..K, the
    first zero threshold is ``T_K``) and ``u`` the first word of ``U``: every
    ``v`` with ``T_v > u`` satisfies :math:`U < c\,r^{v-1}`, every ``v`` with
    ``T_v < u`` does not, and only ``T_v == u`` is refined (:func:`_lazy_less`,
    continuing past ``K`` while :math:`U < c\,r^{v-1}`, so the tail is exact too).
    A guide table on the top 16 to 20 bits of ``u`` gives the count directly
    unless a threshold falls inside the bucket (then a binary search).
    """

    def __init__(self, x: Fraction, lead: Oracle | None = None) -> None:
        self.x = x
        self.lead = _exp_oracle(x) if lead is None else lead
        count = math.ceil(Fraction(222, 10) / x) + 3  # c r^(v-1) <= e^-22.2 < 2**-32 for v - 1 >= 22.2/x
        tab = _power_table(x, count, self.lead)  # tab[v - 1] = T_v
        zeros = np.flatnonzero(tab == 0)
        if not zeros.size:  # pragma: no cover
            raise RuntimeError("internal: inversion table has no zero threshold")
        self.k = int(zeros[0]) + 1
        # T_K = 0 <= ... <= T_1; the count of T_v > u is #{v : U < c r^(v-1)} unless u ties a T_v
        self.asc = tab[: self.k][::-1].astype(np.int64)
        self.guide = _GuideTable(self.asc, above=True, min_bits=16)

    def oracle(self, v: int) -> Oracle:
        r"""Bounds of :math:`P(V \ge v) = c\, r^{v-1}`."""
        return _scaled_exp_oracle(self.lead, (v - 1) * self.x)

    def sample(self, src: _Uniform, n: int, limit: int) -> NDArray[np.int64]:
        u = src.words(n)
        a, tied = self.guide.lookup(u)
        for i in tied:  # u equals some T_a: decide U < r^a exactly, a = first tied index upwards
            state = [int(u[i]), _W]
            j = int(a[i]) + 1
            while _lazy_less(state, self.oracle(j), src):
                j += 1
                if j > limit:
                    raise OverflowError("a discrete Laplace draw exceeded 2**62 (probability below exp(-2**37))")
            a[i] = j - 1
        return a


class _Laplace:
    r"""Tables for exact :math:`\mathrm{Lap}_{\mathbb Z}(b)`, :math:`b = t/s`, :math:`q = e^{-s/t}` (cached per ``b``).

    * :math:`P(Z = 0) = (1-q)/(1+q) = \tanh(1/(2b))`;
    * otherwise :math:`|Z| = 1 + G` with :math:`P(G = g) = (1-q) q^g` (since
      :math:`P(|Z| = g+1) = 2\tanh(1/(2b)) q^{g+1}` and
      :math:`2\tanh(1/(2b))\,q/(1 - \tanh(1/(2b))) = 1 - q`), and an
      independent fair sign.
    * :math:`G = mA + B` with :math:`m = 2^k`, :math:`k = \min(12, \max(0, \lfloor\log_2 b\rfloor - 2))`
      (so :math:`m \le \max(b/4, 1)` and :math:`m \le 4096`):
      :math:`A` geometric of ratio :math:`q^m` (:class:`_Geometric`) and
      :math:`B` on :math:`[0, m)` with :math:`P(B = j) \propto q^j`,
      independent, because :math:`q^{ma+j} = (q^m)^a q^j` factorises over the
      unique pair :math:`(a, j)` of each :math:`g`. :math:`B` is drawn by
      rejection: a uniform :math:`j` on :math:`[0, m)` is accepted with
      probability :math:`q^j`, one exact Bernoulli trial read from a table of
      ``m`` thresholds at 16 bits (``floor(q^j 2**16)``: a tie, probability :math:`2^{-16}`,
      is refined with more bits like any other); acceptance is at least
      :math:`(1 - e^{-1/4})\cdot 4 \approx 0.88` per round.
    * :math:`Z = 0` and :math:`A` come from one inversion (:class:`_Geometric` with
      :math:`c = P(Z \ne 0) = 2q/(1+q)`): :math:`P(V \ge 1 + a) = c\,(q^m)^a`, so
      :math:`V = 0` has probability :math:`1 - c = P(Z = 0)` and, given :math:`V \ge 1`,
      :math:`A = V - 1` is geometric of ratio :math:`q^m`, as required.
    """

    def __init__(self, s: int, t: int) -> None:
        self.x1 = Fraction(s, t)
        self.k = min(12, max(0, (t // s).bit_length() - 3))  # m = 2**k <= b/4: B accepted w.p. >= 0.88
        self.m = 1 << self.k
        self.inv = _Geometric(self.m * self.x1, self._nonzero_oracle)  # V = 0 iff Z = 0, else V = 1 + A
        self.limit = _MAX_ABS // self.m - 2
        self.lo_tab = _power_table(self.x1, self.m, bits=16).astype(np.uint16)  # 16-bit trials: fewer bytes

    def _nonzero_oracle(self, p: int) -> tuple[int, int]:
        """Bounds of ``P(Z != 0) = 2q/(1+q)`` (increasing in ``q``)."""
        ql, qh = _exp_neg_bounds(self.x1, p + 4)
        one = 1 << (p + 4)
        return (2 * ql << p) // (one + ql), -((-2 * qh << p) // (one + qh))

    def sample(self, src: _Uniform, n: int) -> NDArray[np.int64]:
        v = self.inv.sample(src, n, self.limit)
        zero = v == 0
        g = (v - 1) << self.k
        if self.k:
            self._add_b(src, g)
        g += 1
        g[zero] = 0
        np.negative(g, out=g, where=src.bits(n))
        return g

    def _add_b(self, src: _Uniform, g: NDArray[np.int64]) -> None:
        pending: NDArray[np.intp] | None = None  # None: every element (first round, no indexing)
        mask = np.uint16(self.m - 1)
        while pending is None or pending.size:
            size = g.size if pending is None else pending.size
            j = src.halves(size) & mask
            acc = _bernoulli(src, self.lo_tab[j], size, _indexed_exp(j, self.x1), bits=16)
            if pending is None:
                g += np.where(acc, j, np.uint16(0))
                pending = np.flatnonzero(~acc)
            else:
                g[pending[acc]] += j[acc]
                pending = pending[~acc]


def _gauss_sums(a: int, c: int, q: int, cut: int, jmax: int) -> tuple[list[int], list[int], int, int]:
    r"""Integer bounds at ``q`` bits on :math:`S_j = \sum_{|i| \le j} w_i` and :math:`N = \sum_{i\in\mathbb Z} w_i`.

    :math:`w_i = e^{-i^2/(2\sigma^2)}`, :math:`\sigma^2 = a/c`, by the exact recurrence
    :math:`w_{i+1} = w_i \rho_i`, :math:`\rho_i = \beta^{2i+1}`, :math:`\rho_{i+1} = \rho_i \beta^2`,
    :math:`\beta = e^{-c/(2a)}`, in interval arithmetic (floors in the lower, ceilings in
    the upper bounds). The sums run to ``max(jmax, J)`` where :math:`w_{J+1} < 2^{-\mathrm{cut}}`
    and the rest of :math:`N`, at most :math:`2 w_{J+1}/(1 - \rho_{J+1})` (the ratios
    decrease), is bounded below :math:`2^{-\mathrm{cut}}` too and added to the upper bound.
    """
    one = 1 << q
    bl, bh = _exp_neg_bounds(Fraction(c, 2 * a), q)
    b2l, b2h = bl * bl >> q, -((-bh * bh) >> q)
    wl = wh = one
    rl, rh = bl, bh
    sl, sh = [one], [one]
    i = 0
    while True:
        wl, wh = wl * rl >> q, -((-wh * rh) >> q)
        rl, rh = rl * b2l >> q, -((-rh * b2h) >> q)
        i += 1
        if i > jmax and wh < 1 << (q - cut) and rh < one:
            tail = -((-2 * wh * one) // (one - rh))
            if tail < 1 << (q - cut):
                return sl, sh, sl[-1], sh[-1] + tail
        sl.append(sl[-1] + 2 * wl)
        sh.append(sh[-1] + 2 * wh)


class _Gaussian:
    r"""Tables for exact :math:`\mathcal N_{\mathbb Z}(0, \sigma^2)`, :math:`\sigma^2 = a/c`, by inversion.

    :math:`|Z| = \min\{j \ge 0 : U < F(j)\}` with :math:`F(j) = S_j/N` the exact
    distribution function of :math:`|Z|` (:func:`_gauss_sums`), then a fair sign for
    :math:`|Z| > 0`: :math:`P(Z = \pm j) = w_j/N`. ``T_j = floor(F(j) 2**32)`` is
    tabulated exactly up to the first ``j`` where it reaches ``2**32 - 1``; a word ``u``
    with no ``T_j == u`` gives :math:`|Z| = \#\{j : T_j < u\}` at once (a guide table
    on the top bits of ``u`` finds it without search in most buckets); a tie is
    refined with :func:`_lazy_less` against bounds on :math:`F(j)` at any precision,
    continuing past the table while :math:`U \ge F(j)`.
    """

    def __init__(self, a: int, c: int) -> None:
        self.a, self.c = a, c
        q = 160
        sl, sh, nl, nh = _gauss_sums(a, c, q, 72, 0)
        self.cache = (q, sl, sh, nl, nh)  # serves the tie refinements up to 64 bits without recomputing
        thr: list[int] = []
        for j in range(len(sl)):
            tl, th = min((sl[j] << _W) // nh, _WMAX), min((sh[j] << _W) // nl, _WMAX)
            thr.append(tl if tl == th else _threshold(self.oracle(j)))
            if thr[-1] == _WMAX:
                break
        else:  # pragma: no cover - F(j) -> 1, the last partial sums are within 2**-72 of N
            raise RuntimeError("internal: discrete Gaussian table did not reach 1")
        # the count of T_j < u is |Z| = min{j : U < F(j)} unless u ties a T_j
        self.table = np.array(thr, dtype=np.int64)
        self.size = len(thr)
        self.guide = _GuideTable(self.table, above=False, min_bits=12)

    def oracle(self, j: int) -> Oracle:
        def bounds(p: int) -> tuple[int, int]:
            q, sl, sh, nl, nh = self.cache
            if p > 64 or j >= len(sl):
                sl, sh, nl, nh = _gauss_sums(self.a, self.c, p + 96, p + 24, j)
            return (sl[j] << p) // nh, -((-sh[j] << p) // nl)

        return bounds

    def sample(self, src: _Uniform, n: int) -> NDArray[np.int64]:
        u = src.words(n)
        z, tied = self.guide.lookup(u)
        for i in tied:  # u == T_j: the smallest j with U < F(j), exactly
            state = [int(u[i]), _W]
            j = int(z[i])
            while not _lazy_less(state, self.oracle(j), src):
                j += 1
                if j > _MAX_ABS:  # pragma: no cover - probability below e^{-2**100}
                    raise OverflowError("a discrete Gaussian draw exceeded 2**62")
            z[i] = j
        np.negative(z, out=z, where=src.bits(n))
        return z


def _blocks(fill: Callable[[int], NDArray[np.int64]], n: int) -> NDArray[np.int64]:
    out = np.empty(n, dtype=np.int64)
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        out[start:stop] = fill(stop - start)
    return out


def bernoulli_exp(gamma: Any, size: int | None = None, rng: RNGLike = None) -> Any:
    r"""Exact Bernoulli trials with success probability :math:`e^{-\gamma}` for rational :math:`\gamma > 0`.

    Each trial is the comparison :math:`U < e^{-\gamma}` of a uniform real
    :math:`U` revealed 32 bits at a time against the exact integer
    ``floor(exp(-gamma) 2**32)``; the rare tie is refined with more bits of
    :math:`U` against rigorous integer bounds on :math:`e^{-\gamma}` (see the
    module docstring), so :math:`P(\text{True}) = e^{-\gamma}` exactly, with
    integer arithmetic only. (This replaces the series of trials
    :math:`\mathrm{Bern}(\gamma/k)` of Canonne, Kamath & Steinke 2020,
    Algorithm 1, which has the same law.)

    Parameters
    ----------
    gamma : int, Fraction, str or float
        Read exactly by :func:`as_fraction`.
    size : int, optional
        Number of trials (1 to :data:`MAX_SIZE`); ``None`` returns one bool.
    rng : None, int or Generator
        ``None``: cryptographically secure randomness.

    Raises
    ------
    ValueError
        If ``gamma`` is not a positive rational of modest size or ``size`` is
        not an integer in ``[1, MAX_SIZE]``.
    """
    g = as_fraction("gamma", gamma)
    n = _size(size)
    src = _Uniform(rng)
    oracle = _exp_oracle(g)
    thr = np.uint32(_threshold(oracle))
    out = np.empty(n, dtype=bool)
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        out[start:stop] = _bernoulli(src, thr, stop - start, lambda i: oracle)
    return bool(out[0]) if size is None else out


# --------------------------------------------------------------------------- parameters


def as_fraction(name: str, value: Any) -> Fraction:
    """Convert a positive rational parameter exactly.

    Ints (numpy integers too) and ``Fraction`` are taken as they are; a float or a string is read
    through its decimal representation (``0.1`` is exactly 1/10, not the
    binary double nearest to it), so the parameter is the number the user
    wrote. Numerator and denominator must be below ``2**24``.

    Raises
    ------
    ValueError
        If ``value`` is not a finite positive rational of that size.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a positive rational number, not a bool")
    try:
        if isinstance(value, Fraction):
            fr = value
        elif isinstance(value, numbers.Integral):  # int(): a numpy integer's Fraction would keep numpy parts
            fr = Fraction(int(value))
        elif isinstance(value, str):
            fr = Fraction(value.strip())
        else:
            check_positive_finite(name, value)
            fr = Fraction(repr(float(value)))
    except (ValueError, ZeroDivisionError, TypeError, OverflowError):
        raise ValueError(f"{name} must be a finite positive rational number; got {value!r}") from None
    if fr <= 0:
        raise ValueError(f"{name} must be > 0; got {value!r}")
    if fr.numerator >= _MAX_PARAM or fr.denominator >= _MAX_PARAM:
        raise ValueError(f"{name} = {fr} has a numerator or denominator >= 2**24; pass a simpler rational (a Fraction)")
    return fr


def _size(size: int | None) -> int:
    n = 1 if size is None else check_positive_int("size", size)
    if n > MAX_SIZE:
        raise ValueError(f"size must be <= MAX_SIZE = {MAX_SIZE} (memory); got {n}; draw in several calls")
    return n


def _shape_out(x: NDArray[np.int64], size: int | None) -> Any:
    return int(x[0]) if size is None else x


@lru_cache(maxsize=64)
def _laplace_tables(s: int, t: int) -> _Laplace:
    return _Laplace(s, t)


@lru_cache(maxsize=64)
def _gaussian_tables(a: int, c: int) -> _Gaussian:
    return _Gaussian(a, c)


# --------------------------------------------------------------------------- samplers


def sample_discrete_laplace(scale: Any, size: int | None = None, rng: RNGLike = None) -> Any:
    r"""Exact samples of the discrete Laplace law :math:`\mathrm{Lap}_{\mathbb Z}(b)`.

    .. math:: P(Z = z) = \frac{e^{1/b} - 1}{e^{1/b} + 1}\, e^{-|z|/b}, \qquad z \in \mathbb Z

    Why the law is exact (``q = exp(-1/b)``, ``b = t/s`` rational):
    :math:`P(Z=0) = \tanh(1/(2b)) = (1-q)/(1+q)`; given :math:`Z \ne 0`,
    :math:`|Z| - 1` is geometric, :math:`P(|Z| - 1 = g) = (1-q) q^g`, and the
    sign is an independent fair bit. The geometric is :math:`G = mA + B`
    (:math:`m = 2^k \le \max(b/4, 1)`, :math:`m \le 4096`): :math:`B` on
    :math:`[0, m)` with :math:`P(B=j) \propto q^j` by rejection from a uniform
    :math:`j` accepted with probability :math:`q^j`, and :math:`A` of ratio
    :math:`q^m`; :math:`q^{ma+j} = (q^m)^a q^j` makes :math:`(A, B)`
    independent with exactly these laws. The event :math:`Z = 0` and
    :math:`A` come from one exact inversion of one uniform :math:`U`:
    :math:`V = \#\{v \ge 1 : U < P(Z \ne 0)\, q^{m(v-1)}\}`, so
    :math:`P(V = 0) = P(Z = 0)` and, given :math:`V \ge 1`, :math:`A = V - 1`
    has ratio :math:`q^m`. Every trial compares uniform integers with exact
    integer thresholds (ties refined exactly; see the module docstring), so
    no float is used and the output law is exactly
    :math:`\mathrm{Lap}_{\mathbb Z}(b)` (the same law as Algorithm 2 of
    Canonne, Kamath & Steinke 2020). A draw with :math:`|Z| > 2^{62}`
    (probability below :math:`e^{-2^{37}}`) raises OverflowError rather
    than wrapping.

    Parameters
    ----------
    scale : int, Fraction, str or float
        The scale :math:`b > 0`, read exactly by :func:`as_fraction`.
    size : int, optional
        Number of samples, 1 to :data:`MAX_SIZE`; ``None`` returns one Python int.
    rng : None, int or numpy.random.Generator
        ``None`` (default): cryptographically secure randomness (``secrets``).
        A seed or Generator: reproducible, for verification only.

    Raises
    ------
    ValueError
        If ``scale`` is not a positive rational of modest size (NaN, inf, <= 0,
        numerator or denominator >= 2**24) or ``size`` is not in ``[1, MAX_SIZE]``.
    """
    b = as_fraction("scale", scale)
    n = _size(size)
    src = _Uniform(rng)
    tables = _laplace_tables(b.denominator, b.numerator)
    return _shape_out(_blocks(lambda k: tables.sample(src, k), n), size)


def sample_discrete_gaussian(sigma2: Any, size: int | None = None, rng: RNGLike = None) -> Any:
    r"""Exact samples of the discrete Gaussian :math:`\mathcal N_{\mathbb Z}(0, \sigma^2)`.

    .. math:: P(Z = z) = \frac{e^{-z^2/(2\sigma^2)}}{\sum_{y\in\mathbb Z} e^{-y^2/(2\sigma^2)}}

    Why the law is exact: :math:`|Z|` is drawn by inversion of its exact
    distribution function, :math:`|Z| = \min\{j \ge 0 : U < F(j)\}` with
    :math:`F(j) = \sum_{|i| \le j} w_i / \sum_{i \in \mathbb Z} w_i`,
    :math:`w_i = e^{-i^2/(2\sigma^2)}`, for one uniform real :math:`U`; then
    :math:`P(|Z| = j) = F(j) - F(j-1)` exactly, and an independent fair sign
    for :math:`|Z| > 0` gives :math:`P(Z = \pm j) = w_j/\sum_i w_i`. The
    comparisons :math:`U < F(j)` are made against the exact integers
    ``floor(F(j) 2**32)``, computed once per ``sigma2`` by interval arithmetic
    on Python integers (the exact recurrence
    :math:`w_{i+1} = w_i\, e^{-(2i+1)/(2\sigma^2)}` and a rigorous bound on the
    tail of the normaliser), and the rare tie ``u == floor(F(j) 2**32)`` is
    refined with more bits of :math:`U` against bounds on :math:`F(j)` at any
    precision (module docstring). No float is used. The law is the one that
    Algorithm 3 of Canonne, Kamath & Steinke (2020) samples by rejection from
    a discrete Laplace proposal; inversion needs one uniform word per sample.

    Parameters
    ----------
    sigma2 : int, Fraction, str or float
        The parameter :math:`\sigma^2 > 0` (read exactly by :func:`as_fraction`).
        Note it is the scale of the exponent, not exactly the variance.
    size, rng
        As in :func:`sample_discrete_laplace`.

    Raises
    ------
    ValueError
        If ``sigma2`` is not a positive rational of modest size or ``size`` is
        not in ``[1, MAX_SIZE]``.
    """
    s2 = as_fraction("sigma2", sigma2)
    n = _size(size)
    src = _Uniform(rng)
    tables = _gaussian_tables(s2.numerator, s2.denominator)
    return _shape_out(_blocks(lambda k: tables.sample(src, k), n), size)


def discrete_laplace_pmf(z: ArrayLike, scale: Any) -> NDArray[np.float64]:
    r"""The pmf :math:`\tanh(1/(2b))\, e^{-|z|/b}` of :math:`\mathrm{Lap}_{\mathbb Z}(b)` (floats).

    Canonne, Kamath & Steinke (2020), Definition 28; the normaliser
    :math:`\sum_z e^{-|z|/b} = \coth(1/(2b))` is summed in closed form.

    Parameters
    ----------
    z : int or array_like of int
        Integer values (floats with integral values accepted), each with :math:`|z| \le 2^{62}`.
    scale : float, int, str or fractions.Fraction
        The scale :math:`b`, a positive rational with numerator and denominator below :math:`2^{24}`.

    Raises
    ------
    ValueError
        If ``scale`` is not a positive rational or ``z`` is not integer-valued and finite.
    """
    b = float(as_fraction("scale", scale))
    z = _integer_array("z", z).astype(float)
    return np.asarray(np.tanh(1 / (2 * b)) * np.exp(-np.abs(z) / b), dtype=np.float64)


def _gaussian_window(s2: float) -> int:
    """Half-width k of the integer window [-k, k] over which discrete-Gaussian sums are taken.

    ``k = floor(40 sigma) + 10``: beyond it every term ``e^{-z^2/(2 sigma^2)}`` is below ``e^{-800}`` of the
    largest, so the sums over the window equal the full theta sums to far below double precision.
    """
    return int(40 * math.sqrt(s2)) + 10


def discrete_gaussian_pmf(z: ArrayLike, sigma2: Any) -> NDArray[np.float64]:
    r"""The pmf :math:`e^{-z^2/(2\sigma^2)}/\sum_y e^{-y^2/(2\sigma^2)}` of :math:`\mathcal N_{\mathbb Z}(0,\sigma^2)`.

    Canonne, Kamath & Steinke (2020), Definition 1. The normaliser is summed over
    :math:`|y| \le 40\sigma + 10`; the omitted mass is below :math:`e^{-800}` relative.

    Parameters
    ----------
    z : int or array_like of int
        Integer values (floats with integral values accepted), each with :math:`|z| \le 2^{62}`.
    sigma2 : float, int, str or fractions.Fraction
        :math:`\sigma^2`, a positive rational with numerator and denominator below :math:`2^{24}`.

    Raises
    ------
    ValueError
        If ``sigma2`` is not a positive rational or ``z`` is not integer-valued and finite.
    """
    s2 = float(as_fraction("sigma2", sigma2))
    k = _gaussian_window(s2)
    ys = np.arange(-k, k + 1, dtype=float)
    norm = np.exp(-ys * ys / (2 * s2)).sum()
    z = _integer_array("z", z).astype(float)
    return np.asarray(np.exp(-z * z / (2 * s2)) / norm, dtype=np.float64)


def _integer_array(name: str, value: ArrayLike) -> NDArray[np.int64]:
    """``value`` as int64, every element an integer with ``|x| <= 2**62`` (so ``x + noise`` cannot wrap)."""
    try:
        arr = np.asarray(value)
    except (OverflowError, ValueError, TypeError):
        raise ValueError(f"{name} must be integers with |{name}| <= 2**62; got {value!r}") from None
    if arr.dtype.kind == "b":
        raise ValueError(f"{name} must be integers, not bools")
    if arr.dtype.kind == "O" and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in arr.flat):
        if any(abs(int(v)) > 1 << 62 for v in arr.flat):
            raise ValueError(f"{name} must satisfy |{name}| <= 2**62 (so that {name} + noise fits in int64)")
        return arr.astype(np.int64)
    if arr.dtype.kind in "iu":
        if arr.size and (int(arr.max()) > 1 << 62 or int(arr.min()) < -(1 << 62)):
            raise ValueError(f"{name} must satisfy |{name}| <= 2**62 (so that {name} + noise fits in int64)")
        return arr.astype(np.int64, copy=False)  # no copy of an int64 input (callers never write to it)
    farr = check_finite_array(name, arr)
    if not np.all(farr == np.round(farr)) or np.any(np.abs(farr) >= 2.0**62):
        raise ValueError(f"{name} must be integers (this mechanism works on an integer-valued query); got {value!r}")
    return farr.astype(np.int64)


def _add_noise(name: str, flat: NDArray[np.int64], noise: NDArray[np.int64]) -> NDArray[np.int64]:
    """``flat + noise``, written into ``noise`` (a fresh draw): refuses (never wraps) a sum outside int64.

    The check runs in blocks of 2**20 and the sum in place, so that at :data:`MAX_SIZE` elements the work
    needs no array beyond the input and the noise (it cannot fire for |value| <= 2**62).
    """
    info = np.iinfo(np.int64)
    for i in range(0, flat.size, 1 << 20):
        f, z = flat[i : i + (1 << 20)], noise[i : i + (1 << 20)]
        over = (f > info.max - np.maximum(z, 0)) | (f < info.min - np.minimum(z, 0))
        if np.any(over):  # pragma: no cover - excluded by the |value| <= 2**62 and |noise| < 2**62 bounds
            raise ValueError(f"{name} + noise overflows int64")
    noise += flat
    return noise


def _release(arr: NDArray[np.int64], draw: Callable[[int], Any]) -> Any:
    """``arr`` plus ``draw(n)``, one noise value an element (a Python int for a scalar ``arr``).

    Raises
    ------
    ValueError
        If ``arr`` has more than MAX_SIZE elements.
    """
    if arr.size > MAX_SIZE:
        raise ValueError(f"value has {arr.size} elements; at most MAX_SIZE = {MAX_SIZE} per call")
    flat = arr.reshape(-1)
    noise = np.array(draw(max(1, flat.size)), dtype=np.int64, copy=None)[: flat.size]  # a fresh array: summed in
    out = _add_noise("value", flat, noise).reshape(arr.shape)
    return int(out) if out.ndim == 0 else out


def discrete_laplace_mechanism(value: ArrayLike, sensitivity: int, epsilon: Any, rng: RNGLike = None) -> Any:
    r"""Release an integer query with exact discrete Laplace noise: :math:`\varepsilon`-DP.

    .. math:: M(D) = f(D) + Z, \qquad Z \sim \mathrm{Lap}_{\mathbb Z}(\Delta/\varepsilon)

    For neighbours with :math:`|f(D) - f(D')| \le \Delta` the ratio of output
    probabilities is :math:`e^{(|z - f(D')| - |z - f(D)|)\varepsilon/\Delta} \le e^{\varepsilon}`
    by the triangle inequality, exactly as for the continuous Laplace
    mechanism. The noise is sampled exactly with integer arithmetic only
    (:func:`sample_discrete_laplace`), so there is no floating-point side
    channel (Mironov 2012). Values are limited to :math:`|x| \le 2^{62}` and
    noise to :math:`|Z| < 2^{62}`, so the int64 sum never wraps.

    Parameters
    ----------
    value : int or array_like of int
        The true integer answer(s), :math:`|x| \le 2^{62}`, at most
        :data:`MAX_SIZE` of them; each coordinate gets independent noise.
    sensitivity : int
        The global L1 sensitivity :math:`\Delta \ge 1` (an integer).
    epsilon : int, Fraction, str or float
        Read exactly as a rational by :func:`as_fraction`.
    rng : None, int or numpy.random.Generator
        ``None``: cryptographically secure randomness. Seeds are for verification only.

    Returns
    -------
    int or numpy.ndarray of int64

    Raises
    ------
    ValueError
        If ``value`` is not integer-valued and finite or has an element with
        :math:`|x| > 2^{62}` (or more than MAX_SIZE elements), ``sensitivity``
        is not a positive integer, or ``epsilon`` is not a positive rational.
    """
    delta_f = check_positive_int("sensitivity", sensitivity)
    eps = as_fraction("epsilon", epsilon)
    arr = _integer_array("value", value)
    scale = Fraction(delta_f) / eps
    if scale.numerator >= _MAX_PARAM or scale.denominator >= _MAX_PARAM:
        raise ValueError(f"sensitivity/epsilon = {scale} has a numerator or denominator >= 2**24")
    return _release(arr, lambda n: sample_discrete_laplace(scale, n, rng))


def discrete_gaussian_mechanism(value: ArrayLike, sigma2: Any, rng: RNGLike = None) -> Any:
    r"""Release an integer query with exact discrete Gaussian noise :math:`\mathcal N_{\mathbb Z}(0,\sigma^2)`.

    Canonne, Kamath & Steinke (2020) show that for integer queries of L2
    sensitivity :math:`\Delta` this satisfies
    :math:`\tfrac12(\Delta/\sigma)^2`-concentrated DP, as the continuous
    Gaussian mechanism does; the noise is sampled exactly (their Algorithm 3,
    :func:`sample_discrete_gaussian`). Values are limited to
    :math:`|x| \le 2^{62}` so that the int64 sum never wraps.

    Raises
    ------
    ValueError
        If ``value`` is not integer-valued, has an element with :math:`|x| > 2^{62}`
        or more than MAX_SIZE elements, or ``sigma2`` is not a positive rational.
    """
    arr = _integer_array("value", value)
    return _release(arr, lambda n: sample_discrete_gaussian(sigma2, n, rng))
