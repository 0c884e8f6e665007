"""Runs made ahead of their items: which of the next items' runs start, and when.

An agent that is a process of its own spends most of a run waiting on the model, so while a
process makes one item's run it starts the runs of the items it runs next, as long as the CPUs
have had time to spare lately: up to two new runs per idle CPU at each item's start, and at
most :func:`~pytest_plugin_evals.making.ahead_depth` runs in flight in the process
(``--eval-run-ahead always`` does not look at the CPUs; ``off``, or a cost ceiling, keeps one
run per process). Each run is made in a background thread by the job the shell prepares (the
same checks, options and agent as in its item's setup), and its setup takes the finished run.
A run started ahead that no item takes (``-x``, an interruption) is stopped at the end.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from pytest_plugin_evals.model import Case
from pytest_plugin_evals.util.background import Background
from pytest_plugin_evals.util.process import IdleMeter

#: The report attribute listing the runs a process made ahead of their items and still has
#: going, as ``[node id, seconds since it began]`` (pytest-xdist carries a report's attributes
#: to the controller, whose progress line counts them in flight).
AHEAD_ATTRIBUTE = "eval_runs_ahead"
#: The share of CPU time that must have gone unused lately for a run to be started ahead.
MIN_IDLE = 0.05

Item = TypeVar("Item")
Out = TypeVar("Out")


def may_start_ahead(case: Case, next_case: Case, maxfail: int) -> bool:
    """Under ``-x`` / ``--maxfail`` (``maxfail`` > 0) a run is made ahead only within its case:
    a failing case then stops the session before another case's run has started."""
    return not maxfail or (case.path, case.name) == (next_case.path, next_case.name)


class RunAhead(Background[Out], Generic[Item, Out]):
    """The runs of the items this process runs next, made in the background while the current
    item's goes on: at most ``depth`` in flight, the current item's included. ``job(item)`` is
    what makes the item's run, or None when it may not be made ahead now; ``stopping`` is set
    when the session ends (no run waits any more, nor is made again)."""

    def __init__(
        self,
        job: Callable[[Item], Callable[[], Out] | None],
        key: Callable[[Item], str],
        stopping: threading.Event,
        *,
        check_cpus: bool = True,
        depth: int = 2,
    ) -> None:
        self.depth = max(2, depth)
        # The current item's run (made ahead) and the next ones go on side by side.
        super().__init__(self.depth, "evals-ahead")
        self.job, self.key, self.stopping = job, key, stopping
        self.check_cpus = check_cpus
        self.meter = IdleMeter()
        self.cpus = os.cpu_count() or 1

    def room(self) -> int:
        """How many runs may start now: while fewer than ``depth`` are in flight here, the
        current item's counted; when the CPUs are watched, none unless they had time to spare
        lately, and at most two new runs per idle CPU."""
        room = self.depth - 1 - self.busy()
        if room > 0 and self.check_cpus:
            idle = self.meter.idle()
            if idle is not None:
                if idle < MIN_IDLE:
                    return 0  # the CPUs are busy: more runs would only slow these down
                room = min(room, math.ceil(2 * idle * self.cpus))
        return max(0, room)

    def fill(self, items: Sequence[Item]) -> int:
        """Start the runs of ``items`` (the next ones first) within :meth:`room`, each when
        ``job`` gives what makes it. Returns how many were started."""
        room, started = self.room(), 0
        for item in items:
            if started >= room:
                break
            key = self.key(item)
            job = self.job(item) if key not in self.pending else None
            if job is not None:
                self.submit(key, job)
                started += 1
        return started

    def close(self) -> None:
        """Stop the runs no item took, and wait for them to end."""
        self.stopping.set()
        super().close()
