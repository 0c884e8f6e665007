"""evals.json suites (``{"cases": [{name, prompt, expect}]}``) and the suite-file dispatcher."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_plugin_evals.model import Case, LoadError
from pytest_plugin_evals.suites.suite_file import load_suite_file
from tests.helpers import SYNTIC_SEED_SUITE


def suite(tmp_path: Path, doc: object, name: str = "evals.json") -> Path:
    path = tmp_path / "plugin" / "evals" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2), encoding="utf-8")
    return path


def cases(path: Path) -> list[Case | LoadError]:
    return load_suite_file(path, path.parent)


def test_seed_suite(tmp_path: Path) -> None:
    path = suite(tmp_path, SYNTIC_SEED_SUITE)
    first, second, third = cases(path)
    assert isinstance(first, Case) and isinstance(second, Case) and isinstance(third, Case)
    assert first.name == "suggests the next version"
    assert first.prompt.startswith("We fixed two bugs")
    assert first.source == "evals_json"
    assert first.runs == 1
    assert first.path == path and first.dir == path.parent and first.suite_root == path.parent
    assert [(g.name, g.type, g.config) for g in first.graders] == [
        ('contains "1.4.1"', "contains", {"value": "1.4.1"}),
        ('does not contain "2.0.0"', "not_contains", {"value": "2.0.0"}),
    ]
    assert [(g.name, g.type, g.config) for g in second.graders] == [
        ('contains "changelog"', "contains", {"value": "changelog"}),
        ('contains "tag"', "contains", {"value": "tag"}),
        ("at least 80 characters", "min_chars", {"min": 80}),
    ]
    assert third.graders == ()
    assert not any(g.paid for c in (first, second) for g in c.graders)


def test_case_and_check_lines(tmp_path: Path) -> None:
    path = suite(tmp_path, SYNTIC_SEED_SUITE)
    first, second, third = cases(path)
    text = path.read_text().splitlines()
    assert isinstance(first, Case) and isinstance(second, Case) and isinstance(third, Case)
    assert (first.line, second.line, third.line) == (3, 15, 26)
    assert text[3 - 1].strip() == "{"
    assert '"name": "answers something"' in text[26]
    assert [g.line for g in second.graders] == [20, 21, 23]
    assert [text[(g.line or 0) - 1].strip() for g in second.graders] == [
        '"changelog",',
        '"tag"',
        '"min_chars": 80',
    ]


def test_other_fields_are_ignored(tmp_path: Path) -> None:
    doc = {"version": 2, "cases": [{"name": "a", "prompt": "p", "owner": "me", "expect": {}}]}
    (loaded,) = cases(suite(tmp_path, doc))
    assert isinstance(loaded, Case) and loaded.graders == ()


def test_bad_case_is_one_error_and_the_others_still_load(tmp_path: Path) -> None:
    doc = {
        "cases": [
            {"name": "good", "prompt": "p"},
            {"name": "no prompt"},
            {"name": "bad expect", "prompt": "p", "expect": {"contain": ["x"]}},
            {"name": "bad min", "prompt": "p", "expect": {"min_chars": -1}},
            {"name": "bad contains", "prompt": "p", "expect": {"contains": "x"}},
            "just a string",
            {"name": "good", "prompt": "again"},
            {"prompt": "nameless"},
        ]
    }
    found = cases(suite(tmp_path, doc))
    assert isinstance(found[0], Case)
    errors = found[1:]
    assert all(isinstance(e, LoadError) for e in errors)
    assert [(e.message, e.line) for e in errors] == [  # type: ignore[union-attr]
        ("cases[1].prompt is required", 7),
        (
            'unknown key "cases[2].expect.contain" — did you mean contains? '
            "(expected one of: contains, not_contains, "
            "min_chars)",
            14,
        ),
        ("cases[3].expect.min_chars must be a whole number of at least 0 (got -1)", 23),
        ("cases[4].expect.contains must be a list of strings (got a string)", 30),
        ("cases[5] must be a mapping (got a string)", 33),
        ('duplicate case name "good" (first used on line 3)', 35),
        ("cases[7].name is required", 38),
    ]


def test_whole_file_errors(tmp_path: Path) -> None:
    with pytest.raises(LoadError) as info:
        cases(suite(tmp_path, '{\n  "cases": [\n    {"name": "a",}\n  ]\n}'))
    assert info.value.message.startswith("invalid JSON: ")
    assert info.value.line == 3
    with pytest.raises(LoadError, match=r"cases must be a list \(got a mapping\)"):
        cases(suite(tmp_path, {"cases": {"a": 1}}))
    with pytest.raises(LoadError, match=r"a suite must be a mapping with a cases: list"):
        cases(suite(tmp_path, [1, 2]))


def test_mixed_formats_in_one_file_are_an_error(tmp_path: Path) -> None:
    doc = {"cases": [{"name": "a", "prompt": "p"}, {"name": "b", "input": "i"}]}
    with pytest.raises(LoadError, match='mix "prompt"'):
        cases(suite(tmp_path, doc))


def test_yaml_file_with_prompt_cases_is_evals_json_format(tmp_path: Path) -> None:
    text = "cases:\n  - name: a\n    prompt: hi\n    expect:\n      contains: [x]\n"
    (loaded,) = cases(suite(tmp_path, text, "smoke.yaml"))
    assert isinstance(loaded, Case)
    assert loaded.source == "evals_json"
    assert loaded.line == 2
    assert [g.line for g in loaded.graders] == [5]


def test_empty_cases(tmp_path: Path) -> None:
    assert cases(suite(tmp_path, {"cases": []})) == []
