"""What a run created is kept inert: no tool run in the results folder (or in a run folder kept
with ``--eval-keep-temp``) acts on it. A ``.git`` pointer to a folder whose config runs a
command, a folder shaped as a bare repository, an ``.envrc``, a ``.vscode/`` are stored under
other names; replay and the JSON document still see the names the run gave them."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_tree


def planted(canary: Path) -> dict[str, str]:
    """A repository pointer, the repository it points to and a bare repository, each of whose
    config runs a command that leaves ``canary-*`` beside ``canary``; and the files shells
    and editors act on."""
    config = (
        "[core]\n\tbare = {bare}\n"
        f'\tfsmonitor = "touch {canary}-fsmonitor-{{name}}; false"\n'
        f'\tpager = "touch {canary}-pager-{{name}}; cat"\n'
    )
    files = {
        "work/.git": "gitdir: ../evil\n",
        "work/notes.md": "notes\n",
        ".envrc": f"touch {canary}-envrc\n",
        ".vscode/settings.json": '{"python.defaultInterpreterPath": "./evil"}\n',
        "kept.inert": "a name that ends as a stored one\n",
    }
    for name, bare in (("evil", "false"), ("bare", "true")):
        files[f"{name}/HEAD"] = "ref: refs/heads/main\n"
        files[f"{name}/objects/keep"] = ""
        files[f"{name}/refs/keep"] = ""
        files[f"{name}/config"] = config.format(bare=bare, name=name)
    return files


def git_everywhere(root: Path, home: Path) -> None:
    """``git status`` in every folder under ``root``, ``git -C <folder> status`` from
    ``root``, and ``git branch`` on a terminal (which starts the configured pager)."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "PAGER": "cat",
    }
    folders = [root, *(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink())]
    for folder in folders:
        for argv, where in (
            (["git", "status"], folder),
            (["git", "-C", str(folder), "status"], root),
        ):
            subprocess.run(
                argv, cwd=where, env=env, timeout=30,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        main, tty = pty.openpty()
        try:
            subprocess.run(
                ["git", "branch"], cwd=folder, env=env, timeout=30,
                stdin=subprocess.DEVNULL, stdout=tty, stderr=tty,
            )  # fmt: skip
        finally:
            os.close(tty)
            os.close(main)


def test_kept_files_are_inert_and_replay_under_their_names(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    canary = pytester.path / "canary"
    files = planted(canary)
    write_tree(
        pytester.path,
        {
            "evals/plant/prompt.md": "---\nruns: 1\n---\nPlant files.\n",
            "evals/plant/graders/done.md": "---\ntype: regex\npattern: done\n---\n",
            # A file target reads the file under the name the run gave it, replayed too.
            "evals/plant/graders/pointer.md": "---\ntype: regex\n"
            "target: {source: file, path: work/.git}\npattern: 'gitdir: ../evil'\n---\n",
        },
    )
    agent = scripted_agent([{"match": "Plant", "reply": "done", "files": files}])
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-output-dir", "rec",
        "--eval-json", "out.json", "--eval-keep-temp", "--basetemp", "tmp",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    made = read_doc("out.json")["cases"][0]["arms"]["with"][0]["filesCreated"]
    assert made == sorted(files)

    # Nothing a run left, kept or in its kept folder, runs when git looks at it.
    git_everywhere(pytester.path / "rec", pytester.path)
    git_everywhere(pytester.path / "tmp", pytester.path)
    assert not list(pytester.path.glob("canary*")), "git ran a command an agent wrote"
    for kept in (pytester.path / "rec", pytester.path / "tmp"):
        names = {p.name for p in kept.rglob("*")}
        assert not names & {".git", "HEAD", ".envrc", ".vscode"}, kept
    (stored,) = (pytester.path / "rec" / "runs").glob("*/*/files")
    assert (stored / "work" / ".git.inert").read_text(encoding="utf-8") == "gitdir: ../evil\n"
    assert (stored / "kept.inert.inert").is_file()
    (box,) = (pytester.path / "tmp").rglob("cwd")
    assert (box / ".git.inert" / "config").is_file()  # the run's own repository, kept inert

    # Replay restores each file under its own name, and lists it so.
    again = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", "replay:rec", "--eval-output-dir", "again",
        "--eval-json", "second.json",
    )  # fmt: skip
    again.assert_outcomes(passed=1)
    assert read_doc("second.json")["cases"][0]["arms"]["with"][0]["filesCreated"] == made
    for report in ("rec", "again"):  # the report lists them by those names too
        page = (pytester.path / report / "report.html").read_text(encoding="utf-8")
        assert "<code>work/.git</code>" in page and "<code>.vscode/settings.json</code>" in page
    (restored,) = (pytester.path / "again" / "runs").glob("*/*/files")
    assert sorted(
        p.relative_to(restored).as_posix() for p in restored.rglob("*") if p.is_file()
    ) == sorted(p.relative_to(stored).as_posix() for p in stored.rglob("*") if p.is_file())
