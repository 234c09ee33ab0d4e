"""The examples in dpcore's docstrings run and print what they say (a stale example is a wrong document)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import dpcore

MODULES = sorted(m.name for m in pkgutil.iter_modules(dpcore.__path__, "dpcore."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} docstring examples fail"


def test_the_examples_are_found() -> None:
    """At least the accountants' and the calibration's examples are collected (a collection that finds
    nothing would pass every module above)."""
    attempted = sum(
        doctest.testmod(importlib.import_module(n), report=False).attempted
        for n in ("dpcore.pld", "dpcore.calibrate_composed")
    )
    assert attempted >= 4
