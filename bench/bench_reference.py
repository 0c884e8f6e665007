"""Side by side: the same suite under ``claude plugin eval -j N`` and ``pytest -n N``.

    python bench/bench_reference.py [--claude-bin PATH] [--workers 1 4] [--delays 0 1] [--repeat 3]

Both run the same pinned ``claude`` binary against the same scripted model on 127.0.0.1
(``pytest_plugin_evals.testing``): 8 directory cases × 3 runs × 2 arms = 48 runs, each a Skill
call and an answer (two model calls), graded by a regex and a tool_used grader, no judge. With
``--delays 1`` every model call waits one second first, as a real model would make it wait.
``claude plugin eval -j J`` is set against ``pytest -n J`` for each J of ``--workers``; the two
tools alternate (the one that went first goes second in the next repetition), each repetition
on a fresh copy of the suite, after one small untimed session of each (a first session pays
for what later ones find done: bytecode compiled, files read from disk). Prints each
session's wall time and the CPU time of what it reaped, then a table of the
medians and the ratio ours/reference, with the load average; checks that both graded every run
the same way. Nothing is asserted beyond that: this is a measurement (bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_plugin_evals.testing import Rule, ScriptedModel, delay, text, tool_use
from pytest_plugin_evals.util.process import IdleMeter

SKILL_MD = """\
---
name: next-version
description: Work out the next semantic version of a project. Use when someone asks which \
version to release next.
---

# Next version

Breaking changes bump the major part, new features the minor part, fixes the patch part.
"""
CASES = 8
RUNS = 3


def make_plugin(root: Path) -> Path:
    plugin = root / "bench-kit"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "bench-kit", "version": "1"}')
    (plugin / "skills" / "next-version").mkdir(parents=True)
    (plugin / "skills" / "next-version" / "SKILL.md").write_text(SKILL_MD)
    for i in range(CASES):
        case = plugin / "evals" / f"case-{i}"
        (case / "graders").mkdir(parents=True)
        (case / "prompt.md").write_text(
            f"---\nruns: {RUNS}\nallowed_tools: [Skill]\n---\nRelease question {i}: we fixed "
            "two bugs since v1.4.0. Which version next?\n"
        )
        (case / "graders" / "answer.md").write_text("---\ntype: regex\npattern: '1\\.4\\.1'\n---\n")
        (case / "graders" / "skill.md").write_text("---\ntype: tool_used\ntool: Skill\n---\n")
    return plugin


def rules(seconds: float) -> list[Rule]:
    def wait(reply: Any) -> Any:
        return delay(seconds) + reply if seconds else reply

    return [
        Rule(when_tool_result="Launching skill", reply=wait(text("1.4.1 is the next patch."))),
        Rule(when_tool_result="Unknown skill", reply=wait(text("2.0.0, to be safe."))),
        Rule(
            when_prompt="Which version next",
            reply=wait(tool_use("Skill", {"skill": "bench-kit:next-version"})),
        ),
    ]


Timing = tuple[float, float, float]  # wall, CPU reaped, the machine's CPU meanwhile
OURS_ARGS: list[str] = []  # --ours-args: more options for our sessions


def machine_cpu() -> float:
    """Seconds of CPU the whole machine has used since it started: the ticks that were not
    idle, as the run-ahead's CPU check reads them (``/proc/stat``); 0 where not known."""
    ticks = IdleMeter._sample()  # the one reader of /proc/stat's ticks in the project
    if ticks is None:
        return 0.0
    idle, total = ticks
    return (total - idle) / os.sysconf("SC_CLK_TCK")


def timed(argv: list[str], *, cwd: Path, env: dict[str, str]) -> Timing:
    """Run ``argv``: its wall time, the CPU time of what was reaped of its tree (a run's
    sandbox is ended, not reaped: ``bench_breakdown.py`` samples the CPU of each child), and
    the CPU the whole machine used meanwhile (every process of the session, sandboxed or not,
    and whatever else ran: on an idle machine, the session's cost)."""
    before, machine = os.times(), machine_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after, machine = os.times(), machine_cpu() - machine
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv[:3]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return elapsed, cpu, machine


def verdicts(doc: dict[str, Any]) -> list[Any]:
    """Per case and arm, every run's grader verdicts (the runs in any order)."""
    return sorted(
        (case["name"], arm, sorted(sorted((g["name"], g["passed"]) for g in run["graders"])
                                   for run in runs))
        for case in doc["cases"]
        for arm, runs in case["arms"].items()
    )  # fmt: skip


