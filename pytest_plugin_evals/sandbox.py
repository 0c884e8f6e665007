"""A run's isolated folders and environment.

Each run gets a fresh root holding ``config/``, ``home/`` (the working directory ``home/cwd``
is inside it, a fresh git repository when the agent wants one), ``tmp/`` and ``out/``. HOME,
the XDG folders, TMPDIR and the agent's config folder point there, and only an allowlist of the
operator's environment reaches the agent. This module makes folders and dictionaries; it starts
no process.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_plugin_evals.util.environment import isolated_environment
from pytest_plugin_evals.util.inert import defuse_tree, is_inert, mark_inert

#: The configuration of every run's repository: what ``git init`` writes, then the hardening
#: (an identity, no hooks, no credential helper, no signing).
GIT_CONFIG = """\
[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
\tlogallrefupdates = true
\thooksPath = /dev/null
[user]
\tname = Plugin Eval
\temail = plugin-eval@localhost
[credential]
\thelper =
[commit]
\tgpgsign = false
"""


@dataclass
class Sandbox:
    """The folders of one run."""

    root: Path
    config: Path = field(init=False)
    home: Path = field(init=False)
    cwd: Path = field(init=False)
    tmp: Path = field(init=False)
    out: Path = field(init=False)
    _before: frozenset[str] = field(init=False, default=frozenset())

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        self.config = self.root / "config"
        self.home = self.root / "home"
        self.cwd = self.home / "cwd"
        self.tmp = self.root / "tmp"
        self.out = self.root / "out"

    @classmethod
    def create(cls, root: Path, *, git_repository: bool = False) -> Sandbox:
        """A run's folders at ``root``, the cwd a fresh git repository when ``git_repository``
        is set (what git needs to see one; it makes the rest when it needs it, and git need not
        be installed for an agent to find it)."""
        root = Path(root)
        # A kept run folder (``--eval-keep-temp``) is never collected: inside a folder of
        # runs marked as a whole (one marker, not one a run), or marked itself.
        if is_inert(root.parent):
            os.mkdir(root)
        else:
            mark_inert(root)
        home = root / "home"
        for folder in (root / "config", home, home / "cwd", root / "tmp", root / "out"):
            os.mkdir(folder)
        if git_repository:
            git_dir = home / "cwd" / ".git"
            for folder in (git_dir, git_dir / "objects", git_dir / "refs"):
                os.mkdir(folder)
            (git_dir / "HEAD").write_text("ref: refs/heads/master\n", encoding="utf-8")
            (git_dir / "config").write_text(GIT_CONFIG, encoding="utf-8")
        return cls(root)

    @property
    def trace_file(self) -> Path:
        """The run's trace as the harness keeps it (``out/`` is the harness's: no agent sees
        it)."""
        return self.out / "trace.jsonl"

    @property
    def outbox(self) -> Path:
        """The folder an agent may write its own trace into (a ``cmd:`` agent's
        ``EVAL_TRACE_FILE``), made by the adapter that wants it; read as hostile."""
        return self.root / "outbox"

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` (already filtered) with every home, temp and config variable pointed here."""
        return isolated_environment(base, home=self.home, tmp=self.tmp, config=self.config)

    def snapshot(self) -> None:
        """Remember which files exist now: they are not "created during the run"."""
        self._before = frozenset(self.list_files())

    def list_files(self) -> list[str]:
        """Every file under the cwd, relative and ``/``-separated (``.git`` skipped)."""
        found: list[str] = []
        base = str(self.cwd)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            rel = os.path.relpath(dirpath, base)
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            found.extend(prefix + name for name in filenames)
        return found

    def created_files(self) -> list[str]:
        """Files that exist now and did not at the last snapshot, sorted."""
        return sorted(set(self.list_files()) - self._before)

    def keep(self) -> None:
        """Keep the run's folders for inspection (``--eval-keep-temp``), inert as the results
        are: every name a tool acts on (the repository's ``.git``, an ``.envrc`` the agent
        wrote) renamed with :data:`~pytest_plugin_evals.util.inert.SUFFIX`."""
        defuse_tree(self.root)

    def remove(self) -> None:
        """Delete the run's folders: one ``rmdir`` each when the run left them empty, else the
        whole tree (``rmtree`` follows no link)."""
        try:
            for folder in (self.cwd, self.home, self.config, self.tmp, self.out, self.root):
                os.rmdir(folder)  # a link or a folder with something in it: not empty
        except OSError:
            shutil.rmtree(self.root, ignore_errors=True)
