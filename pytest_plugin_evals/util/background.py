"""Jobs made in background threads, each under a key: taken once, listed while they go, and
stopped at the end. The threads start no process themselves: a job's runs start theirs through
:mod:`.process`, whose :func:`~.process.stop_all` stops them."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Generic, TypeVar

from pytest_plugin_evals.util.process import stop_all

Out = TypeVar("Out")


class Background(Generic[Out]):
    """At most ``workers`` jobs going at once, in threads named after ``name``."""

    def __init__(self, workers: int, name: str) -> None:
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        self.pending: dict[str, Future[Out]] = {}
        #: When each job in ``pending`` started (monotonic).
        self.started: dict[str, float] = {}

    def busy(self) -> int:
        """How many jobs are going."""
        return sum(1 for future in self.pending.values() if not future.done())

    def submit(self, key: str, job: Callable[[], Out]) -> None:
        self.started[key] = time.monotonic()
        self.pending[key] = self.pool.submit(job)

    def take(self, key: str) -> Future[Out] | None:
        """The job started under ``key``, if one was (once)."""
        self.started.pop(key, None)
        return self.pending.pop(key, None)

    def in_flight(self) -> list[list[Any]]:
        """The jobs still going, as ``[key, seconds since it began]``."""
        now = time.monotonic()
        return [
            [key, round(now - self.started.get(key, now), 3)]
            for key, future in list(self.pending.items())
            if not future.done()
        ]

    def close(self) -> None:
        """Stop the jobs no one took, and wait for them to end."""
        futures = list(self.pending.values())
        self.pending.clear()
        self.started.clear()
        for future in futures:
            future.cancel()
        # A run that was still being set up starts its agent after a first stop: stop again.
        while not all(future.done() for future in futures):
            stop_all()
            time.sleep(0.02)
        self.pool.shutdown(wait=True)
