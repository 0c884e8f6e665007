"""The session's one budget: a run the provider refused (a ``cmd:`` agent's ``api_error``
line) is made again after a pause every process of the session honours, up to a bound; runs
in flight are capped by ``--eval-max-concurrency``; the cost ceiling holds for every worker;
the waits end with the session. The budget is held by the controller, so workers that share
no folder (as on other hosts) share it all the same."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import reap, write_tree

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")

#: Counts its attempts across the session (a file under a lock): the first $EVAL_RL_REFUSE
#: (-1: every one) are refused with a 429 ``api_error`` line (``retry_after`` from
#: $EVAL_RL_RETRY_AFTER when set) and exit 1 — only those of the cases $EVAL_RL_CASES names
#: (comma-separated), when set; the others answer "done" after $EVAL_RL_NAP seconds. Each
#: attempt appends {case, start, end, refused} to log.jsonl. With $EVAL_RL_AFTER set, a case it
#: targets first waits (up to 30 s) for that case's attempt in the log: its refusal's pause then
#: never holds that case back, however the processes of the session were scheduled.
AGENT = """\
import fcntl, json, os, sys, time
sys.stdin.read()
start = time.time()
state, case = os.environ["EVAL_RL_DIR"], os.environ["EVAL_CASE"]
cases = os.environ.get("EVAL_RL_CASES")
targeted = not cases or case in cases.split(",")
after = os.environ.get("EVAL_RL_AFTER")
log_path = os.path.join(state, "log.jsonl")
while targeted and after and time.time() < start + 30:
    if os.path.exists(log_path) and json.dumps({"case": after})[1:-1] in open(log_path).read():
        break
    time.sleep(0.05)
with open(os.path.join(state, "counter"), "a+") as fh:
    fcntl.flock(fh, fcntl.LOCK_EX)
    fh.seek(0)
    seen = len(fh.read())
    if targeted:
        fh.write("x")
refuse = int(os.environ.get("EVAL_RL_REFUSE", "0"))
refused = targeted and (refuse < 0 or seen < refuse)
if not refused:
    time.sleep(float(os.environ.get("EVAL_RL_NAP", "0")))
line = {"case": case, "start": start, "end": time.time(), "refused": refused}
with open(log_path, "a") as log:
    log.write(json.dumps(line) + "\\n")
if refused:
    event = {"type": "api_error", "status": 429, "message": "slow down"}
    if os.environ.get("EVAL_RL_RETRY_AFTER"):
        event["retry_after"] = float(os.environ["EVAL_RL_RETRY_AFTER"])
    with open(os.environ["EVAL_TRACE_FILE"], "a") as trace:
        trace.write(json.dumps(event) + "\\n")
    sys.exit(1)
print("done")
"""


def make_suite(root: Path, names: list[str], timeout: int = 60) -> str:
    files = {"agent.py": AGENT}
    for name in names:
        files[f"evals/{name}/prompt.md"] = (
            f"---\nruns: 1\ntimeout_seconds: {timeout}\n---\nCase {name}.\n"
        )
        files[f"evals/{name}/graders/done.md"] = "---\ntype: regex\npattern: done\n---\n"
    write_tree(root, files)
    (root / "state").mkdir()
    return "cmd:" + shlex.join([sys.executable, str(root / "agent.py")])


def attempts(root: Path) -> list[dict[str, Any]]:
    path = root / "state" / "log.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def limited(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The agent counts its attempts in a file the whole session shares: outside any run, so
    its runs are unconfined, on purpose (what is tested is the session's scheduling)."""
    monkeypatch.setenv("EVAL_RL_DIR", str(pytester.path / "state"))
    monkeypatch.setenv("PYTEST_ADDOPTS", "--eval-unconfined")
    return monkeypatch


def all_runs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [run for case in doc["cases"] for runs in case["arms"].values() for run in runs]


