"""Failures that explain themselves, piece by piece: the tool calls a run keeps, their wire
form, the failure text of a run, the HTML report's list of calls, and every problem of a case
file gathered into one load error."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_plugin_evals.model import (
    TOOL_CALLS_KEPT,
    TOOL_INPUT_LIMIT,
    Case,
    GraderSpec,
    LoadError,
    RunResult,
    ToolCall,
    ToolCallBrief,
    brief_tool_calls,
)
from pytest_plugin_evals.records import LoadErrorRecord, RecordError, run_from_json, run_to_json
from pytest_plugin_evals.reporting.failures import FAILURE_ANSWER_LIMIT, failure_message
from pytest_plugin_evals.reporting.html import render_html
from pytest_plugin_evals.suites import directory
from pytest_plugin_evals.suites.validate import LoadErrors, Problems, Spot, check_keys
from tests.helpers import run_record, summary, write_tree

# -- the calls a run keeps ---------------------------------------------------------------------


def test_a_run_keeps_its_first_calls_with_compact_cut_inputs() -> None:
    calls = [ToolCall("Read", {"file_path": f"f{i}.md", "n": 1.5}) for i in range(70)]
    calls[1] = ToolCall("Bash", {"command": "x" * 1000}, "boom", is_error=True)
    calls[2] = ToolCall("Odd", {"when": Path("/tmp/é")})  # not JSON: shown as its text
    kept = brief_tool_calls(calls)
    assert len(kept) == TOOL_CALLS_KEPT == 50
    assert kept[0] == ToolCallBrief("Read", '{"file_path":"f0.md","n":1.5}', False)
    assert kept[1].is_error is True and kept[1].name == "Bash"
    assert len(kept[1].input) == TOOL_INPUT_LIMIT and kept[1].input.endswith("x…")
    assert kept[2].input == '{"when":"/tmp/é"}'
    assert brief_tool_calls([]) == ()


def test_the_calls_cross_the_wire_and_old_documents_still_read() -> None:
    result = RunResult(
        arm="with",
        run=1,
        tool_calls=3,
        tool_call_list=(ToolCallBrief("Read", "{}"), ToolCallBrief("Bash", '{"c":1}', True)),
    )
    doc = run_to_json(result)
    assert doc["toolCalls"] == 3  # the count, as before
    assert doc["toolCallList"] == [
        {"name": "Read", "input": "{}", "isError": False},
        {"name": "Bash", "input": '{"c":1}', "isError": True},
    ]
    assert run_from_json(json.loads(json.dumps(doc))) == result
    del doc["toolCallList"]  # a document written before the field
    assert run_from_json(doc).tool_call_list == ()
    assert run_from_json({**doc, "toolCallList": [None, {"name": "X"}]}).tool_call_list == (
        ToolCallBrief("X", ""),
    )
    for wrong in ("oops", [3, {"name": "X"}], [{"name": 3}]):  # refused, not guessed at
        with pytest.raises(RecordError, match=r"^a run does not have the shape .*toolCallList"):
            run_from_json({**doc, "toolCallList": wrong})


# -- the failure text of a run -----------------------------------------------------------------


def test_a_failure_says_when_there_were_no_calls_and_no_answer() -> None:
    lines = failure_message(RunResult(arm="with", run=2)).splitlines()
    assert lines == ["score 0.00 (run 2, with arm)", "tool calls: none", "answer: (empty)"]


def test_a_failure_lists_the_kept_calls_and_counts_the_rest() -> None:
    kept = tuple(
        ToolCallBrief(f"T{i}", "{}" if i else '{"a":"' + "y" * 290 + '"}') for i in range(50)
    )
    message = failure_message(
        RunResult(arm="single", run=1, tool_calls=52, tool_call_list=kept, answer="short")
    )
    lines = message.splitlines()
    assert lines[1] == "tool calls (52):"
    assert lines[2] == '  @0 T0 {"a":"' + "y" * 193 + "…"  # cut for the terminal at 200
    assert lines[51] == "  @49 T49 {}"
    assert lines[52:] == ["  [… 2 more not listed]", "answer (5 characters):", "  short"]


def test_a_failure_shows_the_start_of_a_long_answer() -> None:
    answer = "line\r\n" * 10 + "z" * 3000
    lines = failure_message(RunResult(arm="with", run=1, answer=answer)).splitlines()
    start = lines.index(f"answer ({len(answer):,} characters):")
    assert lines[start + 1 : start + 11] == ["  line"] * 10
    assert lines[start + 11] == "  " + "z" * (FAILURE_ANSWER_LIMIT - 60)
    assert lines[-1] == f"  [… cut: the first 1,500 of {len(answer):,} characters shown]"
    cut = dataclasses.replace(
        RunResult(arm="with", run=1), answer="a" * 4000, answer_truncated=True
    )
    assert failure_message(cut).splitlines()[-1] == (
        "  [… cut: the first 1,500 of 4,000+ characters shown]"
    )


# -- the HTML report ---------------------------------------------------------------------------


def test_the_html_report_lists_each_runs_tool_calls() -> None:
    root = Path("/suite/evals")
    case = Case(
        "c", "Hi", "prose", root / "c" / "prompt.md", root / "c", root, (GraderSpec("g", "regex"),)
    )
    base = run_record(case, "single", 1, two_arm=False, score=0.0)
    calls = (ToolCallBrief("Read", '{"f":"<b>"}'), ToolCallBrief("<i>Bash", "{}", True))
    with_calls = dataclasses.replace(
        base, result=dataclasses.replace(base.result, tool_calls=53, tool_call_list=calls)
    )
    page = render_html(summary([with_calls], ablation="none"))
    assert '<h5>Tool calls (53)</h5><ol start="0"' in page
    assert "<li><code>Read</code> {&#34;f&#34;:&#34;&lt;b&gt;&#34;}</li>" in page
    assert (
        '<span class="bad">✗</span> <code>&lt;i&gt;Bash</code> {} <span class="badge fail">' in page
    )
    assert "… 51 more not listed" in page
    none = render_html(summary([base], ablation="none"))
    assert "No tool calls." in none and "Tool calls (" not in none


def test_the_html_report_puts_each_problem_of_a_case_file_on_its_own_line() -> None:
    error = LoadErrorRecord(
        "evals/c::c", "/s/evals/c/case.yaml", 3, "unknown key\nc/case.yaml:4: runs <b>", "/s/evals"
    )
    page = render_html(summary([error], ablation="none"))
    assert "<li>/s/evals/c/case.yaml:3: unknown key<br>c/case.yaml:4: runs &lt;b&gt;</li>" in page


# -- every problem of a case at once -----------------------------------------------------------


def load_error(tmp_path: Path, files: dict[str, str]) -> LoadError:
    folder = tmp_path / "evals" / "c"
    write_tree(folder, files)
    with pytest.raises(LoadError) as info:
        directory.load_case(folder, folder.parent)
    return info.value


def rendered(error: LoadError, tmp_path: Path) -> list[str]:
    return error.render(tmp_path / "evals").splitlines()


def test_every_problem_of_a_prompt_md_case_is_one_load_error(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        {
            "prompt.md": "---\nruns: 0\nretries: 2\nretry_delay: 1\ntags: solo\n---\nSay hi\n",
            "graders/a.md": "---\ntype: regex\npattern: hi\n---\n",
            "graders/b.md": "---\ntype: regex\npattern: '(unclosed'\n---\n",
            "graders/c.md": "no frontmatter\n",
            "graders/d.md": "---\ntype: regex\nname: a\npattern: hi\n---\n",
        },
    )
    assert isinstance(error, LoadErrors)
    lines = rendered(error, tmp_path)
    assert [line.split(": ", 1)[0] for line in lines] == [
        "c/graders/b.md:3",
        "c/graders/c.md:1",
        "c/graders/d.md:1",
        "c/prompt.md:2",
        "c/prompt.md:3",
        "c/prompt.md:4",
        "c/prompt.md:5",
    ]
    assert lines[0].startswith('c/graders/b.md:3: invalid pattern "(unclosed"')
    assert lines[1].startswith("c/graders/c.md:1: a grader file must start with a frontmatter")
    assert lines[2] == 'c/graders/d.md:1: duplicate grader name "a" (also defined in a.md)'
    assert lines[3] == "c/prompt.md:2: runs must be a whole number from 1 to 50 (got 0)"
    assert lines[4].startswith('c/prompt.md:3: unknown frontmatter key "retries"')
    assert lines[5].startswith('c/prompt.md:4: unknown frontmatter key "retry_delay"')
    assert lines[6] == "c/prompt.md:5: tags must be a list of strings (got a string)"
    # The first problem is the error's own place; the message holds the rest, one a line.
    assert (error.path.name, error.line) == ("b.md", 3)
    assert error.message.split("\n")[1:] == lines[1:]


def test_a_case_with_one_problem_is_the_one_line_it_always_was(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        {
            "prompt.md": "---\nruns: 0\n---\nSay hi\n",
            "graders/a.md": "---\ntype: regex\npattern: hi\n---\n",
        },
    )
    assert type(error) is LoadError
    assert rendered(error, tmp_path) == [
        "c/prompt.md:2: runs must be a whole number from 1 to 50 (got 0)"
    ]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # A file that cannot be read says so, and only so: no "no prompt", no "no graders".
        ({"case.yaml": "name: [unclosed\n"}, ["c/case.yaml:1: invalid YAML: *"]),
        ({"prompt.md": "---\nruns: [1\n---\nHi\n"}, ["c/prompt.md:2: invalid YAML frontmatter: *"]),
        # The only grader is broken: it is the problem, not "the case has no graders".
        (
            {"prompt.md": "Hi\n", "graders/g.md": "---\npattern: hi\n---\n"},
            ['c/graders/g.md:2: frontmatter must include "type:" *'],
        ),
        # A newer schema is the one problem: the rest is written for it.
        (
            {"case.yaml": 'schema_version: "2.0"\nname: c\nfuture_key: 1\n'},
            ['c/case.yaml:1: schema_version "2.0" requires a newer pytest-plugin-evals *'],
        ),
        # Missing the prompt and the graders: both said, once each.
        (
            {"case.yaml": 'schema_version: "1.1"\nname: c\nextra: 1\n'},
            [
                "c/case.yaml: execution.prompt is required *",
                "c/case.yaml: the case has no graders *",
                'c/case.yaml:3: unknown key "extra" *',
            ],
        ),
    ],
)
def test_a_problem_is_not_repeated_in_other_words(
    tmp_path: Path, files: dict[str, str], expected: list[str]
) -> None:
    from fnmatch import fnmatchcase

    lines = rendered(load_error(tmp_path, files), tmp_path)
    assert len(lines) == len(expected), lines
    for line, pattern in zip(lines, expected, strict=True):
        assert fnmatchcase(line, pattern), (line, pattern)


def test_check_keys_names_every_unknown_key(tmp_path: Path) -> None:
    spot = Spot(tmp_path / "c" / "case.yaml", prefix="graders[0].")
    with pytest.raises(LoadErrors) as info:
        check_keys({"type": 1, "flag": 2, "mode": 3}, spot, ("type",), "key")
    assert [p.message for p in info.value.problems] == [
        'unknown key "graders[0].flag" (expected one of: type)',
        'unknown key "graders[0].mode" (expected one of: type)',
    ]
    with pytest.raises(LoadError) as one:
        check_keys({"flag": 2}, spot, ("type",), "key")
    assert type(one.value) is LoadError


def test_problems_gather_flatten_and_order_by_file_and_line(tmp_path: Path) -> None:
    problems = Problems()
    problems.raise_any(tmp_path)  # none: nothing raised
    assert problems.check("default", str, "fine") == "fine"
    problems.add(LoadError(tmp_path / "c" / "b.md", "late", 9))
    nested = LoadErrors(
        [
            LoadError(tmp_path / "c" / "a.md", "two", 2),
            LoadError(tmp_path / "c" / "a.md", "one", 1),
        ],
        tmp_path / "c",
    )
    assert problems.check("fallback", _raise, nested) == "fallback"
    assert len(problems) == 3
    with pytest.raises(LoadErrors) as info:
        problems.raise_any(tmp_path / "c")
    assert info.value.render(tmp_path).splitlines() == [
        "c/a.md:1: one",
        "c/a.md:2: two",
        "c/b.md:9: late",
    ]


def _raise(error: LoadError) -> str:
    raise error
