"""The library stands apart from the book: ``import dpcore`` loads neither sympy nor matplotlib nor dpbook."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_dpcore_loads_no_book_machinery():
    code = (
        "import sys, dpcore\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in {'sympy', 'matplotlib', 'dpbook', 'mpmath'})\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_dpcore_source_never_imports_dpbook():
    """Static check: no import statement in dpcore names dpbook (the CLI loads dpbook.flawed by name, on request)."""
    for path in sorted((ROOT / "dpcore").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(n.split(".")[0] in {"dpbook", "sympy", "matplotlib"} for n in names), (path.name, names)


def test_scipy_submodules_load_on_first_use():
    code = (
        "import sys, dpcore\n"
        "from importlib.util import _LazyModule\n"
        "before = isinstance(sys.modules['scipy.stats'], _LazyModule)\n"
        "dpcore.probability_result(3, 10, 0.5)\n"
        "print(before, hasattr(sys.modules['scipy.stats'], 'binom'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True"]


def test_chapters_are_valid_notebooks_committed_without_outputs():
    # nbformat's schema (a cell without an id is an error in nbformat's next versions), unique ids, and no
    # outputs or execution counts in the repository: the book and the tests run the chapters afresh
    import json

    import nbformat

    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        nbformat.validate(nbformat.read(path, as_version=4))
        nb = nbformat.from_dict(json.loads(path.read_text(encoding="utf-8")))  # as committed (read() fills ids)
        ids = [cell.get("id") for cell in nb.cells]
        assert None not in ids and len(set(ids)) == len(ids), f"{path.name}: cell ids missing or repeated"
        code = [cell for cell in nb.cells if cell.cell_type == "code"]
        assert all(not c.outputs and c.execution_count is None for c in code), f"{path.name} has outputs"
