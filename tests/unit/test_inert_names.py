"""The names kept files are stored under: no tool acts on them, and each gives back the name the
run wrote."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_plugin_evals.util.inert import (
    ACTIVE_NAMES,
    SUFFIX,
    defuse_tree,
    inert_path,
    is_active,
    original_name,
    original_path,
    stored_name,
    stored_path,
)

NAMES = [
    ".git", "HEAD", "head", ".GIT", ".git.", ".git ", ".g\u200cit", ".envrc", ".vscode",
    "CLAUDE.md", "notes.md", "config", "x.inert", ".git.inert", ".git.inert.inert", "é",
]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_a_stored_name_is_inert_and_gives_back_the_name(name: str) -> None:
    stored = stored_name(name)
    assert not is_active(stored)
    assert original_name(stored) == name
    assert stored == name or stored == name + SUFFIX


def test_every_active_name_is_stored_renamed_and_no_stored_name_is_active() -> None:
    for name in ACTIVE_NAMES:
        assert stored_name(name) == name + SUFFIX
        assert not is_active(name + SUFFIX)
        assert not is_active(name.upper() + SUFFIX)


def test_paths_are_stored_part_by_part() -> None:
    assert stored_path("work/.git") == "work/.git.inert"
    assert stored_path(".vscode/settings.json") == ".vscode.inert/settings.json"
    assert stored_path("bare/HEAD") == "bare/HEAD.inert"
    assert original_path("work/.git.inert") == "work/.git"
    assert original_path("a.inert.inert/b") == "a.inert/b"
    # A name no session stores: it would lead out of the folder.
    assert original_path("...inert/x") is None
    assert original_path(".inert") is None
    # Copying what may not be inert: only what a tool acts on is renamed, a stored path stays.
    assert inert_path("with-1/files/work/.git") == "with-1/files/work/.git.inert"
    assert inert_path("with-1/files/x.inert.inert") == "with-1/files/x.inert.inert"
    assert inert_path(stored_path("a/.git.inert/.envrc")) == stored_path("a/.git.inert/.envrc")


def test_a_kept_folder_is_defused_in_place_without_losing_a_file(tmp_path: Path) -> None:
    root = tmp_path / "box"
    names = [".git", ".git.inert", ".git.inert.inert"]
    for name in names:
        (root / "cwd" / name).mkdir(parents=True)
        (root / "cwd" / name / "config").write_text(name, encoding="utf-8")
    (root / "cwd" / "sub").mkdir()
    (root / "cwd" / "sub" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (root / "cwd" / ".envrc").symlink_to("/etc/passwd")
    locked = root / "cwd" / "locked"
    locked.mkdir()
    (locked / ".vscode").write_text("{}", encoding="utf-8")
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    defuse_tree(root)
    for name in names:
        assert (root / "cwd" / stored_name(name) / "config").read_text(encoding="utf-8") == name
    assert sorted(os.listdir(root / "cwd")) == sorted(
        [*(stored_name(n) for n in names), "sub", ".envrc.inert", "locked"]
    )
    assert os.listdir(root / "cwd" / "sub") == ["HEAD.inert"]
    assert os.readlink(root / "cwd" / ".envrc.inert") == "/etc/passwd"  # the link, not followed
    assert os.listdir(locked) == [".vscode.inert"]
