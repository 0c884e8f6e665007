"""The session's one budget, called directly: reservations under the cost ceiling, the shared
rate-limit pause, the run slots, and the channel a worker reaches it over."""

from __future__ import annotations

import math
import queue
import threading
from typing import Any

import pytest

from pytest_plugin_evals.engine.budget import Budget, Granted, Refused
from pytest_plugin_evals.engine.wire import CLOSED, BudgetGone, RemoteBudget, serve


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_first_run_goes_alone_until_its_cost_is_known() -> None:
    budget = Budget(3.0)
    assert budget.reserve("w1/1") == Granted(3.0)
    assert budget.reserve("w2/1") is None  # a run's cost is not known yet: it waits
    budget.settle("w1/1", 1.0)
    assert budget.reserve("w2/1") == Granted(2.0)
    assert budget.reserve("w3/1") is None  # $1 spent + $1 reserved + $1 more reaches $3


def test_workers_reserving_together_never_pass_the_ceiling() -> None:
    """Runs of $1 under a $3 ceiling, asked for by three workers in every order: the spend
    ends at the ceiling, never above it, and the runs past it are refused with the reason."""
    budget = Budget(3.0)
    spent, refused, waits = 0.0, [], 0
    flying: list[str] = []
    for step in range(60):
        ticket = f"w{step % 3}/{step}"
        got = budget.reserve(ticket)
        if isinstance(got, Granted):
            flying.append(ticket)
        elif isinstance(got, Refused):
            refused.append(got.reason)
        else:
            waits += 1
        if flying and step % 2:  # the oldest run in flight ends, having cost $1
            budget.settle(flying.pop(0), 1.0)
            spent += 1.0
    for ticket in flying:
        budget.settle(ticket, 1.0)
        spent += 1.0
    assert spent == budget.spent() == 3.0
    assert waits > 0 and refused
    assert refused[-1] == "cost ceiling $3 reached ($3.0000 spent): run not started"


def test_one_run_alone_may_pass_the_ceiling_by_its_own_cost_only() -> None:
    budget = Budget(1.0)
    for n in range(3):  # $0.4 each: the third starts at $0.80, as one process alone would
        got = budget.reserve(f"w/{n}")
        assert isinstance(got, Granted)
        budget.settle(f"w/{n}", 0.4)
    assert (
        budget.reserve("w/3")
        == budget.refused()
        == Refused("cost ceiling $1 reached ($1.2000 spent): run not started")
    )


def test_a_released_run_spends_nothing_and_a_hostile_cost_counts_as_nothing() -> None:
    budget = Budget(1.0)
    assert isinstance(budget.reserve("w/1"), Granted)
    budget.release("w/1")
    assert isinstance(budget.reserve("w/2"), Granted)  # the room came back
    budget.settle("w/2", -1000.0)
    budget.settle("w/3", float("nan"))
    assert budget.spent() == 0.0
    assert Budget(None).reserve("w/1") == Granted(None)


def test_a_gone_workers_reservations_and_slots_are_given_back() -> None:
    budget = Budget(1.0, slots=1)
    assert isinstance(budget.reserve("gw0/1"), Granted) and budget.take_slot("gw0/1")
    assert budget.reserve("gw1/1") is None and not budget.take_slot("gw1/1")
    budget.forget("gw0")
    assert isinstance(budget.reserve("gw1/1"), Granted) and budget.take_slot("gw1/1")


def test_n_slots_let_n_runs_go_at_once() -> None:
    budget = Budget(slots=2)
    assert budget.take_slot("a") and budget.take_slot("b")
    assert budget.take_slot("b")  # the one it holds
    assert not budget.take_slot("c")
    budget.free_slot("a")
    assert budget.take_slot("c")
    assert all(Budget().take_slot(str(n)) for n in range(100))  # no cap


def test_a_pause_is_only_made_longer_and_counts_the_time_paused_once() -> None:
    clock = Clock()
    budget = Budget(clock=clock)
    assert budget.pause_left() == 0 and budget.paused_seconds() == 0
    assert budget.pause(10) == 10
    assert budget.pause(4) == 10  # a shorter pause leaves the later end
    clock.now += 5
    assert budget.pause_left() == 5
    assert budget.pause(8) == 8  # 3 s more than the pause already set
    assert budget.paused_seconds() == 13
    clock.now += 20
    assert budget.pause_left() == 0


