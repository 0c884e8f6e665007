"""Rate limits waited out together, and a cap on the runs in flight: files in the session's
shared folder (see :mod:`.ledger`), so every process of a session (xdist workers too) agrees.

- :class:`SharedPause`: after the provider refused a run (a 429 rate limit, a 529 overload),
  no process of the session starts a run before the pause ends. The pause is a "not before"
  time in one file, only ever moved later, under an exclusive lock; the file also keeps how
  long the session was paused in all (the union of the pauses, in wall-clock seconds).
- :class:`RunSlots`: at most N runs in flight in the session (``--eval-max-concurrency``),
  whatever ``-n`` and ``--eval-run-ahead`` start: N slot files, each held by one run under
  ``flock`` (released when the run ends, or its process dies).
- :func:`backoff_seconds`: how long to wait before the next attempt when the provider did not
  say (exponential, with jitter, capped).

Every wait ends early when the ``stopping`` event is set (the session is ending), and in the
main thread Ctrl-C and SIGTERM interrupt it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.plugin.keys import shared_key
from pytest_plugin_evals.plugin.settings import EvalSettings
from pytest_plugin_evals.util import locks

if TYPE_CHECKING:
    from pytest_plugin_evals.runner import RunOutcome

#: The infrastructure errors worth waiting out: the provider said "not now".
RETRIED_KINDS = frozenset({"rate_limit", "overloaded"})

#: The file of the shared pause, and the prefix of the slot files, in the shared folder.
PAUSE_FILE = "rate-limit.txt"
SLOT_PREFIX = "run-slot-"

#: How often a process waiting out a pause looks at the session's stop sign (seconds).
HALT_POLL = 0.25

#: The first backoff (seconds), and the most any backoff grows to.
BACKOFF_BASE = 1.0
BACKOFF_CAP = 60.0


def backoff_seconds(
    attempt: int,
    *,
    base: float = BACKOFF_BASE,
    cap: float = BACKOFF_CAP,
    random_fraction: Callable[[], float] = random.random,
) -> float:
    """The wait before retry number ``attempt + 1`` when the provider gave no ``retry-after``:
    ``base × 2^attempt``, capped at ``cap``, of which a random half is left out ("equal
    jitter": runs refused together do not all come back together, and none comes back at
    once)."""
    ceiling = min(cap, base * 2.0 ** max(0, attempt))
    return ceiling / 2 + random_fraction() * ceiling / 2


class SharedPause:
    """The session's "not before" time, and how long the session was paused in all."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @staticmethod
    def _parse(text: str) -> tuple[float, float]:
        try:
            until, total = (float(part) for part in text.split()[:2])
        except ValueError:
            return 0.0, 0.0  # not written yet (or torn): no pause
        if not (math.isfinite(until) and math.isfinite(total)):
            return 0.0, 0.0
        return until, max(0.0, total)

    def _read(self) -> tuple[float, float]:
        try:
            with self.path.open(encoding="utf-8") as fh, locks.held(fh, shared=True):
                return self._parse(fh.read())
        except FileNotFoundError:
            return 0.0, 0.0

    def pause(
        self, seconds: float, *, now: float | None = None, limit: float | None = None
    ) -> float | None:
        """Start no run before ``seconds`` from now (a later end already set stays); returns
        the end of the pause, or None (and no pause) when the session would then have been
        paused more than ``limit`` seconds in all."""
        with self.path.open("a+", encoding="utf-8") as fh, locks.held(fh):
            fh.seek(0)
            until, total = self._parse(fh.read())
            now = time.time() if now is None else now
            end = now + max(0.0, seconds)
            # The seconds this pause adds to the time the session is paused (the union).
            added = max(0.0, end - max(until, now))
            if limit is not None and added > 0 and total + added > limit:
                return None
            total += added
            until = max(until, end)
            _rewrite(fh, f"{until!r} {total!r}\n")
        return until

    def until(self) -> float:
        """The time (``time.time()``) before which no run starts; 0 when never paused."""
        return self._read()[0]

    def paused_seconds(self) -> float:
        """How long the session was paused in all, in wall-clock seconds."""
        return self._read()[1]

    def wait(self, stopping: threading.Event, halted: Callable[[], bool] = lambda: False) -> float:
        """Wait until the pause is over (it may be made longer meanwhile, by any process), or
        ``stopping`` is set, or ``halted()`` says the session is ending (looked at every
        :data:`HALT_POLL` seconds); returns the seconds waited."""
        start = time.time()
        waited = False
        while not stopping.is_set():
            left = self.until() - time.time()
            if left <= 0:
                break
            if halted():
                stopping.set()
                break
            waited = True
            stopping.wait(min(left, HALT_POLL))
        return max(0.0, time.time() - start) if waited else 0.0


def _rewrite(fh: IO[str], text: str) -> None:
    fh.seek(0)
    fh.truncate()
    fh.write(text)
    fh.flush()


class RunSlots:
    """At most ``count`` runs in flight across the session's processes."""

    #: How often a run waiting for a slot looks again (seconds).
    POLL = 0.05

    def __init__(self, folder: Path, count: int) -> None:
        self.folder = Path(folder)
        self.count = count

    def _try(self, index: int) -> IO[Any] | None:
        fh = (self.folder / f"{SLOT_PREFIX}{index}").open("a")
        try:
            taken = locks.try_exclusive(fh)
        except OSError:
            taken = False
        if not taken:
            fh.close()
            return None
        return fh

    @contextlib.contextmanager
    def hold(self, stopping: threading.Event) -> Iterator[float]:
        """Hold a slot for the block; yields the seconds waited for it. When ``stopping`` is
        set while waiting, the block runs without a slot (the session is ending: its run is
        stopped at once). Windows has no flock: slots are then not enforced."""
        if not locks.AVAILABLE:
            yield 0.0
            return
        start = time.monotonic()
        held: IO[Any] | None = None
        while held is None and not stopping.is_set():
            for index in range(self.count):
                held = self._try(index)
                if held is not None:
                    break
            else:
                stopping.wait(self.POLL)
        try:
            yield time.monotonic() - start
        finally:
            if held is not None:
                with contextlib.suppress(OSError):
                    locks.release(held)
                held.close()


