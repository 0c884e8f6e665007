"""The pieces of waiting out rate limits: the backoff, the session's shared pause and run slots
(checked across two processes), the retry loop, and how a refusal is reported and recorded."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.agents.base import RunRequest
from pytest_plugin_evals.agents.claude.agent import ClaudeAgent
from pytest_plugin_evals.agents.command import read_trace
from pytest_plugin_evals.model import Case, RunResult, Transcript
from pytest_plugin_evals.plugin.limiter import (
    PAUSE_FILE,
    RateLimits,
    RunSlots,
    SessionEnding,
    SharedPause,
    backoff_seconds,
)
from pytest_plugin_evals.records import run_from_json, run_to_json
from pytest_plugin_evals.reporting.document import document_json
from pytest_plugin_evals.reporting.terminal import rate_limit_lines
from pytest_plugin_evals.runner import RunOutcome
from pytest_plugin_evals.sandbox import Sandbox
from tests.helpers import run_record, summary

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")

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


# -- the shared pause -----------------------------------------------------------------------


def test_a_pause_is_only_ever_made_longer_and_counts_the_time_paused_once(tmp_path: Path) -> None:
    pause = SharedPause(tmp_path / PAUSE_FILE)
    assert (pause.until(), pause.paused_seconds()) == (0.0, 0.0)
    assert pause.pause(2, now=100.0) == 102.0
    assert pause.pause(1, now=100.5) == 102.0  # within the pause: it stays as it is
    assert pause.paused_seconds() == 2.0
    assert pause.pause(3, now=101.0) == 104.0  # overlapping: 2 more seconds
    assert pause.paused_seconds() == 4.0
    assert pause.pause(1, now=110.0) == 111.0  # after a gap: 1 more
    assert (pause.until(), pause.paused_seconds()) == (111.0, 5.0)


@pytest.mark.parametrize("text", ["", "garbage\n", "nan inf\n", "1.5"])
def test_a_pause_file_that_cannot_be_read_is_no_pause(tmp_path: Path, text: str) -> None:
    (tmp_path / PAUSE_FILE).write_text(text)
    pause = SharedPause(tmp_path / PAUSE_FILE)
    assert (pause.until(), pause.paused_seconds()) == (0.0, 0.0)
    assert pause.wait(threading.Event()) == 0.0


#: Waits for the pause in the folder given, then prints when it was done and what it waited.
WAITER = """\
import json, sys, threading, time
from pathlib import Path
from pytest_plugin_evals.plugin.limiter import SharedPause
pause = SharedPause(Path(sys.argv[1]))
Path(sys.argv[2]).write_text("waiting")
waited = pause.wait(threading.Event())
print(json.dumps({"done": time.time(), "waited": waited}))
"""


def run_child(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def wait_for(path: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def test_another_process_waits_out_a_pause_even_when_it_is_made_longer(tmp_path: Path) -> None:
    path = tmp_path / PAUSE_FILE
    pause = SharedPause(path)
    first = pause.pause(3.0)  # long enough that, on a loaded machine too, the child is
    child = run_child(WAITER, str(path), str(tmp_path / "ready"))  # still waiting when…
    wait_for(tmp_path / "ready")
    time.sleep(0.3)
    end = pause.pause(4.5)  # …this process is refused again: the pause is longer now
    assert first is not None and end is not None  # no bound on the pauses here
    assert time.time() < first, "the machine was too slow for this test's first pause"
    out, _ = child.communicate(timeout=30)
    seen = json.loads(out)
    assert seen["done"] >= end
    assert seen["done"] - end < 2.0  # and no longer than that
    assert seen["waited"] >= 3.0


def test_the_stopping_event_ends_a_wait_at_once(tmp_path: Path) -> None:
    pause = SharedPause(tmp_path / PAUSE_FILE)
    pause.pause(300)
    stopping = threading.Event()
    threading.Timer(0.2, stopping.set).start()
    start = time.monotonic()
    pause.wait(stopping)
    assert time.monotonic() - start < 5


# -- run slots -------------------------------------------------------------------------------

#: Holds a slot of the folder given (count 1), saying when it got it; holds it for argv[3] s.
HOLDER = """\
import json, sys, threading, time
from pathlib import Path
from pytest_plugin_evals.plugin.limiter import RunSlots
slots = RunSlots(Path(sys.argv[1]), int(sys.argv[2]))
with slots.hold(threading.Event()):
    got = time.time()
    time.sleep(float(sys.argv[3]))
    left = time.time()
