"""The one place where a noisy release is assembled from a true value and a noise draw."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import RNGLike, as_generator, check_finite_array

NoiseDraw = Callable[[np.random.Generator, tuple[int, ...]], NDArray[np.float64]]


def release_with_noise(value: ArrayLike, draw: NoiseDraw, rng: RNGLike) -> float | NDArray[np.float64]:
    """Return ``value + draw(generator, value.shape)``: a float for a scalar, else an array.

    ``value`` is validated first (NaN or infinity raise :class:`ValueError`, since
    releasing a noisy version would leak that the true value is one); ``rng`` is
    normalised with :func:`dpcore._validation.as_generator`.
    """
    arr = check_finite_array("value", value)
    noisy = arr + draw(as_generator(rng), arr.shape)
    return float(noisy) if noisy.ndim == 0 else noisy
