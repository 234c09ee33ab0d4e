"""Tests of dpbook.experiments.accountants (chapter 07, issue 31): each check holds where it should and can fail."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

import dpcore
from dpbook.evidence import as_evidence
from dpbook.experiments import accountants as acx

ROOT = Path(__file__).resolve().parents[1]
PEERS_FILE = ROOT / "benchmarks" / "results" / "peers_checked.json"
BOUNDS = ("dp_accounting RDP", "dp_accounting PLD", "autodp RDP", "PRV upper")


def _holds(items: tuple) -> list[bool]:
    return [as_evidence(x).holds for x in items]


def test_epsilon_over_epochs_short_run() -> None:
    run = acx.epsilon_over_epochs(1.1, 60000, 256, 6, 1e-5)
    assert list(run.steps) == [math.floor(e * 60000 / 256) for e in range(1, 7)]
    assert all(_holds(run.evidence)) and not any(_holds(run.controls))
    assert np.all(run.lower <= run.upper) and np.all(run.upper < run.rdp)
    # the RDP column is the default accountant's answer for that many steps (the small grid only seeds the search)
    mech = dpcore.SubsampledGaussianMechanism(1.1, 256 / 60000)
    for i in (0, 5):
        default = dpcore.RdpAccountant().compose(mech, int(run.steps[i])).epsilon(1e-5)
        assert run.rdp[i] == pytest.approx(default, rel=1e-9)


def test_printed_epsilon_recipes() -> None:
    pr = acx.printed_epsilon(1.1, 60000, 256, 60, 1e-5, printed=3.01, opacus_rate=0.004, opacus_printed=2.91)
    assert (pr.steps, pr.opacus_steps) == (14063, 15000)
    assert f"{pr.classical:.3g}" == "3.01" and f"{pr.opacus_classical:.2f}" == "2.91"
    assert all(_holds(pr.evidence)) and not any(_holds(pr.controls))


def test_printed_epsilon_rejects_a_wrong_print() -> None:
    # had the tutorial printed the improved conversion's 2.60, the recipe check would fail
    pr = acx.printed_epsilon(1.1, 60000, 256, 60, 1e-5, printed=2.60, opacus_rate=0.004, opacus_printed=2.91)
    assert not as_evidence(pr.evidence[0]).holds


def test_printed_epsilon_other_opacus_rows() -> None:
    # the corrected README's other rows by the same recipe: (1.3, 15 epochs) -> 1.16, (0.7, 45) -> 6.86
    for sigma, epochs, shown in ((1.3, 15, 1.16), (0.7, 45, 6.86)):
        pr = acx.printed_epsilon(sigma, 60000, 256, epochs, 1e-5, printed=9.99, opacus_rate=0.004, opacus_printed=shown)
        assert as_evidence(pr.evidence[1]).holds


@pytest.mark.skipif(not PEERS_FILE.exists(), reason="committed benchmark table missing")
def test_peers_checked_on_the_committed_table() -> None:
    res = acx.peers_checked(PEERS_FILE, bounds=BOUNDS, tight="autodp RDP")
    assert all(_holds(res.evidence)) and not any(_holds(res.controls))
    assert len(res.labels) == res.lower.size == res.upper.size
    assert np.all(res.lower <= res.upper)


def _small_file(tmp_path: Path, scale: float) -> Path:
    """Two rows of the committed file with dp_accounting's PLD answers multiplied by ``scale``."""
    data = json.loads(PEERS_FILE.read_text(encoding="utf-8"))
    rows = [r for r in data["rows"] if r["kind"] == "gauss" and r["count"] == 1][:2]
    rows = copy.deepcopy(rows)
    for r in rows:
        r["peers"]["dpa_pld"]["eps"] *= scale
    data["rows"] = rows
    path = tmp_path / "peers.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.skipif(not PEERS_FILE.exists(), reason="committed benchmark table missing")
def test_peers_checked_catches_an_under_report(tmp_path: Path) -> None:
    ok = acx.peers_checked(_small_file(tmp_path, 1.0), bounds=BOUNDS, tight="autodp RDP")
    dpa = [e for e in ok.evidence if "dp_accounting PLD" in as_evidence(e).what]
    assert as_evidence(dpa[0]).holds
    bad = acx.peers_checked(_small_file(tmp_path, 1 - 1e-4), bounds=BOUNDS, tight="autodp RDP")
    dpa = [e for e in bad.evidence if "dp_accounting PLD" in as_evidence(e).what]
    assert not as_evidence(dpa[0]).holds


@pytest.mark.skipif(not PEERS_FILE.exists(), reason="committed benchmark table missing")
def test_peers_checked_catches_a_stale_file(tmp_path: Path) -> None:
    data = json.loads(PEERS_FILE.read_text(encoding="utf-8"))
    data["rows"] = copy.deepcopy(data["rows"][:3])
    data["rows"][0]["peers"]["autodp_rdp"]["eps"] *= 1.01  # not what the pinned autodp prints
    path = tmp_path / "stale.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    res = acx.peers_checked(path, bounds=BOUNDS, tight="autodp RDP", prv_max_count=0)  # no PRV re-run
    assert not as_evidence(res.evidence[0]).holds


@pytest.mark.skipif(not PEERS_FILE.exists(), reason="committed benchmark table missing")
def test_peers_checked_catches_a_stale_prv_answer(tmp_path: Path) -> None:
    data = json.loads(PEERS_FILE.read_text(encoding="utf-8"))
    rows = copy.deepcopy([r for r in data["rows"] if r["kind"] == "laplace" and r["count"] == 1])
    rows += copy.deepcopy([r for r in data["rows"] if r["kind"] == "sgd"][:1])
    rows[0]["peers"]["prv"]["upper"] *= 1.001  # not what the pinned prv_accountant prints
    data["rows"] = rows
    path = tmp_path / "stale_prv.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    res = acx.peers_checked(path, bounds=BOUNDS, tight="autodp RDP")
    prv = [e for e in res.evidence if "PRV (lower, estimate, upper) here" in as_evidence(e).what]
    assert len(prv) == 1 and not as_evidence(prv[0]).holds
    data["rows"] = rows[-1:]  # the DP-SGD row alone: no PRV row to re-run, refused rather than skipped
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="nothing to re-run"):
        acx.peers_checked(path, bounds=BOUNDS, tight="autodp RDP")
