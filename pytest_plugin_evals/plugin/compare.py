"""``--eval-compare``: the earlier session this one is compared with, found and read
(:func:`~..engine.selected.find_earlier`) once collection is done and eval items are to run,
before any run; one that cannot be read is the usage error. Under pytest-xdist only the
workers collect: the controller reads what the first worker's collection found once it arrives.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import pytest_plugin_evals.plugin.options as options
from pytest_plugin_evals.engine.selected import compared_cases, find_earlier, tell_cases, told_cases
from pytest_plugin_evals.plugin.keys import shared_key, stamp_key
from pytest_plugin_evals.plugin.loaded import eval_items
from pytest_plugin_evals.reporting.earlier import CaseKey, EarlierError
from pytest_plugin_evals.settings import EvalSettings

if TYPE_CHECKING:
    from pytest_plugin_evals.reporting.result import SessionResult

#: config: the earlier session ``--eval-compare`` names (read on the controller).
earlier_key: pytest.StashKey[EarlierSession] = pytest.StashKey()


class EarlierSession:
    """Finds and reads the earlier session (registered in every process under
    ``--eval-compare``; only the controller reads, a worker tells it its suite root)."""

    def __init__(self, config: pytest.Config, settings: EvalSettings) -> None:
        self.config = config
        self.settings = settings
        #: The earlier session's document, and its result, once read.
        self.document: Path | None = None
        self.before: SessionResult | None = None
        #: Said in the summary: which session ``last`` took, or that it found none, and the
        #: newer ones it passed over.
        self.notices: list[str] = []
        self.looked = False

    @pytest.hookimpl(tryfirst=True)  # a worker writes its root before xdist reports its items
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        option = self.config.option
        if getattr(option, "collectonly", False) or getattr(option, "setupplan", False):
            return
        evals = eval_items(session.items)
        found = compared_cases([(i.nodeid, i.case, i.agent_label, i.run, i.two_arm) for i in evals])
        if found is None:
            return
        if not hasattr(self.config, "workerinput"):
            self.look(*found)
            return
        tell_cases(self.config.stash[shared_key], *found)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """On the xdist controller: the first worker's collection names the suite root."""
        found = None if self.looked else told_cases(self.config.stash[shared_key])
        if found is not None:
            self.look(*found)

    def look(self, suite_root: Path, cases: list[CaseKey]) -> None:
        """Find and read the earlier session (once)."""
        if self.looked or self.settings.compare is None:
            return
        self.looked = True
        stamp, where = self.config.stash[stamp_key], options.where(self.config, "compare")
        try:
            found = find_earlier(self.settings, suite_root, cases, stamp, where)
        except EarlierError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.document, self.before, self.notices = found

    def compared(self, result: SessionResult) -> SessionResult:
        """``result`` with its comparison with the earlier session (when one was read)."""
        from pytest_plugin_evals.reporting.compare import compared

        return compared(result, self.before, self.document, self.settings.margin)
