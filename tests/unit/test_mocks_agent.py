"""``type: agent`` mocks: a model plays the server, answers recorded, adopted and replayed.

The judge is the anthropic backend pointed at the scripted model; the stand-in reads everything
(judge settings included) from the spec file ``prepare_mocks`` writes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from pytest_plugin_evals.mocks import (
    MockJudge,
    MockOptions,
    attach,
    collect_calls,
    prepare_mocks,
    recordings_notice,
)
from pytest_plugin_evals.mocks.agent import answer_file, interpret, user_prompt
from pytest_plugin_evals.mocks.player import make_player
from pytest_plugin_evals.mocks.server import StandIn
from pytest_plugin_evals.model import Abort, Case, Transcript
from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text
from tests.helpers import mocks_doc, write_tree

pytest.importorskip("anthropic")

SERVER_MD = """---
type: agent
tools: [search, drop]
abort_when: the agent asks to drop a table
---

A knowledge base of release notes for the tracker product.
"""

CURRENT = 'Current call: search\nArguments:\n{\n  "q": "release"\n}'
DIGEST = hashlib.sha256(b'{"q":"release"}').hexdigest()
#: usage (1200, 40) at claude-haiku-4-5 list prices (1 and 5 USD per million tokens).
COST = 0.0014


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    root = tmp_path / "kit"
    write_tree(
        root,
        {
            "evals/mocks/kb/_server.md": SERVER_MD,
            "evals/mocks/kb/lookup.md": "---\ntype: agent\n---\nLook-ups return one id.",
            "evals/mocks/kb/fixed.md": "Fixed answer",
            "evals/mocks/kb/_tools.json": json.dumps(
                {"tools": [{"name": "search", "description": "Search the notes."}]}
            ),
            "evals/c/prompt.md": "x",
        },
    )
    return root


def make_case(root: Path) -> Case:
    return Case("c", "x", "prose", root / "evals/c/prompt.md", root / "evals/c", root / "evals")


def setup_for(
    suite: Path,
    run_dir: Path,
    model: ScriptedModel | None,
    *,
    judge_model: str | None = None,
    shared_host: bool = False,
    **kw: Any,
) -> Any:
    recordings = run_dir.parent / "results" / "mock-recordings"
    judge = MockJudge(recordings_dir=recordings)
    if model is not None:
        env = {**model.env(), "OTHER_SECRET": "x"}
        judge = MockJudge("anthropic", judge_model, env, recordings_dir=recordings)
    options = MockOptions(shared_host=shared_host, judge=judge)
    return prepare_mocks(make_case(suite), None, False, run_dir, options, **kw)


@pytest.fixture
def stand_in() -> Iterator[Callable[[Any], StandIn]]:
    """The stand-in of a setup's ``kb`` server, in this process (closed afterwards)."""
    made: list[StandIn] = []

    def load(setup: Any) -> StandIn:
        doc = json.loads((setup.mcp_config.parent / "kb.spec.json").read_text(encoding="utf-8"))
        doc["onAbort"] = "record"  # never kill anything from a unit test
        made.append(StandIn.from_spec(doc))
        return made[-1]

    yield load
    for one in made:
        one.close()


def player_requests(model: ScriptedModel) -> list[dict[str, Any]]:
    return [r for r in model.message_requests if "standing in for" in r["system"]]


def test_the_spec_carries_the_judge_and_is_private(suite: Path, tmp_path: Path) -> None:
    with ScriptedModel() as model:
        setup = setup_for(suite, tmp_path / "run", model, judge_model="haiku")
    path = setup.mcp_config.parent / "kb.spec.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    doc = json.loads(path.read_text(encoding="utf-8"))
    agent = doc["agent"]
    assert agent["judge"]["kind"] == "anthropic" and agent["judge"]["model"] == "haiku"
    assert sorted(agent["judge"]["env"]) == ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]
    assert agent["instructions"] == "A knowledge base of release notes for the tracker product."
    assert agent["adoptTo"] == str(suite / "evals/mocks/.replay/kb")
    assert agent["recordings"] == str(tmp_path / "results/mock-recordings/kb")
    tools = {t["name"]: t for t in doc["tools"]}
    assert tools["search"]["responder"] == "agent"
    assert tools["search"]["abortWhen"] == "the agent asks to drop a table"
    assert tools["lookup"]["notes"] == "Look-ups return one id."
    assert tools["fixed"]["responder"] == "fixed"
    assert mocks_doc(setup)["servers"][0]["tools"] == [
        {"tool": "drop", "responder": "agent"},
        {"tool": "fixed", "responder": "fixed"},
        {"tool": "lookup", "responder": "agent"},
        {"tool": "search", "responder": "agent"},
    ]


