"""Public fixtures: the agent, a sandbox, soft checks, and the run behind every eval item.

Every fixture here can be overridden by name in a ``conftest.py`` — for instance an
``eval_agent`` fixture returning your own adapter. The modules behind them are imported when a
fixture is first used, so a project without evals pays nothing for them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_plugin_evals.plugin.keys import (
    agent_key,
    judge_key,
    ledger_key,
    maker_key,
    next_item_key,
    outcome_key,
    run_ahead_key,
    settings_key,
    soft_checks_key,
)
from pytest_plugin_evals.plugin.settings import EvalSettings

if TYPE_CHECKING:
    from pytest_plugin_evals.agents import Agent
    from pytest_plugin_evals.graders.assertions import SoftChecks
    from pytest_plugin_evals.judges import Judge
    from pytest_plugin_evals.model import Case
    from pytest_plugin_evals.plugin.runs import RunMaker
    from pytest_plugin_evals.runner import RunOutcome
    from pytest_plugin_evals.sandbox import Sandbox


@pytest.fixture(scope="session")
def eval_settings(pytestconfig: pytest.Config) -> EvalSettings:
    """The session's evaluation settings (``--eval-*`` options and ini keys)."""
    return pytestconfig.stash[settings_key]


@pytest.fixture(scope="session")
def eval_agent(eval_settings: EvalSettings, pytestconfig: pytest.Config) -> Agent:
    """The agent under test, as ``--eval-agent`` names it."""
    from pytest_plugin_evals.agents import AgentError, make_agent

    try:
        agent = make_agent(
            eval_settings.agent,
            claude_bin=eval_settings.claude_bin,
            grants=eval_settings.allow_tools,
            disallow=eval_settings.disallow_tools,
            unconfined_shell=eval_settings.unconfined_shell,
        )
    except AgentError as exc:
        problem = str(exc)
    else:
        pytestconfig.stash[agent_key] = agent
        return agent
    # Outside the except block, so the report is the one line, not a chain of exceptions.
    pytest.fail(problem, pytrace=False)


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
    from pytest_plugin_evals.judges import JudgeSetupError, make_judge

    if eval_settings.no_judge:
        pytestconfig.stash[judge_key] = None
        yield None
        return
    try:
        judge = make_judge(
            eval_settings.judge, eval_settings.judge_model, claude_bin=eval_settings.claude_bin
        )
    except JudgeSetupError as exc:
        if eval_settings.judge_given:
            pytest.fail(str(exc), pytrace=False)
        # The default judge is not available here: paid graders say "no judge configured".
        pytestconfig.stash[judge_key] = None
        yield None
        return
    pytestconfig.stash[judge_key] = judge
    yield judge
    del pytestconfig.stash[judge_key]
    close = getattr(judge, "close", None)
    if callable(close):
        close()


def _judge_for(request: pytest.FixtureRequest, case: Case) -> Judge | None:
    """The session's judge, asked for only by cases that have a paid grader."""
    if not any(spec.paid for spec in case.graders):
        return None
    judge: Judge | None = request.getfixturevalue("eval_judge")
    return judge


@pytest.fixture(scope="session")
def _eval_run_maker(
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunMaker]:
    """This process's run maker (runs get their folders under pytest's temporary folder), and
    its runs made ahead of their items' setup (stopped at the end if no item took them)."""
    from pytest_plugin_evals.plugin.runs import RunAhead, RunMaker

    settings = pytestconfig.stash[settings_key]
    maker = RunMaker(pytestconfig, settings, tmp_path_factory.mktemp("runs", numbered=True))
    pytestconfig.stash[maker_key] = maker
    # Under a cost ceiling every run waits for the spend of the runs before it to be known.
    wanted = settings.run_ahead != "off" and settings.max_cost_usd is None
    ahead = RunAhead(maker, check_cpus=settings.run_ahead == "on") if wanted else None
    if ahead is not None:
        pytestconfig.stash[run_ahead_key] = ahead
    yield maker
    if ahead is not None:
        del pytestconfig.stash[run_ahead_key]
        ahead.close()


@pytest.fixture
def eval_run(
    request: pytest.FixtureRequest, eval_agent: Agent, _eval_run_maker: RunMaker
) -> Iterator[RunOutcome]:
    """Make the run of the requesting eval item (in setup, so a run that cannot be made is an
    error, not a failure) and report it."""
    from pytest_plugin_evals.agents import capabilities_of
    from pytest_plugin_evals.plugin.items import EvalItem

    item = request.node
    if not isinstance(item, EvalItem):
        raise pytest.UsageError("eval_run is only available to eval items")
    config = item.config
    ahead = config.stash.get(run_ahead_key, None)
    started = ahead.take(item) if ahead is not None else None
    nextitem = item.stash.get(next_item_key, None)
    if ahead is not None and isinstance(nextitem, EvalItem):
        ahead.start(nextitem)  # the next item's run goes on while this one's does
    if started is not None:
        outcome = started.result()
    else:
        skip = _eval_run_maker.skip(item)
        if skip is not None:
            if skip.recorded is not None:
                item.record_skip(skip.recorded)
            pytest.skip(skip.message)
        outcome = _eval_run_maker.make(item, eval_agent, _judge_for(request, item.case))
    result = outcome.result
    ledger = config.stash.get(ledger_key, None)
    if ledger is not None:
        # A replay's agent cost is history: only its judge calls were spent now.
        spends = capabilities_of(eval_agent).spends
        ledger.add(result.cost_usd if spends else result.judge_cost_usd)
    item.record_run(result)
    item.stash[outcome_key] = outcome
    if result.infra_error:
        pytest.fail(f"{result.infra_error}: {result.error}", pytrace=False)
    yield outcome
