"""The runner's options are made from the settings in one place (``making.run_options``):
an option added to the settings or to ``RunOptions`` and not reachable from the other fails here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents.confine.bounds import Bounds
from pytest_plugin_evals.agents.confine.network import Endpoint
from pytest_plugin_evals.making import RUN_DERIVED, RUN_GIVEN, run_options
from pytest_plugin_evals.runner import RunOptions
from pytest_plugin_evals.settings import EvalSettings

#: The settings that are the session's, the collectors' or the agent's, not a run's options.
NOT_RUN_OPTIONS = frozenset(
    {
        # what is collected and how it is selected, split and planned
        "runs", "runs_auto", "ablation", "case_glob", "tags", "eval_paths", "shard",
        "shard_durations", "plan", "min_effect", "baseline_plugin", "aa",
        # how the session scores, gates and compares
        "threshold", "threshold_given", "trigger_threshold", "reducer", "case_reducers",
        "margin", "verdict_gate", "compare", "fail_on_regression", "cost_regression",
        # where it writes
        "output_dir", "json_path", "report_path", "progress_seconds", "skill_creator_workspace",
        "markdown_path", "step_summary", "report_url",
        # the agents and the judge the fixtures make (their tools granted and denied)
        "agent", "agents", "agent_bins", "allow_tools", "disallow_tools", "judge_given",
        "judge_second",
        # what the session's reports compare the judges with
        "labels",
        # the session's limits on runs as a whole, and reuse of earlier runs
        "max_cost_usd", "max_concurrency", "max_rate_limit_wait", "session_timeout",
        "run_ahead", "reuse", "reuse_max_age",
    }
)  # fmt: skip


def names(cls: Any) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_every_run_option_is_a_setting_derived_or_given() -> None:
    """A field added to ``RunOptions`` that no setting of its name (nor ``RUN_DERIVED`` nor
    ``RUN_GIVEN``) fills would silently keep its default in every run."""
    orphans = names(RunOptions) - names(EvalSettings) - set(RUN_DERIVED) - RUN_GIVEN
    assert not orphans, f"run options no setting fills: {sorted(orphans)}"
    assert not (set(RUN_DERIVED) | RUN_GIVEN) - names(RunOptions), "stale RUN_DERIVED/RUN_GIVEN"
    read = {name for fields, _ in RUN_DERIVED.values() for name in fields}
    assert read <= names(EvalSettings)


def test_every_setting_reaches_the_runs_or_is_said_not_to() -> None:
    """A setting added for runs but not passed on to them fails here; one that is not a run's
    option says so in ``NOT_RUN_OPTIONS``."""
    same = (names(RunOptions) - set(RUN_DERIVED) - RUN_GIVEN) & names(EvalSettings)
    read = {name for fields, _ in RUN_DERIVED.values() for name in fields}
    unreached = names(EvalSettings) - same - read - NOT_RUN_OPTIONS
    assert not unreached, f"settings that reach no run (or add to NOT_RUN_OPTIONS): {unreached}"
    assert not NOT_RUN_OPTIONS - names(EvalSettings), "stale NOT_RUN_OPTIONS"
    assert not NOT_RUN_OPTIONS & (same | read), "a run's option listed in NOT_RUN_OPTIONS"


def test_the_run_options_carry_every_setting_given() -> None:
    settings = EvalSettings(
        env_pass=("EVAL_X",), keep_temp=True, model="opus", scaffold=True, mocks="off",
        allow_real_servers=True, grader_timeout=3.5, rate_limit_retries=2, unconfined=True,
        judge="openai", judge_model="gpt-x", claude_bin="/opt/claude",
        bounds=(("memory", 1 << 30), ("processes", 64)),
        allow_network=("api.example.com:443", "https://other.example.org"),
        allow_read=(Path("/opt/data"),),
    )  # fmt: skip
    options = run_options(settings)
    assert options == RunOptions(
        env_pass=("EVAL_X",), keep_temp=True, model_override="opus", scaffold=True,
        mocks="off", allow_real_servers=True, grader_timeout=3.5, rate_limit_retries=2,
        unconfined=True, judge_kind="openai", judge_model="gpt-x", judge_claude_bin="/opt/claude",
        no_judge_reason=None,
        bounds=Bounds(memory=1 << 30, processes=64),
        allow_network=(Endpoint("api.example.com", 443), Endpoint("other.example.org", 443)),
        allow_read=(Path("/opt/data"),),
    )  # fmt: skip
    # Every option a setting fills differs from its default here: none is left behind.
    default = RunOptions()
    left = {
        f.name
        for f in dataclasses.fields(RunOptions)
        if f.name not in RUN_GIVEN | {"no_judge_reason"}
        and getattr(options, f.name) == getattr(default, f.name)
    }
    assert not left, f"run options the settings did not reach: {left}"


def test_no_judge_reaches_the_runs_as_a_reason_and_no_judge_kind() -> None:
    options = run_options(EvalSettings(no_judge=True, judge="anthropic"))
    assert options.no_judge_reason == "--eval-no-judge"
    assert options.judge_kind is None
    # Given by the run maker for each run, not settings.
    assert (options.runs_dir, options.judge, options.session_tag) == (None, None, None)
