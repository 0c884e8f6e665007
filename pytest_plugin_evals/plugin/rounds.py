"""``--eval-runs auto`` in the shell: the engine's scheduler
(:class:`~pytest_plugin_evals.engine.scheduler.Scheduler`) held by the controller — the one
process at ``-n 0``, else pytest-xdist's controller — and the way each process reaches it.

Under xdist each worker talks to the controller over a channel of the execnet gateway xdist
already opened to it: the controller makes the channel in ``pytest_configure_node`` and hands
it over in ``workerinput`` (execnet carries channels), so it works the same for ``popen``,
``socket`` and ``ssh`` workers on any host, with no port or file of its own.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.engine.scheduler import (
    Answer,
    RemoteScheduler,
    Scheduler,
    answering,
    round_order,
    wait_answer,
)
from pytest_plugin_evals.plugin.keys import positions_key
from pytest_plugin_evals.plugin.loaded import record_of

if TYPE_CHECKING:
    from pytest_plugin_evals.settings import EvalSettings

#: The key ``workerinput`` carries the channel under.
CHANNEL_KEY = "eval_rounds"

_rounds_gate_key: pytest.StashKey[Scheduler | RemoteScheduler] = pytest.StashKey()


def ask(config: pytest.Config, nodeid: str, *, ahead: bool = False) -> Answer:
    """Whether this process may start the run of ``nodeid`` (None), or why it is skipped
    (:func:`~..engine.scheduler.wait_answer`: only an item's own setup waits for a look, never
    a run made ahead of its item, nor one started off the main thread)."""
    gate = config.stash.get(_rounds_gate_key, None)
    if gate is None:
        return None
    main = threading.current_thread() is threading.main_thread()
    return wait_answer(gate, nodeid, may_wait=main and not ahead)


class RoundsHooks:
    """The controller's hooks (registered at ``-n 0`` and on the xdist controller)."""

    def __init__(self, scheduler: Scheduler, config: pytest.Config) -> None:
        self.scheduler = scheduler
        self.config = config
        self.channels: list[Any] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not hasattr(session.config, "workerinput") and session.items:
            self.scheduler.expect(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.scheduler.expect(ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        channel = node.gateway.newchannel()
        channel.setcallback(answering(self.scheduler, channel))
        self.channels.append(channel)
        node.workerinput[CHANNEL_KEY] = channel

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Any:
        yield
        if report.when in ("setup", "call"):
            final = not (report.when == "setup" and report.passed)
            self.scheduler.take(report.nodeid, record_of(report), final=final)
        if self.config.pluginmanager.has_plugin("dsession") and self.scheduler.reordered():
            reorder_pending(self.config, self.scheduler)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        yield
        if nextitem is not None and self.scheduler.reordered():
            reorder_session(item.session, nextitem, self.scheduler)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        line = self.scheduler.summary()
        if line is not None:
            terminalreporter.write_line(line)


def order_rounds(items: list[pytest.Item]) -> None:
    """The items in the scheduler's round order (:func:`~..engine.scheduler.round_order`)."""
    two_arm = [item.nodeid if getattr(item, "two_arm", False) else None for item in items]
    items[:] = [items[i] for i in round_order(two_arm)]


def reorder_session(session: pytest.Session, nextitem: pytest.Item, scheduler: Scheduler) -> None:
    """At ``-n 0``: the items after the next one put in the scheduler's order
    (:meth:`~..engine.scheduler.Scheduler.pending_order`)."""
    items = session.items
    try:
        start = items.index(nextitem) + 1
    except ValueError:
        return
    rest = items[start:]
    items[start:] = [rest[i] for i in scheduler.pending_order([item.nodeid for item in rest])]
    session.stash[positions_key] = {it.nodeid: i for i, it in enumerate(items)}


def reorder_pending(config: pytest.Config, scheduler: Scheduler) -> None:
    """Under xdist (``--dist load``): the items the controller has not yet handed to a
    worker put in the scheduler's order (those a worker already holds keep theirs)."""
    dsession = config.pluginmanager.getplugin("dsession")
    sched = getattr(dsession, "sched", None)
    pending, collection = getattr(sched, "pending", None), getattr(sched, "collection", None)
    if not isinstance(pending, list) or not collection:
        return
    pending.sort(key=lambda i: scheduler.order_key(collection[i], i))


def register(config: pytest.Config, settings: EvalSettings) -> None:
    """Set up ``--eval-runs auto`` in this process: the scheduler on the controller, the
    asker on an xdist worker."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        channel = workerinput.get(CHANNEL_KEY)
        if channel is not None:
            config.stash[_rounds_gate_key] = RemoteScheduler(channel)
        return
    scheduler = Scheduler(settings.margin, settings.max_cost_usd, settings.runs_auto)
    config.stash[_rounds_gate_key] = scheduler
    config.stash[scheduler_key] = scheduler
    config.pluginmanager.register(RoundsHooks(scheduler, config), "plugin-evals-rounds")


#: The controller's scheduler (read by the session to write each case's stop).
scheduler_key: pytest.StashKey[Scheduler] = pytest.StashKey()
