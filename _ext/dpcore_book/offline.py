"""Nothing from a CDN: MathJax served from the build, sphinx-thebe's scripts dropped.

MathJax 3 (the PyPI package ``django-static-mathjax``, pinned in requirements.txt,
which ships MathJax's ``es5`` browser build) is copied once into
``<srcdir>/_build/.vendor/`` and served from ``_static/mathjax/``; ``mathjax_path``
in ``_config.yml`` points there, so the rendered book requests nothing from a CDN.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

MATHJAX_VERSION = "3.2.2"
# es5 files not needed by the combined tex-mml-chtml.js bundle we load (other bundles, the
# SVG output, node-only adaptors, and latest.js, which exists only to pick a CDN).
_MATHJAX_SKIP = re.compile(
    r"^(latest\.js|node-main\.js|mml-chtml\.js|mml-svg\.js|tex-chtml\.js|tex-chtml-full.*\.js|tex-svg.*\.js"
    r"|tex-mml-svg\.js|output/svg.*|adaptors/.*)$"
)


def _mathjax_root(srcdir: Path) -> Path:
    """Return a folder containing ``mathjax/`` (the es5 build), copied from the installed package.

    MathJax comes from PyPI (``django-static-mathjax``, pinned in requirements.txt; it ships the
    MathJax repository's ``es5`` browser build and has no dependencies), so building the book
    needs nothing beyond ``pip``. The version is checked against :data:`MATHJAX_VERSION`.
    """
    root = srcdir / "_build" / ".vendor" / f"mathjax-{MATHJAX_VERSION}"
    marker = root / "mathjax" / "tex-mml-chtml.js"
    if marker.exists():
        return root
    spec = importlib.util.find_spec("mathjax")
    if spec is None or spec.origin is None:
        raise ExtensionError(
            "dpcore_book: MathJax is served from the build; install it with "
            f"`pip install django-static-mathjax=={MATHJAX_VERSION}.1` (it is in requirements.txt)"
        )
    dist = Path(spec.origin).parent / "static" / "mathjax"
    version = json.loads((dist / "package.json").read_text(encoding="utf-8")).get("version")
    if version != MATHJAX_VERSION:
        raise ExtensionError(f"dpcore_book: found MathJax {version} at {dist}, expected {MATHJAX_VERSION}")
    es5 = dist / "es5"
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root.parent))
    try:
        for src in es5.rglob("*"):
            rel = src.relative_to(es5).as_posix()
            if not src.is_file() or _MATHJAX_SKIP.match(rel):
                continue
            target = staging / "mathjax" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
        shutil.copyfile(dist / "LICENSE", staging / "mathjax" / "LICENSE")
        shutil.rmtree(root, ignore_errors=True)
        staging.chmod(0o755)  # mkdtemp made it private
        staging.rename(root)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return root


def _on_config_inited(app: Sphinx, config: Any) -> None:
    root = _mathjax_root(Path(app.srcdir))
    config.html_static_path = [*config.html_static_path, str(root)]


def _on_html_page_context(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """Drop sphinx-thebe's scripts: Jupyter Book always loads the extension, and its
    configuration names thebe's CDN URL (``unpkg.com``), but the book has no launch
    buttons, so thebe is never used; the book must not refer to any CDN."""
    files = context.get("script_files")
    if not files:
        return

    def is_thebe(js: Any) -> bool:
        body = getattr(js, "attributes", {}).get("body", "") or ""
        return str(js).endswith("sphinx-thebe.js") or "THEBE_JS_URL" in body

    context["script_files"] = [js for js in files if not is_thebe(js)]


def setup(app: Sphinx) -> None:
    app.connect("config-inited", _on_config_inited)
    app.connect("html-page-context", _on_html_page_context)
