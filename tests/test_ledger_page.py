"""A deliberately broken claim shows FAILED, with its numbers, on the ledger page, and fails the build.

A tiny Sphinx project uses the book's extension (``_ext/dpcore_book/``) with one
declared claim; a real :func:`dpbook.ledger.record` call with evidence that does not
hold writes the record (and raises, as it does in a notebook). The built ledger page
must say FAILED, give the reason and the numbers, and the build must emit the warning
that ``-W`` turns into a failed book build.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from dpbook import ledger
from dpbook.evidence import Compare

ROOT = Path(__file__).resolve().parents[1]

TOML = """
[[claim]]
id = "toy.broken"
chapter = "toy"
kind = "claim"
statement = "A deliberately broken claim: 3 <= 2."
seed = ""
passage = ""
"""


def _build(src: Path, warnings: io.StringIO) -> None:
    from sphinx.application import Sphinx

    app = Sphinx(
        str(src),
        str(src),
        str(src / "_build" / "html"),
        str(src / "_build" / "doctrees"),
        "html",
        status=None,
        warning=warnings,
        freshenv=True,
    )
    app.build()


def test_failed_claim_is_shown_failed_with_its_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    claims_dir = tmp_path / "claims"
    claims_dir.mkdir()
    (claims_dir / "toy.toml").write_text(TOML, encoding="utf-8")
    monkeypatch.setattr(ledger, "CLAIMS_DIR", claims_dir)
    ledger.claims.cache_clear()
    records = tmp_path / "records"
    monkeypatch.setenv("DPCORE_LEDGER_DIR", str(records))
    with pytest.raises(AssertionError):
        ledger.record(
            "toy.broken",
            Compare("three is at most two", 3.0, "<=", 2.0),
            controls=[Compare("one is at most two", 1.0, "<=", 2.0)],
        )

    src = tmp_path / "book"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\nextensions = ['dpcore_book']\n"
        "exclude_patterns = ['_build']\n",
        encoding="utf-8",
    )
    # no chapters/toy page: a chapter page would be re-executed (and its old records purged) by the build
    (src / "index.rst").write_text("Toy\n===\n\n.. toctree::\n\n   ledger\n", encoding="utf-8")
    (src / "ledger.rst").write_text("Ledger\n======\n\n.. dpcore-ledger::\n", encoding="utf-8")
    warnings = io.StringIO()
    try:
        _build(src, warnings)
    finally:
        ledger.claims.cache_clear()
    page = (src / "_build" / "html" / "ledger.html").read_text(encoding="utf-8")
    assert "FAILED" in page
    assert "three is at most two" in page and "3 &lt;= 2" in page  # the evidence and its numbers
    assert "evidence does not hold: three is at most two" in page  # the reasons the ledger computed
    assert "negative control was not rejected: one is at most two" in page
    assert "negative control, NOT rejected" in page  # the control that was not rejected
    assert "no symbolic part" in page
    assert "ledger: claim 'toy.broken' FAILED" in warnings.getvalue()  # -W makes this a failed build
    assert os.environ["DPCORE_LEDGER_DIR"] == str(records)
