"""What the session has spent, shared by every process of the session (xdist workers too).

One line per finished run is appended to a file under an exclusive lock; the total is the sum.
"""

from __future__ import annotations

import fcntl
from pathlib import Path


class SpendLedger:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def add(self, usd: float) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                fh.write(f"{usd!r}\n")
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def spent(self) -> float:
        try:
            with self.path.open(encoding="utf-8") as fh:
                fcntl.flock(fh, fcntl.LOCK_SH)
                try:
                    return sum(float(line) for line in fh if line.strip())
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)
        except FileNotFoundError:
            return 0.0
