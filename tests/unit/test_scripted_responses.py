"""The scripted model's OpenAI Responses side: same rules, errors, delays and log, read by the
OpenAI SDK (an independent reader of the wire format)."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, delay, error, text, tool_use

LONG = "The next version is 1.4.1, because only fixes landed since 1.4.0."


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as m:
        yield m


def post(model: ScriptedModel, doc: dict[str, Any], path: str = "/v1/responses") -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    conn.request("POST", path, json.dumps(doc), {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read().decode("utf-8")
    conn.close()
    return response, data


def user(content: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": content}]}


def test_the_summary_reads_input_items_tools_and_outputs(model: ScriptedModel) -> None:
    model.add(
        Rule(when_tool_result="hello-from-shell", reply=text("It said hello.")),
        Rule(when_tool_offered="exec_command", reply=tool_use("exec_command", {"cmd": "ls"})),
    )
    body = {
        "model": "fake-model",
        "instructions": "You are a coding agent.",
        "input": [
            {"type": "message", "role": "developer", "content": [
                {"type": "input_text", "text": "<skills_instructions>x</skills_instructions>"}]},
            user("<environment_context>cwd</environment_context>"),
            user("run the shell"),
            {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "hello-from-shell"},
        ],
        "tools": [
            {"type": "function", "name": "exec_command", "parameters": {}},
            {"type": "web_search"},
        ],
    }  # fmt: skip
    response, data = post(model, body)
    assert response.status == 200
    doc = json.loads(data)
    assert doc["object"] == "response" and doc["status"] == "completed"
    assert doc["output"][0]["content"][0]["text"] == "It said hello."
    assert doc["usage"]["input_tokens"] == 1200 and doc["usage"]["output_tokens"] == 40
    (logged,) = model.responses_requests
    assert logged["prompt"] == "run the shell"
    assert logged["tools"] == ["exec_command", "web_search"]
    assert logged["tool_result"] == "hello-from-shell"
    assert (
        logged["system"] == "You are a coding agent.\n<skills_instructions>x</skills_instructions>"
    )
    assert logged["rule"] == 0
    # Without the tool output it is the prompt turn: the tool rule answers, as a function call.
    body["input"] = body["input"][:3]
    doc = json.loads(post(model, body)[1])
    (call,) = doc["output"]
    assert (call["type"], call["name"], json.loads(call["arguments"])) == (
        "function_call",
        "exec_command",
        {"cmd": "ls"},
    )
    assert call["call_id"].startswith("call_scripted")
    assert model.responses_requests[1]["tool_result"] is None


def test_the_openai_sdk_reads_streamed_text_and_function_calls(
    model: ScriptedModel, request: pytest.FixtureRequest
) -> None:
    openai = pytest.importorskip("openai")
    model.add(
        Rule(when_prompt="tool", reply=text("Let me look.") + tool_use("grep", {"q": "x" * 40})),
        Rule(reply=text(LONG)),
    )
    client = openai.OpenAI(base_url=model.openai_base_url, api_key="sk-test", max_retries=0)
    request.addfinalizer(client.close)
    events = list(client.responses.create(model="m", input="hi", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) > 1 and "".join(deltas) == LONG
    final = events[-1].response
    assert final.output_text == LONG
    assert (final.usage.input_tokens, final.usage.output_tokens) == (1200, 40)
    events = list(client.responses.create(model="m", input="use a tool", stream=True))
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [i.type for i in done] == ["message", "function_call"]
    pieces = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert json.loads("".join(pieces)) == {"q": "x" * 40} == json.loads(done[1].arguments)
    whole = client.responses.create(model="m", input="use a tool")
    assert whole.output_text == "Let me look."
    assert whole.output[1].name == "grep"
    assert len(model.responses_requests) == 3


def test_errors_in_the_openai_shape_and_delays(model: ScriptedModel) -> None:
    model.add(Rule(reply=error(429, retry_after=2), times=1), Rule(reply=delay(0.3) + text("ok")))
    response, data = post(model, {"model": "m", "input": "hi", "stream": True})
    assert response.status == 429
    assert response.getheader("retry-after") == "2"
    assert json.loads(data)["error"]["type"] == "rate_limit_error"
    start = time.monotonic()
    response, data = post(model, {"model": "m", "input": "hi"}, path="/responses")
    assert time.monotonic() - start >= 0.3
    assert json.loads(data)["output"][0]["content"][0]["text"] == "ok"
    assert [r["status"] for r in model.responses_requests] == [429, 200]
    assert model.responses_requests[1]["path"] == "/responses"


#: Codex's code mode, as its default model is offered tools: no ``tools``, an
#: ``additional_tools`` input item with namespaces, and one freeform ``exec`` tool whose
#: description declares the tools its JavaScript reaches.
EXEC_DESCRIPTION = """Run JavaScript code to orchestrate/compose tool calls
### `apply_patch`
exec tool declaration:
```ts
declare const tools: { apply_patch(input: string): Promise<unknown>; };
```
### `exec_command`
exec tool declaration:
```ts
declare const tools: { exec_command(args: {
  // Shell command to execute.
  cmd: string;
}): Promise<{ output: string; }>; };
```
"""
CODE_MODE_TOOLS = {
    "type": "additional_tools",
    "role": "developer",
    "tools": [
        {"type": "namespace", "name": "functions", "description": "", "tools": [
            {"type": "custom", "name": "exec", "description": EXEC_DESCRIPTION,
             "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}},
            {"type": "function", "name": "wait", "parameters": {}},
        ]},
        {"type": "namespace", "name": "collaboration", "description": "", "tools": [
            {"type": "function", "name": "list_agents", "parameters": {}},
        ]},
    ],
}  # fmt: skip


def test_code_mode_tools_are_read_and_nested_calls_become_exec_scripts(
    model: ScriptedModel,
) -> None:
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"
    model.add(
        Rule(when_prompt="patch", reply=tool_use("apply_patch", {"input": patch})),
        Rule(when_prompt="agents", reply=tool_use("list_agents", {})),
        Rule(when_prompt="script", reply=tool_use("exec", {"input": "text(1 + 1)"})),
        Rule(
            when_tool_offered="exec_command",
            reply=tool_use("exec_command", {"cmd": "cat 'SKILL.md'"}, id="call_1"),
        ),
    )
    body: dict[str, Any] = {"model": "m", "input": [CODE_MODE_TOOLS, user("run the shell")]}
    doc = json.loads(post(model, body)[1])
    (call,) = doc["output"]
    assert (call["type"], call["name"], call["call_id"]) == ("custom_tool_call", "exec", "call_1")
    assert call["namespace"] == "functions"
    assert call["input"] == (
        'const result = await tools.exec_command({"cmd": "cat \'SKILL.md\'"});\ntext(result);\n'
    )
    (logged,) = model.responses_requests
    assert logged["tools"] == ["exec", "wait", "list_agents"]
    assert logged["nested_tools"] == ["apply_patch", "exec_command"]
    assert logged["rule"] == 3
    # A nested tool that takes a string gets it as is; a freeform tool its input text; a
    # function in a namespace is called with it.
    body["input"][-1] = user("apply the patch")
    (call,) = json.loads(post(model, body)[1])["output"]
    assert call["name"] == "exec"
    assert (
        call["input"]
        == f"const result = await tools.apply_patch({json.dumps(patch)});\ntext(result);\n"
    )
    body["input"][-1] = user("run a script")
    (call,) = json.loads(post(model, body)[1])["output"]
    assert (call["type"], call["name"], call["input"]) == (
        "custom_tool_call",
        "exec",
        "text(1 + 1)",
    )
    body["input"][-1] = user("list the agents")
    (call,) = json.loads(post(model, body)[1])["output"]
    assert (call["type"], call["name"], call["namespace"]) == (
        "function_call",
        "list_agents",
        "collaboration",
    )
    # The script's output ends the next request: the tool result.
    body["input"] += [
        {"type": "custom_tool_call", "call_id": "call_1", "name": "exec", "input": "…"},
        {"type": "custom_tool_call_output", "call_id": "call_1", "output": [
            {"type": "input_text", "text": "Script completed\nOutput:\n"},
            {"type": "input_text", "text": "{\"output\": \"Bump the patch part\"}"},
        ]},
    ]  # fmt: skip
    post(model, body)
    assert "Bump the patch part" in model.responses_requests[-1]["tool_result"]
    # A tool that is offered nowhere is still a plain function call.
    model.add(Rule(when_prompt="elsewhere", reply=tool_use("grep", {"q": "x"})))
    (call,) = json.loads(post(model, {"model": "m", "input": "elsewhere"})[1])["output"]
    assert (call["type"], call["name"], "namespace" in call) == ("function_call", "grep", False)


def test_the_openai_sdk_reads_a_streamed_custom_tool_call(
    model: ScriptedModel, request: pytest.FixtureRequest
) -> None:
    openai = pytest.importorskip("openai")
    source = "const r = await tools.exec_command({cmd: 'ls -la'});\ntext(r);\n"
    model.add(Rule(reply=text("Running it.") + tool_use("exec", {"input": source})))
    client = openai.OpenAI(base_url=model.openai_base_url, api_key="sk-test", max_retries=0)
    request.addfinalizer(client.close)
    tools = [{"type": "custom", "name": "exec", "description": "Run JavaScript"}]
    events = list(client.responses.create(model="m", input="hi", tools=tools, stream=True))
    pieces = [e.delta for e in events if e.type == "response.custom_tool_call_input.delta"]
    assert len(pieces) > 1 and "".join(pieces) == source
    (finished,) = [e for e in events if e.type == "response.custom_tool_call_input.done"]
    assert finished.input == source
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [i.type for i in done] == ["message", "custom_tool_call"]
    assert (done[1].name, done[1].input) == ("exec", source)
    assert events[-1].response.output[1].input == source
    assert model.responses_requests[0]["tools"] == ["exec"]
    assert model.responses_requests[0]["nested_tools"] == []
