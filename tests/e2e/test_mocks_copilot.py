"""MCP servers and their stand-ins under ``--eval-agent copilot``: the real Copilot CLI, the
scripted model, ``pytest evals`` as a plugin author runs it.

A tracker plugin declares a server in ``.mcp.json`` (``tracker``), one inline in
``plugin.json`` (``people``) and one more with no mocks (``billing``). Copilot runs inside
bubblewrap, where the plugin's folder is read-only, so a real server says it started by
connecting to a listener on the loopback instead of leaving a marker file. Copilot names an
MCP tool ``<server>-<tool>``; the JSON document must carry Claude Code's name for it.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.e2e.conftest import Run
from tests.e2e.release_kit import meta
from tests.e2e.tracker_kit import CREATE, CREATE_MD, files_bug

#: The tracker's ``close_issue`` by Claude Code's name.
CLOSE = "mcp__plugin_tracker-kit_tracker__close_issue"
#: The second case of the real-servers session: its call violates ``expect``.
URGENT = "File an urgent bug: the app will not start."

#: A real MCP server for the tracker (standard library only: a plugin's server runs inside the
#: CLI's confinement, which shows the tools on PATH, not this test's virtualenv): it says it
#: started, then answers (``create_issue``, ``close_issue``).
REAL_SERVER = r"""
import json, socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1]))).sendall(b"tracker")
TOOLS = [{"name": "create_issue", "description": "Create an issue in the tracker.",
          "inputSchema": {"type": "object", "properties": {"title": {"type": "string"},
                          "priority": {"type": "string"}}, "required": ["title"]}},
         {"name": "close_issue", "description": "Close an issue in the tracker.",
          "inputSchema": {"type": "object", "properties": {"number": {"type": "integer"}}}}]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, result = msg.get("method"), {}
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "tracker", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and msg["params"]["name"] == "close_issue":
        result = {"content": [{"type": "text", "text": "Real tracker closed #77"}]}
    elif method == "tools/call":
        title = msg["params"].get("arguments", {}).get("title", "")
        result = {"content": [{"type": "text", "text": f"Real tracker filed #77: {title}"}]}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


class Starts:
    """A loopback listener: the names the real servers send it when they start."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.names: list[str] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.names.append(conn.recv(64).decode())

    def server(self, name: str) -> dict[str, Any]:
        """A server that reports ``name`` and exits (a failed start, once it said so)."""
        code = "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])))"
        code += ".sendall(sys.argv[2].encode())"
        return {"command": "python3", "args": ["-c", code, str(self.port), name]}

    @property
    def allow(self) -> tuple[str, str]:
        """The option that lets a confined run's servers reach the listener."""
        return ("--eval-allow-network", f"127.0.0.1:{self.port}")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def starts() -> Iterator[Starts]:
    listener = Starts()
    yield listener
    listener.close()


def make_tracker(
    pytester: pytest.Pytester, starts: Starts, tracker: dict[str, Any], front: str = ""
) -> None:
    """The tracker plugin: ``tracker`` is the server given; ``people`` and ``billing`` report
    to ``starts`` when they start."""
    people = starts.server("people")
    manifest = {"name": "tracker-kit", "version": "0.3.0", "mcpServers": {"people": people}}
    servers = {"tracker": tracker, "billing": starts.server("billing")}
    pytester.makefile(".json", **{".claude-plugin/plugin": json.dumps(manifest)})
    pytester.makefile(".json", **{".mcp": json.dumps({"mcpServers": servers})})
    pytester.makefile(
        ".md",
        **files_bug(front),
    )


def offered(request: dict[str, Any]) -> set[str]:
    return {str(t.get("name")) for t in request["body"].get("tools") or []}


def test_stand_ins_answer_and_withheld_servers_never_start(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_copilot: Run, starts: Starts
) -> None:
    make_tracker(pytester, starts, starts.server("tracker"))
    pytester.makefile(
        ".md",
        **{
            "evals/mocks/tracker/create_issue": CREATE_MD,
            "evals/mocks/people/lookup": "alice is on call",
            "evals/mocks/kb/search": "nothing found",  # standalone: both arms
        },
    )
    scripted_model.add(
        Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
        Rule(
            when_tool_offered="tracker-create_issue",
            reply=tool_use("tracker-create_issue", {"title": "Crash on start", "priority": "high"}),
        ),
        Rule(when_prompt="File a bug", reply=text("I have no tracker to file it in.")),
    )
    result, doc = run_copilot(*starts.allow)
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    assert with_run["error"] is None, with_run
    verdicts = {g["name"]: g for g in with_run["graders"]}
    assert verdicts["created"]["passed"] is True, verdicts
    assert verdicts["answer"]["passed"] is True
    assert [c["tool"] for c in with_run["mockCalls"]] == [CREATE]
    assert with_run["mocks"]["calls"]["total"] == 1
    (call,) = meta(with_run)["toolCalls"]
    assert (call["name"], call["originalName"]) == (CREATE, "tracker-create_issue")
    assert call["isError"] is False and "#4821" in call["output"]
    # The with arm is offered the stand-ins under the plugin's names; the without arm only
    # the standalone mock.
    firsts = [offered(r) for r in scripted_model.message_requests if r["tool_result"] is None]
    with_tools = next(t for t in firsts if "tracker-create_issue" in t)
    assert {"people-lookup", "kb-search", "skill"} <= with_tools
    without_tools = next(t for t in firsts if "tracker-create_issue" not in t)
    assert "kb-search" in without_tools
    assert not {t for t in without_tools if t.startswith(("tracker-", "people-", "billing-"))}
    assert without_run["mockCalls"] == [] and without_run["score"] == 0.0
    # Strict: the shadowed servers were replaced and billing, with no mocks, withheld.
    assert starts.names == []
    result.assert_outcomes(passed=2)


