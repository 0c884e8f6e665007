"""The agent adapters as users drive them: the ``cmd:`` protocol and ``py:module:function``."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

PLUGIN_JSON = '{"name": "probe-kit", "version": "1.0.0"}'

#: Reports everything the protocol gives it, as one JSON object on stdout.
ENV_AGENT = """\
import json, os, sys
prompt = sys.stdin.read()
seen = {k: v for k, v in os.environ.items() if k.startswith("EVAL_")}
for name in ("HOME", "TMPDIR", "MY_SECRET_TOKEN", "ANTHROPIC_API_KEY"):
    seen[name] = os.environ.get(name)
seen["cwd"] = os.getcwd()
seen["prompt"] = prompt
with open(os.environ["EVAL_TRACE_FILE"], "a", encoding="utf-8") as fh:
    call = {"type": "tool_call", "name": "Read", "input": {"file_path": "a.txt"},
            "output": "text", "is_error": False}
    fh.write(json.dumps(call) + "\\n")
    fh.write("not json\\n")
    usage = {"type": "usage", "input_tokens": 1200, "output_tokens": 40, "cost_usd": 0.0056}
    fh.write(json.dumps(usage) + "\\n")
print(json.dumps(seen))
"""

ENV_PROMPT = """---
runs: 1
max_turns: 7
model: test-model
allowed_tools: [Read, Grep]
env:
  EVAL_X: "y"
