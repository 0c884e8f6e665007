"""Runs an earlier session made, taken again when nothing that shapes them changed.

The without arm loads no plugin, and a ``git:REF`` baseline arm loads a tree of a commit: a
change to the plugin under test cannot have changed their runs. Each run of those arms is
kept with a *stamp* (``reuse.json`` beside its ``meta.json``): the :class:`Fingerprint` of
everything that shapes the run, part by part, and when the agent made it. ``--eval-reuse``
looks for the same run (the same case, arm, run number and agent label) in an earlier results
folder, and takes it when its fingerprint is equal and it is younger than
``--eval-reuse-max-age``; the session then grades it again with today's graders, as
``replay:`` does. Everything read back is hostile input: a stamp or a run that is not as a
session writes one (a link, a wrong type, too large) is refused in one line and made again.
A stamp is signed (HMAC-SHA256, :mod:`.util.stampkey`'s key, kept outside every sandbox) over
its fields and the digest of every other file of its run (``meta.json``, the trace, the kept
files): a stamp or a run altered without the key is refused, and so is one stamped elsewhere.
"""

from __future__ import annotations

import hmac
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from .model import Case
from .recording import (
    MAX_META,
    META,
    MetaError,
    RecordedRunRefused,
    check_meta,
    read_recorded_run,
)
from .util.ages import DEFAULT_MAX_AGE as DEFAULT_MAX_AGE
from .util.ages import parse_age as parse_age
from .util.digests import TooLarge, digest, file_digest, tree_digest
from .util.jsonlines import JSONFileError, dumps, load_strict
from .util.plainfiles import NotPlain, plain_folder, read_plain
from .util.stampkey import sign, signed

#: A reusable run's stamp, in its folder.
STAMP = "reuse.json"
#: A stamp larger than this is refused.
MAX_STAMP = 64 * 1024
#: A recorded run's ``meta.json`` larger than this is not reused.
MAX_REUSED_META = min(MAX_META, 16 * 2**20)
#: The arms whose runs do not depend on the plugin under test.
REUSABLE_ARMS = ("without", "baseline")
#: The ``--eval-reuse`` value that names the newest earlier results folder.
LAST = "last"

#: What each part of a fingerprint covers, as the summary names a part that changed.
PARTS = {
    "case": "the case's files",
    "agent": "the agent or its version",
    "model": "the model or its endpoint",
    "tools": "the tools, grants or sandbox",
    "mocks": "the mocks",
    "baseline": "the baseline plugin",
    "judge": "the judge",
    "harness": "pytest-plugin-evals' version",
}


def _case_skip(rel: PurePosixPath) -> bool:
    """A case folder's names left out of its fingerprint: its graders (applied again to a
    reused run) and results folders a session writes."""
    return rel.parts[0] in ("graders", "results", "__pycache__", ".pytest_cache")


def case_part(case: Case) -> str:
    """What of the case shapes a run: its fields but its graders (the prompt, the model, the
    tools, the limits, the environment, the files it names) and every file of its own folder
    but ``graders/``; :class:`TooLarge`."""
    own_folder = case.source in ("prose", "case_yaml", "mixed")
    named = [*case.plugins, *case.add_dirs, case.history_file or "", case.scaffold_script or ""]
    return digest(
        {
            "name": case.name,
            "prompt": case.prompt,
            "model": case.model,
            "maxTurns": case.max_turns,
            "timeout": case.timeout_seconds,
            "allowedTools": case.allowed_tools,
            "disallowedTools": case.disallowed_tools,
            "env": case.env,
            "appendSystemPrompt": case.append_system_prompt,
            "mocks": case.mocks,
            "requiresSecret": case.requires_secret,
            "inputFiles": [(rel, file_digest(src)) for src, rel in case.input_files],
            "named": [(n, file_digest(case.dir / n)) for n in named if n],
            "folder": tree_digest(case.dir, _case_skip) if own_folder else None,
        }
    )


@dataclass(frozen=True)
class Fingerprint:
    """Everything that shapes a run, part by part (see :data:`PARTS`): each part's digest."""

    parts: Mapping[str, str]

    @property
    def value(self) -> str:
        return digest(dict(self.parts))

    def changed(self, other: Mapping[str, str]) -> list[str]:
        """The parts that differ from ``other`` (a recorded stamp's parts), by name."""
        names = sorted(set(self.parts) | set(other))
        return [n for n in names if self.parts.get(n) != other.get(n)]


