"""Where a kept run lives in a results folder: ``<results>/runs/<case key>/<arm>-<run>/``
holding ``trace.jsonl``, ``meta.json`` and ``files/``."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path, PurePath
from typing import Protocol

from pytest_plugin_evals.util.capture import MAX_KEPT_FILE as _MAX_KEPT_FILE

META = "meta.json"
TRACE = "trace.jsonl"
FILES = "files"

#: Created files larger than this are listed but not copied.
MAX_KEPT_FILE = _MAX_KEPT_FILE


#: How much of a case's name or path its folder name keeps (a hash keeps it unique).
SLUG_LENGTH = 60


def slug(text: str) -> str:
    """``text`` as a readable folder name: letters of any script, digits, ``.``, ``_`` and
    ``-``; anything else becomes ``-``."""
    text = unicodedata.normalize("NFC", text)
    made = re.sub(r"[^\w.-]+", "-", text).strip("-.")[:SLUG_LENGTH].strip("-.")
    return made or "case"


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def unique_slug(text: str) -> str:
    """``slug(text)`` and a short hash of ``text``: readable, and unique to ``text``."""
    return f"{slug(text)}-{short_hash(text)}"


class Placed(Protocol):
    """What places a case in a results folder: a :class:`~pytest_plugin_evals.model.Case`, or
    the controller's ``CaseInfo`` of it (its paths as strings)."""

    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def path(self) -> PurePath | str: ...
    @property
    def dir(self) -> PurePath | str: ...
    @property
    def suite_root(self) -> PurePath | str: ...


def case_key(case: Placed) -> str:
    """The case's folder name in a results folder: stable (the same case gets the same folder
    in every session) and unique within its suite (a readable slug of its folder, or of its
    suite file and name, and a short hash of its path and name). ``a b``, ``a-b`` and ``a?b``
    get three folders; ``été`` stays readable."""
    own_folder = case.source in ("prose", "case_yaml", "mixed")
    where = Path(case.dir if own_folder else case.path)
    try:
        rel = where.relative_to(case.suite_root).as_posix()
    except ValueError:
        rel = where.name
    readable = slug(rel) if own_folder else f"{slug(rel)}--{slug(case.name)}"
    return f"{readable}-{short_hash(f'{rel}::{case.name}')}"


def run_folder(runs_dir: Path, case: Placed, arm: str, run: int, agent: str | None = None) -> Path:
    """A run's folder: ``<case key>/<arm>-<run>``, or ``<case key>/<agent>-<arm>-<run>`` in a
    session of several agents (``--eval-agents``)."""
    name = f"{arm}-{run}" if agent is None else f"{agent}-{arm}-{run}"
    return runs_dir / case_key(case) / name