---
Report your environment.
"""

READ_GRADER = "---\ntype: tool_used\ntool: Read\ninput_match: 'a\\.txt'\n---\n"

#: Prints a partial answer naming a child process, then sleeps past its timeout.
SLOW_AGENT = """\
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", sys.argv[1]])
sys.stdout.write(f"partial 1.4.1 child={child.pid}\\n")
sys.stdout.flush()
time.sleep(30)
print("finished")
"""


def python_agent(pytester: pytest.Pytester, name: str, source: str) -> str:
    path = pytester.path / name
    path.write_text(source, encoding="utf-8")
    return "cmd:" + shlex.join([sys.executable, str(path)])


def case(pytester: pytest.Pytester, name: str, prompt: str, **graders: str) -> None:
    pytester.makefile(".md", **{f"evals/{name}/prompt": prompt})
    for grader, text in graders.items():
        pytester.makefile(".md", **{f"evals/{name}/graders/{grader}": text})


def only_run(doc: dict[str, Any], arm: str = "with") -> dict[str, Any]:
    (case_doc,) = doc["cases"]
    (run,) = case_doc["arms"][arm]
    return run


def test_cmd_protocol_environment(
    pytester: pytest.Pytester,
    plugin_args: list[str],
    read_doc: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytester.makefile(".json", **{".claude-plugin/plugin": PLUGIN_JSON})
    case(pytester, "env-probe", ENV_PROMPT, read=READ_GRADER)
    monkeypatch.setenv("MY_SECRET_TOKEN", "s3cret")
    monkeypatch.setenv("EVAL_OPERATOR_FLAG", "on")
    monkeypatch.setenv("EVAL_TRACKER_TOKEN", "tracker-token-0123456789")
    monkeypatch.setenv("EVAL_GIVEN_TOKEN", "given-token-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-claude-only-0123456789")
    agent = python_agent(pytester, "env_agent.py", ENV_AGENT)
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "o.json",
        "--eval-env-pass", "EVAL_GIVEN_TOKEN",
    )  # fmt: skip
    result.assert_outcomes(passed=2)
    doc = read_doc("o.json")
    for arm in ("with", "without"):
        run = only_run(doc, arm)
        seen = json.loads(run["answer"])
        assert seen["prompt"] == "Report your environment."
        assert seen["EVAL_CASE"] == "env-probe"
        assert seen["EVAL_ARM"] == arm
        assert seen["EVAL_RUN"] == "1"
        assert seen["EVAL_MAX_TURNS"] == "7"
        assert seen["EVAL_ALLOWED_TOOLS"] == "Read,Grep"
        assert seen["EVAL_MODEL"] == "test-model"
        assert seen["EVAL_X"] == "y"  # the case's env
        assert seen["EVAL_OPERATOR_FLAG"] == "on"  # the operator's EVAL_* settings pass
        assert "EVAL_TRACKER_TOKEN" not in seen  # a secret one only to a case requiring it
        assert seen["EVAL_GIVEN_TOKEN"] == "[redacted EVAL_GIVEN_TOKEN]"  # or passed on purpose
        assert seen["MY_SECRET_TOKEN"] is None  # nor anything else
        assert seen["ANTHROPIC_API_KEY"] is None  # another agent's key
        # HOME, the cwd and the trace file are the run's own folders; TMPDIR is in its /tmp.
        root = Path(seen["HOME"]).parent
        assert Path(seen["HOME"]) == root / "home"
        assert seen["TMPDIR"] == "/tmp/run"
        assert Path(seen["cwd"]) == root / "home" / "cwd"
        assert Path(seen["EVAL_TRACE_FILE"]) == root / "outbox" / "trace.jsonl"
        assert Path(seen["HOME"]) != Path.home()
        assert not (pytester.path / "evals").is_relative_to(root)
        # The trace's lines became a tool call and usage (a line that is not JSON is skipped).
        assert run["toolCalls"] == 1
        assert run["inputTokens"] == 1200 and run["outputTokens"] == 40
        assert run["costUsd"] == pytest.approx(0.0056)
        assert run["graders"][0]["passed"] is True
        assert run["graders"][0]["explanation"] == "Read called 1x (expected 1..∞)"
    with_seen = json.loads(only_run(doc, "with")["answer"])
    assert with_seen["EVAL_PLUGIN_DIR"] == str(pytester.path)
    assert Path(with_seen["EVAL_PLUGIN_DIR"]).is_absolute()
    assert json.loads(only_run(doc, "without")["answer"])["EVAL_PLUGIN_DIR"] == ""


def test_single_arm_is_named_single_and_loads_the_plugin(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    pytester.makefile(".json", **{".claude-plugin/plugin": PLUGIN_JSON})
    case(pytester, "env-probe", ENV_PROMPT, read=READ_GRADER)
    agent = python_agent(pytester, "env_agent.py", ENV_AGENT)
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-ablation", "none",
        "--eval-json", "o.json",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    seen = json.loads(only_run(read_doc("o.json"))["answer"])
    assert seen["EVAL_ARM"] == "single"
    assert seen["EVAL_PLUGIN_DIR"] == str(pytester.path)


def test_nonzero_exit_is_a_run_error_graded_on_its_output(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    case(
        pytester,
        "crashy",
        "---\nruns: 1\n---\nWhat next?\n",
        answer="---\ntype: regex\npattern: 1\\.4\\.1\n---\n",
    )
    agent = scripted_agent(
        [
            {
                "match": "What next",
                "reply": "Ship 1.4.1",
                "stderr": "warming up\nboom: disk full\n",
                "exit": 3,
            }
        ]
    )
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "o.json"
    )
    # Graded on what it produced: its grader passes, so the run and the item pass, and the
    # error is said in NOTES.
    result.assert_outcomes(passed=1)
    run = only_run(read_doc("o.json"))
    assert run["error"] == "exit 3: warming up boom: disk full"
    assert run["graders"][0]["passed"] is True
    assert run["score"] == 1.0 and run["passed"] is True
    result.stdout.re_match_lines(
        [
            r"crashy\s+1\.00 \[0\.21, 1\.00\]\s+100%\s+1\s+\$0\.00\s+"
            r"exit 3: warming up boom: disk full"
        ]
    )
    assert "Traceback" not in result.stdout.str()


def _running_with(marker: str) -> list[int]:
    """The live processes (zombies aside) whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and not _gone(int(entry.name)):
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def _gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (gone, or a zombie nobody reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
def test_timeout_kills_the_process_group(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    case(
        pytester,
        "slow",
        "---\nruns: 1\ntimeout_seconds: 3\n---\nTake your time\n",
        answer="---\ntype: regex\npattern: 1\\.4\\.1\n---\n",
    )
    # The child's command line says which test started it (its PID is the sandbox's own).
    marker = f"timeout-child-{uuid.uuid4().hex}"
    agent = python_agent(pytester, "slow_agent.py", SLOW_AGENT) + f" {marker}"
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "o.json"
    )
    result.assert_outcomes(passed=1)
    run = only_run(read_doc("o.json"))
    # 3 s leave a loaded machine time to start the agent and see its first line.
    assert run["error"] == "timed out after 3s"
    assert run["durationSeconds"] < 15  # not the 30 s the agent asked for
    assert run["graders"][0]["passed"] is True  # graded on the partial stdout
    assert "finished" not in run["answer"]
    assert "child=" in run["answer"]  # it started its child
    deadline = time.monotonic() + 2
    while _running_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running_with(marker), "the agent's child process outlived the timeout"
    result.stdout.re_match_lines(
        [r"slow\s+1\.00 \[0\.21, 1\.00\]\s+100%\s+1\s+\$0\.00\s+timed out after 3s"]
    )


def test_agent_that_cannot_start_is_an_error_kept_out_of_scores(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    case(
        pytester, "nostart", "---\nruns: 1\n---\nHello\n", hi="---\ntype: regex\npattern: hi\n---\n"
    )
    # There and executable, so the check before the session passes, but no program at all:
    # it fails to start in the run (a missing one is one usage error: test_failure_reports).
    broken = pytester.path / "broken-agent"
    broken.write_bytes(b"\x00\x01 not a program")
    broken.chmod(0o755)
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", f"cmd:{broken}", "--eval-json", "o.json"
    )
    result.assert_outcomes(errors=1)
    assert result.ret != pytest.ExitCode.OK
    result.stdout.fnmatch_lines([f"*could not start '{broken}'*"])
    doc = read_doc("o.json")
    assert doc["partial"] is True
    assert doc["errors"] == {"agent_start": 1}
    (case_doc,) = doc["cases"]
    assert case_doc["aggregates"]["score"] is None
    assert case_doc["aggregates"]["runsNotMade"] == 1
    assert doc["aggregates"]["runsGraded"] == 0
    result.stdout.fnmatch_lines(["partial: 1 run(s) could not be made (agent_start 1)*"])
    assert "Traceback" not in result.stdout.str()


PY_AGENT = """\
from pathlib import Path

from pytest_plugin_evals.model import ToolCall, Transcript


def answer(request):
    return f"hello from {request.case.name} ({request.arm})"


def transcript(request):
    Path("made.txt").write_text("x")
    return Transcript(
        final_message="done: 1.4.1",
        tool_calls=[ToolCall("Skill", {"skill": "probe-kit:next"})],
        cost_usd=0.5,
        input_tokens=10,
        output_tokens=5,
        turns=2,
    )
"""


@pytest.mark.parametrize("function", ["answer", "transcript"])
def test_python_agent(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any, function: str
) -> None:
    pytester.makepyfile(my_agent=PY_AGENT)
    pytester.makeini("[pytest]\npythonpath = .\n")
    case(
        pytester,
        "py-case",
        "---\nruns: 1\n---\nAnything\n",
        said="---\ntype: regex\npattern: 'hello from py-case \\(single\\)|1\\.4\\.1'\n---\n",
    )
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", f"py:my_agent:{function}", "--eval-json", "o.json"
    )
    result.assert_outcomes(passed=1)
    run = only_run(read_doc("o.json"))
    if function == "answer":
        assert run["answer"] == "hello from py-case (single)"
        assert run["turns"] == 1
    else:
        assert run["answer"] == "done: 1.4.1"
        assert run["toolCalls"] == 1
        assert run["costUsd"] == 0.5
        assert run["filesCreated"] == ["made.txt"]  # written in the sandbox's cwd
    assert not (pytester.path / "made.txt").exists()


