"""The terminal summary table, as text lines (pure: the pytest hook only prints them).

Two arms::

    CASE          WITH  W/OUT Δ      RUNS COST    NOTES
    decoy         0.50  1.00  -0.50  2    $0.02   no-skill: Skill called 1x (expected 0..0)
    3 case(s) · mean Δ +0.17 · 7s · $0.06

One arm: ``CASE   SCORE PASS% RUNS COST    NOTES`` and ``N case(s) · score 0.83 · 7s · $0.06``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pytest_plugin_evals.reporting.document import (
    INFRA_PARTIAL_REASON,
    CaseResult,
    SessionResult,
)

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


#: Terminal escape sequences: CSI (``ESC [`` or the 8-bit CSI), the OSC, DCS, SOS, PM and APC
#: strings (to BEL or ST), and the other ``ESC x`` sequences. An unfinished one is removed as
#: far as it goes (a string up to the next control character), a lone ESC too.
_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x00-\x1f\x7f-\x9f]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
#: Control characters left after the sequences are gone: C0 (but tab and line feed), DEL, C1.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _control_picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code == 0x7F:
        return "\u2421"  # ␡
    return chr(0x2400 + code) if code < 0x20 else "\ufffd"


def plain(text: str, *, newlines: bool = False) -> str:
    """``text`` safe to print on a terminal: escape sequences removed, other control characters
    shown as their symbol (``\\r`` as ␍, BEL as ␇, a C1 control as �), tabs as spaces, and line
    feeds kept only when ``newlines`` (else spaces). Any other character, é 😀 Δ, is kept.

    Case names, notes, explanations and answers come from suites and from a model's output:
    printed raw, they could recolour the terminal, clear it, retitle its window or overwrite
    the lines above.
    """
    text = _ESCAPE_SEQUENCE.sub("", text.replace("\r\n", "\n"))
    text = _CONTROL.sub(_control_picture, text).replace("\t", " ")
    return text if newlines else text.replace("\n", " ")


def cut(text: str, limit: int = NOTES_LIMIT) -> str:
    """One line of at most ``limit`` characters, ending in ``…`` when cut (and :func:`plain`)."""
    line = " ".join(plain(text).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _row(case: CaseResult, two_arm: bool) -> list[str]:
    agg = case.aggregates
    if two_arm:
        numbers = [_num(agg.score), _num(agg.score_without), _signed(agg.delta)]
    else:
        numbers = [_num(agg.score), _percent(agg.pass_rate)]
    notes = cut(case.notes) if case.notes else ""
    return [plain(case.name), *numbers, str(len(case.runs)), _money(case.cost_usd), notes]


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


def _partial_lines(result: SessionResult) -> list[str]:
    lines = []
    if result.errors:
        kinds = ", ".join(f"{kind} {count}" for kind, count in result.errors.items())
        lines.append(
            f"partial: {sum(result.errors.values())} run(s) could not be made ({kinds})"
            " — kept out of the scores"
        )
    reason = result.partial_reason
    if result.partial and reason and reason != INFRA_PARTIAL_REASON:
        not_started = result.aggregates.runs_skipped
        extra = f" · {not_started} run(s) not started" if not_started else ""
        lines.append(f"partial: {reason}{extra}")
    return lines


def _report_line(path: str) -> str:
    lower = path.lower()
    label = "JSON" if lower.endswith(".json") else "HTML" if lower.endswith(".html") else "Report"
    return f"{label}: {path}"


def summary_lines(result: SessionResult, *, report_paths: Sequence[str] = ()) -> list[str]:
    """The summary table, its footer, the partial and load-error notices and the report paths."""
    two_arm = result.two_arm
    header = (
        ["CASE", "WITH", "W/OUT", "Δ", "RUNS", "COST", "NOTES"]
        if two_arm
        else ["CASE", "SCORE", "PASS%", "RUNS", "COST", "NOTES"]
    )
    rows = [_row(c, two_arm) for c in result.cases]
    lines = [line.rstrip() for line in _table(header, rows)] if rows else []
    agg = result.aggregates
    headline = (
        f"mean Δ {_signed(agg.mean_delta)}" if two_arm else f"score {_num(agg.overall_score)}"
    )
    lines.append(
        f"{len(result.cases)} case(s) · {headline} · {_duration(result.duration_seconds)}"
        f" · {_money(result.cost_usd)}"
    )
    lines.extend(_partial_lines(result))
    load_errors = len(result.load_errors)
    if load_errors:
        files = "case file could" if load_errors == 1 else "case files could"
        lines.append(f"{load_errors} {files} not be loaded — see the errors above")
    lines.extend(_report_line(path) for path in report_paths)
    return [plain(line) for line in lines]
