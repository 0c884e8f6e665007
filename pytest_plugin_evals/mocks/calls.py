"""Reading back what the stand-ins answered: the calls, the abort, the per-run totals."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..model import Abort, MockCall, MockSummary, MockTotals, ToolCall, Transcript
from ..util.safeload import json_data
from .config import MockSetup


@dataclass(frozen=True)
class MockOutcome:
    """One run's mock calls.

    ``calls`` is None when no stand-in was active (a ``mock_calls`` grader then has nothing to
    check). ``aborted`` is set when an ``expect:`` guard (or the model playing a ``type: agent``
    server) stopped the run. ``records`` are the raw lines (with ``time``), for reports.
    ``totals`` counts the calls, what the models playing servers cost and their replays.
    ``host_error`` says what the mock host refused (a forged hello …): the run's error.
    """

    calls: list[MockCall] | None = None
    aborted: Abort | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    totals: MockTotals = field(default_factory=MockTotals)
    host_error: str | None = None

    def summary(self, setup: MockSetup) -> MockSummary:
        """The run's ``mocks``: servers, warnings and calls totals."""
        servers, warnings = setup.summary()
        return MockSummary(servers, warnings, self.totals)


def collect_calls(setup: MockSetup, tool_calls: Iterable[ToolCall] = ()) -> MockOutcome:
    """The calls the run's stand-ins recorded, in order; ``tool_calls`` (the transcript's) give
    the count of calls to tools that were not mocked (withheld servers, tools without a file)."""
    if not setup.active or setup.calls_file is None:
        return MockOutcome(totals=_totals([], setup, tool_calls))
    records: list[dict[str, Any]] = []
    agent_lines: list[dict[str, Any]] = []
    aborted: Abort | None = None
    refused: list[str] = []
    more = 0
    try:
        text = setup.calls_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        try:
            record = json_data(line)
        except ValueError:
            continue  # a line cut short by the kill (or past the loaders' bounds)
        if not isinstance(record, dict):
            continue
        if "mockHost" in record:  # the host's own line: what it refused
            said = record["mockHost"]
            if isinstance(said, dict) and isinstance(said.get("refused"), str):
                refused.append(said["refused"])
            elif isinstance(said, dict) and isinstance(said.get("more"), int):
                more += said["more"]
            continue
        if record.get("responder") == "agent":
            agent_lines.append(record)
        if isinstance(record.get("abort"), dict):
            if aborted is None:
                found = record["abort"]
                aborted = Abort(*(str(found.get(k, "")) for k in ("server", "tool", "reason")))
            continue
        records.append(record)
    calls = [
        MockCall(
            server=str(r.get("server", "")),
            tool=str(r.get("name") or r.get("tool", "")),
            input=_mapping(r.get("input")),
            output=str(r.get("output", "")),
            is_error=bool(r.get("isError")),
        )
        for r in records
    ]
    totals = _totals(calls, setup, tool_calls, agent_lines)
    if aborted is not None:  # the violating call was made, as the reference counts it
        totals = replace(totals, total=totals.total + 1)
    return MockOutcome(calls, aborted, records, totals, host_error(refused, more))


def host_error(refused: Sequence[str], more: int = 0) -> str | None:
    """The run's error for what the mock host refused: the first refusal, and how many more."""
    if not refused:
        return None
    others = len(refused) - 1 + more
    tail = f" (and {others} more refusal{'s' if others > 1 else ''})" if others else ""
    return f"{refused[0]}: refused{tail}"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _totals(
    calls: list[MockCall],
    setup: MockSetup,
    tool_calls: Iterable[ToolCall],
    agent_lines: Sequence[dict[str, Any]] = (),
) -> MockTotals:
    served = set(setup.allowed_tools)
    unmocked = Counter(
        c.name
        for c in tool_calls
        if c.name not in served and any(c.name.startswith(p) for p in setup.prefixes)
    )
    return MockTotals(
        total=len(calls),
        errors=sum(1 for c in calls if c.is_error),
        unmocked=tuple(sorted(unmocked.items())),
        cost_usd=round(sum(_cost(r.get("costUsd")) for r in agent_lines), 10),
        replay_hits=sum(1 for r in agent_lines if r.get("replay") == "hit"),
        replay_misses=sum(1 for r in agent_lines if r.get("replay") == "miss"),
    )


def _cost(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def attach(setup: MockSetup, transcript: Transcript) -> MockOutcome:
    """Fill ``transcript`` from the run's stand-ins and return the outcome.

    Sets ``mock_calls`` (None when no stand-in was active) and the mock warnings as notes, and
    adds what the models playing ``type: agent`` servers cost to the run's cost. An aborted
    run is not graded and scores 0 with no error, as the reference does: the process was
    killed on purpose, so the error the adapter derived from that is cleared. A run in which
    the mock host refused a connection (a process in the run forged a hello, asked for a server
    the run does not have …) is an infrastructure error, ``mock_host``, whatever else happened.
    """
    outcome = collect_calls(setup, transcript.tool_calls)
    transcript.mock_calls = outcome.calls
    transcript.notes.extend(setup.warnings)
    if outcome.totals.cost_usd:
        transcript.cost_usd = round(transcript.cost_usd + outcome.totals.cost_usd, 10)
    if outcome.aborted is not None:
        transcript.skip_grading = True
        transcript.error = None
        transcript.infra_error = None
        transcript.notes.append(outcome.aborted.message)
    if outcome.host_error is not None:
        transcript.error = outcome.host_error
        transcript.infra_error = "mock_host"
    return outcome
