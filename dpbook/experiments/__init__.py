"""The chapters' experiments, one function each, so that a chapter reads as a lecture.

A chapter states a result, derives it with sympy in a few visible lines, and
then calls one function of its module here to run the numerical side: the
Monte Carlo games, the quadratures, the sweeps over parameters. Each function
returns an :class:`Experiment` (or a subclass carrying the numbers the chapter
prints and plots) whose ``evidence`` and ``controls`` go straight to the
ledger::

    game = experiments.dp_definition.attack_game(a1, a2, 2.0, EPS, n=N, seed=100)
    print(game)
    ledger.record("dp-def.test-bound", *derived, *game.evidence,
                  controls=[*wrong_derived, *game.controls])

The claim id stays written literally in the chapter (the tests find it there);
the verdict stays the ledger's. Every random draw goes through
:mod:`dpcore` with the seeds the function is given, so the seed sweep
(``tasks.py sweep``) still re-runs every experiment under other streams.

One module per chapter, named after the chapter's slug:
:mod:`~dpbook.experiments.laplace_distribution`,
:mod:`~dpbook.experiments.dp_definition`,
:mod:`~dpbook.experiments.laplace_mechanism`,
:mod:`~dpbook.experiments.gaussian_mechanism`,
:mod:`~dpbook.experiments.renyi_dp`,
:mod:`~dpbook.experiments.auditing`,
:mod:`~dpbook.experiments.calibration`,
:mod:`~dpbook.experiments.composition`,
:mod:`~dpbook.experiments.auditing_libraries`; and three that a chapter's section needs apart:
:mod:`~dpbook.experiments.accountants` (chapter 07: the peers' accountants and epsilon over a run),
:mod:`~dpbook.experiments.float_sums` and :mod:`~dpbook.experiments.timing_channel` (chapter 08).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

__all__ = ["Experiment"]

_MODULES = (
    "laplace_distribution",
    "dp_definition",
    "laplace_mechanism",
    "gaussian_mechanism",
    "renyi_dp",
    "auditing",
    "calibration",
    "composition",
    "auditing_libraries",
    "accountants",
    "float_sums",
    "timing_channel",
)


@dataclass(frozen=True)
class Experiment:
    """What one experiment computed: its evidence and its negative controls.

    Attributes
    ----------
    evidence : tuple
        :mod:`dpbook.evidence` objects or :class:`dpcore.CheckResult` that must
        hold if the claim is true.
    controls : tuple
        The same checks applied to plausible wrong claims: each must fail.

    Subclasses add the numbers a chapter shows (estimates, exact values,
    rows of a figure). ``str()`` lists every piece with its verdict, the
    controls marked ``control``.
    """

    evidence: tuple[Any, ...] = field(default=())
    controls: tuple[Any, ...] = field(default=())

    def __str__(self) -> str:
        from dpbook.evidence import as_evidence

        lines = []
        for tag, items in (("", self.evidence), ("control: ", self.controls)):
            for item in items:
                ev = as_evidence(item)
                mark = "holds " if ev.holds else "fails "
                lines.append(f"{tag}{mark}{ev.what}: {ev.describe()}")
        return "\n".join(lines)


def __getattr__(name: str) -> ModuleType:
    """Import a chapter's module on first use."""
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