def compare(
    claude: str, workers: int, seconds: float, work: Path, *, ours_first: bool
) -> tuple[Timing, Timing]:
    plugin = make_plugin(work / f"suite-{seconds:g}")
    reference, ours = work / "reference.json", work / "ours.json"
    home = work / "operator-home"
    home.mkdir(exist_ok=True)
    with ScriptedModel(rules(seconds)) as model:
        env = {"PATH": os.environ["PATH"], "HOME": str(home), **model.env()}

        def run_reference() -> Timing:
            return timed(
                [claude, "plugin", "eval", str(plugin), "--trust-plugin", "--no-publish",
                 "-j", str(workers), "--json", str(reference)],
                cwd=work, env=env,
            )  # fmt: skip

        def run_ours() -> Timing:
            return timed(
                [sys.executable, "-m", "pytest", str(plugin / "evals"), "-q", "-p",
                 "no:cacheprovider", "-n", str(workers), "--eval-agent", "claude",
                 "--eval-claude-bin", claude, "--eval-json", str(ours), "--rootdir", str(plugin),
                 *OURS_ARGS],
                cwd=plugin, env=env,
            )  # fmt: skip

        if ours_first:
            mine = run_ours()
            ref = run_reference()
        else:
            ref = run_reference()
            mine = run_ours()
    ref_doc = json.loads(reference.read_text())
    our_doc = json.loads(ours.read_text())
    runs = sum(len(r) for c in our_doc["cases"] for r in c["arms"].values())
    if runs != CASES * RUNS * 2 or verdicts(ref_doc) != verdicts(our_doc):
        raise SystemExit(f"the two tools disagree (ours made {runs} runs)")
    shutil.rmtree(plugin / "evals" / "results", ignore_errors=True)
    return ref, mine


def find_claude(given: str) -> str:
    """``--claude-bin`` as an absolute path (the tools run it from other folders): a relative
    path from this folder, a bare name from PATH."""
    found = shutil.which(given) if os.sep not in given else given
    if found is None or not os.access(found, os.X_OK):
        raise SystemExit(f"--claude-bin {given}: not an executable file")
    return os.path.abspath(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude-bin", default=os.environ.get("EVAL_CLAUDE_BIN") or "claude")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--delays", type=float, nargs="+", default=[0.0, 1.0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", type=int, default=CASES, help="a smaller suite, to try it")
    parser.add_argument(
        "--ours-args",
        default="",
        help="more pytest options for our sessions, e.g. '--eval-run-ahead always'",
    )
    args = parser.parse_args()
    globals()["CASES"] = args.cases
    OURS_ARGS[:] = shlex.split(args.ours_args)
    claude = find_claude(args.claude_bin)
    version = subprocess.run([claude, "--version"], capture_output=True, text=True, check=True)
    print(f"claude {version.stdout.strip()}; {CASES} cases × {RUNS} runs × 2 arms, "
          f"{os.cpu_count()} CPUs, load average {_load()} at the start")  # fmt: skip
    # A first session pays what later ones do not (bytecode compiled, the binary and the
    # sandbox's programs read from disk): one small untimed session of each tool first.
    cases, globals()["CASES"] = CASES, 1
    with tempfile.TemporaryDirectory(prefix="bench-reference-") as tmp:
        compare(claude, max(args.workers), 0.0, Path(tmp), ours_first=True)
    globals()["CASES"] = cases
    table = []
    turn = 0
    for seconds in args.delays:
        model = "answers at once" if not seconds else f"{seconds:g} s per model call"
        for workers in args.workers:
            pairs = []
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory(prefix="bench-reference-") as tmp:
                    first = turn % 2 == 1
                    ref, mine = compare(claude, workers, seconds, Path(tmp), ours_first=first)
                turn += 1
                pairs.append((ref, mine))
                print(f"{model}, {workers} worker(s): reference {ref[0]:6.2f} s ({ref[1]:.1f} s "
                      f"CPU reaped, machine {ref[2]:.1f} s), ours {mine[0]:6.2f} s "
                      f"({mine[1]:.1f} s CPU reaped, sandboxed runs not counted; machine "
                      f"{mine[2]:.1f} s); load {_load()}", flush=True)  # fmt: skip
            ref_wall = statistics.median(r[0] for r, _ in pairs)
            our_wall = statistics.median(m[0] for _, m in pairs)
            table.append((workers, model, ref_wall, our_wall))
    print(f"\nmedians of {args.repeat} alternating repetition(s); load average {_load()} at "
          "the end\n")  # fmt: skip
    print("| workers, model | reference | ours | ours / reference |\n| --- | --- | --- | --- |")
    for workers, model, ref_wall, our_wall in table:
        print(f"| {workers}, {model} | {ref_wall:.1f} s | {our_wall:.1f} s | "
              f"{our_wall / ref_wall:.2f} |")  # fmt: skip


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
