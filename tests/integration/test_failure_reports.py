"""Failures that explain themselves: a failed run shows its answer and its tool calls, a
``tool_used`` grader says what was called, an agent that cannot start is one line, every
problem of a case file is listed at once, and the setup-only modes never start an agent."""

from __future__ import annotations

import html
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_tree

SKILL_GRADER = "---\ntype: tool_used\ntool: Skill\ninput_match: 'release-helper:next'\n---\n"
ANSWER_GRADER = "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n"

#: A Skill call whose input does not match the grader, a Read, and a failed Bash call.
CALLS = [
    {"name": "Skill", "input": {"skill": "release-helper:changelog"}, "output": "ok"},
    {"name": "Read", "input": {"file_path": "CHANGELOG.md"}, "output": "# Changes"},
    {"name": "Bash", "input": {"command": "npm test"}, "output": "boom", "is_error": True},
]


def failing_case(pytester: pytest.Pytester) -> None:
    write_tree(
        pytester.path,
        {
            "evals/release/prompt.md": "---\nruns: 1\n---\nWhat is the next version?\n",
            "evals/release/graders/skill.md": SKILL_GRADER,
            "evals/release/graders/answer.md": ANSWER_GRADER,
        },
    )


#: The calls, and one whose name and input are markup.
HOSTILE_CALLS = [*CALLS, {"name": "<img src=x onerror=alert(1)>", "input": {"q": "<script>"}}]


@pytest.mark.workers  # what crosses from the workers is tested
def test_a_failed_run_shows_its_answer_and_its_tool_calls(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    """In the terminal, the JSON document and the pytest-html extras (markup escaped). Beside
    it a case file with three mistakes: one load error, every problem listed at once."""
    from tests.integration.test_reports import pytest_html_data

    failing_case(pytester)
    write_tree(pytester.path, {"evals/three/case.yaml": THREE_MISTAKES})
    reply = "I could not tell.\nThe tests \x1b[31mfailed\x1b[0m."
    agent = scripted_agent([{"match": "next version", "reply": reply, "tool_calls": HOSTILE_CALLS}])
    result = pytester.runpytest(
        "evals", *plugin_args, "-rA", "--eval-agent", agent, "--eval-json", "o.json",
        "--html", "ph.html", "--self-contained-html",
    )  # fmt: skip
    result.assert_outcomes(failed=1, errors=1)  # one load error, three lines
    lines = [
        'evals/three/case.yaml:3: unknown key "retries" (expected one of: *)',
        'evals/three/case.yaml:4: runs must be a whole number from 1 to 50 (got "three")',
        "evals/three/case.yaml:12: graders[[]1[]].type must be one of regex, tool_order, "
        'tool_used, file_exists, llm, baseline (got "regexx")',
    ]
    result.stdout.fnmatch_lines(lines, consecutive=True)
    result.stdout.fnmatch_lines(["1 case file could not be loaded — see the errors above"])
    doc = read_doc("o.json")
    (error,) = doc["loadErrors"]
    assert (Path(error["path"]).name, error["line"]) == ("case.yaml", 3)
    first, *rest = error["message"].split("\n")
    assert first.startswith('unknown key "retries"')
    assert rest == [
        'three/case.yaml:4: runs must be a whole number from 1 to 50 (got "three")',
        "three/case.yaml:12: graders[1].type must be one of regex, tool_order, tool_used, "
        'file_exists, llm, baseline (got "regexx")',
    ]

    result.stdout.fnmatch_lines(
        [
            "score 0.00 (run 1, single arm)",
            "✗ answer: pattern not found in last_message",
            "✗ skill: Skill called 1x, but no call's input matched /release-helper:next/ "
            '(expected 1..∞); Skill@0 input: {"skill":"release-helper:changelog"}',
            "tool calls (4):",
            '  @0 Skill {"skill":"release-helper:changelog"}',
            '  @1 Read {"file_path":"CHANGELOG.md"}',
            '  @2 Bash {"command":"npm test"} ✗ error: boom',
            "  @3 *",
            f"answer ({len(reply)} characters):",
            "  I could not tell.",
            "  The tests failed.",  # escape sequences are gone
        ]
    )
    assert "\x1b[31m" not in result.stdout.str()
    (case_doc,) = doc["cases"]
    (run,) = case_doc["arms"]["with"]  # one arm: the document lists it as "with"
    assert run["toolCalls"] == 4
    assert run["toolCallList"][:3] == [
        {"name": "Skill", "input": '{"skill":"release-helper:changelog"}', "isError": False},
        {"name": "Read", "input": '{"file_path":"CHANGELOG.md"}', "isError": False},
        {"name": "Bash", "input": '{"command":"npm test"}', "isError": True, "error": "boom"},
    ]

    page = (pytester.path / "ph.html").read_text(encoding="utf-8")
    tests = pytest_html_data(page)["tests"]
    ((entry,),) = (v for k, v in tests.items() if k.startswith("evals/release::"))
    verdicts, answer = entry["extras"]
    content = verdicts["content"]
    assert "<p>Tool calls (4):</p>" in content
    assert (
        "<li><code>Skill</code> {&quot;skill&quot;:&quot;release-helper:changelog&quot;}</li>"
    ) in content
    assert (
        "<li>✗ <code>Bash</code> {&quot;command&quot;:&quot;npm test&quot;} <em>(error: boom)</em>"
        in (content)
    )
    assert "<img" not in content and "<script" not in content, "markup escaped"
    assert html.escape("<img src=x onerror=alert(1)>") in content
    assert answer["name"] == "Answer"


def test_a_long_answer_and_many_tool_calls_are_cut_with_a_note(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    failing_case(pytester)
    reply = "".join(f"{i:05d}" for i in range(1200))  # 6,000 characters, no newline
    calls = [{"name": "Grep", "input": {"pattern": f"p{i}", "pad": "x" * 500}} for i in range(60)]
    agent = scripted_agent([{"match": "next version", "reply": reply, "tool_calls": calls}])
    result = pytester.runpytest("evals", *plugin_args, "-rA", "--eval-agent", agent)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "tool calls (60):",
            '  @0 Grep {"pattern":"p0","pad":"xxx*…',
            "  @49 Grep *",
            "  [… 10 more not listed]",
            "answer (4,000+ characters):",
            f"  {reply[:1500]}",
            "  [… cut: the first 1,500 of 4,000+ characters shown]",
        ]
    )
    output = result.stdout.str()
    assert "@50 Grep" not in output
    assert reply[:1501] not in output
    assert max(len(line) for line in result.stdout.lines) < 1600


