"""Keeping each run in the results folder: its trace, the files it created and its metadata.

``<results>/runs/<case key>/<arm>-<run>/`` holds ``trace.jsonl``, ``meta.json`` and ``files/``.
The replay agent reads the same layout back.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

from .model import Abort, Case, MockCall, ToolCall, Transcript
from .util.inert import is_inert, mark_inert
from .util.jsonlines import dumps

META = "meta.json"

#: Created files larger than this are listed but not copied.
MAX_KEPT_FILE = 10 * 1024 * 1024


#: How much of a case's name or path its folder name keeps (a hash keeps it unique).
SLUG_LENGTH = 60


def slug(text: str) -> str:
    """``text`` as a readable folder name: letters of any script, digits, ``.``, ``_`` and
    ``-``; anything else becomes ``-``."""
    text = unicodedata.normalize("NFC", text)
    made = re.sub(r"[^\w.-]+", "-", text).strip("-.")[:SLUG_LENGTH].strip("-.")
    return made or "case"


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def unique_slug(text: str) -> str:
    """``slug(text)`` and a short hash of ``text``: readable, and unique to ``text``."""
    return f"{slug(text)}-{short_hash(text)}"


def case_key(case: Case) -> str:
    """The case's folder name in a results folder: stable (the same case gets the same folder
    in every session) and unique within its suite (a readable slug of its folder, or of its
    suite file and name, and a short hash of its path and name). ``a b``, ``a-b`` and ``a?b``
    get three folders; ``été`` stays readable."""
    own_folder = case.source in ("prose", "case_yaml", "mixed")
    where = case.dir if own_folder else case.path
    try:
        rel = where.relative_to(case.suite_root).as_posix()
    except ValueError:
        rel = where.name
    readable = slug(rel) if own_folder else f"{slug(rel)}--{slug(case.name)}"
    return f"{readable}-{short_hash(f'{rel}::{case.name}')}"


def run_folder(runs_dir: Path, case: Case, arm: str, run: int, agent: str | None = None) -> Path:
    """A run's folder: ``<case key>/<arm>-<run>``, or ``<case key>/<agent>-<arm>-<run>`` in a
    session of several agents (``--eval-agents``)."""
    name = f"{arm}-{run}" if agent is None else f"{agent}-{arm}-{run}"
    return runs_dir / case_key(case) / name


def _call_json(call: ToolCall) -> dict[str, Any]:
    return {
        "name": call.name,
        "input": call.input,
        "output": call.output,
        "isError": call.is_error,
        "id": call.id,
        **({"originalName": call.original_name} if call.original_name else {}),
    }


def _mock_json(call: MockCall) -> dict[str, Any]:
    return {
        "server": call.server,
        "tool": call.tool,
        "input": call.input,
        "output": call.output,
        "isError": call.is_error,
    }


def transcript_meta(transcript: Transcript, agent: str) -> dict[str, Any]:
    """The ``meta.json`` of a kept run: everything the replay agent needs to rebuild it."""
    aborted = transcript.aborted
    return {
        "agent": agent,
        "finalMessage": transcript.final_message,
        "toolCalls": [_call_json(call) for call in transcript.tool_calls],
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
        "aborted": None if aborted is None else {
            "server": aborted.server, "tool": aborted.tool, "reason": aborted.reason
        },
        "skipGrading": transcript.skip_grading,
        "unconfined": transcript.unconfined,
        "mockCalls": None if transcript.mock_calls is None else [
            _mock_json(c) for c in transcript.mock_calls
        ],
    }  # fmt: skip


def _number(value: Any, default: float = 0.0) -> float:
    return float(value) if isinstance(value, (int, float)) else default


def transcript_from_meta(meta: dict[str, Any], cwd: Path, trace: Path | None) -> Transcript:
    """The transcript a kept run's ``meta.json`` describes (see :func:`transcript_meta`)."""
    calls = [
        ToolCall(
            c["name"],
            c.get("input") or {},
            c.get("output"),
            bool(c.get("isError")),
            c.get("id"),
            c.get("originalName") or None,
        )
        for c in meta.get("toolCalls") or []
    ]
    mocks = meta.get("mockCalls")
    aborted = meta.get("aborted")
    return Transcript(
        final_message=meta.get("finalMessage") or "",
        tool_calls=calls,
        turns=int(_number(meta.get("turns"))),
        input_tokens=meta.get("inputTokens"),
        output_tokens=meta.get("outputTokens"),
        cost_usd=_number(meta.get("costUsd")),
        duration_seconds=_number(meta.get("durationSeconds")),
        error=meta.get("error"),
        infra_error=meta.get("infraError"),
        trace_path=trace,
        files_created=list(meta.get("filesCreated") or []),
        cwd=cwd,
        mock_calls=None
        if mocks is None
        else [
            MockCall(m["server"], m["tool"], m.get("input") or {}, m.get("output") or "",
                     bool(m.get("isError")))
            for m in mocks
        ],
        delivered=meta.get("delivered"),
        latency_ms=meta.get("latencyMs"),
        skip_grading=bool(meta.get("skipGrading")),
        unconfined=bool(meta.get("unconfined") or meta.get("unconfinedShell")),
        notes=list(meta.get("notes") or []),
        aborted=Abort(str(aborted.get("server")), str(aborted.get("tool")),
                      str(aborted.get("reason"))) if isinstance(aborted, dict) else None,
    )  # fmt: skip


#: The file in a runs folder that names the session that recorded there.
OWNER_FILE = ".session"


def claim_runs_folder(folder: Path, session: str) -> None:
    """Make ``folder`` this session's runs folder. Runs another session kept there (the same
    ``--eval-output-dir``) are removed first, so two sessions' runs never mix; a folder that
    is not a runs folder of this plugin (no inert marker) is left as it is. Every process of
    the session calls this before its first run: a lock beside the folder makes one of them
    clear it, and the others find it claimed."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with (folder.parent / ".runs.lock").open("a") as lock, _locked(lock):
        owner = folder / OWNER_FILE
        try:
            if owner.read_text(encoding="utf-8") == session:
                return
        except OSError:
            pass
        if is_inert(folder):
            shutil.rmtree(folder, ignore_errors=True)
        mark_inert(folder)
        owner.write_text(session, encoding="utf-8")


@contextlib.contextmanager
def _locked(fh: IO[str]) -> Iterator[None]:
    if fcntl is None:  # Windows: no lock (one process per session there in practice)
        yield
        return
    fcntl.flock(fh, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)


def _unchanged(data: bytes) -> bytes:
    return data


def record_run(
    dest: Path, transcript: Transcript, agent: str, *, redact: Callable[[bytes], bytes] = _unchanged
) -> str:
    """Keep the run under ``dest``; returns the kept trace's path ("" when there is none).

    The trace and the created files are copied through ``redact``. Whatever an earlier
    session kept there (the same ``--eval-output-dir``) is replaced.
    """
    dest.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(dest / "files", ignore_errors=True)
    target_trace = dest / "trace.jsonl"
    source_trace = transcript.trace_path
    same = (
        source_trace is not None
        and target_trace.exists()
        and source_trace.resolve() == target_trace.resolve()
    )
    if target_trace.exists() and not same:
        target_trace.unlink()
    (dest / META).write_text(dumps(transcript_meta(transcript, agent), indent=1), "utf-8")
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
                target.write_bytes(redact(source.read_bytes()))
    if source_trace is None or not source_trace.exists() or source_trace.is_symlink():
        return ""
    if not same:
        with source_trace.open("rb") as src, target_trace.open("wb") as out:
            for line in src:
                out.write(redact(line))
    return str(target_trace)
