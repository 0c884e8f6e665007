"""The controller's session as data, apart from pytest: the selected runs of each case, the
records as their reports arrive, a case decided when its last run has reported, and at the end
the session's result, its suite root and its one results folder (``plugin.session`` is its
pytest shell).

One exit policy, visible everywhere: what decides the exit status is what the test reports say.
Under the default threshold of 1, each with-arm run below a perfect score is a failed item, and
a case passes exactly when all its runs do. Under a lower threshold a run is a measurement (its
item passes, its grade in the report); when the last run of a case has reported,
:meth:`Session.take` decides the case (``reporting.result.decide_case``, the decision its
aggregates and the gate read too), and a case that does not pass turns that last report into a
failure naming the case — so the terminal, JUnit, pytest-html, ``--lf`` and the exit status all
see the same failures. Only the controller sees every run of a case (under xdist they land on
different workers), so the shell applies it there, in ``pytest_runtest_logreport``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_plugin_evals.engine.nodeids import case_unit
from pytest_plugin_evals.settings import EvalSettings, common_suite_root, results_dir
from pytest_plugin_evals.util.timestamps import utc_iso

# The records, scoring and reports are imported where used: the shell makes a session in every
# xdist controller, eval cases or none (docs/explanation/architecture.md).
if TYPE_CHECKING:
    from pytest_plugin_evals.engine.controller import Said, SessionRules
    from pytest_plugin_evals.engine.gates import Gate
    from pytest_plugin_evals.engine.notices import Notice
    from pytest_plugin_evals.model import BaselinePlugin
    from pytest_plugin_evals.records import Record
    from pytest_plugin_evals.reporting.result import SessionResult
    from pytest_plugin_evals.shards import ShardPlan
    from pytest_plugin_evals.stats import CaseStop

#: A case on one agent: its node id group and its agent's label.
Unit = tuple[str, str | None]

#: The settings the engine's gates and notices read (``SessionRules``), by the names both use.
_RULES_SETTINGS = (
    "max_cost_usd",
    "trigger_threshold",
    "fail_on_regression",
    "verdict_gate",
    "cost_regression",
    "ablation",
    "reuse",
    *("agent", "agents", "baseline_plugin", "aa"),  # the kind of session --eval-reuse last takes
)


@dataclass(frozen=True)
class Ending:
    """What the shell found at the session's end, as plain values."""

    interrupted: bool = False
    #: ``--maxfail`` (0: none) and the processes that made runs.
    maxfail: int = 0
    concurrency: int = 1
    #: pytest's root folder: the suite root when nothing else names one.
    rootpath: Path = Path()
    #: The results folder and suite root the runs chose (``recording.chosen_folders``).
    chosen: tuple[Path, Path] | None = None
    #: The results folder this process's run maker recorded in, if it made runs.
    made_in: Path | None = None
    #: How the selected cases were split (``--eval-shard``).
    shard: ShardPlan | None = None
    baseline_plugins: tuple[BaselinePlugin, ...] = ()
    rate_limit_wait_seconds: float | None = None
    #: Under ``--eval-runs auto``: each case's rounds and why it stopped.
    sequential: Mapping[Unit, CaseStop] | None = None
    #: The cases collected but not selected (``plugin.unselected``).
    not_selected: tuple[tuple[str, str], ...] = ()


