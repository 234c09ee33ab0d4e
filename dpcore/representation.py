r"""Audit events over how a mechanism's float outputs are represented (precision, lattice, exact values).

A mechanism is :math:`\varepsilon`-DP over the doubles it really outputs, not
over the reals it was designed on. Implementations that add floating-point
noise to a value publish, besides the value, *how* it is represented: the
sum :math:`1 \oplus Y` of an input 1 and a noise double :math:`Y` is always a
multiple of :math:`2^{-53}` (it is rounded to a double of magnitude at least
1/2, or is exact by Sterbenz's lemma), while :math:`0 \oplus Y = Y` can have
bits far below :math:`2^{-53}` near 0. So the event "the output is not a
multiple of :math:`2^{-53}`" can have probability 0.2 under input 0 and
exactly 0 under input 1, which no :math:`\varepsilon` allows (Mironov 2012,
"On significance of the least significant bits for differential privacy";
Haney et al. 2022, "Precision-based attacks and interval refining: how to
break, then fix, differential privacy on finite computers"). Threshold events
on the value cannot see this.

:func:`dpcore.audit_epsilon` with ``events="representation"`` adds three
families of candidate events to its value thresholds, each a fixed function of
one output once the selection samples have fixed its parameters:

``precision``
    :math:`\{\nu(y) < k\}` ("not a multiple of :math:`2^k`") and
    :math:`\{\nu(y) \ge k\}` ("a multiple of :math:`2^k`"), where
    :math:`\nu(y)` is the exponent of the largest power of two dividing the
    double :math:`y` (:func:`dyadic_valuation`; :math:`\nu(0) = +\infty`).
    Every :math:`k` from :math:`-1073` to :math:`1024` is a candidate.
``lattice``
    :math:`\{y \in c + g\mathbb{Z}\}` and its complement, for a lattice
    :math:`c + g\mathbb{Z}` that explains at least 99 % of one side's pilot
    outputs (the first selection chunk), when :math:`g` is not a power of two
    dividing :math:`c` (those lattices are precision events already);
    membership means :math:`|r - \mathrm{rint}(r)| \le 10^{-6}` for
    :math:`r = (y - c)/g`, computed in doubles.
``value``
    For outputs taking at most :data:`MAX_VALUES` distinct values in the
    pilot chunks: :math:`\{y \in S\}` for the sets :math:`S` of pilot values
    (and "any other value") formed by adding values in decreasing order of
    their selection likelihood ratio -- the Neyman--Pearson events of a
    discrete output.

The fourth kind of event of the literature, "the output lies in the set of
outputs reachable from the other input", needs the sampler's code (white-box:
:func:`dpcore.naive_laplace_support_contains`). Black-box, the only such set
is the set of outputs *observed* from the other input in the selection
samples, which is a valid fixed event but has probability about 0 for any
fresh output of a continuous sampler; for discrete outputs it is the value
family above. It is therefore not a separate family.

Validity is that of :func:`dpcore.audit_epsilon`: the events are functions of
the selection samples only, so the Clopper--Pearson bounds on the disjoint
estimation samples, Bonferroni-corrected over the events kept, hold with
probability at least ``confidence`` whatever the selection did.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import as_real_array

__all__ = ["dyadic_valuation", "VALUATION_ZERO", "MAX_VALUES"]

#: :func:`dyadic_valuation` of 0 (and -0): larger than that of every nonzero double (at most 1023).
VALUATION_ZERO = 1024
#: Smallest valuation of a double: the smallest subnormal is :math:`2^{-1074}`.
VALUATION_MIN = -1074
#: Histogram size of the valuations: -1074 .. 1023 and the zero sentinel 1024.
VALUATION_BINS = VALUATION_ZERO - VALUATION_MIN + 1
#: Most distinct pilot values (both sides together) for which the value family is used.
MAX_VALUES = 64
#: Lattice membership tolerance, in units of the spacing.
LATTICE_TOLERANCE = 1e-6
#: Smallest share of one side's pilot outputs a lattice must explain to become a candidate.
LATTICE_SHARE = 0.99
#: Finest lattice tried, relative to the pilot's span: finer ones are the doubles' own grid (precision events).
LATTICE_MAX_POINTS = 2.0**32
#: Samples per block when computing valuations (cache-sized temporaries).
_BLOCK = 1 << 14

_MANTISSA = np.uint64((1 << 52) - 1)
_HIDDEN = np.uint64(1 << 52)
_EXP_MASK = np.uint64(0x7FF)
_SHIFT_52 = np.uint64(52)
_ONE = np.uint64(1)


def dyadic_valuation(x: ArrayLike) -> NDArray[np.int64]:
    r"""The exponent of the largest power of two dividing each double: :math:`\nu(x) = \max\{k : x \in 2^k\mathbb{Z}\}`.

    A finite nonzero double is :math:`x = \pm s \cdot 2^{e}` with an integer
    significand :math:`s < 2^{53}`, so :math:`\nu(x) = e + \mathrm{ctz}(s)`
    (the trailing zero bits of :math:`s`): :math:`\nu(1) = 0`,
    :math:`\nu(0.75) = -2`, :math:`\nu(2^{-1074}) = -1074` (the smallest
    subnormal), :math:`\nu(2^{1023}) = 1023`, :math:`\nu(6) = 1`. Zero is a
    multiple of every power of two: :math:`\nu(\pm 0)` is reported as
    :data:`VALUATION_ZERO` = 1024, larger than every other valuation. So
    ":math:`x` is a multiple of :math:`2^k`" is exactly :math:`\nu(x) \ge k`
    for every :math:`k \le 1024`. Computed exactly on the IEEE 754 bit
    pattern (``view(uint64)``: exponent field, significand, lowest set bit),
    vectorised; the ulp of :math:`x` (``numpy.spacing``) is
    :math:`2^{\nu}` only for odd significands, so it is not used.

    Source: the least significant bits of float outputs as a privacy leak,
    Mironov (2012); precision-based attacks, Haney et al. (2022).

    Parameters
    ----------
    x : array_like
        Finite real numbers (converted to float64; integers beyond
        :math:`2^{53}` are rounded by that conversion first).

    Returns
    -------
    numpy.ndarray of int64
        :math:`\nu(x)`, elementwise, in :math:`[-1074, 1023]` or 1024 for zero; the shape of ``x``.

    Raises
    ------
    ValueError
        If ``x`` contains NaN, an infinity or a non-number.
    """
    arr = as_real_array("x", x)
    if not np.all(np.isfinite(arr)):
        raise ValueError("x must contain finite numbers only (no NaN or infinity)")
    flat = np.ascontiguousarray(arr, dtype=np.float64).ravel()
    out = np.empty(flat.size, dtype=np.int64)
    for s in range(0, flat.size, _BLOCK):
        out[s : s + _BLOCK] = _valuations(flat[s : s + _BLOCK])
    return out.reshape(arr.shape)


def _valuations(x: NDArray[np.float64]) -> NDArray[np.int64]:
    """:func:`dyadic_valuation` of a contiguous float64 block, unchecked."""
    bits = x.view(np.uint64)
    biased = ((bits >> _SHIFT_52) & _EXP_MASK).astype(np.int64)
    sig = bits & _MANTISSA
    sig[biased > 0] |= _HIDDEN  # normal numbers: the implicit leading bit
    low = sig & (~sig + _ONE)  # the lowest set bit (0 for zero)
    # the lowest set bit is a power of two <= 2**52: exact as a double, whose exponent field gives its log2
    tz = (low.astype(np.float64).view(np.uint64) >> _SHIFT_52).astype(np.int64) - 1023
    val = np.maximum(biased, 1) - 1075 + tz
    val[sig == 0] = VALUATION_ZERO
    return val


# --------------------------------------------------------------------------- counters (picklable)


@dataclass(frozen=True)
class ValuationHistogram:
    """Counts of each valuation (:data:`VALUATION_BINS` bins, index ``nu + 1074``): the precision family's selection."""

    @property
    def size(self) -> int:
        return VALUATION_BINS

    def counts(self, x: NDArray[np.float64]) -> NDArray[np.int64]:
        out = np.zeros(VALUATION_BINS, dtype=np.int64)
        x = np.ascontiguousarray(x, dtype=np.float64)
        for s in range(0, x.size, _BLOCK):
            out += np.bincount(_valuations(x[s : s + _BLOCK]) - VALUATION_MIN, minlength=VALUATION_BINS)
        return out


