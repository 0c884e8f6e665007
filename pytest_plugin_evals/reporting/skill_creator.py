"""A session's runs in skill-creator's workspace layout (``--eval-skill-creator-workspace``).

skill-creator (``anthropics/skills``, ``skills/skill-creator``) keeps each iteration of a skill
in ``iteration-N/eval-ID/<config>/run-K/``: the run's ``outputs/``, its ``grading.json``
(``expectations[].text/passed/evidence``) and ``timing.json``, with an ``eval_metadata.json``
per eval, and a ``benchmark.json`` per iteration (``references/schemas.md``). Its review viewer
(``eval-viewer/generate_review.py``) and ``scripts/aggregate_benchmark.py`` read that layout.

:mod:`.skill_creator_write` turns a :class:`SessionResult` into those files and writes them;
this module holds what each eval and run becomes. Each case is an eval: a case
named ``eval-<n>`` keeps its number, the others are numbered after. The arms are the
configurations: ``with_skill`` / ``without_skill``, or ``new_skill`` / ``old_skill`` in an A/B
(``--eval-baseline-plugin``); a one-arm run is ``with_skill``. Trigger queries are not evals
(they are written as ``run_eval.py``'s results: :mod:`.skill_creator_triggers`). A run that
could not be made (an infrastructure error) is no run folder and no number of the benchmark:
``benchmark.json``'s ``notes`` say how many were left out, and why.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_plugin_evals.model import Verdict
from pytest_plugin_evals.records import RunRecord
from pytest_plugin_evals.reporting.result import CaseResult, SessionResult
from pytest_plugin_evals.util.inert import inert_path
from pytest_plugin_evals.util.plainfiles import NotPlain, plain_files

#: A kept run's created files, in its folder (``recording.layout.FILES``).
FILES = "files"
#: The answer's file among a run's outputs.
ANSWER = "answer.md"
#: A run's outputs keep at most this many of the files it created (the rest are listed).
MAX_OUTPUT_FILES = 200
#: An expectation's evidence is cut at this many characters.
EVIDENCE_LIMIT = 4000
_EVAL_NUMBER = re.compile(r"(?:^|-)eval-(\d{1,9})$")


@dataclass(frozen=True)
class WorkspaceFile:
    """One file of an iteration's folder: ``text`` to write, or a kept file to copy
    (``source``, read as :mod:`.skill_creator_write` reads hostile files)."""

    path: PurePosixPath
    text: str | None = None
    source: Path | None = None


def configs(case: CaseResult) -> tuple[str, str]:
    """The configurations of a case's with arm and second arm."""
    return ("new_skill", "old_skill") if case.baseline else ("with_skill", "without_skill")


def eval_cases(result: SessionResult) -> list[CaseResult]:
    """The cases that are evals: every case but the trigger queries."""
    return [c for c in result.cases if c.case.source != "trigger_eval"]


def eval_ids(cases: Sequence[CaseResult]) -> list[int]:
    """Each case's eval ID: the number of an ``eval-<n>`` name (skill-creator's ``id``, as its
    suite loader names the case) when no other case has it, else the next free number."""
    wanted = [_number(c) for c in cases]
    counts = Counter(n for n in wanted if n is not None)
    taken = {n for n, k in counts.items() if k == 1}
    ids, free = [], 1
    for number in wanted:
        if number is not None and number in taken:
            ids.append(number)
            continue
        while free in taken:
            free += 1
        taken.add(free)
        ids.append(free)
    return ids


def _number(case: CaseResult) -> int | None:
    if case.agent is not None:
        return None
    found = _EVAL_NUMBER.search(case.name)
    return int(found.group(1)) if found else None


def assertion_text(record: RunRecord, name: str) -> str:
    """What an expectation says: the judge's criterion (skill-creator's expectation text),
    else the grader's name."""
    spec = next((g for g in record.case.graders if g.name == name), None)
    criteria = spec.config.get("criteria") if spec is not None else None
    return criteria if isinstance(criteria, str) and criteria.strip() else name


def expectations(record: RunRecord) -> list[dict[str, Any]]:
    """The run's verdicts that count in its score, as ``grading.json``'s expectations."""
    return [
        {
            "text": assertion_text(record, v.name),
            "passed": bool(v.passed),
            "evidence": evidence(v)[:EVIDENCE_LIMIT],
        }
        for v in record.result.verdicts
        if v.counts
    ]


def evidence(verdict: Verdict) -> str:
    """The verdict's explanation, and a judge's reasons when it gave any (each once)."""
    votes = verdict.judgement.votes if verdict.judgement is not None else ()
    reasons = dict.fromkeys(v.reason.strip() for v in votes if v.reason.strip() != v.vote)
    reasons.pop("", None)
    return " — ".join([verdict.explanation, *reasons])


