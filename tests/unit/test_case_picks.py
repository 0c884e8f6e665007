"""Command-line arguments that name runs or files of a directory case, and the evals folders a
session's arguments name, read from plain strings and paths (``suites.picks``,
``suites.discover``); the collection they drive: tests/integration/test_reruns_and_selection.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin_evals.suites.discover import evals_root, named_evals_folders
from pytest_plugin_evals.suites.picks import (
    case_arguments,
    case_folder,
    may_name_a_case,
    picks_not_found,
)
from tests.helpers import write_tree


def suite(root: Path) -> Path:
    case = root / "evals" / "plants"
    (case / "graders").mkdir(parents=True)
    (case / "prompt.md").write_text("water them\n", encoding="utf-8")
    (root / "evals" / "results" / "x").mkdir(parents=True)
    return case


def test_a_node_id_of_runs_becomes_its_case_folder_and_a_pick(tmp_path: Path) -> None:
    case = suite(tmp_path)
    found = case_arguments(["evals/plants::plants[1]", "tests"], tmp_path, ())
    assert found is not None
    args, picks = found
    assert args == [str(case), "tests"]
    [(folder, [pick])] = picks.items()
    assert (folder, pick.argument, pick.name) == (case, "evals/plants::plants[1]", "plants[1]")
    assert pick.selects("plants[1]", "plants") and not pick.selects("plants[2]", "plants")


def test_a_file_of_a_case_collects_the_case_whole(tmp_path: Path) -> None:
    case = suite(tmp_path)
    assert case_arguments(["evals/plants/prompt.md"], tmp_path, ()) == ([str(case)], {})
    assert case_folder(case / "graders", ()) == case


def test_a_case_another_argument_collects_is_not_given_twice(tmp_path: Path) -> None:
    suite(tmp_path)
    found = case_arguments(["evals", "evals/plants::plants[1]"], tmp_path, ())
    assert found == (["evals"], {})


def test_arguments_that_name_no_case_are_left_alone(tmp_path: Path) -> None:
    suite(tmp_path)
    assert case_arguments(["evals", "evals/plants", "evals/results/x"], tmp_path, ()) is None
    assert case_folder(tmp_path / "evals" / "results" / "x", ()) is None


def test_a_folder_of_eval_paths_holds_cases_too(tmp_path: Path) -> None:
    case = tmp_path / "suites" / "one"
    case.mkdir(parents=True)
    (case / "prompt.md").write_text("hi\n", encoding="utf-8")
    assert case_folder(case, ()) is None
    assert case_folder(case, ((tmp_path / "suites").resolve(),)) == case


def test_a_pick_not_found_is_said_with_the_case_s_runs(tmp_path: Path) -> None:
    suite(tmp_path)
    found = case_arguments(["evals/plants::plants[9]", "evals/plants::plants"], tmp_path, ())
    assert found is not None
    missing, there = found[1][tmp_path / "evals" / "plants"]
    for pick in (missing, there):
        pick.seen, pick.runs = True, ["plants[1]", "plants[2]"]
    there.found = True
    assert picks_not_found([missing, there]) == [
        "not found: evals/plants::plants[9]\n(the case's runs: plants[1], plants[2])"
    ]
    missing.seen = False  # its case folder was not collected: nothing to say
    assert picks_not_found([missing]) == []


def test_the_evals_root_of_a_folder(tmp_path: Path) -> None:
    case = suite(tmp_path)
    evals = tmp_path / "evals"
    assert evals_root(evals, (), at_top=False) == evals
    assert evals_root(case, (), at_top=False) is None
    assert evals_root(case, (), at_top=True) == evals  # ``cd evals/plants && pytest``
    assert evals_root(tmp_path, (tmp_path.resolve(),), at_top=False) == tmp_path


def test_the_evals_folders_the_arguments_name(tmp_path: Path) -> None:
    suite(tmp_path)
    evals = tmp_path / "evals"
    assert named_evals_folders([], tmp_path) == [evals]
    assert named_evals_folders(["evals::x", "tests"], tmp_path) == [evals]
    assert named_evals_folders(["evals/plants"], tmp_path) == []


def test_which_arguments_may_name_a_case(tmp_path: Path) -> None:
    """Only these are looked up as a case's runs or files; every other argument goes to pytest
    as given, and a session without evals reads no folder for them."""
    write_tree(tmp_path, {"evals/plants/prompt.md": "hi", "tests/test_a.py": "", "docs/a.md": ""})
    may = may_name_a_case
    assert may("evals/plants::plants[1]", tmp_path, ())
    assert may("evals/plants/prompt.md", tmp_path, ())
    assert may(".", tmp_path / "evals" / "plants", ())  # cd evals/plants && pytest
    assert not may("tests/test_a.py::test_one", tmp_path, ())
    assert not may("tests", tmp_path, ())  # no evals folder on its way
    assert not may("evals/gone", tmp_path, ())  # not there
    assert may("docs/a.md", tmp_path, (tmp_path / "docs",))  # eval_paths: any folder may be one
    assert case_arguments(["tests/test_a.py::test_one", "tests"], tmp_path, ()) is None


def kit(root: Path) -> None:
    """Three directory cases: ``alpha`` (with a grader), ``named`` and ``group/beta``."""
    write_tree(
        root,
        {
            "evals/alpha/prompt.md": "Alpha\n",
            "evals/alpha/graders/hi.md": "---\ntype: regex\npattern: hi\n---\n",
            "evals/named/prompt.md": "---\nname: renamed\n---\nNamed\n",
            "evals/group/beta/case.yaml": "name: beta\n",
        },
    )


@pytest.mark.parametrize(
    ("arguments", "folders", "picked"),
    [
        (["evals/alpha/prompt.md"], ["evals/alpha"], {}),
        (["evals/alpha/graders/hi.md"], ["evals/alpha"], {}),
        (["evals/alpha/graders"], ["evals/alpha"], {}),
        (["evals/group/beta/case.yaml"], ["evals/group/beta"], {}),
        (["evals/named/prompt.md"], ["evals/named"], {}),
        (["evals/named::renamed[without-1]", "evals/alpha/prompt.md"],
         ["evals/named", "evals/alpha"], {"evals/named": ["renamed[without-1]"]}),
        (["evals/alpha::alpha[with-2]", "evals/alpha::alpha[without-1]"], ["evals/alpha"],
         {"evals/alpha": ["alpha[with-2]", "alpha[without-1]"]}),
        (["evals/alpha::alpha[with-2]", "evals/alpha::alpha[with-2]"], ["evals/alpha"],
         {"evals/alpha": ["alpha[with-2]", "alpha[with-2]"]}),
        (["evals/alpha::alpha[with-2]", "evals/alpha::alpha"], ["evals/alpha"],
         {"evals/alpha": ["alpha[with-2]", "alpha"]}),
        # A file of the case collects it whole: the picks are dropped.
        (["evals/alpha::alpha[with-2]", "evals/alpha/prompt.md"], ["evals/alpha"], {}),
        # A folder given whole collects every run of its cases: the case is not given again.
        (["evals/alpha::alpha[with-2]", "evals"], ["evals"], {}),
        (["evals", "evals/alpha::alpha[with-2]"], ["evals"], {}),
        (["evals/alpha::alpha[with-2]", "evals/alpha"], ["evals/alpha"], {}),
    ],
)  # fmt: skip
def test_case_files_and_node_ids_together_give_each_case_folder_once(
    tmp_path: Path, arguments: list[str], folders: list[str], picked: dict[str, list[str]]
) -> None:
    """What pytest is given for case files and node ids in any order: each case folder once
    (or the folder that holds it), with the runs picked by name unless the case is whole."""
    kit(tmp_path)
    found = case_arguments(arguments, tmp_path, ())
    assert found is not None
    args, picks = found
    assert [str(tmp_path / a) for a in args] == [str(tmp_path / f) for f in folders]
    assert {str(k.relative_to(tmp_path)): [p.name for p in v] for k, v in picks.items()} == picked