print(json.dumps({"got": got, "left": left}))
"""


def test_a_slot_held_in_one_process_keeps_another_waiting(tmp_path: Path) -> None:
    slots = RunSlots(tmp_path, 1)
    with slots.hold(threading.Event()):
        child = run_child(HOLDER, str(tmp_path), "1", "0")
        time.sleep(1.0)
        released = time.time()
    out, _ = child.communicate(timeout=30)
    assert json.loads(out)["got"] >= released


def test_n_slots_let_n_runs_go_at_once(tmp_path: Path) -> None:
    children = [run_child(HOLDER, str(tmp_path), "2", "1.0") for _ in range(3)]
    spans = [json.loads(c.communicate(timeout=60)[0]) for c in children]
    edges = sorted([(s["got"], 1) for s in spans] + [(s["left"], -1) for s in spans])
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    assert peak == 2


def test_a_wait_for_a_slot_ends_when_the_session_does(tmp_path: Path) -> None:
    slots = RunSlots(tmp_path, 1)
    stopping = threading.Event()
    with slots.hold(stopping):
        threading.Timer(0.2, stopping.set).start()
        start = time.monotonic()
        with slots.hold(stopping):
            assert time.monotonic() - start < 5


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


def test_a_refused_run_is_made_again_after_its_retry_after(tmp_path: Path) -> None:
    limits = RateLimits(tmp_path, retries=3)
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
    assert 0.5 <= limits.pause.paused_seconds() < 3


def test_without_retry_after_the_wait_is_a_backoff(tmp_path: Path) -> None:
    limits = RateLimits(tmp_path, retries=1)
    script = Script(outcome("rate_limit"), outcome(None))
    made = limits.make(script, timeout=60)
    assert made.result.retries == 1
    assert 0.5 <= script.starts[1] - script.starts[0] < 3  # the first backoff: 0.5-1 s


def test_the_bound_is_kept(tmp_path: Path) -> None:
    limits = RateLimits(tmp_path, retries=2)
    script = Script(*(outcome("rate_limit", 0.05) for _ in range(5)))
    made = limits.make(script, timeout=60)
    assert len(script.starts) == 3
    assert made.result.infra_error == "rate_limit" and made.result.retries == 2
    assert made.result.notes[-1] == (
        "rate_limit: still refused after 2 times (--eval-rate-limit-retries 2)"
    )


def test_a_wait_longer_than_the_timeout_is_not_waited(tmp_path: Path) -> None:
    limits = RateLimits(tmp_path, retries=5)
    script = Script(outcome("rate_limit", 90), outcome(None))
    made = limits.make(script, timeout=60)
    assert len(script.starts) == 1 and made.result.retries == 0
    assert made.result.notes == (
        "rate_limit: the provider asked to wait 90s, longer than the run's timeout (60s): "
        "not made again",
    )
    assert limits.pause.until() == 0.0  # nobody is held up for it


@pytest.mark.parametrize("kind", ["auth", "api", "agent_start", None])
def test_other_outcomes_are_not_retried(tmp_path: Path, kind: str | None) -> None:
    limits = RateLimits(tmp_path, retries=5)
    script = Script(outcome(kind, 0.01), outcome(None))
    made = limits.make(script, timeout=60)
    assert len(script.starts) == 1
    assert made.result == outcome(kind, 0.01).result  # as it was: nothing added


def test_no_retries_and_no_retry_when_may_retry_says_no(tmp_path: Path) -> None:
    script = Script(outcome("rate_limit", 0.01), outcome(None))
    assert RateLimits(tmp_path, retries=0).make(script, timeout=60).result.retries == 0
    script = Script(outcome("rate_limit", 0.01), outcome(None))
    made = RateLimits(tmp_path, retries=3).make(script, timeout=60, may_retry=lambda: False)
    assert len(script.starts) == 1 and made.result.infra_error == "rate_limit"


def test_a_run_waits_for_a_pause_another_process_set(tmp_path: Path) -> None:
    SharedPause(tmp_path / PAUSE_FILE).pause(0.5)
    limits = RateLimits(tmp_path, retries=3)
    made = limits.make(Script(outcome(None)), timeout=60)
    assert made.result.retries == 0 and made.result.retry_wait_seconds >= 0.4
    assert made.result.notes[0].startswith("waited 0.")


def test_a_run_not_started_when_the_session_ends_meanwhile(tmp_path: Path) -> None:
    SharedPause(tmp_path / PAUSE_FILE).pause(300)
    limits = RateLimits(tmp_path, retries=3)
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
