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
get integer noise from the discrete Laplace or discrete Gaussian law, sampled
*exactly* by Algorithms 1--3 of Canonne, Kamath & Steinke (2020) with integer
arithmetic only (rational parameters, uniform integers, Bernoulli trials of
rational probability). Both supports are all of :math:`\mathbb Z`, so no
output is impossible under one input and possible under the other.

Randomness
----------
With ``rng=None`` every uniform integer comes from the operating system's
cryptographically secure generator (:func:`secrets.token_bytes`, i.e.
``os.urandom``), turned into exactly uniform integers by rejection. An int
seed or a ``numpy.random.Generator`` is accepted for *reproducible
verification only* (PCG64 is not a cryptographic generator).

Vectorisation
-------------
The algorithms are loops with data-dependent trip counts; here each loop runs
over all the samples still in it at once (numpy int64 arrays), which keeps the
exactness (every comparison is between integers) and gives about a million
samples per second.
"""

from __future__ import annotations

import math
import numbers
import secrets
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import RNGLike, as_generator, check_finite_array, check_positive_finite, check_positive_int

__all__ = [
    "as_fraction",
    "bernoulli_exp",
    "sample_discrete_laplace",
    "sample_discrete_gaussian",
    "discrete_laplace_pmf",
    "discrete_gaussian_pmf",
    "discrete_laplace_mechanism",
    "discrete_gaussian_mechanism",
]

_MAX_INT = 1 << 62
_MAX_PARAM = 1 << 24


# --------------------------------------------------------------------------- integer sources


class _Uniform:
    """Exactly uniform integers in ``[0, m)`` for ``1 <= m <= 2**62``, vectorised."""

    def __init__(self, rng: RNGLike) -> None:
        self.secure = rng is None
        self.gen = None if self.secure else as_generator(rng)

    def below(self, m: int, size: int) -> NDArray[np.int64]:
        if not (1 <= m <= _MAX_INT):
            raise ValueError(f"internal: uniform range {m} outside [1, 2**62]")
        if size == 0:
            return np.zeros(0, dtype=np.int64)
        if not self.secure:
            assert self.gen is not None
            return self.gen.integers(0, m, size=size, dtype=np.int64)
        if m == 1:
            return np.zeros(size, dtype=np.int64)
        shift = np.uint64(64 - (m - 1).bit_length())
        out = np.empty(size, dtype=np.int64)
        filled = 0
        while filled < size:
            need = size - filled
            raw = np.frombuffer(secrets.token_bytes(8 * (need + need // 2 + 8)), dtype=np.uint64) >> shift
            ok = raw[raw < np.uint64(m)][:need]  # rejection: exactly uniform on [0, m)
            out[filled : filled + ok.size] = ok.astype(np.int64)
            filled += ok.size
        return out

    def bernoulli(self, num: NDArray[np.int64] | int, den: int, size: int) -> NDArray[np.bool_]:
        """Independent Bernoulli(num_i / den) trials (``0 <= num_i <= den``)."""
        return self.below(den, size) < num


def _bernoulli_exp(src: _Uniform, num: NDArray[np.int64], den: int) -> NDArray[np.bool_]:
    r"""Exact Bernoulli(exp(-num_i/den)) trials, Canonne, Kamath & Steinke (2020), Algorithm 1.

    For :math:`\gamma \in [0,1]`: draw :math:`A_k \sim \mathrm{Bern}(\gamma/k)`
    for :math:`k = 1, 2, \dots` until the first :math:`A_K = 0`; then
    :math:`P(K > k) = \gamma^k/k!`, so :math:`P(K \text{ odd}) = e^{-\gamma}`.
    For :math:`\gamma > 1`,
    :math:`\lfloor\gamma\rfloor` trials of :math:`\mathrm{Bern}(e^{-1})` must
    all succeed, then one :math:`\mathrm{Bern}(e^{-(\gamma - \lfloor\gamma\rfloor)})`.
    :math:`\mathrm{Bern}(\gamma/k)` is drawn as :math:`\mathrm{Bern}(\text{num}/\text{den})
    \wedge \mathrm{Bern}(1/k)`, so no integer exceeds ``den``.
    """
    num = np.asarray(num)
    n = num.shape[0]
    whole = num // den
    frac = num - whole * den
    alive = np.ones(n, dtype=bool)
    # floor(gamma) trials of Bern(exp(-1)), only for the elements that need them
    i = 1
    while True:
        need = np.flatnonzero(alive & (whole >= i))
        if need.size == 0:
            break
        alive[need] = _bernoulli_exp_one(src, need.size)
        i += 1
    # one Bern(exp(-frac/den)) for the survivors
    idx = np.flatnonzero(alive)
    if idx.size:
        alive[idx] = _bernoulli_exp_small(src, frac[idx].astype(np.int64), den)
    return alive


def _bernoulli_exp_small(src: _Uniform, num: NDArray[np.int64], den: int) -> NDArray[np.bool_]:
    """Algorithm 1 for gamma = num/den in [0, 1], vectorised."""
    n = num.shape[0]
    k_final = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    k = 1
    while active.size:
        a = src.bernoulli(num[active], den, active.size) & src.bernoulli(1, k, active.size)
        stop = active[~a]
        k_final[stop] = k
        active = active[a]
        k += 1
    return np.asarray((k_final % 2) == 1, dtype=bool)


def _bernoulli_exp_one(src: _Uniform, size: int) -> NDArray[np.bool_]:
    return _bernoulli_exp_small(src, np.ones(size, dtype=np.int64), 1)


def bernoulli_exp(gamma: Any, size: int | None = None, rng: RNGLike = None) -> Any:
    r"""Exact Bernoulli trials with success probability :math:`e^{-\gamma}` for rational :math:`\gamma > 0`.

    Algorithm 1 of Canonne, Kamath & Steinke (2020), integer arithmetic only:
    for :math:`\gamma \le 1` draw :math:`A_k \sim \mathrm{Bern}(\gamma/k)`,
    :math:`k = 1, 2, \dots` until the first failure at :math:`K`; then
    :math:`P(K \text{ odd}) = \sum_{k \ge 1} (\gamma^{k-1}/(k-1)! - \gamma^k/k!)[k \text{ odd}] = e^{-\gamma}`.
    For :math:`\gamma > 1`, :math:`\lfloor\gamma\rfloor` independent
    :math:`\mathrm{Bern}(e^{-1})` trials and one
    :math:`\mathrm{Bern}(e^{-(\gamma-\lfloor\gamma\rfloor)})` must all succeed.

    Parameters
    ----------
    gamma : int, Fraction, str or float
        Read exactly by :func:`as_fraction`.
    size : int, optional
        Number of trials; ``None`` returns one bool.
    rng : None, int or Generator
        ``None``: cryptographically secure randomness.

    Raises
    ------
    ValueError
        If ``gamma`` is not a positive rational of modest size or ``size`` < 1.
    """
    g = as_fraction("gamma", gamma)
    n = _size(size)
    out = _bernoulli_exp(_Uniform(rng), np.full(n, g.numerator, dtype=np.int64), g.denominator)
    return bool(out[0]) if size is None else out


# --------------------------------------------------------------------------- parameters


def as_fraction(name: str, value: Any) -> Fraction:
    """Convert a positive rational parameter exactly.

    Ints and ``Fraction`` are taken as they are; a float or a string is read
    through its decimal representation (``0.1`` is exactly 1/10, not the
    binary double nearest to it), so the parameter is the number the user
    wrote. Numerator and denominator must be below ``2**24``.

    Raises
    ------
    ValueError
        If ``value`` is not a finite positive rational of that size.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a positive rational number, not a bool")
    try:
        if isinstance(value, Fraction | numbers.Integral):
            fr = Fraction(value)
        elif isinstance(value, str):
            fr = Fraction(value.strip())
        else:
            check_positive_finite(name, value)
            fr = Fraction(repr(float(value)))
    except (ValueError, ZeroDivisionError, TypeError):
        raise ValueError(f"{name} must be a finite positive rational number; got {value!r}") from None
    if fr <= 0:
        raise ValueError(f"{name} must be > 0; got {value!r}")
    if fr.numerator >= _MAX_PARAM or fr.denominator >= _MAX_PARAM:
        raise ValueError(f"{name} = {fr} has a numerator or denominator >= 2**24; pass a simpler rational (a Fraction)")
    return fr


