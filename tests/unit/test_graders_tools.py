"""Tool-call graders: tool_used, tool_order, expect_tool_success."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plugin_evals.graders import grade
from pytest_plugin_evals.model import GraderSpec, ToolCall, Transcript, Verdict
from pytest_plugin_evals.util.jsvalues import js_json

CALLS = [
    ToolCall("Glob", {"pattern": "**/*.md"}),
    ToolCall("Skill", {"skill": "rel:next-version"}),
    ToolCall("Read", {"file_path": "CHANGELOG.md"}),
    ToolCall("Glob", {"pattern": "src/*"}),
    ToolCall("Bash", {"command": "npm test", "timeout": 1.0}),
]


def _grade(kind: str, calls: list[ToolCall] | None = None, **config: Any) -> Verdict:
    t = Transcript(tool_calls=list(CALLS if calls is None else calls))
    return grade(GraderSpec("g", kind, config), t)


# -- tool_used --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "passed", "explanation"),
    [
        ({"tool": "Glob"}, True, "Glob called 2x (expected 1..∞)"),
        ({"tool": "Glob", "min": 1, "max": 1}, False, "Glob called 2x (expected 1..1)"),
        ({"tool": "Skill", "min": 0, "max": 0}, False, "Skill called 1x (expected 0..0)"),
        ({"tool": "Write", "min": 0, "max": 0}, True, "Write called 0x (expected 0..0)"),
        ({"tool": "Write", "min": 3, "max": 1}, False, "Write called 0x (expected 3..1)"),
        ({"tool": "Write"}, False, "Write called 0x (expected 1..∞)"),
        ({"tool": "glob"}, False, "glob called 0x (expected 1..∞)"),
        ({"tool": "Glob", "min": 2.0, "max": None}, True, "Glob called 2x (expected 2..∞)"),
    ],
)
def test_tool_used_counts(config: dict[str, Any], passed: bool, explanation: str) -> None:
    v = _grade("tool_used", **config)
    assert (v.passed, v.explanation) == (passed, explanation)


def test_tool_used_min_above_max_never_passes() -> None:
    v = _grade("tool_used", tool="Skill", min=3, max=1, calls=[])
    assert (v.passed, v.explanation) == (False, "Skill called 0x (expected 3..1)")


@pytest.mark.parametrize(
    ("input_match", "count"),
    [
        (r'"skill"\s*:\s*"(?:[\w-]+:)?next-version"', 1),
        ('"skill":"rel:next-version"', 1),  # compact JSON: no spaces
        ('"skill": "rel', 0),
        ("other-skill", 0),
    ],
)
def test_tool_used_input_match_runs_on_compact_json(input_match: str, count: int) -> None:
    v = _grade("tool_used", tool="Skill", input_match=input_match, min=0)
    if count:
        assert v.explanation == "Skill called 1x (expected 0..∞)"
    else:
        assert v.explanation == (
            f"Skill called 1x, but no call's input matched /{input_match}/ (expected 0..∞)"
        )


def test_tool_used_says_a_call_was_made_when_its_input_did_not_match() -> None:
    """Not "Skill called 0x": the call was made, its input is what did not match."""
    v = _grade("tool_used", tool="Skill", input_match="other-skill")
    assert (v.passed, v.explanation) == (
        False,
        "Skill called 1x, but no call's input matched /other-skill/ (expected 1..∞); "
        'Skill@1 input: {"skill":"rel:next-version"}',
    )


def test_tool_used_counts_the_calls_whose_input_matched() -> None:
    v = _grade("tool_used", tool="Glob", input_match="src", max=1)
    assert (v.passed, v.explanation) == (
        True,
        "Glob called 2x, the input of 1 matched /src/ (expected 1..1)",
    )
    v = _grade("tool_used", tool="Glob", input_match="src", min=2)
    assert (v.passed, v.explanation) == (
        False,
        "Glob called 2x, the input of 1 matched /src/ (expected 2..∞); "
        'Glob@0 input: {"pattern":"**/*.md"}',
    )
    many = [ToolCall("Skill", {"skill": f"s{i}", "pad": "x" * 200}) for i in range(3)]
    v = _grade("tool_used", calls=many, tool="Skill", input_match="nothing")
    assert v.explanation.startswith(
        "Skill called 3x, but no call's input matched /nothing/ (expected 1..∞); Skill@0 input: "
    )
    assert v.explanation.endswith("… (and 2 more that did not match)")  # the input is cut
    assert len(v.explanation) < 260


def test_tool_used_input_match_keeps_the_plain_words_when_nothing_was_left_out() -> None:
    v = _grade("tool_used", tool="Write", input_match="x")
    assert v.explanation == "Write called 0x (expected 1..∞)"
    v = _grade("tool_used", tool="Glob", input_match="pattern", max=1)
    assert (v.passed, v.explanation) == (False, "Glob called 2x (expected 1..1)")


def test_input_text_mirrors_json_stringify() -> None:
    assert js_json({"a": 1.0, "b": "é", "c": [1, 2.5], "d": None}) == (
        '{"a":1,"b":"é","c":[1,2.5],"d":null}'
    )
    v = _grade("tool_used", tool="Bash", input_match='"timeout":1}')
    assert v.passed is True


def test_tool_used_input_match_uses_javascript_syntax() -> None:
    v = _grade("tool_used", tool="Read", input_match=r"(?<=\")CHANGELOG\.md")
    assert v.passed is True


def test_tool_used_bad_options() -> None:
    assert _grade("tool_used").explanation == (
        'grader threw: a tool_used grader needs a non-empty "tool" (got null)'
    )
    v = _grade("tool_used", tool="Glob", min="two")
    assert v.explanation == 'grader threw: a tool_used grader\'s "min" must be a number (got "two")'
    bad = _grade("tool_used", tool="Glob", input_match="[")
    assert bad.explanation.startswith("grader threw: Invalid regular expression")


# -- tool_order -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "passed", "explanation"),
    [
        ("Glob", "Read", True, "Glob@0 precedes Read@2"),
        ("Read", "Glob", False, "Read@2 does NOT precede Glob@0"),
        ("Glob", "Glob", False, "Glob@0 does NOT precede Glob@0"),
        ("Grep", "Read", False, '"before" tool Grep never called'),
        ("Read", "Grep", False, '"after" tool Grep never called'),
        ("Grep", "Write", False, '"before" tool Grep never called'),
        (
            {"tool": "Glob", "input_match": "src"},
            "Read",
            False,
            "Glob@3 does NOT precede Read@2",
        ),
        ("Read", {"tool": "Glob", "input_match": "src"}, True, "Read@2 precedes Glob@3"),
        (
            {"tool": "Glob", "input_match": "nothing"},
            "Read",
            False,
            '"before" tool Glob never called',
        ),
    ],
)
def test_tool_order(before: Any, after: Any, passed: bool, explanation: str) -> None:
    v = _grade("tool_order", before=before, after=after)
    assert (v.passed, v.explanation) == (passed, explanation)


def test_tool_order_bad_side() -> None:
    v = _grade("tool_order", before=3, after="Read")
    assert v.explanation.startswith('grader threw: a tool_order grader\'s "before" must be')


# -- expect_tool_success ----------------------------------------------------------------------


def test_expect_tool_success() -> None:
    ok = [ToolCall("get_weather", {}, "sunny"), ToolCall("mcp__wx__get_weather", {}, "rain")]
    v = _grade("expect_tool_success", calls=ok, tool="get_weather")
    assert (v.passed, v.explanation) == (True, "get_weather succeeded (2 of 2 calls)")

    failed = [*ok, ToolCall("get_weather", {}, "HTTP 500\nupstream", is_error=True)]
    v = _grade("expect_tool_success", calls=failed, tool="get_weather")
    assert (v.passed, v.explanation) == (
        False,
        "get_weather failed in 1 of 3 calls: HTTP 500 upstream",
    )

    v = _grade("expect_tool_success", calls=[ToolCall("weather", {})], tool="get_weather")
    assert (v.passed, v.explanation) == (False, "get_weather never called")


def test_expect_tool_success_does_not_match_a_mere_suffix() -> None:
    v = _grade(
        "expect_tool_success", calls=[ToolCall("mcp__x__not_get_weather")], tool="get_weather"
    )
    assert v.passed is False


# -- a Skill call that did not load the skill ---------------------------------------------------

UNKNOWN = "<tool_use_error>Unknown skill: math-olympiad:math-olympiad</tool_use_error>"


def test_a_failed_skill_call_still_counts_and_says_it_did_not_load() -> None:
    failed = ToolCall("Skill", {"skill": "math-olympiad:math-olympiad"}, UNKNOWN, True)
    verdict = _grade("tool_used", [failed], tool="Skill")
    assert verdict.passed is True  # the reference counts the call
    assert verdict.explanation == (
        "Skill called 1x (expected 1..∞) — the skill did not load: "
        "Unknown skill: math-olympiad:math-olympiad"
    )


def test_one_failed_skill_call_of_two_is_told() -> None:
    calls = [
        ToolCall("Skill", {"skill": "a"}, "Launching skill: a"),
        ToolCall(
            "Skill", {"skill": "b"}, "<tool_use_error>Unknown skill: b\n\n</tool_use_error>", True
        ),
    ]
    verdict = _grade("tool_used", calls, tool="Skill", min=0, max=0)
    assert verdict.passed is False
    assert verdict.explanation == (
        "Skill called 2x (expected 0..0) — the skill did not load (1 of 2 calls): Unknown skill: b"
    )


def test_a_failed_call_of_another_tool_is_not_a_skill_load() -> None:
    calls = [ToolCall("Bash", {"command": "x"}, "boom", True)]
    assert _grade("tool_used", calls, tool="Bash").explanation == "Bash called 1x (expected 1..∞)"


def test_a_long_error_text_is_bounded() -> None:
    from pytest_plugin_evals.model import TOOL_ERROR_LIMIT, brief_tool_calls

    (brief,) = brief_tool_calls([ToolCall("Skill", {}, "e" * 5000, True)])
    assert brief.error is not None and len(brief.error) == TOOL_ERROR_LIMIT
    assert brief.error.endswith("…")
    (ok,) = brief_tool_calls([ToolCall("Skill", {}, "Launching skill: a")])
    assert ok.error is None  # a call that worked keeps no output
