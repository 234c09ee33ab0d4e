"""The verification ledger: every claim the book checks, and every seed erratum.

Claims are *declared* in data files, one per chapter, ``dpbook/claims/*.toml``::

    [[claim]]
    id = "laplace-dist.variance"          # unique, "<chapter-slug>.<name>"
    chapter = "01_laplace_distribution"   # notebook stem under chapters/
    statement = "Var[X] = 2 b^2 for X ~ Lap(mu, b)"
    seed = "000"                          # seed file prefix, or "" if none
    passage = "方差 ... = 2b^2"            # where the seed states it
    kind = "claim"                         # or "erratum"
    # for kind = "erratum" only:
    seed_says = "what the seed wrongly states"
    correct = "the correct statement"

A declaration says *what* is claimed, never how it was checked or with how
many samples: that comes from the code that ran. Claims are *checked* in the
notebook that owns them by :func:`record`, which receives the evidence
(:mod:`dpbook.evidence`: values and bounds, intervals, Monte Carlo results,
sympy expressions) and the negative controls, computes the verdict itself,
writes it down, and only then fails the cell if the claim failed::

    ledger.record(
        "laplace-dist.variance",
        Equal("sympy: Var[X]", variance, 2 * b**2),
        *mc_results,                                    # CheckResults
        controls=[Equal("Var[X] = b^2", variance, b**2), wrong_mc_result],
    )

For an erratum the evidence checks the *corrected* statement (it must hold)
and the controls check the *seed's* statement (each must fail).

When the environment variable ``DPCORE_LEDGER_DIR`` is set (the book build
sets it), each record is appended as a JSON line to
``$DPCORE_LEDGER_DIR/<chapter>.jsonl``, from which the ledger and errata
pages are generated: verdict, reasons, the kinds of evidence, every number.

Inside a notebook, :func:`record` also displays a badge carrying an HTML
anchor ``id="ledger-<slug>"`` (see :func:`anchor`) and the evidence, wherever
in the cell it is called; the book's ledger page links each claim to that
anchor, i.e. to the very cell that checked it. Write claim ids *literally* in
the call (``record("gaussian.theorem8-mc", ...)``): the test suite finds them
by scanning the notebooks' sources.
"""

from __future__ import annotations

import html
import json
import os
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from .evidence import BOOK_ALPHA, Evidence, NotEvidence, as_evidence

__all__ = [
    "Claim",
    "Record",
    "Verdict",
    "claims",
    "seeds",
    "get_claim",
    "record",
    "load_results",
    "anchor",
    "CLAIMS_DIR",
]

CLAIMS_DIR = Path(__file__).with_name("claims")
SEEDS_FILE = Path(__file__).with_name("seeds.toml")
_REQUIRED = ("id", "chapter", "statement", "seed", "passage", "kind")


@dataclass(frozen=True)
class Claim:
    """One declared claim (see the module docstring for the fields)."""

    id: str
    chapter: str
    statement: str
    seed: str
    passage: str
    kind: Literal["claim", "erratum"]
    seed_says: str = ""
    correct: str = ""


@lru_cache(maxsize=1)
def seeds() -> dict[str, dict[str, str]]:
    """The source articles by id (``"000"`` ...): their ``file`` name and ``title``, from ``dpbook/seeds.toml``.

    Raises
    ------
    ValueError
        If an entry lacks ``file`` or ``title``.
    """
    with SEEDS_FILE.open("rb") as fh:
        table = tomllib.load(fh)["seed"]
    for key, entry in table.items():
        if not (entry.get("file") and entry.get("title")):
            raise ValueError(f"seeds.toml: seed {key} needs a file and a title")
    return {str(k): dict(v) for k, v in table.items()}


@lru_cache(maxsize=1)
def claims() -> dict[str, Claim]:
    """All declared claims, by id, read from ``dpbook/claims/*.toml``.

    Raises
    ------
    ValueError
        If a file declares a claim without a required field, with an unknown
        ``kind``, an erratum without ``seed_says``/``correct``, or an id that
        is declared twice.
    """
    out: dict[str, Claim] = {}
    for path in sorted(CLAIMS_DIR.glob("*.toml")):
        with path.open("rb") as fh:
            data = tomllib.load(fh)
        for entry in data.get("claim", []):
            missing = [f for f in _REQUIRED if f not in entry]
            if missing:
                raise ValueError(f"{path.name}: claim {entry.get('id', '?')} lacks field(s) {missing}")
            if entry["kind"] not in ("claim", "erratum"):
                raise ValueError(f"{path.name}: claim {entry['id']}: kind must be 'claim' or 'erratum'")
            if entry["kind"] == "erratum" and not (entry.get("seed_says") and entry.get("correct")):
                raise ValueError(f"{path.name}: erratum {entry['id']} needs seed_says and correct")
            if entry["id"] in out:
                raise ValueError(f"{path.name}: claim id {entry['id']} is declared twice")
            if entry["seed"] and entry["seed"] not in seeds():
                raise ValueError(f"{path.name}: claim {entry['id']}: unknown seed {entry['seed']!r} (see seeds.toml)")
            unknown = set(entry) - set(Claim.__dataclass_fields__)
            if unknown:
                raise ValueError(f"{path.name}: claim {entry['id']} has unknown field(s) {sorted(unknown)}")
            out[entry["id"]] = Claim(**entry)
    return out


