"""Whatever ``TMPDIR`` the operator has — outside ``/tmp`` and long — a granted shell works and
nothing is left behind: Claude Code's bridge sockets and daemon folder, Codex's sandbox
helpers, the harness's sockets all stay in the run's own ``/tmp`` or in folders that go with
the session."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.conftest import agent_cli
from tests.e2e.conftest import cli_runner
from tests.helpers import write_tree

#: Names the CLIs give what they leave in the temporary folder when nothing contains them.
LEFTOVERS = ("cc-daemon-", "claude-", "codex-", "srt-")

SHELL = {"claude": ("Bash", "command"), "codex": ("exec_command", "cmd")}


def leftovers(folder: Path) -> set[str]:
    try:
        return {p.name for p in folder.iterdir() if p.name.startswith(LEFTOVERS)}
    except OSError:
        return set()


@pytest.fixture
def operator_tmpdir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The operator's TMPDIR: a folder outside /tmp whose path is over 170 bytes long (a
    socket's path under it would not fit in ``sun_path``)."""
    top = Path("/var/tmp") / f"evals-tmpdir-{uuid.uuid4().hex[:8]}"
    folder = top / ("deep-" * 30)[:150]
    folder.mkdir(parents=True)
    assert len(str(folder)) > 170
    monkeypatch.setenv("TMPDIR", str(folder))
    yield folder
    shutil.rmtree(top, True)


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_shell_works_and_leaves_nothing_whatever_tmpdir(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    claude_bin: str,
    operator_tmpdir: Path,
    agent: str,
) -> None:
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "build-kit", "version": "1.0.0"}',
            "evals/build/prompt.md": "---\nruns: 1\nallowed_tools: [Bash]\n---\nRun the build.\n",
            "evals/build/graders/made.md": "---\ntype: file_exists\npath: made.txt\n---\n",
        },
    )
    tool, field = SHELL[agent]
    given: dict[str, Any] = {field: "echo built > made.txt && echo BUILT-OK"}
    if agent == "claude":
        given["description"] = "build"
    scripted_model.add(
        Rule(when_tool_result="BUILT-OK", reply=text("Built.")),
        Rule(when_prompt="Run the build", reply=tool_use(tool, given)),
    )
    before = leftovers(Path("/tmp")) | leftovers(operator_tmpdir)
    binary = claude_bin if agent == "claude" else agent_cli(agent)
    model = "fake-model" if agent == "codex" else None
    run = cli_runner(pytester, agent, binary, scripted_model, monkeypatch, default_model=model)
    # pytest keeps its temporary folders, and so the runs' folders, under TMPDIR.
    basetemp = operator_tmpdir / "pytest-of-operator"
    result, doc = run(
        "--eval-ablation", "none", "--eval-allow-tools", "Bash", f"--basetemp={basetemp}"
    )
    (case,) = doc["cases"]
    (only,) = case["arms"]["with"]
    assert only["infraError"] is None and only["error"] is None, only
    meta = json.loads((Path(only["tracePath"]).parent / "meta.json").read_text("utf-8"))
    assert any("BUILT-OK" in (c.get("output") or "") for c in meta["toolCalls"]), meta
    assert only["graders"][0]["explanation"] == "made.txt exists as expected"
    result.assert_outcomes(passed=1)
    after = leftovers(Path("/tmp")) | leftovers(operator_tmpdir)
    assert after - before == set(), "left behind in a temporary folder"
    assert os.environ["TMPDIR"] == str(operator_tmpdir)