# -- an agent that cannot start: one line ------------------------------------------------------


def simple_case(pytester: pytest.Pytester, runs: int = 2) -> None:
    write_tree(
        pytester.path,
        {
            "evals/c/prompt.md": f"---\nruns: {runs}\n---\nHello\n",
            "evals/c/graders/hi.md": "---\ntype: regex\npattern: hi\n---\n",
        },
    )


@pytest.mark.parametrize(
    ("agent", "line"),
    [
        (
            "cmd:/nonexistent/agent",
            "--eval-agent cmd: cannot start '/nonexistent/agent': no such file",
        ),
        (
            "cmd:no-such-agent-program-7f3a --fast",
            "--eval-agent cmd: cannot start 'no-such-agent-program-7f3a': not found on PATH",
        ),
        ("cmd:./agent.txt", "--eval-agent cmd: cannot start './agent.txt': it is not executable"),
        ("cmd:./evals", "--eval-agent cmd: cannot start './evals': it is a folder"),
        (
            "py:no_such_agent_mod:run",
            "--eval-agent py: cannot import 'no_such_agent_mod': "
            "No module named 'no_such_agent_mod'",
        ),
        ("py:json:no_such_function", "--eval-agent py: json.no_such_function is not a callable"),
    ],
)
def test_an_agent_that_cannot_start_is_one_line(
    pytester: pytest.Pytester, plugin_args: list[str], agent: str, line: str
) -> None:
    simple_case(pytester, runs=3)
    (pytester.path / "agent.txt").write_text("print('hi')\n", encoding="utf-8")
    result = pytester.runpytest("evals", *plugin_args, "--eval-agent", agent)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes()  # no item ran: no error per item
    output = result.stdout.str() + result.stderr.str()
    assert output.count(line) == 1
    assert f"ERROR: {line}" in result.stderr.lines
    assert "Traceback" not in output and "INTERNALERROR" not in output
    assert not (pytester.path / "evals" / "results").exists()


