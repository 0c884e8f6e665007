"""``--eval-runs auto``'s scheduler (``engine.scheduler``), called directly: the round order,
which runs it refuses and why, the cost ceiling it holds, the order of the runs still to make
and the summary line. No pytest session: node ids and run records in, answers out."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from pytest_plugin_evals.engine import scheduler
from pytest_plugin_evals.engine.budget import COST_CEILING
from pytest_plugin_evals.engine.rounds import WAIT
from pytest_plugin_evals.engine.scheduler import (
    NOT_NEEDED,
    Answer,
    RemoteScheduler,
    Scheduler,
    answering,
    parse,
    round_order,
    wait_answer,
)
from tests.helpers import run_record, skipped_record
from tests.unit.test_engine_gates import case


def nodeid(name: str, arm: str, run: int) -> str:
    return f"evals/{name}::{name}[{arm}-{run}]"


def items(names: list[str], most: int) -> list[str]:
    """Every two-arm run item of the cases, in the collection's order (case by case)."""
    return [
        nodeid(n, arm, r) for n in names for arm in ("with", "without") for r in range(1, most + 1)
    ]


def report(s: Scheduler, name: str, run: int, with_score: float, without_score: float) -> None:
    """Run ``run`` of both arms of the case, granted and reported with these scores."""
    for arm, score in (("with", with_score), ("without", without_score)):
        assert s.ask(nodeid(name, arm, run)) is None
        record = run_record(case(name), arm, run, score=score, nodeid=nodeid(name, arm, run))
        s.take(nodeid(name, arm, run), record, final=True)


def test_a_run_item_says_its_case_arm_and_run() -> None:
    assert parse("evals/a::a[without-3]") == (("evals/a::a", None), False, 3)
    assert parse("evals/a::a[fast-with-2]") == (("evals/a::a", "fast"), True, 2)
    assert parse("evals/a::a[2]") is None  # a single-arm run
    assert parse("tests/test_x.py::test_x[with-1]") is None  # a Python test


def test_round_order_puts_every_case_s_round_before_any_case_s_next() -> None:
    ids: list[str | None] = [*items(["a", "b"], 2), None]
    ordered = [ids[i] for i in round_order(ids)]
    assert ordered == [
        None, nodeid("a", "with", 1), nodeid("a", "without", 1), nodeid("b", "with", 1),
        nodeid("b", "without", 1), nodeid("a", "with", 2), nodeid("a", "without", 2),
        nodeid("b", "with", 2), nodeid("b", "without", 2),
    ]  # fmt: skip


def test_a_clear_effect_stops_as_decided_and_its_other_runs_are_refused() -> None:
    s = Scheduler(margin=0.05, max_cost_usd=None, budget=12)
    s.expect(items(["clear"], 12))
    run = 0
    while s.ask(nodeid("clear", "with", run + 1)) is None:
        run += 1
        report(s, "clear", run, 1.0, 0.0)
    answer = s.ask(nodeid("clear", "with", run + 1))
    assert answer == (f"decided after {run} runs: better", NOT_NEEDED)
    assert 2 <= run < 12
    stop = s.stops()[("evals/clear::clear", None)]
    assert (stop.rounds, stop.most) == (run, 12)
    assert s.summary() == (
        f"sequential runs (auto:12): 1 case(s), {2 * run} of 24 runs made — stopped: decided 1"
    )


def test_arms_that_always_agree_stop_as_equivalent_inside_the_margin() -> None:
    s = Scheduler(margin=0.4, max_cost_usd=None, budget=30)
    s.expect(items(["same"], 30))
    run = 1
    while s.ask(nodeid("same", "with", run)) is None:
        report(s, "same", run, 1.0, 1.0)
        run += 1
    found = s.stops()[("evals/same::same", None)]
    assert found.stopped == "decided" and found.rounds < found.most == 30
    assert s.rounds is not None
    decision = s.rounds.cases[("evals/same::same", None)].decision
    assert decision is not None and decision.verdict == "equivalent"


def test_a_granted_run_is_granted_again_and_one_case_alone_is_not_held() -> None:
    s = Scheduler(margin=0.05, max_cost_usd=None, budget=4)
    s.expect([*items(["a"], 4), "evals/one::one[1]", "evals/q/trigger_eval.json::q[with-1]"])
    assert s.ask(nodeid("a", "with", 1)) is None
    assert s.ask(nodeid("a", "with", 1)) is None  # the same item's setup after its run ahead
    assert s.ask("evals/one::one[1]") is None  # a single-arm case runs all its runs
    assert s.ask("evals/q/trigger_eval.json::q[with-1]") is None  # a trigger query too
    assert s.rounds is not None and list(s.rounds.cases) == [("evals/a::a", None)]


def test_the_cost_ceiling_refuses_new_rounds_counting_the_runs_in_flight() -> None:
    s = Scheduler(margin=0.05, max_cost_usd=0.05, budget=12)
    s.expect(items(["a", "b"], 12))
    report(s, "a", 1, 1.0, 0.0)  # two runs of 0.01 each: 0.02 spent
    assert s.ask(nodeid("b", "with", 1)) is None
    assert s.ask(nodeid("b", "without", 1)) is None  # its round was issued: made
    refused = s.ask(nodeid("a", "with", 2))  # 0.02 spent + 2 in flight at 0.01 … < 0.05
    assert refused is None
    answer = s.ask(nodeid("b", "with", 2))  # 0.02 + 3 × 0.01 reaches the ceiling
    assert answer is not None and answer[1] == COST_CEILING
    assert "would be reached" in answer[0]


