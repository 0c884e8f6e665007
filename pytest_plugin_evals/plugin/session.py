"""The controller's session in pytest's terms, registered only on the controller (never on an
xdist worker): the engine's :class:`~pytest_plugin_evals.engine.session.Session` is given the
selected node ids and each test report's record (``user_properties``, which xdist replays on
the controller, so the numbers are the same with and without ``-n``), and its answers become
pytest's: a case's last report failed, the exit status (in one place, :func:`settle`), the
session's files (``engine.outputs``) and the lines under the table.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.engine.session import Ending, Session
from pytest_plugin_evals.plugin.compare import earlier_key
from pytest_plugin_evals.plugin.interrupts import WHY, terminate_as_interrupt
from pytest_plugin_evals.plugin.keys import result_key, session_tag, shared_key, stop_key
from pytest_plugin_evals.plugin.loaded import record_of
from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.util.stop_sign import INTERRUPTED
from pytest_plugin_evals.util.tempdirs import sweep_stale_sessions

# Imported where used, on purpose: the records, the reports, the run-making and the modules of
# one option. This module is loaded on the controller of every pytest session with evals, and
# of every pytest-xdist session (see docs/explanation/architecture.md).

if TYPE_CHECKING:
    from pytest_plugin_evals.engine.gates import Gate
    from pytest_plugin_evals.shards import ShardPlan

#: config (controller only): the session that gathers records, scores and gates.
session_key: pytest.StashKey[EvalSession] = pytest.StashKey()


class EvalSession(Session):
    def __init__(self, config: pytest.Config, settings: EvalSettings, stamp: str) -> None:
        super().__init__(settings, stamp)
        self.config = config
        #: ``--eval-session-timeout``'s timer.
        self.timer: Any = None

    # -- what was selected ------------------------------------------------------------------

    def expect(self, nodeids: Iterable[str]) -> bool:
        """Count the selected run items of each case (called once collection is done); then,
        but under ``--collect-only``, hold ``--eval-output-dir``, say that claude runs would
        have no credential, and start ``--eval-session-timeout``'s timer."""
        if not super().expect(nodeids):
            return False
        terminate_as_interrupt(self.config)  # the document is written on SIGTERM too
        if self.config.option.collectonly:
            return True
        plan_only = getattr(self.config.option, "setupplan", False)
        problem = None if plan_only else self.hold_output_dir(session_tag(self.config))
        if problem is not None:
            raise pytest.UsageError(problem)
        line = self.credential_line(os.environ, Path.home())
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if line is not None and reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(line, yellow=True)
        self._start_timeout()
        sweep_stale_sessions()
        return True

    def _start_timeout(self) -> None:
        """``--eval-session-timeout``: the session ends as on Ctrl-C once it is past."""
        left = self.timeout_left()
        if left is None or self.timer is not None:
            return
        terminate_as_interrupt(self.config, ignored_too=True)

        def expire() -> None:
            self.timed_out = True
            os.kill(os.getpid(), signal.SIGINT)

        self.timer = threading.Timer(left, expire)
        self.timer.daemon = True
        self.timer.start()

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.expect(item.nodeid for item in session.items)

    @pytest.hookimpl
    def pytest_keyboard_interrupt(self) -> None:
        """Ctrl-C or SIGTERM: no process of the session starts another run (an xdist worker
        goes on with the items it was sent until it is shut down)."""
        stop = self.config.stash.get(stop_key, None)
        if stop is not None:
            stop.put(INTERRUPTED, WHY)

    # -- reports ----------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep the report's record; the last report of a case that does not pass fails, with
        the engine's sentence (:meth:`Session.take`). Applied here, on the controller, because
        only it sees every run of a case: under xdist a case's runs land on different workers,
        and a worker's ``pytest_runtest_makereport`` knows only its own
        (docs/explanation/architecture.md)."""
        why = self.take(report.nodeid, record_of(report), report.when, report.outcome)
        if why is not None:
            report.outcome = "failed"
            report.longrepr = why  # made plain by the engine (the case name is the suite's)
        if report.failed and not hasattr(report, "wasxfail"):
            self.failures += 1  # as pytest counts them for --maxfail

    # -- the end ----------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """The result, the exit status, the files written and the lines to say."""
        if self.timer is not None:
            self.timer.cancel()
        if self.expected or self.records:
            from pytest_plugin_evals.util.process import SESSION_TAG, kill_tagged

            # Nothing a run started outlives the session (a worker stopped mid-run included).
            kill_tagged(SESSION_TAG, session_tag(self.config))
        interrupted, plan = exitstatus == pytest.ExitCode.INTERRUPTED, None
        if self.settings.shard is not None:  # how the selected cases were split
            from pytest_plugin_evals.plugin.sharding import shard_plan

            plan = shard_plan(self.config)
        if not self.ends_with_result(interrupted, plan):
            return
        end = self._ending(interrupted, plan)
        earlier = self.config.stash.get(earlier_key, None)
        gates = self.conclude(end, None if earlier is None else earlier.compared)
        assert self.result is not None
        self.config.stash[result_key] = self.result
        settle(session, gates)
        self._write(session, end)

    def _ending(self, interrupted: bool, plan: ShardPlan | None) -> Ending:
        """What pytest and the other hooks know at the session's end, as plain values."""
        config, settings = self.config, self.settings
        from pytest_plugin_evals.plugin.limiter import session_wait_seconds
        from pytest_plugin_evals.plugin.runs import maker_key
        from pytest_plugin_evals.plugin.unselected import not_selected
        from pytest_plugin_evals.recording import chosen_folders
        from pytest_plugin_evals.suites.baseline import FOLDER, resolved

        shared = config.stash[shared_key]
        maker = config.stash.get(maker_key, None)
        baseline = () if settings.baseline_plugin is None else resolved(shared / FOLDER)
        return Ending(
            interrupted=interrupted,
            maxfail=int(getattr(config.option, "maxfail", 0) or 0),
            concurrency=int(getattr(config.option, "numprocesses", 0) or 0) or 1,
            rootpath=Path(config.rootpath),
            chosen=chosen_folders(shared),
            made_in=None if maker is None else maker.results,
            shard=plan,
            baseline_plugins=baseline,
            rate_limit_wait_seconds=session_wait_seconds(config),
            sequential=self._stops(),
            not_selected=not_selected(config),
        )

    def _stops(self) -> dict[tuple[str, str | None], Any] | None:
        """Under ``--eval-runs auto``: each case's rounds and why it stopped."""
        if self.settings.runs_auto is None:
            return None
        from pytest_plugin_evals.plugin.rounds import scheduler_key

        scheduler = self.config.stash.get(scheduler_key, None)
        return {} if scheduler is None else scheduler.stops()

    def _write(self, session: pytest.Session, end: Ending) -> None:
        """The session's files and the lines said under the table (:meth:`Session.write`),
        with the lines of the other rooms and plugins."""
        from pytest_plugin_evals.engine.controller import Said
        from pytest_plugin_evals.mocks.recordings import recordings_notice
        from pytest_plugin_evals.suites.manifest import no_plugin_line

        assert self.results_dir is not None
        earlier = self.config.stash.get(earlier_key, None)
        replayed = self.config.pluginmanager.get_plugin("plugin-evals-replay-last")
        root = self.suite_root(end)
        said = Said(
            suite_root=root,
            no_plugin=no_plugin_line(root),
            recordings=recordings_notice(self.results_dir / "mock-recordings"),
            compare=() if earlier is None else tuple(earlier.notices),
            replay=() if replayed is None else tuple(replayed.notices),
        )
        here, status = self.config.invocation_params.dir, int(session.exitstatus)
        self.write(said, here=here, exit_status=status, environ=os.environ)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The table, then the engine's notices (``engine.controller.summary_notices``)."""
        if self.result is None:
            return
        from pytest_plugin_evals.reporting.terminal import plain, summary_lines

        terminalreporter.write_sep("=", "plugin evals")
        for line in summary_lines(self.result, report_paths=self.paths):
            terminalreporter.write_line(plain(line))  # case names and paths are the agent's too
        for notice in self.notices:
            terminalreporter.write_line(plain(notice.text), **_MARKUP.get(notice.kind, {}))


#: How the terminal shows each kind of notice (``engine.notices``).
_MARKUP: dict[str, dict[str, bool]] = {"warning": {"yellow": True}, "failure": {"red": True}}


def settle(session: pytest.Session, gates: Iterable[Gate | None]) -> None:
    """The one place the gates (``engine.gates``) become the session's exit status."""
    from pytest_plugin_evals.engine.gates import exit_status

    session.exitstatus = exit_status(session.exitstatus, gates)
