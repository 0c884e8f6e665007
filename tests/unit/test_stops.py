"""What stops runs: the shared stop sign, the credential notice, and killing what a run left."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_plugin_evals.agents.claude.auth import credential_notice
from pytest_plugin_evals.settings import common_suite_root
from pytest_plugin_evals.util import stop_sign
from pytest_plugin_evals.util.process import (
    SESSION_TAG,
    PidMark,
    kill_tagged,
    pid_mark,
    start_service,
    stop_service,
)
from pytest_plugin_evals.util.stop_sign import INTERRUPTED, WHY, Stopping, StopSign, interrupt


def test_the_first_reason_stays(tmp_path: Path) -> None:
    sign = StopSign(tmp_path / "stop.txt")
    assert sign.read() is None
    sign.put("auth_failed", "a run could not authenticate")
    sign.put("other", "later")
    assert sign.read() == ("auth_failed", "a run could not authenticate")
    assert StopSign(tmp_path / "stop.txt").read() == sign.read()  # another process sees it
    assert not sign.interrupted()
    assert not StopSign(tmp_path / "none.txt").interrupted()
    StopSign(tmp_path / "now.txt").put(INTERRUPTED, "the session was interrupted")
    assert StopSign(tmp_path / "now.txt").interrupted()


@contextlib.contextmanager
def first_signal() -> Iterator[Stopping]:
    """SIGUSR1 taken by a :class:`Stopping` and sent once: the runs are stopped, nothing is
    raised. The handler is restored after the block."""
    stopped = threading.Event()
    stopping = Stopping(stopped.set)
    stopping.take(signal.SIGUSR1)
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        assert stopped.wait(10) and stopping.signalled
        yield stopping
    finally:
        stopping.restore()
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL


def test_the_first_signal_stops_the_runs_and_the_second_raises() -> None:
    with first_signal() as stopping, pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(1)  # the handler runs between two bytecodes
    assert stopping.timer is not None and stopping.timer.finished.is_set()  # no grace left


def test_without_a_second_signal_the_grace_period_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session that does not end after the first signal (grading a pattern that backtracks)
    gets it again once the grace period is over, and raises then."""
    monkeypatch.setattr(stop_sign, "GRACE_SECONDS", 1.0)
    with first_signal(), pytest.raises(KeyboardInterrupt):
        time.sleep(10)  # the grace runs out: the signal comes again


def test_the_session_s_signals_sigint_even_where_it_was_ignored() -> None:
    """``--eval-session-timeout`` ends the session with a SIGINT to itself: it takes SIGINT even
    in a process started with it ignored (``pytest &``); an ordinary session leaves it so."""
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        plain = Stopping(lambda: None)
        plain.take_interrupts()
        assert set(plain.before) == {signal.SIGTERM}
        plain.restore()
        timeout = Stopping(lambda: None)
        timeout.take_interrupts(ignored_too=True)
        assert timeout.before == {signal.SIGINT: signal.SIG_IGN, signal.SIGTERM: signal.SIG_DFL}
        timeout.restore()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="Linux /proc")
def test_an_interruption_puts_up_the_sign_and_ends_the_session_s_runs(tmp_path: Path) -> None:
    run = _sleeper("s-interrupted", SESSION_TAG)
    try:
        sign = StopSign(tmp_path / "stop.txt")
        interrupt(sign, "s-interrupted")
        assert sign.read() == (INTERRUPTED, WHY)
        assert run.wait(timeout=10) == -9  # another process's run, found by its tag
        interrupt(None, "s-none")  # a process without a shared folder yet
    finally:
        run.kill()
        run.wait()