def test_a_miss_asks_the_model_and_records_the_answer(
    suite: Path, tmp_path: Path, stand_in: Callable[[Any], StandIn]
) -> None:
    with ScriptedModel([Rule(when_prompt="Current call: search", reply=text("3 notes"))]) as model:
        setup = setup_for(suite, tmp_path / "run", model)
        kb = stand_in(setup)
        assert kb.answer("search", {"q": "release"}) == ("3 notes", False)
        assert kb.answer("fixed", {}) == ("Fixed answer", False)
        (request,) = player_requests(model)
    assert request["prompt"] == CURRENT
    assert request["system"].startswith(
        'You are standing in for the MCP server "kb" inside an automated evaluation'
    )
    assert "A knowledge base of release notes" in request["system"]
    assert "- search: Search the notes." in request["system"]
    assert "Notes: Look-ups return one id." in request["system"]
    assert request["model"] == "claude-haiku-4-5"
    folder = tmp_path / "results/mock-recordings/kb"
    saved = json.loads((folder / f"search-{DIGEST}.json").read_text(encoding="utf-8"))
    assert saved == {
        "server": "kb",
        "tool": "search",
        "input": {"q": "release"},
        "output": "3 notes",
        "isError": False,
    }
    adopt = (folder / "ADOPT.txt").read_text(encoding="utf-8")
    assert f"cp {folder}/*.json {suite / 'evals/mocks/.replay/kb'}/" in adopt
    outcome = collect_calls(setup)
    assert [(c.output, c.is_error) for c in outcome.calls or []] == [
        ("3 notes", False),
        ("Fixed answer", False),
    ]
    assert outcome.records[0]["responder"] == "agent" and "responder" not in outcome.records[1]
    assert outcome.totals.cost_usd == COST
    assert (outcome.totals.replay_hits, outcome.totals.replay_misses) == (0, 1)
    transcript = Transcript(cost_usd=0.5)
    attach(setup, transcript)
    assert transcript.cost_usd == 0.5 + COST  # the model playing the server is paid by the run
    notice = recordings_notice(tmp_path / "results/mock-recordings")
    assert notice is not None and notice.startswith("mock recordings: 1 model answer(s) for kb")


def test_an_adopted_answer_is_replayed_with_no_model_call(
    suite: Path, tmp_path: Path, stand_in: Callable[[Any], StandIn]
) -> None:
    with ScriptedModel([Rule(reply=text("from the model"))]) as model:
        first = setup_for(suite, tmp_path / "one", model)
        stand_in(first).answer("search", {"q": "release"})
        recorded = tmp_path / "results/mock-recordings/kb" / f"search-{DIGEST}.json"
        replay = suite / "evals/mocks/.replay/kb"
        replay.mkdir(parents=True)
        shutil.copy(recorded, replay)
        recorded.unlink()
        second = setup_for(suite, tmp_path / "two", model)
        kb = stand_in(second)
        assert kb.answer("search", {"q": "release"}) == ("from the model", False)
        assert len(player_requests(model)) == 1  # the replay asked nobody
        assert kb.answer("search", {"q": "other"}) == ("from the model", False)
        assert len(player_requests(model)) == 2  # a new input is a miss
        # The model sees the run's earlier calls, replayed ones included.
        assert player_requests(model)[1]["prompt"].startswith(
            'Earlier calls in this session:\n1. search {"q":"release"}\n   Result: from the model'
        )
    assert not recorded.exists()  # a hit is not recorded again
    totals = collect_calls(second).totals
    assert (totals.replay_hits, totals.replay_misses) == (1, 1) and totals.cost_usd == COST
    assert [r["replay"] for r in collect_calls(second).records] == ["hit", "miss"]


def test_error_replies_are_tool_errors(
    suite: Path, tmp_path: Path, stand_in: Callable[[Any], StandIn]
) -> None:
    rules = [Rule(when_prompt="Current call", reply=text("ERROR: index unavailable (503)\n"))]
    with ScriptedModel(rules) as model:
        setup = setup_for(suite, tmp_path / "run", model)
        assert stand_in(setup).answer("search", {"q": "x"}) == ("index unavailable (503)", True)
    (call,) = collect_calls(setup).calls or []
    assert call.is_error and call.output == "index unavailable (503)"
    saved = next((tmp_path / "results/mock-recordings/kb").glob("search-*.json"))
    assert json.loads(saved.read_text(encoding="utf-8"))["isError"] is True


def test_abort_replies_stop_the_run_only_with_abort_when(
    tmp_path: Path, suite: Path, stand_in: Callable[[Any], StandIn]
) -> None:
    rules = [Rule(when_prompt="Current call", reply=text("ABORT: the agent dropped a table"))]
    with ScriptedModel(rules) as model:
        setup = setup_for(suite, tmp_path / "run", model)
        kb = stand_in(setup)
        text_, is_error = kb.answer("drop", {"table": "users"})
        assert is_error and "the agent dropped a table" in text_
    outcome = collect_calls(setup)
    assert outcome.aborted == Abort("kb", "drop", "the agent dropped a table")
    assert outcome.calls == [] and outcome.totals.cost_usd == COST
    assert outcome.totals.replay_misses == 1
    # Without abort_when the same reply is just the answer.
    write_tree(suite, {"evals/mocks/kb/_server.md": "---\ntype: agent\ntools: [drop]\n---\nA KB"})
    with ScriptedModel(rules) as model:
        calm = setup_for(suite, tmp_path / "calm", model)
        assert stand_in(calm).answer("drop", {}) == ("ABORT: the agent dropped a table", False)
    assert collect_calls(calm).aborted is None


