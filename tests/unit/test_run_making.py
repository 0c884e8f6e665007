"""The run maker's choices and run-ahead's policy, called directly (``making``,
``engine.run_ahead``, ``settings.agent``, the shared folder's exchanges); tests/integration/
test_run_ahead.py and test_reuse.py run them in sessions with a real agent."""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

import pytest

from pytest_plugin_evals.agents import Agent, AgentError, capabilities_of
from pytest_plugin_evals.engine.budget import Budget
from pytest_plugin_evals.engine.run_ahead import RunAhead, may_start_ahead
from pytest_plugin_evals.engine.starts import Skip
from pytest_plugin_evals.judges import Judge, JudgeSetupError
from pytest_plugin_evals.making import (
    RunItem,
    RunMaker,
    ahead_depth,
    close_judges,
    needs_judge,
    results_folder,
    session_judges,
)
from pytest_plugin_evals.model import Case, GraderSpec
from pytest_plugin_evals.recording.folders import (
    chosen_folders,
    release_results_folders,
    replayed,
    tell_replayed,
)
from pytest_plugin_evals.runner import RunTarget
from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.settings.agent import (
    agent_problem,
    labelled_agent,
    make_agent,
    share_problem,
    shared_problem,
)

ROOT = Path("/evals")


def case(name: str, folder: str = "c") -> Case:
    return Case(name, "p", "prose", ROOT / folder / "prompt.md", ROOT / folder, ROOT)


class Meter:
    """An idle meter that reads what the test says."""

    def __init__(self, idle: float | None) -> None:
        self.value = idle

    def idle(self) -> float | None:
        return self.value


def ahead(depth: int, idle: float | None, check_cpus: bool = True) -> RunAhead[str, str]:
    """A run-ahead whose jobs return their item at once, on a machine of two CPUs."""
    made: RunAhead[str, str] = RunAhead(
        lambda item: lambda: item, str, threading.Event(), check_cpus=check_cpus, depth=depth
    )
    made.meter, made.cpus = Meter(idle), 2  # type: ignore[assignment]
    return made


def test_runs_start_ahead_up_to_the_depth_the_current_run_counted() -> None:
    runs = ahead(4, None)
    assert runs.fill(["a", "b", "c", "d"]) == 3
    assert sorted(runs.pending) == ["a", "b", "c"]
    runs.close()


def test_busy_cpus_start_no_run_ahead_unless_they_are_not_watched() -> None:
    assert ahead(4, 0.01).fill(["a", "b"]) == 0
    assert ahead(4, 0.01, check_cpus=False).fill(["a", "b"]) == 2


def test_at_most_two_new_runs_per_idle_cpu() -> None:
    # 10% idle of two CPUs: ceil(2 * 0.1 * 2) = 1 new run, though the depth leaves room for 7.
    assert ahead(8, 0.1).fill(["a", "b", "c"]) == 1
    assert ahead(8, 0.5).fill(["a", "b", "c"]) == 2


def test_an_item_whose_run_may_not_start_ahead_leaves_its_room_to_the_next() -> None:
    runs: RunAhead[str, str] = RunAhead(
        lambda item: None if item == "a" else (lambda: item), str, threading.Event(), depth=3
    )
    runs.meter = Meter(None)  # type: ignore[assignment]
    assert runs.fill(["a", "b", "c"]) == 2
    assert sorted(runs.pending) == ["b", "c"]
    runs.close()


def test_a_run_is_started_once_and_taken_once() -> None:
    runs = ahead(4, None)
    runs.fill(["a"])
    assert runs.fill(["a"]) == 0
    taken = runs.take("a")
    assert taken is not None and taken.result() == "a"
    assert runs.take("a") is None


def test_runs_in_flight_are_listed_and_finished_ones_free_their_room() -> None:
    gate = threading.Event()
    runs: RunAhead[str, str] = RunAhead(
        lambda item: lambda: item if gate.wait(10) else "", str, threading.Event(), depth=2
    )
    runs.meter = Meter(None)  # type: ignore[assignment]
    assert runs.fill(["a", "b"]) == 1
    assert [key for key, _ in runs.in_flight()] == ["a"]
    assert runs.fill(["b"]) == 0  # the current item's run and "a" fill the depth of two
    gate.set()
    while runs.in_flight():
        time.sleep(0.01)
    assert runs.fill(["b"]) == 1
    runs.close()


def test_closing_sets_the_stop_and_forgets_the_runs_no_item_took() -> None:
    stopping = threading.Event()
    runs: RunAhead[str, str] = RunAhead(lambda item: lambda: item, str, stopping, depth=3)
    runs.meter = Meter(None)  # type: ignore[assignment]
    runs.fill(["a", "b"])
    runs.close()
    assert stopping.is_set() and not runs.pending and not runs.in_flight()


def test_under_maxfail_only_runs_of_the_same_case_start_ahead() -> None:
    assert may_start_ahead(case("a"), case("b", "d"), 0)
    assert may_start_ahead(case("a"), case("a"), 1)
    assert not may_start_ahead(case("a"), case("b", "d"), 1)


