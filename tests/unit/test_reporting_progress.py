"""The progress line: its text from numbers, how it fits a terminal's width, and the ETA."""

from __future__ import annotations

import pytest

from pytest_plugin_evals.reporting.progress import (
    Progress,
    Running,
    clip,
    columns,
    eta_seconds,
    progress_line,
)

TWO_RUNNING = (Running("my-case[with-2]", 41.4), Running("other[without-1]", 3.0))


def test_the_full_line_says_done_in_flight_spend_against_the_ceiling_and_eta() -> None:
    line = progress_line(Progress(12, 48, TWO_RUNNING, 0.12, 5.0, 130.0))
    assert line == (
        "evals: 12/48 runs done · 2 in flight (longest: my-case[with-2] 41s)"
        " · $0.12 of $5.00 · ETA 2m10s"
    )


def test_one_run_in_flight_is_named_without_longest() -> None:
    line = progress_line(Progress(0, 4, (Running("ask[1]", 0.4),)))
    assert line == "evals: 0/4 runs done · 1 in flight (ask[1] 0s)"


def test_spend_without_a_ceiling_is_said_once_something_was_spent() -> None:
    assert progress_line(Progress(3, 4, (), 0.0)) == "evals: 3/4 runs done · 0 in flight"
    assert progress_line(Progress(3, 4, (), 0.5)) == (
        "evals: 3/4 runs done · 0 in flight · $0.50 spent"
    )
    assert progress_line(Progress(3, 4, (), 0.0, 2.0)) == (
        "evals: 3/4 runs done · 0 in flight · $0.00 of $2.00"
    )


def test_long_durations_read_as_minutes_and_hours() -> None:
    line = progress_line(Progress(1, 9, (Running("a[1]", 3725),), eta_seconds=7300))
    assert line == "evals: 1/9 runs done · 1 in flight (a[1] 1h02m) · ETA 2h01m"


def test_a_case_name_is_safe_for_a_terminal() -> None:
    hostile = "evil\x1b]0;owned\x07\x1b[2Jname\r\nnext\x9b31m[with-1]"
    line = progress_line(Progress(0, 2, (Running(hostile, 5),)))
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in line)
    assert "evilname" in line and "[with-1] 5s" in line


@pytest.mark.parametrize("width", [120, 100, 90, 80, 72, 60, 50, 40, 30, 20, 12, 5])
def test_the_line_fits_the_width_it_is_given(width: int) -> None:
    running = (Running("a-case-with-a-rather-long-name[without-12]", 61), *TWO_RUNNING)
    progress = Progress(120, 480, running, 12.34, 50.0, 4000.0)
    line = progress_line(progress, width)
    assert columns(line) <= width
    assert line.startswith("evals: 120/480" if width >= 20 else "eval")


def test_fitting_takes_compact_words_then_cuts_the_case_and_keeps_its_label() -> None:
    running = (Running("a-case-with-a-rather-long-name[without-12]", 61), *TWO_RUNNING)
    progress = Progress(120, 480, running, 12.34, 50.0, 4000.0)
    assert progress_line(progress, 120) == (
        "evals: 120/480 done · 3 in flight (a-case-with-a-rather-long-name[without-12] 1m01s)"
        " · $12.34/$50.00 · ETA 1h06m"
    )
    assert progress_line(progress, 100) == (
        "evals: 120/480 done · 3 in flight (a-case-with-a-rat…[without-12] 1m01s)"
        " · $12.34/$50.00 · ETA 1h06m"
    )
    # The case would keep fewer than 8 columns: the longest run is left out, then the spend.
    assert progress_line(progress, 80) == (
        "evals: 120/480 done · 3 in flight · $12.34/$50.00 · ETA 1h06m"
    )
    assert progress_line(progress, 60) == "evals: 120/480 done · 3 in flight · ETA 1h06m"
    assert progress_line(progress, 32) == "evals: 120/480 done · ETA 1h06m"
    assert progress_line(progress, 12) == "evals: 120/…"


def test_wide_characters_count_two_columns() -> None:
    assert columns("漢字ab") == 6
    assert columns("e\u0301") == 1  # a combining accent takes no column
    assert clip("漢字漢字", 5) == "漢字…"
    line = progress_line(Progress(0, 2, (Running("漢字漢字漢字漢字漢字漢字漢字漢字[1]", 1),)), 50)
    assert columns(line) <= 50


def test_no_eta_before_a_run_has_finished() -> None:
    assert eta_seconds(None, 10, [5.0], 2) is None
    line = progress_line(Progress(0, 4, (Running("a[1]", 1),)))
    assert "ETA" not in line


@pytest.mark.parametrize(
    ("mean", "waiting", "running", "lanes", "expected"),
    [
        (10.0, 0, [], 1, 0.0),  # nothing left
        (10.0, 3, [], 1, 30.0),  # one at a time
        (10.0, 4, [], 2, 20.0),  # two lanes share them
        (10.0, 0, [4.0], 1, 6.0),  # what the mean leaves of the run in flight
        (10.0, 0, [15.0], 1, 0.0),  # a run past the mean is about to finish
        (10.0, 4, [3.0, 8.0], 2, 27.0),  # lanes free at 7 and 2: 2→12→22, 7→17→27
        (10.0, 1, [9.0], 3, 10.0),  # an idle lane takes the waiting run at once
    ],
)
def test_eta_shares_the_remaining_runs_among_the_lanes(
    mean: float, waiting: int, running: list[float], lanes: int, expected: float
) -> None:
    assert eta_seconds(mean, waiting, running, lanes) == pytest.approx(expected)
