"""Exact rounding to the safe side: the smallest double at least a rational, or at least its square root.

Where a certified answer rests on a product or root of doubles (``sqrt(k) * sensitivity``, ``k * epsilon0``), the
rounded-to-nearest double can fall one ulp below the exact value; where epsilon is huge, one ulp moves the answer
past the profile's whole fall (issue 28). These two functions round up, checked exactly in rationals, and refuse
with a ``ValueError`` naming the quantity where the exact value exceeds the largest double (never ``inf`` or an
``OverflowError`` from ``fractions``).
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["ceil_double", "ceil_sqrt_double"]


def _too_large(what: str, exact: Fraction, root: bool = False) -> ValueError:
    bits = (exact.numerator.bit_length() - exact.denominator.bit_length()) / (2 if root else 1)
    return ValueError(f"{what} is about 1e{bits * math.log10(2):.0f}: it exceeds the largest double (1.8e308)")


def ceil_double(exact: Fraction, what: str) -> float:
    """The smallest double ``>= exact`` (``exact >= 0``); ``ValueError`` naming ``what`` beyond the doubles."""
    if exact > Fraction(float.fromhex("0x1.fffffffffffffp+1023")):
        raise _too_large(what, exact)
    q = float(exact)  # round to nearest: at most one ulp below
    if Fraction(q) < exact:
        q = math.nextafter(q, math.inf)
    return q


def ceil_sqrt_double(exact: Fraction, what: str) -> float:
    """The smallest double ``s`` with ``s * s >= exact`` exactly (``exact >= 0``); ``ValueError`` beyond."""
    top = float.fromhex("0x1.fffffffffffffp+1023")
    if exact > Fraction(top) ** 2:
        raise _too_large(what, exact, root=True)
    if exact == 0:
        return 0.0
    half = (exact.numerator.bit_length() - exact.denominator.bit_length()) // 2  # exact / 4**half is near 1
    scaled = exact / Fraction(4) ** half
    s = math.ldexp(math.sqrt(float(scaled)), half)  # within an ulp or two (0 below the subnormals)
    while s > 0.0 and Fraction(math.nextafter(s, 0.0)) ** 2 >= exact:  # at most a few ulps either way
        s = math.nextafter(s, 0.0)
    while Fraction(s) ** 2 < exact:
        s = math.nextafter(s, math.inf)
    return s
