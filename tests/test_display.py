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
