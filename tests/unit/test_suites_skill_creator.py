"""skill-creator's evals.json: evals become cases, expectations llm graders, files staged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import Case, LoadError
from pytest_plugin_evals.runner import stage_input_files
from pytest_plugin_evals.suites.suite_file import load_suite_file
from tests.helpers import write_tree


def load(tmp_path: Path, evals: list[Any], **files: str) -> list[Case | LoadError]:
    skill = write_tree(tmp_path / "pdf", {"SKILL.md": "x", **files})
    path = skill / "evals" / "evals.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"skill_name": "pdf", "evals": evals}, indent=1), "utf-8")
    return load_suite_file(path, path.parent)


def test_an_eval_is_a_case_with_judged_expectations(tmp_path: Path) -> None:
    (case,) = load(
        tmp_path,
        [
            {
                "id": 3,
                "prompt": " Fill it ",
                "expected_output": "a filled form",
                "files": ["evals/files/a.txt"],
                "expectations": ["Says done", "Uses Ada"],
            }
        ],
        **{"evals/files/a.txt": "A"},
    )
    assert isinstance(case, Case)
    assert case.name == "eval-3" and case.source == "skill_creator"
    assert case.prompt == "Fill it\n\nInput files: evals/files/a.txt"
    assert case.expected_output == "a filled form"
    assert [(g.name, g.type, g.config) for g in case.graders] == [
        ("expectation-1", "llm", {"criteria": "Says done"}),
        ("expectation-2", "llm", {"criteria": "Uses Ada"}),
    ]
    cwd = tmp_path / "run"
    cwd.mkdir()
    assert stage_input_files(case, cwd) is None
    assert (cwd / "evals" / "files" / "a.txt").read_text() == "A"


def test_bad_evals_are_one_line_each_and_the_others_load(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    found = load(
        tmp_path,
        [
            {"prompt": "no id"},
            {"id": 2, "prompt": "p", "files": ["../secret.txt"]},
            {"id": 3, "prompt": "p", "files": ["evals/missing.txt"]},
            {"id": 4, "prompt": "p", "expectations": "not a list"},
            {"id": 5, "prompt": "p", "expectation": []},
            {"id": 6, "prompt": "fine"},
        ],
    )
    errors = [e for e in found if isinstance(e, LoadError)]
    messages = [e.message for e in errors]
    assert messages[0] == "evals[0].id is required (or a name)"
    assert messages[1].startswith('evals[1].files[0] "../secret.txt" must be a path inside')
    assert messages[2].startswith('evals[2].files[0] "evals/missing.txt" is not a file in')
    assert "expectations" in messages[3]
    assert messages[4].startswith(
        'unknown key "evals[4].expectation" — did you mean expectations? (expected one of: id,'
    )
    assert all(e.line is not None and e.line > 1 for e in errors)
    assert [c.name for c in found if isinstance(c, Case)] == ["eval-6"]
