"""Finding case dirs and suite files under an evals folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin_evals.model import LoadError
from pytest_plugin_evals.suites import directory, discover
from pytest_plugin_evals.suites.discover import Source
from pytest_plugin_evals.suites.suite_file import load_suite_file
from tests.helpers import write_tree

GRADER = "---\ntype: regex\n---\nx\n"


def rel(sources: list[Source], root: Path) -> list[tuple[str, str]]:
    return [(s.kind, s.path.relative_to(root).as_posix()) for s in sources]


def test_cases_groups_and_reserved_dirs(tmp_path: Path) -> None:
    evals = write_tree(
        tmp_path / "evals",
        {
            "zeta/prompt.md": "z",
            "alpha/case.yaml": "x",
            "group/nested-case/prompt.md": "n",
            "group/deeper/still/prompt.md": "d",
            "group/notes.md": "a group is not a case",
            "results/2026-01-01/prompt.md": "never",
            "mocks/not-a-case/prompt.md": "never",
            "mocks/tracker/create_issue.md": "mock",
            "node_modules/pkg/prompt.md": "never",
            ".claude/prompt.md": "never",
            ".hidden/case/prompt.md": "never",
            "__pycache__/prompt.md": "never",
            # never descend into a case dir: its fixtures are not cases
            "alpha/fixtures/prompt.md": "fixture",
            "alpha/fixtures/evals.json": '{"cases": []}',
        },
    )
    assert rel(discover.walk(evals), evals) == [
        ("case_dir", "alpha"),
        ("case_dir", "group/deeper/still"),
        ("case_dir", "group/nested-case"),
        ("case_dir", "zeta"),
    ]


def test_order_is_by_path_not_by_name_or_creation(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    for name in ["m-case", "b", "a-b", "a"]:  # created out of order
        write_tree(evals, {f"{name}/prompt.md": "x"})
    write_tree(evals, {"naming/prompt.md": "---\nname: aaa-renamed\n---\nx\n"})
    first = rel(discover.walk(evals), evals)
    assert first == [
        ("case_dir", "a"),
        ("case_dir", "a-b"),
        ("case_dir", "b"),
        ("case_dir", "m-case"),
        ("case_dir", "naming"),
    ]
    assert rel(discover.walk(evals), evals) == first


def test_nested_case_name_is_its_dir_name(tmp_path: Path) -> None:
    evals = write_tree(
        tmp_path / "evals",
        {"group/nested-case/prompt.md": "Hi", "group/nested-case/graders/g.md": GRADER},
    )
    (source,) = discover.walk(evals)
    assert directory.load_case(source.path, evals).name == "nested-case"


def test_suite_files_beside_cases(tmp_path: Path) -> None:
    evals = write_tree(
        tmp_path / "evals",
        {
            "a/prompt.md": "x",
            "evals.json": '{"cases": [{"name": "n", "prompt": "p"}]}',
            "smoke.json": '{"cases": []}',
            "golden/weather.yaml": "name: weather\ncases:\n  - name: a\n    input: b\n",
            "golden/flow.yml": '{"cases": [{"name": "a", "input": "b"}]}',
            "package.json": '{"ai": {"evals": []}, "cases": []}',
            "tsconfig.json": '{"compilerOptions": {}}',
            "data.json": '{"items": ["cases"]}',
            "config.yaml": "other: 1\n",
            "list.json": '[{"cases": []}]',
            "nested.yaml": "outer:\n  cases: []\n",
            "results/run/aggregate-result.json": '{"cases": []}',
            "mocks/srv/_tools.json": '{"cases": []}',
        },
    )
    assert rel(discover.walk(evals), evals) == [
        ("case_dir", "a"),
        ("suite_file", "evals.json"),
        ("suite_file", "golden/flow.yml"),
        ("suite_file", "golden/weather.yaml"),
        ("suite_file", "smoke.json"),
    ]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("evals.json", '{"cases": [ {"name": "a",, } ]}'),
        ("evals.json", "not json at all"),
        ("full.json", '{"cases": [ {"name": "a" ]}'),
        ("suite.yaml", "cases:\n  - name: [a\n"),
    ],
)
def test_broken_suite_is_found_and_fails_to_load(tmp_path: Path, name: str, text: str) -> None:
    evals = write_tree(tmp_path / "evals", {name: text})
    (source,) = discover.walk(evals)
    assert source == Source("suite_file", evals / name)
    with pytest.raises(LoadError) as info:
        load_suite_file(source.path, evals)
    assert info.value.path == evals / name
    assert info.value.line is not None


def test_evals_json_without_cases_is_reported(tmp_path: Path) -> None:
    evals = write_tree(tmp_path / "evals", {"evals.json": '{"tests": []}'})
    (source,) = discover.walk(evals)
    with pytest.raises(LoadError) as info:
        load_suite_file(source.path, evals)
    assert info.value.message == (
        "not a suite in a known format: tried evals.json / sy suites (a cases: list) and "
        "skill-creator's evals.json (an evals list) (found keys: tests)"
    )


def test_root_may_itself_be_a_case(tmp_path: Path) -> None:
    folder = write_tree(tmp_path / "one-case", {"prompt.md": "x", "sub/prompt.md": "y"})
    assert discover.walk(folder) == [Source("case_dir", folder)]


def test_missing_dir_has_nothing(tmp_path: Path) -> None:
    assert discover.walk(tmp_path / "nope") == []


def test_is_evals_dir(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "x" / "evals").mkdir(parents=True)
    assert discover.is_evals_dir(tmp_path / "evals")
    assert discover.is_evals_dir(tmp_path / "x" / "evals")
    assert not discover.is_evals_dir(tmp_path / "other")
    assert not discover.is_evals_dir(tmp_path / "missing" / "evals")


def test_enclosing_evals_is_found_above_but_not_through_results_or_mocks(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    (evals / "group" / "case").mkdir(parents=True)
    (evals / "results" / "run").mkdir(parents=True)
    assert discover.enclosing_evals(evals / "group" / "case") == evals
    assert discover.enclosing_evals(evals / "results" / "run") is None
    assert discover.enclosing_evals(evals / "mocks") is None
    assert discover.enclosing_evals(tmp_path / "elsewhere") is None


def test_symlink_loop_does_not_hang(tmp_path: Path) -> None:
    evals = write_tree(tmp_path / "evals", {"group/a/prompt.md": "x"})
    (evals / "group" / "loop").symlink_to(evals / "group")
    assert rel(discover.walk(evals), evals) == [("case_dir", "group/a")]


def test_skill_creator_files_of_any_name_and_trigger_files_named_for_a_skill(
    tmp_path: Path,
) -> None:
    evals = write_tree(
        tmp_path / "evals",
        {
            "pdf-evals.json": '{"skill_name": "pdf", "evals": [{"id": 1, "prompt": "x"}]}',
            "pdf_trigger_eval.json": "[]",
            "mytrigger_eval.json": "[]",  # not named for a skill: no separator
            "notes.json": '{"owner": "me"}',
            "rows.yaml": "- 1\n",
            "broken.json": "{oops",
            "package.json": "{}",
            "files/input.json": '{"rows": [1, 2]}',  # skill-creator's input files: no word
        },
    )
    assert rel(discover.walk(evals), evals) == [
        ("suite_file", "pdf-evals.json"),
        ("suite_file", "pdf_trigger_eval.json"),
    ]
    why = {p.name: reason for p, reason in discover.unread(evals)}
    assert set(why) == {"mytrigger_eval.json", "notes.json", "rows.yaml", "broken.json"}
    assert why["notes.json"].startswith(
        "not read: it is a mapping without a cases: or evals: list (its keys: owner)"
    )
    assert why["rows.yaml"].startswith("not read: it is a list, not a suite")
    assert why["broken.json"] == (
        "not read: it does not parse, and it is not named like a suite (evals.json)"
    )


def test_the_notes_on_named_evals_folders(tmp_path: Path) -> None:
    """What the terminal says of the evals folders a session's arguments name: a file there
    that is no suite, every time; a folder without a case, only when nothing was collected."""
    write_tree(tmp_path, {"a/evals/notes.json": '{"owner": "me"}', "a/evals/case/prompt.md": "hi"})
    (tmp_path / "b" / "evals").mkdir(parents=True)
    args, unread = ["a/evals", "b", "a::x"], discover.unread(tmp_path / "a" / "evals")[0][1]
    assert discover.NO_TESTS_COLLECTED == pytest.ExitCode.NO_TESTS_COLLECTED
    said = discover.folder_notes(args, tmp_path, pytest.ExitCode.OK)
    assert said == [f"{Path('a/evals/notes.json')}: {unread}"]
    said = discover.folder_notes(args, tmp_path, pytest.ExitCode.NO_TESTS_COLLECTED)
    assert said[:1] == [f"{Path('a/evals/notes.json')}: {unread}"]
    assert len(said) == 2 and said[1].startswith(f"no eval cases found in {Path('b/evals')}/:")
    elsewhere = discover.folder_notes([str(tmp_path / "b")], tmp_path / "a", 5)
    assert elsewhere[0].startswith(f"no eval cases found in {tmp_path / 'b' / 'evals'}/:")
    assert discover.folder_notes(["tests"], tmp_path, 5) == []  # no evals folder named
