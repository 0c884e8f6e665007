"""Which earlier session is "the last one": for ``--eval-compare last`` and ``replay:last``.

The results folders under ``<evals folder>/results/`` are looked at newest first (by when
their document was written); the first one that is *comparable* is taken, and each newer one
passed over is said with why. A session is comparable when it

* is a result document this version reads (the strict reader; a folder or document that is a
  symbolic link, or not a regular file, is refused: nothing is followed out of the folder);
* was written by this plugin (the reference, ``claude plugin eval``, writes its folders in
  the same place: they are compared only when named by path);
* is complete (not partial: no rejected credential, cost ceiling, interruption, ``-x`` stop
  or run that could not be made);
* is not a replay (it graded recorded runs again, so it measured no agent: a replay shows how
  today's graders read old runs, not how the plugin does now);
* has the same arms, when the arms matter (``--eval-compare``): a with/without session is
  compared only with a with/without one, an A/B (``--eval-baseline-plugin``) session only with
  an A/B against the same baseline, an A/A (``--eval-aa``) only with an A/A: the second
  arm's scores mean something else otherwise;
* ran the same agents (the same kind, ``claude``, ``codex``, ``cmd`` …; under
  ``--eval-agents`` the same labels), unless any agent will do (a replay);
* covers this session's selected cases, when it was itself a subset (``-k``, ``-m``,
  ``--eval-case``, ``--eval-tag``, a shard): a full session is comparable even when a case has
  been added since (that case is ``new``);
* for a replay, holds recorded runs (``runs/``).

Pure but for reading the folders (no process, no pytest).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import Case
from pytest_plugin_evals.reporting.result import SessionResult, relative

#: The result document in a results folder.
RESULT_FILE = "aggregate-result.json"
#: A document larger than this is not read (a results folder is hostile input).
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024
#: Why a partial session is passed over, by its ``partialReason``.
_PARTIAL = {
    "auth_failed": "it stopped at a rejected credential",
    "cost_ceiling": "it stopped at the cost ceiling",
    "interrupted": "it was interrupted",
    "maxfail": "it stopped at -x/--maxfail",
    "missing_shards": "it lacks shards",
}

#: The ``--eval-compare`` value (and ``--eval-reuse``'s) that names the newest earlier session.
LAST = "last"
#: The agent spec that replays the newest comparable session's recorded runs.
REPLAY_LAST = "replay:last"
#: A case as both sessions name it: (name, folder relative to the suite root, agent label).
CaseKey = tuple[str, str, str]


@dataclass(frozen=True)
class Wanted:
    """What this session needs of the earlier one."""

    #: This session's selected cases.
    cases: frozenset[CaseKey] = frozenset()
    #: The kind of agent (``claude``, ``cmd`` …); None: any agent will do.
    agent_kind: str | None = None
    #: Under ``--eval-agents``, the labels (sorted).
    agent_labels: tuple[str, ...] = ()
    #: It must hold recorded runs (``runs/``): a replay.
    recorded_runs: bool = False
    #: A replay will do (``--eval-plan`` reads only its runs' spread, cost and time).
    replays: bool = False
    #: The earlier session must have the same arms: ``baseline`` is this session's
    #: ``--eval-baseline-plugin`` (None: a with/without session).
    same_arms: bool = False
    baseline: str | None = None
    #: With ``same_arms``: this session is an A/A one (``--eval-aa``), and takes only another.
    aa: bool = False
    #: A partial session will do (``--eval-reuse``: the runs it made are as good).
    partial: bool = False


@dataclass(frozen=True)
class Picked:
    """The session taken (None: none was comparable) and the newer ones passed over."""

    document: Path | None
    result: SessionResult | None
    #: (folder name, why), newest first.
    passed_over: tuple[tuple[str, str], ...] = ()

    def passed_over_line(self, folder: str = "") -> str | None:
        """``passed over results/2026-…Z (it is a replay), results/…`` (None: none)."""
        if not self.passed_over:
            return None
        said = ", ".join(f"{folder}{name} ({why})" for name, why in self.passed_over)
        return f"passed over {said}"

    def notices(self, where: str, results_root: Path) -> list[str]:
        """What the summary says of ``where`` (``--eval-compare last``), in one line: which
        session it took, or that it found none, and the newer ones it passed over, with why."""
        folder = f"{results_root.name}/"
        found = "earlier comparable session" if self.passed_over else "earlier results folder"
        said = (
            f"{where} last: no {found} under {results_root} — nothing to compare with"
            if self.document is None
            else f"{where} last: took {folder}{self.document.parent.name}, the newest "
            "comparable session"
        )
        passed = self.passed_over_line(folder)
        return [f"{said}; {passed}" if passed else said]


class EarlierError(ValueError):
    """Why the earlier session named cannot be read: one line naming the option and file."""


def read_earlier(given: Path, where: str) -> tuple[Path, SessionResult]:
    """The result document ``given`` names (a results folder or its document), read; an
    :class:`EarlierError` of one line when it is missing or unreadable, or holds what a result
    document does not (the field's JSON path said)."""
    from pytest_plugin_evals.reporting.document import DocumentError, read_document

    document = given / RESULT_FILE if given.is_dir() else given
    if not document.is_file():
        raise EarlierError(
            f"{where}: no result document at {given} (expected a results folder holding "
            f"{RESULT_FILE}, or that file)"
        )
    try:
        text = document.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EarlierError(f"{where}: cannot read {document}: {exc}") from None
    try:
        return document, read_document(text)
    except DocumentError as exc:
        raise EarlierError(f"{where}: {document}: {exc}") from None
    except (ValueError, TypeError, AttributeError, KeyError, ArithmeticError, RecursionError):
        raise EarlierError(
            f"{where}: {document}: not a result document this version can read"
        ) from None


def agent_kind(spec: str) -> str:
    """``claude``, ``cmd``, ``replay`` … of an ``--eval-agent`` value."""
    kind, sep, _ = spec.strip().partition(":")
    return kind if sep else spec.strip()


def case_key(name: str, folder: str, agent: str | None) -> CaseKey:
    return name, folder, agent or ""


def selected_cases(selected: Iterable[tuple[Case, str | None]]) -> list[CaseKey]:
    """The selected cases (each with its agent's label) as an earlier session names them."""
    keys = {case_key(c.name, relative(str(c.dir), str(c.suite_root)), a) for c, a in selected}
    return sorted(keys)


def same_kind(
    agent: str, agents: Sequence[tuple[str, str]], baseline: str | None, aa: bool
) -> Wanted:
    """The kind of session ``last`` takes for a session of ``agent`` (or of ``agents``,
    ``(label, spec)``), against ``baseline`` (None: the without arm), A/A or not."""
    return Wanted(
        agent_kind=agent_kind(agent),
        agent_labels=tuple(sorted(label for label, _ in agents)),
        same_arms=True,
        baseline=baseline,
        aa=aa,
    )


def earlier_session(
    compare: str, where: str, results_root: Path, own: Path, wanted: Wanted
) -> tuple[Path | None, SessionResult | None, list[str]]:
    """``--eval-compare``'s earlier session (``where``: the option as given): the document it
    names by path, read (an :class:`EarlierError` when it cannot be), or under ``last`` the
    newest session under ``results_root`` that is ``wanted``, other than ``own`` (None when
    none is); and what the summary says of it."""
    if compare != LAST:
        document, before = read_earlier(Path(compare), where)
        return document, before, []
    picked = pick(results_root, own, wanted)
    return picked.document, picked.result, picked.notices(where, results_root)


def replay_last(results_root: Path, own: Path, cases: Iterable[CaseKey]) -> tuple[Path | None, str]:
    """``--eval-agent replay:last``: the folder of the newest comparable session under
    ``results_root`` that holds recorded runs of the selected ``cases`` (any agent's) and the
    line said of it; or None and the session's usage error, when none does."""
    picked = pick(results_root, own, Wanted(cases=frozenset(cases), recorded_runs=True))
    passed = picked.passed_over_line()
    if picked.document is None:
        return None, (
            f"--eval-agent {REPLAY_LAST}: no earlier session under {results_root} holds "
            "recorded runs of the selected cases" + (f" ({passed})" if passed else "")
        )
    folder = picked.document.parent
    said = f"{REPLAY_LAST}: replayed {folder}, the newest comparable session"
    return folder, f"{said}; {passed}" if passed else said


def _documents(results_root: Path, own: Path) -> list[tuple[int, str, Path]]:
    """Each results folder's document, newest first; a folder or document that is a link
    (or not a plain folder and file) is listed with no document, to be passed over."""
    try:
        folders = list(os.scandir(results_root))
    except OSError:
        return []
    try:
        own_resolved = own.resolve()
    except OSError:
        own_resolved = own
    found: list[tuple[int, str, Path]] = []
    for entry in folders:
        folder = Path(entry.path)
        try:
            if folder.resolve() == own_resolved:
                continue
            if entry.is_symlink():
                found.append((os.lstat(folder).st_mtime_ns, entry.name, folder))
                continue
            if not entry.is_dir(follow_symlinks=False):
                continue
            info = os.lstat(folder / RESULT_FILE)
        except OSError:
            continue
        found.append((info.st_mtime_ns, entry.name, folder / RESULT_FILE))
    return sorted(found, reverse=True)


def _read(document: Path) -> tuple[Mapping[str, Any], SessionResult] | str:
    """The document's JSON and result, or why it cannot be read."""
    from pytest_plugin_evals.reporting.document import DocumentError, load_document
    from pytest_plugin_evals.util.jsonlines import JSONFileError, load_strict

    if document.name != RESULT_FILE:
        return "the folder is a symbolic link: refused"
    try:
        info = os.lstat(document)
        if not stat.S_ISREG(info.st_mode):
            return f"its {RESULT_FILE} is not a regular file: refused"
        if info.st_size > MAX_DOCUMENT_BYTES:
            return f"its {RESULT_FILE} is larger than {MAX_DOCUMENT_BYTES // 2**20} MiB"
        fd = os.open(document, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            text = handle.read(MAX_DOCUMENT_BYTES + 1).decode("utf-8")
        doc = load_strict(text)
        if not isinstance(doc, Mapping):
            return "not a result document"
        return doc, load_document(doc)
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot be read: {exc.__class__.__name__}"
    except JSONFileError as exc:
        return f"not a result document this version reads: {exc.problem}"
    except DocumentError as exc:
        return f"not a result document this version reads: {exc}"
    except (ValueError, TypeError, AttributeError, KeyError, ArithmeticError, RecursionError):
        return "not a result document this version reads"


def _written_by_reference(doc: Mapping[str, Any]) -> bool:
    """The reference writes ``claudeVersion`` and no ``loadErrors``; this plugin the reverse."""
    return "claudeVersion" in doc or "loadErrors" not in doc


def _subset(result: SessionResult) -> bool:
    suite = result.suite
    return bool(
        suite.not_selected or suite.case_filter or suite.tag_filters or result.shard is not None
    )


def _baseline(result: SessionResult) -> str | None:
    """What the session's second arm loaded instead of no plugin (None: a with/without or a
    with-only session)."""
    if not result.baseline:
        return None
    specs = sorted({b.spec for b in result.suite.baseline_plugins})
    return ", ".join(specs) or "a baseline plugin"


def _arms(baseline: str | None) -> str:
    return "a with/without session" if baseline is None else f"an A/B session against {baseline}"


def why_not(doc: Mapping[str, Any], result: SessionResult, wanted: Wanted) -> str | None:
    """Why the earlier session is not comparable with this one (None: it is)."""
    if _written_by_reference(doc):
        return "written by claude plugin eval"
    if result.partial and not wanted.partial:
        reason = result.partial_reason or ""
        return _PARTIAL.get(reason, f"it is partial ({reason or 'runs could not be made'})")
    specs = [result.suite.agent, *(a.spec for a in result.agents)]
    if not wanted.replays and any(agent_kind(s) == "replay" for s in specs if s):
        return "it is a replay"
    if wanted.same_arms and result.suite.aa != wanted.aa:
        return "an A/A session" if result.suite.aa else _arms(_baseline(result))
    if wanted.same_arms and not wanted.aa:
        theirs = _baseline(result)
        if theirs != wanted.baseline:
            return _arms(theirs)
    if wanted.agent_kind is not None:
        labels = tuple(sorted(a.label for a in result.agents))
        if wanted.agent_labels or labels:
            if labels != wanted.agent_labels:
                return f"other agents ({', '.join(labels) or agent_kind(result.suite.agent)})"
        elif agent_kind(result.suite.agent or "claude") != wanted.agent_kind:
            return f"another agent ({agent_kind(result.suite.agent)})"
    if _subset(result):
        held = {case_key(c.name, c.dir, c.agent) for c in result.cases}
        missing = sorted(wanted.cases - held)
        if missing:
            names = ", ".join(name for name, _, _ in missing[:3])
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            return f"a subset that did not run {names}{more}"
    return None


def _plain_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def pick(
    results_root: Path,
    own: Path,
    wanted: Wanted,
    holds: Callable[[Path], str | None] | None = None,
) -> Picked:
    """The newest comparable session under ``results_root`` other than ``own``; ``holds``
    says why a comparable session's folder will not do (None: it will)."""
    passed: list[tuple[str, str]] = []
    for _, name, document in _documents(results_root, own):
        read = _read(document)
        if isinstance(read, str):
            passed.append((name, read))
            continue
        doc, result = read
        why = why_not(doc, result, wanted)
        if why is None and wanted.recorded_runs and not _plain_dir(document.parent / "runs"):
            why = "it holds no recorded runs"
        if why is None and holds is not None:
            why = holds(document.parent)
        if why is not None:
            passed.append((name, why))
            continue
        return Picked(document, result, tuple(passed))
    return Picked(None, None, tuple(passed))
