"""Frontmatter splitting, and YAML / JSON parsing that keeps line numbers."""

from __future__ import annotations

import pytest

from pytest_plugin_evals.suites.json_lines import JSONProblem, key_lines, load_json
from pytest_plugin_evals.util import frontmatter


def test_split_frontmatter_and_body() -> None:
    split = frontmatter.split("---\nruns: 1\n---\n\nBody\n")
    assert split.yaml_text == "runs: 1\n"
    assert split.yaml_line == 2
    assert split.body == "\nBody\n"
    assert split.body_line == 4


def test_split_without_frontmatter() -> None:
    split = frontmatter.split("Just a prompt\n---\n")
    assert split.yaml_text is None
    assert split.body == "Just a prompt\n---\n"
    assert split.body_line == 1


def test_split_bom_crlf_and_empty_block() -> None:
    split = frontmatter.split("\ufeff---\r\n---\r\nHi\r\n")
    assert split.yaml_text == ""
    assert split.body == "Hi\r\n"


def test_split_unterminated() -> None:
    with pytest.raises(frontmatter.Unterminated, match="unterminated frontmatter"):
        frontmatter.split("---\nruns: 1\n")


def test_yaml_lines_by_key_path() -> None:
    doc = frontmatter.load_yaml(
        "a: 1\nb:\n  c: [x, y]\n  d:\n    - e: 1\n    - f: 2\n", first_line=2
    )
    assert doc.data == {"a": 1, "b": {"c": ["x", "y"], "d": [{"e": 1}, {"f": 2}]}}
    assert doc.line("a") == 2
    assert doc.line("b", "c") == 4
    assert doc.line("b", "d", 1) == 7
    assert doc.line("b", "d", 1, "f") == 7
    assert doc.line("b", "d", 1, "missing") == 7  # nearest known ancestor
    assert doc.line() == 2


def test_yaml_problems() -> None:
    with pytest.raises(frontmatter.YAMLProblem) as info:
        frontmatter.load_yaml("a: 1\na: 2\n")
    assert (info.value.message, info.value.line) == ('duplicate key "a"', 2)
    with pytest.raises(frontmatter.YAMLProblem) as info:
        frontmatter.load_yaml("a: !!python/object:os.system x\n")
    assert "could not determine a constructor" in info.value.message
    assert info.value.line == 1


def test_yaml_empty_document() -> None:
    assert frontmatter.load_yaml("").data is None
    assert frontmatter.load_yaml("# only a comment\n").data is None


def test_json_lines_ignore_brackets_and_quotes_inside_strings() -> None:
    text = (
        '{\n  "cases": [\n    {"name": "a [x] {y}", "q": "say \\"hi\\", ok"},\n'
        '    {\n      "name": "b",\n      "deep": [[1, 2], {"k": [3]}]\n    },\n    "c"\n  ],\n'
        '  "after": true\n}'
    )
    lines = key_lines(text)
    assert lines[("cases",)] == 2
    assert lines[("cases", 0)] == 3
    assert lines[("cases", 0, "q")] == 3
    assert lines[("cases", 1)] == 4
    assert lines[("cases", 1, "deep")] == 6
    assert lines[("cases", 1, "deep", 1, "k", 0)] == 6
    assert lines[("cases", 2)] == 8
    assert lines[("after",)] == 10
    assert ("cases", 3) not in lines


def test_json_syntax_error_carries_its_line() -> None:
    with pytest.raises(JSONProblem) as info:
        load_json('{\n  "a": 1,\n  "b": \n}')
    assert info.value.message.startswith("invalid JSON: Expecting value")
    assert info.value.line == 4
