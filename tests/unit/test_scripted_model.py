"""The scripted model server, driven with plain http.client (no agent)."""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_plugin_evals.testing import (
    Reply,
    Request,
    Rule,
    ScriptedModel,
    delay,
    error,
    reply,
    text,
    tool_use,
)

REMINDER = "<system-reminder>\nSay hello to version 9.\n</system-reminder>\n"


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as m:
        yield m


def user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def body(
    prompt: str = "hello",
    *,
    tools: tuple[str, ...] = ("Read", "Skill"),
    extra: list[dict[str, Any]] | None = None,
    stream: bool = True,
    model: str = "claude-opus-5-5",
) -> dict[str, Any]:
    messages = [user({"type": "text", "text": REMINDER}, {"type": "text", "text": prompt})]
    return {
        "model": model,
        "max_tokens": 1000,
        "stream": stream,
        "system": [{"type": "text", "text": "You are a test."}],
        "tools": [{"name": n, "input_schema": {"type": "object"}} for n in tools],
        "messages": messages + (extra or []),
    }


def tool_turn(result: Any, *, is_error: bool = False) -> list[dict[str, Any]]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": "toolu_1", "content": result}
    if is_error:
        block["is_error"] = True
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}
    return [{"role": "assistant", "content": [call]}, user(block)]


def post(
    model: ScriptedModel,
    doc: Any,
    path: str = "/v1/messages?beta=true",
    conn: http.client.HTTPConnection | None = None,
) -> tuple[http.client.HTTPResponse, bytes]:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    try:
        conn.request("POST", path, body=json.dumps(doc), headers={"x-api-key": "sk-secret"})
        response = conn.getresponse()
        return response, response.read()
    finally:
        if own:
            conn.close()


