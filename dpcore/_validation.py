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
    "check_real",
    "check_bool",
    "check_alpha",
    "MIN_ALPHA",
    "check_normal_result",
    "as_real_array",
    "MAX_INT",
    "MAX_NOISE_SCALE",
    "check_noise_scale",
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


#: Largest integer accepted by :func:`check_positive_int` unless a caller says otherwise: the int64 range,
#: beyond which numpy arithmetic would wrap around and float conversion loses the value.
MAX_INT = 2**63 - 1

_NUMERIC_KINDS = frozenset("iuf")


def _real_from_object(name: str, arr: NDArray[Any]) -> NDArray[np.float64]:
    """Convert an object array element by element, refusing anything that is not a real number."""
    out = np.empty(arr.shape, dtype=float)
    for idx, item in np.ndenumerate(arr):
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (numbers.Real, np.integer, np.floating)):
            raise ValueError(f"{name} must be real numbers; got an element {item!r} of type {type(item).__name__}")
        try:
            out[idx] = float(item)
        except OverflowError:
            raise ValueError(
                f"{name} must be representable as a double (|x| <= 1.8e308); got an integer of "
                f"{len(str(abs(int(item))))} digits"
            ) from None
    return out


def as_real_array(name: str, value: Any) -> NDArray[np.float64]:
    """``value`` as a float64 array, refusing whatever is not a real number.

    The one conversion of numeric input in :mod:`dpcore`: bools (``True`` is
    not the number 1 here), complex numbers (numpy would drop the imaginary
    part with only a warning), strings and bytes (``"1.5"`` would be parsed),
    ``None`` (numpy would make it NaN), dates and ragged nestings are refused;
    integers too large for a double (``10**400``) raise :class:`ValueError`,
    not :class:`OverflowError`. NaN and infinity pass: the callers decide.

    Raises
    ------
    ValueError
        Naming ``name`` and the rule, for any of the inputs above.
    """
    if value is None or isinstance(value, (str, bytes, bool, np.bool_, complex, np.complexfloating)):
        raise ValueError(f"{name} must be a real number; got {value!r} of type {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be real numbers (a scalar or a rectangular array); got {value!r}") from None
    kind = arr.dtype.kind
    if kind in _NUMERIC_KINDS:
        return np.asarray(arr, dtype=np.float64)
    if kind == "O":
        return _real_from_object(name, arr)
    what = {"b": "bools", "c": "complex numbers", "U": "strings", "S": "bytes", "M": "dates", "m": "time deltas"}
    raise ValueError(f"{name} must be real numbers, not {what.get(kind, arr.dtype.name)}; got {value!r}")


def _as_float(name: str, value: Any) -> float:
    if isinstance(value, float):  # fast path (a numpy float64 is a float too)
        return float(value)
    arr = as_real_array(name, value)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar; got an array of shape {arr.shape}")
    return float(arr)


