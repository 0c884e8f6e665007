"""The progress display, apart from pytest: what it counts (:class:`RunTally`: the session's eval
runs, those in flight — an item's own, and those a process makes ahead of their items —, those
done and how long they took, and their spend; pure, times are given) and when it draws the line
(:class:`ProgressDisplay`: a live line under pytest's current line, redrawn every second, or a
plain line every interval between two of pytest's rows, written by a thread). The shell's hooks
tell it what pytest reports and when pytest writes (``plugin.progress``)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from pytest_plugin_evals.reporting.progress import Progress, Running, eta_seconds, progress_line
from pytest_plugin_evals.util.statusline import StatusOutput, draw, erase

#: How many entries of a report's list of runs made ahead are read.
MAX_AHEAD = 1000


class RunTally:
    """The session's eval runs: in flight, begun, ended, their durations and spend."""

    def __init__(self, evals: Iterable[str]) -> None:
        self.evals = frozenset(evals)
        #: Eval runs in flight -> when they started (monotonic).
        self.running: dict[str, float] = {}
        #: The runs made ahead each process last listed, and the eval items that began or
        #: ended (their own hooks account them from then on).
        self.ahead: dict[str, set[str]] = {}
        self.begun: set[str] = set()
        self.ended: set[str] = set()
        self.durations: list[float] = []
        self.costs: dict[str, float] = {}
        #: The most runs seen in flight at once.
        self.peak = 0

    def begin(self, nodeid: str, now: float) -> None:
        """An eval item began (a run made ahead of it is in flight since it began)."""
        self.begun.add(nodeid)
        self.running.setdefault(nodeid, now)
        self.peak = max(self.peak, len(self.running))

    def finish(self, nodeid: str, now: float) -> None:
        """An eval item ended: its run is done."""
        self.ended.add(nodeid)
        started = self.running.pop(nodeid, None)
        if started is not None:
            self.durations.append(now - started)

    def made_ahead(self, process: str, listed: object, now: float) -> None:
        """The runs ``process`` has going ahead of their items, as its report lists them (hostile
        data: ``[[node id, seconds since it began], …]``): in flight until their items begin;
        one it no longer lists, whose item has not begun, is not."""
        if not isinstance(listed, list):
            return
        going: dict[str, float] = {}
        for entry in listed[:MAX_AHEAD]:
            if not (isinstance(entry, list) and len(entry) == 2):
                continue
            nodeid, seconds = entry
            if (
                isinstance(nodeid, str)
                and isinstance(seconds, int | float)
                and nodeid in self.evals
                and nodeid not in self.begun
                and nodeid not in self.ended
            ):
                going[nodeid] = now - min(max(float(seconds), 0.0), 1e6)
        for nodeid in self.ahead.pop(process, set()) - going.keys():
            if nodeid not in self.begun:
                self.running.pop(nodeid, None)
        for nodeid, started in going.items():
            self.running.setdefault(nodeid, started)
        self.ahead[process] = set(going)
        self.peak = max(self.peak, len(self.running))

    def progress(self, now: float, spent: float | None, ceiling: float | None) -> Progress:
        """How far the runs are at ``now`` (``spent``: the session's ledger, else the spend
        the runs' reports carried)."""
        elapsed = [now - started for started in self.running.values()]
        total, done = len(self.evals), len(self.durations)
        mean = sum(self.durations) / done if done else None
        return Progress(
            done=done,
            total=total,
            running=tuple(
                Running(nodeid.rpartition("::")[2], seconds)
                for nodeid, seconds in zip(self.running, elapsed, strict=True)
            ),
            spent_usd=sum(self.costs.values()) if spent is None else spent,
            ceiling_usd=ceiling,
            eta_seconds=eta_seconds(
                mean, max(total - done - len(self.running), 0), elapsed, self.peak
            ),
        )


#: How often the live line is redrawn (its clocks count whole seconds).
LIVE_SECONDS = 1.0


