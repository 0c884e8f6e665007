"""The pilot: each case ``init`` wrote, run once, through pytest as a user runs it.

One pytest session (``python -m pytest <case folders> --eval-runs 1``) in the plugin's folder,
with the judge ``init`` drafted with, started through ``util.process``; its JSON document says
how each case did. The session's own results folder (its ``report.html``) is kept, as any
session's is.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_plugin_evals.scaffold.files import shown
from pytest_plugin_evals.util.process import run_process
from pytest_plugin_evals.util.safeload import json_data, read_text

#: Seconds the pilot may take per case (each case runs both arms once, and is judged).
SECONDS_PER_CASE = 300.0
MAX_SECONDS = 3600.0


@dataclass(frozen=True)
class Pilot:
    """How the pilot went: one line per case, a closing line, whether it could run at all."""

    lines: tuple[str, ...]
    ran: bool


def pilot(
    root: Path,
    cases: Sequence[Path],
    *,
    pytest_args: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> Pilot:
    """Run ``cases`` once each; what to print of it."""
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="pytest-plugin-evals-pilot-") as tmp:
        document = Path(tmp) / "pilot.json"
        argv = [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
            *(shown(c, root) for c in cases),
            "--eval-runs", "1", "--eval-json", str(document), *pytest_args,
        ]  # fmt: skip
        timeout = min(MAX_SECONDS, SECONDS_PER_CASE * max(1, len(cases)))
        result = run_process(
            argv,
            stdin_text="",
            cwd=root,
            env=dict(os.environ if environ is None else environ),
            timeout=timeout,
            out_dir=Path(tmp),
        )
        doc = _read(document)
        if result.start_error is not None or result.timed_out or doc is None:
            return Pilot((f"pilot: did not run: {_why(result)}",), ran=False)
        lines = [_case_line(c) for c in doc.get("cases", []) if isinstance(c, dict)]
    passed = sum(1 for line in lines if line.startswith("  ✓"))
    tail = f"pilot: {passed} of {len(lines)} case(s) passed on one run"
    report = _report(root, cases, started)
    if report is not None:
        tail += f"; its report: {shown(report, root)}"
    return Pilot((*lines, tail), ran=True)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        doc = json_data(read_text(path))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _why(result: Any) -> str:
    if result.start_error is not None:
        return str(result.start_error)
    if result.timed_out:
        return f"pytest took longer than {result.duration_seconds:.0f}s"
    tail = [line for line in result.stderr_tail(4000).splitlines() if line.strip()]
    tail = tail or [line for line in result.stdout.splitlines()[-20:] if line.strip()]
    last = _plain(tail[-1])[:300] if tail else "no output"
    return f"pytest exited with status {result.returncode} and wrote no result ({last})"


def _case_line(case: dict[str, Any]) -> str:
    name = _plain(str(case.get("name", "?")))[:120]
    aggregates = case.get("aggregates")
    numbers = aggregates if isinstance(aggregates, dict) else {}
    mark = "✓" if numbers.get("passed") is True else "✗"
    scores = []
    for label, key in (("with", "score"), ("without", "scoreWithout")):
        value = numbers.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            scores.append(f"{label} {value:.2f}")
    note = case.get("notes")
    said = f" — {_plain(str(note))[:200]}" if isinstance(note, str) and note else ""
    return f"  {mark} {name}" + (f" ({', '.join(scores)})" if scores else "") + said


def _report(root: Path, cases: Sequence[Path], started: float) -> Path | None:
    """The pilot session's ``report.html``: the newest one written since it started."""
    found: list[tuple[float, Path]] = []
    for results in {c.parent / "results" for c in cases}:
        for report in results.glob("*/report.html"):
            try:
                mtime = report.stat().st_mtime
            except OSError:
                continue
            if mtime >= started - 1:
                found.append((mtime, report))
    return max(found)[1] if found else None


def _plain(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)
