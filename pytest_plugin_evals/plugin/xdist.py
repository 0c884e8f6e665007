"""What only an xdist controller needs (registered only when pytest-xdist is active).

The workers get the session's timestamp (so every run lands in one results folder), the
folder of its shared files (the stop sign) and a channel to the session's budget (cost
ceiling, rate-limit pause, run slots: :mod:`pytest_plugin_evals.engine.wire`); the session
learns which run items were selected from the workers' collection. An interruption is mostly
not the controller's business: each process stops its own part, and its reports come the
ordinary way (see :mod:`.interrupts`); the controller only makes sure the session ends as
interrupted.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plugin_evals.engine.wire import BUDGET_CHANNEL, CLOSED, serve
from pytest_plugin_evals.plugin.interrupts import WHY, interrupted
from pytest_plugin_evals.plugin.keys import settings_key, shared_key, stamp_key
from pytest_plugin_evals.plugin.limiter import session_budget
from pytest_plugin_evals.plugin.session import EvalSession


class XdistHooks:
    def __init__(self, session: EvalSession) -> None:
        self.session = session

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        """An interrupted session ends as interrupted. pytest-xdist ≥ 3.6 ends it so once a
        worker stopped (``session.shouldstop``); an older one has its workers run each item they
        were sent (each says its run was not started) and ends the loop as if nothing happened."""
        result = yield
        if interrupted(self.session.config):
            raise session.Interrupted(WHY)
        return result

    def pytest_configure_node(self, node: Any) -> None:
        config = node.config
        node.workerinput["eval_stamp"] = config.stash[stamp_key]
        node.workerinput["eval_shared"] = str(config.stash[shared_key])
        # The session's one budget, reached by the worker over a channel of the gateway xdist
        # opened to it (any host): the controller answers each request in execnet's thread.
        budget = session_budget(config, config.stash[settings_key])
        channel = node.gateway.newchannel()
        channel.setcallback(serve(budget, channel, node.gateway.id), endmarker=CLOSED)
        node.workerinput[BUDGET_CHANNEL] = channel

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.session.expect(ids)
