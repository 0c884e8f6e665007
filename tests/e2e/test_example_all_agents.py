"""The example plugin's suite under five of the six agent CLIs (all but Qwen Code, which its
script does not drive yet) in one session, offline, against one scripted model
(``examples/release-helper/all_agents.py``, as a plugin author runs it).

Only the skill case runs, in its with arm (``--eval-ablation none``: one run per CLI, 5 runs),
under two workers: the one ``-n 2`` session of Codex, Gemini CLI and Copilot.
Here: that the script's rules drive each CLI to its own skill tool and a good answer, the
document's per-agent summary, the session's per-agent line and the script's own. The script's
rules for the without arm (the plain answer) are not run here. Elsewhere: each real CLI's
without arm under rules of the same shape (no skill offered, the plain answer graded) is the
contract's for the five other CLIs (``test_agent_contract.py``: the skill fires in the with arm
only, the without arm of its case ``next``) and ``test_claude_agent.py``'s for Claude Code;
each agent's Δ and mean Δ line in a session of several agents (both arms, one process and two
workers), ``tests/integration/test_several_agents.py``'s."""

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
    """Each CLI's with arm calls its own skill tool (recorded as ``Skill``) and answers well;
    the document sums it up per agent; the session and the script print one line per agent."""
    out = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--output", str(out),
         *[f"--{name}-bin={path}" for name, path in binaries.items()],
         "-k", "suggests-next-version", "--eval-ablation", "none", "-n2"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    shown = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, shown
    doc = json.loads((out / "aggregate-result.json").read_text(encoding="utf-8"))
    summary = {a["agent"]: a for a in doc["agents"]}
    assert list(summary) == list(AGENTS), shown
    for name, agent in summary.items():
        assert agent["errors"] == {}, (name, agent)
        assert agent["runsGraded"] == agent["runsTotal"] == 1, (name, agent)
        assert agent["casesPassed"] == agent["cases"] == 1, (name, agent)
        assert agent["overallScore"] == pytest.approx(1.0), (name, agent)
    cases = {(c["name"], c["agent"]): c for c in doc["cases"]}
    for name in AGENTS:
        skill = cases["suggests-next-version", name]
        assert list(skill["arms"]) == ["with"], (name, list(skill["arms"]))
        (run,) = skill["arms"]["with"]
        assert run["score"] == 1.0, (name, run["graders"])
        # Each CLI's own skill tool, under the canonical name.
        assert "Skill" in [c["name"] for c in run["toolCallList"]], (name, run["toolCallList"])
    # The session's own per-agent line and the script's one line per agent.
    session_line = " · ".join(f"{name}: score 1.00" for name in AGENTS)
    assert session_line in done.stdout, shown
    lines = done.stdout.split("per agent (", 1)[1].splitlines()[1:]
    assert [line.split()[0] for line in lines] == list(AGENTS), lines
    assert all("with 1.00  without -  Δ -  cases passed 1/1" in line for line in lines), lines
