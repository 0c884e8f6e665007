"""MCP servers and their stand-ins under ``--eval-agent codex``: the real Codex CLI, confined in
bubblewrap, against the scripted model, through ``pytest evals`` as a plugin author runs it.

A tracker plugin declares three real servers (``tracker`` in ``.mcp.json``, ``people`` and
``wiki`` in its manifest) that leave a marker file in the run's working folder when they start
(Codex waits for each server it is given, and a server that fails ends the run: these serve
MCP; one of the plugin's that does not start is the plugin's failure, graded); ``tracker`` and
``people`` have mocks, ``kb`` is a standalone mock. Codex offers a server's tools in a
namespace ``mcp__<server>`` and reports a call as an ``mcp_tool_call`` of ``server`` and
``tool``: the runs must record Claude Code's names.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.e2e.conftest import Run, by_session
from tests.e2e.tracker_kit import CREATE, LOOKUP, SEARCH, markers, people_server
from tests.e2e.tracker_kit import make_tracker as make_kit

#: The second case of the real-server session: its call violates ``expect``.
URGENT = "File an urgent bug: the app will not start."


def make_tracker(pytester: pytest.Pytester, *, real_people: bool = False) -> None:
    """tracker-kit whose "real" servers are :data:`PEOPLE_SERVER` (``people`` too, with
    ``real_people``: no mock of its ``lookup``)."""
    people = people_server("people") if real_people else None
    make_kit(pytester, server=people_server, people=people)


def offered(request: dict[str, Any]) -> dict[str, set[str]]:
    """The MCP tools a Responses request offers, by Codex's namespace (``mcp__<server>``)."""
    return {
        t["name"]: {inner["name"] for inner in t.get("tools") or []}
        for t in request["body"].get("tools") or []
        if t.get("type") == "namespace" and str(t.get("name")).startswith("mcp__")
    }


def by_prompt(model: ScriptedModel, words: str) -> list[dict[str, Any]]:
    """The Responses requests of the runs whose prompt holds ``words``."""
    return [r for r in model.responses_requests if words in (r["prompt"] or "")]


def first_requests(model: ScriptedModel) -> list[dict[str, Any]]:
    """The first model request of each Codex session (one per run)."""
    return [r[0] for r in by_session(model.responses_requests, "session-id").values()]


def test_stand_ins_answer_with_claude_codes_names_in_the_with_arm_only(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_codex: Run
) -> None:
    make_tracker(pytester)
    scripted_model.add(
        Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
        Rule(when_tool_result="Found 1 page", reply=text("I found a page, no tracker.")),
        # The scripted model answers with the tool's namespace (mcp__tracker), as Codex asks.
        Rule(
            when_tool_offered="create_issue",
            reply=tool_use("create_issue", {"title": "Crash on start", "priority": "high"}),
        ),
        Rule(when_tool_offered="search", reply=tool_use("search", {"q": "crash"})),
    )
    result, doc = run_codex()
    result.assert_outcomes(passed=2)
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    assert with_run["error"] is None and without_run["error"] is None
    # The with arm: the shadow answered (approved: codex exec asks no one), under Claude
    # Code's name, and was graded.
    (call,) = with_run["toolCallList"]
    assert call["name"] == CREATE and call["originalName"] == "mcp__tracker__create_issue"
    assert call["isError"] is False
    (served,) = with_run["mockCalls"]
    assert served["tool"] == CREATE and "Created issue #4821: Crash on start" in served["output"]
    verdicts = {g["name"]: g for g in with_run["graders"]}
    assert verdicts["created"]["passed"] is True and verdicts["answer"]["passed"] is True
    assert with_run["mocks"]["calls"]["total"] == 1
    assert {s["server"]: s.get("withheld", False) for s in with_run["mocks"]["servers"]} == {
        "tracker": False,
        "people": False,
        "kb": False,
        "wiki": True,
    }
    # The without arm: only the standalone mock, which it called.
    (call,) = without_run["toolCallList"]
    assert call["name"] == SEARCH and call["originalName"] == "mcp__kb__search"
    (served,) = without_run["mockCalls"]
    assert served["tool"] == SEARCH and served["output"] == "Found 1 page for crash"
    # What each arm's first request offered: the plugin's servers (their stand-ins) in the
    # with arm only, the standalone mock in both.
    firsts = sorted((offered(r) for r in first_requests(scripted_model)), key=len)
    assert firsts == [
        {"mcp__kb": {"search"}},
        {"mcp__kb": {"search"}, "mcp__tracker": {"create_issue"}, "mcp__people": {"lookup"}},
    ]
    # Strict mocks: no real server started, in either arm (wiki had no mocks: withheld).
    assert markers(with_run) == markers(without_run) == set()


