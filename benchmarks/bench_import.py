"""Time to `import dpcore` in a fresh interpreter, and what it loads.

One command: ``python3 tasks.py bench import`` (writes
``benchmarks/results/import.md``). Each figure is the median of 9 fresh
processes' in-process time for the import statement (``time.perf_counter``
around it), so interpreter start-up is not counted; a warm file-system cache is
assumed (a first run after boot is slower).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import write_result  # noqa: E402

PROBE = (
    "import sys, time\n"
    "t = time.perf_counter()\n"
    "import {module}\n"
    "dt = time.perf_counter() - t\n"
    "heavy = sorted({{m.split('.')[0] for m in sys.modules}} & {{'sympy', 'matplotlib', 'dpbook', 'mpmath'}})\n"
    "print(dt, ','.join(heavy) or '-')\n"
)


def measure(module: str, runs: int = 9) -> tuple[float, str]:
    times, heavy = [], "-"
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True, check=True
        )
        dt, heavy = out.stdout.split()
        times.append(float(dt))
    return statistics.median(times), heavy


def main() -> None:
    rows = [(m, *measure(m)) for m in ("numpy", "scipy.special", "dpcore", "dpbook", "dpbook.symbolic")]
    lines = [
        "# Import time",
        "",
        "`python3 tasks.py bench import`: median of 9 fresh processes, the import statement alone.",
        "",
        "| import | seconds | book machinery loaded |",
        "|---|---|---|",
        *[f"| `import {m}` | {t:.3f} | {h} |" for m, t, h in rows],
        "",
    ]
    write_result("import", lines)


if __name__ == "__main__":
    main()
