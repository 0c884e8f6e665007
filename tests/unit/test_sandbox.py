"""A run's folders: made fresh (ahead of need, in the background), with a hardened git
repository as the cwd, and deleted afterwards."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_plugin_evals.sandbox import Sandbox
from pytest_plugin_evals.util.inert import is_inert, mark_inert

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(box: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    env = box.environment({"PATH": os.environ["PATH"]})
    return subprocess.run(
        ["git", *args], cwd=box.cwd, env=env, capture_output=True, text=True, check=False
    )


@needs_git
def test_each_run_gets_a_fresh_hardened_repository(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    # The first run's folders are made on the spot; the next ones were made ahead of need.
    boxes = [Sandbox.create(runs / f"run-{n}", git_repository=True) for n in range(3)]
    for box in boxes:
        assert git(box, "config", "--get", "core.hooksPath").stdout.strip() == "/dev/null"
        helper = git(box, "config", "--get", "credential.helper")
        assert helper.returncode == 0 and helper.stdout.strip() == ""
        assert git(box, "config", "--get", "user.name").stdout.strip() == "Plugin Eval"
        assert git(box, "rev-parse", "--show-toplevel").stdout.strip() == str(box.cwd.resolve())
        assert box.list_files() == []  # .git is not a file of the run
        assert [p.name for p in box.home.iterdir()] == ["cwd"]
        assert [p.name for p in box.cwd.iterdir()] == [".git"]
        for folder in (box.config, box.tmp, box.out):
            assert folder.is_dir() and not any(folder.iterdir())
    # A commit in one run's repository is not in the next.
    first, second, _ = boxes
    (first.cwd / "a.txt").write_text("a", encoding="utf-8")
    git(first, "add", "a.txt")
    assert git(first, "commit", "-qm", "a").returncode == 0
    assert git(second, "log").returncode != 0  # no commits there


def test_folders_are_deleted(tmp_path: Path) -> None:
    box = Sandbox.create(tmp_path / "run")
    assert not (box.cwd / ".git").exists()  # no repository unless asked for
    assert sorted(p.name for p in box.root.iterdir()) == [
        ".pytest-plugin-evals-results",  # never collected, even when kept in the project
        "config",
        "home",
        "out",
        "tmp",
    ]
    (box.cwd / "made.txt").write_text("x", encoding="utf-8")
    box.remove()
    assert list(tmp_path.iterdir()) == []


def test_a_run_inside_a_folder_of_kept_runs_needs_no_marker_of_its_own(tmp_path: Path) -> None:
    mark_inert(tmp_path / "runs")
    box = Sandbox.create(tmp_path / "runs" / "run-1")
    assert not is_inert(box.root)  # the folder of runs is marked as a whole
    assert is_inert(box.root.parent)
    assert sorted(p.name for p in box.root.iterdir()) == ["config", "home", "out", "tmp"]


def test_removal_follows_no_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("x", encoding="utf-8")
    box = Sandbox.create(tmp_path / "run")
    os.rmdir(box.tmp)
    os.symlink(outside, box.tmp)  # an agent put a link in place of a folder
    box.remove()
    assert not box.root.exists()
    assert (outside / "keep.txt").is_file()
