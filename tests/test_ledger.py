"""The verification ledger is complete, consistent, and never silently shrinks.

* every ``dpbook/claims/*.toml`` parses into well-formed claims;
* every chapter notebook that calls ``ledger.record`` has its ids declared
  (for that chapter), and every declared id is checked by its chapter's
  notebook (found by scanning the notebooks' sources: ids are written literally);
* the number of declared claims, in total and per chapter, is at least the
  committed floor in ``dpbook/claims/COUNT`` (raise it deliberately when
  claims are added; lowering it is a visible, reviewed change);
* when ``$DPCORE_LEDGER_DIR`` names a book build's records (``.ci/run`` sets it
  after the build), none of them failed, each is declared, and every claim of
  a chapter that ran is recorded.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tomllib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import dpcore
from dpbook import ledger
from dpbook.evidence import Compare, Fact, Test

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
FLOOR_FILE = ledger.CLAIMS_DIR / "COUNT"
ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*(\.[a-z0-9][a-z0-9_-]*)+$")
RECORD_CALL = re.compile(r"\brecord\(\s*(?:claim_id\s*=\s*)?[rbuf]?([\"'])(?P<id>[^\"']+)\1")
STRING_LITERAL = re.compile(r"([\"'])(?P<s>[a-z0-9][a-z0-9._-]*)\1")


def notebook_code(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "\n".join(
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in nb["cells"]
        if c["cell_type"] == "code"
    )


def chapter_sources() -> dict[str, str]:
    return {p.stem: notebook_code(p) for p in sorted(CHAPTERS.glob("*.ipynb"))}


def read_floor() -> tuple[int, dict[str, int]]:
    total, per_chapter = 0, {}
    for line in FLOOR_FILE.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, value = line.split()
        if key == "total":
            total = int(value)
        else:
            per_chapter[key] = int(value)
    return total, per_chapter


# --------------------------------------------------------------------------- the registry
def test_registry_parses_and_is_well_formed() -> None:
    ledger.claims.cache_clear()
    declared = ledger.claims()
    for path in sorted(ledger.CLAIMS_DIR.glob("*.toml")):
        with path.open("rb") as fh:
            data = tomllib.load(fh)
        assert set(data) <= {"claim"}, f"{path.name}: unexpected top-level keys {set(data) - {'claim'}}"
        for entry in data.get("claim", []):
            assert entry["chapter"] == path.stem, f"{path.name}: claim {entry['id']} names chapter {entry['chapter']}"
    for cid, claim in declared.items():
        assert ID_RE.match(cid), f"claim id {cid!r} is not '<chapter-slug>.<name>' in lower case"
        assert (CHAPTERS / f"{claim.chapter}.ipynb").exists(), f"{cid}: no notebook chapters/{claim.chapter}.ipynb"
        assert claim.statement.strip(), f"{cid}: empty statement"
        if claim.kind == "erratum":
            assert cid.startswith("erratum."), f"erratum {cid!r} must be named 'erratum.<seed>.<name>'"
            assert claim.seed, f"erratum {cid} must name the seed file it corrects"
            assert claim.passage.strip(), f"erratum {cid} must quote the seed's passage"
        else:
            assert not cid.startswith("erratum."), f"{cid} is named like an erratum but has kind 'claim'"
        if claim.seed:
            assert re.fullmatch(r"\d{3}", claim.seed), f"{cid}: seed must be a 3-digit seed file prefix"
    anchors = Counter(ledger.anchor(cid) for cid in declared)
    assert not [a for a, n in anchors.items() if n > 1], "two claim ids map to the same HTML anchor"


def test_bad_declarations_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = {
        "missing": '[[claim]]\nid = "x.a"\nchapter = "c"\nkind = "claim"\n',
        "kind": '[[claim]]\nid = "x.a"\nchapter = "c"\nstatement = "s"\nseed = ""\npassage = ""\nkind = "maybe"\n',
        "erratum": '[[claim]]\nid = "erratum.000.a"\nchapter = "c"\nstatement = "s"\nseed = "000"\n'
        'passage = "p"\nkind = "erratum"\n',
        "seed": '[[claim]]\nid = "x.a"\nchapter = "c"\nstatement = "s"\nseed = "009"\npassage = ""\nkind = "claim"\n',
    }
    for name, text in cases.items():
        d = tmp_path / name
        d.mkdir()
        (d / "c.toml").write_text(text)
        monkeypatch.setattr(ledger, "CLAIMS_DIR", d)
        ledger.claims.cache_clear()
        ledger.seeds.cache_clear()
        with pytest.raises(ValueError):
            ledger.claims()
    ledger.claims.cache_clear()
    ledger.seeds.cache_clear()


def test_the_seeds_table_names_the_shared_articles() -> None:
    table = ledger.seeds()
    assert sorted(table) == ["000", "001", "002", "003", "004"]
    shared = Path(__file__).resolve().parents[2] / "shared" / "seeds"
    if shared.is_dir():  # the articles are not in the repository; where they are beside it, the names match
        assert sorted(e["file"] for e in table.values()) == sorted(p.name for p in shared.glob("*.txt"))


def _mc(claimed: float, seed: int, alpha: float = 5e-7) -> dpcore.CheckResult:
    """A Clopper-Pearson test of P(U < 1/2) = claimed for U uniform."""
    return dpcore.check_probability(lambda g, n: g.random(n), lambda u: u < 0.5, 20_000, claimed, rng=seed, alpha=alpha)


def test_record_computes_the_verdict_and_writes_failures_before_raising(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cid, claim = next((i, c) for i, c in ledger.claims().items() if c.kind == "claim")
    monkeypatch.setenv("DPCORE_LEDGER_DIR", str(tmp_path))
    with pytest.raises(KeyError):
        ledger.record("no-such.claim", Compare("x", 1, "<=", 2), controls=[Compare("x", 3, "<=", 2)])
    good, wrong = Compare("1 <= 2", 1.0, "<=", 2.0), Compare("3 <= 2", 3.0, "<=", 2.0)
    rec = ledger.record(cid, good, _mc(0.5, 1), controls=[wrong, Test("P = 0.6", result=_mc(0.6, 2), true_value=0.5)])
    assert rec.passed and rec.kinds == ["monte-carlo", "numeric"]
    assert 5e-7 <= rec.verdict.false_alarm < 6e-7  # the control's miss probability is counted too
    assert f'id="{ledger.anchor(cid)}"' in rec._repr_html_()
    # a claim whose evidence fails, a control that is not rejected: recorded as FAILED, then raised
    with pytest.raises(AssertionError, match="FAILED"):
        ledger.record(cid, wrong, controls=[good])
    lines = [json.loads(x) for x in (tmp_path / f"{claim.chapter}.jsonl").read_text().splitlines()]
    assert [r["passed"] for r in lines] == [True, False]
    assert len(lines[1]["reasons"]) == 2 and "3 <= 2" in lines[1]["reasons"][0]
    # a Monte Carlo control without the true value that bounds its miss probability fails the claim
    with pytest.raises(AssertionError, match="miss probability"):
        ledger.record(cid, good, _mc(0.5, 1), controls=[_mc(0.6, 2)])
    assert lines[1]["evidence"][0]["detail"] == "3 <= 2"  # the numbers are on the record
    assert ledger.load_results(tmp_path)[cid]["passed"] is False  # the last record of an id wins


def test_record_refuses_verdicts_it_did_not_compute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cid = next(iter(ledger.claims()))
    monkeypatch.setenv("DPCORE_LEDGER_DIR", str(tmp_path))
    control = [Compare("3 <= 2", 3.0, "<=", 2.0)]
    for verdict in (True, "False", 1, float("nan"), None):
        with pytest.raises(TypeError):
            ledger.record(cid, verdict, controls=control)
    with pytest.raises(TypeError):
        Fact("a string is not a bool", "True")
    with pytest.raises(ValueError):  # no evidence, no control
        ledger.record(cid, controls=control)
    with pytest.raises(ValueError):
        ledger.record(cid, Compare("1 <= 2", 1.0, "<=", 2.0))
    assert not list(tmp_path.glob("*.jsonl")), "a refused call must not be recorded"


def test_record_enforces_the_books_false_alarm_level(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cid, claim = next(iter(ledger.claims().items()))
    monkeypatch.setenv("DPCORE_LEDGER_DIR", str(tmp_path))
    wrong = Compare("3 <= 2", 3.0, "<=", 2.0)
    with pytest.raises(AssertionError, match="false-alarm"):
        ledger.record(cid, _mc(0.5, 1, 1e-6), _mc(0.5, 2, 1e-6), controls=[wrong])  # 2e-6 > 1e-6
    rec = json.loads((tmp_path / f"{claim.chapter}.jsonl").read_text().splitlines()[-1])
    assert not rec["passed"] and rec["false_alarm"] == pytest.approx(2e-6)


def test_anchor_slugs() -> None:
    assert ledger.anchor("gaussian.theorem8-mc") == "ledger-gaussian-theorem8-mc"
    assert ledger.anchor("erratum.002.erf-upper-limit") == "ledger-erratum-002-erf-upper-limit"


# --------------------------------------------------------------------------- chapters <-> registry
def test_every_recorded_id_is_declared_for_its_chapter() -> None:
    declared = ledger.claims()
    problems = []
    for stem, code in chapter_sources().items():
        for m in RECORD_CALL.finditer(code):
            cid = m["id"]
            if cid not in declared:
                problems.append(f"chapters/{stem}.ipynb records {cid!r}, which dpbook/claims/*.toml does not declare")
            elif declared[cid].chapter != stem:
                problems.append(f"chapters/{stem}.ipynb records {cid!r}, declared for {declared[cid].chapter}")
        if "record(" in code and "ledger" in code and not (ledger.CLAIMS_DIR / f"{stem}.toml").exists():
            problems.append(f"chapters/{stem}.ipynb calls ledger.record but dpbook/claims/{stem}.toml is missing")
    assert not problems, "\n".join(problems)


def test_every_declared_id_is_checked_by_its_chapter() -> None:
    sources = chapter_sources()
    missing = []
    for cid, claim in ledger.claims().items():
        code = sources.get(claim.chapter, "")
        literals = {m["s"] for m in STRING_LITERAL.finditer(code)}
        if "record(" not in code or cid not in literals:
            missing.append(f"{cid} (declared for chapters/{claim.chapter}.ipynb)")
    assert not missing, "declared but never recorded (write the id literally in the record call):\n" + "\n".join(
        missing
    )


def test_declared_claims_never_silently_drop() -> None:
    total_floor, chapter_floor = read_floor()
    declared = ledger.claims()
    per_chapter = Counter(c.chapter for c in declared.values())
    assert len(declared) >= total_floor, (
        f"{len(declared)} claims are declared, fewer than the floor {total_floor} in {FLOOR_FILE}: "
        "a claim was removed. If that is deliberate, lower the floor in the same commit and say why."
    )
    drops = {ch: (per_chapter.get(ch, 0), n) for ch, n in chapter_floor.items() if per_chapter.get(ch, 0) < n}
    assert not drops, f"chapters below their claim floor (declared, floor): {drops}"


# --------------------------------------------------------------------------- a build's records
def build_ledger_dir() -> Path | None:
    """The records of the build under test: only when named by ``$DPCORE_LEDGER_DIR``.

    ``.ci/run`` sets it after building the book. A ``_build/ledger`` left in a working
    tree by an older build is not read: after a claim is renamed it would fail the
    test suite for a build that no longer describes the code.
    """
    named = os.environ.get("DPCORE_LEDGER_DIR")
    return Path(named) if named else None


def test_no_record_failed_in_the_last_build() -> None:
    directory = build_ledger_dir()
    if directory is None:
        pytest.skip("set DPCORE_LEDGER_DIR to a book build's ledger folder (.ci/run does)")
    files = sorted(directory.glob("*.jsonl")) if directory.is_dir() else []
    if not files:
        pytest.skip(f"no book build records in {directory} (build the book first)")
    declared = ledger.claims()
    failed, undeclared, unrecorded = [], [], []
    for path in files:
        seen = set()
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            seen.add(rec["id"])
            if rec["id"] not in declared:
                undeclared.append(rec["id"])
            if not rec["passed"]:
                failed.append(f"{rec['id']}: {'; '.join(rec.get('reasons', []))}")
        unrecorded += [cid for cid, c in declared.items() if c.chapter == path.stem and cid not in seen]
    assert not failed, "records that FAILED in the build:\n" + "\n".join(failed)
    assert not undeclared, f"records of undeclared ids: {undeclared}"
    assert not unrecorded, f"claims of chapters that ran but were not recorded: {unrecorded}"


# --------------------------------------------------------------------------- issue 15: nothing is read as "passed"
def test_record_refuses_every_non_verdict_with_a_value_error_naming_the_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ledger.record(id, 'False') and record(id, NaN) used to be recorded as passed (bool(passed))
    cid = next(iter(ledger.claims()))
    monkeypatch.setenv("DPCORE_LEDGER_DIR", str(tmp_path))
    good, wrong = Compare("1 <= 2", 1.0, "<=", 2.0), Compare("3 <= 2", 3.0, "<=", 2.0)
    for verdict in ("False", "True", float("nan"), True, False, np.bool_(True), 1, 0.0, None, b"ok"):
        with pytest.raises(ValueError, match=r"evidence\[1\]"):
            ledger.record(cid, good, verdict, controls=[wrong])
        with pytest.raises(ValueError, match=r"controls\[0\]"):
            ledger.record(cid, good, controls=[verdict])
    with pytest.raises(ValueError, match="controls"):
        ledger.record(cid, good, controls=wrong)  # a single control, not a list
    with pytest.raises(ValueError, match="controls"):
        ledger.record(cid, good, controls="False")
    # a result object without a defined verdict: passed not a bool, or NaN in its numbers
    res = _mc(0.5, 1)
    for forged in (dataclasses.replace(res, passed="False"), dataclasses.replace(res, ci_low=float("nan"))):
        with pytest.raises(ValueError):
            ledger.record(cid, good, forged, controls=[wrong])
    assert not list(tmp_path.glob("*.jsonl")), "a refused call must not be recorded"


def test_a_failing_result_object_is_recorded_failed_with_its_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cid, claim = next((i, c) for i, c in ledger.claims().items() if c.kind == "claim")
    monkeypatch.setenv("DPCORE_LEDGER_DIR", str(tmp_path))
    failing = dpcore.probability_result(900, 1000, 0.5, alpha=5e-7)  # 900 of 1000 is no fair coin
    assert failing.passed is False
    with pytest.raises(AssertionError, match="FAILED"):
        ledger.record(cid, failing, controls=[Compare("3 <= 2", 3.0, "<=", 2.0)])
    (rec,) = [json.loads(x) for x in (tmp_path / f"{claim.chapter}.jsonl").read_text().splitlines()]
    assert rec["passed"] is False and "evidence does not hold" in rec["reasons"][0]
    ev = rec["evidence"][0]
    assert ev["holds"] is False and ev["alpha"] == 5e-7
    assert "REJECT" in ev["detail"] and "estimate 0.9" in ev["detail"] and "n=1,000" in ev["detail"]
