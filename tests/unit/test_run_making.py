"""The run maker's choices and run-ahead's policy, called directly (``making``,
``engine.run_ahead``, ``settings.agent``); tests/integration/test_run_ahead.py runs them in
sessions with a real agent."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from pytest_plugin_evals.engine.run_ahead import RunAhead, may_start_ahead
from pytest_plugin_evals.judges import JudgeSetupError
from pytest_plugin_evals.making import ahead_depth, results_folder, session_judges
from pytest_plugin_evals.model import Case
from pytest_plugin_evals.recording.folders import release_results_folders
from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.settings.agent import agent_problem, share_problem, shared_problem

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