def check_real(name: str, value: Any) -> float:
    """Return ``value`` as a finite float, or raise.

    Raises
    ------
    ValueError
        If ``value`` is not a real scalar (see :func:`as_real_array`) or is NaN or infinite.
    """
    x = _as_float(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite; got {x}")
    return x


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` as a bool if it is one (``bool`` or ``numpy.bool_``), else raise.

    A flag is never read from another type: ``"False"`` is truthy, ``1``, ``0``
    and ``None`` would be read silently, so each is refused.

    Raises
    ------
    ValueError
        If ``value`` is not a ``bool`` or a ``numpy.bool_``.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False (a bool); got {value!r} of type {type(value).__name__}")


def check_normal_result(what: str, value: float, inputs: str) -> float:
    """Return a computed scale ``value`` if it is a finite double >= the smallest normal one, else raise.

    A noise scale that overflowed to ``inf`` or underflowed to 0 (or to a
    subnormal double, which keeps only a few significant bits, so the noise
    could be far smaller than the calibration asks) must not be returned as
    a number: a mechanism would add infinite noise or none.

    Raises
    ------
    ValueError
        Naming ``what`` and the ``inputs`` it was computed from.
    """
    if not (_TINY <= value < math.inf):
        raise ValueError(
            f"{what} = {value!r} from {inputs} is not a positive finite normal double "
            f"(the result overflowed or underflowed); use parameters of more moderate size"
        )
    return value


_TINY = float(np.finfo(np.float64).tiny)

#: Largest noise scale a sampler accepts: a standard exponential or normal draw is below 1e3 (a double
#: uniform gives -log(U) <= 745), so ``value + scale * draw`` stays finite for any |value| <= 1e307.
MAX_NOISE_SCALE = 1e304


def check_noise_scale(name: str, value: Any) -> float:
    """Return a noise scale as a float, refusing one too small or too large for the noise to be a number.

    A scale below the smallest normal double (2.2e-308) rounds the noise to 0
    or to a few bits; one above :data:`MAX_NOISE_SCALE` lets a draw overflow
    to infinity, which would then be released.

    Raises
    ------
    ValueError
        If ``value`` is not a finite real number in ``[2.2e-308, 1e304]``.
    """
    x = check_positive_finite(name, value)
    if not (_TINY <= x <= MAX_NOISE_SCALE):
        raise ValueError(
            f"{name} must lie in [{_TINY:.3g}, {MAX_NOISE_SCALE:g}] for the noise to be a finite number "
            f"that is not rounded away; got {x!r}"
        )
    return x


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
    arr = as_real_array(name, value)
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


#: Supported range of the subsampled Gaussian's ``s = sigma / sensitivity`` (its square and inverse square are doubles).
SUBSAMPLED_S_RANGE = (1e-100, 1e100)


def check_subsampled_gaussian(
    sigma: Any, sampling_rate: Any, sensitivity: Any = 1.0, names: tuple[str, str] = ("sigma", "sampling_rate")
) -> tuple[float, float]:
    """``(s, q)`` of a Poisson-subsampled Gaussian: ``s = sigma / sensitivity`` in [1e-100, 1e100], ``q`` in (0, 1].

    The one check of the three places that take these parameters (the closed-form profile, the privacy-loss laws
    and the RDP); ``names`` are the names the caller's signature uses for ``sigma`` and ``sampling_rate``.

    Raises
    ------
    ValueError
        Naming the parameter that breaks its rule.
    """
    sigma_name, rate_name = names
    sigma = check_positive_finite(sigma_name, sigma)
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    q = check_positive_finite(rate_name, sampling_rate)
    if q > 1.0:
        raise ValueError(f"{rate_name} must lie in (0, 1]; got {sampling_rate!r}")
    s = sigma / sensitivity
    lo, hi = SUBSAMPLED_S_RANGE
    if not lo <= s <= hi:
        what = "s = sigma / sensitivity" if sigma_name == "s" else f"{sigma_name} / sensitivity"
        raise ValueError(f"{what} must lie in [{lo:g}, {hi:g}] (its square in the doubles); got {s!r}")
    return s, q


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
    arr = as_real_array(name, value)
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


#: Smallest false-alarm probability a test accepts: the tests split ``alpha`` among their parts and take its
#: logarithm, so a subnormal ``alpha`` (5e-324) became 0 deep inside, refused under another name.
MIN_ALPHA = 1e-300


def check_alpha(name: str, value: Any) -> float:
    """Return a test's false-alarm probability as a float in [:data:`MIN_ALPHA`, 1).

    Raises
    ------
    ValueError
        If ``value`` is not a real scalar in the open interval (0, 1), or is below :data:`MIN_ALPHA` (1e-300).
    """
    x = check_probability_open(name, value)
    if x < MIN_ALPHA:
        raise ValueError(
            f"{name} must be >= {MIN_ALPHA:g} (it is split among the tests' parts, which must not underflow); got {x!r}"
        )
    return x


def check_positive_int(name: str, value: Any, minimum: int = 1, maximum: int = MAX_INT) -> int:
    """Return ``value`` as an int, or raise unless it is an integer in ``[minimum, maximum]``.

    A float with an integral value (``3.0``) is accepted; a bool is not.
    ``maximum`` defaults to :data:`MAX_INT` (the int64 range), so ``10**400``
    is a :class:`ValueError` here instead of an overflow later.

    Raises
    ------
    ValueError
        If ``value`` is not an integer (or integral float) in ``[minimum, maximum]``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    n = int(value)
    if n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {n}")
    if n > maximum:
        shown = str(n) if n < 10**30 else f"an integer of {len(str(n))} digits"
        raise ValueError(f"{name} must be an integer <= {maximum}; got {shown}")
    return n