@pytest.mark.workers  # the pause is the session's: every process holds it
def test_a_burst_of_rate_limits_is_waited_out_by_every_process(
    pytester: pytest.Pytester, plugin_args: list[str], limited: pytest.MonkeyPatch
) -> None:
    """The pause one worker reports holds the other, though the two share no folder (as on
    other hosts: the budget is the controller's)."""
    agent = make_suite(pytester.path, ["a", "b", "c", "d", "e", "f"])
    pytester.makeconftest(OTHER_HOSTS)
    limited.setenv("EVAL_RL_CASES", "a")
    limited.setenv("EVAL_RL_REFUSE", "2")
    limited.setenv("EVAL_RL_RETRY_AFTER", "2")
    limited.setenv("EVAL_RL_NAP", "0.8")
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "out.json",
        "--eval-run-ahead", "off",
    )  # fmt: skip
    result.assert_outcomes(passed=6)
    workers = 2 if "-n2" in plugin_args else 0
    assert len(list(pytester.path.glob("host-*"))) == workers  # a folder of each worker's own
    doc = json.loads((pytester.path / "out.json").read_text())
    assert doc["partial"] is False and doc["errors"] == {}
    assert doc["aggregates"]["runsTotal"] == 6  # the run count is unchanged
    assert doc["aggregates"]["rateLimitRetries"] == 2
    assert 4 <= doc["aggregates"]["rateLimitWaitSeconds"] < 30
    result.stdout.fnmatch_lines(["rate limits: 2 retries, waited *s"])
    (retried,) = [run for run in all_runs(doc) if run["retries"]]
    assert retried["retries"] == 2 and retried["retryWaitSeconds"] >= 3.5
    assert any("refused by the provider 2 times: made 3 times" in n for n in retried["notes"])
    log = attempts(pytester.path)
    assert len(log) == 8 and sum(a["refused"] for a in log) == 2
    # The pause is the session's: once a refusal was known, no process started a run until
    # its retry-after had passed (a run whose start was under way as it came is let be).
    for refusal in (a for a in log if a["refused"]):
        early = [
            round(a["start"] - refusal["end"], 2)
            for a in log
            if refusal["end"] + 0.6 <= a["start"] < refusal["end"] + 2.0
        ]
        assert not early, f"runs started {early} s into a 2 s pause"
        # and runs of other cases did start once it had passed (the check above saw them)
        assert any(a["case"] != "a" and a["start"] >= refusal["end"] for a in log)


#: As on other hosts: each xdist worker gets a shared folder of its own, of the same name (the
#: session's token), so no file two workers both see can hold the session's budget.
OTHER_HOSTS = """\
import os, pytest

@pytest.hookimpl(trylast=True)
def pytest_configure_node(node):
    name = os.path.basename(node.workerinput["eval_shared"])
    folder = os.path.join(os.getcwd(), "host-" + node.gateway.id, name)
    os.makedirs(folder)
    node.workerinput["eval_shared"] = folder
"""


@pytest.fixture
def socket_workers(tmp_path: Path) -> Iterator[list[str]]:
    """Three execnet socket servers on loopback, each in a folder of its own (as on other
    hosts): the ``--tx`` options of a worker on each."""
    import execnet

    server = Path(execnet.__file__).parent / "script" / "socketserver.py"
    specs, procs = [], []
    try:
        for n in range(3):
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = int(probe.getsockname()[1])
            (tmp_path / f"server-{n}").mkdir()
            address = f"127.0.0.1:{port}"
            procs.append(
                subprocess.Popen(
                    [sys.executable, str(server), address], cwd=tmp_path / f"server-{n}"
                )
            )
            specs += ["--tx", f"socket={address}"]
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, "a socket server did not start"
                    time.sleep(0.2)
        yield specs
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.mark.parametrize("gateways", ["popen", "socket"])
def test_three_workers_on_other_hosts_one_ceiling_no_overspend(
    pytester: pytest.Pytester, scripted_agent: Any, request: pytest.FixtureRequest, gateways: str
) -> None:
    if gateways == "socket":  # three socket gateways, each with its own copy of the suite
        specs = request.getfixturevalue("socket_workers")
        tx = [*specs, "--rsyncdir", str(pytester.path)]
    else:
        tx = ["--tx", "3*popen"]
    files = {}
    for name in "abcdefghi":
        files[f"evals/{name}/prompt.md"] = f"---\nruns: 1\n---\nCase {name}.\n"
        files[f"evals/{name}/graders/ok.md"] = "---\ntype: regex\npattern: ok\n---\n"
    write_tree(pytester.path, files)
    pytester.makeconftest(OTHER_HOSTS)
    usage = {"input_tokens": 10, "output_tokens": 1, "cost_usd": 1.0}
    agent = scripted_agent([{"match": "Case", "reply": "ok", "sleep": 0.5, "usage": usage}])
    # Socket gateways in a process of its own: execnet leaves their sockets to the garbage
    # collector, which would warn in whichever test of this process runs next.
    run = pytester.runpytest_subprocess if gateways == "socket" else pytester.runpytest
    result = run(
        str(pytester.path / "evals"), *tx, "--dist", "load", "-p", "no:cacheprovider",
        "--eval-agent", agent, "--eval-max-cost-usd", "3", "--eval-json", "out.json", "-rs",
    )  # fmt: skip
    assert sorted(p.name for p in pytester.path.glob("host-*")) == [
        "host-gw0",
        "host-gw1",
        "host-gw2",
    ]
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    made = all_runs(doc)
    # Each worker alone would have spent up to $3: $9 in all.
    assert sum(run["costUsd"] for run in made) == doc["costUsd"] <= 3.0, doc["costUsd"]
    assert len(made) == 3 and result.ret == 2 and doc["partialReason"] == "cost_ceiling"
    result.assert_outcomes(passed=3, skipped=6)
    result.stdout.fnmatch_lines(
        ["*SKIPPED*cost ceiling $3 reached ($3.0000 spent): run not started"]
    )


