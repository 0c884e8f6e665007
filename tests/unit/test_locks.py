"""The one lock helper every ``flock`` site uses: a held exclusive or shared lock, and a try
that reports busy, contended by two file descriptions (two threads, two processes)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_plugin_evals.util import locks

pytestmark = pytest.mark.skipif(not locks.AVAILABLE, reason="flock: POSIX")

#: A process that holds the lock on argv[1] (shared when argv[2] is "shared") until its stdin
#: closes, and says "held" once it does.
HOLDER = """
import sys
from pytest_plugin_evals.util import locks
with open(sys.argv[1], "a") as fh, locks.held(fh, shared=sys.argv[2] == "shared"):
    print("held", flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def _holder(path: Path, kind: str) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock on ``path`` for the block (or until :func:`_let_go`)."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            assert child.stdout is not None and child.stdout.readline() == "held\n"
            yield child
        finally:
            child.kill()


def _let_go(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None
    child.stdin.close()
    assert child.wait(timeout=30) == 0


def test_a_lock_another_process_holds_is_busy_until_it_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    with _holder(path, "exclusive") as child, path.open("a") as fh:
        assert locks.try_exclusive(fh) is False
        _let_go(child)
        assert locks.try_exclusive(fh) is True


def test_a_shared_lock_admits_another_shared_one_but_no_exclusive(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    seen: list[bool] = []

    def read_beside() -> None:
        with path.open() as reader, locks.held(reader, shared=True), path.open("a") as writer:
            seen.append(locks.try_exclusive(writer))

    with _holder(path, "shared") as child:
        reading = threading.Thread(target=read_beside)
        reading.start()
        reading.join(10)
        assert not reading.is_alive(), "a shared lock waited for another shared one"
        assert seen == [False]  # two readers hold it: no writer
        with path.open("a") as writer:
            assert locks.try_exclusive(writer) is False  # the other process still reads
        _let_go(child)
        with path.open("a") as writer:
            assert locks.try_exclusive(writer) is True


def test_held_waits_for_a_holder_in_another_thread_and_releases_at_the_end(
    tmp_path: Path,
) -> None:
    path = tmp_path / "lock"
    path.touch()
    order: list[str] = []
    first_holds = threading.Event()

    def first() -> None:
        with path.open("a") as fh, locks.held(fh):
            first_holds.set()
            time.sleep(0.3)
            order.append("first done")

    def second() -> None:
        first_holds.wait(10)
        with path.open("a") as fh, locks.held(fh):
            order.append("second holds")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert order == ["first done", "second holds"]
    with path.open("a") as fh:
        assert locks.try_exclusive(fh) is True  # both blocks let go


def test_a_lock_taken_by_try_is_held_until_released(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    with path.open("a") as mine, path.open("a") as other:
        assert locks.try_exclusive(mine) is True
        assert locks.try_exclusive(other) is False
        locks.release(mine)
        assert locks.try_exclusive(other) is True
        assert locks.try_exclusive(mine) is False


@pytest.mark.parametrize("shared", [False, True])
def test_held_lets_go_at_the_end_of_its_block_with_the_file_still_open(
    tmp_path: Path, shared: bool
) -> None:
    path = tmp_path / "lock"
    with path.open("a") as mine, path.open("a") as other:
        with locks.held(mine, shared=shared):
            assert locks.try_exclusive(other) is False
        assert locks.try_exclusive(other) is True
