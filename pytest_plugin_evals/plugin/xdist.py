"""What only an xdist controller needs (registered only when pytest-xdist is active).

The workers get the session's timestamp (so every run lands in one results folder), the
folder of its shared files (the stop sign) and a channel to the session's budget (cost
ceiling, rate-limit pause, run slots: :mod:`pytest_plugin_evals.engine.wire`); the session
learns which run items were selected from the workers' collection. After an interruption,
the reports the workers sent that the controller had not read yet are read before the
document is written (see :meth:`XdistHooks.drain`).
"""

from __future__ import annotations

import contextlib
import queue
import time
from typing import Any

from pytest_plugin_evals.engine.wire import CLOSED, serve
from pytest_plugin_evals.plugin.keys import BUDGET_CHANNEL, settings_key, shared_key, stamp_key
from pytest_plugin_evals.plugin.limiter import session_budget
from pytest_plugin_evals.plugin.session import EvalSession

#: How long an interrupted controller waits for its workers' last reports.
DRAIN_SECONDS = 10.0


class XdistHooks:
    def __init__(self, session: EvalSession) -> None:
        self.session = session
        session.drain = self.drain

    def drain(self, seconds: float = DRAIN_SECONDS) -> None:
        """The session was interrupted: xdist stops reading the workers' events there, so the
        reports already sent (a run that had just ended) and those of the runs being stopped
        would be lost. Read them until every worker has finished (at most ``seconds``)."""
        dsession: Any = self.session.config.pluginmanager.get_plugin("dsession")
        events = getattr(dsession, "queue", None)
        if events is None or getattr(dsession, "sched", None) is None:
            return
        with contextlib.suppress(Exception):
            dsession.triggershutdown()  # a worker ends once its items are done (not started)
        waiting = set(getattr(dsession, "_active_nodes", ()))
        deadline = time.monotonic() + seconds
        try:
            while waiting and (left := deadline - time.monotonic()) > 0:
                try:
                    name, kwargs = events.get(timeout=min(left, 0.2))
                except queue.Empty:
                    continue
                if name == "testreport":
                    self.session.pytest_runtest_logreport(kwargs["rep"])
                elif name in ("workerfinished", "errordown"):
                    waiting.discard(kwargs.get("node"))
        except KeyboardInterrupt:
            return  # interrupted again: the document is written with what was read

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
