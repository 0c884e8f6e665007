"""The cost ceiling, written once (``engine.budget``): called directly, no pytest session."""

from __future__ import annotations

from pytest_plugin_evals.engine.budget import Budget, Refused
from pytest_plugin_evals.engine.limits import RUNS_PER_CPU, process_share


def test_no_ceiling_never_refuses() -> None:
    assert Budget(None).refusal(1e9, 100, 1e9) is None


def test_under_the_ceiling_a_run_may_start() -> None:
    assert Budget(5.0).refusal(1.0, 0, 0.0) is None
    assert Budget(5.0).refusal(1.0, 2, 1.0) is None  # 1 + 2 × 1 = 3 < 5


def test_only_runs_in_flight_are_counted_ahead() -> None:
    """A dear run finished says what one costs; with none in flight, nothing is counted ahead."""
    assert Budget(5.0).refusal(4.0, 0, 4.0) is None


def test_reached_when_spent_meets_the_ceiling() -> None:
    assert Budget(5.0).refusal(5.0, 0, 1.0) == Refused(
        "cost ceiling $5 reached ($5.0000 spent): run not started", "cost_ceiling"
    )
    assert Budget(0.5).refusal(0.75, 3, 0.25) == Refused(
        "cost ceiling $0.5 reached ($0.7500 spent): run not started"
    )


def test_would_be_reached_by_the_runs_in_flight() -> None:
    assert Budget(5.0).refusal(1.0, 4, 1.0) == Refused(
        "cost ceiling $5 would be reached ($1.0000 spent, 4 run(s) in flight at about "
        "$1.0000 each): run not started",
        "cost_ceiling",
    )


def test_each_process_keeps_its_share_of_the_runs_in_flight() -> None:
    assert process_share(None, cpus=2, processes=1) == 2 * RUNS_PER_CPU  # four a CPU
    assert process_share(None, cpus=2, processes=3) == 3  # 8 among three: rounded up
    assert process_share(6, cpus=64, processes=2) == 3  # --eval-max-concurrency over the CPUs
    assert process_share(1, cpus=1, processes=4) == 2  # never below its run and the next one's
