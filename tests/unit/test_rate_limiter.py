"""A process's side of the session's budget: the backoff, the waits for the pause, a slot and
room under the cost ceiling (each ending with the session), the retry loop, and how a refusal
is reported and recorded."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.agents.base import RunRequest
from pytest_plugin_evals.agents.claude.agent import ClaudeAgent
from pytest_plugin_evals.agents.command import read_trace
from pytest_plugin_evals.engine.budget import Budget
from pytest_plugin_evals.engine.limits import NoRoom, RateLimits, SessionEnding, backoff_seconds
from pytest_plugin_evals.model import Case, RunResult, Transcript
from pytest_plugin_evals.records import run_from_json, run_to_json
from pytest_plugin_evals.reporting.document import document_json
from pytest_plugin_evals.reporting.terminal import rate_limit_lines
from pytest_plugin_evals.runner import RunOutcome
from pytest_plugin_evals.sandbox import Sandbox
from tests.helpers import run_record, summary

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a script as the agent: POSIX")

# -- the backoff ----------------------------------------------------------------------------


@pytest.mark.parametrize("attempt", range(10))
def test_the_backoff_doubles_within_its_jitter_and_stops_at_the_cap(attempt: int) -> None:
    ceiling = min(60.0, 2.0**attempt)
    low = backoff_seconds(attempt, random_fraction=lambda: 0.0)
    high = backoff_seconds(attempt, random_fraction=lambda: 1.0)
    assert (low, high) == (ceiling / 2, ceiling)
    assert backoff_seconds(attempt, cap=3.0, random_fraction=lambda: 1.0) == min(3.0, ceiling)


def test_the_backoff_is_jittered() -> None:
    waits = [backoff_seconds(3) for _ in range(200)]
    assert all(4.0 <= w <= 8.0 for w in waits)
    assert len({round(w, 6) for w in waits}) > 150  # runs refused together come back apart
    assert min(waits) < 5.0 and max(waits) > 7.0


# -- the waits ------------------------------------------------------------------------------


def test_the_stopping_event_ends_a_wait_for_the_pause_at_once() -> None:
    budget = Budget()
    budget.pause(300)
    limits = RateLimits(budget, retries=0)
    threading.Timer(0.2, limits.stopping.set).start()
    start = time.monotonic()
    with limits.turn():
        assert time.monotonic() - start < 5


def test_a_slot_is_held_for_the_run_and_a_wait_for_one_ends_with_the_session() -> None:
    budget = Budget(slots=1)
    limits = RateLimits(budget, retries=0, max_concurrency=1)
    with limits.turn():
        assert not budget.take_slot("other")  # this run holds the one slot
        threading.Timer(0.2, limits.stopping.set).start()
        start = time.monotonic()
        with limits.turn():  # a second run waits for it, until the session ends
            assert time.monotonic() - start < 5
    assert budget.take_slot("other")  # given back


def test_a_reservation_waits_for_the_run_in_flight_and_settles_what_was_spent() -> None:
    budget = Budget(2.5)
    limits = RateLimits(budget, retries=0, ceiling=True)
    held = threading.Event()

    def first_run() -> None:
        with limits.reserved() as ticket:
            assert ticket.room == 2.5  # the first run goes alone: its cost is not known
            held.set()
            time.sleep(0.3)
            ticket.spent = 1.0

    thread = threading.Thread(target=first_run)
    thread.start()
    held.wait(10)
    start = time.monotonic()
    with limits.reserved() as second:  # waits until the first run's cost is known
        assert time.monotonic() - start >= 0.2 and second.room == 1.5
    thread.join()
    assert budget.spent() == 1.0  # the second said it spent nothing: given back
    budget.settle("x", 1.5)
    refused = pytest.raises(NoRoom, match=r"cost ceiling \$2.5 reached \(\$2.5000 spent\)")
    with refused, limits.reserved():
        raise AssertionError("the block must not run")


# -- the retry loop --------------------------------------------------------------------------


def outcome(
    kind: str | None = None, retry_after: float | None = None, cost: float = 0.0
) -> RunOutcome:
    transcript = Transcript(infra_error=kind, retry_after=retry_after)  # type: ignore[arg-type]
    result = RunResult(
        arm="with", run=1, infra_error=kind, error=f"{kind}!" if kind else None, cost_usd=cost
    )
    return RunOutcome(result, transcript)


class Script:
    """Attempts that come back as scripted, one per call."""

    def __init__(self, *outcomes: RunOutcome) -> None:
        self.outcomes = list(outcomes)
        self.starts: list[float] = []

    def __call__(self) -> RunOutcome:
        self.starts.append(time.time())
        return self.outcomes.pop(0)


def test_a_refused_run_is_made_again_after_its_retry_after() -> None:
    limits = RateLimits(Budget(), retries=3)
    script = Script(
        outcome("rate_limit", 0.3, cost=0.01), outcome("overloaded", 0.2), outcome(None)
    )
    made = limits.make(script, timeout=60)
    assert made.result.infra_error is None
    assert made.result.retries == 2
    assert 0.45 <= made.result.retry_wait_seconds < 3
    assert made.result.cost_usd == 0.01  # what the refused attempts cost is the run's too
    assert made.result.notes[0].startswith("refused by the provider 2 times: made 3 times, ")
    assert script.starts[1] - script.starts[0] >= 0.3
    assert script.starts[2] - script.starts[1] >= 0.2
    assert 0.5 <= limits.budget.paused_seconds() < 3


def test_without_retry_after_the_wait_is_a_backoff() -> None:
    limits = RateLimits(Budget(), retries=1)
    script = Script(outcome("rate_limit"), outcome(None))
    made = limits.make(script, timeout=60)
    assert made.result.retries == 1
    assert 0.5 <= script.starts[1] - script.starts[0] < 3  # the first backoff: 0.5-1 s


def test_the_bound_is_kept() -> None:
    limits = RateLimits(Budget(), retries=2)
    script = Script(*(outcome("rate_limit", 0.05) for _ in range(5)))
    made = limits.make(script, timeout=60)
    assert len(script.starts) == 3
    assert made.result.infra_error == "rate_limit" and made.result.retries == 2
    assert made.result.notes[-1] == (
        "rate_limit: still refused after 2 times (--eval-rate-limit-retries 2)"
    )


def test_a_wait_longer_than_the_timeout_is_not_waited() -> None:
    limits = RateLimits(Budget(), retries=5)
    script = Script(outcome("rate_limit", 90), outcome(None))
    made = limits.make(script, timeout=60)
    assert len(script.starts) == 1 and made.result.retries == 0
    assert made.result.notes == (
        "rate_limit: the provider asked to wait 90s, longer than the run's timeout (60s): "
        "not made again",
    )
    assert limits.budget.pause_left() == 0.0  # nobody is held up for it


@pytest.mark.parametrize("kind", ["auth", "api", "agent_start", None])
def test_other_outcomes_are_not_retried(kind: str | None) -> None:
    limits = RateLimits(Budget(), retries=5)
    script = Script(outcome(kind, 0.01), outcome(None))
    made = limits.make(script, timeout=60)
    assert len(script.starts) == 1
    assert made.result == outcome(kind, 0.01).result  # as it was: nothing added


def test_no_retries_and_no_retry_when_may_retry_says_no() -> None:
    script = Script(outcome("rate_limit", 0.01), outcome(None))
    assert RateLimits(Budget(), retries=0).make(script, timeout=60).result.retries == 0
    script = Script(outcome("rate_limit", 0.01), outcome(None))
    made = RateLimits(Budget(), retries=3).make(script, timeout=60, may_retry=lambda: False)
    assert len(script.starts) == 1 and made.result.infra_error == "rate_limit"


def test_a_run_waits_for_a_pause_another_process_set() -> None:
    budget = Budget()
    budget.pause(0.5)
    limits = RateLimits(budget, retries=3)
    made = limits.make(Script(outcome(None)), timeout=60)
    assert made.result.retries == 0 and made.result.retry_wait_seconds >= 0.4
    assert made.result.notes[0].startswith("waited 0.")


def test_a_run_not_started_when_the_session_ends_meanwhile() -> None:
    budget = Budget()
    budget.pause(300)
    limits = RateLimits(budget, retries=3)
    threading.Timer(0.2, limits.stopping.set).start()
    script = Script(outcome(None))
    with pytest.raises(SessionEnding):
        limits.make(script, timeout=600)
    assert script.starts == []


# -- what is reported and recorded ----------------------------------------------------------


def transcript_of(*events: dict[str, Any], tmp_path: Path) -> Transcript:
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(e) + "\n" for e in events))
    transcript = Transcript()
    read_trace(trace, transcript)
    return transcript


@pytest.mark.parametrize(
    ("event", "kind", "error", "retry_after"),
    [
        ({"status": 429, "retry_after": 2, "message": "slow down"}, "rate_limit",
         "API error 429: slow down", 2.0),
        ({"status": 529}, "overloaded", "API error 529", None),
        ({"status": 401, "message": "bad key"}, "auth", "API error 401: bad key", None),
        ({"status": "429", "retry_after": -1}, "api", "API error", None),
        ({"status": 429, "retry_after": "soon", "message": 7}, "rate_limit", "API error 429",
         None),
    ],
)  # fmt: skip
def test_a_cmd_agent_reports_an_api_error(
    tmp_path: Path, event: dict[str, Any], kind: str, error: str, retry_after: float | None
) -> None:
    transcript = transcript_of({"type": "api_error", **event}, tmp_path=tmp_path)
    assert (transcript.infra_error, transcript.error) == (kind, error)
    assert transcript.retry_after == retry_after


def test_a_long_api_error_message_is_cut(tmp_path: Path) -> None:
    transcript = transcript_of(
        {"type": "api_error", "status": 429, "message": "x" * 5000}, tmp_path=tmp_path
    )
    assert transcript.error == "API error 429: " + "x" * 500


def test_retries_are_recorded_with_the_run() -> None:
    result = RunResult(arm="with", run=2, retries=3, retry_wait_seconds=4.5)
    doc = run_to_json(result)
    assert (doc["retries"], doc["retryWaitSeconds"]) == (3, 4.5)
    assert run_from_json(json.loads(json.dumps(doc))) == result
    plain = run_to_json(RunResult(arm="with", run=1))
    assert plain["retries"] == 0 and "retryWaitSeconds" not in plain


def test_the_document_and_the_terminal_say_how_long_was_waited() -> None:
    case = Case("a", "Prompt", "prose", Path("/s/evals/a/prompt.md"), Path("/s/evals/a"),
                Path("/s/evals"))  # fmt: skip
    first = run_record(case, "with", 1, two_arm=False, score=1.0)
    second = run_record(case, "with", 2, two_arm=False, score=1.0)
    records = [
        dataclasses.replace(first, result=dataclasses.replace(first.result, retries=4)),
        dataclasses.replace(second, result=dataclasses.replace(second.result, retries=3)),
    ]
    result = summary(records, ablation="none", rate_limit_wait_seconds=12.4)
    agg = document_json(result)["aggregates"]
    assert (agg["rateLimitRetries"], agg["rateLimitWaitSeconds"]) == (7, 12.4)
    assert rate_limit_lines(result) == ["rate limits: 7 retries, waited 12s"]
    short = summary(records[:1], ablation="none", rate_limit_wait_seconds=1.25)
    assert rate_limit_lines(short) == ["rate limits: 4 retries, waited 1.2s"]
    quiet = summary([first], ablation="none")
    assert document_json(quiet)["aggregates"]["rateLimitRetries"] == 0
    assert rate_limit_lines(quiet) == []


#: A claude stand-in: writes what CLAUDE_CODE_MAX_RETRIES it got, then ends a run.
FAKE_CLAUDE = f"""#!{sys.executable}
import json, os, sys
sys.stdin.read()
open(os.environ["FAKE_LOG"], "w").write(os.environ.get("CLAUDE_CODE_MAX_RETRIES", "<unset>"))
print(json.dumps({{"type": "system", "subtype": "init", "plugins": []}}))
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": "ok"}}))
"""


@pytest.mark.parametrize(
    ("retries", "operator", "seen"), [(5, None, "0"), (0, None, "<unset>"), (5, "3", "3")]
)
def test_claude_leaves_the_waiting_to_the_session(
    tmp_path: Path, retries: int, operator: str | None, seen: str
) -> None:
    binary = tmp_path / "fake-claude"
    binary.write_text(FAKE_CLAUDE)
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    case_dir = tmp_path / "suite" / "evals" / "a"
    case_dir.mkdir(parents=True)
    case = Case("a", "hi", "prose", case_dir / "prompt.md", case_dir, case_dir.parent)
    box = Sandbox.create(tmp_path / "run")
    env = box.environment({"PATH": os.environ.get("PATH", "")})
    env["FAKE_LOG"] = str(tmp_path / "log.txt")
    if operator is not None:
        env["CLAUDE_CODE_MAX_RETRIES"] = operator
    request = RunRequest(
        case=case, arm="single", run=1, prompt="hi", sandbox=box, plugin_dir=None, model=None,
        max_turns=3, timeout_seconds=30, allowed_tools=(), env=env, rate_limit_retries=retries,
        unconfined=True,  # the stand-in logs what it was given outside its run
    )  # fmt: skip
    ClaudeAgent(str(binary)).run(request)
    assert (tmp_path / "log.txt").read_text() == seen
