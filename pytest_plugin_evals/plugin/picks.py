"""The runs a command-line argument picks by name, and the StashKey that holds them.

Apart from :mod:`.selection` (which reads the arguments) so that the entry point and the
collectors can ask for the picks without importing the loaders.
"""

from __future__ import annotations

from pathlib import Path

import pytest


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


#: config: the case folders whose runs the command line names (``evals/x::x[1]``), each with
#: its picks (a folder another argument collects whole is not in it).
case_picks_key: pytest.StashKey[dict[Path, list[CasePick]]] = pytest.StashKey()
