"""Harness overhead per run: what one eval run costs beyond the agent, and what -n buys.

    python bench/bench_harness.py [--cases 40] [--runs 3] [--repeat 3] [--quick] [--package DIR]

Generates a plugin with ``--cases`` directory cases (two graders each, two arms) and runs
``pytest evals`` with an in-process agent that answers at once (``py:``), so every millisecond
measured is the harness's: collection, the run's folders and environment, grading, recording,
reporting. It also runs the same number of empty ordinary tests, which is what pytest itself
costs per item, and ``cmd:/bin/cat`` (a process per run). Prints medians of ``--repeat``
sessions: wall and CPU time (the children's, steadier on a loaded machine), the per-run cost
after start-up and collection, and the harness's own share over pytest's per-item cost. Nothing
is asserted: this is a measurement (bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INSTANT_AGENT = "def run(request):\n    return 'hello ' + request.prompt\n"


def make_suite(root: Path, cases: int, runs: int) -> None:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "bench", "version": "1"}')
    (root / "instant_agent.py").write_text(INSTANT_AGENT)
    for i in range(cases):
        case = root / "evals" / f"case-{i:03d}"
        (case / "graders").mkdir(parents=True)
        (case / "prompt.md").write_text(f"---\nruns: {runs}\n---\nSay hello number {i}\n")
        (case / "graders" / "hello.md").write_text("---\ntype: regex\npattern: hello\n---\n")
        (case / "graders" / "skill.md").write_text("---\ntype: tool_used\ntool: Skill\n---\n")
    tests = root / "plain"
    tests.mkdir()
    body = "import pytest\n\n@pytest.mark.parametrize('n', range({}))\ndef test_x(n):\n    pass\n"
    (tests / "test_plain.py").write_text(body.format(cases * runs * 2))


def session(root: Path, args: list[str], package: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one pytest session; ``package`` is a folder holding
    another version's ``pytest_plugin_evals`` to run instead of the installed one."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        check=False,
        env={
            "PYTHONPATH": os.pathsep.join(str(p) for p in (package, root) if p is not None),
            "PATH": "/usr/bin:/bin",
        },
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"pytest {args} failed:\n{done.stdout.decode()[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def median_session(
    root: Path, args: list[str], repeat: int, package: Path | None = None
) -> tuple[float, float]:
    """Median wall and median CPU seconds of ``repeat`` sessions."""
    runs = [session(root, args, package) for _ in range(repeat)]
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--package",
        type=Path,
        help="a folder holding another version's pytest_plugin_evals, run instead (a comparison)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="the in-process agent at -n 0 only (no cat, no -n 2)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
        root = Path(tmp)
        make_suite(root, args.cases, args.runs)
        total = args.cases * args.runs * 2
        out = root / "doc.json"
        collect, collect_cpu = median_session(
            root, ["evals", "--collect-only"], args.repeat, args.package
        )
        plain, plain_cpu = median_session(root, ["plain"], args.repeat)
        plain_collect, plain_collect_cpu = median_session(
            root, ["plain", "--collect-only"], args.repeat
        )
        pytest_per_item = (plain - plain_collect) / total
        pytest_cpu_per_item = (plain_cpu - plain_collect_cpu) / total
        print(f"{args.cases} cases × {args.runs} runs × 2 arms = {total} runs; "
              f"medians of {args.repeat} sessions")  # fmt: skip
        print(f"pytest itself: {pytest_per_item * 1000:.2f} ms per empty test "
              f"({pytest_cpu_per_item * 1000:.2f} ms CPU)")  # fmt: skip
        print(f"collection of the suite (start-up included): {collect:.2f} s "
              f"({collect_cpu:.2f} s CPU)")  # fmt: skip
        agents = [("py:instant_agent:run", "in-process agent"), ("cmd:/bin/cat", "cmd:/bin/cat")]
        for agent, label in agents[:1] if args.quick else agents:
            for workers in ("-n0",) if args.quick else ("-n0", "-n2"):
                wall, cpu = median_session(
                    root, ["evals", workers, "--eval-agent", agent, "--eval-json", str(out)],
                    args.repeat,
                    args.package,
                )  # fmt: skip
                doc = json.loads(out.read_text())
                assert doc["aggregates"]["runsTotal"] == total, doc["aggregates"]
                per_run = (wall - collect) / total
                cpu_per_run = (cpu - collect_cpu) / total
                print(
                    f"{label:16} {workers}: {wall:5.2f} s wall, {per_run * 1000:5.2f} ms per run, "
                    f"{cpu_per_run * 1000:5.2f} ms CPU per run"
                    + (
                        f" (harness {(cpu_per_run - pytest_cpu_per_item) * 1000:.2f} ms CPU over "
                        "pytest's own per-item cost)"
                        if workers == "-n0"
                        else ""
                    )
                )


if __name__ == "__main__":
    main()
