"""The controller's view of a session: gather run records, decide each case, gate, summarize.

Registered only on the controller (never on an xdist worker). Records arrive on test reports
(``user_properties``), which xdist replays on the controller, so the numbers are the same with
and without ``-n``.

One exit policy, visible everywhere: what decides the exit status is what the test reports say.
Under the default threshold of 1, each with-arm run below a perfect score is a failed item, and
a case passes exactly when all its runs do. Under a lower threshold a run is a measurement (its
item passes, its grade in the report); when the last run of a case has reported, the core
decides the case (``reporting.result.decide_case``, the decision its aggregates and the gate
read too), and a case that does not pass turns that last report into a failure naming the
case — so the terminal, JUnit, pytest-html, ``--lf`` and the exit status all see the same
failures. That is applied here, in ``pytest_runtest_logreport`` on the controller, the one
process that sees every run of a case (under xdist they land on different workers).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.engine.nodeids import case_unit
from pytest_plugin_evals.plugin.compare import earlier_key
from pytest_plugin_evals.plugin.interrupts import interrupt_as_ctrl_c, terminate_as_interrupt
from pytest_plugin_evals.plugin.keys import result_key, session_tag, shared_key, stop_key
from pytest_plugin_evals.plugin.reported import record_of
from pytest_plugin_evals.settings import EvalSettings, common_suite_root, results_dir
from pytest_plugin_evals.shards import shard_line
from pytest_plugin_evals.util.stop_sign import INTERRUPTED
from pytest_plugin_evals.util.tempdirs import sweep_stale_sessions
from pytest_plugin_evals.util.timestamps import utc_iso

# Imported where used, on purpose: the records, scoring, the reports, the run-making, the
# items and the modules of one option. This module is loaded on the controller of every pytest
# session, eval cases or none (see docs/explanation/architecture.md).

if TYPE_CHECKING:
    from pytest_plugin_evals.engine.controller import Said, SessionRules
    from pytest_plugin_evals.engine.gates import Gate
    from pytest_plugin_evals.model import BaselinePlugin
    from pytest_plugin_evals.records import Record
    from pytest_plugin_evals.reporting.result import SessionResult
    from pytest_plugin_evals.scoring import ScoringRules
    from pytest_plugin_evals.shards import ShardPlan

#: config (controller only): the session that gathers records, scores and gates.
session_key: pytest.StashKey[EvalSession] = pytest.StashKey()

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


class EvalSession:
    def __init__(self, config: pytest.Config, settings: EvalSettings, stamp: str) -> None:
        self.config = config
        self.settings = settings
        self.stamp = stamp
        self.started_at = time.time()
        self.started_iso = utc_iso(self.started_at)
        self.records: dict[str, Record] = {}
        #: Case group and agent label (see :func:`case_unit`) -> how many of its run items
        #: were selected.
        self.expected: dict[tuple[str, str | None], int] = {}
        #: Case group and agent label -> the node ids of its run items that have finished.
        self.finished: dict[tuple[str, str | None], set[str]] = {}
        self.result: SessionResult | None = None
        self.paths: list[tuple[str, Path]] = []
        self.write_error: str | None = None
        #: Failed reports so far (as pytest counts them for ``--maxfail``).
        self.failures = 0
        self.results_dir: Path | None = None
        #: ``--eval-session-timeout``'s timer, and whether it ended the session.
        self.timer: Any = None
        self.timed_out = False

    # -- what was selected ------------------------------------------------------------------

    def expect(self, nodeids: Iterable[str]) -> None:
        """Count the selected run items of each case (called once collection is done)."""
        if self.expected:
            return  # every xdist worker collects the same items
        for nodeid in nodeids:
            unit = case_unit(nodeid)
            if unit is not None:
                self.expected[unit] = self.expected.get(unit, 0) + 1
        if self.expected:
            terminate_as_interrupt(self.config)  # the document is written on SIGTERM too
            if not self.config.option.collectonly:
                self._hold_output_dir()
                self._say_credentials()
                self._start_timeout()
                sweep_stale_sessions()

    def _start_timeout(self) -> None:
        """``--eval-session-timeout``: past it the session ends as on Ctrl-C (the runs in
        flight are stopped, the document is partial)."""
        limit = self.settings.session_timeout
        if limit is None or self.timer is not None:
            return
        interrupt_as_ctrl_c(self.config)

        def expire() -> None:
            self.timed_out = True
            os.kill(os.getpid(), signal.SIGINT)

        left = max(0.0, limit - (time.time() - self.started_at))
        self.timer = threading.Timer(left, expire)
        self.timer.daemon = True
        self.timer.start()

    def _hold_output_dir(self) -> None:
        """Hold ``--eval-output-dir`` for this session before any run starts: a folder another
        session is using is one usage error (its workers share the hold; see
        :func:`~pytest_plugin_evals.recording.hold_results_folder`)."""
        folder = self.settings.output_dir
        option = self.config.option
        if folder is None or getattr(option, "setupplan", False):
            return
        from pytest_plugin_evals.recording import (
            FolderBusy,
            hold_results_folder,
            wait_for_claims,
        )

        try:
            hold_results_folder(folder, session_tag(self.config))
            wait_for_claims(folder)  # a process stuck claiming it is said now, not per run
        except FolderBusy as exc:
            raise pytest.UsageError(
                f"--eval-output-dir {exc}; wait for it to end, or give this session another "
                "--eval-output-dir"
            ) from None

    def _say_credentials(self) -> None:
        """Say at the start, in one line, when claude runs would have no credential."""
        specs = [spec for _, spec in self.settings.agents] or [self.settings.agent]
        if "claude" not in specs:
            return
        from pytest_plugin_evals.agents.claude.auth import credential_notice

        notice = credential_notice(os.environ, Path.home())
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if notice is not None and reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(notice, yellow=True)

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.expect(item.nodeid for item in session.items)

    @pytest.hookimpl
    def pytest_keyboard_interrupt(self) -> None:
        """Ctrl-C or SIGTERM: no process of the session starts another run (an xdist worker
        goes on with the items it was sent until it is shut down)."""
        stop = self.config.stash.get(stop_key, None)
        if stop is not None:
            stop.put(INTERRUPTED, "the session was interrupted")

    # -- reports ----------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._take(report)
        if report.failed and not hasattr(report, "wasxfail"):
            self.failures += 1  # as pytest counts them for --maxfail

    def _take(self, report: pytest.TestReport) -> None:
        """Keep the report's record; under a threshold below 1, decide a case whose last run
        has reported."""
        record = record_of(report)
        if record is None:
            return
        self.records[report.nodeid] = record
        from pytest_plugin_evals.records import LoadErrorRecord

        if isinstance(record, LoadErrorRecord) or not (
            record.case.source == "trigger_eval"
            or self.settings.runs_are_measurements(record.case.name)
        ):
            return
        done = report.when == "call" or (report.when == "setup" and not report.passed)
        unit = case_unit(report.nodeid)
        if not done or unit is None or unit not in self.expected:
            return
        finished = self.finished.setdefault(unit, set())
        finished.add(report.nodeid)
        if len(finished) == self.expected[unit]:
            self._decide_case(unit, report)

    def _decide_case(self, unit: tuple[str, str | None], report: pytest.TestReport) -> None:
        """The case's last run has reported: a case that does not pass fails that report, with
        the core's sentence (``reporting.result.decide_case``, the decision its aggregates and
        the session's gate read too). Applied here, on the controller, because only it sees
        every run of a case: under xdist a case's runs land on different workers, and a
        worker's ``pytest_runtest_makereport`` knows only its own
        (docs/explanation/architecture.md)."""
        if report.failed or self.settings.aa:  # an A/A session gates on its wiring only
            return
        from pytest_plugin_evals.reporting.result import decide_case
        from pytest_plugin_evals.reporting.terminal import plain

        records = [self.records[nodeid] for nodeid in self.finished[unit]]
        verdict = decide_case(records, self._rules(), agent=unit[1])
        if verdict.passed is False:
            report.outcome = "failed"
            report.longrepr = plain(verdict.why)  # the case's name comes from its suite

    # -- the end ----------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.expected or self.records:
            from pytest_plugin_evals.util.process import SESSION_TAG, kill_tagged

            # Nothing a run started outlives the session (a worker stopped mid-run included).
            kill_tagged(SESSION_TAG, session_tag(self.config))
        plan = self._shard_plan()
        # Interrupted before the first run reported: the document says so all the same.
        cut_short = bool(self.expected) and exitstatus == pytest.ExitCode.INTERRUPTED
        if not self.records and not cut_short and (plan is None or plan.cases_of(plan.index)):
            return  # (a shard none of the selected cases fell to still writes its document)
        result = self._summarize(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)
        from pytest_plugin_evals.engine.controller import settle as gates_of
        from pytest_plugin_evals.plugin.unselected import not_selected

        unselected = not_selected(self.config)
        if unselected:
            result = replace(result, suite=replace(result.suite, not_selected=unselected))
        earlier = self.config.stash.get(earlier_key, None)
        if earlier is not None:
            result = earlier.compared(result)
        if plan is not None:
            result = replace(result, shard=plan)
        self.result = result
        self.config.stash[result_key] = result
        self.results_dir = self._results_dir()
        settle(session, gates_of(result, self.session_rules()).gates)

    def _summarize(self, *, interrupted: bool) -> SessionResult:
        """The session's result from its records and facts (the engine says what did not
        start, why the result is partial and the ablation that ran)."""
        # The engine's modules by their full names (a package's attribute could be a module
        # pytester's in-process sessions have since taken out of sys.modules).
        from pytest_plugin_evals.engine.controller import ablation, not_started, partial_reason
        from pytest_plugin_evals.plugin.limiter import session_wait_seconds
        from pytest_plugin_evals.records.prompts import with_prompts
        from pytest_plugin_evals.reporting.result import SessionFacts, summarize

        records = with_prompts(list(self.records.values()))
        unstarted = not_started(self.expected, self.records)
        maxfail = int(getattr(self.config.option, "maxfail", 0) or 0)
        why_partial = partial_reason(
            records,
            interrupted=interrupted,
            unfinished=bool(unstarted),
            maxfail_reached=bool(maxfail) and self.failures >= maxfail,
        )
        facts = SessionFacts(
            started_at=self.started_iso,
            duration_seconds=round(time.time() - self.started_at, 3),
            ablation=ablation(records, self.settings.ablation),
            concurrency=int(getattr(self.config.option, "numprocesses", 0) or 0) or 1,
            agent=self.settings.agent,
            agents=self.settings.agents,
            root=str(self.suite_root()),
            case_filter=self.settings.case_glob,
            tag_filters=self.settings.tags,
            baseline_plugins=self._baseline_plugins(),
            rate_limit_wait_seconds=session_wait_seconds(self.config),
            second_judge=self.settings.judge_second,
            labels=self.settings.labels,
            aa=self.settings.aa,
        )
        return summarize(
            records,
            facts,
            self._rules(),
            partial_reason=why_partial,
            not_started=unstarted,
            sequential=self._sequential(),
        )

    def session_rules(self) -> SessionRules:
        """What the engine's gates and notices read of the session's settings."""
        from pytest_plugin_evals.engine.controller import SessionRules

        timeout = self.settings.session_timeout if self.timed_out else None
        named = {name: getattr(self.settings, name) for name in _RULES_SETTINGS}
        return SessionRules(scoring=self._rules(), timed_out=timeout, **named)

    def _rules(self) -> ScoringRules:
        """How the session's cases become verdicts, from its settings."""
        from pytest_plugin_evals.scoring import ScoringRules

        settings = self.settings
        return ScoringRules(
            threshold=settings.threshold,
            reducer=settings.reducer,
            case_reducers=settings.case_reducers,
            margin=settings.margin,
        )

    def _sequential(self) -> dict[tuple[str, str | None], Any] | None:
        """Under ``--eval-runs auto``: each case's rounds and why it stopped."""
        if self.settings.runs_auto is None:
            return None
        from pytest_plugin_evals.plugin.rounds import scheduler_key
        from pytest_plugin_evals.stats import CaseStop

        scheduler = self.config.stash.get(scheduler_key, None)
        stops = scheduler.stops() if scheduler is not None else {}
        return {key: CaseStop(n, most, stop) for key, (n, most, stop) in stops.items()}

    def _baseline_plugins(self) -> tuple[BaselinePlugin, ...]:
        """What ``--eval-baseline-plugin`` resolved to, in whichever process resolved it."""
        if self.settings.baseline_plugin is None:
            return ()
        from pytest_plugin_evals.suites.baseline import FOLDER, resolved

        return resolved(self.config.stash[shared_key] / FOLDER)

    def suite_root(self) -> Path:
        from pytest_plugin_evals.records import LoadErrorRecord

        root = common_suite_root(
            r.suite_root if isinstance(r, LoadErrorRecord) else r.case.suite_root
            for r in self.records.values()
        )
        if root is None:
            chosen = self._chosen()  # runs started, none reported
            if chosen is not None:
                return chosen[1]
            plan = self._shard_plan()  # a shard none of the selected cases fell to
            root = Path(plan.root) if plan is not None and plan.root else None
        return root if root is not None else Path(self.config.rootpath)

    def _chosen(self) -> tuple[Path, Path] | None:
        """The results folder and suite root the session's runs chose, if a run started."""
        from pytest_plugin_evals.recording import chosen_folders

        return chosen_folders(self.config.stash[shared_key])

    def _shard_plan(self) -> ShardPlan | None:
        """How the selected cases were split (``--eval-shard``), if they were."""
        if self.settings.shard is None:
            return None
        from pytest_plugin_evals.plugin.sharding import shard_plan

        return shard_plan(self.config)

    def _results_dir(self) -> Path:
        """The session's one results folder: where its runs were recorded (every process
        chose the same one, from the same selected items), else where they would have been."""
        from pytest_plugin_evals.plugin.runs import maker_key
        from pytest_plugin_evals.records import RunRecord

        maker = self.config.stash.get(maker_key, None)
        if maker is not None and maker.results is not None:
            return maker.results
        for record in self.records.values():
            if isinstance(record, RunRecord) and record.result.trace_path:
                return Path(record.result.trace_path).parents[3]  # runs/<case>/<arm-n>/trace
        chosen = self._chosen()
        if chosen is not None:
            return chosen[0]
        return results_dir(self.settings, self.suite_root(), self.stamp)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The table, then the engine's notices (``engine.controller.summary_notices``)."""
        if self.result is None:
            return
        from pytest_plugin_evals.engine.controller import summary_notices
        from pytest_plugin_evals.reporting.terminal import plain, summary_lines

        tr = terminalreporter
        tr.write_sep("=", "plugin evals")
        shown = [str(p) for _, p in self.paths]
        for line in summary_lines(self.result, report_paths=shown):
            tr.write_line(plain(line))  # case names and paths are the agent's too
        said = summary_notices(
            self.result, self.records.values(), self.session_rules(), self._said()
        )
        for notice in said:
            tr.write_line(plain(notice.text), **_MARKUP.get(notice.kind, {}))

    def _said(self) -> Said:
        """What the shell found for the summary: the other rooms' and plugins' lines."""
        from pytest_plugin_evals.engine.controller import Said
        from pytest_plugin_evals.mocks.recordings import recordings_notice
        from pytest_plugin_evals.suites.manifest import no_plugin_line

        assert self.result is not None
        shard = None if self.result.shard is None else shard_line(self.result.shard)
        earlier = self.config.stash.get(earlier_key, None)
        replayed = self.config.pluginmanager.get_plugin("plugin-evals-replay-last")
        folder = self.results_dir
        return Said(
            suite_root=self.suite_root(),
            results_dir=folder,
            no_plugin=no_plugin_line(self.suite_root()),
            shard=shard,
            recordings=None if folder is None else recordings_notice(folder / "mock-recordings"),
            compare=() if earlier is None else tuple(earlier.notices),
            replay=() if replayed is None else tuple(replayed.notices),
            write_error=self.write_error,
        )


#: How the terminal shows each kind of notice (``engine.notices``).
_MARKUP: dict[str, dict[str, bool]] = {"warning": {"yellow": True}, "failure": {"red": True}}


def settle(session: pytest.Session, gates: Iterable[Gate | None]) -> None:
    """The one place the gates (``engine.gates``) become the session's exit status."""
    from pytest_plugin_evals.engine.gates import exit_status

    session.exitstatus = exit_status(session.exitstatus, gates)
