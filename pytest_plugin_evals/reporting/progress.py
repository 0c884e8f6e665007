"""The progress of a session's runs as one line of text (pure: the pytest side draws it).

::

    evals: 12/48 runs done · 4 in flight (longest: my-case[with-2] 41s) · $0.12 of $5.00 · ETA 2m10s

:func:`progress_line` fits the line into a width (a terminal's): compact words first, then a cut
case name, then without the least useful parts. :func:`eta_seconds` estimates the time left.
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_plugin_evals.reporting.terminal import _duration, plain

SEPARATOR = " · "


@dataclass(frozen=True)
class Running:
    """A run in flight: its name (``case[with-2]``) and how long it has been going."""

    name: str
    seconds: float


@dataclass(frozen=True)
class Progress:
    """How far a session's runs are."""

    done: int
    total: int
    running: tuple[Running, ...] = ()
    spent_usd: float = 0.0
    #: The cost ceiling (``--eval-max-cost-usd``), if one is set.
    ceiling_usd: float | None = None
    #: Seconds until the last run is done, once it can be estimated.
    eta_seconds: float | None = None


def eta_seconds(
    mean_seconds: float | None, waiting: int, running: Sequence[float], concurrency: int
) -> float | None:
    """Seconds until the last run is done, or None before any run has finished.

    Each run not yet started is expected to take ``mean_seconds`` (the mean of the finished
    runs), each run in flight what the mean leaves of it; they share ``concurrency`` lanes (the
    most runs seen in flight at once), each waiting run taking the lane free first.
    """
    if mean_seconds is None:
        return None
    mean = max(mean_seconds, 0.0)
    lanes = [max(mean - seconds, 0.0) for seconds in running]
    lanes += [0.0] * max(concurrency - len(lanes), 0)
    if not lanes:
        lanes = [0.0]
    heapq.heapify(lanes)
    for _ in range(max(waiting, 0)):
        heapq.heapreplace(lanes, lanes[0] + mean)
    return max(lanes)


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes (wide characters two, combining marks none)."""
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def clip(text: str, width: int) -> str:
    """``text`` in at most ``width`` columns, ending in ``…`` when cut."""
    if columns(text) <= width:
        return text
    if width <= 0:
        return ""
    kept, used = [], 0
    for char in text:
        step = columns(char)
        if used + step > width - 1:
            break
        kept.append(char)
        used += step
    return "".join(kept) + "…"


def _money(usd: float) -> str:
    return f"${usd:.2f}"


#: The run label at the end of a run's name: ``[with-2]``.
_LABEL = re.compile(r"\[[^\[\]]*\]$")

#: A case name is never cut to fewer columns than this (the longest run is left out instead).
NAME_MIN_COLUMNS = 8


def _name(name: str, width: int | None) -> str | None:
    """A run's name safe for a terminal, its case cut to fit ``width`` (its label kept), or None
    when the case would keep fewer than :data:`NAME_MIN_COLUMNS` columns."""
    name = " ".join(plain(name).split())
    if width is None or columns(name) <= width:
        return name
    found = _LABEL.search(name)
    label = found.group() if found else ""
    case = name[: len(name) - len(label)]
    room = width - columns(label)
    if room < NAME_MIN_COLUMNS:
        return None
    return clip(case, room) + label


def _line(progress: Progress, compact: bool, name_width: int | None, *drop: str) -> str | None:
    """The line, in its long or ``compact`` words, without the parts named in ``drop``
    (``longest``, ``spend``, ``flight``, ``eta``); None when the name cannot be cut to fit."""
    parts = [f"evals: {progress.done}/{progress.total} {'done' if compact else 'runs done'}"]
    if "flight" not in drop:
        flight = f"{len(progress.running)} in flight"
        if progress.running and "longest" not in drop:
            longest = max(progress.running, key=lambda r: r.seconds)
            name = _name(longest.name, name_width)
            if name is None:
                return None
            label = "longest: " if len(progress.running) > 1 and not compact else ""
            flight += f" ({label}{name} {_duration(longest.seconds)})"
        parts.append(flight)
    if "spend" not in drop:
        spent = _money(progress.spent_usd)
        if progress.ceiling_usd is not None:
            ceiling = _money(progress.ceiling_usd)
            parts.append(f"{spent}/{ceiling}" if compact else f"{spent} of {ceiling}")
        elif progress.spent_usd > 0:
            parts.append(spent if compact else f"{spent} spent")
    if "eta" not in drop and progress.eta_seconds is not None:
        parts.append(f"ETA {_duration(progress.eta_seconds)}")
    return SEPARATOR.join(parts)


def progress_line(progress: Progress, width: int | None = None) -> str:
    """The progress as one line, in at most ``width`` columns when given.

    To fit, the line takes its compact words (``12/48 done``, ``$0.12/$5.00``), then the name of
    the longest run in flight is cut (its case, to no fewer than :data:`NAME_MIN_COLUMNS`
    columns), then the longest run, the spend, the runs in flight and the ETA are left out, in
    that order; the count of runs done stays.
    """
    full = _line(progress, False, None)
    assert full is not None
    if width is None or columns(full) <= width:
        return full
    compact = _line(progress, True, None)
    assert compact is not None
    if columns(compact) <= width:
        return compact
    if progress.running:
        longest = max(progress.running, key=lambda r: r.seconds)
        name = " ".join(plain(longest.name).split())
        cut = _line(progress, True, columns(name) - (columns(compact) - width))
        if cut is not None:
            return cut
    for drop in (("longest",), ("longest", "spend"), ("flight", "spend")):
        line = _line(progress, True, None, *drop)
        if line is not None and columns(line) <= width:
            return line
    return clip(f"evals: {progress.done}/{progress.total} done", width)
