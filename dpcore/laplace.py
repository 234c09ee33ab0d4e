"""The Laplace distribution and the Laplace mechanism.

The mechanism releases ``f(D) + Lap(0, b)`` with ``b = sensitivity / epsilon``
per coordinate, where ``sensitivity`` is the global L1 sensitivity of ``f``
(Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, Definition 3.3).
It is epsilon-differentially private (Dwork & Roth 2014, Theorem 3.6).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._release import release_with_noise
from ._validation import RNGLike, check_positive_finite

__all__ = ["laplace_scale", "laplace_mechanism"]


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
        The scale ``b`` (Dwork & Roth 2014, Definition 3.3).

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is <= 0, NaN or infinite.
    """
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    epsilon = check_positive_finite("epsilon", epsilon)
    return sensitivity / epsilon


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
        If ``sensitivity`` or ``epsilon`` is <= 0, NaN or infinite, or if
        ``value`` contains NaN or infinity (its release would leak that).

    Notes
    -----
    This is the textbook floating-point mechanism; it is exactly epsilon-DP
    over the reals but, as Mironov (2012) showed, not over doubles.
    """
    scale = laplace_scale(sensitivity, epsilon)
    return release_with_noise(value, lambda gen, shape: gen.laplace(0.0, scale, size=shape), rng)
