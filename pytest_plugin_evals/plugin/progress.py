"""Progress you can watch while runs go on: runs done, runs in flight, spend and an ETA.

Registered on the controller only (xdist replays its workers' ``pytest_runtest_logstart``,
``pytest_runtest_logreport`` and ``pytest_runtest_logfinish`` there), and silent until it knows
the session has eval runs: a session without them is left as it was.

- On a terminal, one status line sits under pytest's current line and is redrawn every second.
  It is taken away before pytest writes anything in the hooks that write while tests run, and
  drawn again after. It stays away while no eval run is in flight, while pytest's line is as
  wide as the screen, after a worker went down (until the next report), and from the end of
  the session on.
- Elsewhere (a CI log, a pipe), a plain line every ``--eval-progress`` seconds, on a line of its
  own between two of pytest's rows: a line due while a row of dots is in progress waits for
  pytest to end the row (at the next test file, or at the right margin), so a row is never
  broken.

Both are written by a thread, to a duplicate of the terminal's file descriptor: under
``-n0`` the item in flight has the descriptor captured. The thread writes only while holding
the lock that the hooks hold while pytest writes.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

import pytest

from pytest_plugin_evals.engine.nodeids import case_group
from pytest_plugin_evals.plugin.keys import AHEAD_ATTRIBUTE, budget_key
from pytest_plugin_evals.plugin.loaded import eval_item_class, eval_items
from pytest_plugin_evals.plugin.reported import record_of
from pytest_plugin_evals.util.statusline import StatusOutput, draw, erase, redraws

if TYPE_CHECKING:
    from pytest_plugin_evals.engine.progress import RunTally
    from pytest_plugin_evals.reporting.progress import Progress
    from pytest_plugin_evals.settings import EvalSettings

#: How often the live line is redrawn (its clocks count whole seconds).
LIVE_SECONDS = 1.0


def register_progress(config: pytest.Config, settings: EvalSettings) -> None:
    """Register the progress display, unless it is off, pytest was asked to be very quiet, or
    there is no terminal reporter (``-p no:terminal``: no ``verbose`` option either)."""
    verbosity = getattr(config.option, "verbose", None)
    if settings.progress_seconds is None or verbosity is None or int(verbosity) <= -2:
        return
    config.pluginmanager.register(EvalProgress(config, settings), PLUGIN_NAME)


PLUGIN_NAME = "plugin-evals-progress"


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


def _tally(evals: Iterable[str]) -> RunTally:
    """The count of the session's eval runs (imported once they are known: a session without
    them loads none of it)."""
    from pytest_plugin_evals.engine.progress import RunTally

    return RunTally(evals)


class EvalProgress:
    def __init__(self, config: pytest.Config, settings: EvalSettings) -> None:
        self.config = config
        self.interval = float(settings.progress_seconds or 30.0)
        self.ceiling = settings.max_cost_usd
        #: The session's eval runs, once known (``engine.progress``).
        self.tally: RunTally | None = None
        self.lock = threading.RLock()
        #: How deep in the hooks that write the main thread is.
        self.depth = 0
        self.output: StatusOutput | None = None
        self.live = False
        #: The column pytest's cursor was at when the live line was drawn (None: not drawn).
        self.shown: int | None = None
        #: A plain line is due, and waits for pytest to end its row.
        self.pending = False
        #: Not drawn until the next report (a worker went down: xdist writes after its hook).
        self.held = False
        self.closed = False
        self.next_line = 0.0
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    # -- which items are eval runs ----------------------------------------------------------

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.tally is None and eval_item_class() is not None:
            self.tally = _tally(str(item.nodeid) for item in eval_items(session.items))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.tally is None:  # every worker collects the same items
            self.tally = _tally(str(i) for i in ids if case_group(str(i)) is not None)

    @property
    def watching(self) -> bool:
        return self.tally is not None and bool(self.tally.evals) and not self.closed

    # -- the hooks that write while tests run -----------------------------------------------

    @contextlib.contextmanager
    def _pytest_writes(self, hold: bool = False) -> Iterator[None]:
        """Take the line away while pytest writes, and draw it again after (unless ``hold``:
        then not before the next report). A hook called from within one of these (a plugin
        that reports from its report hook) changes nothing on the screen."""
        with self.lock:
            self.depth += 1
            try:
                if self.depth == 1:
                    self._flush_terminal()
                    self._hide()
                with self._between_rows(self.depth == 1):
                    yield
                if self.depth == 1:
                    self.held = hold
                    self._flush_terminal()
                    self._show()
            finally:
                self.depth -= 1

    @contextlib.contextmanager
    def _between_rows(self, outermost: bool) -> Iterator[None]:
        """While pytest writes, a plain line that is due goes in right after the line feed that
        ends pytest's row (pytest writes the row's end and the next row's start in one call)."""
        if not (outermost and self.pending and not self.live and self.output is not None):
            yield
            return
        tw = self._terminal()
        write = tw.write

        def between(msg: str, *, flush: bool = False, **markup: bool) -> None:
            if not self.pending or "\n" not in msg:
                write(msg, flush=flush, **markup)
                return
            head, _, tail = msg.rpartition("\n")
            write(head + "\n", **markup)
            write(self._line_text() + "\n", flush=not tail and flush)
            if tail:
                write(tail, flush=flush, **markup)

        tw.write = between
        try:
            yield
        finally:
            del tw.write  # the writer's own method again

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> Any:
        if not self.watching:
            return (yield)
        tally = self.tally
        assert tally is not None
        if str(nodeid) in tally.evals and self.output is None:
            self._begin()
        with self._pytest_writes():
            result = yield
            if str(nodeid) in tally.evals:
                tally.begin(str(nodeid), time.monotonic())
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Any:
        if not self.watching or self.output is None:
            return (yield)
        with self._pytest_writes():
            result = yield
            self._take(report)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> Any:
        if not self.watching or self.output is None:
            return (yield)
        with self._pytest_writes():
            result = yield
            self._finish(str(nodeid))
        return result

    @pytest.hookimpl(wrapper=True, optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> Any:
        if not self.watching or self.output is None:
            return (yield)
        with self._pytest_writes(hold=bool(error)):  # xdist says why once this hook returned
            return (yield)

    def _take(self, report: pytest.TestReport) -> None:
        from pytest_plugin_evals.records import RunRecord

        nodeid, tally = str(report.nodeid), self.tally
        if tally is None or nodeid not in tally.evals:
            return
        try:
            record = record_of(report)
        except pytest.UsageError:
            record = None  # the session says so
        if isinstance(record, RunRecord):
            tally.costs[nodeid] = record.result.cost_usd
        if report.when not in ("setup", "call", "teardown"):
            self._finish(nodeid)  # a worker crashed while running it: no logfinish comes
            return
        # The runs the report's process has going ahead of their items (``keys.AHEAD_ATTRIBUTE``).
        gateway = getattr(getattr(report, "node", None), "gateway", None)
        listed = getattr(report, AHEAD_ATTRIBUTE, None)
        tally.made_ahead(str(getattr(gateway, "id", "")), listed, time.monotonic())

    def _finish(self, nodeid: str) -> None:
        if self.tally is not None:
            self.tally.finish(nodeid, time.monotonic())

    # -- the end ----------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self.close()

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self) -> None:
        self.close()

    @pytest.hookimpl(tryfirst=True)
    def pytest_internalerror(self) -> None:
        self.close()

    def pytest_unconfigure(self) -> None:
        self.close()

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            self._hide()
        self.stop.set()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(timeout=5)
        if self.output is not None:
            self.output.close()

    # -- drawing ----------------------------------------------------------------------------

    def _begin(self) -> None:
        """The first eval run starts: choose the form, and start the clock."""
        if self.config.pluginmanager.get_plugin("terminalreporter") is None:
            self.closed = True
            return
        stream = sys.stdout  # pytest's terminal (its capture is suspended in this hook)
        self.live = _is_live(self.config, stream)
        self.output = StatusOutput(stream)
        self.next_line = time.monotonic() + self.interval
        tick = LIVE_SECONDS if self.live else min(self.interval, LIVE_SECONDS)
        self.thread = threading.Thread(
            target=self._tick, args=(tick,), name="plugin-evals-progress", daemon=True
        )
        self.thread.start()

    def _tick(self, seconds: float) -> None:
        while not self.stop.wait(seconds):
            with self.lock:
                if self.closed:
                    return
                if self.live:
                    self._show()
                elif time.monotonic() >= self.next_line and self._in_flight() and not self.pending:
                    self._plain_line()

    def progress(self) -> Progress:
        assert self.tally is not None
        budget = self.config.stash.get(budget_key, None)
        spent = budget.spent() if budget is not None and budget.ceiling is not None else None
        return self.tally.progress(time.monotonic(), spent, self.ceiling)

    def _in_flight(self) -> bool:
        return self.tally is not None and bool(self.tally.running)

    def _terminal(self) -> Any:
        return self.config.get_terminal_writer()

    def _flush_terminal(self) -> None:
        if self.output is not None:
            self._terminal().flush()

    def _column(self) -> int | None:
        """Where pytest's cursor is on its line, if it is on the screen's line too."""
        tw = self._terminal()
        column = int(tw.width_of_current_line)
        return column if 0 <= column < tw.fullwidth else None

    def _show(self) -> None:
        """Draw (or redraw) the live line under pytest's current line."""
        if not self.live or self.output is None or self.closed:
            return
        column = self._column()
        if self.held or not self._in_flight() or column is None:
            self._hide()
            return
        from pytest_plugin_evals.reporting.progress import progress_line

        tw = self._terminal()
        line = progress_line(self.progress(), width=max(tw.fullwidth - 1, 1))
        if tw.hasmarkup:
            line = tw.markup(line, cyan=True)
        self.output.write(draw(line, column, shown=self.shown is not None))
        self.shown = column

    def _hide(self) -> None:
        if self.shown is None or self.output is None:
            return
        self.output.write(erase(self.shown))
        self.shown = None

    def _plain_line(self) -> None:
        """A line of its own, now if pytest's line is empty, else once pytest ends its row."""
        if self.output is None:
            return
        if int(self._terminal().width_of_current_line):
            self.pending = True
            return
        self.output.write(self._line_text() + "\n")

    def _line_text(self) -> str:
        """The plain line's text; the next one is due an interval from now."""
        from pytest_plugin_evals.reporting.progress import progress_line

        self.pending = False
        self.next_line = time.monotonic() + self.interval
        return progress_line(self.progress())
