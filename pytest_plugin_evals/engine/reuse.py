"""``--eval-reuse`` decided apart from the shell: one process's fingerprints, stamps and
look-ups (:class:`ReuseStamps`: which earlier session runs are taken from, which recorded run
is taken and what a run made is stamped with), why a run was made although reuse was asked
(the note each such run keeps), and the summary's notices on what was reused and from where.
Every process that makes runs stamps the without and baseline arms' runs it made (the next
session may reuse them); run N of a case's arm reuses that arm's recorded run N, so each
process decides alone, the same way at ``-n 0`` and ``-n 2``, and the runs the earlier session
did not make are made (topped up). ``making.RunMaker`` grades a reused run again."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_plugin_evals.agents.base import capabilities_of
from pytest_plugin_evals.agents.identity import agent_identity, model_context
from pytest_plugin_evals.engine.notices import INFO, WARNING, Notice
from pytest_plugin_evals.model import Case, PluginInfo, RunResult
from pytest_plugin_evals.recording import run_folder
from pytest_plugin_evals.reporting.earlier import Picked, Wanted, pick, same_kind
from pytest_plugin_evals.reporting.result import SessionResult
from pytest_plugin_evals.reuse import (
    LAST,
    PARTS,
    REUSABLE_ARMS,
    Fingerprint,
    Found,
    Miss,
    case_part,
    holds_stamps,
    look_up,
    write_stamp,
)
from pytest_plugin_evals.settings import EvalSettings, results_dir
from pytest_plugin_evals.shards import plugin_version
from pytest_plugin_evals.stats.operating import top_up_warning
from pytest_plugin_evals.util.digests import TooLarge, digest, tree_digest
from pytest_plugin_evals.util.environment import operator_environment
from pytest_plugin_evals.util.stampkey import StampKeyError, load_stamp_key

if TYPE_CHECKING:
    from pytest_plugin_evals.agents import Agent

#: How many reasons for runs made although reuse was asked the summary lists.
SHOWN_REASONS = 6
#: The note of a run made although ``--eval-reuse`` was asked, before its reason.
NOT_REUSED = "--eval-reuse: made, not reused"


def miss_note(miss: Miss) -> str | None:
    """The note of a run made because of ``miss`` (none when it was never recorded)."""
    if miss.kind == "absent":
        return None
    if miss.kind == "changed":
        named = ", ".join(PARTS.get(p, p) for p in miss.detail.split(", "))
        return f"{NOT_REUSED}: changed since: {named}"
    if miss.kind == "old":
        return f"{NOT_REUSED}: older than --eval-reuse-max-age"
    if miss.kind == "unstamped":
        return f"{NOT_REUSED}: recorded without a fingerprint"
    if miss.kind == "failed":
        return f"{NOT_REUSED}: the recorded run was not made"
    return f"{NOT_REUSED}: {miss.detail}"


def last_session(results_root: Path, own: Path, wanted: Wanted) -> Picked:
    """``--eval-reuse last``: the newest earlier session of this session's kind (its arms,
    its baseline, A/A or not, its agents; partial will do, a replay will not) that holds
    reusable runs, and the newer ones passed over with why."""
    same_kind = replace(wanted, same_arms=True, partial=True, replays=False, recorded_runs=False)
    return pick(results_root, own, same_kind, _reusable)


def _reusable(folder: Path) -> str | None:
    return None if holds_stamps(folder) else "it holds no reusable runs"


class ReusedRun(Protocol):
    """What reuse reads of a run item."""

    @property
    def case(self) -> Case: ...
    @property
    def arm(self) -> str: ...
    @property
    def run(self) -> int: ...
    @property
    def agent_label(self) -> str | None: ...
    @property
    def baseline(self) -> PluginInfo | None: ...
    @property
    def mock_plan(self) -> Any: ...


def _tools_part(settings: EvalSettings) -> str:
    """The fingerprint's part for what a run may do: its tools, sandbox and environment."""
    read = {"read": [str(p) for p in settings.allow_read]} if settings.allow_read else {}
    return digest(
        {
            "allow": settings.allow_tools,
            "disallow": settings.disallow_tools,
            "unconfined": settings.unconfined,
            "network": settings.allow_network,
            **read,
            "bounds": settings.bounds,
            "envPass": settings.env_pass,
            "scaffold": settings.scaffold,
        }
    )


