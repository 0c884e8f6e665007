"""Public fixtures: the agent, a sandbox, soft checks, and the run behind every eval item.

Every fixture here can be overridden by name in a ``conftest.py`` — for instance an
``eval_agent`` fixture returning your own adapter. The modules behind them are imported when a
fixture is first used, so a project without evals pays nothing for them.

The agent the ``eval_agent`` fixture makes is also made once when collection finishes, if eval
items are to run: an agent that cannot be made or started (a ``py:`` module that does not
import, a ``cmd:`` program that is not there, no ``claude`` binary) is one usage error before
any run, not the same error on every item. Nothing is started to find out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from pytest_plugin_evals.plugin.keys import (
    agent_key,
    agents_key,
    judge_key,
    made_ahead_key,
    outcome_key,
    runs_ahead_key,
    second_judge_key,
    settings_key,
    shared_key,
    soft_checks_key,
)
from pytest_plugin_evals.plugin.loaded import eval_items
from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.settings.agent import (
    agent_problem,
    labelled_agent,
    make_agent,
    share_problem,
    shared_problem,
)
from pytest_plugin_evals.util.inert import mark_inert

if TYPE_CHECKING:
    from pytest_plugin_evals.agents import Agent
    from pytest_plugin_evals.graders.assertions import SoftChecks
    from pytest_plugin_evals.judges import Judge
    from pytest_plugin_evals.plugin.runs import RunMaker
    from pytest_plugin_evals.runner import RunOutcome
    from pytest_plugin_evals.sandbox import Sandbox


@pytest.fixture(scope="session")
def eval_settings(pytestconfig: pytest.Config) -> EvalSettings:
    """The session's evaluation settings (``--eval-*`` options and ini keys)."""
    return pytestconfig.stash[settings_key]


@pytest.fixture(scope="session")
def eval_agent(eval_settings: EvalSettings, pytestconfig: pytest.Config) -> Agent:
    """The agent under test, as ``--eval-agent`` names it (None under ``--eval-agents``: each
    eval item then runs on the agent its label names, made once per label by
    :func:`pytest_plugin_evals.settings.agent.labelled_agent`)."""
    if eval_settings.agents:
        return cast("Agent", None)
    agent = _made(lambda: make_agent(eval_settings))
    pytestconfig.stash[agent_key] = agent
    return agent


def _made(make: Callable[[], Agent]) -> Agent:
    """The agent ``make`` makes, or one line failing the item when it cannot be made."""
    from pytest_plugin_evals.agents import AgentError

    try:
        return make()
    except AgentError as exc:
        problem = str(exc)
    # Outside the except block, so the report is the one line, not a chain of exceptions.
    pytest.fail(problem, pytrace=False)


# -- the agent, made once before any run --------------------------------------------------------


def _uses_our_agent(items: Sequence[pytest.Item]) -> bool:
    """Whether eval items are to run with the ``eval_agent`` fixture of this module (one that
    a ``conftest.py`` overrides makes its own agent, and is not checked)."""
    for item in eval_items(items):
        info: Any = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.get("eval_agent") if info is not None else None
        func = getattr(defs[-1], "func", None) if defs else None
        if getattr(func, "__module__", None) == __name__:
            return True
    return False


@pytest.hookimpl(tryfirst=True)  # a worker writes the problem before xdist reports its items
def pytest_collection_finish(session: pytest.Session) -> None:
    """Make the agent once when eval items are to run (not under ``--collect-only`` or
    ``--setup-plan``, which run nothing): a problem is one usage error, before any run."""
    config = session.config
    option = config.option
    if getattr(option, "collectonly", False) or getattr(option, "setupplan", False):
        return
    settings = config.stash[settings_key]
    # Each selected agent of --eval-agents is checked; else the agent, unless a conftest.py's
    # eval_agent makes its own.
    if not settings.agents and not _uses_our_agent(session.items):
        return
    problem = agent_problem(settings, (getattr(i, "agent_label", None) for i in session.items))
    if problem is None:
        return
    if not hasattr(config, "workerinput"):
        raise pytest.UsageError(problem)
    # An xdist worker: the controller raises it when this worker's collection arrives.
    share_problem(config.stash[shared_key], problem)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """On the xdist controller: a worker could not make the agent (see above)."""
    shared = node.config.stash.get(shared_key, None)
    problem = shared_problem(shared) if shared is not None else None
    if problem is not None:
        raise pytest.UsageError(problem)


