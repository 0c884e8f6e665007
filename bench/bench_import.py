"""What having the plugin installed costs a project that has no evals.

    python bench/bench_import.py [--repeat 30]

Makes a project with one ordinary test and runs ``pytest -q -p no:cacheprovider`` on it, with the
plugin (as installed) and with ``-p no:evals``, interleaved, ``--repeat`` times each; prints the
median wall time of each and their difference (the price of the plugin on every pytest run), and
the modules the entry point imports with ``python -X importtime``. Nothing is asserted: this is
a measurement (see bench/README.md for the figures and the target, about 20 ms).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(root: Path, extra: list[str], *, warm: bool = False) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one pytest run; ``warm`` writes the byte code caches
    (pytest's rewritten modules included) that any later run of an installed plugin finds."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if warm:
        env.pop("PYTHONDONTWRITEBYTECODE")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
        cwd=root,
        capture_output=True,
        check=False,
        env=env,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"pytest failed:\n{done.stdout.decode()}{done.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def import_profile(repeat: int) -> list[tuple[float, str]]:
    """(median cumulative microseconds over ``repeat`` interpreters, module) of the package's
    modules the entry point imports (``python -X importtime``: wall time)."""
    seen: dict[str, list[int]] = {}
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import pytest, pytest_plugin_evals.plugin"],
            cwd=tempfile.gettempdir(),  # the installed package, not one in the current folder
            capture_output=True,
            text=True,
            check=True,
        )
        for line in done.stderr.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[2].lstrip().startswith("pytest_plugin_evals"):
                seen.setdefault(parts[2].strip(), []).append(int(parts[1]))
    return [(statistics.median(us), name) for name, us in seen.items()]


IMPORT_CPU = """
import time, pytest
start = time.process_time()
import pytest_plugin_evals.plugin
print(time.process_time() - start)
"""


def import_cpu(repeat: int) -> float:
    """Median CPU seconds of importing the entry point (pytest already imported)."""
    times = []
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-c", IMPORT_CPU],
            cwd=tempfile.gettempdir(),
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(float(done.stdout))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        root = Path(tmp)
        (root / "test_one.py").write_text("def test_one():\n    assert True\n")
        with_plugin: list[tuple[float, float]] = []
        without: list[tuple[float, float]] = []
        run_once(root, [], warm=True)  # warm the file cache and the byte code caches
        for _ in range(args.repeat):
            with_plugin.append(run_once(root, []))
            without.append(run_once(root, ["-p", "no:evals"]))
    print(f"pytest on a one-test project, median of {args.repeat} runs each:")
    print("                        wall        CPU")
    for label, runs in (("with the plugin", with_plugin), ("with -p no:evals", without)):
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"  {label:18} {wall * 1000:7.1f} ms {cpu * 1000:7.1f} ms")
    wall_cost = statistics.median(w for w, _ in with_plugin) - statistics.median(
        w for w, _ in without
    )
    cpu_cost = statistics.median(c for _, c in with_plugin) - statistics.median(
        c for _, c in without
    )
    print(f"  the plugin costs   {wall_cost * 1000:7.1f} ms {cpu_cost * 1000:7.1f} ms")
    rows = import_profile(args.repeat)
    top = next((us for us, name in rows if name == "pytest_plugin_evals.plugin"), 0)
    cpu = import_cpu(args.repeat)
    print(
        f"importing pytest_plugin_evals.plugin: {cpu * 1000:.1f} ms CPU, {top / 1000:.1f} ms "
        f"wall cumulative (medians of {args.repeat}); modules (wall):"
    )
    for us, name in rows:
        print(f"  {us / 1000:6.1f} ms  {name}")


if __name__ == "__main__":
    main()
