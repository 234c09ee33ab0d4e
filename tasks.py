#!/usr/bin/env python3
"""The project's two commands, with all set-up included.

    python3 tasks.py book   # build the HTML book into _build/html/ (executes every notebook)
    python3 tasks.py test   # pytest over tests/ and every notebook under chapters/ (nbval)
    python3 tasks.py sweep [--offsets N] [--start K] [--write]
                            # re-run every chapter under N other seed streams (offsets K..K+N-1)
    python3 tasks.py mutants [--only ID ...] [--write]
                            # inject each fault of benchmarks/mutants.toml; which tests/chapters catch it
    python3 tasks.py oracle [--examples N] [--write]
                            # tests/oracle with N examples per family; table of worst errors, violations,
                            # ValueErrors (--write: benchmarks/results/oracle.md); non-zero exit on a violation
    python3 tasks.py lint   # ruff check, ruff format --check (notebooks at 88 columns), mypy --strict dpcore
    python3 tasks.py bench [NAME ...] [-- ARGS]
                            # run benchmarks (gaussian rdp audit import calibration accounting samplers
                            #  calibrate-composed library-audit peers-checked; default all):
                            # each writes benchmarks/results/NAME.md; peers live in their own pinned venvs

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


def lint() -> None:
    """Zero findings or a failure: ruff's rules and format everywhere (chapters at 88 columns), mypy --strict."""
    ensure_env()
    run(BIN / "ruff", "check", ".")
    run(BIN / "ruff", "format", "--check", ".")
    run(BIN / "mypy")  # files and --strict from [tool.mypy] in pyproject.toml


def test(extra: list[str]) -> None:
    ensure_env()
    env = dict(os.environ, MPLBACKEND="Agg")
    run(PY, "-m", "pytest", "-n", "2", "--dist", "loadfile", "--nbval-lax", "tests", "chapters", *extra, env=env)


def _execute_notebook(path: str, offset: int, ledger_dir: str) -> dict[str, object]:
    """Run one chapter under seed-stream ``offset`` (inside the venv); report failed and missing claims."""
    import nbclient
    import nbformat

    os.environ.update(DPCORE_SEED_OFFSET=str(offset), DPCORE_LEDGER_DIR=ledger_dir, MPLBACKEND="Agg")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=900, resources={"metadata": {"path": str(Path(path).parent)}})
    error = ""
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:
        error = f"{exc.ename}: {exc.evalue}".splitlines()[0][:300]
    except Exception as exc:  # a kernel death or time-out is a failure too
        error = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    from dpbook import ledger

    chapter = Path(path).stem
    results = ledger.load_results(ledger_dir)
    declared = [c.id for c in ledger.claims().values() if c.chapter == chapter]
    failed = sorted(cid for cid in declared if cid in results and not results[cid]["passed"])
    missing = sorted(cid for cid in declared if cid not in results)
    return {
        "chapter": chapter,
        "offset": offset,
        "error": error,
        "failed": failed,
        "missing": missing,
        "ok": not (error or failed or missing),
    }


