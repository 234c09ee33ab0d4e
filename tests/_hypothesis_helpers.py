"""Shared pieces of the property tests (hypothesis): hostile-argument strategies and "an answer or a ValueError".

The property files (test_properties.py, test_properties_checks.py, test_pld_properties.py) each call a
function with arguments of every kind a hostile caller might pass and accept either a valid answer or a
ValueError; any other exception fails the test. What they share is here; each file keeps its own bounds
(how large the integers, how long the strings), which are arguments of :func:`any_value`.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

T = TypeVar("T")

#: 60 examples, no deadline (the first call of a function may build tables).
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def any_value(
    *,
    int_bound: int | None,
    text_size: int,
    complex_magnitude: float,
    extra: tuple[st.SearchStrategy[Any], ...] = (),
) -> st.SearchStrategy[Any]:
    """Any float (NaN and infinities included), integers in ``[-int_bound, int_bound]`` (none if ``None``),
    bools, ``None``, short strings, complex numbers, then the ``extra`` strategies, in that order."""
    parts: list[st.SearchStrategy[Any]] = [st.floats(allow_nan=True, allow_infinity=True)]
    if int_bound is not None:
        parts.append(st.integers(min_value=-int_bound, max_value=int_bound))
    parts += [
        st.booleans(),
        st.none(),
        st.text(max_size=text_size),
        st.complex_numbers(max_magnitude=complex_magnitude),
        *extra,
    ]
    return st.one_of(*parts)


def answer_or_value_error(thunk: Callable[[], T], *, warnings_are_errors: bool = False) -> T | None:
    """``thunk()``, or ``None`` if it raised ValueError (any other exception propagates and fails the test).

    With ``warnings_are_errors`` a numpy RuntimeWarning or ComplexWarning raised inside is an error too.
    """
    with warnings.catch_warnings() if warnings_are_errors else contextlib.nullcontext():
        if warnings_are_errors:
            warnings.simplefilter("error", RuntimeWarning)
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            return thunk()
        except ValueError:
            return None