@dataclass(frozen=True)
class MultipleCounts:
    """Counts of ``{nu(x) >= k}`` ("a multiple of 2^k") for a few exponents ``k``: the estimation phase."""

    exponents: tuple[int, ...]

    @property
    def size(self) -> int:
        return len(self.exponents)

    def counts(self, x: NDArray[np.float64]) -> NDArray[np.int64]:
        out = np.zeros(len(self.exponents), dtype=np.int64)
        x = np.ascontiguousarray(x, dtype=np.float64)
        for s in range(0, x.size, _BLOCK):
            v = _valuations(x[s : s + _BLOCK])
            out += np.array([np.count_nonzero(v >= k) for k in self.exponents], dtype=np.int64)
        return out


@dataclass(frozen=True)
class Lattice:
    """The lattice ``offset + spacing * Z``; membership within :data:`LATTICE_TOLERANCE` spacings."""

    spacing: float
    offset: float

    def contains(self, x: NDArray[np.float64]) -> NDArray[np.bool_]:
        with np.errstate(all="ignore"):  # huge outputs: inf - inf is NaN, which is "not on the lattice"
            r = (x - self.offset) / self.spacing
            return np.abs(r - np.rint(r)) <= LATTICE_TOLERANCE

    def words(self) -> str:
        off = "" if self.offset == 0.0 else f"{_num(self.offset, 12)} + "
        return f"the lattice {off}{_num(self.spacing, 12)}·Z (within {LATTICE_TOLERANCE:g} spacings of a point)"


