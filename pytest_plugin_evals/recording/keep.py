"""Keeping a run in the results folder: its trace and the files it created (through the
redactor), and its ``meta.json``; never written through a link."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest_plugin_evals.recording.layout as layout
from pytest_plugin_evals.model import Transcript
from pytest_plugin_evals.util.inert import stored_path
from pytest_plugin_evals.util.jsonlines import dumps
from pytest_plugin_evals.util.plainfiles import NotPlain, open_plain, plain_path

from .folders import _not_a_link
from .layout import FILES, META, TRACE
from .meta import transcript_meta


def _unchanged(data: bytes) -> bytes:
    return data


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
    name inside the run's working directory, reached through no symbolic link, each under its
    :func:`~pytest_plugin_evals.util.inert.stored_path` (a ``.git`` as ``.git.inert``). Whatever an
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
                    data = fh.read(layout.MAX_KEPT_FILE + 1)
            except (NotPlain, OSError):
                continue
            if len(data) <= layout.MAX_KEPT_FILE:
                target = dest / FILES / stored_path(rel)  # inert: no tool acts on it
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(redact(data))
    if source_trace is None or not source_trace.exists() or source_trace.is_symlink():
        return ""
    if not same:
        with source_trace.open("rb") as src, target_trace.open("wb") as out:
            for line in src:
                out.write(redact(line))
    return str(target_trace)