def _run_chapter(
    tree: Path, notebook: Path, offset: int, ledger_dir: Path, env: dict[str, str] | None = None
) -> dict[str, object]:
    """Execute one chapter of ``tree`` in a fresh interpreter (``tasks.py _execute``) and return its report.

    The one notebook-run loop body of ``sweep`` and ``mutants``: a run whose
    report cannot be read (a crash, a kernel death) is a failure with the end
    of its stderr as the error.
    """
    import json

    out = subprocess.run(
        [str(PY), str(tree / "tasks.py"), "_execute", str(notebook), str(offset), str(ledger_dir)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        error = (out.stderr or "no output")[-300:]
        return {"chapter": notebook.stem, "offset": offset, "error": error, "failed": [], "missing": [], "ok": False}


def sweep(argv: list[str]) -> int:
    """Re-execute every chapter under other seed streams and tabulate the failures."""
    import argparse
    import tempfile
    import time
    from concurrent.futures import ThreadPoolExecutor

    parser = argparse.ArgumentParser(prog="tasks.py sweep", description=sweep.__doc__)
    parser.add_argument("--offsets", type=int, default=40, help="number of seed streams (default 40)")
    parser.add_argument("--start", type=int, default=1, help="first offset (default 1; 0 is the book's own)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="notebooks run at once")
    parser.add_argument(
        "--write", action="store_true", help="write the table to benchmarks/results/sweep.md (chapters given: append)"
    )
    parser.add_argument("chapters", nargs="*", help="chapter stems (default: all)")
    args = parser.parse_args(argv)
    if args.offsets < 1 or args.start < 0 or args.jobs < 1:
        parser.error("--offsets and --jobs must be >= 1 and --start >= 0")
    ensure_env()
    paths = sorted((ROOT / "chapters").glob("*.ipynb"))
    if args.chapters:
        paths = [p for p in paths if p.stem in args.chapters]
    offsets = range(args.start, args.start + args.offsets)
    tmp = Path(tempfile.mkdtemp(prefix="dpcore-sweep-"))
    t0 = time.time()

    def one(job: tuple[Path, int]) -> dict[str, object]:
        path, k = job
        return _run_chapter(ROOT, path, k, tmp / f"{path.stem}-{k}")

    jobs = [(p, k) for k in offsets for p in paths]
    with ThreadPoolExecutor(args.jobs) as pool:
        runs = list(pool.map(one, jobs))
    shutil.rmtree(tmp, ignore_errors=True)
    wall = time.time() - t0
    lines = [
        f"Seed sweep: offsets {offsets.start}..{offsets.stop - 1} ({len(offsets)} streams; every int seed s "
        "becomes SeedSequence([s, k])), `python3 tasks.py sweep --offsets "
        f"{args.offsets} --start {args.start}`, wall time {wall:.0f} s on {os.cpu_count()} cores.",
        "",
        "| chapter | runs | failures | failing claims (offset) |",
        "|---|---|---|---|",
    ]
    total_fail = 0
    for path in paths:
        mine = [r for r in runs if r["chapter"] == path.stem]
        bad = [r for r in mine if not r["ok"]]
        total_fail += len(bad)
        what = "; ".join(
            f"{', '.join(r['failed']) or r['error'] or 'not recorded: ' + ', '.join(r['missing'])} ({r['offset']})"
            for r in bad
        )
        lines.append(f"| {path.stem} | {len(mine)} | {len(bad)} | {what or '-'} |")
    lines.append(f"| **all** | {len(runs)} | {total_fail} | |")
    table = "\n".join(lines)
    print(table)
    if args.write:  # the whole book replaces the file; a run of some chapters is appended as its own section
        out = ROOT / "benchmarks" / "results" / "sweep.md"
        if args.chapters and out.exists():
            out.write_text(out.read_text(encoding="utf-8") + f"\n## {', '.join(args.chapters)}\n\n" + table + "\n")
        else:
            out.write_text("# Seed sweep\n\n" + table + "\n", encoding="utf-8")
        print(f"written to {out}")
    return 1 if total_fail else 0


def _copy_tree(dest: Path) -> None:
    """A copy of the working tree (sources, tests, chapters, claims) without caches and builds."""
    ignore = shutil.ignore_patterns(
        ".venv",
        ".git",
        "_build",
        "__pycache__",
        ".pytest_cache",
        "*.egg-info",
        ".ipynb_checkpoints",
        ".mypy_cache",
        ".ruff_cache",
    )
    shutil.copytree(ROOT, dest, ignore=ignore)


def _run_in_copy(copy: Path, tests: list[str], only: list[str] | tuple[str, ...] = ()) -> dict[str, object]:
    """Run ``tests`` and every chapter of ``copy`` (or only those named) with its own dpcore first on the path."""

    env = {k: v for k, v in os.environ.items() if not k.startswith("DPCORE_")}
    env.update(PYTHONPATH=str(copy), MPLBACKEND="Agg")
    out: dict[str, object] = {"tests": None, "chapters": [], "claims": []}
    if tests:
        res = subprocess.run(
            [str(PY), "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
        )
        # pytest: 0 passed, 1 a test failed; anything else (collection error, crash) is reported as such
        out["tests"] = {0: "passed", 1: "failed"}.get(res.returncode, f"error (pytest exit {res.returncode})")
    chapters, claims = [], []
    for nb in sorted((copy / "chapters").glob("*.ipynb")):
        if only and nb.stem not in only:
            continue
        r = _run_chapter(copy, nb, 0, copy / "_ledger", env)
        if not r["ok"]:
            chapters.append(nb.stem)
            claims.extend(r["failed"] or [r["error"] or "claims not recorded"])
    out["chapters"], out["claims"] = chapters, claims
    return out


def mutants(argv: list[str]) -> int:
    """Inject each fault of benchmarks/mutants.toml alone into a copy of the repository; tabulate who kills it."""
    import argparse
    import tempfile
    import time
    import tomllib
    from concurrent.futures import ThreadPoolExecutor

    parser = argparse.ArgumentParser(prog="tasks.py mutants", description=mutants.__doc__)
    parser.add_argument("--only", nargs="*", default=[], help="fault ids (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="faults run at once")
    parser.add_argument("--write", action="store_true", help="write the table to benchmarks/results/mutants.md")
    parser.add_argument(
        "--chapters",
        nargs="*",
        default=[],
        help="run only these chapters (stems) against each fault (default: all); a fault killed only by a chapter "
        "left out is reported as surviving the chapters",
    )
    args = parser.parse_args(argv)
    faults = tomllib.loads((ROOT / "benchmarks" / "mutants.toml").read_text(encoding="utf-8"))["fault"]
    unknown = set(args.only) - {f["id"] for f in faults}
    if unknown:
        parser.error(f"unknown fault ids: {sorted(unknown)}")
    if args.only:
        faults = [f for f in faults if f["id"] in args.only]
    for f in faults:  # a fault that no longer applies is an error of the registry, not a survivor
        found = (ROOT / f["file"]).read_text(encoding="utf-8").count(f["find"])
        if found != 1:
            sys.exit(f"fault {f['id']}: its text occurs {found} times in {f['file']} (must be exactly once)")
    ensure_env()
    tmp = Path(tempfile.mkdtemp(prefix="dpcore-mutants-"))
    t0 = time.time()

    base_dir = tmp / "baseline"
    _copy_tree(base_dir)
    all_tests = sorted({t for f in faults for t in f["tests"]})
    base = _run_in_copy(base_dir, all_tests, args.chapters)
    if base["tests"] != "passed" or base["chapters"]:
        print(f"the unmodified tree does not pass: tests {base['tests']}, chapters {base['chapters']}")
        return 1

    def one(f: dict[str, object]) -> dict[str, object]:
        copy = tmp / str(f["id"])
        _copy_tree(copy)
        target = copy / str(f["file"])
        target.write_text(
            target.read_text(encoding="utf-8").replace(str(f["find"]), str(f["replace"])), encoding="utf-8"
        )
        res = _run_in_copy(copy, list(f["tests"]), args.chapters)  # type: ignore[arg-type]
        shutil.rmtree(copy, ignore_errors=True)
        return {**f, **res}

    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(one, faults))
    shutil.rmtree(tmp, ignore_errors=True)
    wall = time.time() - t0
    by_tests = [r["tests"] != "passed" for r in rows]
    by_chapters = [bool(r["chapters"]) for r in rows]
    by_either = [a or b for a, b in zip(by_tests, by_chapters, strict=True)]
    n = len(rows)

    def rate(k: int) -> str:
        return f"{k}/{n} ({100 * k / n:.0f} %)"

    lines = [
        f"Mutation run: {n} faults of `benchmarks/mutants.toml`, each injected alone; `python3 tasks.py "
        f"mutants{' --chapters ' + ' '.join(args.chapters) if args.chapters else ''}`, wall time {wall:.0f} s on "
        f"{os.cpu_count()} cores. A fault is killed by the tests when "
        "its unit tests fail, by the chapters when a chapter fails or records a FAILED claim.",
        "",
        f"Killed by the unit tests alone: {rate(sum(by_tests))}; by the chapters alone: "
        f"{rate(sum(by_chapters))}; by either: {rate(sum(by_either))}.",
        "",
        "| fault | kind | unit tests | chapters that fail (claims) |",
        "|---|---|---|---|",
    ]
    for r in rows:
        chap = ", ".join(r["chapters"]) or "**survives**"  # type: ignore[arg-type]
        claims = "; ".join(r["claims"])[:160]  # type: ignore[arg-type]
        tests_cell = {"failed": "killed", "passed": "**survives**"}.get(str(r["tests"]), str(r["tests"]))
        lines.append(f"| `{r['id']}` | {r['kind']} | {tests_cell} | {chap}{f' ({claims})' if claims else ''} |")
    table = "\n".join(lines)
    print(table)
    if args.write:
        out = ROOT / "benchmarks" / "results" / "mutants.md"
        out.write_text("# Mutation testing\n\n" + table + "\n", encoding="utf-8")
        print(f"written to {out}")
    return 0 if all(by_chapters) else 1


def oracle(argv: list[str]) -> int:
    """Run the oracle suite (tests/oracle) with N examples per family and tabulate it per family."""
    import argparse
    import json
    import tempfile
    import time

    parser = argparse.ArgumentParser(prog="tasks.py oracle", description=oracle.__doc__)
    parser.add_argument("--examples", type=int, default=30, help="generated examples per family (default 30)")
    parser.add_argument("--write", action="store_true", help="write the table to benchmarks/results/oracle.md")
    parser.add_argument(
        "--append", action="store_true", help="append the table to benchmarks/results/oracle.md (a second run)"
    )
    parser.add_argument(
        "--from-log",
        metavar="PATH",
        help="tabulate the example log of an earlier (or interrupted) run instead of running; --note says which",
    )
    parser.add_argument("--note", default="", help="with --from-log: what run the log is from (printed in the table)")
    parser.add_argument("pytest_args", nargs="*", help="extra arguments for pytest (e.g. -k gaussian)")
    args = parser.parse_args(argv)
    if args.examples < 1:
        parser.error("--examples must be >= 1")
    if args.from_log:
        log, returncode, wall = Path(args.from_log), 0, float("nan")
    else:
        ensure_env()
        log = Path(tempfile.mkdtemp(prefix="dpcore-oracle-")) / "oracle.jsonl"
        env = dict(os.environ, DPCORE_ORACLE_EXAMPLES=str(args.examples), DPCORE_ORACLE_LOG=str(log), MPLBACKEND="Agg")
        t0 = time.time()
        cmd = [str(PY), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/oracle", *args.pytest_args]
        print("+", " ".join(cmd), flush=True)
        returncode = subprocess.run(cmd, cwd=ROOT, env=env).returncode
        wall = time.time() - t0
    rows: dict[str, dict[str, object]] = {}
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:  # the last line of an interrupted run
            continue
        row = rows.setdefault(
            rec["family"], {"domain": rec["domain"], "n": 0, "err": 0.0, "bad": 0, "viol": 0, "ve": 0, "first": ""}
        )
        row["n"] += 1  # type: ignore[operator]
        err = float(rec["error"])
        row["err"] = max(float(row["err"]), err)  # type: ignore[arg-type]
        if rec["n_violations"]:
            row["bad"] += 1  # type: ignore[operator]
            row["viol"] += rec["n_violations"]  # type: ignore[operator]
            row["first"] = row["first"] or rec["violations"][0]
        if rec["value_error"]:
            row["ve"] += 1  # type: ignore[operator]
    if not args.from_log:
        shutil.rmtree(log.parent, ignore_errors=True)
    lines = [
        (
            f"Oracle suite, tabulated from the example log of {args.note or 'an earlier run'}. "
            if args.from_log
            else f"Oracle suite: `python3 tasks.py oracle --examples {args.examples}` (generated examples per family, "
            f"plus the explicit ones), HYPOTHESIS_PROFILE={os.environ.get('HYPOTHESIS_PROFILE', 'default')}, wall "
            f"time {wall:.0f} s on {os.cpu_count()} cores; pytest exit status {returncode}. "
        )
        + "Worst relative error: of an "
        "exact value against its mpmath reference, or how far a bound went past the truth (0: always on its safe "
        "side); slack 1e-9 unless documented otherwise.",
        "",
        "| family | domain sampled | examples | worst relative error | violations (examples) | ValueErrors |",
        "|---|---|---|---|---|---|",
    ]
    total = 0
    for fam, row in rows.items():
        total += int(row["bad"])  # type: ignore[call-overload]
        lines.append(
            f"| {fam} | {row['domain']} | {row['n']} | {float(row['err']):.3g} | "  # type: ignore[arg-type]
            f"{row['viol']} ({row['bad']}) | {row['ve']} |"
        )
    firsts = [f"- {row['first']}" for row in rows.values() if row["first"]]
    if firsts:
        lines += ["", "First violation of each family that has one:", "", *firsts]
    table = "\n".join(lines)
    print(table)
    out = ROOT / "benchmarks" / "results" / "oracle.md"
    if args.write:
        out.write_text("# Oracle suite\n\n" + table + "\n", encoding="utf-8")
        print(f"written to {out}")
    elif args.append:
        with out.open("a", encoding="utf-8") as fh:
            fh.write(f"\n## A further run: `{' '.join(args.pytest_args)}`\n\n" + table + "\n")
        print(f"appended to {out}")
    if total or returncode not in (0, 1):
        return 1
    return returncode


BENCHMARKS = {
    "gaussian": "bench_gaussian.py",  # analytic sigma vs dp_accounting, autodp, diffprivlib, the seed's recipe
    "rdp": "bench_rdp.py",  # RDP accountant and exact composition vs dp_accounting
    "audit": "bench_audit.py",  # audited samples/s, peak memory at 10^9 samples
    "import": "bench_import.py",  # import time of dpcore and dpbook
    "calibration": "calibration_table.py",  # false-alarm rates of every check and its miscalibrated twin
    "accounting": "bench_accounting.py",  # RDP and PLD accounting vs dp_accounting, autodp, prv_accountant
    "samplers": "bench_samplers.py",  # exact discrete Laplace / Gaussian samplers beside numpy's float Laplace
    "calibrate-composed": "bench_calibration.py",  # DP-SGD / composed calibration, epsilon over a run (issue 31)
    "library-audit": "bench_library_audit.py",  # threshold vs representation audits of DP libraries (issue 30)
    "peers-checked": "bench_peers_checked.py",  # the peers' accountants against dpcore's certified bracket (issue 31)
}


def bench(argv: list[str]) -> int:
    """Run the named benchmarks (all by default) one after the other; arguments after ``--`` go to each."""
    names, _, extra = (argv[: argv.index("--")], "--", argv[argv.index("--") + 1 :]) if "--" in argv else (argv, "", [])
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    ensure_env()
    for name in names or list(BENCHMARKS):
        print(f"== bench {name}", flush=True)
        run(PY, ROOT / "benchmarks" / BENCHMARKS[name], *extra)
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "_execute":  # internal: one chapter under one seed stream (runs in the venv)
        import json

        print(json.dumps(_execute_notebook(argv[1], int(argv[2]), argv[3])))
        return 0
    if not argv or argv[0] not in ("book", "test", "sweep", "mutants", "oracle", "lint", "bench"):
        print(__doc__)
        return 2
    try:
        if argv[0] == "book":
            book()
        elif argv[0] == "sweep":
            return sweep(argv[1:])
        elif argv[0] == "mutants":
            return mutants(argv[1:])
        elif argv[0] == "oracle":
            return oracle(argv[1:])
        elif argv[0] == "lint":
            lint()
        elif argv[0] == "bench":
            return bench(argv[1:])
        else:
            test(argv[1:])
    except subprocess.CalledProcessError as exc:
        return exc.returncode or 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
