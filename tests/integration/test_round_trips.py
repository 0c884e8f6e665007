"""Every document we write and read back survives the trip: write → read → write gives the
same text (the result document, the worker records, a kept run's meta.json)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals import records
from pytest_plugin_evals.recording import META, transcript_from_meta, transcript_meta
from pytest_plugin_evals.reporting.document import dumps_document, read_document
from tests.helpers import write_tree

Agent = Callable[[list[dict[str, Any]]], str]


def a_session(pytester: pytest.Pytester, plugin_args: list[str], agent: Agent) -> Path:
    """A session with two arms, a passing and a failing case, several grader types, a load
    error and kept runs; its results folder."""
    write_tree(
        pytester.path,
        {
            "evals/passes/prompt.md": "---\nruns: 2\ntags: [smoke]\n---\nSay ok\n",
            "evals/passes/graders/ok.md": "---\ntype: regex\nflags: i\n---\nOK\n",
            "evals/passes/graders/made.md": "---\ntype: file_exists\npath: out.txt\n"
            "exists: false\nweight: 2\n---\n",
            "evals/fails/case.yaml": 'schema_version: "1.1"\nname: fails\nruns: 1\n'
            "execution:\n  prompt: Say no\n  max_turns: 3\n"
            'graders:\n  - {name: says-yes, type: regex, pattern: "yes", arm: with-only}\n'
            "  - {name: no-tool, type: tool_used, tool: Bash, min: 0, max: 0}\n",
            "evals/broken/prompt.md": "---\nruns: zero\n---\nHi\n",
        },
    )
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent([{"reply": "ok, no"}]),
        "--junitxml", "junit.xml", "--eval-threshold", "0",
    )  # fmt: skip
    (folder,) = sorted((pytester.path / "evals" / "results").iterdir())
    assert (folder / "aggregate-result.json").is_file(), result.stdout.str()
    return folder


def test_documents_survive_a_round_trip(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    folder = a_session(pytester, plugin_args, scripted_agent)

    written = (folder / "aggregate-result.json").read_text("utf-8")
    doc = json.loads(written)
    assert len(doc["cases"]) == 2 and doc["loadErrors"], "the session is not the one meant"
    again = dumps_document(read_document(written))
    assert json.loads(again) == doc
    assert dumps_document(read_document(again)) == again

    props = [
        p.get("value", "")
        for p in ET.parse(pytester.path / "junit.xml").iter("property")
        if p.get("name") == "plugin_evals"
    ]
    kinds = sorted(json.loads(text)["kind"] for text in props)
    assert kinds == ["load_error", "run", "run", "run"], kinds
    for text in props:
        assert records.encode(records.decode(text)) == text, text

    metas = sorted(folder.rglob(META))
    assert metas
    for path in metas:
        meta = json.loads(path.read_text("utf-8"))
        run = path.parent
        trace = run / "trace.jsonl"
        transcript = transcript_from_meta(meta, run, trace if trace.is_file() else None)
        assert transcript_meta(transcript, meta["agent"]) == meta
