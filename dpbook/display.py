"""Benchmark tables in the book: ``benchmarks/results/*.md`` rendered as HTML.

The book's Markdown renderer (MyST) reads CommonMark in notebook *outputs*
only, so a table written by a benchmark script would show as raw pipes. This
module turns the small Markdown subset the benchmark scripts write (a title
line, ``## `` headings, paragraphs, ``- `` list items, pipe tables, ``code``,
**bold** and *italic*) into HTML.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tabulate import tabulate

__all__ = ["RESULTS", "markdown_as_html", "benchmark_table", "table", "errata_table"]

#: where the benchmark scripts write their tables (``tasks.py bench``)
RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def _inline(line: str) -> str:
    line = re.sub(r"`(.+?)`", r"<code>\1</code>", html.escape(line, quote=False))
    line = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", line)
    return re.sub(r"(?<![\w*])\*([^*]+?)\*(?![\w*])", r"<i>\1</i>", line)


def markdown_as_html(markdown: str, *, skip_title: bool = True) -> str:
    """HTML for the benchmark scripts' Markdown (see the module docstring); the first line is dropped if a title."""
    lines = markdown.splitlines()
    if skip_title and lines and lines[0].startswith("# "):
        lines = lines[1:]
    out: list[str] = []
    rows: list[list[str]] = []
    for raw in [*lines, ""]:
        line = _inline(raw)
        if line.startswith("|"):
            if set(line) - set("|-: "):  # not the separator row
                rows.append([cell.strip() for cell in line.strip("|").split("|")])
            continue
        if rows:
            out.append(tabulate(rows[1:], headers=rows[0], tablefmt="unsafehtml", disable_numparse=True))
            rows = []
        if line.startswith("## "):
            out.append(f"<h4>{line[3:]}</h4>")
        elif line.startswith("- "):
            out.append(f"<li>{line[2:]}</li>")
        elif line:
            out.append(f"<p>{line}</p>")
    return "\n".join(out)


def benchmark_table(name: str) -> object:
    """``benchmarks/results/<name>.md`` as an ``IPython.display.HTML`` object (the last committed run).

    Raises
    ------
    ValueError
        If no such table exists (run ``python3 tasks.py bench <name>``).
    """
    from IPython.display import HTML

    path = RESULTS / f"{name}.md"
    if not path.is_file():
        raise ValueError(f"name: no benchmark table {path}; run `python3 tasks.py bench {name}`")
    return HTML(markdown_as_html(path.read_text(encoding="utf-8")))


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], formats: Sequence[str] | None = None) -> object:
    """An HTML table (``IPython.display.HTML``) of ``rows``, each cell escaped and formatted by ``formats``.

    ``formats`` gives a format spec per column (``""`` for ``str``), e.g.
    ``["", ".0e", ".6g"]``.

    Raises
    ------
    ValueError
        If a row or ``formats`` has another length than ``headers``.
    """
    from IPython.display import HTML

    n = len(headers)
    specs = list(formats) if formats is not None else [""] * n
    if len(specs) != n or any(len(r) != n for r in rows):
        raise ValueError(f"rows and formats must have {n} columns, as headers")
    cells = [
        [html.escape(format(v, f) if f else str(v), quote=False) for v, f in zip(r, specs, strict=True)] for r in rows
    ]
    return HTML(tabulate(cells, headers=list(headers), tablefmt="unsafehtml", disable_numparse=True))


def errata_table(chapter: str) -> object:
    """The errata a chapter demonstrates, from the ledger's claims files: id, what the seed says, what is correct."""
    from . import ledger

    rows = [
        (c.id, c.seed_says, c.correct) for c in ledger.claims().values() if c.kind == "erratum" and c.chapter == chapter
    ]
    if not rows:
        raise ValueError(f"chapter: no errata declared for {chapter!r}")
    return table(rows, ["id", "seed says", "correct"])
