"""A run's isolated folders and environment.

Each run gets a fresh root holding ``config/``, ``home/`` (the working directory ``home/cwd``
is inside it), ``tmp/`` and ``out/``. HOME, the XDG folders, TMPDIR and the agent's config
folder point there, and only an allowlist of the operator's environment reaches the agent.
This module makes folders and dictionaries; it starts no process.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_plugin_evals.util.environment import isolated_environment


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
    def create(cls, root: Path) -> Sandbox:
        box = cls(root)
        for folder in (box.config, box.home, box.cwd, box.tmp, box.out):
            folder.mkdir(parents=True, exist_ok=True)
        return box

    @property
    def trace_file(self) -> Path:
        return self.out / "trace.jsonl"

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

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
