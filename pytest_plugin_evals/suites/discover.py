"""Finding cases and suite files under an evals folder.

A case dir is a directory that directly holds ``prompt.md`` and/or ``case.yaml``; a folder
that holds neither but looks like a case (a ``graders/`` folder, or a ``Prompt.md`` /
``prompt.txt``) is returned too, so loading it says what is missing. The walk recurses through
plain group dirs, never descends into a case dir, and skips ``results``, ``mocks``,
``node_modules``, ``.claude``, dot-dirs and folders of kept runs (see ``util.inert``). A suite
file is a ``.json`` / ``.yaml`` / ``.yml`` file outside case dirs whose top level is a mapping
with ``cases:`` (evals.json, sy suites), a JSON mapping with an ``evals`` list
(skill-creator's evals.json, whatever its name: ``<skill>-evals.json``), or a trigger file
(``trigger_eval.json``, ``<skill>_trigger_eval.json``). A file that looks like a suite but does
not parse is still returned, so loading it reports the syntax error instead of dropping the
file; any other JSON/YAML file is left unread, and :func:`unread` says why.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytest_plugin_evals.util.inert import INERT_MARKER
from pytest_plugin_evals.util.safeload import OverBound, json_data, read_text, yaml_data
from pytest_plugin_evals.util.trigger_files import TRIGGER_FILE as TRIGGER_FILE
from pytest_plugin_evals.util.trigger_files import is_trigger_file as is_trigger_file

PROMPT_FILE = "prompt.md"
CASE_FILE = "case.yaml"
GRADERS_DIR = "graders"
SKIP_DIRS = frozenset({"results", "mocks", "node_modules", ".claude", "__pycache__"})
SUITE_SUFFIXES = frozenset({".json", ".yaml", ".yml"})
#: Names that are suites by name alone (a broken one must still be reported).
SUITE_NAMES = frozenset({"evals.json", "evals.yaml", "evals.yml"})
NOT_SUITES = frozenset({"package.json", "package-lock.json", CASE_FILE})
#: Keys of a session's JSON result document, which also has ``cases``: never a suite.
RESULT_KEYS = frozenset({"schemaVersion", "cases", "aggregates"})
#: skill-creator's folder of input files: a JSON/YAML file there is no suite, and expected not
#: to be one.
INPUT_DIR = "files"
#: A file that is no suite larger than this is not parsed to say why.
UNREAD_PARSE_LIMIT = 2 * 1024 * 1024
_YAML_CASES = re.compile(r"^[\"']?cases[\"']?[ \t]*:", re.MULTILINE)


@dataclass(frozen=True)
class Source:
    """One thing to load: a case directory or a suite file."""

    kind: Literal["case_dir", "suite_file"]
    path: Path


#: pytest's default ``norecursedirs``.
PYTEST_NORECURSEDIRS = [
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
]


class Trees:
    """The case folders and suite files of each evals folder collected (each read once), and
    what collection decides from them about a path."""

    def __init__(self) -> None:
        self._sources: dict[Path, dict[Path, Source]] = {}

    def read(self, root: Path) -> None:
        """Read the case folders and suite files of the evals folder ``root`` (once)."""
        if root not in self._sources:
            self._sources[root] = {source.path: source for source in walk(root)}

    def find(self, path: Path) -> tuple[Path, Source | None] | None:
        """The evals folder whose tree (read before) holds ``path``, and the source ``path`` is
        (None: a group of cases, or a file that is neither)."""
        text = str(path)
        for root, sources in self._sources.items():
            top = str(root)
            if text == top or text.startswith(top + os.sep):
                return root, sources.get(path)
        return None

    def never_collected(self, path: Path) -> bool:
        """Whether ``path`` is in an evals folder's ``results/`` or ``mocks/`` (kept runs, mock
        files and their programs: never the project's tests)."""
        found = None if SKIP_DIRS.isdisjoint(path.parts) else self.find(path)
        return found is not None and not SKIP_DIRS.isdisjoint(path.relative_to(found[0]).parts)

    def kept_case(
        self, path: Path, norecursedirs: list[str], ignored: Iterable[Path], globs: Iterable[str]
    ) -> bool:
        """Whether ``path`` is a case folder that pytest's default ``norecursedirs`` passes over
        for its name alone (``build``, ``dist``, ``venv``…): a case never vanishes for its name,
        as the reference runs it. ``--ignore`` (``ignored``), ``--ignore-glob`` (``globs``, as
        absolute patterns) and the project's own ``norecursedirs`` still hold."""
        if norecursedirs != PYTEST_NORECURSEDIRS:
            return False  # the project chose its own: it holds for cases too
        if not any(fnmatch.fnmatch(path.name, pattern) for pattern in PYTEST_NORECURSEDIRS):
            return False  # passed over for another reason (a conftest's collect_ignore)
        found = self.find(path)
        if found is None or found[1] is None or found[1].kind != "case_dir":
            return False
        if any(path == Path(os.path.abspath(given)) for given in ignored):
            return False
        return not any(fnmatch.fnmatch(str(path), os.path.abspath(glob)) for glob in globs)