def run_digest(run_dir: Path) -> str:
    """The digest of a kept run's files but its stamp; :class:`TooLarge`."""
    return tree_digest(run_dir, lambda rel: rel == PurePosixPath(STAMP))


def write_stamp(
    run_dir: Path, fingerprint: Fingerprint, made_at: float, origin: str, key: bytes
) -> None:
    """Stamp a kept run: its fingerprint, when the agent made it (epoch seconds), the results
    folder it was first recorded in and the digest of its files, signed with ``key``. A link
    in the stamp's place is never written through; a run too large to digest is not stamped."""
    target = run_dir / STAMP
    if not run_dir.is_dir() or run_dir.is_symlink():
        return
    if target.is_symlink():
        target.unlink()
    try:
        files = run_digest(run_dir)
    except TooLarge:
        return
    fields = {
        "fingerprint": fingerprint.value,
        "parts": dict(fingerprint.parts),
        "madeAt": float(made_at),
        "origin": origin,
        "files": files,
    }
    doc: dict[str, Any] = json.loads(dumps(fields))  # signed as it is written and read back
    doc["mac"] = sign(key, doc)
    target.write_text(dumps(doc, indent=1), encoding="utf-8")


@dataclass(frozen=True)
class Stamp:
    fingerprint: str
    parts: dict[str, str]
    made_at: float
    origin: str
    #: The digest of the run's other files, and the signature of all of it.
    files: str = ""
    mac: str = ""

    def signed_by(self, key: bytes) -> bool:
        doc = {
            "fingerprint": self.fingerprint,
            "parts": self.parts,
            "madeAt": self.made_at,
            "origin": self.origin,
            "files": self.files,
        }
        return signed(key, doc, self.mac)


_HEX = re.compile(r"[0-9a-f]{64}")


def read_stamp(path: Path, name: str) -> Stamp | None:
    """The stamp at ``path`` (None when there is none); :class:`RecordedRunRefused` when it is
    not as a session writes one (one line: what, where)."""
    where = f"the recorded run {name}'s {STAMP}"
    try:
        data = read_plain(path, MAX_STAMP)
    except FileNotFoundError:
        return None
    except NotPlain as exc:
        if exc.kind == "missing":
            return None
        raise RecordedRunRefused(f"{where} is {exc.detail}: refused") from None
    except OSError as exc:
        raise RecordedRunRefused(f"{where} cannot be read: {exc.strerror or exc}") from None
    if data is None:
        raise RecordedRunRefused(f"{where} is larger than {MAX_STAMP // 1024} KB: refused")
    try:
        doc = load_strict(data.decode("utf-8"))
    except (UnicodeDecodeError, JSONFileError) as exc:
        raise RecordedRunRefused(f"{where} is not JSON ({exc}): refused") from None
    if not isinstance(doc, dict):
        raise RecordedRunRefused(f"{where} is not a JSON object: refused")
    fingerprint, parts = doc.get("fingerprint"), doc.get("parts")
    made_at, origin = doc.get("madeAt"), doc.get("origin")
    problem = None
    if not isinstance(fingerprint, str) or not _HEX.fullmatch(fingerprint):
        problem = "fingerprint is not a SHA-256"
    elif (
        not isinstance(parts, dict)
        or len(parts) > 64
        or not all(isinstance(v, str) and len(v) <= 128 for v in parts.values())
    ):
        problem = "parts is not an object of digests"
    elif isinstance(made_at, bool) or not isinstance(made_at, (int, float)):
        problem = "madeAt is not a number"
    elif not math.isfinite(made_at):
        problem = "madeAt is not a finite number"
    elif not isinstance(origin, str) or len(origin) > 4096:
        problem = "origin is not a path"
    elif not all(isinstance(doc.get(k), str) and _HEX.fullmatch(doc[k]) for k in ("files", "mac")):
        problem = "it is not signed (no files digest and signature)"
    if problem is not None:
        raise RecordedRunRefused(f"{where}: {problem}: refused")
    assert isinstance(fingerprint, str) and isinstance(parts, dict) and isinstance(origin, str)
    return Stamp(fingerprint, parts, float(made_at), origin, doc["files"], doc["mac"])  # type: ignore[arg-type]


