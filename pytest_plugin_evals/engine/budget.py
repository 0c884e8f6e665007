"""The session's budget, held once (by the controller, or the one process at ``-n 0``): the
cost ceiling (``--eval-max-cost-usd``) with a reservation for each run in flight, the pause
every run waits out after the provider refused one (a 429 rate limit, a 529 overload), and
the slots of ``--eval-max-concurrency``. Plain data and methods under one lock: no pytest, no
process, no file. The processes that make runs reach it as it is (``-n 0``) or over the
channel of :mod:`.wire` (xdist's workers, on any host).

No method waits: a run that may not start *yet* is told so, and its process asks again (so a
wait ends at once when the session does, and no thread of the holder is ever blocked).

A run's tickets are strings: ``owner/n`` (:meth:`Budget.forget` drops an owner's at once, when
the process that held them is gone).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

#: The recorded reason of a run the cost ceiling kept from starting.
COST_CEILING = "cost_ceiling"


@dataclass(frozen=True)
class Refused:
    """A run that may not start: the line said, and the kind recorded."""

    reason: str
    kind: str = COST_CEILING


@dataclass(frozen=True)
class Granted:
    """A run that may start, its expected cost reserved: what the ceiling leaves it (the room
    left once what was spent and the other runs' reservations are counted; None: no ceiling)."""

    room: float | None


#: What :meth:`Budget.reserve` answers: the run starts, may not start, or (None) may start
#: once a run in flight has settled.
Reservation = Granted | Refused | None


class Budget:
    """The session's cost ceiling in USD (None: no ceiling), its run slots (None: no cap) and
    its rate-limit pause, for every process of the session."""

    def __init__(
        self,
        ceiling: float | None = None,
        slots: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ceiling = ceiling
        self.slots = slots
        self._clock = clock
        self._lock = threading.Lock()
        self._settled: list[float] = []
        self._reserved: dict[str, float] = {}
        self._held: set[str] = set()
        self._until = 0.0  # on the holder's clock
        self._paused = 0.0

    # -- the cost ceiling ----------------------------------------------------------------------

    def refusal(self, spent: float, flying: int, each: float) -> Refused | None:
        """For a caller that counts runs itself (``--eval-runs auto``'s rounds): why no run may
        start, given what was spent, the runs in flight and what a run is expected to cost
        each: the ceiling is reached, or the runs in flight would reach it (None: one may)."""
        ceiling = self.ceiling
        if ceiling is None:
            return None
        if spent >= ceiling:
            return Refused(
                f"cost ceiling ${ceiling:g} reached (${spent:.4f} spent): run not started"
            )
        if flying and spent + flying * each >= ceiling:
            return Refused(
                f"cost ceiling ${ceiling:g} would be reached (${spent:.4f} spent, {flying} "
                f"run(s) in flight at about ${each:.4f} each): run not started"
            )
        return None

    def spent(self) -> float:
        """What the settled runs spent (their exact sum: the same in whatever order they
        settled)."""
        with self._lock:
            return math.fsum(self._settled)

    def refused(self) -> Refused | None:
        """Why no run may start now, whatever is in flight: the ceiling is reached."""
        return self.refusal(self.spent(), 0, 0.0)

    def reserve(self, ticket: str) -> Reservation:
        """Reserve a run's expected cost (the mean of the settled runs) before it starts. It
        may start while what was spent, the reservations and its own stay under the ceiling,
        or when nothing is in flight and the ceiling is not reached (as one process alone:
        the last run may pass the ceiling by its own cost, never by the other runs'). Before
        any run has settled, what a run costs is not known: the first run goes alone."""
        with self._lock:
            ceiling, spent = self.ceiling, math.fsum(self._settled)
            if ceiling is None:
                return Granted(None)
            refused = self.refusal(spent, 0, 0.0)
            if refused is not None:
                return refused
            flying = math.fsum(self._reserved.values())
            each = spent / len(self._settled) if self._settled else None
            if self._reserved and (each is None or spent + flying + each >= ceiling):
                return None  # once a run in flight settles (the first: what a run costs)
            self._reserved[ticket] = ceiling - spent if each is None else each
            return Granted(ceiling - spent - flying)

    def settle(self, ticket: str, usd: float) -> None:
        """A run ended having spent ``usd``: its reservation becomes its spend (nothing, or not
        a price, counts as 0: never lowers the total)."""
        usd = float(usd)
        with self._lock:
            self._reserved.pop(ticket, None)
            self._settled.append(usd if math.isfinite(usd) and usd > 0 else 0.0)

    def release(self, ticket: str) -> None:
        """A run that was not made after all: its reservation is given back, nothing spent."""
        with self._lock:
            self._reserved.pop(ticket, None)

    # -- the run slots -------------------------------------------------------------------------

    def take_slot(self, ticket: str) -> bool:
        """Take one of the session's run slots for ``ticket`` (True), or none is free."""
        with self._lock:
            if self.slots is not None and ticket not in self._held:
                if len(self._held) >= self.slots:
                    return False
                self._held.add(ticket)
            return True

    def free_slot(self, ticket: str) -> None:
        with self._lock:
            self._held.discard(ticket)

    # -- the rate-limit pause ------------------------------------------------------------------

    def pause(self, seconds: float, limit: float | None = None) -> float | None:
        """Start no run before ``seconds`` from now (a later end already set stays); returns
        the seconds until the pause ends, or None (and no pause) when the session would then
        have been paused more than ``limit`` seconds in all (the union of its pauses)."""
        with self._lock:
            now = self._clock()
            end = now + max(0.0, seconds)
            added = max(0.0, end - max(self._until, now))
            if limit is not None and added > 0 and self._paused + added > limit:
                return None
            self._paused += added
            self._until = max(self._until, end)
            return self._until - now

    def pause_left(self) -> float:
        """The seconds before a run may start (0: not paused)."""
        with self._lock:
            return max(0.0, self._until - self._clock())

    def paused_seconds(self) -> float:
        """How long the session was paused in all, in seconds."""
        with self._lock:
            return self._paused

    # -- the processes -------------------------------------------------------------------------

    def forget(self, owner: str) -> None:
        """The process ``owner`` is gone: its reservations and slots are given back."""
        prefix = f"{owner}/"
        with self._lock:
            for ticket in [t for t in self._reserved if t.startswith(prefix)]:
                del self._reserved[ticket]
            self._held = {t for t in self._held if not t.startswith(prefix)}
