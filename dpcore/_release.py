"""The one place where a noisy release is assembled from a true value and a noise draw."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import RNGLike, as_generator, check_finite_array, check_positive_int

NoiseDraw = Callable[[np.random.Generator, tuple[int, ...]], NDArray[np.float64]]


def release_with_noise(
    value: ArrayLike, draw: NoiseDraw, rng: RNGLike, size: int | None = None
) -> float | NDArray[np.float64]:
    """Return ``value + draw(generator, shape)``: a float for a scalar, else an array.

    ``shape`` is ``value.shape``, or ``(size, *value.shape)`` for ``size``
    independent releases. ``value`` is validated first (NaN or infinity raise
    :class:`ValueError`, since releasing a noisy version would leak that the
    true value is one; ``size`` must be an integer >= 1); ``rng`` is normalised
    with :func:`dpcore._validation.as_generator`. A release that is not finite
    (``value`` within a noise draw of the largest double) is refused rather
    than returned as +-inf.

    Raises
    ------
    ValueError
        On a non-finite ``value``, a bad ``size``, or a release that overflowed.
    """
    arr = check_finite_array("value", value)
    shape = arr.shape if size is None else (check_positive_int("size", size), *arr.shape)
    with np.errstate(over="ignore"):
        noisy = arr + draw(as_generator(rng), shape)
    if not np.all(np.isfinite(noisy)):
        raise ValueError(
            "value plus noise overflowed the double range; value and the noise scale must be far below 1e308"
        )
    return float(noisy) if noisy.ndim == 0 else noisy
