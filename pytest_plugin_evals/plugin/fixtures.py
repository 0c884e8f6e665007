"""Public fixtures: the agent, a sandbox, soft checks, and the run behind every eval item.

Every fixture here can be overridden by name in a ``conftest.py`` — for instance an
``eval_agent`` fixture returning your own adapter. The modules behind them are imported when a
fixture is first used, so a project without evals pays nothing for them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_plugin_evals.plugin.keys import (
    ledger_key,
    outcome_key,
    settings_key,
    soft_checks_key,
    stamp_key,
)
from pytest_plugin_evals.plugin.settings import EvalSettings, results_dir

if TYPE_CHECKING:
    from pytest_plugin_evals.agents import Agent
    from pytest_plugin_evals.graders.assertions import SoftChecks
    from pytest_plugin_evals.judges import Judge
    from pytest_plugin_evals.model import Case
    from pytest_plugin_evals.runner import RunOutcome
    from pytest_plugin_evals.sandbox import Sandbox


@pytest.fixture(scope="session")
def eval_settings(pytestconfig: pytest.Config) -> EvalSettings:
    """The session's evaluation settings (``--eval-*`` options and ini keys)."""
    return pytestconfig.stash[settings_key]


@pytest.fixture(scope="session")
def eval_agent(eval_settings: EvalSettings) -> Agent:
    """The agent under test, as ``--eval-agent`` names it."""
    from pytest_plugin_evals.agents import AgentError, make_agent

    try:
        return make_agent(
            eval_settings.agent,
            claude_bin=eval_settings.claude_bin,
            grants=eval_settings.allow_tools,
            disallow=eval_settings.disallow_tools,
        )
    except AgentError as exc:
        problem = str(exc)
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
def eval_judge(eval_settings: EvalSettings) -> Iterator[Judge | None]:
    """The judge of llm, baseline and meetsCriteria graders (``--eval-judge``), or None under
    ``--eval-no-judge``. Built the first time a case with such a grader runs."""
    from pytest_plugin_evals.judges import JudgeSetupError, make_judge

    if eval_settings.no_judge:
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
        yield None
        return
    yield judge
    close = getattr(judge, "close", None)
    if callable(close):
        close()


def _judge_for(request: pytest.FixtureRequest, case: Case) -> Judge | None:
    """The session's judge, asked for only by cases that have a paid grader."""
    if not any(spec.paid for spec in case.graders):
        return None
    judge: Judge | None = request.getfixturevalue("eval_judge")
    return judge


@pytest.fixture
def eval_run(
    request: pytest.FixtureRequest, eval_agent: Agent, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunOutcome]:
    """Make the run of the requesting eval item (in setup, so a run that cannot be made is an
    error, not a failure) and report it."""
    from pytest_plugin_evals.agents import capabilities_of
    from pytest_plugin_evals.plugin.items import EvalItem
    from pytest_plugin_evals.runner import RunOptions, execute_run

    item = request.node
    if not isinstance(item, EvalItem):
        raise pytest.UsageError("eval_run is only available to eval items")
    case = item.case
    missing = [name for name in case.requires_secret if not os.environ.get(name)]
    if missing:
        item.record_skip("missing_secret")
        pytest.skip(f"missing required secret(s): {', '.join(missing)}")
    settings: EvalSettings = item.config.stash[settings_key]
    if case.scaffold_script and not settings.scaffold:
        pytest.skip(
            "its scaffold_script is not run without --eval-scaffold (it runs as you, outside "
            "the sandbox)"
        )
    ledger = item.config.stash.get(ledger_key, None)
    paid_budget = None
    if settings.max_cost_usd is not None and ledger is not None:
        spent = ledger.spent()
        paid_budget = settings.max_cost_usd - spent
        if spent >= settings.max_cost_usd:
            item.record_skip("cost_ceiling")
            pytest.skip(
                f"cost ceiling ${settings.max_cost_usd:g} reached (${spent:.4f} spent): "
                "run not started"
            )
    stamp = item.config.stash[stamp_key]
    run_root = tmp_path_factory.mktemp(f"run-{item.arm}-{item.run}-", numbered=True)
    outcome = execute_run(
        case,
        item.arm,
        item.run,
        agent=eval_agent,
        run_root=run_root,
        plugin_dir=item.plugin.path if item.plugin else None,
        two_arm=item.two_arm,
        options=RunOptions(
            runs_dir=results_dir(settings, case.suite_root, stamp) / "runs",
            env_pass=settings.env_pass,
            keep_temp=settings.keep_temp,
            model_override=settings.model,
            scaffold=settings.scaffold,
            judge=_judge_for(request, case),
            no_judge_reason="--eval-no-judge" if settings.no_judge else None,
            mocks=settings.mocks,
            allow_real_servers=settings.allow_real_servers,
            judge_kind=None if settings.no_judge else settings.judge,
            judge_model=settings.judge_model,
            judge_claude_bin=settings.claude_bin,
        ),
        mock_plan=item.mock_plan,
        paid_budget=paid_budget,
    )
    result = outcome.result
    if ledger is not None:
        # A replay's agent cost is history: only its judge calls were spent now.
        spends = capabilities_of(eval_agent).spends
        ledger.add(result.cost_usd if spends else result.judge_cost_usd)
    item.record_run(result)
    item.stash[outcome_key] = outcome
    if result.infra_error:
        pytest.fail(f"{result.infra_error}: {result.error}", pytrace=False)
    yield outcome
