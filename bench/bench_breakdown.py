"""Where each run's CPU time goes: ours, step by step, and the reference's, parent and child.

    python bench/bench_breakdown.py [--claude-bin PATH] [--cases 4] [--runs 2] [--workers 0]
        [--ours-only] [--package DIR]

The suite of ``bench_reference.py`` (a Skill call and an answer per run, a regex and a
tool_used grader), against the instant scripted model on 127.0.0.1, made one run at a time:
``pytest -n 0 --eval-run-ahead off`` with ``bench/eval_probe.py`` accounting each step's CPU
(ours, and the children's it waited for), then ``claude plugin eval -j 1``. Both tools' trees
are sampled in /proc every few milliseconds for the CPU of each ``claude -p`` child (its own,
and what it waited for: git, its sandbox); the reference's parent is what is left of its
tree's CPU. CPU time, not wall time: it holds on a loaded machine. Prints a table per tool,
in milliseconds per run. ``--workers 2`` also shows what each xdist worker's start costs.
Nothing is asserted: this is a measurement (bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import bench_reference

from pytest_plugin_evals.testing import ScriptedModel

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: str) -> tuple[int, float, float] | None:
    """A process's parent, its CPU seconds with its waited-for children's, and its own."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = [int(f) for f in fields[11:15]]
    return int(fields[1]), sum(ticks) / TICK, sum(ticks[:2]) / TICK


