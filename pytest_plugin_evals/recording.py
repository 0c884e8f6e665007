"""Keeping each run in the results folder: its trace, the files it created and its metadata.

``<results>/runs/<case key>/<arm>-<run>/`` holds ``trace.jsonl``, ``meta.json`` and ``files/``.
The replay agent reads the same layout back.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

from .model import Case, Transcript

META = "meta.json"

#: Created files larger than this are listed but not copied.
MAX_KEPT_FILE = 10 * 1024 * 1024


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "case"


def unique_slug(text: str) -> str:
    """``slug(text)``, with a short hash of ``text`` when the slug lost characters, so two
    names that differ only in punctuation (``what's next?``, ``what's next!``) stay apart."""
    made = slug(text)
    if made == text:
        return made
    return f"{made}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:8]}"


def case_key(case: Case) -> str:
    """A folder name unique to the case within its suite."""
    own_folder = case.source in ("prose", "case_yaml", "mixed")
    where = case.dir if own_folder else case.path
    try:
        rel = where.relative_to(case.suite_root).as_posix()
    except ValueError:
        rel = where.name
    return slug(rel) if own_folder else f"{slug(rel)}--{unique_slug(case.name)}"


def run_folder(runs_dir: Path, case: Case, arm: str, run: int) -> Path:
    return runs_dir / case_key(case) / f"{arm}-{run}"


def transcript_meta(transcript: Transcript, agent: str) -> dict[str, Any]:
    return {
        "agent": agent,
        "finalMessage": transcript.final_message,
        "toolCalls": [{**call.to_dict(), "id": call.id} for call in transcript.tool_calls],
        "turns": transcript.turns,
        "inputTokens": transcript.input_tokens,
        "outputTokens": transcript.output_tokens,
        "costUsd": transcript.cost_usd,
        "durationSeconds": transcript.duration_seconds,
        "error": transcript.error,
        "infraError": transcript.infra_error,
        "filesCreated": transcript.files_created,
        "delivered": transcript.delivered,
        "latencyMs": transcript.latency_ms,
        "notes": transcript.notes,
        "aborted": transcript.aborted,
        "skipGrading": transcript.skip_grading,
        "mockCalls": None if transcript.mock_calls is None else [
            c.to_dict() for c in transcript.mock_calls
        ],
    }  # fmt: skip


def record_run(dest: Path, transcript: Transcript, agent: str) -> str:
    """Keep the run under ``dest``; returns the kept trace's path ("" when there is none).

    Whatever an earlier session kept there (the same ``--eval-output-dir``) is replaced.
    """
    dest.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(dest / "files", ignore_errors=True)
    target_trace = dest / "trace.jsonl"
    source_trace = transcript.trace_path
    if target_trace.exists() and (
        source_trace is None or source_trace.resolve() != target_trace.resolve()
    ):
        target_trace.unlink()
    (dest / META).write_text(
        json.dumps(transcript_meta(transcript, agent), indent=1, ensure_ascii=False),
        encoding="utf-8",
    )
    if transcript.cwd is not None:
        for rel in transcript.files_created:
            source = transcript.cwd / rel
            if (
                source.is_file()
                and not source.is_symlink()
                and source.stat().st_size <= MAX_KEPT_FILE
            ):
                target = dest / "files" / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
    if source_trace is None or not source_trace.exists():
        return ""
    if source_trace.resolve() != target_trace.resolve():
        shutil.copyfile(source_trace, target_trace)
    return str(target_trace)
