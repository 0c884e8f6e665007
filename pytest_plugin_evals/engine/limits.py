"""A process's side of the session's budget (:class:`~pytest_plugin_evals.engine.budget.
Budget`, held by the controller: reached as it is at ``-n 0``, else over the channel of
:mod:`.wire`, so every worker on every host agrees):

- the cost ceiling: a run reserves its expected cost before it starts, and settles what it
  spent when it ends (:meth:`RateLimits.reserved`);
- the shared pause: after the provider refused a run (a 429 rate limit, a 529 overload), no
  process starts a run before the pause ends, and the run is made again after it
  (:meth:`RateLimits.make`);
- the run slots: at most N runs in flight in the session (``--eval-max-concurrency``);
- :func:`backoff_seconds`: how long to wait before the next attempt when the provider did not
  say (exponential, with jitter, capped).

The budget never waits: this process asks again every :data:`POLL` seconds. Every wait ends
early when the ``stopping`` event is set (the session is ending), and in the main thread
Ctrl-C and SIGTERM interrupt it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import Field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from pytest_plugin_evals.engine.budget import Granted, Refused
from pytest_plugin_evals.engine.wire import BudgetGone, Reachable

if TYPE_CHECKING:
    from pytest_plugin_evals.model import RunResult, Transcript


class Made(Protocol):
    """What making a run returns (the runner's ``RunOutcome``): its result and transcript."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    result: RunResult
    transcript: Transcript


Outcome = TypeVar("Outcome", bound=Made)


#: The infrastructure errors worth waiting out: the provider said "not now".
RETRIED_KINDS = frozenset({"rate_limit", "overloaded"})

#: How often a process waiting (for the pause, a slot, room under the ceiling) asks again,
#: and looks at the session's stop sign (seconds).
POLL = 0.1

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


class SessionEnding(Exception):
    """A run that was waiting to start when the session ended: it is not started."""


@dataclasses.dataclass
class Ticket:
    """A run's name in the budget; what the ceiling leaves it (None: no ceiling), and what it
    spent, once it ended (None: it was not made, its reservation is given back)."""

    name: str
    room: float | None = None
    spent: float | None = None


class NoRoom(Exception):
    """No run may start: the cost ceiling refused it."""

    def __init__(self, refused: Refused) -> None:
        super().__init__(refused.reason)
        self.refused = refused


class RateLimits:
    """A process's side of the session's budget: every run waits for the shared pause (and a
    slot), and a run the provider refused is made again, up to ``retries`` times, after a
    pause every process honours; under a cost ceiling (``ceiling``) a run reserves its cost
    first."""

    def __init__(
        self,
        budget: Reachable,
        retries: int,
        *,
        ceiling: bool = False,
        max_concurrency: int | None = None,
        max_wait: float | None = None,
    ) -> None:
        self.budget = budget
        self.retries = retries
        self.ceiling = ceiling
        self.slots = max_concurrency is not None
        #: The most the session is paused in all (``--eval-max-rate-limit-wait``).
        self.max_wait = max_wait
        self.tickets = itertools.count(1)
        #: Set when the session ends: every wait ends at once, and no run is made again.
        self.stopping = threading.Event()
        #: Whether another process has ended the session (its stop sign is up).
        self.halted: Callable[[], bool] = lambda: False

    def _until(self, ready: Callable[[], bool]) -> float:
        """Ask ``ready`` every :data:`POLL` seconds until it says yes or the session ends;
        returns the seconds waited (0 when it said yes at once)."""
        start = time.monotonic()
        if ready():
            return 0.0
        while not self.stopping.is_set():
            if self.halted():
                self.stopping.set()
                break
            self.stopping.wait(POLL)
            if ready():
                break
        return time.monotonic() - start

    @contextlib.contextmanager
    def reserved(self) -> Iterator[Ticket]:
        """Under a cost ceiling, the run's expected cost reserved for the block (waited for
        while runs in flight leave no room, :class:`NoRoom` when the ceiling refuses it);
        what the block sets as the ticket's ``spent`` is settled at its end."""
        ticket = Ticket(str(next(self.tickets)))
        if not self.ceiling:
            yield ticket
            return
        got: list[Granted | Refused | None] = [None]

        def ready() -> bool:
            got[0] = self.budget.reserve(ticket.name)
            return got[0] is not None

        self._until(ready)
        if isinstance(got[0], Refused):
            raise NoRoom(got[0])
        if got[0] is None:
            raise SessionEnding("the session ended before the run could start")
        ticket.room = got[0].room
        try:
            yield ticket
        finally:
            with contextlib.suppress(BudgetGone):
                if ticket.spent is None:
                    self.budget.release(ticket.name)
                else:
                    self.budget.settle(ticket.name, ticket.spent)

    @contextlib.contextmanager
    def _slot(self) -> Iterator[None]:
        """One of the session's run slots held for the block (none when the session ends
        while waiting: its run is stopped at once)."""
        if not self.slots:
            yield
            return
        ticket = str(next(self.tickets))
        self._until(lambda: self.budget.take_slot(ticket))
        try:
            yield
        finally:
            with contextlib.suppress(BudgetGone):
                self.budget.free_slot(ticket)

    @contextlib.contextmanager
    def turn(self) -> Iterator[float]:
        """Wait until a run may start: the pause is over and a slot is free (the pause is
        looked at again once a slot is, as it may have been made longer meanwhile); yields the
        seconds waited for the pause."""
        waited = 0.0
        while True:
            waited += self._until(lambda: self.budget.pause_left() <= 0)
            with self._slot():
                if self.stopping.is_set() or self.budget.pause_left() <= 0:
                    yield waited
                    return

    def make(
        self,
        attempt: Callable[[], Outcome],
        *,
        timeout: float,
        may_retry: Callable[[], bool] = lambda: True,
    ) -> Outcome:
        """Make a run with ``attempt`` (a fresh run each call), again while the provider
        refuses it and the bound allows: after its ``retry-after``, else a backoff, as a pause
        of the whole session. A wait longer than the run's ``timeout`` is not waited: the run
        stays refused. Returns the last attempt, with its retries, the seconds waited and
        the cost of the refused attempts added."""
        retries, waited, spent = 0, 0.0, 0.0
        notes: list[str] = []
        outcome: Outcome | None = None
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
            if self.budget.pause(delay, self.max_wait) is None:
                notes.append(
                    f"{kind}: the session has waited out rate limits for "
                    f"{self.budget.paused_seconds():.0f}s in all, and may wait "
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


#: Runs in flight per CPU in a session by default: a ``claude`` run spends 0.6-0.8 s of CPU
#: in the three seconds or more a real model makes it take, so four per CPU keep the CPUs busy.
RUNS_PER_CPU = 4


def process_share(cap: int | None, cpus: int, processes: int) -> int:
    """The most runs one of the session's ``processes`` keeps in flight: its share of ``cap``
    (``--eval-max-concurrency``), by default of :data:`RUNS_PER_CPU` × ``cpus``; at least two
    (its item's run, and the next one's)."""
    total = cap if cap is not None else RUNS_PER_CPU * cpus
    return max(2, math.ceil(total / max(1, processes)))
