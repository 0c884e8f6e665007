"""The operating characteristics of ``--eval-runs auto`` and the fixed designs: the exact
enumeration (:mod:`pytest_plugin_evals.stats.operating`), the table ``--eval-plan`` prints,
a simulation of the session's own controller that checks both, and the power futility must
keep."""

from __future__ import annotations

import random

import pytest

from pytest_plugin_evals.engine.rounds import Rounds
from pytest_plugin_evals.stats import operating, planning, sequential
from pytest_plugin_evals.stats.sequential import ConfidenceSequence


def simulate(most: int, p_with: float, p_without: float, reps: int, seed: int) -> tuple:
    """The share of cases the controller calls better, and its mean runs per arm: each case a
    session of its own, its runs drawn and reported round by round as a session does."""
    rng = random.Random(seed)
    better = runs = 0
    for _ in range(reps):
        rounds = Rounds([("c", most)], margin=0.1)
        r = 0
        while r < most and rounds.ask("c", r + 1) is None:
            r += 1
            rounds.report("c", True, r, float(rng.random() < p_with))
            rounds.report("c", False, r, float(rng.random() < p_without))
        stop = rounds.cases["c"].stop
        better += stop is not None and stop.verdict == "better"
        runs += r
    return better / reps, runs / reps


@pytest.mark.parametrize(("p_with", "p_without"), [(0.8, 0.4), (0.5, 0.5)])
def test_the_enumeration_is_what_the_controller_does(p_with: float, p_without: float) -> None:
    """An independent method: 2000 simulated cases through the controller's own rounds agree
    with the exact chances (within four standard errors)."""
    exact = operating.sequential_design(20, p_with, p_without)
    share, runs = simulate(20, p_with, p_without, 2000, seed=40)
    se = (exact.better * (1 - exact.better) / 2000) ** 0.5
    assert abs(share - exact.better) <= 4 * se + 1e-3
    assert abs(runs - exact.runs) <= 0.4


def test_futility_keeps_the_power() -> None:
    """Futility made eager again (from the first look, a tie futile by itself) would bring
    ``auto:20``'s power at 0.8 against 0.4 back to fixed 10's 0.42; the searched design gives
    0.56 for 12.5 runs per arm. The target it was searched for: at every true Δ its share of
    correct verdicts is fixed 10's or more (over the base rates and at the worst), for at most
    fixed 10's runs per arm averaged over the four Δ, false calls at most 5% at every base
    rate."""
    case = operating.sequential_design(20, 0.8, 0.4)
    assert case.better >= 0.55
    assert case.better > operating.fixed(10, 0.8, 0.4).better + 0.1
    runs = 0.0
    for delta in operating.EFFECTS:
        auto, fixed = operating.row("auto:20", delta), operating.row("fixed:10", delta)
        assert auto.mean_correct >= fixed.mean_correct, delta
        assert auto.worst_correct >= fixed.worst_correct, delta
        runs += auto.mean_runs / len(operating.EFFECTS)
    assert runs <= 10
    null = operating.row("auto:20", 0.0)
    assert null.worst_false_call <= 0.05
    assert null.mean_runs < 10  # futility still saves runs where there is nothing to find


def test_the_table_is_what_the_enumeration_gives() -> None:
    for design in ("fixed:10", "auto:20"):
        for (correct, runs), delta in zip(
            planning.OPERATING[design], planning.OC_EFFECTS, strict=True
        ):
            row = operating.row(design, delta)
            assert row.mean_correct == pytest.approx(correct, abs=0.0006)
            assert row.mean_runs == pytest.approx(runs, abs=0.06)


def _at(most: int, n: int, a: int, b: int) -> ConfidenceSequence:
    return ConfidenceSequence(most, n, float(a), float(b), n, (float(a), float(b)))


def test_no_futility_before_its_share_and_no_tie_futile_by_itself() -> None:
    # round 2 of 20 is before 15% of the budget: not even 0 of 2 against 2 of 2 stops
    assert not any(sequential.futile(_at(20, 2, a, b), 0.1) for a in range(3) for b in range(3))
    # a tie at round 3 is not futile: a lead of one run either way would not be
    assert not any(sequential.futile(_at(20, 3, k, k), 0.1) for k in range(4))
    # at round 10 a tie is evidence: one run either way would still not be decided at 20
    assert sequential.futile(_at(20, 10, 5, 5), 0.1)
    assert sequential.futile(_at(20, 10, 10, 10), 0.1)


def test_a_top_up_is_another_look() -> None:
    """Reading a no-effect case's verdict at 3 runs and again at 6 calls it better or worse
    more often than 5%, and more often than reading it once at 6."""
    exact = operating.looks_false_call((3, 6), 0.5)
    assert exact > 0.05 and exact > operating.looks_false_call((6,), 0.5) + 0.015


def test_the_top_ups_exact_chance_is_what_a_simulation_finds() -> None:
    """The exact chance of two looks (3 runs, then 6) agrees with 4,000 simulated cases."""
    exact = operating.looks_false_call((3, 6), 0.5)
    rng = random.Random(6)
    wrong = 0
    for _ in range(4000):
        a = [rng.random() < 0.5 for _ in range(6)]
        b = [rng.random() < 0.5 for _ in range(6)]
        wrong += any(
            operating.classify(operating.newcombe(sum(a[:n]), n, sum(b[:n]), n), 0.1)
            in ("better", "worse")
            for n in (3, 6)
        )
    assert abs(wrong / 4000 - exact) < 0.015


def test_the_top_up_line_gives_the_worse_of_shared_and_independent_looks() -> None:
    """3 → 6: 7.9% when both looks share every run (at pass rates 0.1 … 0.9), 8.9% when they
    share none: 1 − (1 − 3.1%)(1 − 6.0%) at the worst pass rate; the line says the larger."""
    shared = max(operating.looks_false_call((3, 6), i / 10) for i in range(1, 10))
    apart = max(
        1
        - (1 - operating.fixed(3, i / 10, i / 10).false_call)
        * (1 - operating.fixed(6, i / 10, i / 10).false_call)
        for i in range(1, 10)
    )
    assert apart > shared > 0.05
    line = operating.top_up_warning(3, 6, 2)
    assert f"up to {apart:.1%}" in line and line.startswith("top-up: 2 case(s) went from 3")