def tokens(record: RunRecord) -> int | None:
    result = record.result
    if result.input_tokens is None or result.output_tokens is None:
        return None
    return result.input_tokens + result.output_tokens


def execution_metrics(record: RunRecord) -> dict[str, Any]:
    """Tool calls by name (of the calls a run keeps), their total, turns, failed calls."""
    calls = record.result.tool_call_list
    return {
        "tool_calls": dict(Counter(c.name for c in calls)),
        "total_tool_calls": record.result.tool_calls,
        "total_steps": record.result.turns,
        "errors_encountered": sum(1 for c in calls if c.is_error),
    }


def grading(record: RunRecord) -> dict[str, Any]:
    """``grading.json``: the counted verdicts, their summary (``pass_rate`` is the run's score,
    its graders' weighted share), the run's metrics and its notes for review."""
    found = expectations(record)
    passed = sum(1 for e in found if e["passed"])
    result = record.result
    review = [*([result.error] if result.error else []), *result.notes]
    return {
        "expectations": found,
        "summary": {
            "passed": passed,
            "failed": len(found) - passed,
            "total": len(found),
            "pass_rate": round(result.score, 4),
        },
        "execution_metrics": execution_metrics(record),
        "user_notes_summary": {"uncertainties": [], "needs_review": review, "workarounds": []},
    }


def timing(record: RunRecord) -> dict[str, Any]:
    """``timing.json``: the run's wall-clock time and tokens (left out when unknown)."""
    seconds = record.result.duration_seconds or 0.0
    found: dict[str, Any] = {}
    if (total := tokens(record)) is not None:
        found["total_tokens"] = total
    found |= {
        "duration_ms": round(seconds * 1000),
        "total_duration_seconds": round(seconds, 3),
        "executor_duration_seconds": round(seconds, 3),
    }
    if record.result.started_at:
        found["executor_start"] = record.result.started_at
    return found


def metadata(case: CaseResult, eval_id: int) -> dict[str, Any]:
    """``eval_metadata.json``: the eval's ID, name, prompt and assertions."""
    found: dict[str, Any] = {
        "eval_id": eval_id,
        "eval_name": case.label,
        "prompt": case.case.prompt,
        "assertions": [
            g.config["criteria"] if isinstance(g.config.get("criteria"), str) else g.name
            for g in case.case.graders
        ],
    }
    if case.case.expected_output:
        found["expected_output"] = case.case.expected_output
    return found


def output_names(files: Sequence[PurePosixPath]) -> list[tuple[PurePosixPath, str]]:
    """Each kept file (its stored path under a run's ``files/``) and its name in ``outputs/``:
    one level, as the viewer lists it (``docs/notes.md`` is ``docs__notes.md``), inert, never
    the answer's name; the first :data:`MAX_OUTPUT_FILES`."""
    used = {ANSWER, "metrics.json"}
    named = []
    for rel in files[:MAX_OUTPUT_FILES]:
        name = inert_path("__".join(rel.parts))
        while name in used:
            name = "file-" + name
        used.add(name)
        named.append((rel, name))
    return named


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def kept_files(run_folder: Path | None) -> list[tuple[PurePosixPath, Path]]:
    """The files a session kept of a run (its kept folder's ``files/``): their stored paths and
    where they are. Nothing when the folder holds a link or anything but plain folders and
    regular files of one name (see :func:`~pytest_plugin_evals.util.plainfiles.plain_files`)."""
    if run_folder is None:
        return []
    root = run_folder / FILES
    try:
        return [(rel, root / rel) for rel in plain_files(root)]
    except (NotPlain, OSError):
        return []


def run_files(
    record: RunRecord, folder: PurePosixPath, run_folder: Path | None
) -> list[WorkspaceFile]:
    """A run's folder: ``outputs/`` (the answer, the files it created as the session kept
    them in ``run_folder``, ``metrics.json``), ``grading.json`` and ``timing.json``."""
    out = folder / "outputs"
    kept = dict(kept_files(run_folder))
    created = [
        WorkspaceFile(out / name, source=kept[rel]) for rel, name in output_names(list(kept))
    ]
    metrics = execution_metrics(record) | {
        "files_created": list(record.result.files_created),
        "output_chars": len(record.result.answer),
    }
    return [
        WorkspaceFile(out / ANSWER, text=record.result.answer),
        *created,
        WorkspaceFile(out / "metrics.json", text=dumps(metrics)),
        WorkspaceFile(folder / "grading.json", text=dumps(grading(record))),
        WorkspaceFile(folder / "timing.json", text=dumps(timing(record))),
    ]
