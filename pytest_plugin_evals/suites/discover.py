"""Finding cases and suite files under an evals folder.

A case dir is a directory that directly holds ``prompt.md`` and/or ``case.yaml``; the walk
recurses through plain group dirs, never descends into a case dir, and skips ``results``,
``mocks``, ``node_modules``, ``.claude``, dot-dirs and folders of kept runs (see
``util.inert``). A suite file is a ``.json`` / ``.yaml`` / ``.yml`` file outside case dirs
whose top level is a mapping with ``cases:`` (evals.json, sy suites). A file that looks like a
suite but does not parse is still returned, so loading it reports the syntax error instead of
dropping the file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytest_plugin_evals.util.inert import INERT_MARKER
from pytest_plugin_evals.util.safeload import OverBound, json_data, read_text, yaml_data

PROMPT_FILE = "prompt.md"
CASE_FILE = "case.yaml"
SKIP_DIRS = frozenset({"results", "mocks", "node_modules", ".claude", "__pycache__"})
SUITE_SUFFIXES = frozenset({".json", ".yaml", ".yml"})
#: Names that are suites by name alone (a broken one must still be reported).
SUITE_NAMES = frozenset({"evals.json", "evals.yaml", "evals.yml"})
NOT_SUITES = frozenset({"package.json", "package-lock.json", CASE_FILE})
#: skill-creator's trigger evals (a list, not a mapping with ``cases``).
TRIGGER_FILE = "trigger_eval.json"
#: Keys of a session's JSON result document, which also has ``cases``: never a suite.
RESULT_KEYS = frozenset({"schemaVersion", "cases", "aggregates"})
_YAML_CASES = re.compile(r"^[\"']?cases[\"']?[ \t]*:", re.MULTILINE)


@dataclass(frozen=True)
class Source:
    """One thing to load: a case directory or a suite file."""

    kind: Literal["case_dir", "suite_file"]
    path: Path


def is_evals_dir(path: Path) -> bool:
    """Whether ``path`` is a directory named ``evals``."""
    return path.name == "evals" and path.is_dir()


def walk(evals_dir: Path) -> list[Source]:
    """Every case dir and suite file under ``evals_dir``, sorted by path."""
    found: list[Source] = []
    if evals_dir.is_dir():
        _walk(evals_dir, found, set())
    return sorted(found, key=lambda source: source.path.parts)


def _walk(folder: Path, found: list[Source], visited: set[str]) -> None:
    real = os.path.realpath(folder)
    if real in visited:  # a symlink loop
        return
    visited.add(real)
    try:
        with os.scandir(folder) as scan:
            entries = list(scan)
    except OSError:
        return
    if any(e.name == INERT_MARKER for e in entries):
        return  # kept runs: what agents wrote there is never a case
    if any(e.name in (PROMPT_FILE, CASE_FILE) and _is_file(e) for e in entries):
        found.append(Source("case_dir", folder))
        return
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        path = folder / name
        if _is_dir(entry):
            if name not in SKIP_DIRS:
                _walk(path, found, visited)
        elif (name == TRIGGER_FILE and _is_file(entry)) or (
            os.path.splitext(name)[1].lower() in SUITE_SUFFIXES
            and name not in NOT_SUITES
            and _is_file(entry)
            and is_suite_file(path)
        ):
            found.append(Source("suite_file", path))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def is_suite_file(path: Path) -> bool:
    """Whether a JSON/YAML file is a suite: a mapping with ``cases``, or one that looks like it.

    Reads the file once; parses it only when the text mentions ``cases`` (or the file is named
    like a suite). A file that looks like a suite but does not parse counts as one.
    """
    try:
        text = read_text(path)
    except OverBound:  # loading it says so, when it looks like a suite
        text = _head(path)
    except (OSError, UnicodeDecodeError):
        return path.name in SUITE_NAMES
    is_json = path.suffix.lower() == ".json"
    named = path.name in SUITE_NAMES
    if is_json:
        if not named and '"cases"' not in text:
            return False
    elif not named and not _YAML_CASES.search(text) and '"cases"' not in text:
        return False
    try:
        data = json_data(text) if is_json else _load_yaml(text)
    except ValueError:
        return True
    if isinstance(data, dict) and data.keys() >= RESULT_KEYS:
        return False  # a session's result document (results kept inside the evals folder)
    return named or (isinstance(data, dict) and "cases" in data)


def _load_yaml(text: str) -> object:
    """Parse YAML (imported here: finding no suite must not load a YAML parser)."""
    import yaml

    try:
        return yaml_data(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _head(path: Path) -> str:
    """The start of a file too large to read whole: enough to tell whether it is a suite."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return handle.read(64 * 1024)
    except OSError:
        return ""


def has_evals(path: Path) -> bool:
    """Whether ``path`` is a package.json with ``ai.evals`` (cheap: a text check first).

    A file that mentions ``"evals"`` but is not valid JSON counts, so loading it reports why.
    """
    try:
        text = read_text(path)
    except OverBound:
        return True  # loading it says so
    except (OSError, UnicodeDecodeError):
        return False
    if '"evals"' not in text:
        return False
    try:
        data = json_data(text)
    except ValueError:
        return True
    ai = data.get("ai") if isinstance(data, dict) else None
    return isinstance(ai, dict) and "evals" in ai