def is_evals_dir(path: Path) -> bool:
    """Whether ``path`` is a directory named ``evals``."""
    return path.name == "evals" and path.is_dir()


def enclosing_evals(path: Path) -> Path | None:
    """The evals folder that holds ``path`` (not through a folder of :data:`SKIP_DIRS`), if
    any."""
    if path.name in SKIP_DIRS:
        return None
    for folder in path.parents:
        if is_evals_dir(folder):
            return folder
        if folder.name in SKIP_DIRS:
            return None
    return None


def walk(evals_dir: Path) -> list[Source]:
    """Every case dir and suite file under ``evals_dir``, sorted by path."""
    found: list[Source] = []
    if evals_dir.is_dir():
        _walk(evals_dir, found, set())
    return sorted(found, key=lambda source: source.path.parts)


def unread(evals_dir: Path) -> list[tuple[Path, str]]:
    """Every JSON/YAML file under ``evals_dir`` that is not read as a suite, with why."""
    skipped: list[tuple[Path, str]] = []
    if evals_dir.is_dir():
        _walk(evals_dir, [], set(), skipped)
    return sorted(skipped, key=lambda found: found[0].parts)


def _walk(
    folder: Path,
    found: list[Source],
    visited: set[str],
    skipped: list[tuple[Path, str]] | None = None,
) -> None:
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
    if any(e.name in (PROMPT_FILE, CASE_FILE) and _is_file(e) for e in entries) or looks_like_case(
        entries
    ):
        found.append(Source("case_dir", folder))
        return
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        path = folder / name
        if _is_dir(entry):
            if name not in SKIP_DIRS:  # files/: skill-creator's input files, no word on them
                _walk(path, found, visited, None if name == INPUT_DIR else skipped)
        elif (is_trigger_file(name) and _is_file(entry)) or (
            os.path.splitext(name)[1].lower() in SUITE_SUFFIXES
            and name not in NOT_SUITES
            and _is_file(entry)
            and is_suite_file(path)
        ):
            found.append(Source("suite_file", path))
        elif skipped is not None and os.path.splitext(name)[1].lower() in SUITE_SUFFIXES:
            why = why_unread(path)
            if why is not None:
                skipped.append((path, why))


def looks_like_case(entries: list[os.DirEntry[str]]) -> str | None:
    """What makes a folder without prompt.md and case.yaml look like a case: its ``graders/``
    folder, or a prompt file named otherwise (``Prompt.md``, ``prompt.txt``); None if nothing."""
    for entry in entries:
        if entry.name.lower().startswith("prompt.") and _is_file(entry):
            return entry.name
    if any(entry.name == GRADERS_DIR and _is_dir(entry) for entry in entries):
        return f"{GRADERS_DIR}/"
    return None


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
        if not named and '"cases"' not in text and '"evals"' not in text:
            return False
    elif not named and not _YAML_CASES.search(text) and '"cases"' not in text:
        return False
    try:
        data = json_data(text) if is_json else _load_yaml(text)
    except ValueError:
        return True
    if isinstance(data, dict) and data.keys() >= RESULT_KEYS:
        return False  # a session's result document (results kept inside the evals folder)
    return named or (isinstance(data, dict) and ("cases" in data or _skill_creator(data, path)))


