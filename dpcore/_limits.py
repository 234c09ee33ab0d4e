"""Documented work limits: one check, one message, for every request whose cost grows with an argument.

A function whose time or memory grows with an argument (samples, bins, data
sets, pairs) takes a keyword ``max_...`` with a documented default and calls
:func:`check_limit` *before doing any work*. Going past the default is allowed,
but only explicitly: the error names the argument, the limit, the parameter that
raises it, and what the request would cost.
"""

from __future__ import annotations

from typing import Any

from ._validation import check_positive_int

__all__ = ["check_limit", "check_limit_value"]


def check_limit_value(name: str, value: Any) -> int:
    """A ``max_...`` keyword itself: an integer >= 1 (``ValueError`` naming it otherwise)."""
    return check_positive_int(name, value)


def check_limit(name: str, value: int, limit_name: str, limit: int, cost: str = "") -> int:
    """Return ``value`` if it is at most ``limit``; otherwise raise a ``ValueError`` saying how to go past it.

    Parameters
    ----------
    name : str
        The argument checked (``"n_samples"``).
    value : int
        Its value (already validated as an integer).
    limit_name : str
        The keyword that holds the limit (``"max_samples"``).
    limit : int
        The limit in force.
    cost : str
        What the request would cost (``"about 25 s per 10**9 samples on one core"``), quoted in the error.

    Raises
    ------
    ValueError
        If ``value > limit``: names ``name``, the limit and ``limit_name``.
    """
    if value > limit:
        why = f" ({cost})" if cost else ""
        raise ValueError(
            f"{name} = {value:,} exceeds the limit {limit_name} = {limit:,}{why}; "
            f"pass {limit_name}={value} (or more) to go past it knowingly"
        )
    return value
