"""Case context with the real ``claude`` binary: add_dirs, history_file, tool grants, the model.

Each test builds a small plugin with pytester and runs ``pytest evals`` against the scripted
model on 127.0.0.1, offline.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, delay, text, tool_use

PLUGIN_JSON = json.dumps({"name": "release-helper", "version": "1.2.0"})

SKILL_MD = """---
name: next-version
description: Work out the next semantic version.
---
Bump the patch part for fixes.
"""

NOTICE = re.compile(r"Reference folders you may read \(read-only\): (\S+)")

Run = Callable[..., tuple[pytest.RunResult, dict[str, Any]]]


def make_plugin(pytester: pytest.Pytester) -> None:
    pytester.makefile(".json", **{".claude-plugin/plugin": PLUGIN_JSON})
    pytester.makefile(".md", **{"skills/next-version/SKILL": SKILL_MD})


def case_yaml(pytester: pytest.Pytester, name: str, body: str, **files: str) -> Path:
    folder = pytester.path / "evals" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "case.yaml").write_text(f'schema_version: "1.1"\nname: {name}\n' + body, "utf-8")
    for rel, content in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return folder


def only_run(doc: dict[str, Any]) -> dict[str, Any]:
    (case,) = doc["cases"]
    (run,) = case["arms"]["with"]
    return run


def tool_results(model: ScriptedModel) -> list[str]:
    return [r["tool_result"] for r in model.message_requests if r["tool_result"] is not None]


@pytest.fixture
def follow_notice(scripted_model: ScriptedModel) -> Iterator[list[Path]]:
    """Watch the requests; once one announces the add_dirs copy, script a Read of the copied
    file. Yields the announced folders."""
    found: list[Path] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set() and not found:
            for request in scripted_model.message_requests:
                match = NOTICE.search(request["system"])
                if match:
                    found.append(Path(match.group(1).rstrip(",")))
                    copied = found[0] / "data.txt"
                    scripted_model.add(
                        Rule(
                            when_tool_result="denied",
                            reply=tool_use("Read", {"file_path": str(copied)}),
                        )
                    )
                    break
            time.sleep(0.02)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        stop.set()
        thread.join(5)


def test_add_dirs_copy_is_announced_and_the_original_is_readable_as_in_the_reference(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    run_evals: Run,
    follow_notice: list[Path],
) -> None:
    make_plugin(pytester)
    folder = case_yaml(
        pytester,
        "fixture-reader",
        "runs: 1\ncontext:\n  add_dirs: [fixtures]\nexecution:\n"
        "  prompt: Read the fixture data file.\n"
        "graders:\n  - name: knows\n    type: regex\n    pattern: fixture-content-42\n",
        **{"fixtures/data.txt": "fixture-content-42\n"},
    )
    original = folder / "fixtures" / "data.txt"
    scripted_model.add(
        Rule(when_tool_result="fixture-content-42", reply=text("It says fixture-content-42.")),
        # The first turn reads the original inside the evals folder, as a suite written for
        # the reference does (slowly: the watcher sees the announced copy meanwhile).
        Rule(
            when_prompt="fixture data",
            times=1,
            reply=delay(0.5) + tool_use("Read", {"file_path": str(original)}),
        ),
    )
    result, doc = run_evals("--eval-ablation", "none")
    assert follow_notice, "no request announced the add_dirs copy"
    copy = follow_notice[0]
    assert copy.name == "fixtures" and not copy.is_relative_to(pytester.path / "evals")
    (first,) = tool_results(scripted_model)
    assert "fixture-content-42" in first
    run = only_run(doc)
    assert run["answer"] == "It says fixture-content-42."
    assert run["toolCalls"] == 1
    result.assert_outcomes(passed=1)
    assert original.read_text(encoding="utf-8") == "fixture-content-42\n"


HISTORY_USER = "Our last release was 1.4.0; remember that."
HISTORY_ASSISTANT = "Noted: the last release was 1.4.0."


def history_jsonl() -> str:
    session = "5f0c9a52-7d5e-4a7c-9d51-3c1b2a4e6f10"
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/somewhere/else",
        "sessionId": session,
        "version": "2.1.328",
    }
    user = {
        **common,
        "parentUuid": None,
        "type": "user",
        "uuid": "0f00333f-f7da-44b4-bff4-745b31e7f01d",
        "timestamp": "2026-11-30T08:49:08.459Z",
        "message": {"role": "user", "content": HISTORY_USER},
    }
    assistant = {
        **common,
        "parentUuid": user["uuid"],
        "type": "assistant",
        "uuid": "7a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "timestamp": "2026-11-30T08:49:09.100Z",
        "message": {
            "id": "msg_history01",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": [{"type": "text", "text": HISTORY_ASSISTANT}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    }
    return json.dumps(user) + "\n" + json.dumps(assistant) + "\n"


def test_history_precedes_the_prompt_and_runs_single_arm(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Run
) -> None:
    make_plugin(pytester)
    case_yaml(
        pytester,
        "resumed",
        "runs: 1\ncontext:\n  history_file: history.jsonl\nexecution:\n"
        "  prompt: Which version comes next after a fix?\n"
        "graders:\n  - name: answer\n    type: regex\n    pattern: '1\\.4\\.1'\n",
        **{"history.jsonl": history_jsonl()},
    )
    scripted_model.add(Rule(when_prompt="comes next", reply=text("1.4.1")))
    result, doc = run_evals("-v")
    result.assert_outcomes(passed=1)
    (case,) = doc["cases"]
    (run,) = case["arms"]["with"]
    assert run["nodeid"].endswith("resumed::resumed[1]")  # one arm: no with-/without- ids
    assert [r["arm"] for r in case["arms"]["with"]] == ["single"]
    assert case["arms"].get("without", []) == []
    (request,) = scripted_model.message_requests
    talk = [m for m in request["body"]["messages"] if m["role"] != "system"]
    texts = [json.dumps(m["content"]) for m in talk]
    at = {
        key: next(i for i, t in enumerate(texts) if key in t)
        for key in (HISTORY_USER, HISTORY_ASSISTANT, "comes next after a fix")
    }
    assert at[HISTORY_USER] < at[HISTORY_ASSISTANT] < at["comes next after a fix"], texts
    assert talk[at[HISTORY_ASSISTANT]]["role"] == "assistant"


WRITE_CASE = (
    "runs: 1\nexecution:\n  prompt: Write the release notes file.\n  allowed_tools: [Write]\n"
    "graders:\n  - name: notes\n    type: file_exists\n    path: NOTES.md\n"
)


@pytest.mark.parametrize("granted", [False, True], ids=["not-granted", "granted"])
def test_a_write_tool_needs_the_operator_grant(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Run, granted: bool
) -> None:
    make_plugin(pytester)
    case_yaml(pytester, "notes", WRITE_CASE)
    scripted_model.add(
        Rule(when_tool_result="File created", reply=text("Wrote NOTES.md.")),
        Rule(when_tool_result="", reply=text("I could not write it.")),
        Rule(
            when_prompt="release notes",
            reply=tool_use("Write", {"file_path": "NOTES.md", "content": "# 1.4.1\n"}),
        ),
    )
    grant = ("--eval-allow-tools", "Write") if granted else ()
    result, doc = run_evals("--eval-ablation", "none", *grant)
    run = only_run(doc)
    offered = scripted_model.message_requests[0]["tools"]
    (write_result,) = tool_results(scripted_model)
    if granted:
        assert "Write" in offered
        assert write_result.startswith("File created")
        assert run["filesCreated"] == ["NOTES.md"]
        assert run["graders"][0]["passed"] is True
        assert "notes" not in run
        result.assert_outcomes(passed=1)
    else:
        assert "Write" not in offered
        assert "Write" in write_result and "NOTES" not in run["filesCreated"]
        assert run["answer"] == "I could not write it."
        assert run["filesCreated"] == []
        assert run["graders"][0]["passed"] is False
        assert run["notes"] == ["not granted (add --eval-allow-tools): Write"]
        result.assert_outcomes(failed=1)


def test_the_model_option_and_the_kept_trace(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Run
) -> None:
    make_plugin(pytester)
    case_yaml(
        pytester,
        "hello",
        "runs: 1\nexecution:\n  prompt: Say hello.\n  model: opus\n"
        "graders:\n  - name: hi\n    type: regex\n    pattern: hello\n",
    )
    scripted_model.add(Rule(when_prompt="Say hello", reply=text("hello there")))
    result, doc = run_evals("--eval-ablation", "none", "--eval-model", "sonnet")
    result.assert_outcomes(passed=1)
    assert [r["model"] for r in scripted_model.message_requests] == ["claude-sonnet-5-5"]
    run = only_run(doc)
    trace = Path(run["tracePath"])
    assert trace.is_file() and trace.name == "trace.jsonl"
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert (events[0]["type"], events[0]["subtype"]) == ("system", "init")
    assert events[0]["model"] == "claude-sonnet-5-5"
    assert events[-1]["type"] == "result"
    assert run["costUsd"] == pytest.approx(events[-1]["total_cost_usd"])