def test_a_pause_past_the_sessions_bound_is_not_taken() -> None:
    clock = Clock()
    budget = Budget(clock=clock)
    assert budget.pause(4, limit=5) == 4
    assert budget.pause(6, limit=5) is None  # 4 + 2 more > 5
    assert budget.pause_left() == 4 and budget.paused_seconds() == 4
    assert budget.pause(3, limit=5) == 4  # inside the pause already set: nothing added


class Pipe:
    """Both ends of a channel in one process: what the worker sends is answered by the
    holder's callback (as execnet calls it), and read back by the worker."""

    def __init__(self, budget: Budget, owner: str) -> None:
        self.answers: queue.Queue[Any] = queue.Queue()
        self.closed = False
        self.callback = serve(budget, self, owner)

    def send(self, item: Any) -> None:  # the holder's answer
        self.answers.put(item)

    def worker_send(self, item: Any) -> None:
        if self.closed:
            raise OSError("cannot send to <Channel closed>")
        self.callback(item)

    def receive(self, timeout: float | None = None) -> Any:
        return self.answers.get(timeout=timeout)


class WorkerEnd:
    def __init__(self, pipe: Pipe) -> None:
        self.pipe = pipe

    def send(self, item: Any) -> None:
        self.pipe.worker_send(item)

    def receive(self, timeout: float | None = None) -> Any:
        return self.pipe.receive(timeout)


def test_a_worker_reaches_the_same_budget_over_its_channel() -> None:
    budget = Budget(2.0, slots=1)
    pipes = [Pipe(budget, f"gw{n}") for n in range(2)]
    first, second = (RemoteBudget(WorkerEnd(pipe)) for pipe in pipes)
    assert first.reserve("1") == Granted(2.0)
    assert second.reserve("1") is None
    first.settle("1", 1.5)
    assert second.reserve("1") == Granted(0.5)  # nothing in flight, $1.50 < $2
    second.settle("1", 1.5)
    assert first.refused() == Refused("cost ceiling $2 reached ($3.0000 spent): run not started")
    assert first.spent() == budget.spent() == 3.0
    assert first.take_slot("2") and not second.take_slot("2")
    pipes[0].callback(CLOSED)  # the first worker is gone: its slot comes back
    assert second.take_slot("2")
    assert first.pause(30, None) == pytest.approx(30, abs=1)
    assert 29 < second.pause_left() <= 30 and second.paused_seconds() == 30


def test_a_worker_whose_channel_closed_refuses_every_run_at_once() -> None:
    pipe = Pipe(Budget(5.0), "gw0")
    remote = RemoteBudget(WorkerEnd(pipe))
    pipe.closed = True
    for call in (lambda: remote.reserve("1"), remote.pause_left, lambda: remote.take_slot("1")):
        with pytest.raises(BudgetGone, match=r"controller cannot be reached .*Channel closed"):
            call()
    with pytest.raises(BudgetGone, match="no channel to the controller"):
        RemoteBudget(None).refused()


def test_the_spend_is_the_exact_sum_whatever_order_the_runs_settled_in() -> None:
    amounts = [0.1 * (i % 7) + 0.0056 for i in range(400)] + [0.0028 * i for i in range(400)]
    forward, backward = Budget(), Budget()
    for n, usd in enumerate(amounts):
        forward.settle(f"a/{n}", usd)
        backward.settle(f"b/{n}", amounts[-1 - n])
    assert forward.spent() == backward.spent() == math.fsum(amounts)


def test_a_budget_shared_by_threads_counts_every_settled_run() -> None:
    budget = Budget(1000.0)

    def settle(name: str) -> None:
        for n in range(200):
            budget.settle(f"{name}/{n}", 0.01)

    threads = [threading.Thread(target=settle, args=(f"t{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert budget.spent() == pytest.approx(8.0)