class TreeSampler(threading.Thread):
    """Samples a process tree: every ``claude -p`` child's last CPU reading, by PID."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.tree = {root}
        self.agents: dict[int, float] = {}
        #: Every other process of the tree (the root, sandboxes, helpers): its own CPU.
        self.others: dict[int, float] = {}
        self.own: dict[int, float] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                read = _stat(pid)
                if read is None:
                    continue
                parent, cpu, own = read
                if parent in self.tree:
                    self.tree.add(int(pid))
                if int(pid) not in self.tree:
                    continue
                if int(pid) in self.agents or parent in self.agents or self._is_agent(pid):
                    if parent in self.agents:  # a re-exec or helper of an agent: counted in it
                        self.agents.setdefault(int(pid), 0.0)
                        continue
                    self.agents[int(pid)] = cpu
                else:
                    self.others[int(pid)] = own
            time.sleep(0.004)

    @staticmethod
    def _is_agent(pid: str) -> bool:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        return b"-p" in argv and b"stream-json" in argv and b"claude" in argv[0]


Sampled = tuple[float, float, list[float], float]


def sampled(argv: list[str], *, cwd: Path, env: dict[str, str]) -> Sampled:
    """Run ``argv``: its wall time, its tree's CPU as reaped, each agent child's CPU (with
    what it waited for) and the other processes' own CPU (the root's excepted)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv[:3]} failed ({proc.returncode}):\n{err.decode()[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    sampler.others.pop(proc.pid, None)
    agents = [cpu for cpu in sampler.agents.values() if cpu]
    return wall, cpu, agents, sum(sampler.others.values())


def row(label: str, seconds: float, runs: int) -> str:
    return f"| {label} | {seconds / runs * 1000:8.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude-bin", default=os.environ.get("EVAL_CLAUDE_BIN") or "claude")
    parser.add_argument("--cases", type=int, default=4)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--ours-only", action="store_true", help="not the reference's session")
    parser.add_argument(
        "--package", type=Path, help="a folder holding another version's pytest_plugin_evals"
    )
    args = parser.parse_args()
    claude = bench_reference.find_claude(args.claude_bin)
    bench_reference.CASES, bench_reference.RUNS = args.cases, args.runs
    runs = args.cases * args.runs * 2
    load = os.getloadavg()
    print(f"{args.cases} cases × {args.runs} runs × 2 arms = {runs} runs, instant model; "
          f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-breakdown-") as tmp:
        work = Path(tmp)
        plugin = bench_reference.make_plugin(work)
        home, probe = work / "operator-home", work / "probe"
        home.mkdir()
        probe.mkdir()
        with ScriptedModel(bench_reference.rules(0)) as model:
            env = {"PATH": os.environ["PATH"], "HOME": str(home), **model.env()}
            here = os.pathsep.join(
                str(p) for p in (args.package, Path(__file__).parent) if p is not None
            )
            ours_env = {**env, "PYTHONPATH": here, "EVAL_PROBE_OUT": str(probe)}
            ours = sampled(
                [sys.executable, "-m", "pytest", str(plugin / "evals"), "-q", "-p",
                 "no:cacheprovider", "-p", "eval_probe", "-n", str(args.workers),
                 "--eval-run-ahead", "off", "--eval-agent", "claude", "--eval-claude-bin", claude,
                 "--eval-json", str(work / "ours.json"), "--rootdir", str(plugin)],
                cwd=plugin, env=ours_env,
            )  # fmt: skip
            shutil.rmtree(plugin / "evals" / "results", ignore_errors=True)
            ref = None if args.ours_only else sampled(
                [claude, "plugin", "eval", str(plugin), "--trust-plugin", "--no-publish",
                 "-j", "1", "--json", str(work / "reference.json")],
                cwd=work, env=env,
            )  # fmt: skip
        docs = [json.loads(p.read_text()) for p in sorted(probe.glob("*.json"))]
    print_ours(docs, ours, runs)
    if ref is not None:
        print_reference(ref, runs)


def print_ours(docs: list[dict[str, Any]], measured: Sampled, runs: int) -> None:
    wall, _, agents, others = measured
    steps: dict[str, list[float]] = {}
    for doc in docs:
        for step, (mine, kids, calls) in doc["steps"].items():
            got = steps.setdefault(step, [0.0, 0.0, 0.0])
            got[0] += mine
            got[1] += kids
            got[2] += calls
    agent_cpu = sum(agents)
    tree_cpu = sum(d["total"] for d in docs) + agent_cpu + others
    print(f"\nours: pytest, {len(docs)} process(es), {len(agents)} agent children seen, wall "
          f"{wall:.2f} s, CPU of the whole tree {tree_cpu:.2f} s\n")  # fmt: skip
    print("| step | ms of CPU per run |\n| --- | ---: |")
    for doc in docs:
        once = f"{doc['worker']}, once: {doc['start_up'] * 1000:.0f} ms"
        print(row(f"start-up and imports ({once})", doc["start_up"], runs))
        once = f"{doc['worker']}, once: {doc['collection'] * 1000:.0f} ms"
        print(row(f"collection ({once})", doc["collection"], runs))
    accounted = sum(d["start_up"] + d["collection"] for d in docs)
    for step, (mine, _, _) in steps.items():
        accounted += mine
        print(row(step, mine, runs))
    rest = sum(d["total"] for d in docs) - accounted
    print(row("pytest and the plugin's other hooks (the rest)", rest, runs))
    per_run_ours = sum(m for m, _, _ in steps.values()) + rest
    print(row("**ours per run, beyond start-up and collection**", per_run_ours, runs))
    print(row("the child: `claude -p` itself (sampled)", agent_cpu, runs))
    print(row("its sandbox and our other helper processes (bwrap, proxy)", others, runs))


def print_reference(measured: Sampled, runs: int) -> None:
    wall, tree_cpu, agents, _ = measured
    agent_cpu = sum(agents)
    print(f"\nreference: claude plugin eval -j 1, wall {wall:.2f} s, CPU of the whole tree "
          f"{tree_cpu:.2f} s, {len(agents)} agent children seen\n")  # fmt: skip
    print("| step | ms of CPU per run |\n| --- | ---: |")
    parent = "the parent (start-up, set-up, grading, reporting: all of it)"
    print(row(parent, tree_cpu - agent_cpu, runs))
    print(row("**the child: `claude -p` itself (sampled)**", agent_cpu, runs))


if __name__ == "__main__":
    main()