class Session:
    """The selected runs of each case and the records reported, in the controller."""

    def __init__(self, settings: EvalSettings, stamp: str) -> None:
        self.settings = settings
        self.stamp = stamp
        self.started_at = time.time()
        self.records: dict[str, Record] = {}
        #: Case group and agent label (see :func:`case_unit`) -> how many of its run items
        #: were selected.
        self.expected: dict[Unit, int] = {}
        #: Case group and agent label -> the node ids of its run items that have finished.
        self.finished: dict[Unit, set[str]] = {}
        #: Failed reports so far (as pytest counts them for ``--maxfail``).
        self.failures = 0
        #: Whether ``--eval-session-timeout`` ended the session.
        self.timed_out = False
        #: Once it has ended: its result and results folder, the report paths and lines said.
        self.result: SessionResult | None = None
        self.results_dir: Path | None = None
        self.paths: list[str] = []
        self.notices: list[Notice] = []

    def expect(self, nodeids: Iterable[str]) -> bool:
        """Count the selected run items of each case (once: every xdist worker collects the
        same items); whether this call found the session's runs."""
        if self.expected:
            return False
        for nodeid in nodeids:
            unit = case_unit(nodeid)
            if unit is not None:
                self.expected[unit] = self.expected.get(unit, 0) + 1
        return bool(self.expected)

    def timeout_left(self) -> float | None:
        """``--eval-session-timeout``: the seconds left before the session ends as on Ctrl-C
        (the runs in flight stopped, the document partial); None without one."""
        limit = self.settings.session_timeout
        return None if limit is None else max(0.0, limit - (time.time() - self.started_at))

    def credential_line(self, environ: Mapping[str, str], home: Path) -> str | None:
        """The one line said at the start when the session's claude runs have no credential."""
        if "claude" not in ([spec for _, spec in self.settings.agents] or [self.settings.agent]):
            return None
        from pytest_plugin_evals.agents.claude.auth import credential_notice

        return credential_notice(environ, home)

    def hold_output_dir(self, tag: str) -> str | None:
        """Hold ``--eval-output-dir`` for the session ``tag`` (its workers share the hold) before
        any run starts; the usage error when another session is using it."""
        folder = self.settings.output_dir
        from pytest_plugin_evals.recording import FolderBusy, hold_results_folder, wait_for_claims

        try:
            if folder is None:
                return None
            hold_results_folder(folder, tag)
            wait_for_claims(folder)  # a process stuck claiming it is said now, not per run
        except FolderBusy as exc:
            return (
                f"--eval-output-dir {exc}; wait for it to end, or give this session another "
                "--eval-output-dir"
            )
        return None

    def take(self, nodeid: str, record: Record | None, when: str, outcome: str) -> str | None:
        """Keep a report's record (``when`` and ``outcome`` its phase's); the sentence (safe for
        a terminal) that report fails with when it is the last run of a case that does not pass."""
        if record is None:
            return None
        self.records[nodeid] = record
        from pytest_plugin_evals.records import LoadErrorRecord

        if isinstance(record, LoadErrorRecord) or not (
            record.case.source == "trigger_eval"
            or self.settings.runs_are_measurements(record.case.name)
        ):
            return None
        done = when == "call" or (when == "setup" and outcome != "passed")
        unit = case_unit(nodeid)
        if not done or unit is None or unit not in self.expected:
            return None
        finished = self.finished.setdefault(unit, set())
        finished.add(nodeid)
        if len(finished) != self.expected[unit] or outcome == "failed" or self.settings.aa:
            return None  # an A/A session gates on its wiring only
        from pytest_plugin_evals.reporting.result import decide_case
        from pytest_plugin_evals.reporting.terminal import plain

        records = [self.records[n] for n in finished]
        verdict = decide_case(records, self.rules().scoring, agent=unit[1])
        return plain(verdict.why) if verdict.passed is False else None  # names are the suite's

    def rules(self) -> SessionRules:
        """What the engine's scoring, gates and notices read of the session's settings."""
        from pytest_plugin_evals.engine.controller import SessionRules
        from pytest_plugin_evals.scoring import ScoringRules

        settings = self.settings
        scoring = ScoringRules(
            threshold=settings.threshold,
            reducer=settings.reducer,
            case_reducers=settings.case_reducers,
            margin=settings.margin,
        )
        timeout = settings.session_timeout if self.timed_out else None
        named = {name: getattr(settings, name) for name in _RULES_SETTINGS}
        return SessionRules(scoring=scoring, timed_out=timeout, **named)

    def ends_with_result(self, interrupted: bool, shard: ShardPlan | None) -> bool:
        """Whether the session has a result to give: a record came, its runs were cut short,
        or it is a shard none of the selected cases fell to (which writes its document)."""
        cut_short = bool(self.expected) and interrupted
        return (
            bool(self.records)
            or cut_short
            or (shard is not None and not shard.cases_of(shard.index))
        )

    def summarize(self, end: Ending) -> SessionResult:
        """The session's result, from its records and what the shell found at its end."""
        from pytest_plugin_evals.engine.controller import ablation, not_started, partial_reason
        from pytest_plugin_evals.records.prompts import with_prompts
        from pytest_plugin_evals.reporting.result import SessionFacts, summarize

        records = with_prompts(list(self.records.values()))
        unstarted = not_started(self.expected, self.records)
        settings = self.settings
        facts = SessionFacts(
            started_at=utc_iso(self.started_at),
            duration_seconds=round(time.time() - self.started_at, 3),
            ablation=ablation(records, settings.ablation),
            concurrency=end.concurrency,
            case_filter=settings.case_glob,
            tag_filters=settings.tags,
            root=str(self.suite_root(end)),
            baseline_plugins=end.baseline_plugins,
            rate_limit_wait_seconds=end.rate_limit_wait_seconds,
            second_judge=settings.judge_second,
            **{name: getattr(settings, name) for name in ("agent", "agents", "labels", "aa")},
        )
        why_partial = partial_reason(
            records,
            interrupted=end.interrupted,
            unfinished=bool(unstarted),
            maxfail_reached=bool(end.maxfail) and self.failures >= end.maxfail,
        )
        result = summarize(
            records,
            facts,
            self.rules().scoring,
            partial_reason=why_partial,
            not_started=unstarted,
            sequential=end.sequential,
        )
        if end.not_selected:
            result = replace(result, suite=replace(result.suite, not_selected=end.not_selected))
        return result if end.shard is None else replace(result, shard=end.shard)

    def suite_root(self, end: Ending) -> Path:
        """The folder the session's suites share: the records', else the one its runs chose
        (runs started, none reported), else its shard's (none of the selected cases fell to
        it), else pytest's root."""
        from pytest_plugin_evals.records import LoadErrorRecord

        root = common_suite_root(
            r.suite_root if isinstance(r, LoadErrorRecord) else r.case.suite_root
            for r in self.records.values()
        )
        if root is None and end.chosen is not None:
            return end.chosen[1]
        if root is None and end.shard is not None and end.shard.root:
            root = Path(end.shard.root)
        return root if root is not None else end.rootpath

    def results_folder(self, end: Ending) -> Path:
        """The session's one results folder: where its runs were recorded (every process
        chose the same one, from the same selected items), else where they would have been."""
        from pytest_plugin_evals.records import RunRecord

        if end.made_in is not None:
            return end.made_in
        for record in self.records.values():
            if isinstance(record, RunRecord) and record.result.trace_path:
                return Path(record.result.trace_path).parents[3]  # runs/<case>/<arm-n>/trace
        if end.chosen is not None:
            return end.chosen[0]
        return results_dir(self.settings, self.suite_root(end), self.stamp)

    def conclude(
        self, end: Ending, compared: Callable[[SessionResult], SessionResult] | None = None
    ) -> tuple[Gate | None, ...]:
        """Keep the session's result (``compared``: set beside an earlier session's, under
        ``--eval-compare``) and its results folder; the gates the result closes with."""
        from pytest_plugin_evals.engine.controller import settle

        result = self.summarize(end)
        self.result = result if compared is None else compared(result)
        self.results_dir = self.results_folder(end)
        return settle(self.result, self.rules()).gates

    def write(
        self, said: Said, *, here: Path, exit_status: int, environ: Mapping[str, str]
    ) -> None:
        """Write the session's files (``engine.outputs``) and keep the report paths the table
        shows and the lines said under it (``said``: the other rooms' and plugins' lines)."""
        from pytest_plugin_evals.engine.controller import summary_notices
        from pytest_plugin_evals.engine.outputs import write_outputs

        assert self.result is not None and self.results_dir is not None
        records = self.records.values()
        written = write_outputs(
            self.result, self.results_dir, self.settings, records,
            here=here, exit_status=exit_status, environ=environ,
        )  # fmt: skip
        self.paths = [str(path) for _, path in written.paths]
        said = replace(said, results_dir=self.results_dir, write_error=written.error)
        self.notices = summary_notices(self.result, records, self.rules(), said)
