"""``recording.folders.tell_chosen`` / ``chosen_folders``: the results folder and suite root a
session's runs chose, written once to its shared folder and read back by the controller; and
the cases a worker did not select (``tell_unselected`` / ``unselected``), read defensively."""

from __future__ import annotations

from pathlib import Path

from pytest_plugin_evals.recording.folders import (
    CHOSEN_FILE,
    UNSELECTED_FILE,
    chosen_folders,
    tell_chosen,
    tell_unselected,
    unselected,
)


def test_nothing_chosen_before_a_run_started(tmp_path: Path) -> None:
    assert chosen_folders(tmp_path) is None


def test_the_first_choice_is_read_back_and_stays(tmp_path: Path) -> None:
    tell_chosen(tmp_path, Path("/r/results/1"), Path("/r/evals"))
    tell_chosen(tmp_path, Path("/other/results"), Path("/other"))  # another process, later
    assert chosen_folders(tmp_path) == (Path("/r/results/1"), Path("/r/evals"))
    assert [p.name for p in tmp_path.iterdir()] == [CHOSEN_FILE]  # no draft left behind


def test_a_file_without_both_lines_is_no_choice(tmp_path: Path) -> None:
    (tmp_path / CHOSEN_FILE).write_text("/r/results/1\n", encoding="utf-8")
    assert chosen_folders(tmp_path) is None


def test_the_cases_a_worker_did_not_select_are_read_back(tmp_path: Path) -> None:
    assert unselected(tmp_path) == ()
    tell_unselected(tmp_path, (("a", "evals/a"), ("b", "evals/b")))
    assert unselected(tmp_path) == (("a", "evals/a"), ("b", "evals/b"))
    (tmp_path / UNSELECTED_FILE).write_text('[["a", "x"], ["b"], 3, "c"]', encoding="utf-8")
    assert unselected(tmp_path) == (("a", "x"),)
    (tmp_path / UNSELECTED_FILE).write_text("{not json", encoding="utf-8")
    assert unselected(tmp_path) == ()
