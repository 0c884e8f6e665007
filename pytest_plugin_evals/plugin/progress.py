"""Progress you can watch while runs go on (``--eval-progress``): the hooks that feed the
display of :mod:`pytest_plugin_evals.engine.progress` (what it counts, when it draws).
Registered on the controller only (xdist replays its workers' ``pytest_runtest_logstart``,
``pytest_runtest_logreport`` and ``pytest_runtest_logfinish`` there), and silent until it knows
the session has eval runs. It writes to a duplicate of the terminal's descriptor: under ``-n0``
the item in flight has it captured."""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator, Iterable
from typing import TYPE_CHECKING, Any, TextIO

import pytest

from pytest_plugin_evals.engine.nodeids import case_group
from pytest_plugin_evals.engine.run_ahead import AHEAD_ATTRIBUTE
from pytest_plugin_evals.plugin.keys import budget_key
from pytest_plugin_evals.plugin.loaded import eval_item_class, eval_items, record_of
from pytest_plugin_evals.util.statusline import redraws

if TYPE_CHECKING:
    from pytest_plugin_evals.engine.progress import ProgressDisplay
    from pytest_plugin_evals.settings import EvalSettings


def register_progress(config: pytest.Config, settings: EvalSettings) -> None:
    """Register the progress display, unless it is off, pytest was asked to be very quiet, or
    there is no terminal reporter (``-p no:terminal``: no ``verbose`` option either)."""
    verbosity = getattr(config.option, "verbose", None)
    if settings.progress_seconds is None or verbosity is None or int(verbosity) <= -2:
        return
    config.pluginmanager.register(EvalProgress(config, settings), "plugin-evals-progress")


def _is_live(config: pytest.Config, stream: TextIO) -> bool:
    """Whether a live line can be drawn: a terminal that understands cursor moves, and no
    output of tests (``-s``) or live logs that could come between two of pytest's writes."""
    if not redraws(stream):
        return False
    if getattr(config.option, "capture", None) == "no":
        return False
    try:
        live_logs = bool(config.getini("log_cli"))
    except ValueError:  # the logging plugin is disabled
        live_logs = False
    return not live_logs and getattr(config.option, "log_cli_level", None) is None


class EvalProgress:
    def __init__(self, config: pytest.Config, settings: EvalSettings) -> None:
        self.config = config
        self.settings = settings
        #: The display, once the session's eval runs are known.
        self.display: ProgressDisplay | None = None
        self.closed = False

    def _know(self, evals: Iterable[str]) -> None:
        """The session's eval runs are known (the engine is imported only then: a session
        without them loads none of it)."""
        if self.display is not None or self.closed:
            return
        from pytest_plugin_evals.engine.progress import ProgressDisplay, RunTally

        interval, ceiling = self.settings.progress_seconds or 30.0, self.settings.max_cost_usd
        tally, terminal = RunTally(evals), self.config.get_terminal_writer
        self.display = ProgressDisplay(tally, terminal, self._spent, float(interval), ceiling)

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if eval_item_class() is not None:
            self._know(str(item.nodeid) for item in eval_items(session.items))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._know(str(i) for i in ids if case_group(str(i)) is not None)  # same on every worker

    # -- the hooks that write while tests run -----------------------------------------------

    def _around(
        self, then: Callable[[ProgressDisplay], None], started: bool = True, hold: bool = False
    ) -> Generator[None, Any, Any]:
        """Around a hook that writes, while the display watches (``started``: and its first
        eval run began): the line away while pytest writes, and ``then`` told the display."""
        display = self.display
        if display is None or not display.watching or (started and display.output is None):
            return (yield)
        with display.writes(hold):
            result = yield
            then(display)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> Any:
        display = self.display
        if display and display.watching and not display.output and nodeid in display.tally.evals:
            self._begin(display)
        return (yield from self._around(lambda d: d.begun(str(nodeid)), started=False))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Any:
        return (yield from self._around(lambda d: self._take(d, report)))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> Any:
        return (yield from self._around(lambda d: d.ended(str(nodeid))))

    @pytest.hookimpl(wrapper=True, optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> Any:
        # Held until the next report: xdist says why the worker went down once this returned.
        return (yield from self._around(lambda d: None, hold=bool(error)))

    @staticmethod
    def _take(display: ProgressDisplay, report: pytest.TestReport) -> None:
        """An eval item's report, as plain data: its run's cost, and the runs made ahead that
        the report's process lists (``AHEAD_ATTRIBUTE``)."""
        if str(report.nodeid) not in display.tally.evals:
            return
        from pytest_plugin_evals.records import RunRecord

        try:
            record = record_of(report)
        except pytest.UsageError:
            record = None  # the session says so
        cost = record.result.cost_usd if isinstance(record, RunRecord) else None
        gateway = getattr(getattr(report, "node", None), "gateway", None)
        listed = getattr(report, AHEAD_ATTRIBUTE, None)
        display.reported(
            str(report.nodeid), report.when, cost, str(getattr(gateway, "id", "")), listed
        )

    # -- the end ----------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        """The end (of the session, or at an interrupt or an internal error): no more line."""
        self.closed = True
        if self.display is not None:
            self.display.close()

    pytest_keyboard_interrupt = pytest_internalerror = pytest_unconfigure = pytest_sessionfinish

    # -- what the display reads of pytest ---------------------------------------------------

    def _begin(self, display: ProgressDisplay) -> None:
        """The first eval run starts: the display starts on pytest's terminal, if there is one."""
        if self.config.pluginmanager.get_plugin("terminalreporter") is None:
            display.close()
            return
        stream = sys.stdout  # pytest's terminal (its capture is suspended in this hook)
        display.start(stream, _is_live(self.config, stream))

    def _spent(self) -> float | None:
        budget = self.config.stash.get(budget_key, None)
        return budget.spent() if budget is not None and budget.ceiling is not None else None
