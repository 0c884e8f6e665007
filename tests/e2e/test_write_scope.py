"""A granted Write writes in the run's own folders only: the model's file writes cannot reach
the operator's machine (the system temp folder, the operator's home, the project)."""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.helpers import write_tree


def test_a_granted_write_stays_in_the_run(
    pytester: pytest.Pytester,
    run_evals: Any,
    scripted_model: ScriptedModel,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    operator_home = tmp_path / "operator-home"
    operator_home.mkdir()
    monkeypatch.setenv("HOME", str(operator_home))
    outside = Path(tempfile.gettempdir()) / f"written-{uuid.uuid4().hex}.txt"
    targets = ["made.txt", str(operator_home / ".bashrc"), str(outside)]
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "kit"}',
            "evals/w/prompt.md": "---\nruns: 1\nallowed_tools: [Write]\n---\nWrite things.\n",
            "evals/w/graders/made.md": "---\ntype: file_exists\npath: made.txt\n---\n",
        },
    )
    scripted_model.add(
        *(
            Rule(
                when_prompt="Write things",
                reply=tool_use("Write", {"file_path": target, "content": "x\n"}),
                times=1,
            )
            for target in targets
        ),
        Rule(when_prompt="Write things", reply=text("done")),
    )
    try:
        result, doc = run_evals("--eval-allow-tools", "Write", "--eval-ablation", "none")
        result.assert_outcomes(passed=1)
        assert not (operator_home / ".bashrc").exists()
        assert not outside.exists()
    finally:
        outside.unlink(missing_ok=True)
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["filesCreated"] == ["made.txt"]
    results = []
    for line in Path(run["tracePath"]).read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") == "user":
            results += [b for b in event["message"]["content"] if b.get("type") == "tool_result"]
    assert [bool(r.get("is_error")) for r in results] == [False, True, True]
