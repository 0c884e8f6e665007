"""Keeping each run in the results folder: its trace, the files it created and its metadata.

``<results>/runs/<case key>/<arm>-<run>/`` holds ``trace.jsonl``, ``meta.json`` and ``files/``.
The replay agent reads the same layout back.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import threading
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, cast, get_args

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

from .model import Abort, Case, InfraKind, MockCall, ToolCall, Transcript
from .util.capture import MAX_KEPT_FILE as _MAX_KEPT_FILE
from .util.capture import capture_stream
from .util.inert import is_inert, mark_inert
from .util.jsonlines import JSONFileError, dumps, load_strict
from .util.plainfiles import (
    NotPlain,
    open_plain,
    plain_files,
    plain_folder,
    plain_path,
    relative_name,
)

META = "meta.json"
TRACE = "trace.jsonl"
FILES = "files"

#: Created files larger than this are listed but not copied.
MAX_KEPT_FILE = _MAX_KEPT_FILE


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
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    try:
        return float(value)
    except OverflowError:
        return default


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _texts(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _infra(value: Any) -> InfraKind | None:
    """A recorded infrastructure error's kind (one this version does not know: ``harness``)."""
    if not isinstance(value, str):
        return None
    return cast("InfraKind", value) if value in get_args(InfraKind) else "harness"