def test_a_run_still_refused_after_the_bound_is_an_error(
    pytester: pytest.Pytester, plugin_args: list[str], limited: pytest.MonkeyPatch
) -> None:
    """A run's own bound on its retries, counted in the process that makes it (the session's
    pause across processes: the tests marked workers)."""
    agent = make_suite(pytester.path, ["a"])
    limited.setenv("EVAL_RL_REFUSE", "-1")
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "out.json",
        "--eval-rate-limit-retries", "2",
    )  # fmt: skip
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*rate_limit: API error 429: slow down*"])
    doc = json.loads((pytester.path / "out.json").read_text())
    (run,) = all_runs(doc)
    assert run["infraError"] == "rate_limit" and run["retries"] == 2
    assert doc["partial"] is True and doc["errors"] == {"rate_limit": 1}
    assert doc["cases"][0]["aggregates"]["score"] is None  # kept out of the scores
    assert any("still refused after 2 times" in note for note in run["notes"])
    assert len(attempts(pytester.path)) == 3
    # No retry-after: exponential backoff with jitter, 0.5-1 s then 1-2 s.
    assert 1.5 <= run["retryWaitSeconds"] < 10


def test_no_retries_keeps_a_refused_run_an_error_at_once(
    pytester: pytest.Pytester, limited: pytest.MonkeyPatch
) -> None:
    agent = make_suite(pytester.path, ["a"])
    limited.setenv("EVAL_RL_REFUSE", "-1")
    pytester.makeini("[pytest]\neval_rate_limit_retries = 0\n")
    result = pytester.runpytest(
        "evals", "-n0", "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-json", "out.json"
    )
    result.assert_outcomes(errors=1)
    (run,) = all_runs(json.loads((pytester.path / "out.json").read_text()))
    assert run["infraError"] == "rate_limit" and run["retries"] == 0
    assert len(attempts(pytester.path)) == 1
    assert "rate limits:" not in result.stdout.str()


def test_a_wait_longer_than_the_runs_timeout_is_not_waited(
    pytester: pytest.Pytester, limited: pytest.MonkeyPatch
) -> None:
    agent = make_suite(pytester.path, ["a"], timeout=5)
    limited.setenv("EVAL_RL_REFUSE", "-1")
    limited.setenv("EVAL_RL_RETRY_AFTER", "3600")
    start = time.monotonic()
    result = pytester.runpytest(
        "evals", "-n0", "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-json", "out.json"
    )
    assert time.monotonic() - start < 30
    result.assert_outcomes(errors=1)
    (run,) = all_runs(json.loads((pytester.path / "out.json").read_text()))
    assert run["infraError"] == "rate_limit" and run["retries"] == 0
    assert any("asked to wait 3600s, longer than the run's timeout (5s)" in n for n in run["notes"])
    assert len(attempts(pytester.path)) == 1


def test_max_concurrency_caps_the_runs_in_flight_across_processes(
    pytester: pytest.Pytester, limited: pytest.MonkeyPatch
) -> None:
    """Two workers that each make runs ahead would have up to 4 in flight: the cap of 2 holds
    across them, and lets 2 go (a cap taken as 1, or as each process's own, would not)."""
    cap = 2
    agent = make_suite(pytester.path, ["a", "b", "c", "d", "e", "f"])
    limited.setenv("EVAL_RL_NAP", "0.7")
    result = pytester.runpytest(
        "evals", "-n2", "-p", "no:cacheprovider", "--eval-agent", agent,
        "--eval-run-ahead", "always", "--eval-max-concurrency", str(cap),
    )  # fmt: skip
    result.assert_outcomes(passed=6)
    log = attempts(pytester.path)
    edges = sorted([(a["start"], 1) for a in log] + [(a["end"], -1) for a in log])
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    assert peak == cap  # -n2 with runs made ahead would have up to 4 in flight


@pytest.mark.parametrize(
    ("option", "value", "accepts"),
    [
        ("--eval-rate-limit-retries", "-1", "a whole number from 0 to 100"),
        ("--eval-rate-limit-retries", "two", "a whole number from 0 to 100"),
        ("--eval-max-concurrency", "0", "a whole number from 1 to 1000"),
        ("--eval-max-concurrency", "1.5", "a whole number from 1 to 1000"),
    ],
)
def test_a_bad_value_is_one_line(
    pytester: pytest.Pytester, option: str, value: str, accepts: str
) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", f"{option}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {option} must be {accepts} (got '{value}')"])
    assert "Traceback" not in result.stderr.str()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="Linux: real signals")
