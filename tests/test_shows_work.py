"""The built book shows its work: every experiment function a chapter calls appears on its page.

Runs against a built book only (``DPCORE_BOOK_HTML``, as ``tests/test_book_browser.py``; ``.ci/run``
runs it after the book build). For each chapter notebook, the functions of ``dpbook.experiments`` its
code cells call (through any alias: ``cx.f(``, ``experiments.calibration.f(``) must appear on the
built page as ``def f(`` or ``class f(`` in the page's text (:mod:`dpbook.showwork` renders them under
the cell that calls them). The rule of issue 29: what a record compares, at which tolerance, and its
control, readable on the page without opening another file.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML_ENV = os.environ.get("DPCORE_BOOK_HTML")


class _Text(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def page_text(markup: str) -> str:
    """The visible text of an HTML page, whitespace collapsed (tags, including highlighting spans, removed)."""
    parser = _Text()
    parser.feed(markup)
    return re.sub(r"\s+", " ", "".join(parser.parts))


def called_experiments(code: str) -> set[str]:
    """Names of ``dpbook.experiments`` functions called in ``code``, through the aliases it imports."""
    aliases: dict[str, str] = {}
    for m in re.finditer(r"from\s+dpbook\.experiments\s+import\s+(\w+)(?:\s+as\s+(\w+))?", code):
        aliases[m.group(2) or m.group(1)] = m.group(1)
    for m in re.finditer(r"import\s+dpbook\.experiments\.(\w+)\s+as\s+(\w+)", code):
        aliases[m.group(2)] = m.group(1)
    if re.search(r"from\s+dpbook\s+import\s+[^\n]*\bexperiments\b", code):
        aliases["experiments"] = "(package)"
    called = set()
    for alias in aliases:
        for m in re.finditer(rf"\b{re.escape(alias)}\.((?:\w+\.)*\w+)\s*\(", code):
            called.add(m.group(1).split(".")[-1])
    return called


def missing_from(page: str, called: set[str]) -> list[str]:
    text = page_text(page)
    return sorted(f for f in called if not re.search(rf"\b(def|class) {re.escape(f)}\b", text))


def test_the_checker_can_fail() -> None:
    """Negative control: a page that only names the function (a call, not its source) is rejected."""
    code = "from dpbook.experiments import composition as cx\nres = cx.law_agreement(1, 2)\n"
    assert called_experiments(code) == {"law_agreement"}
    assert missing_from("<p>res = cx.law_agreement(1, 2)</p>", {"law_agreement"}) == ["law_agreement"]
    shown = '<pre><span class="k">def</span> <span class="nf">law_agreement</span>(loss):</pre>'
    assert missing_from(shown, {"law_agreement"}) == []


@pytest.mark.skipif(not HTML_ENV, reason="set DPCORE_BOOK_HTML to a built book's HTML folder")
@pytest.mark.parametrize("notebook", sorted((ROOT / "chapters").glob("*.ipynb")), ids=lambda p: p.stem)
def test_every_called_experiment_is_shown_on_its_page(notebook: Path) -> None:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    called = called_experiments(code)
    page = Path(HTML_ENV or ".").resolve() / "chapters" / f"{notebook.stem}.html"
    assert page.is_file(), f"no built page for {notebook.name}"
    missing = missing_from(page.read_text(encoding="utf-8", errors="replace"), called)
    assert not missing, f"{notebook.stem}: the page does not show the source of {missing}"
