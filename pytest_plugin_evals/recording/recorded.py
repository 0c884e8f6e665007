"""Reading a kept run back as it was written (the ``replay:`` agent, ``--eval-reuse``): only
plain folders and regular files of one name, nothing followed through a link."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pytest_plugin_evals.recording.layout as layout
from pytest_plugin_evals.util.capture import capture_stream
from pytest_plugin_evals.util.inert import original_path
from pytest_plugin_evals.util.jsonlines import JSONFileError, load_strict
from pytest_plugin_evals.util.plainfiles import NotPlain, open_plain, plain_files, plain_folder

from .layout import FILES, META, TRACE

#: A kept run's ``meta.json`` larger than this is not read.
MAX_META = 64 * 1024 * 1024
#: The largest ``meta.json`` read for its duration alone (``--eval-shard-durations``).
MAX_DURATION_META = 16 * 1024 * 1024


class RecordedRunRefused(Exception):
    """A kept run that is not as a session writes one (a link in it, a hard-linked file, a
    FIFO): one line naming it."""


@dataclass(frozen=True)
class RecordedRun:
    """A kept run, read: its folder, its ``meta.json`` (or why it could not be read), its
    created files (relative to ``files/``, by their stored names: see
    :func:`~pytest_plugin_evals.util.inert.stored_name`) and whether it has a trace."""

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
    """Copy a kept run's created files into ``cwd`` under the names the run gave them (each
    one up to :data:`MAX_KEPT_FILE`, as a session keeps them) and its trace to ``trace_file``
    (within the capture budget); returns whether there was a trace. Only regular files are
    copied, never through a link."""
    try:
        for rel in recorded.files:
            source = recorded.folder / FILES / rel
            original = original_path(rel.as_posix())
            if original is None:
                raise RecordedRunRefused(
                    f"the recorded run {recorded.name} holds {FILES}/{rel}, a name no session "
                    "writes: refused"
                )
            with open_plain(source) as src:
                data = src.read(layout.MAX_KEPT_FILE + 1)
            if len(data) > layout.MAX_KEPT_FILE:
                continue
            target = cwd.joinpath(*original.split("/"))
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


def recorded_durations(folder: Path) -> dict[str, list[float]]:
    """The recorded runs' durations in a results folder, by case key (its ``runs/`` folder)."""
    found: dict[str, list[float]] = {}
    for meta in sorted((folder / "runs").glob(f"*/*/{META}")):
        try:  # another session's folder: a link, a pipe or a huge file is passed over
            with open_plain(meta) as fh:
                data = fh.read(MAX_DURATION_META + 1)
            if len(data) > MAX_DURATION_META:
                continue
            seconds = json.loads(data.decode("utf-8")).get("durationSeconds")
        except (NotPlain, OSError, UnicodeDecodeError, ValueError, AttributeError):
            continue
        number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
        if number and math.isfinite(seconds) and seconds >= 0:
            found.setdefault(meta.parent.parent.name, []).append(float(seconds))
    return found
