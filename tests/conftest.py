"""pytest configuration shared by the tests.

Hypothesis profiles: the property tests explore new random cases on every local run (the default
profile), which is how they find faults; CI sets ``HYPOTHESIS_PROFILE=ci``, a derandomised profile,
so that a run of the same commit gives the same result (a case found locally is added with
``@example`` and stays in every run).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
