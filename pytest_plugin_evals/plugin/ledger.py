"""What every process of a session shares (xdist workers too), through files in one folder.

- :class:`SpendLedger`: what the session has spent. One line per finished run is appended to
  a file under an exclusive lock; the total is their exact sum (``math.fsum``: the same
  whatever order the workers wrote in).
- :class:`StopSign`: why no further run may start (a rejected credential), once any process
  has found out. The first reason written stays.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

try:
    import fcntl
except ImportError:  # Windows: appends of one short line need no lock there
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def _locked(fh: IO[Any], exclusive: bool) -> Iterator[None]:
    if fcntl is None:
        yield
        return
    fcntl.flock(fh, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)


class SpendLedger:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def add(self, usd: float) -> None:
        usd = float(usd)
        if not math.isfinite(usd) or usd <= 0:
            return  # nothing spent, or not a price: never lowers the total
        with self.path.open("a", encoding="utf-8") as fh, _locked(fh, exclusive=True):
            fh.write(f"{usd!r}\n")
            fh.flush()

    def spent(self) -> float:
        try:
            with self.path.open(encoding="utf-8") as fh, _locked(fh, exclusive=False):
                lines = fh.read().splitlines()
        except FileNotFoundError:
            return 0.0
        return math.fsum(_amount(line) for line in lines)


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
