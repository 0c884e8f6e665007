"""Mock files: frontmatter keys (strict), body trimming, and errors with file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin_evals.mocks.spec import parse_mock
from pytest_plugin_evals.model import LoadError


def write(tmp_path: Path, text: str, name: str = "create_issue.md") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_reference_example(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "---\nexpect:\n  title: string\n  priority: [low, medium, high]\n---\n\n"
        "Created issue #4821: {{input.title}}\n\n",
    )
    spec = parse_mock(path)
    assert spec.type == "fixed" and spec.error is False
    assert spec.body == "Created issue #4821: {{input.title}}"
    assert [(g.path, g.kind) for g in spec.guards] == [("title", "type"), ("priority", "one_of")]


def test_no_frontmatter_is_a_plain_answer(tmp_path: Path) -> None:
    spec = parse_mock(write(tmp_path, "\n\n  indented answer  \nsecond line \n\n"))
    assert spec.body == "  indented answer  \nsecond line"
    assert spec.guards == ()


def test_error_flag(tmp_path: Path) -> None:
    assert parse_mock(write(tmp_path, "---\nerror: true\n---\nrate limited")).error is True


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (
            "---\nexpect:\n  a: string\nerorr: true\n---\nx",
            4,
            'unknown key "erorr" in mock frontmatter — did you mean error? '
            "(expected one of: type, expect, error, tools, abort_when)",
        ),
        ("---\ntype: magic\n---\nx", 2, "type must be fixed or agent (got 'magic')"),
        ("---\n\nerror: yes please\n---\nx", 3, "error must be true or false (got 'yes please')"),
        ("---\nexpect:\n  a: /[/\n---\nx", 2, "expect: a: Invalid regular expression"),
        ("---\nexpect: [a]\n---\nx", 2, "expect: must be a map"),
        ("---\ntools: get\n---\nx", 2, "tools must be a list of tool names"),
        ("---\nabort_when: [1]\n---\nx", 2, "abort_when must be text"),
        ("---\n- a\n---\nx", 2, "mock frontmatter must be a map of keys"),
        ("---\nexpect: {a: b\n---\nx", 2, "invalid mock frontmatter:"),
        ("---\nerror: true\n", 1, "unterminated frontmatter"),
    ],
)
def test_errors_name_the_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(LoadError) as info:
        parse_mock(path)
    assert info.value.path == path
    assert info.value.line == line
    assert info.value.message.startswith(message)
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_a_fixture_escape_is_a_load_error_on_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "---\nerror: false\n---\n\n\nfirst\n{{file:../outside.txt}}\n")
    with pytest.raises(LoadError) as info:
        parse_mock(path, root=tmp_path)
    assert info.value.line == 7
    assert "leaves the mock folder" in info.value.message


def test_a_missing_fixture_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="does not exist in the mock folder"):
        parse_mock(write(tmp_path, "{{file:fixtures/nope.json}}"), root=tmp_path)


def test_agent_type_is_parsed(tmp_path: Path) -> None:
    spec = parse_mock(
        write(tmp_path, "---\n\ntype: agent\ntools: [search]\nabort_when: never\n---\nYou are a KB")
    )
    assert (spec.type, spec.tools, spec.abort_when, spec.type_line) == (
        "agent",
        ("search",),
        "never",
        3,
    )


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "x.md"
    path.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(LoadError, match="not UTF-8"):
        parse_mock(path)
