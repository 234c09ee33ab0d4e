#!/usr/bin/env python3
"""The project's two commands, with all set-up included.

    python3 tasks.py book   # build the HTML book into _build/html/ (executes every notebook)
    python3 tasks.py test   # pytest over tests/ and every notebook under chapters/ (nbval)

Each creates ``.venv`` (if missing) and installs the pinned ``requirements.txt``
into it (again only when that file changed), so a fresh clone needs nothing but
Python 3.11. Extra arguments after ``test`` are passed on to pytest.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"


def run(*cmd: str | os.PathLike[str], env: dict[str, str] | None = None) -> None:
    print("+", " ".join(map(str, cmd)), flush=True)
    subprocess.run([str(c) for c in cmd], cwd=ROOT, check=True, env=env)


def ensure_env() -> None:
    """Create the virtual environment and install requirements.txt if it changed."""
    if sys.version_info[:2] != (3, 11):
        print(f"note: running under Python {sys.version.split()[0]}; the pins target 3.11", file=sys.stderr)
    if not PY.exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    req = ROOT / "requirements.txt"
    stamp = VENV / ".requirements.sha256"
    digest = hashlib.sha256(req.read_bytes() + (ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text() != digest:
        run(PY, "-m", "pip", "install", "--disable-pip-version-check", "-q", "-r", req)
        stamp.write_text(digest)


def book() -> None:
    ensure_env()
    ledger_dir = ROOT / "_build" / "ledger"
    shutil.rmtree(ledger_dir, ignore_errors=True)
    # No MPLBACKEND here: the kernels must use the inline backend, or the figures vanish from the book.
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["DPCORE_LEDGER_DIR"] = str(ledger_dir)
    run(BIN / "jupyter-book", "build", ".", "-W", "-n", "--keep-going", env=env)
    print(f"\nThe book is at {ROOT / '_build' / 'html' / 'index.html'}")


def test(extra: list[str]) -> None:
    ensure_env()
    env = dict(os.environ, MPLBACKEND="Agg")
    run(PY, "-m", "pytest", "-n", "2", "--dist", "loadfile", "--nbval-lax", "tests", "chapters", *extra, env=env)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("book", "test"):
        print(__doc__)
        return 2
    try:
        if argv[0] == "book":
            book()
        else:
            test(argv[1:])
    except subprocess.CalledProcessError as exc:
        return exc.returncode or 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
