"""Command-line arguments that name runs or files of a directory case, read as plain strings
and paths (the shell's ``pytest_collection`` hook gives pytest the arguments this returns).

The session prints node ids such as ``evals/plants::plants[1]``, but pytest refuses ``::``
after a folder, and a case's ``prompt.md`` is not a file it collects. Such an argument is given
to pytest as the case folder, and the case's collector keeps the runs it names
(:class:`CasePick`).
"""

from __future__ import annotations

import os.path
from collections.abc import Iterable, Sequence
from pathlib import Path

from pytest_plugin_evals.suites.discover import CASE_FILE, PROMPT_FILE, SKIP_DIRS, evals_root
from pytest_plugin_evals.util.inert import is_inert


class CasePick:
    """A command-line argument naming runs of one directory-format case.

    ``evals/plants::plants[1]`` (one run), ``evals/plants::plants`` (every run of the case):
    pytest refuses ``::`` after a folder, so the argument is given to pytest as the case folder
    and the case's collector keeps the runs it names.
    """

    __slots__ = ("argument", "found", "name", "runs", "seen")

    def __init__(self, argument: str, name: str) -> None:
        self.argument = argument
        self.name = name
        self.seen = False  # the case folder was collected
        self.found = False  # and the name matched one of its items
        self.runs: list[str] = []  # the names of the case's items, when it was collected

    def selects(self, item_name: str, case_name: str) -> bool:
        return self.name in (item_name, case_name)


def picked(picks: Sequence[CasePick], runs: Sequence[tuple[str, str] | None]) -> list[bool]:
    """Which of a case folder's items its picks keep (``runs``: each item's name and case name,
    None for an error: kept whatever run is named); each pick learns the folder was collected,
    its runs' names, and whether it matched one."""
    for pick in picks:
        pick.seen, pick.runs = True, [run[0] for run in runs if run is not None]
    kept = []
    for run in runs:
        chosen = picks if run is None else [pick for pick in picks if pick.selects(*run)]
        for pick in chosen:
            pick.found = True
        kept.append(bool(chosen))
    return kept


def case_folder(path: Path, eval_paths: tuple[Path, ...]) -> Path | None:
    """The case folder that is or holds ``path``, when an evals folder collects it as a case."""
    folder = path if path.is_dir() else path.parent
    lineage = [folder, *folder.parents]
    for depth, root in enumerate(lineage):
        if evals_root(root, eval_paths, at_top=False) is not None:
            for below in reversed(lineage[:depth]):  # the first case folder under the root
                if below.name.startswith(".") or below.name in SKIP_DIRS or is_inert(below):
                    return None
                if (below / PROMPT_FILE).is_file() or (below / CASE_FILE).is_file():
                    return below
            return None
    return None


def may_name_a_case(arg: str, here: Path, eval_paths: tuple[Path, ...]) -> bool:
    """Whether a command-line argument (given in ``here``) could name runs, a file or a folder
    of a case: a node id that is not a Python file's, or a path inside an evals folder (named
    ``evals``, or one of ``eval_paths``) that is not a Python file. Cheap: no folder is read."""
    path, sep, _ = arg.partition("::")
    if path.endswith(".py"):
        return False
    if sep:
        return True
    full = Path(os.path.abspath(here / path))
    return (bool(eval_paths) or "evals" in full.parts) and full.exists()


def case_arguments(
    arguments: list[str], here: Path, eval_paths: tuple[Path, ...]
) -> tuple[list[str], dict[Path, list[CasePick]]] | None:
    """The arguments pytest is given in place of ``arguments`` (its own, given in ``here``),
    and the runs picked by name.

    An argument that names runs of a directory case (``evals/plants::plants[1]``, as the
    session prints it) or a path inside a case folder (``evals/plants/prompt.md``,
    ``evals/plants/graders/hi.md``) becomes the case folder; ``None`` when no argument does
    (folders and Python files only, :func:`may_name_a_case`: nothing is looked up).
    """
    if not any(may_name_a_case(arg, here, eval_paths) for arg in arguments):
        return None
    args: list[str] = []
    cases: dict[str, Path] = {}  # the arguments put in: case folders
    picks: dict[Path, list[CasePick]] = {}
    given: list[Path] = []  # paths given without ``::``: every case under them is collected
    whole: list[Path] = []  # case folders given by a file of theirs: collected whole
    for arg in arguments:
        strpath, sep, names = arg.partition("::")
        path = Path(os.path.abspath(here / strpath))
        case = case_folder(path, eval_paths) if path.exists() else None
        if case is None or (case == path and not sep):
            args.append(arg)
            if not sep:
                given.append(path)
            continue
        if str(case) not in cases:
            cases[str(case)] = case
            args.append(str(case))
        if sep:
            picks.setdefault(case, []).append(CasePick(arg, names))
        else:
            whole.append(case)
    if not cases:
        return None

    def covered(case: Path, by: list[Path]) -> bool:
        return any(path == case or path in case.parents for path in by)

    # A case folder another argument collects anyway is not given twice (pytest 8.0 would
    # collect the first of two overlapping arguments only).
    args = [arg for arg in args if arg not in cases or not covered(cases[arg], given)]
    return args, {case: p for case, p in picks.items() if not covered(case, given + whole)}


def picks_not_found(picks: Iterable[CasePick]) -> list[str]:
    """What is said of each picked run of a collected case that was not found, as pytest says
    it of a test that is not there."""
    return [
        f"not found: {p.argument}\n(the case's runs: {', '.join(p.runs)})"
        for p in picks
        if p.seen and not p.found
    ]
