"""dpbook.display: the benchmark scripts' Markdown as HTML."""

from __future__ import annotations

import pytest

from dpbook import display


def test_markdown_subset_to_html() -> None:
    md = "# Title\n\nSome `code` and **bold** and *it*.\n\n## Part\n\n| a | b |\n|---|---|\n| 1 | <2> |\n\n- item"
    out = display.markdown_as_html(md)
    assert "Title" not in out
    assert "<p>Some <code>code</code> and <b>bold</b> and <i>it</i>.</p>" in out
    assert "<h4>Part</h4>" in out and "<li>item</li>" in out
    assert "<table>" in out and "<th>a" in out and "&lt;2&gt;" in out  # escaped cell, separator row dropped
    assert "---" not in out


def test_every_committed_benchmark_table_renders_and_a_missing_one_is_an_error() -> None:
    for path in sorted(display.RESULTS.glob("*.md")):
        md = path.read_text(encoding="utf-8")
        html = display.benchmark_table(path.stem).data
        assert ("<table>" in html) == any(line.startswith("|") for line in md.splitlines()), path
        assert not any(line.startswith("|") for line in html.splitlines()), path
    with pytest.raises(ValueError, match="tasks.py bench"):
        display.benchmark_table("no-such-benchmark")


def test_table_escapes_formats_and_checks_its_shape() -> None:
    html = display.table([(0.5, 1e-60, "<b>"), (2.0, 1e-5, "x")], ["e", "d", "s"], ["", ".0e", ""]).data
    assert "<td>1e-60</td>" in html and "&lt;b&gt;" in html and "<th>e" in html
    with pytest.raises(ValueError, match="columns"):
        display.table([(1, 2)], ["a", "b", "c"])


def test_errata_table_is_generated_from_the_claims_files() -> None:
    from dpbook import ledger

    html = display.errata_table("03_laplace_mechanism").data
    ids = [c.id for c in ledger.claims().values() if c.kind == "erratum" and c.chapter == "03_laplace_mechanism"]
    assert ids and all(i in html for i in ids)
    with pytest.raises(ValueError, match="chapter"):
        display.errata_table("no_such_chapter")
