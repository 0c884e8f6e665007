"""graders/*.md files: the six types, their defaults, strict keys and load errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin_evals.model import GraderSpec, LoadError
from pytest_plugin_evals.suites import directory


def make_case(tmp_path: Path, graders: dict[str, str], extra: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "evals" / "c"
    files = {
        "prompt.md": "Hi\n",
        **{f"graders/{n}": t for n, t in graders.items()},
        **(extra or {}),
    }
    for name, text in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder


def grader(tmp_path: Path, text: str, name: str = "g.md") -> GraderSpec:
    folder = make_case(tmp_path, {name: text})
    (spec,) = directory.load_case(folder, folder.parent).graders
    return spec


def error(tmp_path: Path, text: str, name: str = "g.md") -> LoadError:
    folder = make_case(tmp_path, {name: text})
    with pytest.raises(LoadError) as info:
        directory.load_case(folder, folder.parent)
    assert info.value.path == folder / "graders" / name
    return info.value


def test_regex_defaults_and_body_pattern(tmp_path: Path) -> None:
    spec = grader(tmp_path, "---\ntype: regex\n---\n\n  (?<city>Paris)\n", "answer.md")
    assert spec.name == "answer"
    assert spec.type == "regex"
    assert spec.config == {
        "target": "last_message",
        "pattern": "(?<city>Paris)",
        "flags": "",
        "match": "contains",
    }
    assert spec.weight == 1.0 and spec.arm is None and spec.criteria is None
    assert spec.path is not None and spec.path.endswith("graders/answer.md")
    assert spec.line == 1


def test_regex_options(tmp_path: Path) -> None:
    text = (
        "---\nname: Shown\ntype: regex\npattern: 'a\\d+'\nflags: gi\nmatch: 'count:2'\n"
        "target: {source: file, path: out/report.md}\nweight: 0.5\narm: with-only\n---\nignored\n"
    )
    spec = grader(tmp_path, text)
    assert spec.name == "Shown"
    assert spec.config == {
        "target": {"source": "file", "path": "out/report.md"},
        "pattern": "a\\d+",
        "flags": "gi",
        "match": "count:2",
    }
    assert spec.weight == 0.5 and spec.arm == "with-only"


@pytest.mark.parametrize("target", ["last_message", "trace", "files", "mock_calls"])
def test_regex_targets(tmp_path: Path, target: str) -> None:
    spec = grader(
        tmp_path, f"---\ntype: regex\npattern: x\ntarget: {target}\nmatch: not_contains\n---\n"
    )
    assert spec.config["target"] == target and spec.config["match"] == "not_contains"


def test_tool_used_defaults(tmp_path: Path) -> None:
    spec = grader(tmp_path, "---\ntype: tool_used\ntool: Skill\n---\n", "skill-fired.md")
    assert spec.name == "skill-fired"
    assert spec.config == {"tool": "Skill", "input_match": None, "min": 1, "max": None}


def test_tool_used_options(tmp_path: Path) -> None:
    text = (
        "---\ntype: tool_used\ntool: Skill\n"
        'input_match: \'"skill"\\s*:\\s*"(?:[\\w-]+:)?my-skill"\'\nmin: 0\nmax: 0\narm: both\n---\n'
    )
    spec = grader(tmp_path, text)
    assert spec.config == {
        "tool": "Skill",
        "input_match": '"skill"\\s*:\\s*"(?:[\\w-]+:)?my-skill"',
        "min": 0,
        "max": 0,
    }
    assert spec.arm == "both"


def test_tool_order(tmp_path: Path) -> None:
    text = "---\ntype: tool_order\nbefore: Glob\nafter: {tool: Read, input_match: 'notes'}\n---\n"
    spec = grader(tmp_path, text)
    assert spec.config == {"before": "Glob", "after": {"tool": "Read", "input_match": "notes"}}


def test_file_exists_defaults(tmp_path: Path) -> None:
    spec = grader(tmp_path, "---\ntype: file_exists\npath: 'out/*.md'\n---\n")
    assert spec.config == {"path": "out/*.md", "exists": True}
    spec = grader(tmp_path, "---\ntype: file_exists\npath: x\nexists: false\n---\n")
    assert spec.config == {"path": "x", "exists": False}


def test_llm_body_is_criteria(tmp_path: Path) -> None:
    spec = grader(tmp_path, "---\ntype: llm\nweight: 2\n---\n\nPASS if short.\nFAIL otherwise.\n")
    assert spec.criteria == "PASS if short.\nFAIL otherwise."
    assert spec.config == {"criteria": "PASS if short.\nFAIL otherwise.", "focus": "last_message"}
    assert spec.weight == 2.0
    assert spec.paid


def test_llm_criteria_key_wins_and_focus(tmp_path: Path) -> None:
    text = "---\ntype: llm\ncriteria: from key\nfocus: {source: file, path: notes.md}\n---\nbody\n"
    spec = grader(tmp_path, text)
    assert spec.criteria == "from key"
    assert spec.config["focus"] == {"source": "file", "path": "notes.md"}


def test_baseline(tmp_path: Path) -> None:
    spec = grader(tmp_path, "---\ntype: baseline\nbaseline_file: base.jsonl\n---\nAs good.\n")
    assert spec.config == {"baseline_file": "base.jsonl", "criteria": "As good."}
    assert spec.criteria == "As good."


def test_graders_sorted_by_filename_and_non_md_ignored(tmp_path: Path) -> None:
    folder = make_case(
        tmp_path,
        {
            "b.md": "---\ntype: regex\n---\nb\n",
            "A.md": "---\ntype: regex\n---\nA\n",
            "a.md": "---\ntype: regex\n---\na\n",
            "notes.txt": "not a grader",
        },
    )
    loaded = directory.load_case(folder, folder.parent)
    assert [g.name for g in loaded.graders] == ["A", "a", "b"]


# -- errors ------------------------------------------------------------------------------------


def test_grader_without_type(tmp_path: Path) -> None:
    err = error(tmp_path, "---\ntool: Skill\n---\n")
    assert err.message == (
        'frontmatter must include "type:" (regex | tool_order | tool_used | file_exists | llm | '
        "baseline)"
    )


def test_grader_without_frontmatter(tmp_path: Path) -> None:
    err = error(tmp_path, "PASS if the answer is right.\n")
    assert err.message == (
        'a grader file must start with a frontmatter block ("---" lines) that sets type:'
    )
    assert err.line == 1


def test_grader_unknown_type(tmp_path: Path) -> None:
    err = error(tmp_path, "---\ntype: script\n---\n")
    assert err.message == (
        "type must be one of regex, tool_order, tool_used, file_exists, llm, baseline "
        '(got "script")'
    )
    assert err.line == 2


def test_grader_bad_yaml(tmp_path: Path) -> None:
    err = error(tmp_path, "---\ntype: regex\npattern: [x\n---\n")
    assert err.message.startswith("invalid YAML frontmatter: ")


def test_grader_unknown_key(tmp_path: Path) -> None:
    err = error(tmp_path, "---\ntype: regex\npattern: x\ncase_sensitive: true\n---\n")
    assert err.message == (
        'unknown key "case_sensitive" for a regex grader '
        "(expected one of: name, type, weight, arm, pattern, flags, match, target)"
    )
    assert err.line == 4


@pytest.mark.parametrize(
    ("body", "message", "line"),
    [
        ("type: regex\npattern: x\nweight: 0", "weight must be a number above 0 (got 0)", 4),
        (
            "type: regex\npattern: x\nweight: .inf",
            "weight must be a finite number above 0 (got inf)",
            4,
        ),
        (
            "type: regex\npattern: x\nweight: -.inf",
            "weight must be a finite number above 0 (got -inf)",
            4,
        ),
        (
            "type: regex\npattern: x\nweight: .nan",
            "weight must be a finite number above 0 (got nan)",
            4,
        ),
        (
            'type: regex\npattern: x\nname: "ok\\u202Egnp.exe"',
            'name "ok\\u202egnp.exe" holds a bidirectional control (U+202E): a name must be '
            "printable text",
            4,
        ),
        ("type: regex\npattern: x\nweight: -1", "weight must be a number above 0 (got -1)", 4),
        (
            "type: regex\npattern: x\nweight: heavy",
            'weight must be a number above 0 (got "heavy")',
            4,
        ),
        (
            "type: regex\npattern: x\narm: without-only",
            'arm must be "with-only" or "both" (got "without-only")',
            4,
        ),
        (
            "type: regex\npattern: x\nmatch: maybe",
            'match must be contains, not_contains or count:N (got "maybe")',
            4,
        ),
        (
            "type: regex\npattern: x\nmatch: 'count:'",
            'match must be contains, not_contains or count:N (got "count:")',
            4,
        ),
        (
            "type: regex\npattern: x\ntarget: stdout",
            "target must be last_message, trace, files, mock_calls or {source: file, path: <path>} "
            '(got "stdout")',
            4,
        ),
        (
            "type: regex\npattern: x\ntarget: {source: dir}",
            "target must be last_message, trace, files, mock_calls or {source: file, path: <path>} "
            "(got a mapping)",
            4,
        ),
        (
            "type: regex\npattern: x\nflags: q",
            "flags must be JS RegExp flags, each at most once (d g i m s u v y), got 'q'",
            4,
        ),
        (
            "type: regex\npattern: '[abc'",
            'invalid pattern "[abc": Invalid regular expression: unexpected end',
            3,
        ),
        (
            "type: regex\npattern: '(?i)paris'",
            'invalid pattern "(?i)paris": Invalid regular expression: invalid group',
            3,
        ),
        (
            "type: tool_used\ntool: Skill\ninput_match: 'a('",
            "invalid input_match \"a(\": Invalid regular expression: expecting ')'",
            4,
        ),
        ("type: tool_used", "tool is required", 2),
        (
            "type: tool_used\ntool: Skill\nmin: -1",
            "min must be a whole number of at least 0 (got -1)",
            4,
        ),
        (
            "type: tool_used\ntool: Skill\nmin: 3\nmax: 1",
            "max (1) is below min (3), so the grader can never pass",
            5,
        ),
        (
            "type: tool_order\nbefore: Glob\nafter: {tool: Read, input_match: '('}",
            "invalid after.input_match \"(\": Invalid regular expression: expecting ')'",
            4,
        ),
        (
            "type: tool_order\nbefore: Glob",
            "after is required (a tool name, or {tool, input_match})",
            2,
        ),
        ("type: file_exists\npath: x\nexists: 'no'", 'exists must be true or false (got "no")', 4),
        ("type: file_exists", "path is required (a glob of files the run creates)", 2),
        ("type: llm", "criteria is required (criteria:, or the grader file's body)", 2),
        ("type: llm\nfocus: stdout\ncriteria: x", "focus must be last_message", 3),
        (
            "type: baseline\nbaseline_file: ../other/base.jsonl\ncriteria: x",
            'baseline_file path "../other/base.jsonl" escapes the case directory',
            3,
        ),
        ("type: regex", "pattern is required (pattern:, or the grader file's body)", 2),
        ("type: regex\nname: ''\npattern: x", "name must not be empty", 3),
    ],
)
def test_grader_value_errors(tmp_path: Path, body: str, message: str, line: int) -> None:
    err = error(tmp_path, f"---\n{body}\n---\n")
    assert err.message.startswith(message)
    assert err.line == line


def test_bad_body_pattern_reports_the_body_line(tmp_path: Path) -> None:
    err = error(tmp_path, "---\ntype: regex\n---\n\n[abc\n", "answer.md")
    assert err.message == 'invalid pattern "[abc": Invalid regular expression: unexpected end'
    assert err.line == 5
    assert err.render(tmp_path).endswith(
        'evals/c/graders/answer.md:5: invalid pattern "[abc": Invalid regular expression: '
        "unexpected end"
    )


def test_duplicate_name_between_files(tmp_path: Path) -> None:
    folder = make_case(
        tmp_path,
        {"a.md": "---\ntype: regex\n---\na\n", "b.md": "---\ntype: regex\nname: a\n---\nb\n"},
    )
    with pytest.raises(LoadError) as info:
        directory.load_case(folder, folder.parent)
    assert info.value.message == 'duplicate grader name "a" (also defined in a.md)'
    assert info.value.path == folder / "graders" / "b.md"


def test_every_problem_of_one_grader_at_once(tmp_path: Path) -> None:
    """The schema reports each wrong key of a grader, each at its own line (the old checks
    stopped at the first)."""
    text = "---\ntype: tool_used\ntool: 7\nweight: heavy\nmin: -1\ncolour: red\n---\n"
    err = error(tmp_path, text)
    shown = err.render(tmp_path).splitlines()
    assert shown == [
        "evals/c/graders/g.md:3: tool must be a string (got a number)",
        'evals/c/graders/g.md:4: weight must be a number above 0 (got "heavy")',
        "evals/c/graders/g.md:5: min must be a whole number of at least 0 (got -1)",
        'evals/c/graders/g.md:6: unknown key "colour" for a tool_used grader '
        "(expected one of: name, type, weight, arm, tool, input_match, min, max)",
    ]


def test_unknown_grader_key_suggests_the_nearest_known_one(tmp_path: Path) -> None:
    err = error(tmp_path, "---\ntype: tool_used\ntool: Skill\ninput_mach: x\n---\n")
    assert err.message == (
        'unknown key "input_mach" for a tool_used grader — did you mean input_match? '
        "(expected one of: name, type, weight, arm, tool, input_match, min, max)"
    )
    assert err.line == 4


@pytest.mark.parametrize(
    ("body", "message", "line"),
    [
        (
            "---\ntype: regex\n---\n\n(?i)paris\n",
            'invalid pattern "(?i)paris": Invalid regular expression: invalid group — '
            "JavaScript patterns have no inline flags: remove `(?i)` and set `flags: i`",
            5,
        ),
        (
            "---\ntype: regex\npattern: '(?ms)a.b'\n---\n",
            'invalid pattern "(?ms)a.b": Invalid regular expression: invalid group — '
            "JavaScript patterns have no inline flags: remove `(?ms)` and set `flags: ms`",
            3,
        ),
        (
            "---\ntype: tool_used\ntool: Skill\ninput_match: '(?i)release'\n---\n",
            'invalid input_match "(?i)release": Invalid regular expression: invalid group — '
            "JavaScript patterns have no inline flags: remove `(?i)` (input_match takes no flags)",
            4,
        ),
    ],
)
def test_inline_flags_suggest_flags(tmp_path: Path, body: str, message: str, line: int) -> None:
    err = error(tmp_path, body)
    assert err.message == message
    assert err.line == line


def test_a_grader_file_named_with_a_control_character(tmp_path: Path) -> None:
    err = error(tmp_path, "---\ntype: llm\n---\nPASS if polite\n", "bad\x07.md")
    assert err.message == (
        'name "bad\\u0007" holds a control character (U+0007): a name must be printable text'
    )
    assert err.line == 1