def test_a_handler_of_someone_else_s_is_left_alone() -> None:
    def theirs(signum: int, frame: object) -> None:
        pass

    before = signal.signal(signal.SIGUSR2, theirs)
    try:
        stopping = Stopping(lambda: None)
        stopping.take(signal.SIGUSR2)
        assert signal.getsignal(signal.SIGUSR2) is theirs and not stopping.before
    finally:
        signal.signal(signal.SIGUSR2, before)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"ANTHROPIC_API_KEY": "sk-x"}, None),
        ({"CLAUDE_CODE_OAUTH_TOKEN": "tok"}, None),
        ({"ANTHROPIC_AUTH_TOKEN": "tok"}, None),
        ({"CLAUDE_CODE_USE_BEDROCK": "1"}, None),
        ({"CLAUDE_CODE_USE_VERTEX": "true"}, None),
        ({"CLAUDE_CODE_USE_BEDROCK": "0"}, "claude: no credential for the runs: set "),
        ({"ANTHROPIC_API_KEY": "  "}, "claude: no credential for the runs: set "),
        ({}, "claude: no credential for the runs: set ANTHROPIC_API_KEY, or "),
    ],
)
def test_credential_notice(
    tmp_path: Path, environ: dict[str, str], expected: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    notice = credential_notice(environ, tmp_path)
    if expected is None:
        assert notice is None
    else:
        assert notice is not None and notice.startswith(expected)


def test_a_login_is_named_with_what_to_set_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / ".credentials.json").write_text("{}", encoding="utf-8")
    notice = credential_notice({}, tmp_path)
    assert notice is not None
    assert notice.startswith("claude: a /login session is not carried into the isolated runs")
    assert "claude setup-token" in notice and "CLAUDE_CODE_OAUTH_TOKEN" in notice
    # A configuration folder of its own (CLAUDE_CONFIG_DIR) is where the login is looked for.
    assert credential_notice({"CLAUDE_CONFIG_DIR": str(tmp_path / "x")}, tmp_path) == (
        credential_notice({}, tmp_path / "elsewhere")
    )


def test_common_suite_root() -> None:
    assert common_suite_root([]) is None
    assert common_suite_root(["/p/evals", "/p/evals"]) == Path("/p/evals")
    # A package.json suite beside evals/ shares the evals folder's results.
    assert common_suite_root(["/p/evals", "/p"]) == Path("/p/evals")
    assert common_suite_root(["/a/evals", "/b/evals"]) == Path("/")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="Linux /proc")
def test_kill_tagged_finds_a_process_that_left_its_session() -> None:
    script = "import time; time.sleep(60)"
    tagged = subprocess.Popen(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTEST_PLUGIN_EVALS_RUN": "t-123"},
        start_new_session=True,
    )
    other = subprocess.Popen(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTEST_PLUGIN_EVALS_RUN": "t-1234"},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 10
        while b"t-123" not in Path(f"/proc/{tagged.pid}/environ").read_bytes():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert kill_tagged("PYTEST_PLUGIN_EVALS_RUN", "t-123") == 1
        assert tagged.wait(timeout=10) == -9
        assert other.poll() is None  # another token's process is left alone
    finally:
        for proc in (tagged, other):
            proc.kill()
            proc.wait()


def _sleeper(token: str, name: str = "PYTEST_PLUGIN_EVALS_RUN") -> subprocess.Popen[bytes]:
    script = "import threading, time; threading.Thread(target=time.sleep, args=(60,)).start()"
    proc = subprocess.Popen(
        [sys.executable, "-c", script],  # a thread of its own: a PID in the window too
        env={**os.environ, name: token},
        start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while (
        token.encode() not in Path(f"/proc/{proc.pid}/environ").read_bytes()
        or len(list(Path(f"/proc/{proc.pid}/task").iterdir())) < 2
    ):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return proc


@pytest.mark.skipif(pid_mark() is None, reason="Linux /proc of this PID namespace")
def test_kill_tagged_since_a_mark_reads_only_processes_made_since() -> None:
    before = _sleeper("t-early")  # made before the mark: not looked at
    mark = pid_mark()
    after = _sleeper("t-early")
    try:
        assert kill_tagged("PYTEST_PLUGIN_EVALS_RUN", "t-early", since=mark) == 1
        assert after.wait(timeout=10) == -9
        assert before.poll() is None
        # A mark the counter may have gone all the way round since: every process is read.
        assert mark is not None
        old = PidMark(mark.last_pid, mark.forks - mark.pid_max, mark.pid_max)
        assert kill_tagged("PYTEST_PLUGIN_EVALS_RUN", "t-early", since=old) == 1
        assert before.wait(timeout=10) == -9
    finally:
        for proc in (before, after):
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("ends", ["when_asked", "never"])
def test_a_stopped_service_leaves_no_pipe_open(ends: str) -> None:
    """Ended by closing its stdin, or killed after the grace: both pipes are closed (a pipe
    left open is a ResourceWarning when the process object is collected)."""
    body = "import sys; sys.stdin.read()" if ends == "when_asked" else "import time; time.sleep(60)"
    proc = start_service([sys.executable, "-c", body])
    started = time.monotonic()
    stop_service(proc, grace=0.5)
    assert proc.returncode is not None and time.monotonic() - started < 10
    assert proc.stdin is not None and proc.stdin.closed
    assert proc.stdout is not None and proc.stdout.closed
