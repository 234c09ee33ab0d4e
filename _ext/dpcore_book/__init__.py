"""Sphinx extension of the book, one module per job.

* :mod:`.ledger_pages` -- the ``{dpcore-ledger}`` and ``{dpcore-errata}``
  directives: every declared claim and erratum, with the result recorded in
  this build (a missing or failed record is a build warning);
* :mod:`.offline` -- MathJax served from the build and no CDN script;
* :mod:`.api_refs` -- ``dpcore.name`` cross-references and public constants
  on the API page.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

from . import api_refs, ledger_pages, offline


def setup(app: Sphinx) -> dict[str, Any]:
    ledger_pages.setup(app)
    offline.setup(app)
    api_refs.setup(app)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
