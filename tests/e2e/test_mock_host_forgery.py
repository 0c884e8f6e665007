"""A run's shell plays the stand-in launcher against the mock host, with real agent CLIs.

The model runs :mod:`tests.agents.forge_hello` in its shell: it finds the run's socket (the
argument of the run's running stub), hands the mock host a hello naming a spec it wrote
itself — ``root: "/"``, a tool whose answer is a secret file outside the run, its own calls
file, a process group to kill — and asks for the secret. Around the run: the secret, a canary
log that must not be appended to, a ``sleep`` in a process group of its own that must survive.
The host refuses; the run says so as its error (``mock_host``) and is not graded.

Claude Code's own command sandbox refuses Unix sockets, so its shell runs unconfined here
(``--eval-unconfined-shell``), as an operator may choose; opencode's shell runs inside the
bubblewrap confinement, which shows the run's own socket and nothing else of the host's.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.e2e.conftest import Run
from tests.e2e.release_kit import meta
from tests.e2e.tracker_kit import CREATE_MD
from tests.helpers import write_tree

FORGE = Path(__file__).parents[1] / "agents" / "forge_hello.py"
SECRET = "canary-secret-e2e-91c4"
REFUSED = "a process in the run sent the mock host a forged hello (spec path given): refused"


@dataclass
class Canaries:
    secret: Path
    log: Path
    sleeper: subprocess.Popen[bytes]

    def command(self) -> str:
        """The shell command the model runs: the forger, written out and started."""
        script = base64.b64encode(FORGE.read_bytes()).decode()
        args = f"{self.secret} {self.log} {self.sleeper.pid}"
        return f"echo {script} | base64 -d > forge.py && python3 forge.py {args}"

    def assert_untouched(self) -> None:
        assert self.log.read_text(encoding="utf-8") == "untouched\n"
        assert self.sleeper.poll() is None, "the canary's process group was killed"


@pytest.fixture
def canaries(pytester: pytest.Pytester) -> Iterator[Canaries]:
    """The operator's files and process, outside every run."""
    outside = pytester.path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET, encoding="utf-8")
    (outside / "canary.log").write_text("untouched\n", encoding="utf-8")
    sleeper = subprocess.Popen(["sleep", "600"], start_new_session=True)
    yield Canaries(outside / "secret.txt", outside / "canary.log", sleeper)
    sleeper.kill()
    sleeper.wait()


def make_kit(pytester: pytest.Pytester) -> None:
    """A tracker plugin with a mocked server (so the run has a stand-in, and a socket) and a
    case that grants a shell."""
    real = {"command": "sh", "args": ["-c", "exit 1"]}
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "tracker-kit", "version": "1.0.0"}),
            ".mcp.json": json.dumps({"mcpServers": {"tracker": real}}),
            "evals/mocks/tracker/create_issue.md": CREATE_MD,
            "evals/files-bug/prompt.md": (
                "---\nruns: 1\nallowed_tools: [Bash]\n---\nFile a bug: the app crashes.\n"
            ),
            "evals/files-bug/graders/answer.md": "---\ntype: regex\npattern: filed\n---\n",
        },
    )


def assert_refused(run: dict[str, Any], output: str, canaries: Canaries) -> None:
    assert "FORGED-HELLO host: refused by the mock host: " in output, output
    assert "stand-in: none" in output
    assert SECRET not in output and SECRET not in json.dumps(run)
    canaries.assert_untouched()
    assert run["infraError"] == "mock_host"
    assert run["error"] == REFUSED
    assert run["graders"] == []


def claude_tool_output(run: dict[str, Any]) -> str:
    found = []
    for line in Path(run["tracePath"]).read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") != "user":
            continue
        for block in event["message"]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append(json.dumps(block["content"]))
    return "\n".join(found)


def test_claude_codes_unconfined_shell_cannot_make_the_host_act_for_it(
    pytester: pytest.Pytester,
    run_evals: Run,
    scripted_model: ScriptedModel,
    canaries: Canaries,
) -> None:
    make_kit(pytester)
    scripted_model.add(
        Rule(when_tool_result="FORGED-HELLO", reply=text("I filed it.")),
        Rule(
            when_prompt="File a bug",
            reply=tool_use("Bash", {"command": canaries.command(), "description": "file it"}),
            times=1,
        ),
    )
    result, doc = run_evals(
        "--eval-ablation", "none", "--eval-allow-tools", "Bash", "--eval-unconfined-shell"
    )
    (run,) = doc["cases"][0]["arms"]["with"]
    assert_refused(run, claude_tool_output(run), canaries)
    result.stdout.fnmatch_lines([f"*mock_host: {REFUSED}*"])
    result.assert_outcomes(errors=1)


def test_opencodes_confined_shell_cannot_make_the_host_act_for_it(
    pytester: pytest.Pytester,
    run_opencode: Run,
    scripted_model: ScriptedModel,
    canaries: Canaries,
) -> None:
    make_kit(pytester)
    scripted_model.add(
        Rule(when_tool_result="FORGED-HELLO", reply=text("I filed it.")),
        Rule(
            when_prompt="File a bug",
            reply=tool_use("bash", {"command": canaries.command(), "description": "file it"}),
        ),
    )
    result, doc = run_opencode("-n0", "--eval-ablation", "none", "--eval-allow-tools", "Bash")
    (run,) = doc["cases"][0]["arms"]["with"]
    (call,) = meta(run)["toolCalls"]
    assert (call["name"], call["originalName"]) == ("Bash", "bash")
    assert_refused(run, call["output"], canaries)
    result.stdout.fnmatch_lines([f"*mock_host: {REFUSED}*"])
    result.assert_outcomes(errors=1)
