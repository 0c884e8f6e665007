"""Where the project's own test suite spends its CPU, and the shortest it can take.

    python bench/bench_suite.py [--cpus 2] [--top 25] [-- PYTEST ARGS]

Runs the suite (``tests``, or the paths and options after ``--``) in one process, without
xdist, with the probe plugin ``suite_probe`` reading the CPU the whole machine used during each
test (``/proc/stat``: the processes each test starts count, the sandboxed agent CLIs too).
Prints the CPU by folder and by module, and the floor: the whole suite's CPU divided by the
CPUs, which no ``-n`` can beat on that machine. Run it on an idle machine (anything else that
runs meanwhile is counted too); it takes about as long as the suite's CPU. Nothing is
asserted: this is a measurement (bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench_reference import machine_cpu

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpus", type=int, nargs="+", default=[2, os.cpu_count() or 1])
    parser.add_argument("--top", type=int, default=25, help="the modules shown")
    parser.add_argument("pytest_args", nargs="*", help="after --: what pytest runs")
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as scripts/test.sh runs the suite
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "bench"), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as tmp:
        out = Path(tmp) / "rows.json"
        env["SUITE_PROBE_OUT"] = str(out)
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                "-p", "suite_probe", *(args.pytest_args or ["tests"])]  # fmt: skip
        cpu, wall = machine_cpu(), time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, env=env, check=False)
        cpu, wall = machine_cpu() - cpu, time.perf_counter() - wall
        if not out.exists():
            raise SystemExit(f"pytest ended with {done.returncode} and measured no test")
        rows = [(str(n), float(w), float(c)) for n, w, c in json.loads(out.read_text("utf-8"))]
    by_folder: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    by_module: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for nodeid, seconds, used in rows:
        module = nodeid.split("::", 1)[0]
        parts = module.split("/")
        for table, key in ((by_folder, "/".join(parts[:2])), (by_module, module)):
            table[key][0] += used
            table[key][1] += seconds
            table[key][2] += 1
    tests_cpu = sum(v[0] for v in by_folder.values())
    print(
        f"\n{len(rows)} tests in {wall:.0f} s; the machine's CPU: {cpu:.0f} s in all, "
        f"{tests_cpu:.0f} s within the tests (pytest's exit status {done.returncode})\n"
    )
    print("| folder | tests | CPU | wall |\n| --- | ---: | ---: | ---: |")
    for key, (used, seconds, n) in sorted(by_folder.items(), key=lambda kv: -kv[1][0]):
        print(f"| {key} | {n:.0f} | {used:.0f} s | {seconds:.0f} s |")
    print(f"\nthe {args.top} modules that use the most CPU:\n")
    print("| module | tests | CPU | wall |\n| --- | ---: | ---: | ---: |")
    ranked = sorted(by_module.items(), key=lambda kv: -kv[1][0])[: args.top]
    for key, (used, seconds, n) in ranked:
        print(f"| {key} | {n:.0f} | {used:.1f} s | {seconds:.1f} s |")
    print("\nthe floor (the whole session's CPU over the CPUs: no -n goes below it):")
    for cpus in sorted(set(args.cpus)):
        print(f"  {cpus} CPU(s): {cpu / cpus:.0f} s ({cpu / cpus / 60:.1f} min)")


if __name__ == "__main__":
    main()