def test_mocks_off_starts_the_plugins_own_servers(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_codex: Run
) -> None:
    make_tracker(pytester)
    scripted_model.add(Rule(reply=text("nothing to do")))
    result, doc = run_codex("--eval-ablation", "none", "--eval-mocks", "off")
    result.assert_outcomes(failed=1)  # the answer grader fails: nothing was filed
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["error"] is None
    assert markers(run) == {"real-tracker-started", "real-people-started", "real-wiki-started"}
    created = {g["name"]: g for g in run["graders"]}["created"]
    assert created["passed"] is False
    assert created["explanation"].startswith("no mock stand-ins were active")
    (first,) = first_requests(scripted_model)
    # No tool of theirs is listed and granted: none offered; the mock kb is off too.
    assert offered(first) == {}


def test_a_plugin_server_that_does_not_start_fails_the_plugin_not_the_harness(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    run_codex: Run,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Codex waits for every server it is given; the plugin's own that does not start ends the
    run before the model is asked — a graded failure of the plugin, not an error (E). Its
    ``${WIKI_TOKEN}`` reached it from the run's environment (Codex's ``env_vars``)."""
    make_tracker(pytester)
    manifest = pytester.path / ".claude-plugin" / "plugin.json"
    doc = json.loads(manifest.read_text())
    doc["mcpServers"]["wiki"] = {
        "command": "sh",
        "args": ["-c", 'touch "wiki-got-$WIKI_TOKEN"; exit 3'],
        "env": {"WIKI_TOKEN": "${WIKI_TOKEN}"},
    }
    manifest.write_text(json.dumps(doc))
    monkeypatch.setenv("WIKI_TOKEN", "s3cret")
    scripted_model.add(Rule(reply=text("nothing to do")))
    args = ("--eval-ablation", "none", "--eval-mocks", "off", "--eval-env-pass", "WIKI_TOKEN")
    result, doc = run_codex(*args)
    result.assert_outcomes(failed=1)  # graded, not an error
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run.get("infraError") is None
    assert run["error"].startswith("the plugin's MCP server wiki did not start: ")
    assert run["score"] == 0
    assert scripted_model.responses_requests == []  # the model was never asked
    assert "wiki-got-s3cret" in {f.rsplit("/", 1)[-1] for f in run["filesCreated"]}


def test_a_real_server_offers_only_the_tools_listed_and_granted_and_expect_aborts_a_call(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_codex: Run
) -> None:
    """``--eval-allow-real-servers``: people (no mocks) is real, started from the plugin's
    folder (``${CLAUDE_PLUGIN_ROOT}``, which Codex itself does not expand), and Codex offers
    and approves only the tool the case lists and the operator grants (``enabled_tools``).

    The session's second case, ``files-urgent``, calls the tracker's stand-in with a priority
    its ``expect`` refuses: the stand-in kills Codex's process group, the run ends at the
    call, ungraded."""
    make_tracker(pytester, real_people=True)
    prompt = pytester.path / "evals" / "files-bug" / "prompt.md"
    prompt.write_text(
        prompt.read_text().replace("runs: 1\n", f"runs: 1\nallowed_tools: [{LOOKUP}]\n")
    )
    pytester.makefile(
        ".md",
        **{
            "evals/files-urgent/prompt": f"---\nruns: 1\n---\n{URGENT}\n",
            "evals/files-urgent/graders/answer": "---\ntype: regex\npattern: '#4821'\n---\n",
        },
    )
    scripted_model.add(
        Rule(when_tool_result="(real)", reply=text("alice is on call.")),
        Rule(when_prompt=URGENT, when_tool_result="", reply=text("Filed, I think.")),
        Rule(
            when_prompt=URGENT,
            when_tool_offered="create_issue",
            reply=tool_use("create_issue", {"title": "Crash on start", "priority": "urgent"}),
        ),
        Rule(when_tool_offered="lookup", reply=tool_use("lookup", {})),
    )
    result, doc = run_codex(
        "--eval-ablation", "none", "--eval-allow-real-servers", "--eval-allow-tools", LOOKUP
    )
    # files-bug fails (no issue filed: the answer grader fails), files-urgent is aborted.
    result.assert_outcomes(failed=2)
    cases = {c["name"]: c for c in doc["cases"]}
    (run,) = cases["files-bug"]["arms"]["with"]
    (call,) = run["toolCallList"]
    assert call["name"] == LOOKUP and call["originalName"] == "mcp__people__lookup"
    assert call["isError"] is False and run["answer"] == "alice is on call."
    first, second = by_prompt(scripted_model, "crashes on start")
    assert second["tool_result"] is not None and "alice is on call (real)" in second["tool_result"]
    # The stand-ins still replace tracker (the real one never started) and serve kb; people
    # offers only lookup (delete_person is not listed); wiki (no mocks, real allowed) started,
    # and offers nothing (no tool of it is listed).
    assert offered(first) == {
        "mcp__tracker": {"create_issue"},
        "mcp__kb": {"search"},
        "mcp__people": {"lookup"},
    }
    assert markers(run) == {"real-people-started", "real-wiki-started"}

    result.stdout.fnmatch_lines(["*aborted by mock tracker/create_issue*"])
    (run,) = cases["files-urgent"]["arms"]["with"]
    assert run["aborted"] == {
        "server": "tracker",
        "tool": "create_issue",
        "reason": 'the model\'s call violates expect: priority = "urgent" is not one of '
        "[low, medium, high]",
    }
    assert run["score"] == 0 and run["graders"] == [] and run["error"] is None
    assert cases["files-urgent"]["aggregates"]["passed"] is False
    # Codex was stopped at the call: the model was never asked again.
    assert len(by_prompt(scripted_model, URGENT)) == 1


def test_the_default_model_reaches_a_stand_in_from_code(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_codex: Run
) -> None:
    """In code mode (Codex's default model) the servers' tools are deferred: named in a
    developer message, called from the ``exec`` script as ``tools.mcp__<server>__<tool>``; the
    call is the same ``mcp_tool_call``, recorded by Claude Code's name."""
    make_tracker(pytester)
    script = (
        'const r = await tools.mcp__tracker__create_issue({title: "Crash on start", '
        'priority: "high"});\ntext(r);\n'
    )
    scripted_model.add(
        Rule(when_prompt="File a bug", times=1, reply=tool_use("exec", {"input": script})),
        Rule(reply=text("Filed as #4821.")),
    )
    result, doc = run_codex("--eval-ablation", "none", model=None)
    result.assert_outcomes(passed=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    (call,) = run["toolCallList"]
    assert call["name"] == CREATE and call["originalName"] == "mcp__tracker__create_issue"
    assert [c["tool"] for c in run["mockCalls"]] == [CREATE]
    first = scripted_model.responses_requests[0]
    assert "exec" in first["tools"] and "Deferred tool namespaces" in first["system"]
    assert "- mcp__tracker" in first["system"] and "- mcp__people" in first["system"]