def test_without_a_judge_a_miss_is_a_tool_error(
    suite: Path, tmp_path: Path, stand_in: Callable[[Any], StandIn]
) -> None:
    setup = setup_for(suite, tmp_path / "run", None)
    doc = json.loads((setup.mcp_config.parent / "kb.spec.json").read_text(encoding="utf-8"))
    assert doc["agent"]["judge"] is None
    assert stand_in(setup).answer("search", {"q": "release"}) == (
        "no judge configured to play this server",
        True,
    )
    assert (collect_calls(setup).totals.replay_hits, collect_calls(setup).totals.replay_misses) == (
        0,
        1,
    )
    assert not (tmp_path / "results/mock-recordings").exists()


def test_a_failed_model_call_is_a_tool_error_and_not_recorded(
    suite: Path, tmp_path: Path, stand_in: Callable[[Any], StandIn]
) -> None:
    with ScriptedModel([Rule(reply=error(400, message="bad request body"))]) as model:
        setup = setup_for(suite, tmp_path / "run", model)
        text_, is_error = stand_in(setup).answer("search", {"q": "release"})
    assert is_error
    assert text_ == "mock kb/search could not answer: API Error: 400 bad request body"
    assert not (tmp_path / "results/mock-recordings").exists()


def test_interpret_and_prompts() -> None:
    assert interpret(" ERROR:  gone ", may_abort=False).is_error
    assert interpret("ERROR: gone", may_abort=False).text == "gone"
    assert interpret("ABORT: stop", may_abort=True).abort == "stop"
    assert interpret("ABORT: stop", may_abort=False).abort is None
    assert interpret("fine", may_abort=True) == interpret("fine", may_abort=False)
    assert user_prompt("search", {"q": "release"}) == CURRENT
    assert answer_file("search", {"q": "release"}) == f"search-{DIGEST}.json"
    assert answer_file("../a/b", {"q": "release"}) == f"_a_b-{DIGEST}.json"
    same = answer_file("t", {"b": 1, "a": [1, 2]}) == answer_file("t", {"a": [1, 2], "b": 1})
    assert same  # key order does not matter
    assert user_prompt("get", {"title": "Überblick"}).endswith('"title": "Überblick"\n}')


def test_the_openai_backend_sends_the_stand_in_system_prompt() -> None:
    pytest.importorskip("openai")
    with ScriptedModel([Rule(reply=text("played"))]) as model:
        env = {"OPENAI_BASE_URL": model.openai_base_url}
        player = make_player({"kind": "openai", "model": "small", "env": env}, "You are a server.")
        assert player.call("Current call: x").text == "played"
        player.close()
        (request,) = model.chat_requests
    assert request["body"]["messages"][0] == {"role": "system", "content": "You are a server."}
    assert [m["role"] for m in request["body"]["messages"]] == ["system", "user"]


def test_the_claude_backend_gets_the_system_prompt_argument(tmp_path: Path) -> None:
    fake = tmp_path / "claude"
    args = tmp_path / "args.txt"
    fake.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > {args}\n'
        'echo \'{"type":"result","result":"played","total_cost_usd":0.001}\'\n',
        encoding="utf-8",
    )
    fake.chmod(0o755)
    player = make_player({"kind": "claude", "claudeBin": str(fake), "env": {}}, "Be a server.")
    reply = player.call("Current call: x")
    assert (reply.text, reply.cost_usd) == ("played", 0.001)
    argv = args.read_text(encoding="utf-8").splitlines()
    assert argv[argv.index("--system-prompt") + 1] == "Be a server."


def talk(argv: list[str]) -> str:
    """Start ``argv`` as an MCP stdio server with the SDK's client and call ``search``."""
    from mcp import Client, StdioServerParameters
    from mcp.types import TextContent

    async def go() -> str:
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        async with Client(params) as client:
            result = await client.call_tool("search", {"q": "release"})
            first = result.content[0]
            assert isinstance(first, TextContent)
            return first.text

    return anyio.run(go)


@pytest.mark.parametrize("shared_host", [True, False], ids=["host", "direct"])
def test_a_stand_in_process_plays_the_server(
    suite: Path, tmp_path: Path, shared_host: bool
) -> None:
    with ScriptedModel([Rule(when_prompt=CURRENT, reply=text("Release 1.3 notes"))]) as model:
        setup = setup_for(suite, tmp_path / "run", model, kill_agent=False, shared_host=shared_host)
        entry = json.loads(setup.mcp_config.read_text(encoding="utf-8"))["mcpServers"]["kb"]
        assert (entry["args"][0] == "-I") is shared_host  # the stub hands over to the host
        assert talk([entry["command"], *entry["args"]]) == "Release 1.3 notes"
        assert len(player_requests(model)) == 1
    assert (collect_calls(setup).totals.replay_hits, collect_calls(setup).totals.replay_misses) == (
        0,
        1,
    )
    assert (tmp_path / "results/mock-recordings/kb" / f"search-{DIGEST}.json").is_file()