@dataclass(frozen=True)
class LatticeCounts:
    """Counts of lattice membership, one per lattice."""

    lattices: tuple[Lattice, ...]

    @property
    def size(self) -> int:
        return len(self.lattices)

    def counts(self, x: NDArray[np.float64]) -> NDArray[np.int64]:
        return np.array([np.count_nonzero(lat.contains(x)) for lat in self.lattices], dtype=np.int64)


@dataclass(frozen=True)
class ValueHistogram:
    """Counts of each value of ``values`` (sorted), and of any other value last."""

    values: tuple[float, ...]

    @property
    def size(self) -> int:
        return len(self.values) + 1

    def counts(self, x: NDArray[np.float64]) -> NDArray[np.int64]:
        table = np.asarray(self.values, dtype=np.float64)
        i = np.searchsorted(table, x)
        hit = i < table.size
        hit[hit] = table[i[hit]] == x[hit]
        codes = np.where(hit, i, table.size)
        return np.bincount(codes, minlength=table.size + 1).astype(np.int64)


@dataclass(frozen=True)
class ValueSetCounts:
    """Counts of ``{x in S}`` for a few finite sets ``S`` of doubles."""

    sets: tuple[tuple[float, ...], ...]

    @property
    def size(self) -> int:
        return len(self.sets)

    def counts(self, x: NDArray[np.float64]) -> NDArray[np.int64]:
        return np.array([np.count_nonzero(np.isin(x, np.asarray(s, dtype=np.float64))) for s in self.sets])


@dataclass(frozen=True)
class Concatenated:
    """Several counters' counts side by side (one pass over each chunk)."""

    parts: tuple[Any, ...]

    @property
    def size(self) -> int:
        return sum(int(p.size) for p in self.parts)

    def counts(self, x: NDArray[np.float64]) -> NDArray[np.int64]:
        return np.concatenate([np.asarray(p.counts(x), dtype=np.int64) for p in self.parts])

    def offsets(self) -> list[int]:
        """Where each part's counts start."""
        out, at = [], 0
        for p in self.parts:
            out.append(at)
            at += int(p.size)
        return out