class ReuseStamps:
    """One process's fingerprints, stamps and look-ups (``stamp``: the session's, which
    names its own results folder)."""

    def __init__(self, settings: EvalSettings, stamp: str) -> None:
        self.settings = settings
        self.stamp_name = stamp
        self._agents: dict[int, str] = {}
        self._digests: dict[tuple[str, Any], str] = {}
        self._source: Path | None = None
        self._looked = False
        self._key: bytes | StampKeyError | None = None
        self._lock = threading.Lock()  # runs made ahead ask from several threads

    def key(self) -> bytes | StampKeyError:
        """The stamp key (read or made once per process), or why there is none."""
        with self._lock:
            if self._key is None:
                try:
                    self._key = load_stamp_key(operator_environment())
                except StampKeyError as exc:
                    self._key = exc
            return self._key

    def _once(self, key: tuple[str, Any], compute: Callable[[Any], str], arg: Any) -> str:
        """``compute(arg)``, once per session and process: the files it reads do not change
        while runs are made (a run's own files are elsewhere)."""
        with self._lock:
            if key not in self._digests:
                self._digests[key] = compute(Path(arg) if isinstance(arg, str) else arg)
            return self._digests[key]

    def fingerprint(self, item: ReusedRun, agent: Agent) -> Fingerprint | str | None:
        """The fingerprint of the item's run (None when its arm is not reusable, or its agent
        replays; a line when a folder is too large to fingerprint)."""
        if item.arm not in REUSABLE_ARMS or not capabilities_of(agent).spends:
            return None
        if self.settings.aa:  # both arms load the plugin under test: as the with arm, never
            return None
        settings, case, plan = self.settings, item.case, item.mock_plan
        active = plan.active(item.arm != "without") if plan is not None else None
        mocks = case.suite_root / "mocks"
        try:
            baseline = None
            if item.arm == "baseline" and item.baseline is not None:
                baseline = self._once(("tree", item.baseline.path), tree_digest, item.baseline.path)
            parts = {
                "case": self._once(("case", id(case)), case_part, case),
                "agent": self._once(("agent", id(agent)), _agent_part, agent),
                "model": digest((settings.model or case.model, model_context(agent))),
                "tools": _tools_part(settings),
                "mocks": digest(
                    {
                        "mode": settings.mocks,
                        "realServers": settings.allow_real_servers,
                        "active": None
                        if active is None
                        else sorted((s.name, s.kind, s.registered) for s in active),
                        "suite": self._once(("tree", mocks), tree_digest, mocks),
                    }
                ),
                "baseline": digest(baseline),
                "judge": digest(
                    None if settings.no_judge else (settings.judge, settings.judge_model)
                ),
                "harness": digest(plugin_version()),
            }
        except TooLarge as exc:
            return f"{NOT_REUSED}: too large to fingerprint ({exc})"
        except OSError as exc:  # a case file that vanished or cannot be read: made, as ever
            return f"{NOT_REUSED}: cannot be fingerprinted ({exc})"
        return Fingerprint(parts)

    def source(self, suite_root: Path) -> Path | None:
        """The earlier results folder runs are reused from (None: none, or not asked)."""
        with self._lock:
            if not self._looked:
                s = self.settings
                own = results_dir(s, suite_root, self.stamp_name)
                if s.reuse == LAST:
                    kind = same_kind(s.agent, s.agents, s.baseline_plugin, s.aa)
                    found = last_session(suite_root / "results", own, kind).document
                    self._source = None if found is None else found.parent
                elif s.reuse is not None:
                    self._source = Path(s.reuse)
                self._looked = True
            return self._source

    def look(
        self, item: ReusedRun, agent: Agent
    ) -> tuple[tuple[Path, Found] | None, Fingerprint | None, str | None]:
        """The earlier results folder and the recorded run the item's run is taken from, when
        it may be; else None, with the fingerprint to stamp the run made with and the note it
        gets (why it is not reused)."""
        fingerprint = self.fingerprint(item, agent)
        if not isinstance(fingerprint, Fingerprint):
            return None, None, fingerprint
        source = self.source(item.case.suite_root) if self.settings.reuse is not None else None
        if source is None:
            return None, fingerprint, None
        key = self.key()
        if isinstance(key, StampKeyError):
            return None, fingerprint, f"{NOT_REUSED}: no stamp key to check it with ({key})"
        recorded = run_folder(source / "runs", item.case, item.arm, item.run, item.agent_label)
        max_age = self.settings.reuse_max_age
        found = look_up(source, recorded, fingerprint, max_age=max_age, now=time.time(), key=key)
        if isinstance(found, Miss):
            return None, fingerprint, miss_note(found)
        return (source, found), fingerprint, None

    def stamp(
        self,
        results: Path,
        item: ReusedRun,
        fingerprint: Fingerprint,
        made_at: float,
        origin: str | None = None,
    ) -> None:
        """Stamp the item's run kept in this session's results folder ``results`` (made at
        ``made_at``; ``origin``: the results folder it was first recorded in, when reused)."""
        key = self.key()
        if isinstance(key, StampKeyError):  # a run kept without its stamp is made again
            return
        folder = run_folder(results / "runs", item.case, item.arm, item.run, item.agent_label)
        # A run kept without its stamp is made again next time, never lost.
        with contextlib.suppress(OSError):
            write_stamp(folder, fingerprint, made_at, origin or str(results), key)


