"""Shared pieces of the oracle tests: example counts, log-uniform strategies with corners, the runner.

Each property test runs a hypothesis search whose body never raises: every example is judged by
:func:`_record.example` (violations collected, the example logged), and the test fails at the end
with all violations found. So one fault does not stop the search (the table of ``tasks.py oracle``
counts every example), and an ``@example`` of a known fault never hides the rest of the domain.

``DPCORE_ORACLE_EXAMPLES`` sets the number of generated examples per family (default 30; CI's
derandomised profile ``HYPOTHESIS_PROFILE=ci`` from ``tests/conftest.py`` makes them the same on every run).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

#: Generated examples per family.
EXAMPLES = max(1, int(os.environ.get("DPCORE_ORACLE_EXAMPLES", "30")))

#: Smallest positive double, and the largest value the strategies go to.
TINY = 5e-324
HUGE = 1e300


def oracle_settings(share: float = 1.0) -> settings:
    """``share`` of :data:`EXAMPLES` (at least 1), no deadline, no shrinking (the body never fails)."""
    return settings(
        max_examples=max(1, round(EXAMPLES * share)),
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate],
    )


def log_uniform(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Log-uniform on ``[lo, hi]`` (both > 0)."""
    a, b = math.log10(lo), math.log10(hi)
    return st.floats(a, b).map(lambda t: min(max(10.0**t, lo), hi))


def spread(
    lo: float, hi: float, core: tuple[float, float] | None = None, corners: Sequence[float] = ()
) -> st.SearchStrategy[float]:
    """The whole range log-uniformly, a core range log-uniformly (where most users are), and the corners."""
    parts = [st.sampled_from([lo, hi, *corners]), log_uniform(lo, hi)]
    if core is not None:
        parts.append(log_uniform(*core))
    return st.one_of(*parts)


def probability(lo: float = TINY, core: tuple[float, float] = (1e-12, 0.5)) -> st.SearchStrategy[float]:
    """A delta in ``[lo, 1)``: log-uniform in ``[lo, 0.5]``, near 1 as ``1 - u`` (u log-uniform), and corners."""
    near_one = log_uniform(1e-16, 0.5).map(lambda u: 1.0 - u)
    return st.one_of(spread(lo, 0.5, core, corners=(1e-5, 1e-10, 1.0 - 2.0**-53)), near_one)


def report(family: str, sink: list[str]) -> None:
    """Fail with every violation found (the first 25 listed)."""
    if sink:
        shown = "\n".join(sink[:25])
        more = f"\n... and {len(sink) - 25} more" if len(sink) > 25 else ""
        raise AssertionError(f"{len(sink)} oracle violation(s) in {family}:\n{shown}{more}")