def _objects(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def transcript_from_meta(meta: dict[str, Any], cwd: Path, trace: Path | None) -> Transcript:
    """The transcript a kept run's ``meta.json`` describes (see :func:`transcript_meta`);
    a field of the wrong type reads as not recorded."""
    calls = [
        ToolCall(
            str(c.get("name") or ""),
            c["input"] if isinstance(c.get("input"), dict) else {},
            _text(c.get("output")),
            bool(c.get("isError")),
            _text(c.get("id")),
            _text(c.get("originalName")) or None,
        )
        for c in _objects(meta.get("toolCalls"))
    ]
    mocks = meta.get("mockCalls")
    aborted = meta.get("aborted")
    latency = meta.get("latencyMs")
    return Transcript(
        final_message=_text(meta.get("finalMessage")) or "",
        tool_calls=calls,
        turns=_count(meta.get("turns")) or 0,
        input_tokens=_count(meta.get("inputTokens")),
        output_tokens=_count(meta.get("outputTokens")),
        cost_usd=_number(meta.get("costUsd")),
        duration_seconds=_number(meta.get("durationSeconds")),
        error=_text(meta.get("error")),
        infra_error=_infra(meta.get("infraError")),
        trace_path=trace,
        files_created=[f for f in _texts(meta.get("filesCreated")) if relative_name(f)],
        cwd=cwd,
        mock_calls=None
        if not isinstance(mocks, list)
        else [
            MockCall(str(m.get("server") or ""), str(m.get("tool") or ""),
                     m["input"] if isinstance(m.get("input"), dict) else {},
                     _text(m.get("output")) or "", bool(m.get("isError")))
            for m in _objects(mocks)
        ],
        delivered=meta.get("delivered") if isinstance(meta.get("delivered"), bool) else None,
        latency_ms=_number(latency) if isinstance(latency, (int, float)) else None,
        skip_grading=bool(meta.get("skipGrading")),
        unconfined=bool(meta.get("unconfined") or meta.get("unconfinedShell")),
        notes=_texts(meta.get("notes")),
        aborted=Abort(str(aborted.get("server")), str(aborted.get("tool")),
                      str(aborted.get("reason"))) if isinstance(aborted, dict) else None,
    )  # fmt: skip


# -- reading a kept run back, as it was written ----------------------------------------------

#: A kept run's ``meta.json`` larger than this is not read.
MAX_META = 64 * 1024 * 1024


class RecordedRunRefused(Exception):
    """A kept run that is not as a session writes one (a link in it, a hard-linked file, a
    FIFO): one line naming it."""


@dataclass(frozen=True)
class RecordedRun:
    """A kept run, read: its folder, its ``meta.json`` (or why it could not be read), its
    created files (relative to ``files/``) and whether it has a trace."""

    folder: Path
    name: str
    meta: dict[str, Any] | str
    files: tuple[PurePosixPath, ...]
    trace: bool


def read_recorded_run(results: Path, run: Path) -> RecordedRun | None:
    """The run kept in ``run`` (a folder under ``results``), None when none is kept there.

    Only what a session writes is read: plain folders and regular files of one name. A
    symbolic link on the way (``runs/``, the case's folder, the run's folder) or anywhere in
    the run's folder, a hard-linked file, a FIFO or a device is a
    :class:`RecordedRunRefused` naming it; nothing is followed or opened through a link.
    """
    rel = run.relative_to(results)
    name = rel.as_posix()

    def refused(what: str) -> RecordedRunRefused:
        return RecordedRunRefused(f"the recorded run {name} {what}: refused")

    folder = results
    for part in rel.parts:
        folder = folder / part
        try:
            if not plain_folder(folder):
                return None
        except NotPlain as exc:
            if folder == run:
                raise refused(f"is {exc.detail}") from None
            raise refused(f"lies in {exc.named(folder.relative_to(results).as_posix())}") from None
    if not os.path.lexists(run / META):
        return None
    try:
        found = plain_files(run)
    except NotPlain as exc:
        raise refused(f"holds {exc.named(exc.path.relative_to(run).as_posix())}") from None
    try:
        with open_plain(run / META) as fh:
            data = fh.read(MAX_META + 1)
    except NotPlain as exc:
        raise refused(f"holds {exc.named(META)}") from None
    meta: dict[str, Any] | str
    if len(data) > MAX_META:
        meta = f"larger than {MAX_META // 2**20} MB"
    else:
        try:
            parsed = load_strict(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            parsed = f"not UTF-8 text (at byte {exc.start})"
        except JSONFileError as exc:
            parsed = str(exc)
        if isinstance(parsed, dict):
            meta = parsed
        else:
            meta = parsed if isinstance(parsed, str) else "not a JSON object"
    files = tuple(
        PurePosixPath(*p.parts[1:]) for p in found if len(p.parts) > 1 and p.parts[0] == FILES
    )
    return RecordedRun(run, name, meta, files, PurePosixPath(TRACE) in found)


def restore_recorded_run(recorded: RecordedRun, cwd: Path, trace_file: Path) -> bool:
    """Copy a kept run's created files into ``cwd`` (each one up to :data:`MAX_KEPT_FILE`, as
    a session keeps them) and its trace to ``trace_file`` (within the capture budget);
    returns whether there was a trace. Only regular files are copied, never through a link."""
    try:
        for rel in recorded.files:
            source = recorded.folder / FILES / rel
            with open_plain(source) as src:
                data = src.read(MAX_KEPT_FILE + 1)
            if len(data) > MAX_KEPT_FILE:
                continue
            target = cwd.joinpath(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if not recorded.trace:
            return False
        with open_plain(recorded.folder / TRACE) as src:
            capture_stream(src, trace_file, json_lines=True)
        return True
    except NotPlain as exc:
        inside = exc.path.relative_to(recorded.folder).as_posix()
        raise RecordedRunRefused(
            f"the recorded run {recorded.name} holds {exc.named(inside)}: refused"
        ) from None


#: The file in a runs folder that names the session that recorded there.
OWNER_FILE = ".session"
#: The file in a results folder that a session holds locked for as long as it uses the folder
#: (it names the holder: ``<PID> <session token>``).
SESSION_LOCK = ".session.lock"
#: The file beside a runs folder that the processes of a session hold while one of them
#: claims the folder (it names the holder's PID).
CLAIM_LOCK = ".runs.lock"
#: How long a process waits for another one's claim, and for a holder to write its name.
CLAIM_WAIT = 5.0


class FolderBusy(Exception):
    """A results folder that another session uses (one line naming it and the holder)."""


#: The results folders this process holds: folder -> (the open lock file, the session).
_held: dict[Path, tuple[IO[str], str]] = {}
_held_guard = threading.Lock()


def _holder(lock: Path, wait: float) -> tuple[str, str]:
    """The PID and the session token a lock file names ("?" and "" when it names none within
    ``wait`` seconds: the holder has not written them yet)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            text = lock.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        if text.endswith("\n"):
            pid, _, session = text.strip().partition(" ")
            return (pid if pid.isdigit() else "?"), session
        if time.monotonic() >= deadline:
            return "?", ""
        time.sleep(0.05)


def hold_results_folder(folder: Path, session: str) -> None:
    """Hold the results folder ``folder`` for ``session`` until
    :func:`release_results_folders` (or this process's end): while one session holds it,
    another that points at the same folder gets :class:`FolderBusy` naming the holder's PID.
    The processes of one session share it: a process that finds the folder held by its own
    session (its controller, another xdist worker) goes on. A folder whose session has ended
    is free again. (Windows: not held, as before.)"""
    if fcntl is None:
        return
    key = folder.absolute()
    with _held_guard:
        held = _held.get(key)
        if held is not None:
            if held[1] == session:
                return
            raise FolderBusy(
                f"{folder}: another pytest session (PID {os.getpid()}) is using this results folder"
            )
        folder.mkdir(parents=True, exist_ok=True)
        lock = folder / SESSION_LOCK
        fh = lock.open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            pid, holder = _holder(lock, CLAIM_WAIT)
            if holder == session:
                return
            raise FolderBusy(
                f"{folder}: another pytest session (PID {pid}) is using this results folder"
            ) from None
        except OSError:  # a file system without locks: as before, not held
            fh.close()
            return
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()} {session}\n")
        fh.flush()
        _held[key] = (fh, session)


def release_results_folders(session: str) -> None:
    """Let go of the results folders this process holds for ``session``."""
    with _held_guard:
        for key, (fh, holder) in list(_held.items()):
            if holder == session:
                del _held[key]
                fh.close()


def claim_runs_folder(folder: Path, session: str) -> None:
    """Make ``folder`` this session's runs folder. Runs another session kept there (the same
    ``--eval-output-dir``) are removed first, so two sessions' runs never mix; a folder that
    is not a runs folder of this plugin (no inert marker) is left as it is. The results folder
    is held for the session first (:func:`hold_results_folder`): a folder another session is
    using is :class:`FolderBusy`, and only a folder an earlier, finished session left is
    replaced. Every process of the session calls this before its first run: a lock beside the
    folder makes one of them clear it, and the others find it claimed; a lock another process
    holds for longer than :data:`CLAIM_WAIT` seconds is :class:`FolderBusy` too."""
    results = folder.parent
    hold_results_folder(results, session)
    results.mkdir(parents=True, exist_ok=True)
    with (results / CLAIM_LOCK).open("a+", encoding="utf-8") as lock, _locked(lock, results):
        owner = folder / OWNER_FILE
        try:
            if owner.read_text(encoding="utf-8") == session:
                return
        except OSError:
            pass
        _not_a_link(folder)  # never record through a link, wherever it leads
        if is_inert(folder):
            shutil.rmtree(folder, ignore_errors=True)
        mark_inert(folder)
        owner.write_text(session, encoding="utf-8")


def wait_for_claims(results: Path) -> None:
    """Wait until no other process is claiming the runs folder of ``results`` (at most
    :data:`CLAIM_WAIT` seconds, then :class:`FolderBusy` naming the holder's PID)."""
    results.mkdir(parents=True, exist_ok=True)
    with (results / CLAIM_LOCK).open("a+", encoding="utf-8") as lock, _locked(lock, results):
        pass


@contextlib.contextmanager
def _locked(fh: IO[str], results: Path) -> Iterator[None]:
    """Hold the claim lock ``fh`` (of the results folder ``results``), waiting for another
    process's claim at most :data:`CLAIM_WAIT` seconds."""
    if fcntl is None:  # Windows: no lock (one process per session there in practice)
        yield
        return
    deadline = time.monotonic() + CLAIM_WAIT
    while True:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                pid, _ = _holder(results / CLAIM_LOCK, 0)
                raise FolderBusy(
                    f"{results}: another process (PID {pid}) has held "
                    f"{results / CLAIM_LOCK} for more than {CLAIM_WAIT:g} s"
                ) from None
            time.sleep(0.05)
    try:
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        yield
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)


def _unchanged(data: bytes) -> bytes:
    return data


def _not_a_link(path: Path) -> None:
    """Make sure writing ``path`` writes there: a symbolic link in its place (a results folder
    replayed into itself holds what it was given) is removed, never written through."""
    if path.is_symlink():
        path.unlink()


def _names_made(cwd: Path, created: Iterable[str]) -> dict[Path, int]:
    """Each file the run created (reached through plain folders) -> how many of the names it
    created lead to that same file: a regular file of more names than that is another name of
    a file the run did not make."""
    found: dict[Path, tuple[int, int]] = {}
    for rel in created:
        path = plain_path(cwd, rel)
        if path is None:
            continue
        try:
            st = os.lstat(path)
        except OSError:
            continue
        found[path] = (st.st_dev, st.st_ino)
    counts = Counter(found.values())
    return {path: counts[inode] for path, inode in found.items()}


def record_run(
    dest: Path, transcript: Transcript, agent: str, *, redact: Callable[[bytes], bytes] = _unchanged
) -> str:
    """Keep the run under ``dest``; returns the kept trace's path ("" when there is none).

    The trace and the created files are copied through ``redact``: only regular files of one
    name inside the run's working directory, reached through no symbolic link. Whatever an
    earlier session kept there (the same ``--eval-output-dir``) is replaced; nothing is
    written through a link (a link in the run's folder is removed first, and a run whose
    folder, case folder or runs folder is a link is not kept).
    """
    if any(folder.is_symlink() for folder in (dest, dest.parent, dest.parent.parent)):
        return ""  # a results folder replayed into itself: never written through its links
    dest.mkdir(parents=True, exist_ok=True)
    _not_a_link(dest / FILES)
    shutil.rmtree(dest / FILES, ignore_errors=True)
    target_trace = dest / TRACE
    _not_a_link(target_trace)
    _not_a_link(dest / META)
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
        names = _names_made(transcript.cwd, transcript.files_created)
        for rel in transcript.files_created:
            source = plain_path(transcript.cwd, rel)
            if source is None or source not in names:
                continue
            try:
                # A file of several names is kept only when the run made every one of them
                # (a hard link to a file of the plugin, or of the system, is not).
                with open_plain(source, names[source]) as fh:
                    data = fh.read(MAX_KEPT_FILE + 1)
            except (NotPlain, OSError):
                continue
            if len(data) <= MAX_KEPT_FILE:
                target = dest / FILES / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(redact(data))
    if source_trace is None or not source_trace.exists() or source_trace.is_symlink():
        return ""
    if not same:
        with source_trace.open("rb") as src, target_trace.open("wb") as out:
            for line in src:
                out.write(redact(line))
    return str(target_trace)
