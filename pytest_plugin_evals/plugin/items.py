"""The items: one run of one case in one arm, and a case file that could not be loaded.

Each item reports one typed record (see :mod:`pytest_plugin_evals.records`) on its test report,
so the controller's session reads the same thing with and without xdist.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.engine.nodeids import marker_tags
from pytest_plugin_evals.model import (
    ANSWER_LIMIT,
    SECOND_ARMS,
    Arm,
    Case,
    LoadError,
    PluginInfo,
    RunResult,
)
from pytest_plugin_evals.plugin.collection import plugin_folder
from pytest_plugin_evals.plugin.keys import RECORD_PROPERTY
from pytest_plugin_evals.records import (
    CaseInfo,
    LoadErrorRecord,
    Record,
    RunRecord,
    SkippedRun,
    encode,
)
from pytest_plugin_evals.records.prompts import PROMPT_ELSEWHERE, PROMPT_SHARED_OVER

if TYPE_CHECKING:
    from pytest_plugin_evals.mocks.discover import MockPlan
    from pytest_plugin_evals.runner import RunOutcome, RunTarget


class EvalFailure(Exception):
    """A with-arm (or single-arm) run that did not pass its scored graders."""


def _run_eval(eval_run: RunOutcome, eval_settings: Any, request: Any) -> None:
    """The test function of every eval item: the run was made in setup (``eval_run``).

    A with-arm (or single-arm) run that is below a perfect score fails the item when the
    threshold is 1 (the default): then a case passes exactly when each of its runs does. Under
    a lower threshold a run is a measurement like a without-arm run, and the case's verdict is
    reported by the session on the last of its runs (see docs/explanation/arms-and-scoring.md).
    """
    __tracebackhide__ = True
    result = eval_run.result
    case = request.node.case
    if (
        result.arm in SECOND_ARMS
        or case.source == "trigger_eval"  # a query is decided on its last run (its rate)
        or eval_settings.runs_are_measurements(case.name)
    ):
        return
    # A run that ended with an error (a timeout, a non-zero exit) is graded on what it
    # produced, as the document records it: the item passes when its scored graders do.
    if not result.passed:
        from pytest_plugin_evals.reporting.failures import failure_message

        raise EvalFailure(failure_message(result))


#: session: the node id of each case's first selected run (by the case's id).
_first_runs_key: pytest.StashKey[dict[int, str]] = pytest.StashKey()

#: The most characters a readable JUnit property holds.
PROPERTY_LIMIT = 500


def plain(text: str, *, newlines: bool = False) -> str:
    from pytest_plugin_evals.reporting.terminal import plain as terminal_plain

    return terminal_plain(text, newlines=newlines)


def report_record(node: pytest.Item, record: Record) -> None:
    """Put ``record`` on the item's report (replacing one reported earlier)."""
    node.user_properties[:] = [p for p in node.user_properties if p[0] != RECORD_PROPERTY]
    node.user_properties.append((RECORD_PROPERTY, encode(record)))


def as_parsed(node: pytest.Item) -> None:
    """Give ``node`` the structured node id that pytest parses back from its own printed form.

    pytest 9.2 keeps a node id as parts: path, names and parameters, the ``[...]`` of a
    parametrized test. An item named ``plants[1]`` that is not parametrized would be kept as
    the name ``plants[1]``, while the id read back from the cache (``--lf``, ``--ff``, ``--sw``,
    ``--nf``) parses as the name ``plants`` with the parameters ``1``: the two never compare
    equal, so every eval item would look new and none failed before. Older pytest keeps
    strings, which compare equal already. (A ``pytest.Function`` makes its node id itself,
    from its name and a callspec only pytest's own parametrization makes; a ``pytest.Item``
    is given its id instead, as :class:`LoadErrorItem` is.)
    """
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
        label = f"{arm}-{run}" if arm != "single" else f"{run}"
        if agent is not None:
            label = f"{agent}-{label}"
        item = cls.from_parent(parent, name=f"{case.name}[{label}]", callobj=_run_eval)
        as_parsed(item)
        item.case, item.arm, item.run, item.plugin, item.two_arm = case, arm, run, plugin, two_arm
        item.agent_label = agent
        if agent is None:
            item.add_marker(pytest.mark.evals(case=case.name, arm=arm, run=run))
        else:
            item.add_marker(pytest.mark.evals(case=case.name, arm=arm, run=run, agent=agent))
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
        """The case as its record carries it: the prompt only in the record of the case's
        first selected run (a 5 MB prompt is then once in JUnit, not once per run; the
        controller gives it back to the others, see :func:`with_prompts`)."""
        info = CaseInfo.of(self.case, self.runs_per_case)
        if len(info.prompt) < PROMPT_SHARED_OVER:
            return info
        firsts = self.session.stash.setdefault(_first_runs_key, {})
        if not firsts:
            for item in reversed(self.session.items):
                if isinstance(item, EvalItem):
                    firsts[id(item.case)] = item.nodeid
        if firsts.get(id(self.case), self.nodeid) == self.nodeid:
            return info
        return replace(info, prompt=PROMPT_ELSEWHERE)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = (self.case.line - 1) if self.case.line else 0
        on = f" on {self.agent_label}" if self.agent_label is not None else ""
        return self.case.path, line, f"eval {self.case.name} [{self.arm}] run {self.run}{on}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, EvalFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def record_skip(self, reason: str) -> None:
        """Report a run that was never started (it is counted, not listed)."""
        report_record(
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
        report_record(
            self,
            RunRecord(
                self.nodeid, self.case_info, self.plugin, self.two_arm, result, self.agent_label
            ),
        )
        shown = [("eval_arm", result.arm), ("eval_run", str(result.run))]
        if result.reused_from is not None:
            shown.append(("eval_reused_from", plain(result.reused_from)[:PROPERTY_LIMIT]))
        if result.infra_error:
            shown.append(("eval_infra_error", result.infra_error))
        elif result.graded:
            shown.append(("eval_score", f"{result.score:.2f}"))
        failed = [v.name for v in result.verdicts if v.passed is False and v.scored]
        if failed:
            shown.append(("eval_failed_graders", plain(", ".join(failed))[:PROPERTY_LIMIT]))
        names = {name for name, _ in shown}
        self.user_properties[:] = [p for p in self.user_properties if p[0] not in names]
        self.user_properties.extend(shown)
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


def junit_answer(result: RunResult) -> str:
    """The run's answer as ``system-out`` gets it (as the run's captured output): as the session
    keeps it (its first :data:`~pytest_plugin_evals.model.ANSWER_LIMIT` characters), escape
    sequences and control characters removed (pytest escapes only what XML cannot hold, and a
    CI's test view may print the text as it is)."""
    answer = result.answer
    cut = len(answer) > ANSWER_LIMIT or result.answer_truncated
    total = f"{len(answer):,}{'+' if cut else ''}"
    text = plain(answer[:ANSWER_LIMIT], newlines=True)
    if cut:
        text += f"\n[… cut at {ANSWER_LIMIT:,} characters]"
    return f"the agent's answer ({total} characters):\n{text}\n"


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
        record = LoadErrorRecord(
            nodeid=self.nodeid,
            path=str(self.error.path),
            line=self.error.line,
            message=self.error.message,
            suite_root=str(self.suite_root),
        )
        report_record(self, record)
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