def get(model: ScriptedModel, path: str) -> tuple[http.client.HTTPResponse, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response, response.read()
    finally:
        conn.close()


def sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Parse a server-sent-event body strictly: every frame is `event:` + `data:` + blank line."""
    text_body = raw.decode("utf-8")
    assert text_body.endswith("\n\n")
    frames = []
    for frame in text_body[:-2].split("\n\n"):
        event_line, data_line = frame.split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        frames.append((event_line[7:], json.loads(data_line[6:])))
    return frames


def ask(model: ScriptedModel, doc: dict[str, Any]) -> dict[str, Any]:
    """One non-streaming call, returning the message JSON."""
    response, raw = post(model, {**doc, "stream": False})
    assert response.status == 200
    return json.loads(raw)


def answer_text(model: ScriptedModel, doc: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in ask(model, doc)["content"])


# -- streaming --------------------------------------------------------------------------------


def test_text_reply_streams_the_real_event_sequence(model: ScriptedModel) -> None:
    model.add(Rule(reply=text("Paris is the capital of France, of course.")))
    response, raw = post(model, body())
    assert response.status == 200
    assert (response.getheader("Content-Type") or "").startswith("text/event-stream")
    assert response.getheader("Transfer-Encoding") == "chunked"
    assert (response.getheader("request-id") or "").startswith("req_")
    events = sse(raw)
    names = [name for name, _ in events]
    assert all(name == data["type"] for name, data in events)
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-4:] == [
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[0][1]["message"]
    assert start["role"] == "assistant" and start["content"] == [] and start["stop_reason"] is None
    assert start["model"] == "claude-opus-5-5" and start["id"].startswith("msg_")
    assert start["usage"]["input_tokens"] == 1200 and start["usage"]["output_tokens"] == 1
    assert events[2][1] == {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    assert len(deltas) > 1, "long text should arrive in several deltas"
    assert all(d["type"] == "text_delta" for d in deltas)
    assert "".join(d["text"] for d in deltas) == "Paris is the capital of France, of course."
    final = events[-2][1]
    assert final["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert final["usage"]["output_tokens"] == 40


def test_tool_use_streams_input_json_deltas(model: ScriptedModel) -> None:
    payload = {"file_path": "/work/notes.txt", "limit": 20, "note": "ünïcode"}
    model.add(Rule(reply=text("Let me look.") + tool_use("Read", payload)))
    events = sse(post(model, body())[1])
    starts = [d for n, d in events if n == "content_block_start"]
    assert [s["index"] for s in starts] == [0, 1]
    block = starts[1]["content_block"]
    assert block["type"] == "tool_use" and block["name"] == "Read" and block["input"] == {}
    assert block["id"].startswith("toolu_")
    json_deltas = [
        d["delta"]
        for n, d in events
        if n == "content_block_delta"
        and d["index"] == 1
        and d["delta"]["type"] == "input_json_delta"
    ]
    assert json_deltas[0]["partial_json"] == ""
    assert json.loads("".join(d["partial_json"] for d in json_deltas)) == payload
    assert [d["index"] for n, d in events if n == "content_block_stop"] == [0, 1]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_several_tool_calls_in_one_turn_keep_order_and_given_ids(model: ScriptedModel) -> None:
    model.add(Rule(reply=reply(tool_use("Glob", {"pattern": "*"}), tool_use("Read", id="toolu_x"))))
    message = ask(model, body())
    assert [(b["type"], b["name"]) for b in message["content"]] == [
        ("tool_use", "Glob"),
        ("tool_use", "Read"),
    ]
    assert message["content"][1]["id"] == "toolu_x"
    first, second = message["content"][0]["id"], ask(model, body())["content"][0]["id"]
    assert first != second, "generated tool ids must be unique"


def test_connection_is_kept_alive_across_streams(model: ScriptedModel) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    try:
        assert sse(post(model, body(), conn=conn)[1])[-1][0] == "message_stop"
        sock = conn.sock
        assert sse(post(model, body(), conn=conn)[1])[-1][0] == "message_stop"
        assert conn.sock is sock, "the second request reused the connection"
    finally:
        conn.close()
    assert len(model.requests) == 2


# -- JSON mode, count_tokens, other paths ------------------------------------------------------


def test_json_mode_returns_one_message_with_usage() -> None:
    with ScriptedModel(
        [Rule(reply=text("hi") + tool_use("Skill", {"skill": "a:b"}))], usage=(7, 3)
    ) as m:
        response, raw = post(m, body(stream=False))
    assert response.getheader("Content-Type") == "application/json"
    message = json.loads(raw)
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["content"][0] == {"type": "text", "text": "hi"}
    assert message["content"][1]["input"] == {"skill": "a:b"}
    assert message["stop_reason"] == "tool_use" and message["stop_sequence"] is None
    assert message["usage"]["input_tokens"] == 7 and message["usage"]["output_tokens"] == 3


def test_explicit_stop_reason_is_sent(model: ScriptedModel) -> None:
    model.add(Rule(reply=Reply(blocks=text("cut").blocks, stop_reason="max_tokens")))
    assert ask(model, body())["stop_reason"] == "max_tokens"


def test_count_tokens_answers_a_deterministic_positive_count(model: ScriptedModel) -> None:
    short = post(model, body("a"), "/v1/messages/count_tokens?beta=true")
    long = post(model, body("a" * 4000), "/v1/messages/count_tokens?beta=true")
    assert short[0].status == 200
    small, big = json.loads(short[1])["input_tokens"], json.loads(long[1])["input_tokens"]
    assert 0 < small < big
    assert (
        json.loads(post(model, body("a"), "/v1/messages/count_tokens")[1])["input_tokens"] == small
    )
    assert [r["path"] for r in model.requests] == ["/v1/messages/count_tokens"] * 3
    assert model.message_requests == []


def test_unknown_paths_are_404_in_the_api_error_shape(model: ScriptedModel) -> None:
    response, raw = post(model, {}, "/v1/complete")
    assert response.status == 404
    doc = json.loads(raw)
    assert doc["type"] == "error" and doc["error"]["type"] == "not_found_error"
    models = json.loads(get(model, "/v1/models")[1])
    assert "claude-opus-5-5" in [m["id"] for m in models["data"]]


def test_a_body_that_is_not_json_is_a_400(model: ScriptedModel) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    try:
        conn.request("POST", "/v1/messages", body=b"not json")
        response = conn.getresponse()
        assert response.status == 400
        assert json.loads(response.read())["error"]["type"] == "invalid_request_error"
    finally:
        conn.close()


# -- rules ------------------------------------------------------------------------------------


def test_first_matching_rule_wins_and_default_text_when_none_match() -> None:
    rules = [
        Rule(when_prompt="capital", reply=text("first")),
        Rule(when_prompt="capital", reply=text("second")),
        Rule(when_prompt="weather", reply=text("third")),
    ]
    with ScriptedModel(rules, default_text="nothing scripted") as m:
        assert answer_text(m, body("the capital?")) == "first"
        assert answer_text(m, body("the weather?")) == "third"
        assert answer_text(m, body("something else")) == "nothing scripted"
        assert [r["rule"] for r in m.requests] == [0, 2, None]


def test_rules_with_times_expire_and_fall_through(model: ScriptedModel) -> None:
    model.add(
        Rule(reply=text("once"), times=1),
        Rule(reply=text("twice"), times=2),
        Rule(reply=text("forever")),
    )
    answers = [answer_text(model, body()) for _ in range(5)]
    assert answers == ["once", "twice", "twice", "forever", "forever"]


def test_prompt_matches_substring_or_regex_and_ignores_system_reminders(
    model: ScriptedModel,
) -> None:
    model.add(
        Rule(when_prompt=re.compile(r"^bump to \d+\.\d+$"), reply=text("regex")),
        Rule(when_prompt="version", reply=text("substring")),
    )
    assert answer_text(model, body("bump to 1.2")) == "regex"
    assert answer_text(model, body("bump to 1.2 please")) == "OK"  # anchored: no match
    assert answer_text(model, body("which version?")) == "substring"
    # "version" appears in the system reminder only: not part of the prompt.
    assert answer_text(model, body("hello")) == "OK"
    assert model.requests[-1]["prompt"] == "hello"


def test_prompt_is_the_users_text_not_text_riding_along_a_tool_result(
    model: ScriptedModel,
) -> None:
    skill_body = {"type": "text", "text": "Base directory for this skill: /x\n\n# Next version"}
    extra = tool_turn("Launching skill: rel:next-version")
    extra[-1]["content"].append(skill_body)
    request = Request.from_body(body("What comes next?", extra=extra))
    assert request.prompt == "What comes next?"
    assert request.tool_result == "Launching skill: rel:next-version"


def test_tool_result_is_found_past_trailing_system_turns() -> None:
    extra = tool_turn("1\thello from notes")
    extra.append({"role": "system", "content": "Available agent types for the Agent tool: ..."})
    assert Request.from_body(body(extra=extra)).tool_result == "1\thello from notes"
    extra.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    assert Request.from_body(body(extra=extra)).tool_result is None


def test_tool_offered_matches_exact_names_or_a_regex(model: ScriptedModel) -> None:
    model.add(
        Rule(when_tool_offered="Skill", reply=text("has skill")),
        Rule(when_tool_offered=re.compile(r"^mcp__"), reply=text("has mcp")),
    )
    assert answer_text(model, body(tools=("Read", "Skill"))) == "has skill"
    assert answer_text(model, body(tools=("Read", "Skills"))) == "OK"
    assert answer_text(model, body(tools=("mcp__kb__search",))) == "has mcp"
    assert model.requests[0]["tools"] == ["Read", "Skill"]


def test_tool_result_rule_matches_only_when_the_last_message_carries_one(
    model: ScriptedModel,
) -> None:
    model.add(
        Rule(when_tool_result=re.compile(r"Unknown skill"), reply=text("no such skill")),
        Rule(when_tool_result="Launching skill", reply=text("1.3.0")),
        Rule(when_prompt="version", reply=tool_use("Skill", {"skill": "rel:next-version"})),
    )
    first = ask(model, body("next version?"))
    assert first["content"][0]["name"] == "Skill"
    launched = tool_turn([{"type": "text", "text": "Launching skill: rel:next-version"}])
    assert answer_text(model, body("next version?", extra=launched)) == "1.3.0"
    unknown = tool_turn("<tool_use_error>Unknown skill: rel:x</tool_use_error>", is_error=True)
    assert answer_text(model, body("next version?", extra=unknown)) == "no such skill"
    # A tool result earlier in the conversation does not count once the user spoke again.
    later = [
        *launched,
        {"role": "assistant", "content": "ok"},
        user({"type": "text", "text": "version again?"}),
    ]
    assert ask(model, body("next version?", extra=later))["content"][0]["name"] == "Skill"
    assert model.requests[-1]["prompt"] == "version again?"
    log = model.requests
    assert log[1]["tool_result"] == "Launching skill: rel:next-version"
    assert log[0]["tool_result"] is None and log[3]["tool_result"] is None


def test_model_condition_and_all_conditions_must_hold(model: ScriptedModel) -> None:
    model.add(
        Rule(when_model="haiku", when_prompt="judge", reply=text("PASS")),
        Rule(when_model=re.compile(r"opus-\d"), reply=text("opus")),
    )
    assert answer_text(model, body("judge this", model="claude-haiku-5-5")) == "PASS"
    assert answer_text(model, body("hello", model="claude-haiku-5-5")) == "OK"
    assert answer_text(model, body("judge this", model="claude-opus-5-5")) == "opus"


def test_rules_added_later_are_tried_after_earlier_ones() -> None:
    m = ScriptedModel([Rule(reply=text("first"), times=1)])
    assert m.add(Rule(reply=text("later"))) is m
    with m:
        assert [answer_text(m, body()) for _ in range(2)] == ["first", "later"]


# -- errors and delays ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, "rate_limit_error"),
        (500, "api_error"),
        (529, "overloaded_error"),
        (401, "authentication_error"),
    ],
)
def test_error_replies_use_the_api_error_shape(
    model: ScriptedModel, status: int, kind: str
) -> None:
    model.add(Rule(reply=error(status), times=1))
    response, raw = post(model, body())
    assert response.status == status
    doc = json.loads(raw)
    assert doc["type"] == "error"
    assert doc["error"] == {"type": kind, "message": f"fake {status} {kind}"}
    assert doc["request_id"] == response.getheader("request-id")
    assert model.requests[0]["status"] == status
    assert post(model, body())[0].status == 200  # times=1: the next call succeeds


def test_error_type_message_and_retry_after_can_be_given(model: ScriptedModel) -> None:
    model.add(Rule(reply=error(429, "rate_limit_error", "slow down", retry_after=2)))
    response, raw = post(model, body())
    assert response.getheader("retry-after") == "2"
    assert json.loads(raw)["error"]["message"] == "slow down"


def test_delay_holds_the_answer_and_combines_with_any_reply(model: ScriptedModel) -> None:
    model.add(
        Rule(when_prompt="slow error", reply=delay(0.3) + error(500)),
        Rule(when_prompt="slow", reply=delay(0.3) + text("late")),
        Rule(when_prompt="bare", reply=delay(0.1)),
    )
    started = time.monotonic()
    assert answer_text(model, body("slow")) == "late"
    assert time.monotonic() - started >= 0.3
    started = time.monotonic()
    assert post(model, body("slow error"))[0].status == 500
    assert time.monotonic() - started >= 0.3
    assert answer_text(model, body("bare")) == "OK"


def test_stop_cuts_a_pending_delay_short() -> None:
    m = ScriptedModel([Rule(reply=delay(30) + text("never"))]).start()
    port = m.port
    worker = threading.Thread(target=lambda: _swallow(port), daemon=True)
    worker.start()
    deadline = time.monotonic() + 5
    while not m.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert m.requests[0]["status"] is None  # logged on arrival, still pending
    started = time.monotonic()
    m.stop()
    worker.join(timeout=5)
    assert time.monotonic() - started < 5
    assert not worker.is_alive()


def _swallow(port: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", "/v1/messages", body=json.dumps(body()))
        conn.getresponse().read()
    except (OSError, http.client.HTTPException):
        pass
    finally:
        conn.close()


# -- the request log and the environment ------------------------------------------------------


def test_request_log_records_what_the_agent_sent(model: ScriptedModel) -> None:
    model.add(Rule(when_prompt="hello", reply=text("hi")))
    before = time.time()
    post(model, body("hello"))
    (entry,) = model.requests
    assert entry["method"] == "POST" and entry["path"] == "/v1/messages"
    assert entry["query"] == "beta=true"
    assert entry["model"] == "claude-opus-5-5" and entry["stream"] is True
    assert entry["prompt"] == "hello" and entry["tools"] == ["Read", "Skill"]
    assert entry["tool_result"] is None and entry["rule"] == 0 and entry["status"] == 200
    assert entry["body"]["max_tokens"] == 1000
    assert entry["system"] == "You are a test."
    assert entry["headers"]["x-api-key"] == "<redacted>"
    assert before <= entry["time"] <= time.time()
    entry["prompt"] = "changed"
    assert model.requests[0]["prompt"] == "hello", "the log hands out copies"


def test_system_text_includes_role_system_messages() -> None:
    doc = body()
    listing = "The following skills are available:\n- rel:next-version: bump"
    doc["messages"].insert(1, {"role": "system", "content": [{"type": "text", "text": listing}]})
    assert "rel:next-version" in Request.from_body(doc).system
    assert Request.from_body(doc).prompt == "hello"


def test_env_points_an_agent_at_the_server(model: ScriptedModel) -> None:
    env = model.env()
    assert env["ANTHROPIC_BASE_URL"] == model.base_url == f"http://127.0.0.1:{model.port}"
    assert env["ANTHROPIC_API_KEY"] == "sk-test"
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "0"


def test_a_model_that_is_not_started_says_so() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        _ = ScriptedModel().base_url


# -- the script language ----------------------------------------------------------------------


def test_reply_helpers_validate_their_input() -> None:
    with pytest.raises(ValueError, match="both an error and content blocks"):
        _ = error(500) + text("x")
    with pytest.raises(ValueError, match="two errors"):
        _ = error(500) + error(429)
    with pytest.raises(ValueError, match="400 to 599"):
        error(200)
    with pytest.raises(TypeError, match="must be a dict"):
        tool_use("Read", ["x"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="JSON-serialisable"):
        tool_use("Read", {"x": object()})
    with pytest.raises(ValueError, match="0 seconds or more"):
        delay(-1)
    with pytest.raises(TypeError, match="takes a string"):
        text(3)  # type: ignore[arg-type]


def test_rule_validates_its_fields() -> None:
    with pytest.raises(TypeError, match="must be a Reply"):
        Rule(reply="hi")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="times must be a whole number"):
        Rule(reply=text("x"), times=0)
    with pytest.raises(TypeError, match="when_prompt must be a string or a compiled regex"):
        Rule(reply=text("x"), when_prompt=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="takes Rule objects"):
        ScriptedModel([text("x")])  # type: ignore[list-item]


def test_combined_reply_keeps_block_order_and_adds_delays() -> None:
    combined = delay(1) + text("a") + delay(0.5) + tool_use("Read")
    assert [type(b).__name__ for b in combined.blocks] == ["TextBlock", "ToolUseBlock"]
    assert combined.delay == 1.5
    assert combined.resolved_stop_reason == "tool_use"
    assert text("a").resolved_stop_reason == "end_turn"


def test_fixture_starts_and_stops_the_model(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["pytest_plugin_evals.testing.fixtures"]')
    pytester.makepyfile(
        """
        import http.client, json
        from pytest_plugin_evals.testing import Rule, text

        PORTS = []

        def test_uses_it(scripted_model):
            scripted_model.add(Rule(reply=text("scripted")))
            PORTS.append(scripted_model.port)
            conn = http.client.HTTPConnection("127.0.0.1", scripted_model.port, timeout=5)
            conn.request("POST", "/v1/messages", body=json.dumps({"messages": []}))
            assert json.loads(conn.getresponse().read())["content"][0]["text"] == "scripted"
            conn.close()

        def test_it_was_stopped():
            conn = http.client.HTTPConnection("127.0.0.1", PORTS[0], timeout=5)
            try:
                conn.request("GET", "/v1/models")
                conn.getresponse()
            except OSError:
                return
            finally:
                conn.close()
            raise AssertionError("the scripted model still answers after its test")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:evals")
    result.assert_outcomes(passed=2)