def test_mocks_off_gives_the_plugin_s_own_servers_and_only_granted_tools_run(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_copilot: Run, starts: Starts
) -> None:
    """``--eval-mocks off``: the plugin's own servers start. The case lists two of the real
    tracker's tools and the session grants one: the granted call runs; the other is offered,
    refused, and the run says so."""
    (pytester.path / "real_tracker.py").write_text(REAL_SERVER, encoding="utf-8")
    tracker_args = ["${CLAUDE_PLUGIN_ROOT}/real_tracker.py", str(starts.port)]
    make_tracker(
        pytester,
        starts,
        {"command": "python3", "args": tracker_args},
        front=f"allowed_tools: [{CREATE}, {CLOSE}]\n",
    )
    pytester.makefile(".md", **{"evals/mocks/tracker/create_issue": CREATE_MD})
    scripted_model.add(
        Rule(
            when_tool_result="Real tracker filed",
            reply=tool_use("tracker-close_issue", {"number": 77}),
        ),
        Rule(when_tool_result="", reply=text("Done.")),
        Rule(
            when_tool_offered="tracker-create_issue",
            reply=tool_use("tracker-create_issue", {"title": "Crash on start"}),
        ),
    )
    args = ("--eval-ablation", "none", "--eval-mocks", "off", *starts.allow)
    _, doc = run_copilot(*args, "--eval-allow-tools", CREATE)
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["error"] is None, run
    created, closed = meta(run)["toolCalls"]
    assert (created["name"], created["originalName"]) == (CREATE, "tracker-create_issue")
    assert created["isError"] is False, created
    assert "Real tracker filed #77" in created["output"], created
    # The plugin's own servers started, the inline one too, each once.
    assert sorted(starts.names) == ["billing", "people", "tracker"]
    verdict = {g["name"]: g for g in run["graders"]}["created"]
    assert verdict["explanation"].startswith("no mock stand-ins were active")

    # Listed by the case but not granted: offered, refused, and said so.
    assert (closed["name"], closed["originalName"]) == (CLOSE, "tracker-close_issue")
    assert closed["isError"] is True, closed
    assert "Real tracker" not in (closed["output"] or "")
    assert f"not granted (add --eval-allow-tools): {CLOSE}" in run["notes"]


def test_allowed_real_servers_start_beside_the_stand_ins_and_expect_aborts_a_call(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_copilot: Run, starts: Starts
) -> None:
    """``--eval-allow-real-servers``: the stand-in replaces its namesake, the plugin's servers
    without mocks start. The session's second case, ``files-urgent``, calls the stand-in with
    a priority its ``expect`` refuses: the run stops at the call, ungraded."""
    make_tracker(pytester, starts, starts.server("tracker"))
    pytester.makefile(
        ".md",
        **{
            "evals/mocks/tracker/create_issue": CREATE_MD,
            "evals/files-urgent/prompt": f"---\nruns: 1\n---\n{URGENT}\n",
            "evals/files-urgent/graders/answer": "---\ntype: regex\npattern: '#4821'\n---\n",
        },
    )
    scripted_model.add(
        Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
        Rule(when_prompt=URGENT, when_tool_result="", reply=text("Filed it anyway.")),
        Rule(
            when_prompt=URGENT,
            when_tool_offered="tracker-create_issue",
            reply=tool_use("tracker-create_issue", {"title": "Crash", "priority": "urgent"}),
        ),
        Rule(
            when_tool_offered="tracker-create_issue",
            reply=tool_use("tracker-create_issue", {"title": "Crash on start", "priority": "low"}),
        ),
    )
    result, doc = run_copilot("--eval-ablation", "none", "--eval-allow-real-servers", *starts.allow)
    cases = {c["name"]: c for c in doc["cases"]}
    (run,) = cases["files-bug"]["arms"]["with"]
    assert [c["tool"] for c in run["mockCalls"]] == [CREATE]
    assert cases["files-bug"]["aggregates"]["passed"] is True
    # The stand-in replaced its namesake, which never started; the plugin's servers without
    # mocks did (whether the aborted run started them before its abort is not asserted).
    assert sorted(set(starts.names)) == ["billing", "people"], starts.names

    (run,) = cases["files-urgent"]["arms"]["with"]
    assert run["aborted"] == {
        "server": "tracker",
        "tool": "create_issue",
        "reason": 'the model\'s call violates expect: priority = "urgent" is not one of '
        "[low, medium, high]",
    }
    assert run["score"] == 0 and run["graders"] == [] and run["error"] is None
    assert cases["files-urgent"]["aggregates"]["passed"] is False
    # Stopped at the call: the model never saw an answer to it.
    urgent = [r for r in scripted_model.message_requests if URGENT in (r["prompt"] or "")]
    assert urgent and all(r["tool_result"] is None for r in urgent)
    result.stdout.fnmatch_lines(["*aborted by mock tracker/create_issue*"])
    result.assert_outcomes(passed=1, failed=1)
