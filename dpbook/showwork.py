"""The page shows its work: under each chapter cell, the source of the experiments it calls.

A chapter's recording cell is often two lines, ``res = cx.some_check(...)`` and
``ledger.record(..., *res.evidence, controls=[*res.controls])``: what is computed,
what it is compared with at which tolerance or false-alarm rate, and what the
control is, all live in ``dpbook.experiments``. So that a reader sees them on the
page without opening another file, and so that the code stays in one tested
place, :func:`install` registers an IPython hook that, after every cell, finds the
calls the cell makes into ``dpbook.experiments`` (through any alias) and shows the
source of each function called, with the private helpers of its module that it
uses (transitively), in a collapsible block under the cell. Each function is shown
once per page, under the first cell that calls it.

``tests/test_shows_work.py`` checks the built book: every experiment function a
chapter calls appears on its page as ``def name(``.
"""

from __future__ import annotations

import ast
import html
import inspect
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["called_experiments", "with_helpers", "source_html", "install"]

PACKAGE = "dpbook.experiments"

_shown: set[str] = set()
_installed = False


def _experiment_module(obj: object) -> bool:
    return isinstance(obj, ModuleType) and (obj.__name__ == PACKAGE or obj.__name__.startswith(PACKAGE + "."))


def _is_experiment(obj: object) -> bool:
    module = getattr(obj, "__module__", "") or ""
    return (inspect.isfunction(obj) or inspect.isclass(obj)) and (module == PACKAGE or module.startswith(PACKAGE + "."))


def _resolve(node: ast.expr, namespace: Mapping[str, Any]) -> object:
    """The object an attribute chain such as ``cx.some_check`` names in ``namespace`` (``None`` if unknown)."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, namespace)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def called_experiments(source: str, namespace: Mapping[str, Any]) -> list[Callable[..., Any]]:
    """The functions (and classes) of ``dpbook.experiments`` that the code ``source`` calls, in order of first call.

    Names are resolved in ``namespace`` (the notebook's), so any alias works: ``cx.f(...)``,
    ``experiments.composition.f(...)``, or ``f(...)`` after ``from ... import f``.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics and the like: nothing to show
        return []
    found: dict[str, Callable[..., Any]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            obj = _resolve(node.func, namespace)
            if _is_experiment(obj):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)  # type: ignore[union-attr]
    return list(found.values())


def with_helpers(fn: Callable[..., Any]) -> list[Callable[..., Any]]:
    """``fn`` and the functions and classes of its own module that its source names, transitively.

    Only the module's own definitions are followed (not ``dpcore``: the library has its own API page), so
    what a reader sees is the experiment and the glue it is built from.
    """
    module = sys.modules[fn.__module__]
    out: dict[str, Callable[..., Any]] = {}
    todo = [fn]
    while todo:
        f = todo.pop(0)
        if f.__qualname__ in out:
            continue
        out[f.__qualname__] = f
        try:
            tree = ast.parse(inspect.getsource(f))
        except (OSError, TypeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                obj = getattr(module, node.id, None)
                if obj is not None and obj is not f and getattr(obj, "__module__", None) == module.__name__:
                    if inspect.isfunction(obj) or inspect.isclass(obj):
                        todo.append(obj)
    return list(out.values())


def _highlight(code: str) -> str:
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:  # pragma: no cover - pygments comes with the book's requirements
        return f"<pre>{html.escape(code)}</pre>"
    return str(highlight(code, PythonLexer(), HtmlFormatter(noclasses=True, nobackground=True)))


def source_html(functions: list[Callable[..., Any]]) -> str:
    """A collapsible HTML block with the source of each function (its module named), for the book's page."""
    parts = []
    for f in functions:
        try:
            code = inspect.getsource(f)
        except (OSError, TypeError):
            continue
        module = f.__module__
        parts.append(
            f'<details class="dp-source"><summary>The code behind this cell: <code>{html.escape(module)}.'
            f"{html.escape(f.__qualname__)}</code></summary>\n{_highlight(code)}</details>"
        )
    return "\n".join(parts)


def _after_cell(result: Any) -> None:
    from IPython import get_ipython
    from IPython.display import HTML, display

    ip = get_ipython()
    source = getattr(getattr(result, "info", None), "raw_cell", "") or ""
    if ip is None or not source:
        return
    new: list[Callable[..., Any]] = []
    for fn in called_experiments(source, ip.user_ns):
        for f in with_helpers(fn):
            key = f"{f.__module__}.{f.__qualname__}"
            if key not in _shown:
                _shown.add(key)
                new.append(f)
    if new:
        display(HTML(source_html(new)))


def install() -> None:
    """Show, under every later cell of this notebook, the source of the experiments it calls (once each)."""
    global _installed
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return
    ip = get_ipython()
    if ip is None or _installed:
        return
    ip.events.register("post_run_cell", _after_cell)
    _installed = True
