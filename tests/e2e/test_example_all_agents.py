"""The example plugin's suite under five of the six agent CLIs (all but Qwen Code, which its
script does not drive yet) in one session, offline, against one scripted model
(``examples/release-helper/all_agents.py``, as a plugin author runs it).

Only the skill case runs (two arms, one run each, per CLI: 10 runs). What a plain answer graded
in both arms does under each CLI is the contract's (``test_agent_contract.py``: the without arm
of its case ``next``); each agent's mean Δ over several cases, ``test_several_agents.py``'s.
Here: that the script's rules drive each CLI to its own skill tool, and the per-agent lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import agent_cli

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "release-helper" / "all_agents.py"
AGENTS = ("claude", "copilot", "codex", "opencode", "gemini")


@pytest.fixture(scope="module")
def binaries() -> dict[str, str]:
    found = {name: agent_cli(name) for name in AGENTS if name != "claude"}
    claude = os.environ.get("EVAL_CLAUDE_BIN")
    if not claude:
        pytest.skip("EVAL_CLAUDE_BIN is not set")
    return {"claude": claude, **found}


def test_the_skill_case_under_every_agent(binaries: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--output", str(out),
         *[f"--{name}-bin={path}" for name, path in binaries.items()],
         "-k", "suggests-next-version", "-n2"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    shown = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, shown
    doc = json.loads((out / "aggregate-result.json").read_text(encoding="utf-8"))
    summary = {a["agent"]: a for a in doc["agents"]}
    assert list(summary) == list(AGENTS), shown
    for name, agent in summary.items():
        assert agent["errors"] == {}, (name, agent)
        assert agent["runsGraded"] == agent["runsTotal"] == 2, (name, agent)
        assert agent["casesPassed"] == agent["cases"] == 1, (name, agent)
        # The skill case: 1.00 with the plugin, 0.00 without.
        assert agent["meanDelta"] == pytest.approx(1.0), (name, agent)
    cases = {(c["name"], c["agent"]): c for c in doc["cases"]}
    for name in AGENTS:
        skill = cases["suggests-next-version", name]
        assert skill["aggregates"]["delta"] == 1.0, (name, skill["aggregates"])
        (run,) = skill["arms"]["with"]
        # Each CLI's own skill tool, under the canonical name.
        assert "Skill" in [c["name"] for c in run["toolCallList"]], (name, run["toolCallList"])
    # The session's own per-agent line and the script's one line per agent.
    assert "claude: mean Δ +1.00" in done.stdout and "gemini: mean Δ +1.00" in done.stdout
    lines = done.stdout.split("per agent (", 1)[1].splitlines()[1:]
    assert [line.split()[0] for line in lines] == list(AGENTS), lines
