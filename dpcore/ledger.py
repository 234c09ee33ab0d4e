"""The verification ledger: every claim the book checks, and every seed erratum.

Claims are *declared* in data files, one per chapter, ``dpcore/claims/*.toml``::

    [[claim]]
    id = "laplace-dist.variance"          # unique, "<chapter-slug>.<name>"
    chapter = "01_laplace_distribution"   # notebook stem under chapters/
    statement = "Var[X] = 2 b^2 for X ~ Lap(mu, b)"
    seed = "000"                          # seed file prefix, or "" if none
    passage = "方差 ... = 2b^2"            # where the seed states it
    symbolic = "sympy integrates (x-mu)^2 against the density"
    numeric = "median-of-means test, 4 (mu, b) pairs, alpha = 1e-6"
    kind = "claim"                         # or "erratum"
    # for kind = "erratum" only:
    seed_says = "what the seed wrongly states"
    correct = "the correct statement"

and *checked* in the notebook that owns them by :func:`record`, which fails
loudly (``AssertionError``) when the check did not pass, and refuses an id
that is not declared. For an erratum, ``passed=True`` means the chapter's
numeric demonstration that the seed is wrong succeeded.

When the environment variable ``DPCORE_LEDGER_DIR`` is set (the book build
sets it), each record is also appended as a JSON line to
``$DPCORE_LEDGER_DIR/<chapter>.jsonl``, from which the ledger and errata
pages are generated.

Inside a notebook, :func:`record` also displays a one-line badge carrying an
HTML anchor ``id="ledger-<slug>"`` (see :func:`anchor`), wherever in the cell
it is called; the book's ledger page links each claim to that anchor, i.e. to
the very cell that checked it. Write claim ids *literally* in the call
(``record("gaussian.theorem8-mc", ...)``): the test suite finds them by
scanning the notebooks' sources.
"""

from __future__ import annotations

import html
import json
import os
import re
import tomllib
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

__all__ = ["Claim", "Record", "claims", "get_claim", "record", "load_results", "anchor", "CLAIMS_DIR"]

CLAIMS_DIR = Path(__file__).with_name("claims")
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
    symbolic: str = ""
    numeric: str = ""
    seed_says: str = ""
    correct: str = ""


@lru_cache(maxsize=1)
def claims() -> dict[str, Claim]:
    """All declared claims, by id, read from ``dpcore/claims/*.toml``.

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
        raise KeyError(f"claim {claim_id!r} is not declared in dpcore/claims/*.toml") from None


def anchor(claim_id: str) -> str:
    """The HTML id of the badge that :func:`record` displays for ``claim_id``.

    ``"gaussian.theorem8-mc"`` gives ``"ledger-gaussian-theorem8-mc"``: lower
    case, every run of characters other than letters and digits replaced by
    one hyphen. The book's ledger page links to ``<chapter page>#<anchor>``.
    """
    return "ledger-" + re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")


_SHOWN_ANCHORS: set[str] = set()  # anchors already emitted in this kernel (ids must be unique)


class Record:
    """The outcome of one :func:`record` call; displays itself once as a badge with an anchor."""

    def __init__(self, claim: Claim, passed: bool, evidence: str) -> None:
        self.claim = claim
        self.passed = passed
        self.evidence = evidence
        self._shown = False

    def _tag(self) -> str:
        if self.claim.kind == "erratum":
            return "erratum demonstrated" if self.passed else "erratum NOT demonstrated"
        return "verified" if self.passed else "FAILED"

    def _repr_markdown_(self) -> str:  # pragma: no cover - display only
        return f"**Ledger** `{self.claim.id}` — {self._tag()}: {self.claim.statement}  \n<small>{self.evidence}</small>"

    def _repr_html_(self) -> str:
        aid = anchor(self.claim.id)
        id_attr = "" if aid in _SHOWN_ANCHORS else f' id="{aid}"'
        _SHOWN_ANCHORS.add(aid)
        esc = html.escape
        kind = "erratum" if self.claim.kind == "erratum" else "claim"
        return (
            f'<div class="dpcore-ledger-record dpcore-ledger-{kind}"{id_attr}>'
            f'<span class="dpcore-ledger-badge">{"&#10004;" if self.passed else "&#10008;"} Ledger</span> '
            f"<code>{esc(self.claim.id)}</code> &mdash; {esc(self._tag())}: {esc(self.claim.statement)}"
            + (f'<br><small class="dpcore-ledger-evidence">{esc(self.evidence)}</small>' if self.evidence else "")
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


_Record = Record  # the name this class had first


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is always there in the book
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def record(claim_id: str, passed: bool, evidence: Any = "") -> Record:
    """Record the outcome of the check of a declared claim, and assert it.

    Parameters
    ----------
    claim_id : str
        An id declared in ``dpcore/claims/*.toml``.
    passed : bool
        Whether every check of the claim passed (for an erratum: whether the
        demonstration that the seed is wrong succeeded).
    evidence : object
        A short human-readable account (a :class:`~dpcore.montecarlo.CheckResult`,
        a number, a sentence); stored with the record.

    Raises
    ------
    KeyError
        If ``claim_id`` is not declared.
    AssertionError
        If ``passed`` is false: a claim that stops holding fails the notebook.
    """
    claim = get_claim(claim_id)
    ok = bool(passed)
    text = str(evidence)
    out_dir = os.environ.get("DPCORE_LEDGER_DIR")
    if out_dir:
        path = Path(out_dir) / f"{claim.chapter}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"id": claim.id, "passed": ok, "evidence": text}, ensure_ascii=False) + "\n")
    if not ok:
        raise AssertionError(f"ledger claim {claim.id!r} failed: {claim.statement} -- {text}")
    rec = Record(claim, ok, text)
    if _in_kernel():  # show the badge (and its anchor) right where the claim is checked
        rec._ipython_display_()
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


def as_dicts() -> list[dict[str, str]]:
    """All declared claims as plain dictionaries (for page generation)."""
    return [asdict(c) for c in claims().values()]
