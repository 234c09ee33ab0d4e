"""Deliberately flawed mechanisms, reproduced from the seeds, for negative controls.

Each function here implements a mistake that a reader who trusted a seed
could make. The chapters use them to show that the book's checks *catch*
such mistakes, and the auditing chapter audits them. **Never use them to
release data.**
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._release import release_with_noise
from ._validation import RNGLike, check_positive_finite

__all__ = [
    "laplace_stray_factor_two",
    "laplace_per_coordinate_sensitivity",
    "gaussian_variance_as_std",
]


def laplace_stray_factor_two(
    value: ArrayLike, sensitivity: float, epsilon: float, rng: RNGLike = None
) -> float | NDArray[np.float64]:
    r"""Laplace noise of scale :math:`\Delta/(2\varepsilon)`: the stray factor 2 of seed 000.

    Seed 000's ratio derivation writes :math:`e^{-\frac{\varepsilon}{2\Delta f}(\dots)}`;
    an implementer who trusted it would halve the scale. The result is only
    :math:`2\varepsilon`-DP.

    Raises
    ------
    ValueError
        On non-positive or non-finite ``sensitivity``/``epsilon`` or non-finite ``value``.
    """
    scale = check_positive_finite("sensitivity", sensitivity) / (2 * check_positive_finite("epsilon", epsilon))
    return release_with_noise(value, lambda gen, shape: gen.laplace(0.0, scale, size=shape), rng)


def laplace_per_coordinate_sensitivity(
    value: ArrayLike, per_coordinate_sensitivity: float, epsilon: float, rng: RNGLike = None
) -> float | NDArray[np.float64]:
    r"""A d-dimensional Laplace release calibrated to the per-coordinate sensitivity.

    The correct scale is :math:`\Delta_1 f/\varepsilon` with the L1 sensitivity
    of the whole vector; using the per-coordinate bound :math:`\Delta_\infty`
    instead gives only :math:`(\Delta_1/\Delta_\infty)\,\varepsilon`-DP
    (up to :math:`d\varepsilon`).

    Raises
    ------
    ValueError
        On invalid parameters or non-finite ``value``.
    """
    scale = check_positive_finite("per_coordinate_sensitivity", per_coordinate_sensitivity) / check_positive_finite(
        "epsilon", epsilon
    )
    return release_with_noise(value, lambda gen, shape: gen.laplace(0.0, scale, size=shape), rng)


def gaussian_variance_as_std(
    value: ArrayLike, sigma: float, rng: RNGLike = None
) -> float | NDArray[np.float64]:
    r"""Seed 002's sampling line ``numpy.random.normal(0, sigma ** 2)``.

    ``numpy.random.normal`` takes the *standard deviation* as its second
    argument, so this adds noise of standard deviation :math:`\sigma^2`
    instead of :math:`\sigma`: too little whenever :math:`\sigma < 1`.

    Raises
    ------
    ValueError
        On non-positive or non-finite ``sigma`` or non-finite ``value``.
    """
    sigma = check_positive_finite("sigma", sigma)
    return release_with_noise(value, lambda gen, shape: gen.normal(0.0, sigma**2, size=shape), rng)
