"""Where the project's own test suite spends its CPU, and the shortest it can take.

    python bench/bench_suite.py [--cpus 2] [--top 25] [--rows FILE] [-- PYTEST ARGS]

Runs the suite (``tests``, or the paths and options after ``--``) in one process, without
xdist, with the probe plugin ``suite_probe`` reading the CPU of the session's process tree
during each test: user and system time of the session and of every process it starts, the
sandboxed agent CLIs too. Where it may (root, a writable cgroup hierarchy) it runs the session
in a CPU-accounting cgroup of its own, so what else runs on the machine is not counted: the
figures hold on a shared machine. Elsewhere it falls back to ``getrusage`` (see
``suite_probe``). Prints the CPU by folder and by module, and the floor: the whole suite's CPU
divided by the CPUs, which no ``-n`` can beat. It takes about as long as the suite's CPU.
Nothing is asserted: this is a measurement (bench/README.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CGROUPS = Path("/sys/fs/cgroup")


@contextlib.contextmanager
def accounted() -> Iterator[Path | None]:
    """This process (and so what it starts) in a CPU-accounting cgroup of its own, for the
    block: the file its usage is read from (``None`` where no cgroup could be made)."""
    v2 = (CGROUPS / "cgroup.controllers").exists()
    parent = CGROUPS if v2 else CGROUPS / "cpuacct"
    here = parent / f"bench-suite-{os.getpid()}"
    try:
        here.mkdir()
        (here / "cgroup.procs").write_text(str(os.getpid()), encoding="ascii")
    except OSError:
        with contextlib.suppress(OSError):
            here.rmdir()
        yield None
        return
    try:
        yield here / ("cpu.stat" if v2 else "cpuacct.usage")
    finally:
        (parent / "cgroup.procs").write_text(str(os.getpid()), encoding="ascii")
        with contextlib.suppress(OSError):
            here.rmdir()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpus", type=int, nargs="+", default=[2, os.cpu_count() or 1])
    parser.add_argument("--top", type=int, default=25, help="the modules shown")
    parser.add_argument(
        "--rows", type=Path, help="also write each test's [nodeid, wall, CPU] to this JSON file"
    )
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
        with accounted() as usage:
            if usage is not None:
                env["SUITE_PROBE_CGROUP"] = str(usage)
            start, wall = os.times(), time.perf_counter()
            done = subprocess.run(argv, cwd=ROOT, env=env, check=False)
            end, wall = os.times(), time.perf_counter() - wall
            cpu = (end.children_user + end.children_system) - (
                start.children_user + start.children_system
            )
            if usage is not None:
                cpu = read_usage(usage)
        if not out.exists():
            raise SystemExit(f"pytest ended with {done.returncode} and measured no test")
        rows = [(str(n), float(w), float(c)) for n, w, c in json.loads(out.read_text("utf-8"))]
    if args.rows:
        args.rows.write_text(json.dumps(rows, indent=0), encoding="utf-8")
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
    how = "its own cgroup" if usage is not None else "getrusage (unreaped sandboxes missed)"
    print(
        f"\n{len(rows)} tests in {wall:.0f} s; the session's process tree used {cpu:.0f} s of "
        f"CPU ({how}), {tests_cpu:.0f} s within the tests (pytest's exit status "
        f"{done.returncode})\n"
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


def read_usage(usage: Path) -> float:
    """Seconds of CPU a cgroup's ``usage`` file says its processes used."""
    text = usage.read_text(encoding="ascii")
    if usage.name == "cpu.stat":
        return int(text.split("usage_usec", 1)[1].split()[0]) / 1e6
    return int(text) / 1e9


if __name__ == "__main__":
    main()
