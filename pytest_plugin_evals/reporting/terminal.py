"""The terminal summary table, as text lines (pure: the pytest hook only prints them).

Two arms::

    CASE          WITH  W/OUT Δ      RUNS COST    NOTES
    decoy         0.50  1.00  -0.50  2    $0.02   no-skill: Skill called 1x (expected 0..0)
    3 case(s) · mean Δ +0.17 · 7s · $0.06

One arm: ``CASE   SCORE PASS% RUNS COST    NOTES`` and ``N case(s) · score 0.83 · 7s · $0.06``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .document import INFRA_PARTIAL_REASON

MISSING = "—"
NOTES_LIMIT = 80

#: Column -> the width it never goes under (the reference's layout).
_MIN_WIDTHS = {"WITH": 5, "W/OUT": 5, "Δ": 6, "SCORE": 5, "PASS%": 5, "RUNS": 4, "COST": 7}


def _num(x: float | None) -> str:
    return MISSING if x is None else f"{x:.2f}"


def _signed(x: float | None) -> str:
    return MISSING if x is None else f"{x:+.2f}"


def _percent(x: float | None) -> str:
    return MISSING if x is None else f"{round(x * 100)}%"


def _money(x: float | None) -> str:
    return f"${(x or 0.0):.2f}"


def _duration(seconds: float | None) -> str:
    total = round(seconds or 0.0)
    if total < 60:
        return f"{total}s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def cut(text: str, limit: int = NOTES_LIMIT) -> str:
    """One line of at most ``limit`` characters, ending in ``…`` when cut."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def is_two_arm(document: Mapping[str, Any]) -> bool:
    cases = document.get("cases") or []
    if cases:
        return any("without" in (c.get("arms") or {}) for c in cases)
    return (document.get("suite") or {}).get("ablation") == "with-without"


def _runs(case: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [run for arm in (case.get("arms") or {}).values() for run in arm]


def _row(case: Mapping[str, Any], two_arm: bool) -> list[str]:
    agg = case.get("aggregates") or {}
    runs = _runs(case)
    cost = sum(float(r.get("costUsd") or 0.0) for r in runs)
    if two_arm:
        numbers = [_num(agg.get("score")), _num(agg.get("scoreWithout")), _signed(agg.get("delta"))]
    else:
        numbers = [_num(agg.get("score")), _percent(agg.get("passRate"))]
    notes = cut(str(case["notes"])) if case.get("notes") else ""
    return [str(case.get("name")), *numbers, str(len(runs)), _money(cost), notes]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [
        max(_MIN_WIDTHS.get(title, 0), len(title), *(len(row[i]) for row in rows))
        for i, title in enumerate(header[:-1])
    ]
    widths[0] += 1  # the case name gets one more space of air
    return [
        " ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False))
        + " "
        + line[-1]
        for line in [header, *rows]
    ]


def _partial_lines(document: Mapping[str, Any]) -> list[str]:
    lines = []
    errors: Mapping[str, int] = document.get("errors") or {}
    if errors:
        kinds = ", ".join(f"{kind} {count}" for kind, count in errors.items())
        lines.append(
            f"partial: {sum(errors.values())} run(s) could not be made ({kinds})"
            " — kept out of the scores"
        )
    reason = document.get("partialReason")
    if document.get("partial") and reason and reason != INFRA_PARTIAL_REASON:
        not_started = (document.get("aggregates") or {}).get("runsSkipped") or 0
        extra = f" · {not_started} run(s) not started" if not_started else ""
        lines.append(f"partial: {reason}{extra}")
    return lines


def _report_line(path: str) -> str:
    lower = path.lower()
    label = "JSON" if lower.endswith(".json") else "HTML" if lower.endswith(".html") else "Report"
    return f"{label}: {path}"


def summary_lines(document: Mapping[str, Any], *, report_paths: Sequence[str] = ()) -> list[str]:
    """The summary table, its footer, the partial and load-error notices and the report paths."""
    cases = document.get("cases") or []
    two_arm = is_two_arm(document)
    header = (
        ["CASE", "WITH", "W/OUT", "Δ", "RUNS", "COST", "NOTES"]
        if two_arm
        else ["CASE", "SCORE", "PASS%", "RUNS", "COST", "NOTES"]
    )
    lines = (
        [line.rstrip() for line in _table(header, [_row(c, two_arm) for c in cases])]
        if cases
        else []
    )

    agg = document.get("aggregates") or {}
    headline = (
        f"mean Δ {_signed(agg.get('meanDelta'))}"
        if two_arm
        else f"score {_num(agg.get('overallScore'))}"
    )
    lines.append(
        f"{len(cases)} case(s) · {headline} · {_duration(document.get('durationSeconds'))}"
        f" · {_money(document.get('costUsd'))}"
    )
    lines.extend(_partial_lines(document))
    load_errors = len(document.get("loadErrors") or [])
    if load_errors:
        files = "case file could" if load_errors == 1 else "case files could"
        lines.append(f"{load_errors} {files} not be loaded — see the errors above")
    lines.extend(_report_line(path) for path in report_paths)
    return lines
