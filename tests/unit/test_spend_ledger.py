"""The cost ceiling's check and the run's ticket in flight are one step, under a lock every
ledger of the session opens for itself (as each xdist worker does)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from pytest_plugin_evals.plugin.ledger import NoRoom, SpendLedger


def _one_at_a_time(spent: float, flying: int, each: float) -> str | None:
    """Room for one run in flight; slow to decide, so that checks overlap when not locked."""
    if flying:
        return f"{flying} in flight"
    time.sleep(0.05)
    return None


def test_two_workers_finding_room_at_once_do_not_both_start(tmp_path: Path) -> None:
    ledger = SpendLedger(tmp_path / "spent.txt")
    tried = threading.Barrier(4)
    done = threading.Event()
    started: list[str] = []
    refused: list[object] = []

    def run(name: str) -> None:
        # Each makes its own ledger (as each xdist worker does): its own open of the lock.
        mine = SpendLedger(tmp_path / "spent.txt")
        tried.wait()
        try:
            with mine.flying(_one_at_a_time):
                started.append(name)
                done.wait(10)
        except NoRoom as exc:
            refused.append(exc.reason)
            if len(refused) == 3:
                done.set()

    threads = [threading.Thread(target=run, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert len(started) == 1, started
    assert refused == ["1 in flight"] * 3
    assert ledger.in_flight() == 0  # the one that started is no longer in flight


def test_a_run_refused_is_not_counted_in_flight(tmp_path: Path) -> None:
    ledger = SpendLedger(tmp_path / "spent.txt")
    ledger.add(2.0)
    full = ledger.flying(lambda spent, flying, each: "full" if spent >= 2 else None)
    with pytest.raises(NoRoom) as refused, full:
        raise AssertionError("the block must not run")
    assert refused.value.reason == "full"
    assert ledger.in_flight() == 0
    with ledger.flying(lambda spent, flying, each: None):
        assert ledger.in_flight() == 1
    assert ledger.in_flight() == 0
