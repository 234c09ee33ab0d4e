"""dpbook: the book's machinery, kept apart from the library ``dpcore``.

``dpcore`` is what a practitioner installs and imports (numpy and scipy only);
``dpbook`` is what the chapters need besides it:

* :mod:`dpbook.evidence` -- kinds of evidence a claim can have, each with its error budget;
* :mod:`dpbook.ledger` -- the registry of claims (``dpbook/claims/*.toml``) and their verdicts;
* :mod:`dpbook.symbolic` -- shared sympy symbols, densities and the symbolic comparison;
* :mod:`dpbook.flawed` -- deliberately flawed mechanisms and miscalibrated checks (negative controls);
* :mod:`dpbook.calibration` -- calibration experiments of the statistical checks;
* :mod:`dpbook.experiments` -- the chapters' experiments, one function each, returning evidence for the ledger;
* :mod:`dpbook.figures` -- the book's figures, one function each (the chapters' cells that call them are hidden);
* :mod:`dpbook.display` -- benchmark tables (``benchmarks/results``) rendered as HTML in the book;
* :mod:`dpbook.reference` -- mpmath reference values, independent of dpcore, for tests, benchmarks, chapters;
* :mod:`dpbook.showwork` -- the source of the experiments each chapter cell calls, shown under the cell.

It may import sympy and matplotlib; ``dpcore`` never imports it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = [
    "calibration",
    "display",
    "evidence",
    "experiments",
    "figures",
    "flawed",
    "ledger",
    "reference",
    "showwork",
    "symbolic",
]


def __getattr__(name: str) -> ModuleType:
    """Import a submodule on first use (``dpbook.symbolic`` pulls in sympy, the rest do not)."""
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