def _agent_part(agent: Agent) -> str:
    return digest(agent_identity(agent))


def last_line(picked: Picked, results_root: Path) -> str:
    """Which session ``--eval-reuse last`` took, or that none would do, and why newer ones
    were passed over."""
    folder = f"{results_root.name}/"
    said = (
        f"--eval-reuse last: no earlier session of this kind with reusable runs under "
        f"{results_root} — every run was made"
        if picked.document is None
        else f"--eval-reuse last: took {folder}{picked.document.parent.name}, the newest "
        "session of this kind with reusable runs"
    )
    passed = picked.passed_over_line(folder)
    return f"{said}; {passed}" if passed else said


def reuse_notices(
    result: SessionResult,
    reuse: str | None,
    suite_root: Path | None,
    own: Path | None,
    wanted: Wanted | None = None,
) -> list[Notice]:
    """How many runs of each reusable arm were reused and from where, what their agents cost
    when they were made, and why the others were made (none without ``--eval-reuse``); under
    ``last``, which session it took (``wanted``: this session's kind)."""
    if reuse is None:
        return []
    runs = [r.result for c in result.cases for r in c.runs]
    said: list[Notice] = []
    for arm in REUSABLE_ARMS:
        of_arm = [r for r in runs if r.arm == arm]
        if not of_arm:
            continue
        reused = [r for r in of_arm if r.reused_from is not None]
        if not reused:
            said.append(
                Notice(INFO, f"--eval-reuse: none of the {len(of_arm)} {arm}-arm run(s) reused")
            )
            continue
        sources = ", ".join(sorted({str(r.reused_from) for r in reused}))
        cost = sum(max(0.0, r.cost_usd - r.judge_cost_usd) for r in reused)
        said.append(
            Notice(
                INFO,
                f"--eval-reuse: {len(reused)} of {len(of_arm)} {arm}-arm run(s) reused from "
                f"{sources} (their agent cost, ${cost:.4f}, was spent when they were made)",
            )
        )
    if reuse == LAST and suite_root is not None and own is not None and wanted is not None:
        results_root = suite_root / "results"
        said.append(Notice(INFO, last_line(last_session(results_root, own, wanted), results_root)))
    return [*said, *top_up_notices(result), *_made_notices(runs)]


def top_up_notices(result: SessionResult) -> list[Notice]:
    """A warning per (reused, now) pair of run counts of the cases whose reused runs were
    topped up: reading a verdict again after more runs is another look (``stats.operating``
    says what it does to the error rate)."""
    pairs: Counter[tuple[int, int]] = Counter()
    for case in result.cases:
        for arm in REUSABLE_ARMS:
            of_arm = [r.result for r in case.runs if r.result.arm == arm]
            reused = sum(1 for r in of_arm if r.reused_from is not None)
            if 0 < reused < len(of_arm):
                pairs[(reused, len(of_arm))] += 1
                break
    return [
        Notice(WARNING, f"--eval-reuse: {top_up_warning(b, n, k)}")
        for (b, n), k in sorted(pairs.items())
    ]


def _made_notices(runs: list[RunResult]) -> list[Notice]:
    """Why runs were made although reuse was asked: the most common reasons, then the rest."""
    said: list[Notice] = []
    notes = Counter(
        n.removeprefix(f"{NOT_REUSED}: ") for r in runs for n in r.notes if n.startswith(NOT_REUSED)
    )
    common = notes.most_common()
    for reason, count in common[:SHOWN_REASONS]:
        said.append(Notice(WARNING, f"--eval-reuse: {count} run(s) made, not reused: {reason}"))
    if len(common) > SHOWN_REASONS:
        rest = sum(count for _, count in common[SHOWN_REASONS:])
        said.append(
            Notice(
                WARNING,
                f"--eval-reuse: {rest} more run(s) made, not reused, for other reasons (each "
                "run's notes in the JSON document say why)",
            )
        )
    return said