def test_agent_module_that_cannot_be_imported(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    """A usage error of ``--eval-agent``, one line on stderr. (The lines of the values that
    cannot be agents: tests/unit/test_options_rules.py.)"""
    case(pytester, "c", "---\nruns: 2\n---\nHello\n", hi="---\ntype: regex\npattern: hi\n---\n")
    result = pytester.runpytest("evals", *plugin_args, "--eval-agent", "py:no_such_agent_mod:run")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes()  # no item ran
    line = "--eval-agent py: cannot import 'no_such_agent_mod': No module named 'no_such_agent_mod'"
    output = result.stdout.str() + result.stderr.str()
    assert output.count(line) == 1  # once for the session, as a plain line
    assert f"ERROR: {line}" in result.stderr.lines
    assert "Traceback" not in output and "During handling" not in output


def test_relative_file_arguments_resolve_from_where_pytest_started(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    """``cmd:python3 agent.py`` works although the agent runs in its own sandbox cwd."""
    pytester.makefile(".md", **{"evals/rel/prompt": "---\nruns: 1\n---\nHello\n"})
    pytester.makefile(
        ".md", **{"evals/rel/graders/hi": "---\ntype: regex\npattern: hi there\n---\n"}
    )
    pytester.makepyfile(my_agent="import sys\nsys.stdin.read()\nprint('hi there')\n")
    result = pytester.runpytest(
        "evals",
        *plugin_args,
        "--eval-agent",
        f"cmd:{sys.executable} my_agent.py",
        "--eval-json",
        "o.json",
    )
    result.assert_outcomes(passed=1)
    assert read_doc("o.json")["cases"][0]["arms"]["with"][0]["answer"] == "hi there"


def test_cmd_agents_get_the_mock_stand_ins_config(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    """``EVAL_MCP_CONFIG`` names the generated MCP config, so any MCP-speaking agent can be
    evaluated with mocks; it is empty when no stand-in applies."""
    pytester.makefile(".md", **{"evals/mcp/prompt": "---\nruns: 1\n---\nSearch\n"})
    pytester.makefile(".md", **{"evals/mcp/graders/kb": "---\ntype: regex\npattern: kb\n---\n"})
    pytester.makefile(".md", **{"evals/mocks/kb/search": "release notes"})
    pytester.makepyfile(
        mcp_agent=(
            "import json, os, sys\nsys.stdin.read()\n"
            "config = json.load(open(os.environ['EVAL_MCP_CONFIG']))\n"
            "print(' '.join(sorted(config['mcpServers'])))\n"
        )
    )
    result = pytester.runpytest(
        "evals",
        *plugin_args,
        "--eval-agent",
        f"cmd:{sys.executable} mcp_agent.py",
        "--eval-json",
        "o.json",
    )
    result.assert_outcomes(passed=1)
    run = read_doc("o.json")["cases"][0]["arms"]["with"][0]
    assert run["answer"] == "kb"
    assert run["mocks"]["servers"][0]["kind"] == "standalone"
