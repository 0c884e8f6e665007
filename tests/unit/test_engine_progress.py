"""What the progress display counts (``engine.progress``), called directly: runs in flight,
made ahead, done, the spend and the estimate. No pytest session, no terminal."""

from __future__ import annotations

from pytest_plugin_evals.engine.progress import MAX_AHEAD, RunTally

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
