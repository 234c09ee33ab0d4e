"""The Laplace distribution and the Laplace mechanism.

The mechanism releases ``f(D) + Lap(0, b)`` with ``b = sensitivity / epsilon``
per coordinate, where ``sensitivity`` is the global L1 sensitivity of ``f``
(Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, Definition 3.3).
It is epsilon-differentially private (Dwork & Roth 2014, Theorem 3.6).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._release import release_with_noise
from ._rounding import ceil_double
from ._validation import (
    MAX_NOISE_SCALE,
    RNGLike,
    check_noise_scale,
    check_normal_result,
    check_positive_finite,
    check_positive_int,
)

__all__ = ["laplace_scale", "laplace_mechanism", "laplace_noise"]

_SHIFT_63 = np.uint64(63)


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    r"""Scale of the Laplace noise that makes a query epsilon-DP.

    .. math:: b = \Delta_1 f / \varepsilon

    Parameters
    ----------
    sensitivity : float
        Global L1 sensitivity :math:`\Delta_1 f` of the query, finite and > 0.
    epsilon : float
        Privacy parameter, finite and > 0.

    Returns
    -------
    float
        The scale ``b`` (Dwork & Roth 2014, Definition 3.3), rounded up to the next double where the quotient
        is not one (so that the mechanism's epsilon ``sensitivity / b`` is at most ``epsilon`` exactly).

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is not a real number (complex, bool,
        string), is <= 0, NaN or infinite, or if the quotient overflows to
        infinity or underflows below the smallest normal double (``1 /
        5e-324`` or ``5e-324 / 1e300``): a mechanism would then add infinite
        noise or none.
    """
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    epsilon = check_positive_finite("epsilon", epsilon)
    inputs = f"sensitivity={sensitivity!r}, epsilon={epsilon!r}"
    check_normal_result("the Laplace scale sensitivity / epsilon", sensitivity / epsilon, inputs)
    # rounded up, never to nearest: a scale one ulp below sensitivity / epsilon is (epsilon + 1 ulp)-DP
    return ceil_double(Fraction(sensitivity) / Fraction(epsilon), "the Laplace scale sensitivity / epsilon")


def laplace_noise(gen: np.random.Generator, shape: int | tuple[int, ...], scale: float) -> NDArray[np.float64]:
    r"""Independent :math:`\mathrm{Lap}(0, b)` draws of the given shape: the one Laplace sampler of dpcore.

    The noise is built as :math:`b\,E S` with :math:`E` a standard exponential
    and :math:`S` a uniformly random sign: if :math:`E \sim \mathrm{Exp}(1)` and
    :math:`S = \pm 1` with probability 1/2 independently, :math:`SE` has
    density :math:`\tfrac12 e^{-|x|}`, the standard Laplace law (Kotz,
    Kozubowski & Podgórski 2001, Prop. 2.2.1). The sign is set directly in
    the IEEE sign bit from raw generator bits (64 signs per 64-bit draw),
    which is cheaper than the logarithm inside ``Generator.laplace``.

    Parameters
    ----------
    gen : numpy.random.Generator
        The generator (normalise a seed first with :func:`dpcore.as_generator`).
    shape : int or tuple of int
        Output shape.
    scale : float
        The Laplace scale ``b``, in ``[2.2e-308, 1e304]`` (below, the noise
        would round to 0; above, a draw could overflow to infinity).

    Raises
    ------
    ValueError
        If ``gen`` is not a numpy Generator, ``scale`` is not a finite real
        number in ``[2.2e-308, 1e304]``, or ``shape`` is not a non-negative
        integer or a tuple of them.
    """
    if not isinstance(gen, np.random.Generator):
        raise ValueError(f"gen must be a numpy Generator (see dpcore.as_generator); got {type(gen).__name__}")
    scale = check_noise_scale("scale", scale)
    if isinstance(shape, tuple):
        shape = tuple(check_positive_int("shape", n, minimum=0) for n in shape)
    else:
        shape = check_positive_int("shape", shape, minimum=0)
    e = gen.standard_exponential(shape)
    flat = e.reshape(-1)
    raw = gen.bit_generator.random_raw(-(-flat.size // 64))
    signs = np.unpackbits(raw.view(np.uint8), count=flat.size).astype(np.uint64)
    np.left_shift(signs, _SHIFT_63, out=signs)
    view = flat.view(np.uint64)
    np.bitwise_or(view, signs, out=view)  # e >= 0, so OR sets the sign exactly when the bit is 1
    if scale != 1.0:
        np.multiply(e, scale, out=e)
    return e


def laplace_mechanism(
    value: ArrayLike,
    sensitivity: float,
    epsilon: float,
    rng: RNGLike = None,
) -> float | NDArray[np.float64]:
    r"""Release ``value`` with Laplace noise calibrated to epsilon-DP.

    .. math:: M(D) = f(D) + (Y_1, \dots, Y_d), \quad Y_i \stackrel{iid}{\sim} \mathrm{Lap}(0, \Delta_1 f/\varepsilon)

    Parameters
    ----------
    value : float or array_like
        The true answer :math:`f(D)`. A scalar gives a float; an array gives
        an array of the same shape with independent noise per coordinate.
    sensitivity : float
        The global **L1** sensitivity of the whole (vector) query, > 0. For a
        d-dimensional query this is the L1 norm bound over all coordinates,
        not the per-coordinate sensitivity.
    epsilon : float
        Privacy parameter, finite and > 0.
    rng : None, int or numpy.random.Generator, optional
        Source of randomness; an int seed reproduces the release exactly.

    Returns
    -------
    float or numpy.ndarray
        The noisy release.

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is <= 0, NaN or infinite, if the
        scale ``sensitivity / epsilon`` is not in ``[2.2e-308, 1e304]`` (below,
        the noise would round to 0; above, a draw could overflow to infinity;
        the message names both), or if ``value`` contains NaN or infinity (its
        release would leak that).

    Notes
    -----
    This is the textbook floating-point mechanism; it is exactly epsilon-DP
    over the reals but, as Mironov (2012) showed, not over doubles.
    """
    scale = laplace_scale(sensitivity, epsilon)
    if scale > MAX_NOISE_SCALE:  # else laplace_noise would refuse it as "scale", which is not a parameter here
        raise ValueError(
            f"sensitivity / epsilon = {sensitivity!r} / {epsilon!r} = {scale!r} is a Laplace scale above "
            f"{MAX_NOISE_SCALE:g}, where a draw could overflow to infinity; use a smaller sensitivity or a larger "
            "epsilon"
        )
    return release_with_noise(value, lambda gen, shape: laplace_noise(gen, shape, scale), rng)