def _size(size: int | None) -> int:
    return 1 if size is None else check_positive_int("size", size)


def _shape_out(x: NDArray[np.int64], size: int | None) -> Any:
    return int(x[0]) if size is None else x


# --------------------------------------------------------------------------- samplers


def _discrete_laplace(src: _Uniform, s: int, t: int, n: int) -> NDArray[np.int64]:
    """Algorithm 2 of Canonne, Kamath & Steinke (2020): n draws of Lap_Z(t/s), vectorised."""
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        m = max(64, int(1.7 * (n - filled)) + 16)
        u = src.below(t, m)
        keep = _bernoulli_exp(src, u, t)  # D ~ Bern(exp(-U/t)); reject if 0
        u = u[keep]
        v = np.zeros(u.size, dtype=np.int64)
        going = np.arange(u.size)
        while going.size:  # V = number of Bern(exp(-1)) successes before the first failure
            a = _bernoulli_exp_one(src, going.size)
            v[going[a]] += 1
            going = going[a]
        x = u + t * v
        y = x // s
        b = src.below(2, y.size)
        ok = ~((b == 1) & (y == 0))  # reject B=1, Y=0 (so 0 is not counted twice)
        z = ((1 - 2 * b) * y)[ok]
        take = min(z.size, n - filled)
        out[filled : filled + take] = z[:take]
        filled += take
    return out