def get_claim(claim_id: str) -> Claim:
    """Return the declared claim ``claim_id``; ``KeyError`` if it is not declared."""
    try:
        return claims()[claim_id]
    except KeyError:
        raise KeyError(f"claim {claim_id!r} is not declared in dpbook/claims/*.toml") from None


def anchor(claim_id: str) -> str:
    """The HTML id of the badge that :func:`record` displays for ``claim_id``.

    ``"gaussian.theorem8-mc"`` gives ``"ledger-gaussian-theorem8-mc"``: lower
    case, every run of characters other than letters and digits replaced by
    one hyphen. The book's ledger page links to ``<chapter page>#<anchor>``.
    """
    return "ledger-" + re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")


_SHOWN_ANCHORS: set[str] = set()  # anchors already emitted in this kernel (ids must be unique)


@dataclass(frozen=True)
class Verdict:
    """What the ledger computed for one record: the verdict and every reason it failed."""

    passed: bool
    reasons: tuple[str, ...]
    false_alarm: float  # union bound over the Monte Carlo evidence


def _verdict(claim: Claim, evidence: Sequence[Evidence], controls: Sequence[Evidence]) -> Verdict:
    reasons: list[str] = []
    for e in evidence:
        if not e.holds:
            reasons.append(f"evidence does not hold: {e.what} ({e.describe()})")
    for c in controls:
        if c.holds:
            who = "the seed's statement" if claim.kind == "erratum" else "negative control"
            reasons.append(f"{who} was not rejected: {c.what} ({c.describe()})")
    # a true claim fails by chance if an evidence test rejects it or a control test misses its
    # wrong claim: both are counted (union bound)
    false_alarm = sum(e.alpha for e in evidence if e.alpha is not None) + sum(c.control_risk() for c in controls)
    if false_alarm > BOOK_ALPHA * (1 + 1e-9):
        reasons.append(
            f"the Monte Carlo evidence and controls have false-alarm probability up to {false_alarm:.3g} "
            f"(union bound), above the book's level {BOOK_ALPHA:g}: split alpha between the tests, "
            "and give each Monte Carlo control the true value that bounds its miss probability"
        )
    return Verdict(not reasons, tuple(reasons), false_alarm)


