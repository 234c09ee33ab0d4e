"""The fault registry of `python3 tasks.py mutants` stays applicable to the code it mutates.

The mutation run itself is too long for CI (it runs the chapters once per fault); these
tests keep its registry honest in CI: every fault names a real file, occurs there exactly
once (so it still mutates what it says), changes the text, and names unit tests that exist.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAULTS = tomllib.loads((ROOT / "benchmarks" / "mutants.toml").read_text(encoding="utf-8"))["fault"]
KINDS = {"constant", "split", "term", "edge", "dependence"}


def test_registry_has_unique_ids() -> None:
    ids = [f["id"] for f in FAULTS]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert len(ids) >= 20


@pytest.mark.parametrize("fault", FAULTS, ids=[f["id"] for f in FAULTS])
def test_fault_applies_exactly_once(fault: dict[str, object]) -> None:
    assert set(fault) >= {"id", "kind", "file", "find", "replace", "why", "tests"}
    assert fault["kind"] in KINDS
    assert fault["find"] != fault["replace"]
    text = (ROOT / str(fault["file"])).read_text(encoding="utf-8")
    assert text.count(str(fault["find"])) == 1, f"{fault['id']}: the text to mutate is gone or ambiguous"
    for t in fault["tests"]:  # type: ignore[attr-defined]
        assert (ROOT / t).is_file(), t
    mutated = text.replace(str(fault["find"]), str(fault["replace"]))
    compile(mutated, str(fault["file"]), "exec")  # a fault is a wrong program, not a syntax error
