r"""The textbook floating-point Laplace mechanism and Mironov's (2012) attack on it.

The textbook Laplace mechanism ``value + b * sign * log(U)`` with ``U`` a
uniform double is :math:`\varepsilon`-DP over the reals but not over the
doubles: the set of doubles it can output depends on the input, so an
attacker who sees one output can often tell the input exactly (Mironov 2012).
:func:`naive_laplace_mechanism` implements that mechanism,
:func:`naive_laplace_support_contains` decides exactly whether a double can be
an output for a given input, and :func:`floating_point_attack` turns that into
a distinguishing attack. The fix is in :mod:`dpcore.discrete` (exact integer
noise). **Never use the naive mechanism to release data.**
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import RNGLike, as_generator, check_finite_array, check_positive_finite, check_real
from .discrete import _size

__all__ = ["naive_laplace_mechanism", "naive_laplace_support_contains", "floating_point_attack"]

_TWO53 = 1 << 53


def _naive_noise_magnitude(j: NDArray[np.int64], scale: float) -> NDArray[np.float64]:
    """``-scale * log(U)`` with ``U = j * 2**-53`` in (0, 1], computed in doubles."""
    u = j.astype(np.float64) * 2.0**-53  # exact: j <= 2**53
    return -scale * np.log(u)


def naive_laplace_mechanism(value: float, scale: float, size: int | None = None, rng: RNGLike = None) -> Any:
    r"""The textbook floating-point Laplace mechanism (**flawed**; Mironov 2012).

    .. math:: M(x) = x \oplus S \otimes (-b \otimes \ln U), \qquad U \in \{j 2^{-53}: 1 \le j \le 2^{53}\},\ S = \pm 1

    computed in IEEE doubles (:math:`\oplus, \otimes` are rounded operations),
    with :math:`U` a uniform double from ``Generator.random`` (53 random bits)
    and an independent random sign. Over the reals this is
    :math:`\mathrm{Lap}(x, b)`; over the doubles the *set* of possible outputs
    depends on :math:`x`, which :func:`floating_point_attack` exploits.
    **Never use it to release data.**

    Raises
    ------
    ValueError
        If ``value`` is not finite or ``scale`` is not finite and > 0.
    """
    x = check_real("value", value)
    b = check_positive_finite("scale", scale)
    n = _size(size)
    gen = as_generator(rng)
    j = _TWO53 - (gen.random(n) * 2.0**53).astype(np.int64)  # U = 1 - random() in (0, 1], exactly
    sign = np.where(gen.integers(0, 2, size=n) == 1, 1.0, -1.0)
    with np.errstate(over="ignore"):
        out = x + sign * _naive_noise_magnitude(j, b)
    if not np.all(np.isfinite(out)):
        raise ValueError("value plus noise overflowed the double range; value and scale must be far below 1e308")
    return float(out[0]) if size is None else out


def naive_laplace_support_contains(y: ArrayLike, value: float, scale: float) -> NDArray[np.bool_]:
    r"""Whether each double ``y`` can be an output of :func:`naive_laplace_mechanism` on ``value``.

    For each sign the output :math:`g(j) = x \oplus \pm(-b \otimes \ln(j 2^{-53}))`
    is monotone in the integer :math:`j \in [1, 2^{53}]` (every step is a
    monotone function followed by monotone rounding), so a binary search over
    :math:`j` (54 vectorised steps) finds the :math:`j` whose output is
    closest to ``y``; ``y`` is in the support iff some :math:`j` within
    :math:`\pm 2` of it maps to ``y`` exactly (the window absorbs any
    non-monotonicity of the platform's ``log`` at the last bit).

    Raises
    ------
    ValueError
        If ``y`` or ``value`` is not finite or ``scale`` is not finite and > 0.
    """
    ys = check_finite_array("y", y)
    x = check_real("value", value)
    b = check_positive_finite("scale", scale)
    shape = ys.shape
    ys = ys.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):  # outputs beyond the double range compare as +-inf
        found = np.zeros(ys.size, dtype=bool)
        for sign in (1.0, -1.0):
            # out_sign(j) = x + sign * mag(j); mag decreases in j, so sign*mag is monotone.
            def g(j: NDArray[np.int64], sign: float = sign) -> NDArray[np.float64]:
                return x + sign * _naive_noise_magnitude(j, b)

            lo = np.ones(ys.size, dtype=np.int64)
            hi = np.full(ys.size, _TWO53, dtype=np.int64)
            # find the smallest j with sign*(g(j) - y) <= 0 (g(j) moves towards x as j grows)
            for _ in range(54):
                mid = (lo + hi) // 2
                cond = sign * (g(mid) - ys) <= 0
                hi = np.where(cond, mid, hi)
                lo = np.where(cond, lo, mid + 1)
            for off in (-2, -1, 0, 1, 2):
                j = np.clip(lo + off, 1, _TWO53)
                found |= g(j) == ys
    return found.reshape(shape)


def floating_point_attack(y: ArrayLike, d: float, d_prime: float, scale: float) -> NDArray[np.int64]:
    r"""Guess which of two inputs produced outputs of :func:`naive_laplace_mechanism` (Mironov 2012).

    Returns 0 ("input was ``d``") or 1 ("input was ``d_prime``") per output.
    If ``y`` can be an output for only one of the inputs, that input is
    certain and is guessed; if for both, the likelihood-ratio guess of the
    real-valued mechanism (the closer input) is used. Against the exact
    mechanism on the reals no test succeeds with probability above
    :math:`e^\varepsilon/(1+e^\varepsilon)`; against the double-precision
    implementation this one does far better.

    Raises
    ------
    ValueError
        On non-finite inputs or a non-positive scale.
    """
    ys = check_finite_array("y", y)
    d = check_real("d", d)
    d_prime = check_real("d_prime", d_prime)
    in_d = naive_laplace_support_contains(ys, d, scale)
    in_dp = naive_laplace_support_contains(ys, d_prime, scale)
    closer_dp = np.abs(ys - d_prime) < np.abs(ys - d)
    guess = np.where(in_d & ~in_dp, 0, np.where(in_dp & ~in_d, 1, closer_dp.astype(np.int64)))
    return guess.astype(np.int64)