@pytest.fixture
def eval_sandbox(tmp_path: Path) -> Sandbox:
    """A fresh isolated run folder (``home/``, ``home/cwd``, ``config/``, ``tmp/``, ``out/``)."""
    from pytest_plugin_evals.sandbox import Sandbox

    return Sandbox.create(tmp_path / "sandbox")


@pytest.fixture
def eval_checks(request: pytest.FixtureRequest) -> SoftChecks:
    """Soft checks: record many verdicts, fail once at the end of the test listing them all."""
    from pytest_plugin_evals.graders.assertions import SoftChecks

    checks = SoftChecks()
    request.node.stash[soft_checks_key] = checks
    return checks


@pytest.fixture(scope="session")
def eval_judge(eval_settings: EvalSettings, pytestconfig: pytest.Config) -> Iterator[Judge | None]:
    """The judge of llm, baseline and meetsCriteria graders (``--eval-judge``), or None under
    ``--eval-no-judge``. Built the first time a case with such a grader runs."""
    from pytest_plugin_evals.judges import JudgeSetupError
    from pytest_plugin_evals.making import close_judges, session_judges

    try:
        judge, second = session_judges(eval_settings)
    except JudgeSetupError as exc:
        pytest.fail(str(exc), pytrace=False)
    pytestconfig.stash[judge_key], pytestconfig.stash[second_judge_key] = judge, second
    yield judge
    del pytestconfig.stash[judge_key], pytestconfig.stash[second_judge_key]
    close_judges(judge, second)


@pytest.fixture(scope="session")
def _eval_run_maker(
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunMaker]:
    """This process's run maker (runs get their folders under pytest's temporary folder), and
    its runs made ahead of their items' setup (stopped at the end if no item took them)."""
    from pytest_plugin_evals.plugin.runs import RunMaker, maker_key

    root = tmp_path_factory.mktemp("runs", numbered=True)
    mark_inert(root)  # every run's folder in it is kept runs, never collected
    maker = RunMaker(pytestconfig, pytestconfig.stash[settings_key], root)
    pytestconfig.stash[maker_key] = maker
    # (Under sequential runs a run is made ahead only once the looks of its case before it
    # have reported: see ``RunMaker.skip``.)
    workers = getattr(pytestconfig, "workerinput", {}).get("workercount", 1)
    ahead = maker.start_ahead(int(workers))
    if ahead is not None:
        pytestconfig.stash[runs_ahead_key] = ahead.in_flight
    yield maker
    if ahead is not None:
        del pytestconfig.stash[runs_ahead_key]
        ahead.close()


@pytest.fixture
def eval_run(
    request: pytest.FixtureRequest, eval_agent: Agent, _eval_run_maker: RunMaker
) -> Iterator[RunOutcome]:
    """Make the run of the requesting eval item (in setup, so a run that cannot be made is an
    error, not a failure) and report it."""
    from pytest_plugin_evals.engine.starts import Skip
    from pytest_plugin_evals.plugin.items import EvalItem
    from pytest_plugin_evals.plugin.runs import upcoming

    item = request.node
    if not isinstance(item, EvalItem):
        raise pytest.UsageError("eval_run is only available to eval items")
    config = item.config
    if getattr(config.option, "setuponly", False) or getattr(config.option, "setupplan", False):
        # --setup-only / --setup-plan show the fixtures: no run is made or started ahead, and
        # nothing is spent (the test function, which would read the run, is not called).
        yield cast("RunOutcome", None)
        return
    label = item.agent_label
    if label is not None:  # --eval-agents: the agent the item's label names
        made = config.stash.setdefault(agents_key, {})
        eval_agent = _made(lambda: labelled_agent(config.stash[settings_key], made, label))
    refusal = _eval_run_maker.refusal(item)
    if refusal is not None:  # the results folder is another session's: no run is made
        pytest.fail(refusal, pytrace=False)
    outcome, item.stash[made_ahead_key] = _eval_run_maker.outcome(
        item,
        eval_agent,
        lambda: request.getfixturevalue("eval_judge"),
        lambda limit: upcoming(item, limit),
    )
    if isinstance(outcome, Skip):
        if outcome.recorded is not None:
            item.record_skip(outcome.recorded)
        pytest.skip(outcome.message)
    result = outcome.result
    item.record_run(result)
    item.stash[outcome_key] = outcome
    if result.infra_error:
        pytest.fail(f"{result.infra_error}: {result.error}", pytrace=False)
    yield outcome
