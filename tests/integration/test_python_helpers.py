"""The graders as assertion helpers, and the public fixtures, in ordinary Python test files."""

from __future__ import annotations

import sys
from typing import Any

import pytest

HELPERS_TEST = """
from pytest_plugin_evals.graders import (
    calls_tool, contains, expect, file_exists, includes, matches, max_tokens, min_chars,
    not_contains, regex, tool_order, tool_succeeded, tool_used,
)
from pytest_plugin_evals.model import ToolCall, Transcript

T = Transcript(
    final_message="Ship 1.4.1: see the CHANGELOG.",
    tool_calls=[
        ToolCall("Read", {"file_path": "CHANGELOG.md"}, "..."),
        ToolCall("Write", {"file_path": "notes.md"}, "ok"),
    ],
    files_created=["notes.md"],
    output_tokens=12,
)


def test_passing_helpers():
    expect(regex(T, r"(?<major>\\d+)\\.(?<minor>\\d+)\\.\\d+"))
    expect(regex(T, "changelog", flags="i"))
    expect(regex(T, "ship", match="not_contains"))
    expect(regex(T, "notes", target="files"))
    expect(tool_used(T, "Read", input_match="CHANGELOG"))
    expect(tool_used(T, "Skill", min=0, max=0))
    expect(tool_order(T, "Read", "Write"))
    expect(file_exists(T, "*.md"))
    expect(contains(T, "1.4.1"))
    expect(not_contains(T, "2.0.0"))
    expect(includes(T, "ship"))
    expect(matches(T, "^Ship"))
    expect(min_chars(T, 10))
    expect(max_tokens(T, 100))
    expect(tool_succeeded(T, "Write"))
    expect(calls_tool(T, "Read", {"file_path": {"matches": "CHANGELOG"}}))
    assert regex("plain text answer", "answer")


def test_failing_expect_explains():
    expect(tool_used(T, "Skill", name="skill fired"))
"""


def test_assertion_helpers_in_a_python_test(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    pytester.makepyfile(test_helpers=HELPERS_TEST)
    result = pytester.runpytest(*plugin_args)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["E *.GradeFailure: skill fired: Skill called 0x (expected 1..∞)"])
    # An ordinary test file: no eval summary, no results folder.
    assert "plugin evals" not in result.stdout.str()
    assert not list(pytester.path.rglob("aggregate-result.json"))


SOFT_TEST = """
from pytest_plugin_evals.graders import contains, min_chars, regex, tool_used
from pytest_plugin_evals.model import Transcript

T = Transcript(final_message="Ship 1.4.1")


def test_many_soft_failures(eval_checks):
    assert eval_checks.check(contains(T, "1.4.1"))
    eval_checks.check(contains(T, "changelog"))
    eval_checks.check(min_chars(T, 500))
    eval_checks.check(tool_used(T, "Skill", name="skill fired"))
    print("the test went on to its end")


def test_all_soft_checks_pass(eval_checks):
    eval_checks.check(regex(T, "1\\\\.4"))
"""


def test_soft_checks_fail_once_in_the_call_phase(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    pytester.makepyfile(test_soft=SOFT_TEST)
    result = pytester.runpytest(*plugin_args, "-rA")
    result.assert_outcomes(passed=1, failed=1, errors=0)
    result.stdout.fnmatch_lines(
        [
            "*_ test_many_soft_failures _*",
            'E *.GradeFailure: contains: missing "changelog"',
            "*min_chars: fewer than 500 characters (got 10)",
            "*skill fired: Skill called 0x (expected 1..∞)",
        ],
        consecutive=False,
    )
    result.stdout.fnmatch_lines(["*the test went on to its end*"])
    # One failure report (the short summary, untruncated under CI, may repeat the message).
    report = result.stdout.str().split("short test summary info")[0]
    assert report.count("GradeFailure:") == 1
    assert "ERROR at" not in result.stdout.str()
    assert "def pytest_runtest_call" not in result.stdout.str()  # not the plugin's code


def test_soft_check_failure_is_a_call_phase_failure(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_soft=SOFT_TEST)
    reprec = pytester.inline_run("-p", "no:cacheprovider")
    (failed,) = reprec.getfailures()
    assert failed.when == "call"
    assert failed.nodeid.endswith("test_many_soft_failures")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
def test_soft_failures_are_listed_when_the_test_fails_on_its_own(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_both="""
from pytest_plugin_evals.graders import contains


def test_both(eval_checks):
    eval_checks.check(contains("Ship 1.4.1", "changelog"))
    assert 1 == 2
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E * assert 1 == 2",
            "E * and 1 soft check(s) failed:",
            'E * contains: missing "changelog"',
        ]
    )


FIXTURES_TEST = """
from pathlib import Path

from pytest_plugin_evals.agents import RunRequest
from pytest_plugin_evals.graders import file_exists, regex
from pytest_plugin_evals.model import Case


def test_sandbox(eval_sandbox, tmp_path):
    assert eval_sandbox.root.is_relative_to(tmp_path)
    assert eval_sandbox.cwd == eval_sandbox.home / "cwd"
    for folder in (eval_sandbox.cwd, eval_sandbox.tmp, eval_sandbox.out, eval_sandbox.config):
        assert folder.is_dir()
    (eval_sandbox.cwd / "before.txt").write_text("x")
    eval_sandbox.snapshot()
    (eval_sandbox.cwd / "notes.md").write_text("hi")
    assert eval_sandbox.created_files() == ["notes.md"]
    env = eval_sandbox.environment({"PATH": "/bin"})
    assert env["HOME"] == str(eval_sandbox.home) and env["TMPDIR"] == str(eval_sandbox.tmp)


def test_agent(eval_agent, eval_sandbox, eval_checks):
    here = Path(__file__).parent
    case = Case(name="adhoc", prompt="Say hi", source="prose", path=Path(__file__), dir=here,
                suite_root=here)
    request = RunRequest(
        case=case, arm="single", run=1, prompt=case.prompt, sandbox=eval_sandbox,
        plugin_dir=None, model=None, max_turns=5, timeout_seconds=30, allowed_tools=(),
        env=eval_sandbox.environment({"PATH": "/usr/bin:/bin"}),
    )
    transcript = eval_agent.run(request)
    assert transcript.error is None, transcript.error
    eval_checks.check(regex(transcript, "hello there"))
    eval_checks.check(file_exists(transcript, "out/answer.txt"))
"""


def test_sandbox_and_agent_fixtures_in_an_ordinary_test(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    pytester.makepyfile(test_fixtures=FIXTURES_TEST)
    agent = scripted_agent(
        [{"match": "Say hi", "reply": "hello there", "files": {"out/answer.txt": "hello"}}]
    )
    result = pytester.runpytest(*plugin_args, "--eval-agent", agent)
    result.assert_outcomes(passed=2)
    assert "plugin evals" not in result.stdout.str()
