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
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import pytest_plugin_evals.plugin.options as options
from pytest_plugin_evals.plugin.keys import shared_key, stamp_key
from pytest_plugin_evals.plugin.loaded import eval_items
from pytest_plugin_evals.settings import EvalSettings, common_suite_root, results_dir

if TYPE_CHECKING:
    from pytest_plugin_evals.reporting.result import SessionResult

#: config: the earlier session ``--eval-compare`` names (read on the controller).
earlier_key: pytest.StashKey[EarlierSession] = pytest.StashKey()
#: The suite root and selected cases a worker collected, in the session's shared folder.
ROOT_FILE = "compare-suite-root.json"
#: The ``--eval-compare`` value that names the newest earlier results folder.
LAST = "last"


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

    @property
    def where(self) -> str:
        return options.where(self.config, "compare")

    @pytest.hookimpl(tryfirst=True)  # a worker writes its root before xdist reports its items
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        option = self.config.option
        if getattr(option, "collectonly", False) or getattr(option, "setupplan", False):
            return
        from pytest_plugin_evals.reporting.earlier import case_key
        from pytest_plugin_evals.reporting.result import relative

        items = eval_items(session.items)
        root = common_suite_root([i.case.suite_root for i in items])
        if root is None:
            return
        cases = sorted(
            {
                case_key(
                    i.case.name, relative(str(i.case.dir), str(i.case.suite_root)), i.agent_label
                )
                for i in items
            }
        )
        if not hasattr(self.config, "workerinput"):
            self.look(root, cases)
            return
        target = self.config.stash[shared_key] / ROOT_FILE
        draft = target.with_name(f"{target.name}.{os.getpid()}")
        draft.write_text(json.dumps({"root": str(root), "cases": cases}), encoding="utf-8")
        os.replace(draft, target)

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
        if self.looked:
            return
        self.looked = True
        compare = self.settings.compare
        if compare is None:
            return
        from pytest_plugin_evals.reporting.earlier import (
            EarlierError,
            Wanted,
            agent_kind,
            pick,
            read_earlier,
        )

        if compare != LAST:
            try:
                self.document, self.before = read_earlier(Path(compare), self.where)
            except EarlierError as exc:
                raise pytest.UsageError(str(exc)) from None
            return

        settings = self.settings
        wanted = Wanted(
            cases=frozenset(cases),
            agent_kind=agent_kind(settings.agent),
            agent_labels=tuple(sorted(label for label, _ in settings.agents)),
            same_arms=True,
            baseline=settings.baseline_plugin,
            aa=settings.aa,
        )
        results_root = suite_root / "results"
        own = results_dir(settings, suite_root, self.config.stash[stamp_key])
        picked = pick(results_root, own, wanted)
        self.document, self.before = picked.document, picked.result
        self.notices.extend(picked.notices(self.where, results_root))

    def compared(self, result: SessionResult) -> SessionResult:
        """``result`` with its comparison with the earlier session (when one was read)."""
        if self.before is None or self.document is None:
            return result
        from pytest_plugin_evals.reporting.compare import compare

        comparison = compare(
            self.before,
            result,
            str(self.document),
            self.settings.margin,
            frozenset(result.suite.not_selected),
        )
        return replace(result, comparison=comparison)
