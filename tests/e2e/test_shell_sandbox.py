"""A granted shell runs inside Claude Code's sandbox: its commands may write in the run's cwd,
and may not read the operator's files or write outside the run. Without a sandbox backend the
run is refused with one line; ``--eval-unconfined`` (or its former name
``--eval-unconfined-shell``) runs it unconfined on purpose."""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.helpers import write_tree

SECRET = "TOP-SECRET-7f3c"


@pytest.fixture
def sandbox_backend() -> None:
    """bubblewrap and socat, as .ci/run installs them (skipped elsewhere, a failure in CI)."""
    if shutil.which("bwrap") and shutil.which("socat"):
        return
    reason = "bubblewrap and socat are not installed (apt install bubblewrap socat)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def make_suite(pytester: pytest.Pytester, command: str) -> tuple[Path, Path, str]:
    """A plugin whose one case lets the model run ``command`` in Bash; the operator's secret
    file and the outside file the command tries to write."""
    secret = Path.home() / "secret.txt"  # pytester's HOME: the operator's home in the session
    secret.write_text(SECRET, encoding="utf-8")
    outside = Path(tempfile.gettempdir()) / f"pwned-{uuid.uuid4().hex}.txt"
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "shell-kit"}',
            "evals/build/prompt.md": "---\nruns: 1\nallowed_tools: [Bash]\n---\nRun the build.\n",
            "evals/build/graders/made.md": "---\ntype: file_exists\npath: made.txt\n---\n",
            "evals/quiet/prompt.md": "---\nruns: 1\n---\nSay hello.\n",
            "evals/quiet/graders/hello.md": "---\ntype: regex\npattern: hello\n---\n",
        },
    )
    script = command.format(secret=secret, outside=outside, project=pytester.path)
    # The model writes a script and runs it: what the script touches is the sandbox's to stop
    # (Claude Code's own permission check sees only "bash probe.sh" in the cwd).
    encoded = base64.b64encode(script.encode()).decode()
    return secret, outside, f"echo {encoded} | base64 -d > probe.sh && bash probe.sh"


def rules(command: str) -> list[Rule]:
    return [
        Rule(when_prompt="Run the build", when_tool_result="", reply=text("Built.")),
        Rule(
            when_prompt="Run the build",
            reply=tool_use("Bash", {"command": command, "description": "build"}),
            times=1,
        ),
        Rule(when_prompt="Run the build", reply=text("Built.")),
        Rule(when_prompt="Say hello", reply=text("hello")),
    ]


COMMAND = """\
echo built > made.txt && echo WROTE-CWD
cat {secret} && echo READ-SECRET
echo pwned > {outside} && echo WROTE-TMP
echo pwned > {project}/pwned.txt && echo WROTE-PROJECT
ls {project}/evals && echo LISTED-PROJECT
"""


def tool_output(doc: dict[str, Any], case: str) -> str:
    (entry,) = [c for c in doc["cases"] if c["name"] == case]
    (run,) = entry["arms"]["with"]
    trace = Path(run["tracePath"]).read_text(encoding="utf-8")
    outputs = []
    for line in trace.splitlines():
        event = json.loads(line)
        if event.get("type") != "user":
            continue
        for block in event["message"]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block["content"]
                outputs.append(content if isinstance(content, str) else json.dumps(content))
    return "\n".join(outputs)


def test_a_confined_shell_writes_its_cwd_and_nothing_else(
    pytester: pytest.Pytester,
    run_evals: Any,
    scripted_model: ScriptedModel,
    sandbox_backend: None,
) -> None:
    _, outside, command = make_suite(pytester, COMMAND)
    scripted_model.add(*rules(command))
    result, doc = run_evals("--eval-allow-tools", "Bash", "--eval-ablation", "none")
    result.assert_outcomes(passed=2)
    output = tool_output(doc, "build")
    assert "WROTE-CWD" in output  # a command that writes in the cwd works
    assert SECRET not in output and "READ-SECRET" not in output  # the operator's home is hidden
    assert "LISTED-PROJECT" not in output  # so is the project (its evals folder)
    assert not outside.exists()  # nothing reached the system temp folder
    assert not (pytester.path / "pwned.txt").exists()  # nor the project
    (build,) = [c for c in doc["cases"] if c["name"] == "build"]
    assert build["arms"]["with"][0]["graders"][0]["explanation"] == "made.txt exists as expected"


def test_without_a_sandbox_backend_the_run_is_refused_and_the_session_goes_on(
    pytester: pytest.Pytester,
    run_evals: Any,
    scripted_model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    _, outside, command = make_suite(pytester, COMMAND)
    scripted_model.add(*rules(command))
    tools = tmp_path / "bin"  # a PATH with git and a shell, but no bubblewrap or socat
    tools.mkdir()
    for name in ("git", "bash", "sh", "cat", "ls", "env"):
        found = shutil.which(name)
        if found:
            (tools / name).symlink_to(found)
    monkeypatch.setenv("PATH", str(tools))
    result, doc = run_evals("--eval-allow-tools", "Bash", "--eval-ablation", "none")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*sandbox: a shell tool (Bash) was granted but this machine cannot confine it: "
         "bubblewrap (bwrap) and socat are not installed (apt install bubblewrap socat)*"]
    )  # fmt: skip
    assert doc["errors"] == {"sandbox": 1}
    assert not outside.exists()
    assert not (pytester.path / "evals" / "build" / "made.txt").exists()


def test_an_unconfined_shell_runs_on_purpose_and_the_summary_says_so(
    pytester: pytest.Pytester, run_evals: Any, scripted_model: ScriptedModel
) -> None:
    _, outside, command = make_suite(pytester, "echo built > made.txt\necho pwned > {outside}\n")
    scripted_model.add(*rules(command))
    try:
        result, doc = run_evals(
            "--eval-allow-tools", "Bash", "--eval-ablation", "none", "--eval-unconfined-shell"
        )
        result.assert_outcomes(passed=2)
        assert outside.exists()  # unconfined: it could write anywhere you can
        result.stdout.fnmatch_lines(["2 run(s) ran unconfined, on purpose (--eval-unconfined)*"])
        (build,) = [c for c in doc["cases"] if c["name"] == "build"]
        assert build["arms"]["with"][0]["unconfined"] is True
    finally:
        outside.unlink(missing_ok=True)
