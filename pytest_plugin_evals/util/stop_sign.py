"""What every process of a session shares through a file in its shared folder: the
:class:`StopSign`, why no further run may start (a rejected credential, an interruption), once
any process has found out. The first reason written stays. (The budget is not a file: it is
held by the controller, see :mod:`pytest_plugin_evals.engine.budget`.)
"""

from __future__ import annotations

from pathlib import Path

#: The stop sign's reason once the session was interrupted (no run is recorded for it).
INTERRUPTED = "interrupted"


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
