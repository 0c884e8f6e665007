"""Writing a session's iteration into a skill-creator workspace: the next free
``iteration-N`` folder of it, made afresh (an earlier iteration is never touched), holding the
files of :mod:`.skill_creator` and :mod:`.skill_creator_benchmark`, and, for a session of
trigger queries, one ``run_eval.py`` results document per skill under ``triggers/``.

What a run created is hostile: each kept file is read without following a link, a file of
more than one name or larger than the session keeps is left out, and a run's outputs hold at
most :data:`MAX_RUN_BYTES`. Every name written is made here; the folder is marked inert, so
no tool acts on what the runs made (see :mod:`pytest_plugin_evals.util.inert`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from pytest_plugin_evals.records import RunRecord
from pytest_plugin_evals.reporting.result import SessionResult
from pytest_plugin_evals.reporting.skill_creator import (
    WorkspaceFile,
    configs,
    dumps,
    eval_cases,
    eval_ids,
    metadata,
    run_files,
)
from pytest_plugin_evals.reporting.skill_creator_benchmark import benchmark
from pytest_plugin_evals.reporting.skill_creator_triggers import trigger_documents
from pytest_plugin_evals.util.capture import MAX_KEPT_FILE
from pytest_plugin_evals.util.inert import mark_inert
from pytest_plugin_evals.util.plainfiles import NotPlain, open_plain

#: The most bytes of created files one run's ``outputs/`` holds.
MAX_RUN_BYTES = 64 * 1024 * 1024
_ITERATION = re.compile(r"iteration-(\d{1,9})")


def workspace_files(
    result: SessionResult, folder_of: Callable[[RunRecord], Path | None]
) -> list[WorkspaceFile]:
    """Every file of the session's iteration folder, relative to it: each eval's
    ``eval_metadata.json`` (in its folder, and in each configuration's, where the viewer looks),
    its graded runs' folders, ``benchmark.json`` and the trigger documents. ``folder_of``
    gives a run's kept folder in the results folder (None: none was kept)."""
    cases = eval_cases(result)
    files: list[WorkspaceFile] = []
    for case, eval_id in zip(cases, eval_ids(cases), strict=True):
        base = PurePosixPath(f"eval-{eval_id}")
        meta = dumps(metadata(case, eval_id))
        files.append(WorkspaceFile(base / "eval_metadata.json", text=meta))
        for config, runs in zip(configs(case), (case.with_runs, case.without_runs), strict=True):
            graded = [r for r in runs if r.result.graded]
            if graded:
                files.append(WorkspaceFile(base / config / "eval_metadata.json", text=meta))
            for record in graded:
                where = base / config / f"run-{record.run}"
                files.extend(run_files(record, where, folder_of(record)))
    if cases:
        files.append(WorkspaceFile(PurePosixPath("benchmark.json"), text=dumps(benchmark(result))))
    for index, (skill, document) in enumerate(trigger_documents(result), start=1):
        name = _file_name(skill) or f"skill-{index}"
        files.append(WorkspaceFile(PurePosixPath("triggers", f"{name}.json"), text=dumps(document)))
    return files


def _file_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[:80]


def next_iteration(workspace: Path) -> Path:
    """A new, empty ``iteration-N`` folder in ``workspace``: N one past the highest there."""
    workspace.mkdir(parents=True, exist_ok=True)
    numbers = [int(m.group(1)) for p in workspace.iterdir() if (m := _ITERATION.fullmatch(p.name))]
    number = max(numbers, default=0) + 1
    while True:
        folder = workspace / f"iteration-{number}"
        try:
            folder.mkdir()
        except FileExistsError:
            number += 1
            continue
        return folder


def write_workspace(workspace: Path, files: Sequence[WorkspaceFile]) -> Path:
    """Write ``files`` into the next iteration folder of ``workspace``; returns that folder.
    ``OSError`` when the workspace cannot be written."""
    folder = next_iteration(workspace)
    mark_inert(folder)
    spent: dict[PurePosixPath, int] = {}
    for item in files:
        target = folder.joinpath(*item.path.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        if item.text is not None:
            target.write_text(item.text, encoding="utf-8")
            continue
        run = item.path.parent.parent  # <eval>/<config>/run-K
        data = _read(item.source, MAX_RUN_BYTES - spent.get(run, 0))
        if data is not None:
            spent[run] = spent.get(run, 0) + len(data)
            target.write_bytes(data)
    return folder


def _read(source: Path | None, room: int) -> bytes | None:
    """A kept file's bytes, never through a link; None when it is not a plain file of one name
    or holds more than ``room`` (or than a session keeps)."""
    if source is None or room <= 0:
        return None
    limit = min(room, MAX_KEPT_FILE)
    try:
        with open_plain(source) as fh:
            data = fh.read(limit + 1)
    except (NotPlain, OSError):
        return None
    return None if len(data) > limit else data
