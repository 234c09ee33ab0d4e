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
    with :func:`dpcore._validation.as_generator`.
    """
    arr = check_finite_array("value", value)
    shape = arr.shape if size is None else (check_positive_int("size", size), *arr.shape)
    noisy = arr + draw(as_generator(rng), shape)
    return float(noisy) if noisy.ndim == 0 else noisy
