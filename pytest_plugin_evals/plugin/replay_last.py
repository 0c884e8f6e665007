"""``--eval-agent replay:last``: replay the newest comparable session's recorded runs.

The session is picked as ``--eval-compare last`` picks it
(:mod:`pytest_plugin_evals.reporting.earlier`: complete, not itself a replay, covering the
selected cases, written by this plugin), and must hold ``runs/``; any agent's runs will do.
Each process picks once its collection is done (every xdist worker collects the same items,
so each finds the same folder) and replays that folder; the controller says which it took,
and why it passed over newer ones. When none is comparable, that is the session's one usage
error, before any run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.plugin.keys import settings_key, shared_key, stamp_key
from pytest_plugin_evals.plugin.loaded import eval_items
from pytest_plugin_evals.plugin.session import session_key
from pytest_plugin_evals.recording.folders import replayed, tell_replayed
from pytest_plugin_evals.reporting.earlier import replay_last, selected_cases
from pytest_plugin_evals.settings import common_suite_root, results_dir
from pytest_plugin_evals.settings.agent import share_problem


class ReplayLast:
    """Picks the folder ``replay:last`` replays (registered in every process)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        #: Said in the summary: which folder it replayed, and the newer ones passed over.
        self.notices: list[str] = []

    @pytest.hookimpl(tryfirst=True)  # before the agent is made and checked
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        config = self.config
        items = eval_items(session.items)
        root = common_suite_root([i.case.suite_root for i in items])
        if root is None:
            return
        own = results_dir(config.stash[settings_key], root, config.stash[stamp_key])
        cases = selected_cases((i.case, i.agent_label) for i in items)
        folder, said = replay_last(root / "results", own, cases)
        if folder is not None:
            self.use(folder, [said])
        if not hasattr(config, "workerinput"):
            if folder is None:
                raise pytest.UsageError(said)
        elif folder is None:  # the controller reports it as the agent's problem
            share_problem(config.stash[shared_key], said)
        else:
            tell_replayed(config.stash[shared_key], folder, [said])

    def use(self, folder: Path, notices: list[str]) -> None:
        """Replay ``folder`` in this process."""
        config = self.config
        settings = replace(config.stash[settings_key], agent=f"replay:{folder}")
        config.stash[settings_key] = settings
        session = config.stash.get(session_key, None)
        if session is not None:
            session.settings = settings
        self.notices = list(notices)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """On the xdist controller: the folder the first worker picked (none: the worker's
        problem, if any, is reported as the agent's)."""
        picked = None if self.notices else replayed(self.config.stash[shared_key])
        if picked is not None:
            self.use(*picked)
