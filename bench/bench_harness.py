"""Harness overhead per run, and what parallel runs buy, with an agent that costs nothing.

    python bench/bench_harness.py [--cases 40] [--runs 3]

Generates a plugin with ``--cases`` directory cases (two graders each, two arms), runs
``pytest evals`` with ``cmd:/bin/cat`` (the prompt comes back as the answer) under ``-n 0`` and
``-n 2``, and prints wall time, time per run, and the harness's share once the agent's own
process start (measured separately) is taken out. Nothing is asserted: this is a measurement.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_suite(root: Path, cases: int, runs: int) -> None:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "bench", "version": "1"}')
    for i in range(cases):
        case = root / "evals" / f"case-{i:03d}"
        (case / "graders").mkdir(parents=True)
        (case / "prompt.md").write_text(f"---\nruns: {runs}\n---\nSay hello number {i}\n")
        (case / "graders" / "hello.md").write_text("---\ntype: regex\npattern: hello\n---\n")
        (case / "graders" / "skill.md").write_text("---\ntype: tool_used\ntool: Skill\n---\n")


def time_agent_alone(count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        subprocess.run(["/bin/cat"], input=b"Say hello", capture_output=True, check=True)
    return (time.perf_counter() - start) / count


def time_pytest(root: Path, workers: str) -> tuple[float, dict[str, object]]:
    out = root / f"doc{workers}.json"
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "evals",
            "-q",
            "-p",
            "no:cacheprovider",
            workers,
            "--eval-agent",
            "cmd:/bin/cat",
            "--eval-json",
            str(out),
        ],
        cwd=root,
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    return elapsed, json.loads(out.read_text())


def time_startup(root: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "--version"], cwd=root, capture_output=True, check=False
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
        root = Path(tmp)
        make_suite(root, args.cases, args.runs)
        total_runs = args.cases * args.runs * 2
        agent = time_agent_alone(50)
        startup = time_pytest_startup = time_startup(root)
        print(f"{args.cases} cases × {args.runs} runs × 2 arms = {total_runs} runs")
        print(f"agent process alone: {agent * 1000:.1f} ms per run")
        print(f"pytest start-up: {time_pytest_startup:.2f} s")
        for workers in ("-n0", "-n2"):
            elapsed, doc = time_pytest(root, workers)
            per_run = (elapsed - startup) / total_runs
            print(
                f"{workers}: {elapsed:.2f} s wall, {per_run * 1000:.1f} ms per run, "
                f"harness {max(per_run - agent, 0) * 1000:.1f} ms per run; "
                f"{doc['aggregates']['casesTotal']} cases scored"
            )


if __name__ == "__main__":
    main()
