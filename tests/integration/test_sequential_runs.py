"""``--eval-runs auto``: cases run in rounds and stop once decided or futile; the controller
decides for every process (``-n 0``, ``-n 2``, ``--tx 2*popen``, a socket worker)."""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.engine.scheduler import WAIT_SECONDS
from pytest_plugin_evals.stats.sequential import looks

#: A ``py:`` agent with deterministic draws: ``clear`` passes with the plugin only, ``flip``
#: alternates which arm passes (Δ +1, −1, …), ``same`` passes in both arms.
PY_AGENT = """\
def answer(request):
    case, arm, run = request.case.name, request.arm, request.run
    if case == "clear":
        return "ALPHA" if arm == "with" else "no"
    if case == "same":
        return "ALPHA"
    return "ALPHA" if (arm == "with") == (run % 2 == 1) else "no"
"""

#: The same draws from a ``cmd:`` agent (a process of its own; its runs are made ahead), each
#: run noting when it started and ended in $EVAL_LOG_DIR.
CMD_AGENT = """\
import json, os, time
case, arm, run = os.environ["EVAL_CASE"], os.environ["EVAL_ARM"], os.environ["EVAL_RUN"]
log = os.path.join(os.environ["EVAL_LOG_DIR"], f"{case}-{arm}-{run}.json")
start = time.time()
time.sleep(float(os.environ.get("EVAL_NAP", "0")))
with open(log, "w") as out:
    json.dump({"start": start, "end": time.time()}, out)
print("ALPHA" if arm == "with" or case == "same" else "no")
"""


def make_suite(pytester: pytest.Pytester, cases: list[str]) -> None:
    pytester.makefile(".json", **{".claude-plugin/plugin": '{"name": "helper"}'})
    for name in cases:
        pytester.makefile(".md", **{f"evals/{name}/prompt": f"Do {name}"})
        grader = "---\ntype: regex\npattern: ALPHA\n---\n"
        pytester.makefile(".md", **{f"evals/{name}/graders/alpha": grader})
    pytester.makepyfile(seq_agent=PY_AGENT)
    pytester.makeini("[pytest]\npythonpath = .\n")


def run(pytester: pytest.Pytester, *args: str) -> Any:
    return pytester.runpytest(
        "evals",
        "-p",
        "no:cacheprovider",
        "--eval-agent",
        "py:seq_agent:answer",
        "--eval-threshold",
        "0",
        "--eval-json",
        "out.json",
        "-rs",
        *args,
    )


def sequential(pytester: pytest.Pytester) -> dict[str, Any]:
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    return {c["name"]: c["aggregates"] for c in doc["cases"]}


def check_clear_and_flip(result: Any, cases: dict[str, Any]) -> None:
    clear, flip = cases["clear"], cases["flip"]
    assert clear["sequential"]["stopped"] == "decided"
    taken = clear["sequential"]["runs"]
    assert 2 <= taken < 12
    assert clear["sequential"]["reason"] == f"decided after {taken} runs: better"
    assert clear["deltaDecision"]["verdict"] == "better"
    assert clear["deltaInterval"][0] > 0
    assert flip["sequential"]["stopped"] == "futility"
    assert flip["deltaDecision"]["verdict"] == "inconclusive"
    assert flip["sequential"]["runs"] < 12
    result.stdout.fnmatch_lines([f"SKIPPED * decided after {taken} runs: better"])
    result.stdout.fnmatch_lines(
        [
            "SKIPPED * stopped after * runs as inconclusive: more runs within its budget would"
            " likely not decide it (futility)"
        ]
    )
    result.stdout.fnmatch_lines(["sequential runs (auto:12): 2 case(s), * — stopped: *"])
    assert result.ret == 0


