"""``--eval-compare``: the earlier session this one is compared with.

It is found and read once collection is done and eval items are to run, before any run: a
document named by path that is missing or unreadable is one usage error. ``last`` is the
newest comparable session under ``<evals folder>/results/``, never this session's own
(:mod:`pytest_plugin_evals.reporting.earlier` says what is comparable); the summary says which
it took and why it passed over newer ones. Under pytest-xdist only the workers collect: each
writes its suite root and selected cases to the session's shared folder, and the controller
reads them when the first worker's collection arrives.

At the end the session compares its result with the earlier one
(:func:`pytest_plugin_evals.reporting.compare.compare`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import pytest_plugin_evals.plugin.options as options
from pytest_plugin_evals.plugin.keys import shared_key, stamp_key
from pytest_plugin_evals.plugin.loaded import eval_items
from pytest_plugin_evals.settings import EvalSettings, common_suite_root, results_dir
from pytest_plugin_evals.util.tempdirs import write_whole

if TYPE_CHECKING:
    from pytest_plugin_evals.reporting.result import SessionResult

#: config: the earlier session ``--eval-compare`` names (read on the controller).
earlier_key: pytest.StashKey[EarlierSession] = pytest.StashKey()
#: The suite root and selected cases a worker collected, in the session's shared folder.
ROOT_FILE = "compare-suite-root.json"


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
        from pytest_plugin_evals.reporting.earlier import selected_cases

        items = eval_items(session.items)
        root = common_suite_root([i.case.suite_root for i in items])
        if root is None:
            return
        cases = selected_cases((i.case, i.agent_label) for i in items)
        if not hasattr(self.config, "workerinput"):
            self.look(root, cases)
            return
        text = json.dumps({"root": str(root), "cases": cases})
        write_whole(self.config.stash[shared_key] / ROOT_FILE, text)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """On the xdist controller: the first worker's collection names the suite root."""
        if self.looked:
            return
        try:
            text = (self.config.stash[shared_key] / ROOT_FILE).read_text(encoding="utf-8")
        except FileNotFoundError:
            return  # that worker collected no eval item
        written = json.loads(text)  # this session's own worker wrote it
        cases = [(str(n), str(d), str(a)) for n, d, a in written["cases"]]
        self.look(Path(written["root"]), cases)

    def look(self, suite_root: Path, cases: list[tuple[str, str, str]]) -> None:
        """Find and read the earlier session (once)."""
        from pytest_plugin_evals.reporting.earlier import EarlierError, earlier_session, same_kind

        s = self.settings
        if self.looked or s.compare is None:
            return
        self.looked = True
        wanted = replace(
            same_kind(s.agent, s.agents, s.baseline_plugin, s.aa), cases=frozenset(cases)
        )
        own = results_dir(s, suite_root, self.config.stash[stamp_key])
        where = options.where(self.config, "compare")
        try:
            found = earlier_session(s.compare, where, suite_root / "results", own, wanted)
        except EarlierError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.document, self.before, self.notices = found

    def compared(self, result: SessionResult) -> SessionResult:
        """``result`` with its comparison with the earlier session (when one was read)."""
        from pytest_plugin_evals.reporting.compare import compared

        return compared(result, self.before, self.document, self.settings.margin)