def test_a_missing_claude_binary_is_one_line(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    simple_case(pytester, runs=3)
    result = pytester.runpytest("evals", *plugin_args, "--eval-claude-bin", "/no/such/claude")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes()
    line = "--eval-claude-bin /no/such/claude: no such file"
    assert (result.stdout.str() + result.stderr.str()).count(line) == 1
    assert f"ERROR: {line}" in result.stderr.lines


def test_the_agent_is_not_checked_when_nothing_runs_it(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    """Collecting only, deselecting every eval item, or an ``eval_agent`` fixture of your
    own: the ``--eval-agent`` agent is not needed, so it is not made."""
    simple_case(pytester)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    missing = ["--eval-agent", "cmd:/nonexistent/agent"]
    listed = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", *missing)
    assert listed.ret == pytest.ExitCode.OK
    listed.stdout.fnmatch_lines(
        ["evals/c::c[[]1[]]", "evals/c::c[[]2[]]", "test_plain.py::test_plain"]
    )
    plain = pytester.runpytest("test_plain.py", *plugin_args, *missing)
    plain.assert_outcomes(passed=1)
    deselected = pytester.runpytest(*plugin_args, *missing, "-k", "plain")
    deselected.assert_outcomes(passed=1)
    pytester.makeconftest(
        "import pytest\n"
        "from pytest_plugin_evals.model import Transcript\n\n\n"
        "class EchoAgent:\n"
        "    name = 'echo'\n\n"
        "    def run(self, request):\n"
        "        return Transcript(final_message='hi there', turns=1)\n\n\n"
        "@pytest.fixture(scope='session')\n"
        "def eval_agent():\n"
        "    return EchoAgent()\n"
    )
    own = pytester.runpytest("evals", *plugin_args, *missing)
    own.assert_outcomes(passed=2)


# -- every problem of a case file at once ------------------------------------------------------

THREE_MISTAKES = """\
schema_version: "1.1"
name: three
retries: 2
runs: three
execution:
  prompt: Say hi
graders:
  - name: hi
    type: regex
    pattern: hi
  - name: bad
    type: regexx
    pattern: x
"""


# -- --setup-only, --setup-plan, --collect-only: nothing starts -----------------------------

#: Leaves a mark file for each run it makes, in the folder its argument names.
MARK_AGENT = """\
import os, sys
from pathlib import Path
sys.stdin.read()
Path(sys.argv[1], f"{os.environ['EVAL_ARM']}-{os.environ['EVAL_RUN']}").write_text("ran")
print("hi")
"""


@pytest.mark.parametrize("mode", ["--setup-only", "--setup-plan", "--collect-only"])
def test_setup_and_collect_modes_never_start_an_agent(
    pytester: pytest.Pytester, plugin_args: list[str], mode: str
) -> None:
    simple_case(pytester, runs=3)
    marks = pytester.path / "marks"
    marks.mkdir()
    script = pytester.path / "mark_agent.py"
    script.write_text(MARK_AGENT, encoding="utf-8")
    agent = "cmd:" + shlex.join([sys.executable, str(script), str(marks)])
    # Runs made ahead would start the next item's run during this one's setup. The agent
    # leaves its marks outside its run: unconfined, on purpose.
    options = [
        *plugin_args,
        "--eval-agent",
        agent,
        "--eval-run-ahead",
        "always",
        "--eval-unconfined",
    ]
    result = pytester.runpytest("evals", mode, *options)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert sorted(p.name for p in marks.iterdir()) == []
    if mode != "--collect-only" and "-n0" in plugin_args:  # xdist does not show them
        result.stdout.fnmatch_lines(["*SETUP    F eval_run*"])
    # The same session makes its runs when it is asked to: the agent does leave its marks.
    made = pytester.runpytest("evals", *options)
    made.assert_outcomes(passed=3)
    assert sorted(p.name for p in marks.iterdir()) == ["single-1", "single-2", "single-3"]


@pytest.mark.parametrize("mode", [[], ["--eval-unconfined"]], ids=["confined", "unconfined"])
def test_a_run_killed_by_a_signal_says_which(
    pytester: pytest.Pytester, mode: list[str], read_doc: Any
) -> None:
    write_tree(
        pytester.path,
        {
            "evals/killed/prompt.md": "---\nruns: 1\n---\nSay hi.\n",
            "evals/killed/graders/hi.md": "---\ntype: regex\npattern: hi\n---\n",
            "agent.py": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
        },
    )
    agent = f"cmd:{shlex.join([sys.executable, str(pytester.path / 'agent.py')])}"
    result = pytester.runpytest(
        "evals", "-n0", "-p", "no:cacheprovider", f"--eval-agent={agent}",
        "--eval-json=out.json", *mode,
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    # In its sandbox, or unconfined in a PID namespace of its own, bwrap says 128 + 9; without
    # one the agent is the harness's child.
    from pytest_plugin_evals.agents.confine import pids

    said = "killed by SIGKILL" if mode and not pids.available() else "exit 137 (killed by SIGKILL)"
    result.stdout.fnmatch_lines([f"*run error: {said}*"])
    assert "exit -9" not in result.stdout.str()
    run = read_doc()["cases"][0]["arms"]["with"][0]
    assert run["error"] == said
