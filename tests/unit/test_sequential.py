"""The group-sequential design of ``--eval-runs auto`` and the controller's rounds (pure)."""

from __future__ import annotations

import random

import pytest

from pytest_plugin_evals import sequential
from pytest_plugin_evals.rounds import WAIT, Rounds


def test_looks_are_planned_shares_of_the_budget() -> None:
    assert sequential.looks(20) == (3, 10, 20)
    assert sequential.looks(12) == (2, 6, 12)
    assert sequential.looks(2) == (2,)
    assert sequential.boundary(20) == pytest.approx(2.413)


def _false_calls(p: float, reps: int, rng: random.Random) -> float:
    """The share of null cases (both arms pass with ``p``) that some look calls better or
    worse, the stopping rule applied at each look as the controller applies it."""
    wrong = 0
    for _ in range(reps):
        rounds = Rounds([("c", 20)], margin=0.1)
        for r in range(1, 21):
            if rounds.ask("c", r) is not None:
                break
            rounds.report("c", True, r, float(rng.random() < p))
            rounds.report("c", False, r, float(rng.random() < p))
        stop = rounds.cases["c"].stop
        wrong += stop is not None and stop.verdict in ("better", "worse")
    return wrong / reps


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_looking_three_times_keeps_false_calls_at_five_percent(p: float) -> None:
    """Under no effect, the chance that any of the three looks calls a case better or worse
    stays below 5% (4.2% at p = 0.5 over 3000 cases; here fewer, with room for noise)."""
    assert _false_calls(p, 1000, random.Random(7)) <= 0.05 + 0.01


def test_without_the_boundary_looking_three_times_errs_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The boundary is what keeps it honest: at 1.96 on every look the same null cases are
    called better or worse more often than at Pocock's boundary."""
    rng_state = random.Random(11)
    honest = _false_calls(0.5, 1000, rng_state)
    monkeypatch.setattr(sequential, "EXTRA_LOOKS", 0)
    monkeypatch.setitem(sequential.POCOCK, 3, 1.96)
    naive = _false_calls(0.5, 1000, random.Random(11))
    assert naive > honest


def test_a_round_is_issued_whole_and_waits_for_a_look() -> None:
    rounds = Rounds([("c", 12)], margin=0.1)
    assert rounds.ask("c", 1) is None
    assert rounds.ask("c", 2) is None  # no look before round 2 is pending
    assert rounds.ask("c", 3) == WAIT  # the look after round 2 has not reported
    assert rounds.ask("c", 3, wait_over=True) is None
    assert rounds.ask("c", 13) is not None
    assert rounds.ask("other", 5) is None  # a case it does not hold always runs


def test_a_clear_case_stops_decided_and_says_so() -> None:
    rounds = Rounds([("c", 20)], margin=0.1)
    for r in (1, 2, 3):
        assert rounds.ask("c", r) is None
        rounds.report("c", True, r, 1.0)
        rounds.report("c", False, r, 0.0)
    assert rounds.ask("c", 4) == "decided after 3 runs: better"
    interval, decision = sequential.case_verdict([(1.0, 0.0)] * 3, 0.1, 20)
    assert decision is not None and decision.verdict == "better"
    assert interval is not None and interval[0] > 0


def test_a_coin_flip_stops_for_futility() -> None:
    rounds = Rounds([("c", 20)], margin=0.1)
    for r, (a, b) in enumerate([(1.0, 0.0), (0.0, 1.0), (1.0, 1.0)], start=1):
        rounds.ask("c", r)
        rounds.report("c", True, r, a)
        rounds.report("c", False, r, b)
    reason = rounds.ask("c", 4)
    assert reason is not None and reason.startswith("stopped after 3 runs as inconclusive")
    assert "(futility)" in reason


def test_an_ungraded_run_loses_its_round_only() -> None:
    rounds = Rounds([("c", 20)], margin=0.1)
    rounds.ask("c", 1)
    rounds.report("c", True, 1, None)
    rounds.report("c", False, 1, 0.0)
    assert rounds.cases["c"].cs.n == 0 and rounds.cases["c"].next_round == 2