@pytest.mark.parametrize(
    ("workers", "how"), [("-n0", "ctrl-c"), ("-n2", "ctrl-c"), ("-n2", "sigterm")]
)
def test_an_interruption_ends_the_waits_at_once(
    pytester: pytest.Pytester, workers: str, how: str
) -> None:
    """Ctrl-C (SIGINT to the whole group) or SIGTERM (to the controller alone, its workers
    waiting on): every process stops waiting. In one process the two signals take the same
    handler (``Stopping``), so one of them is sent there."""
    agent = make_suite(pytester.path, ["a", "b", "c", "d"], timeout=120)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "evals", workers, "-p", "no:cacheprovider",
         f"--eval-agent={agent}", "--eval-json=out.json", "--eval-run-ahead=always",
         "--eval-unconfined"],  # the agent counts its attempts outside its runs
        cwd=pytester.path,
        env={**os.environ, "EVAL_RL_DIR": str(pytester.path / "state"), "EVAL_RL_REFUSE": "-1",
             "EVAL_RL_CASES": "b,c,d", "EVAL_RL_AFTER": "a",
             "EVAL_RL_RETRY_AFTER": "100", "PYTHONPATH": os.pathsep.join(sys.path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        # A refused run, and case a's run made (the refused ones wait for it: their pause
        # would hold back a run not yet started, and such a run is rightly not in the document).
        while not (
            any(a["refused"] for a in attempts(pytester.path))
            and any(a["case"] == "a" for a in attempts(pytester.path))
        ):
            assert time.monotonic() < deadline, "no run was refused, or case a was not made"
            time.sleep(0.05)
        time.sleep(1.0)  # every process is waiting out the 100 s pause now
        stopped, stopped_at = time.monotonic(), time.time()
        if how == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=60)
        took = time.monotonic() - stopped
    finally:
        reap(proc, group=True)
    text = output.decode(errors="replace")
    assert took < 20, text
    assert proc.returncode == 2, text
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert doc["partial"] is True and doc["partialReason"] == "interrupted", text
    assert "a" in {c["name"] for c in doc["cases"]}  # the run made before is kept
    log = attempts(pytester.path)
    assert not [a for a in log if a["start"] > stopped_at], "a run was made after the stop"


@pytest.mark.workers  # the bound is the session's, over every process's waits
def test_the_session_waits_out_rate_limits_only_so_long_in_all(
    pytester: pytest.Pytester, plugin_args: list[str], limited: pytest.MonkeyPatch
) -> None:
    """An agent refused with a retry_after on every call: the pauses stop at the session's
    bound, and every run past it is a rate-limit error, not another wait."""
    agent = make_suite(pytester.path, ["a", "b", "c", "d"])
    limited.setenv("EVAL_RL_REFUSE", "-1")
    limited.setenv("EVAL_RL_RETRY_AFTER", "2")
    started = time.monotonic()
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "out.json",
        "--eval-run-ahead", "off", "--eval-rate-limit-retries", "50",
        "--eval-max-rate-limit-wait", "5",
    )  # fmt: skip
    elapsed = time.monotonic() - started
    result.assert_outcomes(errors=4)
    doc = json.loads((pytester.path / "out.json").read_text())
    assert doc["errors"] == {"rate_limit": 4} and doc["partial"] is True
    # 50 retries of 2 s for 4 runs would be minutes; the bound keeps it to a few pauses.
    assert doc["aggregates"]["rateLimitWaitSeconds"] <= 5
    assert doc["aggregates"]["rateLimitRetries"] < 10  # of the 200 that 50 retries allow
    assert elapsed < 150, elapsed  # unbounded: 400 s of pauses; a loaded machine is slow
    notes = [n for run in all_runs(doc) for n in run["notes"]]
    assert any("(--eval-max-rate-limit-wait): not made again" in n for n in notes), notes


def test_a_bad_rate_limit_bound_or_session_timeout_is_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(): pass")
    for option, value, accepts in [
        ("--eval-max-rate-limit-wait", "-1", "a number of seconds, 0 or more"),
        ("--eval-session-timeout", "0", "a number of seconds above 0"),
    ]:
        result = pytester.runpytest(option, value, "-p", "no:cacheprovider")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert [line for line in result.errlines if line] == [
            f"ERROR: {option} must be {accepts} (got '{value}')"
        ]
    pytester.makeini("[pytest]\neval_session_timeout = soon\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert [line for line in result.errlines if line] == [
        "ERROR: ini eval_session_timeout must be a number of seconds above 0 (got 'soon')"
    ]
