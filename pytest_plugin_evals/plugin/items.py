"""The items: one run of one case in one arm, and a case file that could not be loaded.

Each item reports one typed record (see :mod:`pytest_plugin_evals.records`) on its test report,
so the controller's session reads the same thing with and without xdist.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.engine.nodeids import marker_tags, run_name, run_title
from pytest_plugin_evals.model import Arm, Case, LoadError, PluginInfo, RunResult
from pytest_plugin_evals.plugin.collection import plugin_folder
from pytest_plugin_evals.records import (
    RECORD_PROPERTY,
    CaseInfo,
    LoadErrorRecord,
    Record,
    RunRecord,
    SkippedRun,
    encode,
)
from pytest_plugin_evals.records.prompts import carried

if TYPE_CHECKING:
    from pytest_plugin_evals.mocks.discover import MockPlan
    from pytest_plugin_evals.runner import RunOutcome, RunTarget


class EvalFailure(Exception):
    """A with-arm (or single-arm) run that did not pass its scored graders."""


def _run_eval(eval_run: RunOutcome, eval_settings: Any, request: Any) -> None:
    """The test function of every eval item: the run was made in setup (``eval_run``); whether
    it fails the item is ``reporting.failures.item_failure``'s to say."""
    __tracebackhide__ = True
    from pytest_plugin_evals.reporting.failures import item_failure

    case = request.node.case
    measured = eval_settings.runs_are_measurements(case.name)
    failure = item_failure(eval_run.result, case.source, measured=measured)
    if failure is not None:
        raise EvalFailure(failure)


#: session: the node id of each case's first selected run (by the case's id).
_first_runs_key: pytest.StashKey[dict[int, str]] = pytest.StashKey()


def report(node: pytest.Item, record: Record, shown: Iterable[tuple[str, str]] = ()) -> None:
    """Put ``record`` on the item's report, and the properties ``shown`` beside it (replacing
    those reported earlier)."""
    properties = [(RECORD_PROPERTY, encode(record)), *shown]
    names = {name for name, _ in properties}
    node.user_properties[:] = [p for p in node.user_properties if p[0] not in names]
    node.user_properties.extend(properties)


def as_parsed(node: pytest.Item) -> None:
    """Give ``node`` the structured node id that pytest (>= 9.2: path, names and the ``[...]``
    parameters) parses back from the cache (``--lf``, ``--ff``, ``--sw``, ``--nf``): kept as the
    name ``plants[1]``, it would never equal the id read back, name ``plants`` and parameters
    ``1``. Older pytest keeps strings, equal already. (A ``pytest.Function`` makes its own id,
    from its name and a callspec only pytest's parametrization makes; a ``pytest.Item`` is given
    its id, as :class:`LoadErrorItem` is.)"""
    current = getattr(node, "_id", None)
    parse = getattr(type(current), "parse", None)
    if parse is not None:
        parsed = parse(str(current))
        if parsed != current:
            node._id = parsed