def sample_discrete_laplace(scale: Any, size: int | None = None, rng: RNGLike = None) -> Any:
    r"""Exact samples of the discrete Laplace law :math:`\mathrm{Lap}_{\mathbb Z}(b)`.

    .. math:: P(Z = z) = \frac{e^{1/b} - 1}{e^{1/b} + 1}\, e^{-|z|/b}, \qquad z \in \mathbb Z

    by Algorithm 2 of Canonne, Kamath & Steinke (2020) with ``b = t/s``, using
    only integer arithmetic and exact Bernoulli trials (Algorithm 1).

    Parameters
    ----------
    scale : int, Fraction, str or float
        The scale :math:`b > 0`, read exactly by :func:`as_fraction`.
    size : int, optional
        Number of samples; ``None`` returns one Python int.
    rng : None, int or numpy.random.Generator
        ``None`` (default): cryptographically secure randomness (``secrets``).
        A seed or Generator: reproducible, for verification only.

    Raises
    ------
    ValueError
        If ``scale`` is not a positive rational of modest size or ``size`` < 1.
    """
    b = as_fraction("scale", scale)
    n = _size(size)
    return _shape_out(_discrete_laplace(_Uniform(rng), b.denominator, b.numerator, n), size)


def sample_discrete_gaussian(sigma2: Any, size: int | None = None, rng: RNGLike = None) -> Any:
    r"""Exact samples of the discrete Gaussian :math:`\mathcal N_{\mathbb Z}(0, \sigma^2)`.

    .. math:: P(Z = z) = \frac{e^{-z^2/(2\sigma^2)}}{\sum_{y\in\mathbb Z} e^{-y^2/(2\sigma^2)}}

    by Algorithm 3 of Canonne, Kamath & Steinke (2020): with
    :math:`t = \lfloor\sigma\rfloor + 1`, draw :math:`Y \sim \mathrm{Lap}_{\mathbb Z}(t)`
    and accept it with probability
    :math:`\exp(-(|Y| - \sigma^2/t)^2 / (2\sigma^2))`, a rational exponent,
    so the trial is exact.

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
        If ``sigma2`` is not a positive rational of modest size or ``size`` < 1.
    """
    s2 = as_fraction("sigma2", sigma2)
    a, c = s2.numerator, s2.denominator
    n = _size(size)
    src = _Uniform(rng)
    t = math.isqrt(a * c) // c + 1  # floor(sqrt(a/c)) + 1
    den = 2 * a * c * t * t
    if den > _MAX_INT:
        raise ValueError(f"sigma2 = {s2} is too large for the exact sampler's int64 arithmetic")
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        m = max(64, int(1.6 * (n - filled)) + 16)
        y = _discrete_laplace(src, 1, t, m)
        # gamma = (|Y| - sigma^2/t)^2 / (2 sigma^2) = (|Y| c t - a)^2 / (2 a c t^2)
        diff = np.abs(y) * (c * t) - a
        if np.abs(diff).max() >= 1 << 31:  # diff**2 would overflow int64: use Python ints
            diff = diff.astype(object)
        keep = _bernoulli_exp(src, diff * diff, den)
        z = y[keep]
        take = min(z.size, n - filled)
        out[filled : filled + take] = z[:take]
        filled += take
    return _shape_out(out, size)


