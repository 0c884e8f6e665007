"""The progress display (``engine.progress``), called directly: what it counts (runs in flight,
made ahead, done, the spend and the estimate) and when it draws the line, on a stand-in for
pytest's terminal writer. (On a real terminal and in a CI log: tests/integration/test_progress.py.)
"""

from __future__ import annotations

import io
import re
import time
from typing import Any

from pytest_plugin_evals.engine.progress import MAX_AHEAD, ProgressDisplay, RunTally
from pytest_plugin_evals.util.statusline import back_to, erase

A, B, C = "evals/a::a[1]", "evals/b::b[1]", "evals/c::c[1]"


def test_an_item_is_in_flight_from_its_start_to_its_end() -> None:
    tally = RunTally([A, B])
    tally.begin(A, now=10.0)
    shown = tally.progress(now=12.0, spent=None, ceiling=None)
    assert (shown.done, shown.total, [r.name for r in shown.running]) == (0, 2, ["a[1]"])
    assert shown.running[0].seconds == 2.0 and shown.eta_seconds is None
    tally.finish(A, now=14.0)
    shown = tally.progress(now=14.0, spent=None, ceiling=None)
    assert (shown.done, shown.running, tally.durations) == (1, (), [4.0])
    assert shown.eta_seconds == 4.0  # one run left, at the mean of those done


def test_runs_made_ahead_are_in_flight_until_their_process_stops_listing_them() -> None:
    tally = RunTally([A, B, C])
    tally.made_ahead("gw0", [[B, 3.0], [C, 1.0]], now=100.0)
    assert tally.running == {B: 97.0, C: 99.0} and tally.peak == 2
    tally.begin(B, now=101.0)  # its item began: the run keeps its start
    assert tally.running[B] == 97.0
    tally.made_ahead("gw0", [], now=102.0)  # C no longer listed, its item never began
    assert tally.running == {B: 97.0}


def test_a_hostile_list_of_runs_made_ahead_is_read_only_as_it_should_be() -> None:
    tally = RunTally([A, B])
    tally.made_ahead("gw0", "not a list", now=5.0)
    tally.made_ahead("gw0", [[A], [A, "3"], ["evals/x::x[1]", 1.0], [B, -4.0], 7], now=5.0)
    assert tally.running == {B: 5.0}  # a negative age is read as none
    tally.made_ahead("gw1", [[A, 1e12]], now=5.0)
    assert tally.running[A] == 5.0 - 1e6  # an age is capped
    many = RunTally([f"evals/n::n[{i}]" for i in range(MAX_AHEAD + 5)])
    many.made_ahead("gw0", [[f"evals/n::n[{i}]", 0.0] for i in range(MAX_AHEAD + 5)], now=0.0)
    assert len(many.running) == MAX_AHEAD


def test_the_spend_is_the_ledger_s_else_what_the_reports_carried() -> None:
    tally = RunTally([A, B])
    tally.costs.update({A: 0.25, B: 0.5})
    assert tally.progress(now=0.0, spent=None, ceiling=2.0).spent_usd == 0.75
    shown = tally.progress(now=0.0, spent=1.5, ceiling=2.0)
    assert (shown.spent_usd, shown.ceiling_usd) == (1.5, 2.0)


class Terminal:
    """What the display reads of pytest's terminal writer, and what pytest wrote through it."""

    def __init__(self, column: int) -> None:
        self.width_of_current_line = column
        self.fullwidth = 80
        self.hasmarkup = False
        self.written: list[str] = []

    def write(self, msg: str, *, flush: bool = False, **markup: bool) -> None:
        self.written.append(msg)

    def flush(self) -> None:
        pass

    def markup(self, text: str, **markup: bool) -> str:
        return text


def display_on(tw: Terminal, spent: float | None, interval: float, ceiling: Any) -> ProgressDisplay:
    return ProgressDisplay(RunTally([A, B]), lambda: tw, lambda: spent, interval, ceiling)


def test_a_live_line_is_taken_away_while_pytest_writes_and_drawn_while_a_run_goes_on() -> None:
    tw, out = Terminal(column=10), io.StringIO()
    display = display_on(tw, None, 30.0, 5.0)
    display.start(out, live=True)
    try:
        with display.writes():
            display.begun(A)
        drawn = r"\n\revals: 0/2 runs done · 1 in flight \(a\[1\] \d+s\) · \$0\.00 of \$5\.00"
        assert re.match(drawn + re.escape("\x1b[K" + back_to(10)), out.getvalue()), out.getvalue()
        for column, hold, shown in [(80, False, None), (5, True, None), (5, False, 5)]:
            # pytest's line as wide as the screen; a worker went down; then the next report.
            tw.width_of_current_line = column
            out.seek(0), out.truncate()
            before = display.shown
            with display.writes(hold=hold):  # taken away while pytest writes
                assert out.getvalue() == ("" if before is None else erase(before))
            assert display.shown == shown, (column, hold)
        with display.writes():
            display.ended(A)
        assert display.shown is None  # no run in flight: no line
    finally:
        display.close()
    assert display.closed and not display.thread.is_alive()  # type: ignore[union-attr]


def test_a_plain_line_due_within_a_row_of_dots_goes_in_where_pytest_ends_the_row() -> None:
    tw, out = Terminal(column=12), io.StringIO()  # pytest is within a row of dots
    display = display_on(tw, 0.25, 0.05, None)
    display.begun(A)
    display.start(out, live=False)
    try:
        deadline = time.monotonic() + 30
        while not display.pending and time.monotonic() < deadline:
            time.sleep(0.01)
        assert display.pending and out.getvalue() == ""  # it waits: the row is not broken
        with display.writes():
            tw.write("..  [50%]\nevals/b ")  # pytest ends its row and starts the next at once
        assert tw.written[0] == "..  [50%]\n" and tw.written[2] == "evals/b "
        line = r"evals: 0/2 runs done · 1 in flight \(a\[1\] \d+s\) · \$0\.25 spent\n"
        assert re.fullmatch(line, tw.written[1]), tw.written
        tw.width_of_current_line = 0  # on pytest's empty line: at once, on its own
        while "evals: " not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert re.fullmatch(f"({line})+", out.getvalue()), out.getvalue()
    finally:
        display.close()


def test_a_report_carries_the_spend_and_one_of_no_phase_ends_its_run() -> None:
    display = display_on(Terminal(column=0), None, 30.0, None)
    display.begun(A)
    display.begun("tests/test_x.py::test_y[1]")  # not an eval run: not counted
    assert list(display.tally.running) == [A]
    display.reported(A, "call", 0.5, "gw0", [[B, 2.0]])
    assert display.tally.costs == {A: 0.5} and set(display.tally.running) == {A, B}
    display.reported(A, "", None, "gw0", None)  # its worker crashed: no logfinish comes
    shown = display.progress()
    assert (shown.done, [r.name for r in shown.running], shown.spent_usd) == (1, ["b[1]"], 0.5)
