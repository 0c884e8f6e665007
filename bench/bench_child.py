"""What one ``claude -p`` child costs, and what each setting of its environment changes.

    python bench/bench_child.py [--claude-bin PATH] [--repeat 8]

Starts the pinned ``claude`` directly (no sandbox, no harness) in a fresh home against the
instant scripted model, with the command line our runs give it, once per variant of its
environment, the variants interleaved; prints the median CPU time of the child (with what it
waited for: git) per variant. The variants are the variables in which our child's environment
and the reference's child's differ (``bench_breakdown.py`` captures both), each added alone to
ours. CPU, not wall time: it holds on a loaded machine. Nothing is asserted: this is a
measurement (bench/README.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_reference

from pytest_plugin_evals.testing import ScriptedModel
from pytest_plugin_evals.util.environment import isolated_environment

#: Each variant: what it adds to the environment our runs give the child ("-": what it removes).
#: A key "+": flags added to the command line.
VARIANTS: dict[str, dict[str, str]] = {
    "ours": {},
    "+ --no-session-persistence": {"+": "--no-session-persistence"},
    "+ --strict-mcp-config": {"+": "--strict-mcp-config"},
    "+ CLAUDE_CODE_DISABLE_AUTO_MEMORY=1": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"},
    "+ CLAUDE_CODE_DISABLE_FILE_CHECKPOINTING=1": {"CLAUDE_CODE_DISABLE_FILE_CHECKPOINTING": "1"},
    "+ CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1": {"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"},
    "+ CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1": {"CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1"},
    "+ both: --no-session-persistence, no file checkpoints": {
        "+": "--no-session-persistence",
        "CLAUDE_CODE_DISABLE_FILE_CHECKPOINTING": "1",
    },
    "+ ENABLE_CLAUDEAI_MCP_SERVERS=false": {"ENABLE_CLAUDEAI_MCP_SERVERS": "false"},
    "+ CLAUDE_CODE_ENTRYPOINT=sdk-cli": {"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"},
    "- CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": {"-": "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"},
    # The JavaScript engine's tiers (Bun hands BUN_JSC_* to JavaScriptCore): what compiling
    # hot code in the optimizing tiers costs a process that lives under a second.
    "+ BUN_JSC_useFTLJIT=0": {"BUN_JSC_useFTLJIT": "0"},
    "+ BUN_JSC_useDFGJIT=0": {"BUN_JSC_useDFGJIT": "0"},
    "+ BUN_JSC_useJIT=0": {"BUN_JSC_useJIT": "0"},
    "+ BUN_JSC_useConcurrentJIT=0": {"BUN_JSC_useConcurrentJIT": "0"},
}


def child_cpu(claude: str, plugin: Path, env: dict[str, str], root: Path) -> float:
    home, config, tmp = root / "home", root / "config", root / "tmp"
    cwd = home / "cwd"
    for folder in (cwd, config, tmp):
        folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(cwd)], check=True)
    run_env = isolated_environment(env, home=home, tmp=tmp, config=config)
    run_env.pop(env.get("-", ""), None)
    run_env.pop("-", None)
    flags = [run_env.pop("+")] if "+" in run_env else []
    argv = [claude, "-p", "--output-format", "stream-json", "--verbose", "--max-turns", "10",
            "--permission-mode", "dontAsk", "--setting-sources", "user", "--plugin-dir",
            str(plugin), "--allowed-tools=Skill", *flags]  # fmt: skip
    before = os.times()
    done = subprocess.run(
        argv, input=b"Release question: we fixed two bugs since v1.4.0. Which version next?",
        cwd=cwd, env=run_env, capture_output=True, check=False,
    )  # fmt: skip
    after = os.times()
    if done.returncode != 0 or b'"type":"result"' not in done.stdout:
        raise SystemExit(f"claude -p failed ({done.returncode}): {done.stderr[-2000:]!r}")
    shutil.rmtree(root)
    return (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude-bin", default=os.environ.get("EVAL_CLAUDE_BIN") or "claude")
    parser.add_argument("--repeat", type=int, default=8)
    parser.add_argument("--only", nargs="+", default=[], help="the variants naming one of these")
    args = parser.parse_args()
    chosen = {n: v for n, v in VARIANTS.items() if n == "ours" or not args.only
              or any(word in n for word in args.only)}  # fmt: skip
    claude = bench_reference.find_claude(args.claude_bin)
    print(f"{args.repeat} runs per variant, interleaved; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip
    cpu: dict[str, list[float]] = {name: [] for name in chosen}
    with tempfile.TemporaryDirectory(prefix="bench-child-") as tmp:
        work = Path(tmp)
        bench_reference.CASES = 1
        plugin = bench_reference.make_plugin(work)
        with ScriptedModel(bench_reference.rules(0)) as model:
            base = {"PATH": os.environ["PATH"], **model.env()}
            for i in range(args.repeat):
                for name, extra in chosen.items():
                    root = work / f"run-{i}-{len(cpu[name])}-{abs(hash(name))}"
                    cpu[name].append(child_cpu(claude, plugin, {**base, **extra}, root))
    print("\n| the child's environment | CPU per run (median) | quartiles |\n| --- | ---: | ---: |")
    for name, values in cpu.items():
        q = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
        print(f"| {name} | {statistics.median(values) * 1000:.0f} ms | "
              f"{q[0] * 1000:.0f}–{q[2] * 1000:.0f} ms |")  # fmt: skip


if __name__ == "__main__":
    main()
