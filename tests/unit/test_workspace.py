"""Preparing a run's working directory: add_dirs copies, the scaffold script, git."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pytest_plugin_evals.agents.base import RunRequest
from pytest_plugin_evals.agents.workspace import copy_add_dirs, run_scaffold
from pytest_plugin_evals.model import Case
from pytest_plugin_evals.sandbox import Sandbox

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and bash")


def request_for(tmp_path: Path, **fields: object) -> RunRequest:
    case_dir = tmp_path / "plugin" / "evals" / "next"
    case_dir.mkdir(parents=True, exist_ok=True)
    case = Case(
        "next", "What next?", "case_yaml", case_dir / "case.yaml", case_dir, case_dir.parent,
        **fields,  # type: ignore[arg-type]
    )  # fmt: skip
    return RunRequest(
        case=case,
        arm="single",
        run=1,
        prompt=case.prompt,
        sandbox=Sandbox.create(tmp_path / "run"),
        plugin_dir=None,
        model=None,
        max_turns=10,
        timeout_seconds=60,
        allowed_tools=(),
    )


def test_add_dirs_are_copied_under_their_own_names(tmp_path: Path) -> None:
    request = request_for(tmp_path, add_dirs=("fixtures", "more/fixtures", "data", "missing"))
    case_dir = request.case.dir
    (case_dir / "fixtures").mkdir()
    (case_dir / "fixtures" / "a.txt").write_text("first", encoding="utf-8")
    (case_dir / "more" / "fixtures" / "sub").mkdir(parents=True)
    (case_dir / "more" / "fixtures" / "sub" / "a.txt").write_text("second", encoding="utf-8")
    (case_dir / "data").mkdir()
    copies = copy_add_dirs(request)
    context = request.sandbox.root / "context"
    assert copies == [context / "fixtures", context / "fixtures-2", context / "data"]
    assert (context / "fixtures" / "a.txt").read_text(encoding="utf-8") == "first"
    assert (context / "fixtures-2" / "sub" / "a.txt").read_text(encoding="utf-8") == "second"
    assert not (context / "fixtures" / "sub").exists()  # the two folders are not merged
    # The copies are outside the cwd: they are not "created during the run".
    assert not any(copy.is_relative_to(request.sandbox.cwd) for copy in copies)


def test_add_dirs_leave_out_links_that_leave_the_folder(tmp_path: Path) -> None:
    request = request_for(tmp_path, add_dirs=("fixtures",))
    case_dir = request.case.dir
    fixtures = case_dir / "fixtures"
    (fixtures / "inner").mkdir(parents=True)
    (fixtures / "inner" / "data.txt").write_text("data", encoding="utf-8")
    (case_dir / "graders").mkdir()
    (case_dir / "graders" / "answer.md").write_text("secret answer", encoding="utf-8")
    (fixtures / "answers").symlink_to(case_dir / "graders")
    (fixtures / "answer.md").symlink_to(case_dir / "graders" / "answer.md")
    (fixtures / "dangling").symlink_to(case_dir / "nothing-here")
    (fixtures / "loop").symlink_to(fixtures)
    (fixtures / "alias.txt").symlink_to(fixtures / "inner" / "data.txt")
    (fixtures / "inner-alias").symlink_to(fixtures / "inner")
    (copy,) = copy_add_dirs(request)
    names = sorted(os.listdir(copy))
    assert names == ["alias.txt", "inner", "inner-alias"]
    assert (copy / "alias.txt").read_text(encoding="utf-8") == "data"
    assert not (copy / "alias.txt").is_symlink()  # a copy, not a link into the case folder
    assert (copy / "inner-alias" / "data.txt").read_text(encoding="utf-8") == "data"


def test_scaffold_runs_in_the_cwd_with_the_run_environment(tmp_path: Path) -> None:
    request = request_for(tmp_path, scaffold_script="setup.sh")
    (request.case.dir / "setup.sh").write_text(
        'echo "$HOME" > where.txt\nmkdir -p src && echo v1 > src/version\n', encoding="utf-8"
    )
    env = request.sandbox.environment({"PATH": os.environ["PATH"]})
    assert run_scaffold(request, env) is None
    cwd = request.sandbox.cwd
    assert (cwd / "where.txt").read_text(encoding="utf-8").strip() == str(request.sandbox.home)
    assert (cwd / "src" / "version").read_text(encoding="utf-8") == "v1\n"


def test_a_failing_scaffold_reports_its_exit_and_stderr(tmp_path: Path) -> None:
    request = request_for(tmp_path, scaffold_script="setup.sh")
    (request.case.dir / "setup.sh").write_text(
        "echo noise\necho boom >&2\nexit 3\n", encoding="utf-8"
    )
    env = request.sandbox.environment({"PATH": os.environ["PATH"]})
    assert run_scaffold(request, env) == "scaffold failed (exit 3): boom"


def test_no_scaffold_script_runs_nothing(tmp_path: Path) -> None:
    request = request_for(tmp_path)
    assert run_scaffold(request, {}) is None
    assert not (request.sandbox.root / "scaffold").exists()
