"""Claude Code's stream-json → the common transcript, on events as the real binary prints them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.agents.claude.stream_json import parse_events, parse_file, run_error

INIT: dict[str, Any] = {
    "type": "system",
    "subtype": "init",
    "cwd": "/tmp/cchome/cwd",
    "session_id": "68fc74f6",
    "tools": ["Task", "Bash", "Read", "Skill", "Write"],
    "model": "claude-opus-5-5",
    "permissionMode": "dontAsk",
    "slash_commands": ["release-helper:ship", "release-helper:next-version", "debug"],
    "skills": ["release-helper:next-version", "debug"],
    "plugins": [
        {"name": "release-helper", "path": "/p/release-helper", "source": "release-helper@inline"},
        {"name": "cc-plugin-privacy", "path": "builtin", "source": "cc-plugin-privacy@builtin"},
    ],
    "claude_code_version": "2.1.328",
}


def assistant(msg_id: str, block: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    """One assistant event: Claude Code prints one per content block of a message."""
    return {
        "type": "assistant",
        "message": {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": [block],
            "stop_reason": None,
            "usage": {"input_tokens": 1200, "output_tokens": 1},
        },
        "parent_tool_use_id": parent,
        "session_id": "68fc74f6",
    }


def say(msg_id: str, words: str, parent: str | None = None) -> dict[str, Any]:
    return assistant(msg_id, {"type": "text", "text": words}, parent)


def call(msg_id: str, tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
    return assistant(msg_id, block)


def tool_result(
    tool_id: str, content: Any, is_error: bool | None = None, parent: str | None = None
) -> dict[str, Any]:
    block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    return {
        "type": "user",
        "message": {"role": "user", "content": [block]},
        "parent_tool_use_id": parent,
        "session_id": "68fc74f6",
    }


def result(**fields: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 1,
        "stop_reason": "end_turn",
        "total_cost_usd": 0.0056,
        "duration_ms": 170,
        "duration_api_ms": 29,
        "api_error_status": None,
        "terminal_reason": "completed",
        "permission_denials": [],
        "usage": {"input_tokens": 1200, "output_tokens": 40, "cache_read_input_tokens": 0},
    }
    doc.update(fields)
    return {k: v for k, v in doc.items() if v is not ...}


def lines(*events: dict[str, Any] | str) -> list[str]:
    return [e if isinstance(e, str) else json.dumps(e) + "\n" for e in events]


def test_init_event() -> None:
    _, summary = parse_events(lines(INIT))
    assert summary.init == INIT
    assert [p["name"] for p in summary.plugins] == ["release-helper", "cc-plugin-privacy"]
    assert summary.skills == ["release-helper:next-version", "debug"]
    assert "release-helper:ship" in summary.slash_commands
    assert summary.result is None


def test_empty_trace() -> None:
    transcript, summary = parse_events([])
    assert summary.init is None and summary.result is None
    assert transcript.final_message == ""
    assert transcript.tool_calls == [] and transcript.turns == 0
    assert transcript.cost_usd == 0.0 and transcript.input_tokens is None
    assert summary.plugins == [] and summary.skills == [] and summary.slash_commands == []


def test_a_plain_text_answer() -> None:
    transcript, summary = parse_events(
        lines(
            INIT,
            say("msg_2", "Paris is the capital of France."),
            result(result="Paris is the capital of France."),
        )
    )
    assert transcript.final_message == "Paris is the capital of France."
    assert transcript.turns == 1
    # Tokens from the result event, not from the assistant events (output_tokens 1 there).
    assert transcript.input_tokens == 1200 and transcript.output_tokens == 40
    assert transcript.cost_usd == pytest.approx(0.0056)
    assert transcript.latency_ms == 170
    assert transcript.tool_calls == []
    assert run_error(summary) is None
    assert summary.api_error_status is None


def test_a_tool_round_trip_with_string_and_list_results() -> None:
    hand_back = [
        {"type": "text", "text": "<tools-used-before-summary>Read</tools-used-before-summary>"},
        {"type": "text", "text": "[Subagent hand-back] all good"},
        {"type": "image", "source": {}},
    ]
    transcript, _ = parse_events(
        lines(
            INIT,
            say("msg_2", "Let me read it."),
            call("msg_2", "toolu_3", "Read", {"file_path": "/ws/notes.txt"}),
            tool_result("toolu_3", "1\thello from notes\n2\t"),
            call("msg_4", "toolu_5", "Agent", {"prompt": "look around"}),
            tool_result("toolu_5", hand_back),
            say("msg_6", "The file says hello."),
            result(num_turns=3, result="The file says hello.", total_cost_usd=0.0168),
        )
    )
    read, agent = transcript.tool_calls
    assert (read.name, read.input, read.id) == ("Read", {"file_path": "/ws/notes.txt"}, "toolu_3")
    assert read.output == "1\thello from notes\n2\t" and read.is_error is False
    assert agent.name == "Agent"
    assert agent.output == (
        "<tools-used-before-summary>Read</tools-used-before-summary>\n[Subagent hand-back] all good"
    )
    assert transcript.final_message == "The file says hello."
    assert transcript.turns == 3
    assert transcript.cost_usd == pytest.approx(0.0168)


def test_results_match_their_calls_by_id_not_by_order() -> None:
    transcript, _ = parse_events(
        lines(
            call("msg_1", "toolu_a", "Glob", {"pattern": "*.md"}),
            call("msg_1", "toolu_b", "Grep", {"pattern": "x"}),
            tool_result("toolu_b", "b-out"),
            tool_result("toolu_a", "a-out"),
            tool_result("toolu_unknown", "stray"),
        )
    )
    assert [(c.name, c.output) for c in transcript.tool_calls] == [
        ("Glob", "a-out"),
        ("Grep", "b-out"),
    ]


def test_a_call_without_a_result_keeps_output_none() -> None:
    transcript, _ = parse_events(lines(call("msg_1", "toolu_a", "Read", {"file_path": "x"})))
    assert transcript.tool_calls[0].output is None
    assert transcript.tool_calls[0].is_error is False


def test_an_error_tool_result() -> None:
    denied = (
        "Permission to use Write has been denied because Claude Code is running in don't ask mode."
    )
    transcript, summary = parse_events(
        lines(
            INIT,
            call("msg_2", "toolu_3", "Write", {"file_path": "out.txt", "content": "x"}),
            {
                "type": "system",
                "subtype": "permission_denied",
                "tool_name": "Write",
                "tool_use_id": "toolu_3",
                "message": denied,
            },
            tool_result("toolu_3", denied, is_error=True),
            call("msg_4", "toolu_5", "Skill", {"skill": "release-helper:next-version"}),
            tool_result(
                "toolu_5",
                "<tool_use_error>Unknown skill: release-helper:next-version</tool_use_error>",
                is_error=True,
            ),
            say("msg_6", "I could not write it."),
            result(
                num_turns=3,
                result="I could not write it.",
                permission_denials=[
                    {
                        "tool_name": "Write",
                        "tool_use_id": "toolu_3",
                        "tool_input": {"file_path": "/ws/out.txt", "content": "x"},
                    }
                ],
            ),
        )
    )
    write, skill = transcript.tool_calls
    assert write.is_error is True and write.output == denied
    assert skill.is_error is True and "Unknown skill" in (skill.output or "")
    assert summary.permission_denials[0]["tool_name"] == "Write"
    assert transcript.final_message == "I could not write it."
    assert run_error(summary) is None


def test_max_turns_reached_has_no_result_key() -> None:
    transcript, summary = parse_events(
        lines(
            INIT,
            say("msg_2", "step one"),
            call("msg_2", "toolu_3", "Read", {"file_path": "a"}),
            tool_result("toolu_3", "a"),
            say("msg_4", "step two"),
            say("msg_4", "still step two"),
            call("msg_4", "toolu_5", "Read", {"file_path": "b"}),
            tool_result("toolu_5", "b"),
            call("msg_6", "toolu_7", "Read", {"file_path": "c"}),
            tool_result("toolu_7", "c"),
            result(
                subtype="error_max_turns",
                is_error=True,
                num_turns=3,
                result=...,
                api_error_status=...,
                errors=["Reached maximum number of turns (2)"],
                stop_reason="tool_use",
                terminal_reason="max_turns",
                total_cost_usd=0.0112,
            ),
        )
    )
    # The text blocks of the last assistant message that had text, joined.
    assert transcript.final_message == "step two\nstill step two"
    assert len(transcript.tool_calls) == 3
    assert transcript.turns == 3
    assert transcript.cost_usd == pytest.approx(0.0112)
    assert run_error(summary) == "Reached maximum number of turns (2)"
    assert summary.api_error_status is None


@pytest.mark.parametrize(
    ("status", "kind", "text"),
    [
        (429, "rate_limit", "API Error: Request rejected (429) · fake 429 rate_limit_error"),
        (401, "authentication_failed", "Failed to authenticate. API Error: 401 fake 401"),
        (None, "server_error", "API Error: Connection refused (ECONNREFUSED)"),
    ],
)
def test_an_api_error(status: int | None, kind: str, text: str) -> None:
    synthetic = say("cae664c7", text)
    synthetic["message"]["model"] = "<synthetic>"
    synthetic.update({"error": kind, "is_api_error_message": True, "api_error_status": status})
    transcript, summary = parse_events(
        lines(
            INIT,
            synthetic,
            result(
                is_error=True,
                result=text,
                stop_reason="stop_sequence",
                total_cost_usd=0,
                terminal_reason="api_error",
                api_error_status=status,
            ),
        )
    )
    assert summary.api_error_status == status
    assert summary.api_error_text == text
    # The API's error text is not the model's answer.
    assert transcript.final_message == ""
    assert transcript.cost_usd == 0.0
    assert run_error(summary) == text


def test_an_api_error_after_a_successful_turn() -> None:
    transcript, summary = parse_events(
        lines(
            INIT,
            say("msg_2", "Looking."),
            call("msg_2", "toolu_3", "Read", {"file_path": "a"}),
            tool_result("toolu_3", "a"),
            result(
                is_error=True,
                num_turns=2,
                result="API Error: 500 fake 500 api_error.",
                terminal_reason="api_error",
                api_error_status=500,
            ),
        )
    )
    assert summary.api_error_status == 500
    assert summary.api_error_text == "API Error: 500 fake 500 api_error."
    assert transcript.final_message == "Looking."
    assert transcript.cost_usd == pytest.approx(0.0056)


def test_subagent_events_are_not_the_final_message() -> None:
    transcript, _ = parse_events(
        lines(
            INIT,
            say("msg_2", "I will ask a helper."),
            call("msg_2", "toolu_3", "Agent", {"prompt": "find files"}),
            {"type": "system", "subtype": "task_started", "tool_use_id": "toolu_3"},
            {
                "type": "user",
                "message": {"role": "user", "content": [{"type": "text", "text": "find files"}]},
                "parent_tool_use_id": "toolu_3",
            },
            assistant(
                "msg_sub1",
                {"type": "tool_use", "id": "toolu_s1", "name": "Glob", "input": {"pattern": "*"}},
                parent="toolu_3",
            ),
            tool_result("toolu_s1", "a.md", parent="toolu_3"),
            say("msg_sub2", "subagent says: found a.md", parent="toolu_3"),
            {"type": "system", "subtype": "task_notification", "summary": "found a.md"},
            tool_result("toolu_3", [{"type": "text", "text": "[Subagent hand-back] a.md"}]),
            result(is_error=True, result=..., subtype="error_max_turns", num_turns=...),
        )
    )
    # No result text: the last top-level message with text, not the subagent's.
    assert transcript.final_message == "I will ask a helper."
    # Turns counted from the top-level messages only when the result gives none.
    assert transcript.turns == 1
    assert [c.name for c in transcript.tool_calls] == ["Agent", "Glob"]
    assert transcript.tool_calls[1].output == "a.md"


def test_unparseable_lines_are_skipped() -> None:
    transcript, summary = parse_events(
        lines(
            "\n",
            "warning: something on stdout\n",
            '{"type": "assistant", "message": \n',  # cut short
            "[1, 2, 3]\n",
            '"a string"\n',
            INIT,
            "{not json}\n",
            say("msg_2", "hello"),
            "   \n",
            result(result="hello"),
        )
    )
    assert summary.init is not None
    assert transcript.final_message == "hello"


def test_odd_shapes_do_not_break_the_parser() -> None:
    transcript, summary = parse_events(
        lines(
            {"type": "assistant"},
            {"type": "assistant", "message": {"id": "m", "content": ["not a block", None]}},
            {"type": "assistant", "message": {"id": "m2", "content": [
                {"type": "tool_use", "id": "t", "name": "Read", "input": "not a dict"}]}},
            {"type": "user", "message": {"content": "a plain string"}},
            {"type": "user"},
            {"type": "result", "usage": None, "num_turns": "two", "total_cost_usd": "free"},
        )
    )  # fmt: skip
    assert transcript.tool_calls[0].input == {}
    assert transcript.turns == 2  # the count of top-level messages: num_turns was not a number
    assert transcript.cost_usd == 0.0
    assert summary.result is not None


def test_run_error() -> None:
    _, summary = parse_events(lines(result(result="ok")))
    assert run_error(summary) is None
    _, summary = parse_events([])
    assert run_error(summary) is None
    _, summary = parse_events(
        lines(result(is_error=True, subtype="error_during_execution", result=...))
    )
    assert run_error(summary) == "error_during_execution"
    _, summary = parse_events(lines(result(is_error=True, result="went wrong", errors=[])))
    assert run_error(summary) == "went wrong"


def test_parse_file_keeps_the_trace_path(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(
        "".join(lines(INIT, say("m", "caf\u00e9"), result(result="caf\u00e9"))).encode()
        + b"\xff\xfe not utf-8\n"
    )
    transcript, summary = parse_file(trace)
    assert transcript.trace_path == trace
    assert transcript.final_message == "café"
    assert summary.init is not None


def test_a_killed_run_keeps_the_tokens_its_messages_reported() -> None:
    # No result event (the run timed out): tokens from the assistant events, once per message.
    transcript, summary = parse_events(
        lines(
            INIT,
            say("msg_2", "Let me look."),
            call("msg_2", "toolu_3", "Agent", {"prompt": "look"}),
            say("msg_sub", "looking", parent="toolu_3"),
            say("msg_4", "Still looking."),
        )
    )
    assert summary.result is None
    assert (transcript.input_tokens, transcript.output_tokens) == (3600, 3)
    assert transcript.cost_usd == 0.0
    assert transcript.turns == 2
    # A result event's usage wins.
    transcript, _ = parse_events(lines(INIT, say("msg_2", "hi"), result(result="hi")))
    assert (transcript.input_tokens, transcript.output_tokens) == (1200, 40)
