"""What the progress display counts, apart from the terminal: the session's eval runs, those in
flight (an item's own, and those a process makes ahead of their items), those done and how long
they took, and their spend; and from them a :class:`~..reporting.progress.Progress`. Pure
(times are given), so the display's thread and hooks only draw it."""

from __future__ import annotations

from collections.abc import Iterable

from pytest_plugin_evals.reporting.progress import Progress, Running, eta_seconds

#: How many entries of a report's list of runs made ahead are read.
MAX_AHEAD = 1000


class RunTally:
    """The session's eval runs: in flight, begun, ended, their durations and spend."""

    def __init__(self, evals: Iterable[str]) -> None:
        self.evals = frozenset(evals)
        #: Eval runs in flight -> when they started (monotonic).
        self.running: dict[str, float] = {}
        #: The runs made ahead each process last listed, and the eval items that began or
        #: ended (their own hooks account them from then on).
        self.ahead: dict[str, set[str]] = {}
        self.begun: set[str] = set()
        self.ended: set[str] = set()
        self.durations: list[float] = []
        self.costs: dict[str, float] = {}
        #: The most runs seen in flight at once.
        self.peak = 0

    def begin(self, nodeid: str, now: float) -> None:
        """An eval item began (a run made ahead of it is in flight since it began)."""
        self.begun.add(nodeid)
        self.running.setdefault(nodeid, now)
        self.peak = max(self.peak, len(self.running))

    def finish(self, nodeid: str, now: float) -> None:
        """An eval item ended: its run is done."""
        self.ended.add(nodeid)
        started = self.running.pop(nodeid, None)
        if started is not None:
            self.durations.append(now - started)

    def made_ahead(self, process: str, listed: object, now: float) -> None:
        """The runs ``process`` has going ahead of their items, as its report lists them (hostile
        data: ``[[node id, seconds since it began], …]``): in flight until their items begin;
        one it no longer lists, whose item has not begun, is not."""
        if not isinstance(listed, list):
            return
        going: dict[str, float] = {}
        for entry in listed[:MAX_AHEAD]:
            if not (isinstance(entry, list) and len(entry) == 2):
                continue
            nodeid, seconds = entry
            if (
                isinstance(nodeid, str)
                and isinstance(seconds, int | float)
                and nodeid in self.evals
                and nodeid not in self.begun
                and nodeid not in self.ended
            ):
                going[nodeid] = now - min(max(float(seconds), 0.0), 1e6)
        for nodeid in self.ahead.pop(process, set()) - going.keys():
            if nodeid not in self.begun:
                self.running.pop(nodeid, None)
        for nodeid, started in going.items():
            self.running.setdefault(nodeid, started)
        self.ahead[process] = set(going)
        self.peak = max(self.peak, len(self.running))

    def progress(self, now: float, spent: float | None, ceiling: float | None) -> Progress:
        """How far the runs are at ``now`` (``spent``: the session's ledger, else the spend
        the runs' reports carried)."""
        elapsed = [now - started for started in self.running.values()]
        total, done = len(self.evals), len(self.durations)
        mean = sum(self.durations) / done if done else None
        return Progress(
            done=done,
            total=total,
            running=tuple(
                Running(nodeid.rpartition("::")[2], seconds)
                for nodeid, seconds in zip(self.running, elapsed, strict=True)
            ),
            spent_usd=sum(self.costs.values()) if spent is None else spent,
            ceiling_usd=ceiling,
            eta_seconds=eta_seconds(
                mean, max(total - done - len(self.running), 0), elapsed, self.peak
            ),
        )