def discrete_laplace_pmf(z: ArrayLike, scale: Any) -> NDArray[np.float64]:
    r"""The pmf :math:`\tanh(1/(2b))\, e^{-|z|/b}` of :math:`\mathrm{Lap}_{\mathbb Z}(b)` (floats).

    Canonne, Kamath & Steinke (2020), Definition 28; the normaliser
    :math:`\sum_z e^{-|z|/b} = \coth(1/(2b))` is summed in closed form.

    Raises
    ------
    ValueError
        If ``scale`` is not a positive rational or ``z`` is not integer-valued and finite.
    """
    b = float(as_fraction("scale", scale))
    z = _integer_array("z", z).astype(float)
    return np.asarray(np.tanh(1 / (2 * b)) * np.exp(-np.abs(z) / b), dtype=np.float64)


def discrete_gaussian_pmf(z: ArrayLike, sigma2: Any) -> NDArray[np.float64]:
    r"""The pmf :math:`e^{-z^2/(2\sigma^2)}/\sum_y e^{-y^2/(2\sigma^2)}` of :math:`\mathcal N_{\mathbb Z}(0,\sigma^2)`.

    Canonne, Kamath & Steinke (2020), Definition 1. The normaliser is summed over
    :math:`|y| \le 40\sigma + 10`; the omitted mass is below :math:`e^{-800}` relative.

    Raises
    ------
    ValueError
        If ``sigma2`` is not a positive rational or ``z`` is not integer-valued and finite.
    """
    s2 = float(as_fraction("sigma2", sigma2))
    k = int(40 * math.sqrt(s2)) + 10
    ys = np.arange(-k, k + 1, dtype=float)
    norm = np.exp(-ys * ys / (2 * s2)).sum()
    z = _integer_array("z", z).astype(float)
    return np.asarray(np.exp(-z * z / (2 * s2)) / norm, dtype=np.float64)


def _integer_array(name: str, value: ArrayLike) -> NDArray[np.int64]:
    arr = np.asarray(value)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    farr = check_finite_array(name, arr)
    if not np.all(farr == np.round(farr)) or np.any(np.abs(farr) >= 2.0**62):
        raise ValueError(f"{name} must be integers (this mechanism works on an integer-valued query); got {value!r}")
    return farr.astype(np.int64)


def discrete_laplace_mechanism(value: ArrayLike, sensitivity: int, epsilon: Any, rng: RNGLike = None) -> Any:
    r"""Release an integer query with exact discrete Laplace noise: :math:`\varepsilon`-DP.

    .. math:: M(D) = f(D) + Z, \qquad Z \sim \mathrm{Lap}_{\mathbb Z}(\Delta/\varepsilon)

    For neighbours with :math:`|f(D) - f(D')| \le \Delta` the ratio of output
    probabilities is :math:`e^{(|z - f(D')| - |z - f(D)|)\varepsilon/\Delta} \le e^{\varepsilon}`
    by the triangle inequality, exactly as for the continuous Laplace
    mechanism. The noise is sampled exactly with integer arithmetic only
    (Canonne, Kamath & Steinke 2020, Algorithm 2), so there is no
    floating-point side channel (Mironov 2012).

    Parameters
    ----------
    value : int or array_like of int
        The true integer answer(s); each coordinate gets independent noise.
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
        If ``value`` is not integer-valued and finite, ``sensitivity`` is not a
        positive integer, or ``epsilon`` is not a positive rational.
    """
    delta_f = check_positive_int("sensitivity", sensitivity)
    eps = as_fraction("epsilon", epsilon)
    arr = _integer_array("value", value)
    scale = Fraction(delta_f) / eps
    flat = arr.reshape(-1)
    noise = _discrete_laplace(_Uniform(rng), scale.denominator, scale.numerator, max(1, flat.size))[: flat.size]
    out = (flat + noise).reshape(arr.shape)
    return int(out) if out.ndim == 0 else out


def discrete_gaussian_mechanism(value: ArrayLike, sigma2: Any, rng: RNGLike = None) -> Any:
    r"""Release an integer query with exact discrete Gaussian noise :math:`\mathcal N_{\mathbb Z}(0,\sigma^2)`.

    Canonne, Kamath & Steinke (2020) show that for integer queries of L2
    sensitivity :math:`\Delta` this satisfies
    :math:`\tfrac12(\Delta/\sigma)^2`-concentrated DP, as the continuous
    Gaussian mechanism does; the noise is sampled exactly (their Algorithm 3).

    Raises
    ------
    ValueError
        If ``value`` is not integer-valued or ``sigma2`` is not a positive rational.
    """
    arr = _integer_array("value", value)
    flat = arr.reshape(-1)
    noise = np.asarray(sample_discrete_gaussian(sigma2, max(1, flat.size), rng))[: flat.size]
    out = (flat + noise).reshape(arr.shape)
    return int(out) if out.ndim == 0 else out
