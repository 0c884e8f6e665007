"""The group-sequential design of ``--eval-runs auto`` and the controller's rounds (pure)."""

from __future__ import annotations

import random

import pytest

from pytest_plugin_evals.engine.rounds import WAIT, Rounds
from pytest_plugin_evals.stats import intervals as stats
from pytest_plugin_evals.stats import sequential


def test_looks_are_planned_shares_of_the_budget() -> None:
    assert sequential.looks(20) == (2, 3, 6, 10, 20)
    assert sequential.looks(12) == (2, 4, 6, 12)
    assert sequential.looks(2) == (2,)
    # O'Brien–Fleming's shape: overwhelming evidence early, almost a fixed design's level last
    assert sequential.boundary(20) == pytest.approx(1.88)
    assert sequential.boundary(20, look=5) == pytest.approx(3.76)


@pytest.mark.parametrize("p", [i / 20 for i in range(1, 20)])
def test_the_default_design_keeps_five_percent_exactly_for_pass_fail_runs(p: float) -> None:
    """The exact chance, over all five looks of ``auto:20`` with its futility rule applied
    (judged at the level asked, as the session judges it), that a case with no effect is
    called better or worse: at most 5% at every pass rate, and at 1% at most 1%."""
    assert sequential.false_call_chance(20, p, futility=True) <= 0.05
    z99 = stats.normal_quantile(0.995)
    assert sequential.false_call_chance(20, p, z99, futility=True) <= 0.01


def test_the_default_design_counts_on_its_futility_rule() -> None:
    """Its ``C`` was searched with futility applied: without the rule some pass rate would be
    called better or worse more than 5% of the time, so futility must stay binding."""
    grid = [i / 40 for i in range(1, 40)]
    assert max(sequential.false_call_chance(20, p) for p in grid) > 0.05


# The exact chances of 31 looks take seconds: that budget is left out of the inner loop.
@pytest.mark.parametrize("most", [4, 7, 12, pytest.param(31, marks=pytest.mark.slow)])
def test_every_budget_has_its_own_calibrated_boundary(most: int) -> None:
    """Pass/fail counts are discrete: another budget needs another ``C``. Each budget's keeps
    5%, and the next smaller step would not (it is the smallest that does)."""
    grid = [i / 40 for i in range(1, 40)]
    assert max(sequential.false_call_chance(most, p) for p in grid) <= 0.05
    smaller = sequential.constant(most) - 0.02
    scale = smaller / sequential.constant(most)
    assert max(sequential.false_call_chance(most, p, scale * stats.Z95) for p in grid) > 0.05


def test_the_exact_chance_is_what_a_simulation_finds() -> None:
    """The recursion and a plain simulation of the same looks (no futility) agree."""
    rng = random.Random(3)
    wrong = 0
    for _ in range(4000):
        cs = sequential.ConfidenceSequence(20)
        for _r in range(20):
            cs.add(float(rng.random() < 0.5), float(rng.random() < 0.5))
            if cs.looked == cs.n and stats.excludes_zero(cs.interval()):
                wrong += 1
                break
    assert abs(wrong / 4000 - sequential.false_call_chance(20, 0.5)) < 0.012


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
def test_looking_five_times_keeps_false_calls_at_five_percent(p: float) -> None:
    """Under no effect, the chance that any of the looks calls a case better or worse, with
    the stopping rule (futility included) applied as the controller applies it, stays at or
    below 5% (here 1000 cases, with room for noise)."""
    assert _false_calls(p, 1000, random.Random(7)) <= 0.05 + 0.01


def test_without_the_boundary_looking_three_times_errs_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The boundary is what keeps it honest: at 1.96 on every look the same null cases are
    called better or worse more often, and more than 5% of them."""
    honest = _false_calls(0.5, 1000, random.Random(11))
    monkeypatch.setattr(sequential, "boundary", lambda most, z=stats.Z95, look=None: z)
    naive = _false_calls(0.5, 1000, random.Random(11))
    assert naive > max(honest, 0.06)
    assert sequential.false_call_chance(20, 0.5) > 0.15


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
    for r in range(1, 7):
        assert rounds.ask("c", r) is None
        rounds.report("c", True, r, 1.0)
        rounds.report("c", False, r, 0.0)
    # 3 of 3 against 0 of 3 is not yet overwhelming at the third look; 6 of 6 is
    assert rounds.ask("c", 7) == "decided after 6 runs: better"
    interval, decision = sequential.case_verdict([(1.0, 0.0)] * 6, 0.1, 20)
    assert decision is not None and decision.verdict == "better"
    assert interval is not None and interval[0] > 0


def test_a_coin_flip_stops_for_futility_once_a_tie_is_evidence() -> None:
    """Arms that take turns passing tie at every even round: at round 2 (before 15% of the
    budget) and round 3 (a one-run lead would still be promising) the case runs on; at round
    6 a tie is futile, since a lead of one run either way would not be decided at 20."""
    rounds = Rounds([("c", 20)], margin=0.1)
    for r in range(1, 7):
        assert rounds.ask("c", r) is None, r
        rounds.report("c", True, r, float(r % 2))
        rounds.report("c", False, r, float(1 - r % 2))
    reason = rounds.ask("c", 7)
    assert reason is not None and reason.startswith("stopped after 6 runs as inconclusive")
    assert "(futility)" in reason


def test_an_ungraded_run_loses_its_round_only() -> None:
    rounds = Rounds([("c", 20)], margin=0.1)
    rounds.ask("c", 1)
    rounds.report("c", True, 1, None)
    rounds.report("c", False, 1, 0.0)
    assert rounds.cases["c"].cs.n == 0 and rounds.cases["c"].next_round == 2