class EvalItem(pytest.Function):
    """One run of one case in one arm."""

    case: Case
    arm: Arm
    run: int
    plugin: PluginInfo | None
    two_arm: bool
    mock_plan: MockPlan | None = None
    runs_per_case: int | None = None
    #: The plugin the baseline arm loads, in an A/B (``--eval-baseline-plugin``).
    baseline: PluginInfo | None = None
    #: The label of the agent this item runs on, in a session of several (``--eval-agents``).
    agent_label: str | None = None

    @classmethod
    def create(
        cls,
        parent: pytest.Collector,
        case: Case,
        arm: Arm,
        run: int,
        plugin: PluginInfo | None,
        two_arm: bool,
        agent: str | None = None,
    ) -> EvalItem:
        name = run_name(case.name, arm, run, agent)
        item = cls.from_parent(parent, name=name, callobj=_run_eval)
        as_parsed(item)
        item.case, item.arm, item.run, item.plugin, item.two_arm = case, arm, run, plugin, two_arm
        item.agent_label = agent
        on = {} if agent is None else {"agent": agent}
        item.add_marker(pytest.mark.evals(case=case.name, arm=arm, run=run, **on))
        for tag in marker_tags(case.tags):
            item.add_marker(tag)
        return item

    @property
    def plugin_dir(self) -> Path | None:
        """The folder of the plugin this item's arm loads (the runner gives the without arm
        none)."""
        loaded = self.baseline if self.arm == "baseline" else self.plugin
        return plugin_folder(self.config, loaded) if loaded is not None else None

    def run_target(self) -> RunTarget:
        """The run this item makes, as the runner takes it."""
        from pytest_plugin_evals.runner import RunTarget  # the runner loads when a run is made

        return RunTarget(
            self.case,
            self.arm,
            self.run,
            self.plugin_dir,
            # Indicators (graders that only show a plugin fired) are for a second arm without
            # a plugin; in an A/B both arms load one, and every grader is scored in both.
            two_arm=self.two_arm and self.baseline is None,
            mock_plan=self.mock_plan,
            agent_label=self.agent_label,
        )

    @property
    def case_info(self) -> CaseInfo:
        """The case as its record carries it (:func:`~.records.prompts.carried`)."""
        return carried(CaseInfo.of(self.case, self.runs_per_case), self._first_run)

    def _first_run(self) -> bool:
        """Whether this is its case's first selected run."""
        if _first_runs_key not in self.session.stash:
            runs = reversed([i for i in self.session.items if isinstance(i, EvalItem)])
            self.session.stash[_first_runs_key] = {id(i.case): i.nodeid for i in runs}
        return self.session.stash[_first_runs_key].get(id(self.case), self.nodeid) == self.nodeid

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = (self.case.line - 1) if self.case.line else 0
        return self.case.path, line, run_title(self.case.name, self.arm, self.run, self.agent_label)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, EvalFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def record_skip(self, reason: str) -> None:
        """Report a run that was never started (it is counted, not listed)."""
        report(
            self,
            SkippedRun(
                self.nodeid,
                self.case_info,
                self.plugin,
                self.two_arm,
                self.arm,
                self.run,
                reason,
                self.agent_label,
            ),
        )

    def record_run(self, result: RunResult) -> None:
        """Report the run that was made, and what a CI's test view shows of it (JUnit
        properties beside the record: the arm, the run, the score, the failed graders)."""
        from pytest_plugin_evals.reporting.failures import junit_answer, junit_properties

        info, agent = self.case_info, self.agent_label
        record = RunRecord(self.nodeid, info, self.plugin, self.two_arm, result, agent)
        report(self, record, junit_properties(result))
        if junit_writes_stdout(self.config):
            self.add_report_section("call", "stdout", junit_answer(result))


def junit_writes_stdout(config: pytest.Config) -> bool:
    """Whether pytest's JUnit file will hold the tests' output: ``--junitxml`` with
    ``junit_logging`` set to ``system-out``, ``out-err`` or ``all`` (pytest writes no
    ``system-out`` otherwise, and there is no other public way into it)."""
    if not getattr(config.option, "xmlpath", None):
        return False
    try:
        logging = str(config.getini("junit_logging"))
    except ValueError:  # the junitxml plugin is disabled
        return False
    return logging in ("system-out", "out-err", "all")


class LoadErrorItem(pytest.Item):
    """A case file that could not be loaded: an error with one line, while the rest runs."""

    def __init__(self, *, error: LoadError, suite_root: Path, **kwargs: Any) -> None:
        # Its name is a case's, which may hold ``[`` or ``::``: given as the node id, pytest
        # keeps it as it parses it back from the cache (see :func:`as_parsed`).
        kwargs.setdefault("nodeid", f"{kwargs['parent'].nodeid}::{kwargs['name']}")
        super().__init__(**kwargs)
        self.error = error
        self.suite_root = suite_root

    def setup(self) -> None:
        report(self, LoadErrorRecord.of(self.nodeid, self.error, self.suite_root))
        pytest.fail(self.error.render(Path(self.config.rootpath)), pytrace=False)

    def runtest(self) -> None:  # pragma: no cover - setup always raises
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, LoadError):
            return excinfo.value.render(Path(self.config.rootpath))
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = (self.error.line - 1) if self.error.line else 0
        return self.error.path, line, f"could not load {self.error.path.name}"