# --------------------------------------------------------------------------- fixed from the pilot


def fit_lattice(x: NDArray[np.float64]) -> Lattice | None:
    r"""A lattice :math:`c + g\mathbb{Z}` explaining at least 99 % of the outputs ``x`` (one side's pilot), or None.

    :math:`g` is an approximate gcd (Euclid's algorithm with relative
    tolerance :data:`LATTICE_TOLERANCE`) of the smallest gaps between distinct
    outputs, :math:`c` the output nearest 0. None when there are fewer than 3
    distinct outputs (the value family covers them), when the lattice would
    have more than :data:`LATTICE_MAX_POINTS` points across the outputs' span
    (the doubles' own grid: precision events), when it explains less than
    :data:`LATTICE_SHARE` of the outputs, or when :math:`g` is a power of two
    dividing :math:`c` (then membership is a precision event).
    """
    u = np.unique(x)
    if u.size < 3:
        return None
    gaps = np.diff(u)
    span = float(u[-1] - u[0])
    smallest = np.unique(gaps)[:32]
    g = float(smallest[0])
    for gap in smallest[1:].tolist():
        g = _approx_gcd(gap, g)
        if g <= 0.0:
            return None
    if not (math.isfinite(span) and g > 0.0 and span / g <= LATTICE_MAX_POINTS):
        return None
    c = float(u[np.argmin(np.abs(u))])
    lattice = Lattice(g, c)
    if np.count_nonzero(lattice.contains(x)) < LATTICE_SHARE * x.size:
        return None
    mant, _ = math.frexp(g)
    if mant == 0.5 and dyadic_valuation(np.array([c]))[0] >= math.frexp(g)[1] - 1:
        return None  # c + 2^k Z with 2^k | c is 2^k Z: a precision event
    return lattice


def _approx_gcd(a: float, b: float) -> float:
    """gcd of two positive doubles up to a relative :data:`LATTICE_TOLERANCE`, or 0 if Euclid does not settle."""
    a, b = max(a, b), min(a, b)
    for _ in range(64):
        if b <= 0.0:
            return 0.0
        r = abs(a - b * round(a / b))
        if r <= LATTICE_TOLERANCE * b:
            return b
        a, b = b, r
    return 0.0


def value_table(pilots: Sequence[NDArray[np.float64]]) -> tuple[float, ...] | None:
    """The distinct pilot values of both sides, sorted, if there are at most :data:`MAX_VALUES`; else None."""
    u = np.unique(np.concatenate(pilots))
    if u.size > MAX_VALUES:
        return None
    return tuple(float(v) for v in u)


# --------------------------------------------------------------------------- words


def _num(v: float, digits: int = 17) -> str:
    """A double in the shortest form that reads back to it (``0.1``, ``1e-05``, ``3``), or to ``digits`` digits."""
    if v == int(v) and abs(v) < 2**53:
        return str(int(v))
    return repr(float(v)) if digits >= 17 else f"{v:.{digits}g}"


def power_words(k: int) -> str:
    """``2^k`` as written in an event (``2^-53``, ``1`` for k = 0)."""
    return {0: "1", 1: "2"}.get(k, f"2^{k}")


def precision_words(k: int, multiple: bool) -> str:
    """The precision event ``{nu >= k}`` (``multiple``) or ``{nu < k}`` in words."""
    if k >= VALUATION_ZERO:
        return "outputs equal to 0" if multiple else "outputs other than 0"
    what = "integers" if k == 0 else f"multiples of {power_words(k)}"
    return f"outputs that are {what}" if multiple else f"outputs that are not {what}"


def value_words(values: Sequence[float], member: bool) -> str:
    """``{x in values}`` (``member``) or its complement in words."""
    listed = ", ".join(_num(v) for v in values[:8]) + (f" and {len(values) - 8} more" if len(values) > 8 else "")
    return f"outputs equal to {'' if member else 'none of '}{listed}"