# The sessions with xdist workers are left out of the inner loop (``slow``): there the cost
# ceiling's ``--tx 2*popen`` session and the socket worker's keep the controller deciding for
# workers.
@pytest.mark.parametrize(
    "mode",
    [
        [],
        pytest.param(["-n", "2"], marks=pytest.mark.slow),
        pytest.param(["--tx", "2*popen", "--dist", "load"], marks=pytest.mark.slow),
    ],
)
def test_decided_and_futile_cases_stop(pytester: pytest.Pytester, mode: list[str]) -> None:
    """A clear effect stops once decided, a coin-flip one for futility; their remaining runs
    are skipped with the reason, never failed, and the JSON says why each case stopped, the
    same in one process and with xdist workers."""
    make_suite(pytester, ["clear", "flip"])
    result = run(pytester, "--eval-runs", "auto:12", "--eval-report", "r.html", *mode)
    cases = sequential(pytester)
    check_clear_and_flip(result, cases)
    html = (pytester.path / "r.html").read_text(encoding="utf-8")
    rounds = cases["clear"]["sequential"]["runs"] + cases["flip"]["sequential"]["runs"]
    assert (
        f"Sequential runs: {rounds} of 24 runs per arm made; stopped: decided 1, futility 1."
        in html
    )
    outcomes = result.parseoutcomes()
    made = 2 * (cases["clear"]["sequential"]["runs"] + cases["flip"]["sequential"]["runs"])
    assert outcomes.get("failed", 0) == 0 and outcomes.get("errors", 0) == 0
    assert outcomes["passed"] >= made  # a round already issued may run past a stop
    assert outcomes["passed"] + outcomes["skipped"] == 48


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_cmd_agent_runs_ahead_up_to_the_next_look(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    """A ``cmd:`` agent's runs are made ahead of their items under sequential runs too, up to
    its case's next look: a round's two arms go on side by side, and no run after a look starts
    before both runs of the look have ended (whether it is needed depends on them). Nothing
    waits for a look that waits on it (that held the session until the look's wait ran out),
    and the decided case's later rounds are skipped, not made."""
    make_suite(pytester, ["clear"])
    (pytester.path / "agent.py").write_text(CMD_AGENT, encoding="utf-8")
    logs = pytester.path / "logs"
    logs.mkdir()
    monkeypatch.setenv("EVAL_LOG_DIR", str(logs))
    monkeypatch.setenv("EVAL_NAP", "0.4")
    agent = "cmd:" + shlex.join([sys.executable, str(pytester.path / "agent.py")])
    began = time.monotonic()
    result = run(
        pytester, "--eval-runs", "auto:20", "--eval-agent", agent, "-n", workers,
        "--eval-run-ahead", "always", "--eval-unconfined",
    )  # fmt: skip
    assert time.monotonic() - began < WAIT_SECONDS  # no look's wait ran out
    clear = sequential(pytester)["clear"]
    assert clear["sequential"]["stopped"] == "decided"
    assert clear["deltaDecision"]["verdict"] == "better"
    assert result.parseoutcomes()["skipped"] >= 2 * (20 - clear["sequential"]["runs"]) - 4
    runs = {}
    for path in logs.glob("clear-*.json"):
        _, arm, number = path.stem.split("-")
        runs[(arm, int(number))] = json.loads(path.read_text(encoding="utf-8"))
    overlapping = [
        r for r in range(1, 21)
        if ("with", r) in runs and ("without", r) in runs
        and runs["with", r]["start"] < runs["without", r]["end"]
        and runs["without", r]["start"] < runs["with", r]["end"]
    ]  # fmt: skip
    assert overlapping, runs  # a round's arms went on at once
    for look in looks(20):
        if ("with", look) not in runs or ("without", look) not in runs:
            continue
        over = max(runs["with", look]["end"], runs["without", look]["end"])
        later = {key: span for key, span in runs.items() if key[1] > look}
        assert all(span["start"] >= over for span in later.values()), (look, runs)


def test_cost_ceiling_is_held_by_the_controller(pytester: pytest.Pytester) -> None:
    """Under ``--eval-max-cost-usd`` the controller stops issuing rounds once the runs'
    reported spend reaches it (each run here costs $0.01)."""
    make_suite(pytester, ["clear"])
    pytester.makepyfile(
        priced="from pytest_plugin_evals.model import Transcript\n"
        "def answer(request):\n"
        "    text = 'ALPHA' if request.arm == 'with' else 'no'\n"
        "    return Transcript(final_message=text, cost_usd=0.01)\n"
    )
    result = run(
        pytester, "--eval-runs", "auto:20", "--eval-agent", "py:priced:answer",
        "--eval-max-cost-usd", "0.05", "--tx", "2*popen",
    )  # fmt: skip
    clear = sequential(pytester)["clear"]
    assert clear["sequential"]["runs"] <= 4
    result.stdout.fnmatch_lines(["SKIPPED * cost ceiling $0.05 * run not started"])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_socket_worker_asks_the_controller(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """A worker reached through ``--tx socket=…`` (an execnet socket server on loopback, as on
    another host) gets its answers from the controller over its own gateway."""
    import execnet

    make_suite(pytester, ["clear", "flip"])
    port = _free_port()
    server = Path(execnet.__file__).parent / "script" / "socketserver.py"
    proc = subprocess.Popen([sys.executable, str(server), f"127.0.0.1:{port}"], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        result = run(
            pytester, "--eval-runs", "auto:12", "--tx", f"socket=127.0.0.1:{port}",
            "--rsyncdir", str(pytester.path),
        )  # fmt: skip
        check_clear_and_flip(result, sequential(pytester))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


#: Two cases that both run to their budget: ``a`` (collected first) is the surer one after
#: every round, ``b`` the less certain; each run notes when it started.
ORDER_AGENT = """\
import json, time
LOG = {log!r}
WITH = {{"a": lambda r: True, "b": lambda r: r % 4 != 1}}
WITHOUT = {{"a": lambda r: r % 3 == 0, "b": lambda r: r % 4 == 3}}
def answer(request):
    case, arm, run = request.case.name, request.arm, request.run
    with open(LOG, "a", encoding="utf-8") as out:
        out.write(json.dumps([time.monotonic(), case, arm, run]) + "\\n")
    time.sleep({pause})
    passed = (WITH if arm == "with" else WITHOUT)[case](run)
    return "ALPHA" if passed else "no"
"""


def _first_starts(log: Path) -> dict[int, list[str]]:
    """Each round's cases in the order their first run of the round started."""
    rows = sorted(json.loads(line) for line in log.read_text(encoding="utf-8").splitlines())
    order: dict[int, list[str]] = {}
    for _, case, _, run in rows:
        seen = order.setdefault(run, [])
        if case not in seen:
            seen.append(case)
    return order


def test_the_least_certain_case_runs_first(pytester: pytest.Pytester) -> None:
    """Within a round, the undecided cases' runs start in the order of how uncertain their Δ
    is (the widest interval first), not in the order they were collected in."""
    make_suite(pytester, ["a", "b"])
    log = pytester.path / "starts.log"
    pytester.makepyfile(seq_agent=ORDER_AGENT.format(log=str(log), pause=0))
    result = run(pytester, "--eval-runs", "auto:12", "--eval-run-ahead", "off")
    cases = sequential(pytester)
    assert cases["a"]["sequential"]["runs"] == cases["b"]["sequential"]["runs"] == 12, cases
    order = _first_starts(log)
    assert order[1] == ["a", "b"]  # nothing known yet: the collection's order
    assert order[2] == ["a", "b"]  # run 2 is placed before any case has a round
    assert all(order[r] == ["b", "a"] for r in range(3, 13)), sorted(order.items())
    assert result.ret == 0


def test_the_least_certain_case_runs_first_under_xdist(pytester: pytest.Pytester) -> None:
    """Under xdist the controller puts the runs it has not yet handed to a worker in that
    order: ``b``'s runs start first in most later rounds (a worker's queue keeps its own)."""
    make_suite(pytester, ["a", "b"])
    log = pytester.path / "starts.log"
    pytester.makepyfile(seq_agent=ORDER_AGENT.format(log=str(log), pause=0.3))
    result = run(pytester, "--eval-runs", "auto:12", "-n", "2")
    assert result.ret == 0
    order = _first_starts(log)
    ahead = [r for r in range(5, 13) if order[r][0] == "b"]
    assert len(ahead) >= 6, sorted(order.items())