class ProgressDisplay:
    """The line and when it is drawn (``terminal``: pytest's terminal writer). On a terminal,
    it is taken away before pytest writes (:meth:`writes`) and drawn again after; it stays away
    while no eval run is in flight, while pytest's line is as wide as the screen, after a worker
    went down (until the next report), and once closed. Elsewhere a plain line, every
    ``interval`` seconds, waits for pytest to end a row of dots (at the next test file, or at
    the right margin), so a row is never broken. The thread writes only holding :attr:`lock`."""

    def __init__(
        self,
        tally: RunTally,
        terminal: Callable[[], Any],
        spent: Callable[[], float | None],
        interval: float,
        ceiling: float | None,
    ) -> None:
        self.tally = tally
        self.terminal = terminal
        #: The session's ledger, when it has a ceiling (else the spend the reports carried).
        self.spent = spent
        self.interval = interval
        self.ceiling = ceiling
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

    @property
    def watching(self) -> bool:
        return bool(self.tally.evals) and not self.closed

    def start(self, stream: TextIO, live: bool) -> None:
        """The first eval run starts: the form (``live``: on a terminal that redraws), the
        output (a duplicate of ``stream``'s descriptor) and the clock."""
        self.live = live
        self.output = StatusOutput(stream)
        self.next_line = time.monotonic() + self.interval
        tick = LIVE_SECONDS if live else min(self.interval, LIVE_SECONDS)
        self.thread = threading.Thread(
            target=self._tick, args=(tick,), name="plugin-evals-progress", daemon=True
        )
        self.thread.start()

    def begun(self, nodeid: str) -> None:
        if nodeid in self.tally.evals:
            self.tally.begin(nodeid, time.monotonic())

    def ended(self, nodeid: str) -> None:
        self.tally.finish(nodeid, time.monotonic())

    def reported(
        self, nodeid: str, phase: str, cost: float | None, process: str, listed: object
    ) -> None:
        """An eval item's report: its run's spend (``cost``, if its record says), and the runs
        made ahead that its ``process`` lists (``listed``, hostile); a report of no phase of
        the item's (a worker crashed while running it) ends it: no logfinish comes."""
        if cost is not None:
            self.tally.costs[nodeid] = cost
        if phase not in ("setup", "call", "teardown"):
            self.ended(nodeid)
            return
        self.tally.made_ahead(process, listed, time.monotonic())

    @contextlib.contextmanager
    def writes(self, hold: bool = False) -> Iterator[None]:
        """Take the line away while pytest writes, and draw it again after (unless ``hold``:
        then not before the next report). Writes within writes (a plugin that reports from
        its report hook) change nothing on the screen."""
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
        tw = self.terminal()
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

    def _tick(self, seconds: float) -> None:
        while not self.stop.wait(seconds):
            with self.lock:
                if self.closed:
                    return
                if self.live:
                    self._show()
                elif time.monotonic() >= self.next_line and self.tally.running and not self.pending:
                    self._plain_line()

    def progress(self) -> Progress:
        return self.tally.progress(time.monotonic(), self.spent(), self.ceiling)

    def _flush_terminal(self) -> None:
        if self.output is not None:
            self.terminal().flush()

    def _column(self) -> int | None:
        """Where pytest's cursor is on its line, if it is on the screen's line too."""
        tw = self.terminal()
        column = int(tw.width_of_current_line)
        return column if 0 <= column < tw.fullwidth else None

    def _show(self) -> None:
        """Draw (or redraw) the live line under pytest's current line."""
        if not self.live or self.output is None or self.closed:
            return
        column = self._column()
        if self.held or not self.tally.running or column is None:
            self._hide()
            return
        tw = self.terminal()
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
        if int(self.terminal().width_of_current_line):
            self.pending = True
            return
        self.output.write(self._line_text() + "\n")

    def _line_text(self) -> str:
        """The plain line's text; the next one is due an interval from now."""
        self.pending = False
        self.next_line = time.monotonic() + self.interval
        return progress_line(self.progress())