def _skill_creator(data: dict[str, object], path: Path) -> bool:
    """skill-creator's evals.json shape (an ``evals`` list), in a JSON file of any name."""
    return path.suffix.lower() == ".json" and isinstance(data.get("evals"), list)


def why_unread(path: Path) -> str | None:
    """Why a JSON/YAML file outside case folders is not read as a suite, in words; None for
    a file that needs no word (a package.json, a session's kept result document)."""
    if path.name in NOT_SUITES:
        return None
    try:
        if path.stat().st_size > UNREAD_PARSE_LIMIT:
            return "not read: not named like a suite, and too large to look into (over 2 MB)"
        text = path.read_text(encoding="utf-8")
        data = json_data(text) if path.suffix.lower() == ".json" else _load_yaml(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return "not read: it does not parse, and it is not named like a suite (evals.json)"
    if isinstance(data, dict) and data.keys() >= RESULT_KEYS:
        return None
    if isinstance(data, list):
        got = "a list"
    elif isinstance(data, dict):
        keys = ", ".join(str(k)[:30] for k in list(data)[:5]) or "none"
        got = f"a mapping without a cases: or evals: list (its keys: {keys})"
    else:
        got = "neither a list nor a mapping"
    return (
        f"not read: it is {got}, not a suite — a suite is a mapping with a cases: list, "
        f"skill-creator's evals.json (an evals list), or a {TRIGGER_FILE}"
    )


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
    if path.name != "package.json":
        return False
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


def evals_root(path: Path, eval_paths: tuple[Path, ...], *, at_top: bool) -> Path | None:
    """The evals folder ``path`` is (named ``evals``, or one of ``eval_paths``), or, at the top
    of the collection tree, is inside: with no ini file, ``pytest evals/group`` or ``cd
    evals/case && pytest`` start there, and its cases still belong to that evals folder."""
    if is_evals_dir(path) or (eval_paths and path.resolve() in eval_paths):
        return path
    return enclosing_evals(path) if at_top else None


def named_evals_folders(args: Iterable[str], here: Path) -> list[Path]:
    """The evals folders a session's arguments (given in ``here``; none: ``here``) name, or hold
    as their ``evals/``."""
    named = [here / arg.partition("::")[0] for arg in args] or [here]
    return [p for n in named for p in (n, n / "evals") if is_evals_dir(p)]


#: pytest's exit status of a session that collected nothing (``ExitCode.NO_TESTS_COLLECTED``).
NO_TESTS_COLLECTED = 5


def folder_notes(args: Iterable[str], here: Path, exitstatus: int) -> list[str]:
    """What a session says of the evals folders its arguments name (:func:`named_evals_folders`):
    each JSON/YAML file there that is no suite, with why, and (when the session collected
    nothing) each folder without a case, with what a case is, rather than pytest's bare "no
    tests ran". Paths are shown relative to ``here`` when they are inside it."""
    notes: list[str] = []
    unique = list(dict.fromkeys(named_evals_folders(args, here)))
    for folder in unique:
        notes += [f"{_shown(path, here)}: {why}" for path, why in unread(folder)]
    if exitstatus != NO_TESTS_COLLECTED:
        return notes
    for folder in unique:
        if not walk(folder):
            notes.append(
                f"no eval cases found in {_shown(folder, here)}{os.sep}: a case is a folder there "
                "holding a prompt.md or a case.yaml, or a suite file (evals.json, a .yaml "
                "suite); see docs/reference/case-formats.md"
            )
    return notes


def _shown(path: Path, here: Path) -> Path:
    """``path`` relative to ``here`` when it is inside it."""
    try:
        return path.relative_to(here)
    except ValueError:
        return path
