"""package.json ``callsTool`` and its argument matcher language."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plugin_evals.graders import grade
from pytest_plugin_evals.graders.matchers import equal, mismatches
from pytest_plugin_evals.model import GraderSpec, ToolCall, Transcript, Verdict
from pytest_plugin_evals.util.jsregex import Pattern, compile_pattern

TODO_ID = "aef13ef3-9c37-463e-9c93-3573325c0231"


def _calls_tool(calls: list[ToolCall], name: str, arguments: Any = None) -> Verdict:
    spec = GraderSpec("g", "callsTool", {"name": name, "arguments": arguments})
    return grade(spec, Transcript(tool_calls=calls))


def _fails(matcher: Any, value: Any) -> list[str]:
    def compile_js(source: str) -> Pattern:
        return compile_pattern(source)

    return mismatches(matcher, value, compile_js)


def test_short_form_passes_on_any_call() -> None:
    v = _calls_tool([ToolCall("get-todos", {})], "get-todos")
    assert (v.passed, v.explanation) == (True, "get-todos called 1x")


def test_mcp_style_name_matches_the_part_after_the_last_double_underscore() -> None:
    calls = [ToolCall("ToolSearch", {}), ToolCall("mcp__todo__get-todos", {})]
    v = _calls_tool(calls, "get-todos")
    assert v.passed is True
    assert _calls_tool([ToolCall("mcp__todo__get-todos-all", {})], "get-todos").passed is False


def test_never_called() -> None:
    v = _calls_tool([ToolCall("get-todos", {})], "create-comment", {"issueId": "ISS-1"})
    assert (v.passed, v.explanation) == (False, "create-comment never called")


def test_arguments_match_says_which_call() -> None:
    calls = [
        ToolCall("get-todos", {}),
        ToolCall("toggle-todo", {"id": "zzz"}),
        ToolCall("toggle-todo", {"id": TODO_ID}),
    ]
    v = _calls_tool(calls, "toggle-todo", {"id": TODO_ID})
    assert v.passed is True
    assert v.explanation == "toggle-todo@2 matched the arguments (toggle-todo called 2x)"


def test_single_call_failing_names_the_argument() -> None:
    v = _calls_tool([ToolCall("toggle-todo", {"id": "zzz"})], "toggle-todo", {"id": TODO_ID})
    assert v.passed is False
    assert v.explanation == (
        'toggle-todo called 1x but no call matched: id: expected "aef13ef3-9c37-463e-9c93-'
        '3573325c0231" got "zzz"'
    )


def test_closest_call_is_reported() -> None:
    calls = [
        ToolCall("create-comment", {"issueId": "X", "body": "nope"}),
        ToolCall("create-comment", {"issueId": "ISS-1", "body": "ready"}),
    ]
    matcher = {"issueId": "ISS-1", "body": {"includes": "waiting for design"}}
    v = _calls_tool(calls, "create-comment", matcher)
    assert v.passed is False
    assert v.explanation == (
        "create-comment called 2x but no call matched (closest: create-comment@1): "
        'body: expected to include "waiting for design" got "ready"'
    )


def test_raycast_example_passes() -> None:
    calls = [ToolCall("create-comment", {"issueId": "ISS-1", "body": "We are waiting for design."})]
    matcher = {"issueId": "ISS-1", "body": {"includes": "waiting for design"}}
    assert _calls_tool(calls, "create-comment", matcher).passed is True


@pytest.mark.parametrize(
    ("matcher", "value", "ok"),
    [
        ("a", "a", True),
        ("a", "b", False),
        (1, 1.0, True),
        (1, "1", False),
        (True, 1, False),
        (None, None, True),
        ({"eq": {"a": [1, 2]}}, {"a": [1, 2]}, True),
        ({"eq": [1, 2]}, [1, 2, 3], False),
        ({"includes": "sign"}, "design", True),
        ({"includes": "Sign"}, "design", False),
        ({"includes": "bug"}, ["bug", "p1"], True),
        ({"includes": "p2"}, ["bug", "p1"], False),
        ({"includes": 5}, "a5", True),
        ({"matches": "^ISS-\\d+$"}, "ISS-12", True),
        ({"matches": "^ISS-\\d+$"}, "ISS-x", False),
        ({"matches": "^\\d+$"}, 42, True),
        ({"matches": "^true$"}, True, True),
        ({"matches": "(?<=a)b"}, "ab", True),
        (["a", {"includes": "a"}], "a", True),
        ([{"includes": "a"}, {"includes": "z"}], "abc", False),
        ({"and": [{"includes": "a"}, {"includes": "b"}]}, "ab", True),
        ({"or": ["x", "y"]}, "y", True),
        ({"or": ["x", "y"]}, "z", False),
        ({"or": []}, "z", False),
        ({"not": "x"}, "y", True),
        ({"not": "x"}, "x", False),
        ({"not": {"or": ["x", "y"]}}, "z", True),
        ({"not": {"includes": "draft"}}, "final", True),
        ({"meta": {"owner": {"or": ["alice", "bob"]}}}, {"meta": {"owner": "bob"}}, True),
        ({"meta": {"owner": "alice"}}, {"meta": "alice"}, False),
        ({"a": 1, "b": 2}, {"a": 1, "b": 2, "c": 3}, True),  # extra arguments are fine
        ({"a": 1, "b": 2}, {"a": 1}, False),
        ({"draft": {"not": True}}, {}, True),  # a missing argument is not true
        ({"eq": 1, "not": 2}, {"eq": 1, "not": 2}, True),  # two keys: a nested map
    ],
)
def test_matcher_language(matcher: Any, value: Any, ok: bool) -> None:
    assert (not _fails(matcher, value)) is ok


def test_mismatch_lines_carry_dotted_paths() -> None:
    lines = _fails(
        {"meta": {"owner": "alice", "tags": {"includes": "bug"}}, "id": 1},
        {"meta": {"owner": "bob", "tags": ["p1"]}},
    )
    assert lines == [
        'meta.owner: expected "alice" got "bob"',
        'meta.tags: expected to include "bug" got ["p1"]',
        "id: expected 1 got nothing (the argument is missing)",
    ]


@pytest.mark.parametrize(
    ("matcher", "value", "line"),
    [
        ({"not": "x"}, "x", 'arguments: expected not "x" got "x"'),
        (
            {"or": ["x", {"includes": "q"}]},
            "z",
            'arguments: expected "x" or to include "q" got "z"',
        ),
        ({"matches": "^a"}, "b", 'arguments: expected to match /^a/ got "b"'),
        ({"k": 1}, "s", 'arguments: expected an object got "s"'),
    ],
)
def test_mismatch_wording(matcher: Any, value: Any, line: str) -> None:
    assert _fails(matcher, value) == [line]


def test_long_values_are_cut_in_explanations() -> None:
    (line,) = _fails({"body": "short"}, {"body": "x" * 500})
    assert line.endswith('…"')
    assert len(line) < 120


def test_bad_pattern_in_a_matcher_is_a_grader_error() -> None:
    v = _calls_tool([ToolCall("t", {"a": "b"})], "t", {"a": {"matches": "["}})
    assert v.passed is False
    assert v.explanation.startswith("grader threw: Invalid regular expression")


def test_equal_is_strict_about_booleans_and_types() -> None:
    assert equal(1, 1.0)
    assert not equal(True, 1)
    assert not equal("1", 1)
    assert equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not equal({"a": 1}, {"a": 1, "b": 2})