def meta_problem(meta: Mapping[str, Any]) -> str | None:
    """Why a recorded run's ``meta.json`` is not as a session writes one, or was not made,
    if it is either (its shape is :func:`~pytest_plugin_evals.recording.check_meta`'s)."""
    try:
        doc = check_meta(meta)
    except MetaError as exc:
        return str(exc)
    if doc.infraError is not None:
        return "it was not made (an infrastructure error)"
    return None


@dataclass(frozen=True)
class Found:
    """A recorded run that may be reused: its folder and its stamp."""

    folder: Path
    stamp: Stamp


@dataclass(frozen=True)
class Miss:
    """Why a run is made although reuse was asked: ``absent`` (none recorded: topped up),
    ``changed`` (the parts named), ``old``, ``unstamped`` or ``refused`` (the line says)."""

    kind: str
    detail: str = ""


def look_up(
    source: Path,
    run_dir: Path,
    fingerprint: Fingerprint,
    *,
    max_age: float,
    now: float,
    key: bytes,
) -> Found | Miss:
    """The run recorded at ``run_dir`` (under the results folder ``source``), when it may be
    reused for a run of ``fingerprint`` now (its stamp signed with ``key``, its files as they
    were stamped); else why not."""
    try:
        rel = run_dir.relative_to(source).as_posix()
    except ValueError:
        return Miss("refused", f"{run_dir} is not in {source}")
    try:
        if not os.path.lexists(run_dir / META):
            return Miss("absent")
        try:
            if os.lstat(run_dir / META).st_size > MAX_REUSED_META:
                limit = MAX_REUSED_META // 2**20
                return Miss("refused", f"the recorded run {rel}'s {META} is larger than {limit} MB")
        except OSError:
            return Miss("absent")
        recorded = read_recorded_run(source, run_dir)
        if recorded is None:
            return Miss("absent")
        stamp = read_stamp(run_dir / STAMP, rel)
    except RecordedRunRefused as exc:
        return Miss("refused", str(exc))
    except NotPlain as exc:
        return Miss("refused", f"the recorded run {rel}: {exc.detail}: refused")
    if stamp is None:
        return Miss("unstamped")
    if isinstance(recorded.meta, str):
        return Miss("refused", f"the recorded run {rel}'s {META} cannot be read: {recorded.meta}")
    problem = meta_problem(recorded.meta)
    if problem is not None:
        kind = "failed" if problem.startswith("it was not made") else "refused"
        return Miss(kind, f"the recorded run {rel}: {problem}")
    altered = _altered(run_dir, stamp, key)
    if altered is not None:
        return Miss("refused", f"the recorded run {rel} {altered}: refused")
    if stamp.fingerprint != fingerprint.value:
        return Miss("changed", ", ".join(fingerprint.changed(stamp.parts)) or "fingerprint")
    if now - stamp.made_at > max_age or stamp.made_at > now + 300:
        return Miss("old")
    return Found(run_dir, stamp)


def _altered(run_dir: Path, stamp: Stamp, key: bytes) -> str | None:
    """Why a run's stamp or files cannot be trusted, if they cannot."""
    if not stamp.signed_by(key):
        return (
            f"has a {STAMP} not signed with this machine's stamp key (altered, or stamped with "
            "another key)"
        )
    try:
        files = run_digest(run_dir)
    except TooLarge as exc:
        return f"is too large to check ({exc})"
    if not hmac.compare_digest(files, stamp.files):
        return "has files (meta.json, trace, kept files) changed since it was stamped"
    return None


def holds_stamps(folder: Path) -> bool:
    """Whether the results folder ``folder`` holds a stamped run; links are not followed."""
    runs = folder / "runs"
    try:
        return not folder.is_symlink() and plain_folder(runs) and _has_stamp(runs)
    except (OSError, NotPlain):
        return False


def _has_stamp(runs: Path, limit: int = 10_000) -> bool:
    """Whether a runs folder holds a stamped run (looking at no more than ``limit`` folders)."""
    looked = 0
    for case in _folders(runs):
        for run in _folders(case):
            looked += 1
            if looked > limit:
                return False
            if os.path.isfile(run / STAMP):
                return True
    return False


def _folders(path: Path) -> Iterable[Path]:
    try:
        with os.scandir(path) as entries:
            return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
