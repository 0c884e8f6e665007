"""The ``regex`` grader: matching, flags, JavaScript syntax, count:N, explanations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.graders import grade
from pytest_plugin_evals.model import Case, GraderSpec, MockCall, Transcript, Verdict


def _case(tmp_path: Path, dialect: str = "js", name: str = "write-report") -> Case:
    return Case(
        name=name,
        prompt="p",
        source="prose",
        path=tmp_path / "prompt.md",
        dir=tmp_path,
        suite_root=tmp_path,
        regex_dialect=dialect,  # type: ignore[arg-type]
    )


def _regex(
    transcript: Transcript | str, pattern: str, case: Case | None = None, **config: Any
) -> Verdict:
    if isinstance(transcript, str):
        transcript = Transcript(final_message=transcript)
    spec = GraderSpec(name="g", type="regex", config={"pattern": pattern, **config})
    return grade(spec, transcript, case=case)


def test_contains_match_names_the_pattern() -> None:
    v = _regex("The capital is Paris.", "Par[a-z]s")
    assert v.passed is True
    assert v.explanation == "matched Par[a-z]s"


@pytest.mark.parametrize(
    ("target", "label"),
    [
        ("last_message", "last_message"),
        ("trace", "trace"),
        ("files", "files"),
        ("mock_calls", "mock_calls"),
    ],
)
def test_not_found_names_the_target(target: str, label: str) -> None:
    t = Transcript(final_message="nothing", mock_calls=[])
    v = _regex(t, "absent-word", target=target)
    assert v.passed is False
    assert v.explanation == f"pattern not found in {label}"


def test_not_found_in_a_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.md").write_text("# Report\n", encoding="utf-8")
    t = Transcript(cwd=tmp_path)
    v = _regex(t, "summary", target={"source": "file", "path": "out/report.md"})
    assert v.explanation == "pattern not found in file out/report.md"
    assert v.passed is False


def test_not_contains_both_ways() -> None:
    absent = _regex("all good", "error", match="not_contains")
    assert (absent.passed, absent.explanation) == (True, "pattern absent as expected")
    found = _regex("an error here", "error", match="not_contains")
    assert (found.passed, found.explanation) == (False, "pattern found (expected absent)")


@pytest.mark.parametrize(
    ("text", "match", "passed", "explanation"),
    [
        ("a a a", "count:3", True, "found 3 matches (expected 3)"),
        ("a a a", "count:2", False, "found 3 matches (expected 2)"),
        ("bbb", "count:0", True, "found 0 matches (expected 0)"),
        ("A a", "count:1", True, "found 1 matches (expected 1)"),
    ],
)
def test_count_n(text: str, match: str, passed: bool, explanation: str) -> None:
    v = _regex(text, "a", match=match)
    assert (v.passed, v.explanation) == (passed, explanation)


def test_count_with_case_insensitive_flag_counts_both_cases() -> None:
    v = _regex("A a", "a", match="count:2", flags="i")
    assert v.passed is True


def test_count_does_not_loop_on_empty_matches() -> None:
    v = _regex("abc", "x*", match="count:4")
    assert v.explanation == "found 4 matches (expected 4)"


@pytest.mark.parametrize(
    ("pattern", "flags", "text", "passed"),
    [
        ("paris", "", "Paris", False),
        ("paris", "i", "Paris", True),
        ("^two$", "", "one\ntwo\nthree", False),
        ("^two$", "m", "one\ntwo\nthree", True),
        ("one.two", "", "one\ntwo", False),
        ("one.two", "s", "one\ntwo", True),
        ("two", "y", "one two", False),
        ("one", "y", "one two", True),
        ("one", "g", "one two", True),
        ("one", "d", "one two", True),  # match indices: no effect on matching
        ("ONE", "dgi", "one two", True),
        (r"\u{1F600}", "u", "smile 😀", True),
        (r"^.$", "u", "😀", True),
        (r"^.$", "", "😀", False),
    ],
)
def test_flags(pattern: str, flags: str, text: str, passed: bool) -> None:
    assert _regex(text, pattern, flags=flags).passed is passed


def test_g_flag_does_not_carry_state_between_gradings() -> None:
    for _ in range(3):
        assert _regex("one", "one", flags="g").passed is True


@pytest.mark.parametrize(
    ("pattern", "text", "passed"),
    [
        (r"(?<word>\w+) \k<word>", "hello hello", True),
        (r"(?<word>\w+) \k<word>", "hello world", False),
        (r"(?<=\$)\d+", "costs $42", True),
        (r"(?<=\$)\d+", "costs 42", False),
        (r"(?<!\$)\b\d+", "$42", False),
    ],
)
def test_javascript_only_syntax(pattern: str, text: str, passed: bool) -> None:
    assert _regex(text, pattern).passed is passed


def test_inline_flags_are_a_javascript_syntax_error() -> None:
    v = _regex("Paris", "(?i)paris")
    assert v.passed is False
    assert v.explanation.startswith("grader threw: Invalid regular expression: ")


def test_unterminated_class_is_reported_not_raised() -> None:
    v = _regex("x", "[a")
    assert v.passed is False
    assert v.explanation.startswith("grader threw: Invalid regular expression")


def test_python_dialect_for_python_cases(tmp_path: Path) -> None:
    v = _regex("Temperature 20", "(?i)temperature", case=_case(tmp_path, "python"))
    assert v.passed is True
    js = _regex("Temperature 20", "(?i)temperature", case=_case(tmp_path, "js"))
    assert js.explanation.startswith("grader threw: Invalid regular expression")


def test_files_target_is_created_paths_one_per_line() -> None:
    t = Transcript(files_created=["out/a.md", "out/b.md"])
    assert _regex(t, r"^out/b\.md$", target="files", flags="m").passed is True
    assert _regex(t, r"^out/a\.md$", target="files").passed is False  # two lines, no m flag


def test_mock_calls_target_reads_json_lines() -> None:
    calls = [
        MockCall("tracker", "mcp__tracker__create_issue", {"title": "Crash"}, "Created 1"),
        MockCall("tracker", "mcp__tracker__close", {"id": 1}, "no such", is_error=True),
    ]
    t = Transcript(mock_calls=calls)
    assert _regex(t, r'"title":"Crash"', target="mock_calls").passed is True
    assert _regex(t, r'"isError":true,"verdict":"ok"', target="mock_calls").passed is True
    assert _regex(t, r"create_issue.*\n.*close", target="mock_calls").passed is True


def test_mock_calls_without_mocks_fails_with_the_reason() -> None:
    v = _regex(Transcript(mock_calls=None), "x", target="mock_calls", match="not_contains")
    assert v.passed is False
    assert v.explanation == (
        "no mock stand-ins were active in this run (--eval-mocks off, or no mocks/ directory "
        "applies to this case) — a mock_calls grader has nothing to check"
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"match": "count:"}, "match must be contains | not_contains | count:N"),
        ({"match": "sometimes"}, "match must be contains | not_contains | count:N"),
        ({"target": "stdout"}, "target must be last_message | trace | files | mock_calls"),
        ({"target": {"source": "dir", "path": "x"}}, "a file target must be"),
    ],
)
def test_bad_options_become_grader_threw(config: dict[str, Any], message: str) -> None:
    v = _regex("x", "x", **config)
    assert v.passed is False
    assert v.explanation.startswith("grader threw: " + message)


def test_missing_pattern_is_a_grader_error() -> None:
    v = grade(GraderSpec("g", "regex", {}), Transcript(final_message="x"))
    assert v.passed is False
    assert v.explanation == 'grader threw: a regex grader needs a non-empty "pattern" (got null)'


LITERAL_TEXTS = ["", "aaaa", "a-b a-b", '{"name":"Skill"}\n{"name":"Skill"}', "😀x😀", "é\nÉ"]


@pytest.mark.parametrize("source", ["a", "aa", "a-b", '"name":"Skill"', "😀", "x😀", "É", "\n"])
@pytest.mark.parametrize("flags", ["", "g", "m", "s", "u", "gmsu"])
def test_literal_shortcut_agrees_with_the_engine(source: str, flags: str) -> None:
    from pytest_plugin_evals.graders.base import count, literal_text, search
    from pytest_plugin_evals.util.jsregex import compile_pattern

    pattern = compile_pattern(source, flags)
    assert literal_text(pattern) == source
    for text in LITERAL_TEXTS:
        assert search(pattern, text) is pattern.search(text), text
        assert count(pattern, text) == pattern.count(text), text


@pytest.mark.parametrize(
    ("source", "flags"),
    [("a.b", ""), ("a", "i"), ("a", "y"), ("\\d", ""), ("a{2}", "")],
)
def test_patterns_with_syntax_or_other_flags_use_the_engine(source: str, flags: str) -> None:
    from pytest_plugin_evals.graders.base import literal_text
    from pytest_plugin_evals.util.jsregex import compile_pattern

    assert literal_text(compile_pattern(source, flags)) is None
