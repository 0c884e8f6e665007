"""``--eval-reuse last|DIR``: take the without arm's and a baseline arm's runs from an earlier
session when nothing that shapes them changed (see :mod:`pytest_plugin_evals.reuse`).

Every process that makes runs stamps each run of those arms it made (with or without
``--eval-reuse``: the next session may reuse it), and, under ``--eval-reuse``, looks for the
same run in the earlier results folder before making one: run N of a case's arm reuses that
arm's recorded run N, so every process decides alone, the same way at ``-n 0`` and ``-n 2``,
and runs the earlier session did not make are made (topped up). A reused run is graded again
with today's graders (the ``replay:`` agent reads it back); its agent cost is the recorded one,
spent when it was made, not in this session.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from pytest_plugin_evals.agents import capabilities_of
from pytest_plugin_evals.agents.identity import agent_identity, model_context
from pytest_plugin_evals.agents.replay import ReplayAgent
from pytest_plugin_evals.engine.reuse import NOT_REUSED, last_session, miss_note, same_kind
from pytest_plugin_evals.plugin.keys import stamp_key
from pytest_plugin_evals.plugin.sharding import plugin_version
from pytest_plugin_evals.recording import run_folder
from pytest_plugin_evals.reuse import (
    LAST,
    REUSABLE_ARMS,
    Fingerprint,
    Miss,
    case_part,
    look_up,
    write_stamp,
)
from pytest_plugin_evals.runner import execute_run
from pytest_plugin_evals.settings import EvalSettings, results_dir
from pytest_plugin_evals.util.digests import TooLarge, digest, tree_digest
from pytest_plugin_evals.util.environment import operator_environment
from pytest_plugin_evals.util.stampkey import StampKeyError, load_stamp_key

if TYPE_CHECKING:
    from pytest_plugin_evals.agents import Agent
    from pytest_plugin_evals.judges import Judge
    from pytest_plugin_evals.plugin.items import EvalItem
    from pytest_plugin_evals.runner import RunOptions, RunOutcome


class RunMaker(Protocol):
    """What reuse needs of the process's run-maker (:class:`..runs.RunMaker`)."""

    @property
    def root(self) -> Path: ...

    @property
    def made(self) -> Iterator[int]: ...

    def options(self, item: EvalItem, judge: Judge | None) -> RunOptions: ...

    def results_for(self, item: EvalItem) -> Path: ...


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


class Reuse:
    """One process's stamps and look-ups (held by its :class:`RunMaker`)."""

    def __init__(self, config: pytest.Config, settings: EvalSettings) -> None:
        self.config = config
        self.settings = settings
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

    def _agent_part(self, agent: Agent) -> str:
        key = id(agent)
        with self._lock:
            if key not in self._agents:
                self._agents[key] = digest(agent_identity(agent))
            return self._agents[key]

    def _once(self, key: tuple[str, Any], compute: Callable[[Any], str], arg: Any) -> str:
        """``compute(arg)``, once per session and process: the files it reads do not change
        while runs are made (a run's own files are elsewhere)."""
        with self._lock:
            if key not in self._digests:
                self._digests[key] = compute(Path(arg) if isinstance(arg, str) else arg)
            return self._digests[key]

    def fingerprint(self, item: EvalItem, agent: Agent) -> Fingerprint | str | None:
        """The fingerprint of the item's run (None when its arm is not reusable, or its agent
        replays; a line when a folder is too large to fingerprint)."""

        if item.arm not in REUSABLE_ARMS or not capabilities_of(agent).spends:
            return None
        if self.settings.aa:  # both arms load the plugin under test: as the with arm, never
            return None
        settings, case = self.settings, item.case
        plan = item.mock_plan
        active = (
            sorted((s.name, s.kind, s.registered) for s in plan.active(item.arm != "without"))
            if plan is not None
            else None
        )
        mocks = case.suite_root / "mocks"
        try:
            baseline = None
            if item.arm == "baseline" and item.baseline is not None:
                baseline = self._once(("tree", item.baseline.path), tree_digest, item.baseline.path)
            parts = {
                "case": self._once(("case", id(case)), case_part, case),
                "agent": self._agent_part(agent),
                "model": digest((settings.model or case.model, model_context(agent))),
                "tools": _tools_part(settings),
                "mocks": digest(
                    {
                        "mode": settings.mocks,
                        "realServers": settings.allow_real_servers,
                        "active": active,
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

    def source(self, item: EvalItem) -> Path | None:
        """The earlier results folder runs are reused from (None: none, or not asked)."""
        with self._lock:
            if not self._looked:
                wanted = self.settings.reuse
                stamp = self.config.stash[stamp_key]
                own = results_dir(self.settings, item.case.suite_root, stamp)
                if wanted == LAST:
                    results = item.case.suite_root / "results"
                    s = self.settings
                    kind = same_kind(s.agent, s.agents, s.baseline_plugin, s.aa)
                    found = last_session(results, own, kind).document
                    self._source = None if found is None else found.parent
                elif wanted is not None:
                    self._source = Path(wanted)
                self._looked = True
            return self._source

    def take(
        self, maker: RunMaker, item: EvalItem, agent: Agent, judge: Judge | None
    ) -> tuple[RunOutcome | None, Fingerprint | None, str | None]:
        """The item's run reused from the earlier session, when it may be; else None, with the
        fingerprint to stamp the run made with and the note it gets (why it is not reused)."""

        fingerprint = self.fingerprint(item, agent)
        if not isinstance(fingerprint, Fingerprint):
            return None, None, fingerprint
        source = self.source(item) if self.settings.reuse is not None else None
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
        outcome = self._replay(maker, item, source, judge)
        if outcome.result.infra_error is not None:
            note = f"{NOT_REUSED}: {outcome.result.error}"
            return None, fingerprint, note
        self.stamp(item, fingerprint, found.stamp.made_at, found.stamp.origin, maker)
        return outcome, fingerprint, None

    def _replay(
        self, maker: RunMaker, item: EvalItem, source: Path, judge: Judge | None
    ) -> RunOutcome:

        outcome = execute_run(
            item.run_target(),
            agent=ReplayAgent(source),
            run_root=maker.root / f"reused-{item.arm}-{item.run}-{next(maker.made)}",
            options=maker.options(item, judge),
        )
        outcome.result = replace(outcome.result, reused_from=str(source))
        return outcome

    def stamp(
        self,
        item: EvalItem,
        fingerprint: Fingerprint,
        made_at: float,
        origin: str | None,
        maker: RunMaker,
    ) -> None:
        """Stamp the item's run kept in this session's results folder."""

        key = self.key()
        if isinstance(key, StampKeyError):  # a run kept without its stamp is made again
            return
        results = maker.results_for(item)
        folder = run_folder(results / "runs", item.case, item.arm, item.run, item.agent_label)
        # A run kept without its stamp is made again next time, never lost.
        with contextlib.suppress(OSError):
            write_stamp(folder, fingerprint, made_at, origin or str(results), key)
