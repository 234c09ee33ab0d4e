"""Input validation shared by every public function of :mod:`dpcore`.

Every public entry point validates its arguments here, so that bad input is a
:class:`ValueError` that names the parameter and the rule it broke -- never a
silent NaN, a silently clipped epsilon, or a wrong number.
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

RNGLike = None | int | np.random.Generator | np.random.SeedSequence

__all__ = [
    "RNGLike",
    "as_generator",
    "as_seed_sequence",
    "seed_offset",
    "SEED_OFFSET_ENV",
    "check_positive_finite",
    "check_positive_finite_array",
    "check_array_above",
    "check_finite_array",
    "check_probability_open",
    "check_positive_int",
]


SEED_OFFSET_ENV = "DPCORE_SEED_OFFSET"


def seed_offset() -> int:
    """The seed-stream offset *k* read from ``$DPCORE_SEED_OFFSET`` (0 when unset or empty).

    Every integer seed that enters :mod:`dpcore` passes through
    :func:`as_seed_sequence`, which maps seed *s* to ``SeedSequence(s)`` when
    *k* = 0 and to ``SeedSequence([s, k])`` otherwise. Setting the variable
    therefore re-runs every seeded computation (every chapter, every worker
    process, which inherit the environment) under a different, independent
    stream, without editing a single seed: this is how ``tasks.py sweep``
    shows that no check passes only because of the seed it was given.

    Raises
    ------
    ValueError
        If the variable is set to anything but a non-negative integer.
    """
    raw = os.environ.get(SEED_OFFSET_ENV, "").strip()
    if not raw:
        return 0
    if not raw.isdigit():
        raise ValueError(f"${SEED_OFFSET_ENV} must be a non-negative integer; got {raw!r}")
    return int(raw)


def as_seed_sequence(rng: RNGLike) -> np.random.SeedSequence:
    """Turn a seed into a :class:`numpy.random.SeedSequence`: the one place seeds become streams.

    ``None`` draws fresh OS entropy; a ``SeedSequence`` is used as it is; an
    int seed *s* gives ``SeedSequence(s)``, or ``SeedSequence([s, k])`` when
    the seed-stream offset *k* = :func:`seed_offset` is not 0; a ``Generator``
    gives the ``SeedSequence`` of 256 bits drawn from it (so the root of a
    tree of streams, ``.spawn(...)``, is reproducible from the generator's state,
    and the generator advances).

    Raises
    ------
    ValueError
        If ``rng`` is a bool, a negative int or of another type, or the
        offset variable is malformed.
    """
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence([int(w) for w in rng.integers(0, 2**63, size=4)])
    if isinstance(rng, bool) or not isinstance(rng, numbers.Integral):
        raise ValueError(
            f"rng must be None, a non-negative int, a numpy SeedSequence or a numpy Generator; got {type(rng).__name__}"
        )
    if int(rng) < 0:
        raise ValueError(f"rng as an int seed must be non-negative; got {rng}")
    k = seed_offset()
    return np.random.SeedSequence(int(rng) if k == 0 else [int(rng), k])


def as_generator(rng: RNGLike) -> np.random.Generator:
    """Normalise ``rng`` to a :class:`numpy.random.Generator`.

    Parameters
    ----------
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        ``None`` draws fresh OS entropy; an int or a ``SeedSequence`` seeds a
        new PCG64 generator through :func:`as_seed_sequence` (so the same seed
        reproduces a result exactly, and ``$DPCORE_SEED_OFFSET`` moves every
        int seed to another stream); a ``Generator`` is used as it is.

    Raises
    ------
    ValueError
        If ``rng`` is of any other type (a float or a negative int, say).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.Generator(np.random.PCG64(as_seed_sequence(rng)))


def _as_float(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a real number, not a bool")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number; got {value!r}") from None
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar; got an array of shape {arr.shape}")
    return float(arr)


def check_positive_finite(name: str, value: Any) -> float:
    """Return ``value`` as a float, or raise if it is not finite and > 0.

    Raises
    ------
    ValueError
        If ``value`` is not a real scalar, is NaN or infinite, or is <= 0.
        The message names ``name`` and the rule.
    """
    x = _as_float(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite and > 0; got {x}")
    if x <= 0:
        raise ValueError(f"{name} must be > 0; got {x}")
    return x


def check_array_above(name: str, value: ArrayLike, bound: float, reason: str = "") -> NDArray[np.float64]:
    """Return ``value`` as a non-empty float array whose elements are all finite and > ``bound``.

    Raises
    ------
    ValueError
        If ``value`` is not numeric, is empty, contains NaN or infinity, or has an
        element <= ``bound``. The message names ``name``, the rule and ``reason``.
    """
    why = f" ({reason})" if reason else ""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be real numbers > {bound:g}; got {value!r}") from None
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite and > {bound:g}; it contains NaN or infinity")
    if np.any(arr <= bound):
        raise ValueError(f"{name} must be > {bound:g}{why}; its smallest element is {arr.min()}")
    return arr


def check_nonnegative_finite_array(name: str, value: ArrayLike) -> NDArray[np.float64]:
    """Return ``value`` as a non-empty float array whose elements are all finite and >= 0.

    Raises
    ------
    ValueError
        If ``value`` is not numeric, is empty, contains NaN or infinity, or has a
        negative element.
    """
    arr = check_finite_array(name, value)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0; its smallest element is {arr.min()}")
    return arr


def check_positive_finite_array(name: str, value: ArrayLike) -> NDArray[np.float64]:
    """Array version of :func:`check_positive_finite` (non-empty, every element finite and > 0)."""
    return check_array_above(name, value, 0.0)


def check_finite_array(name: str, value: ArrayLike) -> NDArray[np.float64]:
    """Return ``value`` as a float array, or raise if any element is NaN or infinite.

    Releasing a noisy version of a NaN or an infinity would leak that the true
    value is one, so mechanisms refuse such input.

    Raises
    ------
    ValueError
        If ``value`` is not numeric or contains NaN or +-inf.
    """
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be real numbers; got {value!r}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (NaN or infinity would be leaked by the release); got {value!r}")
    return arr


def check_probability_open(name: str, value: Any) -> float:
    """Return ``value`` as a float, or raise unless 0 < value < 1.

    Raises
    ------
    ValueError
        If ``value`` is not a real scalar, is NaN, or lies outside (0, 1).
    """
    x = _as_float(name, value)
    if not (0.0 < x < 1.0):
        raise ValueError(f"{name} must lie in the open interval (0, 1); got {x}")
    return x


def check_positive_int(name: str, value: Any, minimum: int = 1) -> int:
    """Return ``value`` as an int, or raise unless it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}")
    return int(value)