def test_only_a_final_report_of_a_run_is_taken() -> None:
    s = Scheduler(margin=0.05, max_cost_usd=None, budget=4)
    s.expect(items(["a"], 4))
    record = run_record(case("a"), "with", 1, score=1.0, nodeid=nodeid("a", "with", 1))
    s.take(nodeid("a", "with", 1), record, final=False)  # a passed setup: its call follows
    assert s.costs == [] and not s.reported
    s.take(nodeid("a", "with", 1), record, final=True)
    s.take(nodeid("a", "with", 1), record, final=True)  # its teardown carries it again
    assert s.costs == [0.01] and s.reported == {nodeid("a", "with", 1)}
    skipped = skipped_record(case("a"), "without", 4, NOT_NEEDED)
    s.take(skipped.nodeid, skipped, final=True)  # a round not needed: nothing to take
    assert skipped.nodeid not in s.reported


def test_the_runs_still_to_make_go_least_certain_first_after_the_granted() -> None:
    s = Scheduler(margin=0.05, max_cost_usd=None, budget=20)
    s.expect(items(["a", "b"], 20))
    report(s, "a", 1, 1.0, 0.0)
    report(s, "b", 1, 1.0, 1.0)  # a tie after one round: the wider interval
    assert s.reordered() and not s.reordered()  # once per completed round
    assert s.ask(nodeid("a", "with", 2)) is None  # made ahead: keeps its place in front
    rest = [nodeid("a", "with", 3), nodeid("b", "with", 3), nodeid("a", "with", 2)]
    assert [rest[i] for i in s.pending_order(rest)] == [
        nodeid("a", "with", 2), nodeid("b", "with", 3), nodeid("a", "with", 3),
    ]  # fmt: skip


class Loopback:
    """Both ends of one channel in one process: the worker's ``send`` reaches the controller's
    callback (:func:`answering`), whose ``send`` is what the worker receives."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.answers: queue.Queue[Any] = queue.Queue()
        self.asked: list[Any] = []
        self.callback = answering(scheduler, self)

    def send(self, item: Any) -> None:  # the controller's answer
        self.answers.put(item)

    def receive(self, timeout: float | None = None) -> Any:
        return self.answers.get(timeout=timeout)


class WorkerEnd:
    def __init__(self, loop: Loopback) -> None:
        self.loop = loop

    def send(self, item: Any) -> None:
        self.loop.asked.append(item)
        self.loop.callback(item)

    def receive(self, timeout: float | None = None) -> Any:
        return self.loop.receive(timeout)


def first_wait(s: Scheduler, ask: Callable[[str], Answer]) -> int:
    """The first run of ``clear`` whose answer is :data:`WAIT` (its earlier runs granted)."""
    run = 1
    while ask(nodeid("clear", "with", run)) is None:
        run += 1
    return run


def test_a_worker_asks_the_controllers_scheduler_once_per_item_but_a_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s = Scheduler(margin=0.05, max_cost_usd=None, budget=12)
    s.expect(items(["clear"], 12))
    loop = Loopback(s)
    remote = RemoteScheduler(WorkerEnd(loop))
    run = first_wait(s, remote.ask)
    waiting = nodeid("clear", "with", run)
    wait = (WAIT, NOT_NEEDED)
    assert remote.ask(waiting) == wait and remote.ask(waiting) == wait  # asked each time
    granted = nodeid("clear", "with", 1)
    assert remote.ask(granted) is None  # an answer that is not a wait is kept
    assert [m for m in loop.asked if m[0] == granted] == [[granted, False]]
    assert [m for m in loop.asked if m[0] == waiting] == [[waiting, False]] * 3
    # Run ahead of its item (may_wait False) it is not started; its item's setup waits for
    # the look, at most WAIT_SECONDS, then runs it anyway.
    assert wait_answer(remote, waiting, may_wait=False) == wait
    monkeypatch.setattr(scheduler, "WAIT_SECONDS", 0.2)
    began = time.monotonic()
    assert wait_answer(remote, waiting, may_wait=True) is None
    assert 0.2 <= time.monotonic() - began < 5
    assert loop.asked[-1] == [waiting, True]


def test_a_wait_ends_when_the_look_reports() -> None:
    s = Scheduler(margin=0.05, max_cost_usd=None, budget=12)
    s.expect(items(["clear"], 12))
    run = first_wait(s, s.ask)
    for n in range(1, run):
        for arm, score in (("with", 1.0), ("without", 0.0)):
            record = run_record(case("clear"), arm, n, score=score, nodeid=nodeid("clear", arm, n))
            threading.Timer(0.3, s.take, (nodeid("clear", arm, n), record), {"final": True}).start()
    began = time.monotonic()
    answer = wait_answer(s, nodeid("clear", "with", run), may_wait=True)
    assert answer is None or answer[0] != WAIT
    assert 0.2 < time.monotonic() - began < scheduler.WAIT_SECONDS
