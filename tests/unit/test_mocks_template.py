"""Mock bodies: ``{{input.…}}`` substitutions, ``{{file:…}}`` inserts and their confinement."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_plugin_evals.mocks.template import TemplateError, check_static, render
from pytest_plugin_evals.util.jsvalues import MISSING, js_json, js_number, js_string, lookup

ARGS = {
    "title": "Crash bug",
    "labels": ["bug", "p1"],
    "meta": {"owner": "alice", "size": 3},
    "count": 2,
    "ratio": 1.0,
    "draft": False,
    "nothing": None,
    "items": [{"id": "a"}, {"id": "b"}],
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "mocks" / "tracker"
    (folder / "fixtures").mkdir(parents=True)
    (folder / "fixtures" / "issue.json").write_text('{"id": 4821}', encoding="utf-8")
    (folder / "fixtures" / "a.txt").write_text("fixture a", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("Created issue #4821: {{input.title}}", "Created issue #4821: Crash bug"),
        ("labels={{input.labels}}", 'labels=["bug","p1"]'),
        ("{{input.meta}}", '{"owner":"alice","size":3}'),
        ("{{ input.meta.owner }}/{{input.meta.size}}", "alice/3"),
        (
            "n={{input.count}} r={{input.ratio}} d={{input.draft}} z={{input.nothing}}",
            "n=2 r=1 d=false z=null",
        ),
        ("[{{input.missing}}] [{{input.meta.nope}}] [{{input.title.x}}]", "[] [] []"),
        ("{{input.items.1.id}}", "b"),
        ("plain {text} and {{other}} stay", "plain {text} and {{other}} stay"),
    ],
)
def test_input_substitution(template: str, expected: str, root: Path) -> None:
    assert render(template, ARGS, root) == expected


def test_whole_input(root: Path) -> None:
    assert render("{{input}}", {"a": 1, "b": "é"}, root) == '{"a":1,"b":"é"}'


def test_file_insert_relative_to_the_mock_folder(root: Path) -> None:
    assert render("Issue: {{file:fixtures/issue.json}}", {}, root) == 'Issue: {"id": 4821}'
    assert render("{{file: fixtures/{input.name}.txt }}", {"name": "a"}, root) == "fixture a"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../secret.txt", "leaves the mock folder (it uses ..)"),
        ("fixtures/../../secret.txt", "leaves the mock folder (it uses ..)"),
        ("/etc/passwd", "is absolute"),
        ("fixtures/missing.json", "does not exist in the mock folder"),
    ],
)
def test_file_paths_are_confined(path: str, message: str, root: Path) -> None:
    (root.parent / "secret.txt").write_text("secret", encoding="utf-8")
    with pytest.raises(TemplateError, match=r"^fixture") as info:
        render("{{file:" + path + "}}", {}, root)
    assert message in str(info.value)
    assert "secret" not in str(info.value).replace("secret.txt", "")


def test_symlink_escape_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("top secret", encoding="utf-8")
    os.symlink(outside, root / "fixtures" / "link.txt")
    os.symlink(tmp_path, root / "fixtures" / "up")
    for path in ("fixtures/link.txt", "fixtures/up/outside.txt"):
        with pytest.raises(
            TemplateError, match="leads out of the mock folder through a symbolic link"
        ):
            render("{{file:" + path + "}}", {}, root)


def test_symlink_inside_the_folder_is_fine(root: Path) -> None:
    os.symlink(root / "fixtures" / "a.txt", root / "fixtures" / "alias.txt")
    assert render("{{file:fixtures/alias.txt}}", {}, root) == "fixture a"


@pytest.mark.parametrize("value", ["../x", "a/b", "", ".."])
def test_input_in_a_path_must_be_one_plain_segment(value: str, root: Path) -> None:
    with pytest.raises(TemplateError, match="must be one plain path segment"):
        render("{{file:fixtures/{input.name}}}", {"name": value}, root)


def test_missing_input_in_a_path_is_refused(root: Path) -> None:
    with pytest.raises(TemplateError, match="one plain path segment"):
        render("{{file:fixtures/{input.name}.txt}}", {}, root)


def test_static_check_reports_escapes_with_their_line(root: Path) -> None:
    body = (
        "line one\n{{file:fixtures/issue.json}}\n{{file:../x}}\n{{file:/abs}}\n{{file:f/{input.a}}}"
    )
    problems = check_static(body, root)
    assert [line for _, line in problems] == [2, 3]
    assert "leaves the mock folder" in problems[0][0]
    assert "is absolute" in problems[1][0]
    assert check_static("{{file:../{input.a}}}", root)[0][0].endswith("(it uses ..)")


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1, "1"),
        (1.0, "1"),
        (-2.5, "-2.5"),
        (0.001, "0.001"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (1e16, "10000000000000000"),
        (1e21, "1e+21"),
        (123.456, "123.456"),
        (100.0, "100"),
        (0.0, "0"),
        (True, "true"),
    ],
)
def test_numbers_read_as_javascript_writes_them(number: float, text: str) -> None:
    assert js_number(number) == text


def test_js_string_and_js_json() -> None:
    assert js_string("x") == "x"
    assert js_string(None) == "null"
    assert js_string(False) == "false"
    assert js_string([1, "a", None]) == "1,a,"
    assert js_string({"a": 1}) == "[object Object]"
    assert js_json({"a": [1.0, True, None, 'q"uote']}) == '{"a":[1,true,null,"q\\"uote"]}'


def test_lookup() -> None:
    assert lookup(ARGS, "meta.owner") == "alice"
    assert lookup(ARGS, "items.0.id") == "a"
    assert lookup(ARGS, "items.5.id") is MISSING
    assert lookup(ARGS, "title.length") is MISSING
    assert lookup(ARGS, "") is ARGS