def test_no_run_ahead_when_off_or_under_a_cost_ceiling() -> None:
    assert ahead_depth(EvalSettings(run_ahead="off"), 1) is None
    assert ahead_depth(EvalSettings(max_cost_usd=1.0), 1) is None
    assert ahead_depth(EvalSettings(max_concurrency=9), 3) == 3
    assert ahead_depth(EvalSettings(max_concurrency=1), 4) == 2  # its item's, and the next


def test_no_judge_makes_none() -> None:
    assert session_judges(EvalSettings(no_judge=True, judge="openai")) == (None, None)


def test_a_default_judge_not_available_is_none_but_a_judge_asked_for_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    settings = EvalSettings(judge="openai", judge_model=None)
    assert session_judges(settings) == (None, None)
    with pytest.raises(JudgeSetupError, match="needs a model"):
        session_judges(EvalSettings(judge="openai", judge_model=None, judge_given=True))


def test_a_second_judge_that_cannot_be_made_names_its_option(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    settings = EvalSettings(judge="openai", judge_model="m", judge_second="openai:")
    with pytest.raises(JudgeSetupError, match=r"^--eval-judge-second: .*needs a model"):
        session_judges(settings)


def test_the_results_folder_is_claimed_and_another_sessions_is_refused(tmp_path: Path) -> None:
    settings = EvalSettings(output_dir=tmp_path / "out")
    try:
        assert results_folder(settings, tmp_path, "s1", None, "one") == (tmp_path / "out", None)
        results, refusal = results_folder(settings, tmp_path, "s1", None, "two")
        assert results == tmp_path / "out"
        assert refusal is not None and "another" in refusal
    finally:
        release_results_folders("one")
        release_results_folders("two")


def test_a_folder_the_session_replays_is_not_claimed(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    settings = EvalSettings(output_dir=kept)
    assert results_folder(settings, tmp_path, "s1", kept, "one") == (kept, None)
    agents = EvalSettings(output_dir=kept, agents=(("old", f"replay:{kept}"),))
    assert results_folder(agents, tmp_path, "s1", None, "one") == (kept, None)
    assert not kept.exists()  # nothing was claimed, nor cleared


def test_a_workers_agent_problem_reaches_the_controller(tmp_path: Path) -> None:
    assert shared_problem(tmp_path) is None
    share_problem(tmp_path, "--eval-agent cmd: cannot start 'nope': not found on PATH")
    assert shared_problem(tmp_path) == "--eval-agent cmd: cannot start 'nope': not found on PATH"


def test_each_selected_agent_is_checked_once_in_order(tmp_path: Path) -> None:
    settings = EvalSettings(
        agents=(("a", f"cmd:{sys.executable}"), ("b", f"cmd:{tmp_path / 'none'}"))
    )
    labels = [None, "a", "b", "a", "b"]
    assert agent_problem(settings, labels) == "--eval-agents b: " + (
        f"--eval-agent cmd: cannot start {str(tmp_path / 'none')!r}: no such file"
    )
    assert agent_problem(settings, ["a", None]) is None


@dataclass
class Item:
    """An eval item as the run maker reads it."""

    case: Case
    nodeid: str = "evals/c::c[with-1]"
    arm: str = "with"
    run: int = 1
    agent_label: str | None = None
    baseline: None = None
    mock_plan: None = None

    def run_target(self) -> RunTarget:
        return RunTarget(self.case, "with", self.run, None, two_arm=False)


class Maker(RunMaker):
    """A run maker told by the test what the session made (the shell reads pytest's stash)."""

    agent: Agent | None = None
    judges: tuple[Judge | None, Judge | None] | None = None
    roots: tuple[Path, ...] = ()

    def made_agent(self, item: RunItem) -> Agent | None:
        return self.agent

    def made_judges(self) -> tuple[Judge | None, Judge | None] | None:
        return self.judges

    def suite_roots(self, item: RunItem) -> list[Path]:
        return list(self.roots)


@pytest.fixture
def maker(tmp_path: Path) -> Iterator[Maker]:
    shared = tmp_path / "plugin-evals-test"
    shared.mkdir()
    settings = EvalSettings(output_dir=tmp_path / "out", run_ahead="always")
    made = Maker(settings, tmp_path / "runs", Budget(), shared, "s1", None)
    yield made
    if made.run_ahead is not None:
        made.run_ahead.close()
    release_results_folders(made.tag)


def paid(name: str = "c") -> Case:
    return replace(case(name), graders=(GraderSpec("judged", "llm"),))


def test_a_run_is_made_ahead_only_with_a_made_agent_of_its_own_process(maker: Maker) -> None:
    item = Item(case("c"))
    assert maker.ahead(item) is None  # the agent is not made yet
    maker.agent = make_agent(EvalSettings(), "py:json:dumps")
    assert not capabilities_of(maker.agent).separate_process
    assert maker.ahead(item) is None  # in process: it would share this process's folder
    maker.agent = make_agent(EvalSettings(), f"cmd:{sys.executable}")
    job = maker.ahead(item)
    assert isinstance(job, functools.partial) and job.args == (item, maker.agent, None)


def test_a_paid_case_is_made_ahead_only_once_the_judge_is_made(maker: Maker) -> None:
    maker.agent = make_agent(EvalSettings(), f"cmd:{sys.executable}")
    item = Item(paid())
    assert needs_judge(item.case) and not needs_judge(case("c"))
    assert maker.ahead(item) is None
    maker.judges = (None, None)  # made: none available
    job = maker.ahead(item)
    assert isinstance(job, functools.partial) and job.args == (item, maker.agent, None)


def test_a_run_a_check_skips_is_not_made_ahead(
    maker: Maker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_SUCH_SECRET", raising=False)
    maker.agent = make_agent(EvalSettings(), f"cmd:{sys.executable}")
    item = Item(replace(paid(), requires_secret=("NO_SUCH_SECRET",)))
    maker.judges = (None, None)
    assert maker.ahead(item) is None
    no_judge = lambda: pytest.fail("a skipped run asks for no judge")  # noqa: E731
    outcome, ahead = maker.outcome(item, maker.agent, no_judge, lambda limit: [])
    assert isinstance(outcome, Skip) and outcome.recorded == "missing_secret" and not ahead


def test_the_setup_takes_the_run_made_ahead_and_starts_the_next_ones(maker: Maker) -> None:
    assert maker.start_ahead(1) is maker.run_ahead is not None
    item, asked = Item(case("c")), []
    made_ahead = Skip("made ahead")
    maker.run_ahead.submit(item.nodeid, lambda: made_ahead)

    def upcoming(limit: int) -> list[RunItem]:
        asked.append(limit)
        return []

    agent = make_agent(EvalSettings(), f"cmd:{sys.executable}")
    outcome, _ = maker.outcome(item, agent, lambda: pytest.fail("no judge"), upcoming)
    assert outcome is made_ahead and asked == [maker.run_ahead.depth - 1]
    assert maker.run_ahead.take(item.nodeid) is None  # taken once


def test_no_run_is_made_ahead_under_a_cost_ceiling(tmp_path: Path) -> None:
    settings = EvalSettings(max_cost_usd=1.0)
    made = RunMaker(settings, tmp_path, Budget(1.0), tmp_path, "s1", None)
    assert made.start_ahead(2) is None and made.run_ahead is None


def test_no_run_is_made_ahead_when_off(tmp_path: Path) -> None:
    """``--eval-run-ahead off``: each process makes its item's run alone."""
    made = RunMaker(EvalSettings(run_ahead="off"), tmp_path, Budget(), tmp_path, "s1", None)
    assert made.start_ahead(1) is None and made.run_ahead is None


@pytest.mark.parametrize(("run_ahead", "watched"), [("always", False), ("on", True)])
def test_the_runs_made_ahead_keep_to_each_process_s_share_of_max_concurrency(
    tmp_path: Path, run_ahead: str, watched: bool
) -> None:
    """``--eval-max-concurrency 3`` in one process: three runs in flight at most; ``always``
    does not look at the CPUs, ``on`` does."""
    settings = EvalSettings(run_ahead=run_ahead, max_concurrency=3)
    made = RunMaker(settings, tmp_path, Budget(), tmp_path, "s1", None)
    runs = made.start_ahead(1)
    assert runs is not None
    try:
        assert (runs.depth, runs.check_cpus) == (3, watched)
    finally:
        runs.close()


def test_the_results_folder_is_chosen_once_from_every_selected_suite(
    maker: Maker, tmp_path: Path
) -> None:
    maker.roots = (ROOT, ROOT)
    assert maker.results_for(Item(case("c"))) == tmp_path / "out"
    assert chosen_folders(maker.shared) == (tmp_path / "out", ROOT)
    maker.roots = (tmp_path,)
    assert maker.results_for(Item(case("c"))) == tmp_path / "out"  # held for the session
    assert maker.refusal(Item(case("c"))) is None


def test_judges_that_hold_a_client_are_closed() -> None:
    closed = []

    class Held:
        def close(self) -> None:
            closed.append(self)

    held = Held()
    close_judges(None, cast(Judge, held))
    assert closed == [held]


def test_an_agent_of_several_is_made_once_and_its_problem_names_its_label(
    tmp_path: Path,
) -> None:
    settings = EvalSettings(agents=(("a", f"cmd:{sys.executable}"), ("b", "nope:x")))
    made: dict[str, Agent] = {}
    first = labelled_agent(settings, made, "a")
    assert labelled_agent(settings, made, "a") is first and list(made) == ["a"]
    with pytest.raises(AgentError, match=r"^--eval-agents b: "):
        labelled_agent(settings, made, "b")


def test_the_folder_a_worker_picked_for_replay_last_reaches_the_controller(
    tmp_path: Path,
) -> None:
    assert replayed(tmp_path) is None
    tell_replayed(tmp_path, tmp_path / "results" / "s0", ["replay:last: replayed it"])
    assert replayed(tmp_path) == (tmp_path / "results" / "s0", ["replay:last: replayed it"])