class Record:
    """The outcome of one :func:`record` call; displays itself once as a badge with an anchor."""

    def __init__(
        self, claim: Claim, evidence: Sequence[Evidence], controls: Sequence[Evidence], verdict: Verdict, note: str = ""
    ) -> None:
        self.claim = claim
        self.evidence = tuple(evidence)
        self.controls = tuple(controls)
        self.verdict = verdict
        self.note = note
        self._shown = False

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def kinds(self) -> list[str]:
        """The kinds of evidence (symbolic, exact, numeric, Monte Carlo) behind the verdict."""
        return sorted({e.kind for e in self.evidence})

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.claim.id,
            "passed": self.passed,
            "kinds": self.kinds,
            "false_alarm": self.verdict.false_alarm,
            "reasons": list(self.verdict.reasons),
            "evidence": [e.to_json() for e in self.evidence],
            "controls": [c.to_json() for c in self.controls],
            "note": self.note,
        }

    def _tag(self) -> str:
        if self.claim.kind == "erratum":
            return "erratum demonstrated" if self.passed else "erratum NOT demonstrated (FAILED)"
        return "verified" if self.passed else "FAILED"

    def _lines(self) -> list[tuple[bool, str]]:
        ctl = "seed's statement rejected" if self.claim.kind == "erratum" else "negative control rejected"
        out = [(e.holds, f"{e.kind}: {e.what}: {e.describe()}") for e in self.evidence]
        out += [(not c.holds, f"{ctl}: {c.what}: {c.describe()}") for c in self.controls]
        return out

    def _repr_markdown_(self) -> str:  # pragma: no cover - display only
        lines = "".join(f"\n- {'✔' if ok else '✘'} {text}" for ok, text in self._lines())
        return f"**Ledger** `{self.claim.id}` — {self._tag()}: {self.claim.statement}{lines}"

    def _repr_html_(self) -> str:
        aid = anchor(self.claim.id)
        id_attr = "" if aid in _SHOWN_ANCHORS else f' id="{aid}"'
        _SHOWN_ANCHORS.add(aid)
        esc = html.escape
        kind = "erratum" if self.claim.kind == "erratum" else "claim"
        state = "pass" if self.passed else "fail"
        items = "".join(
            f'<li class="dpcore-ledger-{"ok" if ok else "bad"}">{"&#10004;" if ok else "&#10008;"} {esc(text)}</li>'
            for ok, text in self._lines()
        )
        return (
            f'<div class="dpcore-ledger-record dpcore-ledger-{kind} dpcore-ledger-{state}"{id_attr}>'
            f'<span class="dpcore-ledger-badge">{"&#10004;" if self.passed else "&#10008;"} Ledger</span> '
            f"<code>{esc(self.claim.id)}</code> &mdash; <b>{esc(self._tag())}</b>: {esc(self.claim.statement)}"
            f'<ul class="dpcore-ledger-evidence">{items}</ul>'
            + (f"<small>{esc(self.note)}</small>" if self.note else "")
            + "</div>"
        )

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a kernel
        if self._shown:
            return
        self._shown = True
        from IPython.display import display

        display(
            {"text/html": self._repr_html_(), "text/markdown": self._repr_markdown_(), "text/plain": repr(self)},
            raw=True,
        )

    def __repr__(self) -> str:
        return f"ledger: {self.claim.id} {'passed' if self.passed else 'FAILED'}"


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is always there in the book
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def record(claim_id: str, *evidence: Any, controls: Sequence[Any] = (), note: str = "") -> Record:
    """Compute the verdict of a declared claim from its evidence, write it down, then assert it.

    Parameters
    ----------
    claim_id : str
        An id declared in ``dpbook/claims/*.toml``.
    *evidence : Evidence or CheckResult
        What the claim's checks computed (:mod:`dpbook.evidence`): at least
        one. Each must *hold*. Monte Carlo pieces must together have
        false-alarm probability <= :data:`~dpbook.evidence.BOOK_ALPHA`
        (their ``alpha`` are added: a union bound).
    controls : sequence of Evidence or CheckResult
        The same checks applied to plausible wrong claims (for an erratum: to
        the seed's false statement): at least one, and each must *fail*.
    note : str
        A short comment shown with the record.

    Notes
    -----
    The verdict is the ledger's own: every piece of evidence holds, every
    control fails, and the false-alarm budget is kept (a Monte Carlo control
    counts with its miss probability). The record (verdict, reasons, every
    number) is appended to ``$DPCORE_LEDGER_DIR/<chapter>.jsonl`` and shown in
    the notebook *before* a failure raises, so a failing claim appears on the
    ledger page as FAILED with its numbers.

    Raises
    ------
    KeyError
        If ``claim_id`` is not declared.
    NotEvidence
        (a ``TypeError`` and a ``ValueError``) naming the argument, e.g.
        ``evidence[0]`` or ``controls[1]``, if a piece of evidence is not
        evidence (a bool, ``'False'``, NaN, a number, ``None``) or a
        ``CheckResult`` has no defined verdict (``passed`` not a bool, or
        contradicting its numbers): the ledger computes verdicts, it does not
        accept them. ``controls`` must be a sequence (list, tuple). Nothing is recorded.
    ValueError
        If there is no evidence or no control.
    AssertionError
        After recording, if the claim failed.
    """
    if not isinstance(claim_id, str):
        raise NotEvidence(f"claim_id must be a str; got {type(claim_id).__name__} {claim_id!r}")
    claim = get_claim(claim_id)
    if not isinstance(controls, Sequence) or isinstance(controls, (str, bytes)):
        raise NotEvidence(f"controls must be a list or tuple of evidence; got {type(controls).__name__} {controls!r}")
    ev = [as_evidence(e, f"evidence[{i}]") for i, e in enumerate(evidence)]
    ctl = [as_evidence(c, f"controls[{i}]") for i, c in enumerate(controls)]
    if not ev:
        raise ValueError(f"{claim_id}: a record needs at least one piece of evidence")
    if not ctl:
        what = "the seed's statement, checked and rejected" if claim.kind == "erratum" else "a negative control"
        raise ValueError(f"{claim_id}: a record needs {what} (controls=...): a check must be able to fail")
    rec = Record(claim, ev, ctl, _verdict(claim, ev, ctl), str(note))
    out_dir = os.environ.get("DPCORE_LEDGER_DIR")
    if out_dir:
        path = Path(out_dir) / f"{claim.chapter}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec.to_json(), ensure_ascii=False, default=str) + "\n")
    if _in_kernel():  # show the badge (and its anchor) right where the claim is checked
        rec._ipython_display_()
    if not rec.passed:
        raise AssertionError(f"ledger claim {claim.id!r} FAILED: " + "; ".join(rec.verdict.reasons))
    return rec


def load_results(directory: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Read the JSON-lines records written under ``directory``; the last record of an id wins."""
    results: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(directory).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                results[rec["id"]] = rec
    return results