class SessionEnding(Exception):
    """A run that was waiting to start when the session ended: it is not started."""


class RateLimits:
    """A process's side of the session's rate limiting: every run waits for the shared pause
    (and a slot), and a run the provider refused is made again, up to ``retries`` times,
    after a pause every process honours."""

    def __init__(
        self,
        shared: Path,
        retries: int,
        max_concurrency: int | None = None,
        max_wait: float | None = None,
    ) -> None:
        self.retries = retries
        #: The most the session is paused in all (``--eval-max-rate-limit-wait``).
        self.max_wait = max_wait
        self.pause = SharedPause(Path(shared) / PAUSE_FILE)
        self.slots = RunSlots(Path(shared), max_concurrency) if max_concurrency else None
        #: Set when the session ends: every wait ends at once, and no run is made again.
        self.stopping = threading.Event()
        #: Whether another process has ended the session (its stop sign is up).
        self.halted: Callable[[], bool] = lambda: False

    @contextlib.contextmanager
    def turn(self) -> Iterator[float]:
        """Wait until a run may start: the pause is over and a slot is free (the pause is
        looked at again once a slot is, as it may have been made longer meanwhile); yields the
        seconds waited for the pause."""
        waited = 0.0
        while True:
            waited += self.pause.wait(self.stopping, self.halted)
            with self.slots.hold(self.stopping) if self.slots else contextlib.nullcontext(0.0):
                if self.stopping.is_set() or self.pause.until() <= time.time():
                    yield waited
                    return

    def make(
        self,
        attempt: Callable[[], RunOutcome],
        *,
        timeout: float,
        may_retry: Callable[[], bool] = lambda: True,
    ) -> RunOutcome:
        """Make a run with ``attempt`` (a fresh run each call), again while the provider
        refuses it and the bound allows: after its ``retry-after``, else a backoff, as a pause
        of the whole session. A wait longer than the run's ``timeout`` is not waited: the run
        stays refused. Returns the last attempt, with its retries, the seconds waited and
        the cost of the refused attempts added."""
        retries, waited, spent = 0, 0.0, 0.0
        notes: list[str] = []
        outcome: RunOutcome | None = None
        refused_at: float | None = None  # when the last refusal paused the session
        while True:
            with self.turn() as paused:
                # After a refusal, the wait is all the time until the next attempt starts
                # (under load, more than the pause itself); else what the pause held it.
                waited += paused if refused_at is None else time.time() - refused_at
                if self.stopping.is_set():
                    if outcome is None:
                        raise SessionEnding("the session ended before the run could start")
                    break
                outcome = attempt()
            kind = outcome.result.infra_error
            if kind not in RETRIED_KINDS or self.retries == 0:
                break
            if retries >= self.retries:
                notes.append(
                    f"{kind}: still refused after {_times(retries)} "
                    f"(--eval-rate-limit-retries {self.retries})"
                )
                break
            asked = outcome.transcript.retry_after
            delay = asked if asked is not None else backoff_seconds(retries, cap=timeout)
            if delay > timeout:
                notes.append(
                    f"{kind}: the provider asked to wait {delay:g}s, longer than the run's "
                    f"timeout ({timeout:g}s): not made again"
                )
                break
            if self.stopping.is_set() or not may_retry():
                break
            refused_at = time.time()
            if self.pause.pause(delay, now=refused_at, limit=self.max_wait) is None:
                notes.append(
                    f"{kind}: the session has waited out rate limits for "
                    f"{self.pause.paused_seconds():.0f}s in all, and may wait "
                    f"{self.max_wait:g}s (--eval-max-rate-limit-wait): not made again"
                )
                break
            spent += outcome.result.cost_usd
            retries += 1
        if not (retries or waited or notes):
            return outcome
        result = outcome.result
        if retries:
            refusals = retries + (1 if result.infra_error in RETRIED_KINDS else 0)
            cost = f"; the refused attempts cost ${spent:.4f}" if spent else ""
            notes.insert(
                0,
                f"refused by the provider {_times(refusals)}: made {retries + 1} times, "
                f"{waited:.1f}s waited in all{cost}",
            )
        elif waited:
            notes.insert(0, f"waited {waited:.1f}s for the session's rate-limit pause")
        result = dataclasses.replace(
            result,
            retries=retries,
            retry_wait_seconds=round(waited, 3),
            cost_usd=round(result.cost_usd + spent, 10),
            notes=(*result.notes, *notes),
        )
        return dataclasses.replace(outcome, result=result)


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def rate_limits(config: pytest.Config, settings: EvalSettings) -> RateLimits:
    """This process's side of the session's rate limits (its files in the shared folder)."""
    return RateLimits(
        config.stash[shared_key],
        settings.rate_limit_retries,
        settings.max_concurrency,
        settings.max_rate_limit_wait,
    )


def session_wait_seconds(config: pytest.Config) -> float:
    """How long the session was paused for rate limits in all (wall-clock seconds)."""
    shared = config.stash.get(shared_key, None)
    return 0.0 if shared is None else SharedPause(shared / PAUSE_FILE).paused_seconds()
