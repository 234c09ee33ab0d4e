"""What every benchmark script shares: paths relative to the checkout, the peers' venvs, the results table.

A benchmark that compares dpcore with other libraries runs their side in a
virtual environment of its own, built from a pinned requirements file in this
folder (the peers are not dependencies of dpcore): :func:`peer_python` creates
``.venv-bench-<name>`` beside the checkout on first use (or uses ``BENCH_VENV``)
and reinstalls when the requirements file changes. :func:`write_result` writes
``benchmarks/results/<name>.md`` and prints it. Run a benchmark with
``python3 tasks.py bench <name>``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
RESULTS = BENCHMARKS / "results"


def peer_python(requirements: str) -> Path:
    """The Python of the venv holding ``benchmarks/<requirements>``, installed once per version of the file."""
    req = BENCHMARKS / requirements
    name = req.stem.removeprefix("requirements-")
    venv = Path(os.environ.get("BENCH_VENV", ROOT / f".venv-bench-{name}"))
    python = venv / "bin" / "python"
    stamp = venv / f".{req.name}.installed"
    if not python.exists():
        print(f"creating {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if not stamp.exists() or stamp.read_text() != req.read_text():
        print(f"installing {req.name} into {venv} ...", flush=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(req)], check=True)
        stamp.write_text(req.read_text())
    return python


def write_result(name: str, lines: list[str]) -> Path:
    """Write ``benchmarks/results/<name>.md`` from ``lines`` and print it."""
    out = RESULTS / f"{name}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    print(f"wrote {out.relative_to(ROOT)}")
    return out
