"""What ``--eval-reuse`` costs where it is ours: a case's fingerprint, the agent's version
probe (once per process), stamping a run, and looking a recorded run up (per run).

    .venv/bin/python bench/bench_reuse.py [--files 200] [--runs 200]

Prints medians in milliseconds; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_plugin_evals.model import Case
from pytest_plugin_evals.recording import META
from pytest_plugin_evals.reuse import (
    Fingerprint,
    case_part,
    look_up,
    write_stamp,
)
from pytest_plugin_evals.util.process import output_of


def median_ms(action: Callable[[], object], times: int) -> float:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        action()
        spent.append((time.perf_counter() - start) * 1000)
    return statistics.median(spent)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=200, help="files in the case's folder")
    parser.add_argument("--runs", type=int, default=200, help="recorded runs looked up")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = root / "evals" / "case"
        (folder / "fixtures").mkdir(parents=True)
        (folder / "prompt.md").write_text("Which version next?")
        for n in range(args.files):
            (folder / "fixtures" / f"f{n}.txt").write_bytes(os.urandom(4096))
        case = Case(
            name="case", prompt="Which version next?", source="prose",
            path=folder / "prompt.md", dir=folder, suite_root=folder.parent,
        )  # fmt: skip
        each = median_ms(lambda: case_part(case), 20)
        print(f"case fingerprint ({args.files} files of 4 KB): {each:.2f} ms, once per case")
        printed = Fingerprint({"case": case_part(case), "agent": "a", "model": "m"})
        source = root / "earlier"
        runs = []
        for n in range(1, args.runs + 1):
            run = source / "runs" / "case-1" / f"without-{n}"
            run.mkdir(parents=True)
            (run / META).write_text('{"finalMessage": "1.4.1", "costUsd": 0.01}')
            runs.append(run)
        start = time.perf_counter()
        for run in runs:
            write_stamp(run, printed, time.time(), str(source))
        stamp_ms = (time.perf_counter() - start) * 1000 / len(runs)
        print(f"stamping a run: {stamp_ms:.3f} ms")
        now = time.time()
        start = time.perf_counter()
        for run in runs:
            look_up(source, run, printed, max_age=3600, now=now)
        print(f"looking a run up: {(time.perf_counter() - start) * 1000 / len(runs):.3f} ms")
    binary = os.environ.get("EVAL_CLAUDE_BIN")
    if binary:
        probe = median_ms(lambda: output_of([binary, "--version"]), 5)
        print(f"claude --version (once per process and agent): {probe:.0f} ms")


if __name__ == "__main__":
    main()
