"""``ai.evals`` in package.json: expectations, callsTool forms, names, mocks, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_plugin_evals.model import Case, LoadError
from pytest_plugin_evals.suites import discover, package_json

SEED_EVAL = {
    "input": "@todo-list Mark the posting the announcement as completed",
    "mocks": {
        "get-todos": {"todos": [{"id": "aef13ef3", "text": "Post the announcement"}]},
        "toggle-todo": {"success": "true"},
    },
    "expected": [
        {"callsTool": "get-todos"},
        {"callsTool": {"name": "toggle-todo", "arguments": {"id": "aef13ef3"}}},
        {"meetsCriteria": "Tells that item was successfully marked as completed"},
        {"includes": "completed"},
        {"matches": "\\[([^\\]]+)\\]\\(([^\\s\\)]+)\\)"},
    ],
}


def package(tmp_path: Path, doc: object) -> Path:
    folder = tmp_path / "todo-list"
    folder.mkdir(exist_ok=True)
    path = folder / "package.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2), encoding="utf-8")
    return path


def test_has_evals(tmp_path: Path) -> None:
    assert discover.has_evals(package(tmp_path, {"name": "x", "ai": {"evals": []}}))
    assert not discover.has_evals(package(tmp_path, {"name": "x"}))
    assert not discover.has_evals(package(tmp_path, {"name": "x", "ai": {"tools": []}}))
    assert not discover.has_evals(package(tmp_path, {"evals": [], "ai": {}}))
    assert not discover.has_evals(package(tmp_path, ["evals"]))
    assert not discover.has_evals(tmp_path / "missing.json")
    (tmp_path / "other.json").write_text('{"ai": {"evals": []}}', encoding="utf-8")
    assert not discover.has_evals(tmp_path / "other.json")  # a package.json only
    # broken, but clearly meant to hold evals: loading it reports why
    assert discover.has_evals(package(tmp_path, '{"ai": {"evals": [}}'))


def test_seed_eval(tmp_path: Path) -> None:
    path = package(tmp_path, {"name": "todo-list", "ai": {"evals": [SEED_EVAL]}})
    (case,) = package_json.load(path)
    assert isinstance(case, Case)
    assert case.name == "todo-list-mark-the-posting-the-announcement-as-completed"
    assert case.prompt == SEED_EVAL["input"]
    assert case.source == "package_json"
    assert case.runs == 1
    assert case.mocks == SEED_EVAL["mocks"]
    assert case.path == path and case.dir == path.parent and case.suite_root == path.parent
    assert case.line == 5
    assert [(g.type, g.config) for g in case.graders] == [
        ("callsTool", {"name": "get-todos", "arguments": None}),
        ("callsTool", {"name": "toggle-todo", "arguments": {"id": "aef13ef3"}}),
        ("meetsCriteria", {"criteria": "Tells that item was successfully marked as completed"}),
        ("includes", {"value": "completed"}),
        ("matches", {"pattern": "\\[([^\\]]+)\\]\\(([^\\s\\)]+)\\)"}),
    ]
    names = [g.name for g in case.graders]
    assert names[:2] == ["calls tool get-todos", "calls tool toggle-todo (id)"]
    assert names[3] == 'includes "completed"'
    criteria = case.graders[2]
    assert criteria.criteria == "Tells that item was successfully marked as completed"
    assert criteria.paid
    text = path.read_text().splitlines()
    assert [text[(g.line or 0) - 1].strip() for g in case.graders[:1]] == ["{"]


def test_names_slugs_and_duplicates(tmp_path: Path) -> None:
    evals = [
        {"input": "What are my todos?"},
        {"input": "what ARE my todos!!"},
        {"name": "custom", "input": "x"},
        {"name": "custom", "input": "y"},
        {"input": "é" * 3 + " " + "word " * 30},
    ]
    found = package_json.load(package(tmp_path, {"ai": {"evals": evals}}))
    assert all(isinstance(c, Case) for c in found)
    names = [c.name for c in found if isinstance(c, Case)]
    assert names[:4] == ["what-are-my-todos", "what-are-my-todos-2", "custom", "custom-2"]
    assert len(names[4]) <= 60 and not names[4].endswith("-") and names[4].startswith("word-word")
    assert package_json.slug("!!!") == "eval"


def test_argument_matchers_are_kept_and_their_patterns_compiled(tmp_path: Path) -> None:
    arguments = {
        "issueId": "ISS-1",
        "body": {"includes": "waiting for design"},
        "title": {"or": [{"matches": "^Bug"}, {"not": {"eq": "x"}}]},
        "labels": [{"includes": "p1"}],
        "meta": {"owner": {"matches": "^a"}},
    }
    expected = [{"callsTool": {"name": "create-comment", "arguments": arguments}}]
    (case,) = package_json.load(
        package(tmp_path, {"ai": {"evals": [{"input": "x", "expected": expected}]}})
    )
    assert isinstance(case, Case)
    assert case.graders[0].config == {"name": "create-comment", "arguments": arguments}


@pytest.mark.parametrize(
    ("expectation", "message"),
    [
        ({"matches": "[abc"}, 'invalid ai.evals[0].expected[0].matches "[abc": Invalid regular'),
        (
            {"callsTool": {"name": "t", "arguments": {"a": {"or": [{"matches": "("}]}}}},
            'invalid ai.evals[0].expected[0].callsTool.arguments.a.or[0].matches "(":',
        ),
        ({"contains": "x"}, "ai.evals[0].expected[0] must be one of {includes: …}"),
        ({"includes": "x", "matches": "y"}, "ai.evals[0].expected[0] must be one of"),
        ({"includes": 3}, "ai.evals[0].expected[0].includes must be a string (got a number)"),
        ({"callsTool": {"arguments": {}}}, "ai.evals[0].expected[0].callsTool needs a name"),
        (
            {"callsTool": {"name": "t", "args": {}}},
            'unknown key "ai.evals[0].expected[0].callsTool.args"',
        ),
        (
            {"callsTool": 3},
            "ai.evals[0].expected[0].callsTool must be a tool name or {name, arguments}",
        ),
    ],
)
def test_bad_expectation_is_a_load_error_item(
    tmp_path: Path, expectation: dict[str, object], message: str
) -> None:
    evals = [{"input": "bad", "expected": [expectation]}, {"input": "good"}]
    bad, good = package_json.load(package(tmp_path, {"ai": {"evals": evals}}))
    assert isinstance(bad, LoadError) and isinstance(good, Case)
    assert bad.message.startswith(message)
    assert bad.line is not None and bad.line >= 6
    assert good.name == "good"


def test_bad_eval_keys(tmp_path: Path) -> None:
    evals = [{"input": "a", "expect": []}, {"mocks": {}}, "x", {"input": "b", "mocks": []}]
    found = package_json.load(package(tmp_path, {"ai": {"evals": evals}}))
    assert [e.message for e in found] == [  # type: ignore[union-attr]
        'unknown key "ai.evals[0].expect" — did you mean expected? '
        "(expected one of: name, input, mocks, expected, "
        "usedAsExample)",
        "ai.evals[1].input is required",
        "ai.evals[2] must be an object (got a string)",
        "ai.evals[3].mocks must be a mapping (got a list)",
    ]


def test_whole_file_errors(tmp_path: Path) -> None:
    with pytest.raises(LoadError) as info:
        package_json.load(package(tmp_path, '{\n  "ai": {\n    "evals": [,]\n  }\n}'))
    assert info.value.message.startswith("invalid JSON: ")
    assert info.value.line == 3
    with pytest.raises(LoadError, match=r"ai.evals must be a list of evals \(got a mapping\)"):
        package_json.load(package(tmp_path, {"ai": {"evals": {}}}))
    with pytest.raises(LoadError, match=r'ai has no "evals" list'):
        package_json.load(package(tmp_path, {"ai": {}}))
    with pytest.raises(LoadError, match=r'there is no "ai" object'):
        package_json.load(package(tmp_path, {"name": "x"}))
