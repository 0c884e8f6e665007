"""What every process of a session shares (xdist workers too), through files in one folder.

- :class:`SpendLedger`: what the session has spent. One line per finished run is appended to
  a file under an exclusive lock; the total is their exact sum (``math.fsum``: the same
  whatever order the workers wrote in). The runs in flight are one file each in a folder
  beside it (named by the PID of the process making the run), so a run is started only while
  what was spent and what the runs in flight are expected to cost stay under the ceiling. That
  check and the run's ticket are one step under a lock every process shares: two workers
  finding room at the same moment would otherwise both start, and pass the ceiling together.
- :class:`StopSign`: why no further run may start (a rejected credential), once any process
  has found out. The first reason written stays.
"""

from __future__ import annotations

import contextlib
import math
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from pytest_plugin_evals.util import locks


class NoRoom(Exception):
    """No run may start: what was spent and the runs in flight leave no room for it."""

    def __init__(self, reason: object) -> None:
        super().__init__(reason)
        #: What the check that found no room returned.
        self.reason = reason


#: Given what was spent, the runs in flight and what a run is expected to cost, why no run
#: may start (None: one may).
Refusal = Callable[[float, int, float], object | None]


class SpendLedger:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def add(self, usd: float) -> None:
        """A finished run's spend (one that spent nothing, or no price, counts as 0)."""
        usd = float(usd)
        if not math.isfinite(usd) or usd <= 0:
            usd = 0.0  # nothing spent, or not a price: never lowers the total
        # Windows has no flock: appends of one short line need no lock there.
        with self.path.open("a", encoding="utf-8") as fh, locks.held(fh):
            fh.write(f"{usd!r}\n")
            fh.flush()

    def _lines(self) -> list[str]:
        try:
            with self.path.open(encoding="utf-8") as fh, locks.held(fh, shared=True):
                return fh.read().splitlines()
        except FileNotFoundError:
            return []

    def spent(self) -> float:
        return math.fsum(_amount(line) for line in self._lines())

    def outlook(self) -> tuple[float, int, float]:
        """What was spent, how many runs are in flight, and what a run is expected to cost
        (the mean of the runs finished so far; 0 before the first)."""
        lines = self._lines()
        spent = math.fsum(_amount(line) for line in lines)
        return spent, self.in_flight(), (spent / len(lines) if lines else 0.0)

    @property
    def _lock(self) -> Path:
        return self.path.with_name(f"{self.path.stem}-in-flight.lock")

    @property
    def _flights(self) -> Path:
        return self.path.with_name(f"{self.path.stem}-in-flight")

    @contextlib.contextmanager
    def flying(self, refuse: Refusal | None = None) -> Iterator[None]:
        """Count a run in flight while the block runs. With ``refuse``, the run is first asked
        whether it may start, given :meth:`outlook`, and counted in the same step under the
        session's lock, so no other process finds the same room in between; :class:`NoRoom`
        carries its reason when it may not."""
        self._flights.mkdir(exist_ok=True)
        ticket = self._flights / f"{os.getpid()}-{uuid.uuid4().hex}"
        if refuse is None:
            ticket.touch()
        else:
            with self._lock.open("a", encoding="utf-8") as fh, locks.held(fh):
                reason = refuse(*self.outlook())
                if reason is not None:
                    raise NoRoom(reason)
                ticket.touch()
        try:
            yield
        finally:
            ticket.unlink(missing_ok=True)

    def in_flight(self) -> int:
        """The runs in flight (of a process that is still there)."""
        try:
            names = [entry.name for entry in os.scandir(self._flights)]
        except OSError:
            return 0
        return sum(1 for name in names if _alive(name.partition("-")[0]))


def _alive(pid: str) -> bool:
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _amount(line: str) -> float:
    """One line's amount; a line that is not a number (a torn write) counts as nothing."""
    try:
        value = float(line)
    except ValueError:
        return 0.0
    return value if math.isfinite(value) and value > 0 else 0.0


class StopSign:
    """A reason to start no more runs, written once by whichever process finds it first."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def put(self, reason: str, message: str) -> None:
        """Raise the sign (a sign already up stays as it is)."""
        try:
            with self.path.open("x", encoding="utf-8") as fh:
                fh.write(f"{reason}\n{message}\n")
        except FileExistsError:
            pass

    def read(self) -> tuple[str, str] | None:
        """The reason and its message, once the sign is up."""
        try:
            reason, _, message = self.path.read_text(encoding="utf-8").partition("\n")
        except FileNotFoundError:
            return None
        return (reason, message.strip()) if reason else None
