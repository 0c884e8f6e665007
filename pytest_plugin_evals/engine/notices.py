"""What the session says under its table, as data: each line a :class:`Notice` of a kind the
shell shows in its own way (a warning in yellow, a failed gate in red). Pure: the session's
result and records in, notices out, in the order the summary prints them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_plugin_evals.records import Record, RunRecord
from pytest_plugin_evals.reporting.result import SessionResult

#: A line that informs.
INFO = "info"
#: A line that asks to be looked at: something did not go as asked, or not as usual.
WARNING = "warning"
#: A failed gate's line (it set the exit status).
FAILURE = "failure"


@dataclass(frozen=True)
class Notice:
    """One line of the session's summary and its kind (:data:`INFO`, :data:`WARNING`,
    :data:`FAILURE`)."""

    kind: str
    text: str


def notices(kind: str, lines: Iterable[str | None]) -> list[Notice]:
    """Each line given (None: nothing to say) as a notice of ``kind``."""
    return [Notice(kind, line) for line in lines if line]


def skipped_judges(records: Iterable[Record]) -> list[Notice]:
    """Judge verdicts that were skipped: on purpose, or for want of a judge."""
    reasons: Counter[str] = Counter()
    for record in records:
        if isinstance(record, RunRecord):
            reasons.update(
                v.skipped
                for v in record.result.verdicts
                if v.skipped in ("--eval-no-judge", "no judge configured", "cost ceiling")
            )
    return notices(
        WARNING,
        [
            f"paid graders skipped on purpose (--eval-no-judge): "
            f"{reasons['--eval-no-judge']} verdict(s) not judged"
            if reasons["--eval-no-judge"]
            else None,
            f"{reasons['no judge configured']} judge verdict(s) skipped: no judge "
            "configured (the default judge, the claude binary, was not found) — pass "
            "--eval-judge anthropic|openai or --eval-claude-bin PATH"
            if reasons["no judge configured"]
            else None,
            f"{reasons['cost ceiling']} judge verdict(s) skipped: cost ceiling"
            if reasons["cost ceiling"]
            else None,
        ],
    )


def unpriced(result: SessionResult, ceiling: float | None) -> list[Notice]:
    """Under a cost ceiling, the runs whose spend it could not see (their agent reports no
    price), by agent."""
    counts = Counter(
        c.agent or result.suite.agent
        for c in result.cases
        for r in c.runs
        if not r.result.cost_known
    )
    if not counts or ceiling is None:
        return []
    agents = ", ".join(f"{agent} {n}" for agent, n in sorted(counts.items()))
    return [
        Notice(
            WARNING,
            f"--eval-max-cost-usd could not see the spend of {counts.total()} run(s), whose "
            f"agent reports no price: {agents}",
        )
    ]


def unconfined(result: SessionResult) -> list[Notice]:
    """The runs made without their sandbox, on purpose (``--eval-unconfined``)."""
    count = sum(1 for c in result.cases for r in c.runs if r.result.unconfined)
    if not count:
        return []
    return [
        Notice(
            WARNING,
            f"{count} run(s) ran unconfined, on purpose (--eval-unconfined): their tools "
            "could reach your files, processes and network",
        )
    ]
