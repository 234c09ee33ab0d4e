"""dpbook.showwork: which experiments a cell calls, and the helpers shown with them."""

from __future__ import annotations

import dpbook.experiments.composition as cx
from dpbook import experiments, showwork


def test_calls_are_resolved_through_any_alias() -> None:
    namespace = {"cx": cx, "experiments": experiments, "law": cx.law_agreement, "len": len}
    code = "a = cx.convolution(1.0, 2)\nb = experiments.composition.averaging(0.5)\nc = law(1)\nd = len([])\n"
    found = [f.__name__ for f in showwork.called_experiments(code, namespace)]
    assert sorted(found) == ["averaging", "convolution", "law_agreement"]


def test_nothing_outside_the_experiments_is_shown() -> None:
    """Negative control: a call to dpcore or a builtin is not an experiment."""
    import dpcore

    assert showwork.called_experiments("dpcore.laplace_scale(1.0, 1.0)\nlen([])", {"dpcore": dpcore}) == []
    assert showwork.called_experiments("%time x = 1", {}) == []  # a magic: not Python, nothing to show


def test_helpers_of_the_same_module_are_shown_with_the_function() -> None:
    shown = {f.__qualname__ for f in showwork.with_helpers(cx.spectral_precision)}
    assert "spectral_precision" in shown
    assert all(getattr(cx, name.split(".")[0], None) is not None for name in shown)
    html = showwork.source_html(showwork.with_helpers(cx.spectral_precision))
    assert "<details" in html and "def" in html and "spectral_precision" in html


def test_the_rendered_block_reads_as_source_to_the_page_checker() -> None:
    """The summary and the code are separate words on the page (the built-page test looks for 'def name(')."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_shows_work import missing_from

    block = showwork.source_html([cx.law_agreement])
    assert missing_from(block, {"law_agreement"}) == []
