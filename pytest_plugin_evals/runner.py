"""One run from start to verdict: sandbox, agent, graders, score.

No pytest here: the item calls :func:`execute_run` and turns the outcome into a pass, a
failure or an error. What the runner does for an agent follows the agent's
:class:`~pytest_plugin_evals.agents.base.Capabilities`, never its name.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_plugin_evals.agents.base import (
    Agent,
    RunRequest,
    capabilities_of,
    credentials_of,
    passed_of,
)
from pytest_plugin_evals.agents.confine.bounds import DEFAULT_BOUNDS, Bounds
from pytest_plugin_evals.agents.confine.network import Endpoint
from pytest_plugin_evals.agents.usage import refuse_invalid_cost, usable_usage
from pytest_plugin_evals.agents.workspace import run_scaffold
from pytest_plugin_evals.graders import grade_all, judge_cost
from pytest_plugin_evals.judges import Judge
from pytest_plugin_evals.mocks.calls import attach
from pytest_plugin_evals.mocks.config import MockJudge, MockOptions, MockSetup, prepare_mocks
from pytest_plugin_evals.mocks.discover import MockPlan
from pytest_plugin_evals.mocks.host import HostError
from pytest_plugin_evals.model import (
    Arm,
    Case,
    RunResult,
    Transcript,
    Verdict,
    brief_tool_calls,
    cut_answer,
)
from pytest_plugin_evals.recording import record_run, run_folder
from pytest_plugin_evals.sandbox import Sandbox
from pytest_plugin_evals.scoring import plan_graders, run_score
from pytest_plugin_evals.util.environment import allowed_environment, operator_environment
from pytest_plugin_evals.util.inert import mark_inert
from pytest_plugin_evals.util.process import RUN_TAG, SESSION_TAG, kill_tagged, pid_mark
from pytest_plugin_evals.util.redact import Redactor, secrets_in
from pytest_plugin_evals.util.timestamps import utc_iso

#: Seconds a grader may take by default (``--eval-grader-timeout``).
DEFAULT_GRADER_TIMEOUT = 10.0


@dataclass(frozen=True)
class RunOptions:
    """Session-wide settings of every run."""

    runs_dir: Path | None = None
    env_pass: tuple[str, ...] = ()
    keep_temp: bool = False
    model_override: str | None = None
    scaffold: bool = False
    #: The judge of llm / baseline / meetsCriteria graders (None: they are skipped).
    judge: Judge | None = None
    #: The second judge (``--eval-judge-second``): asked what the judge is, never scored.
    second_judge: Judge | None = None
    #: Why paid graders are skipped on purpose (``--eval-no-judge``), if they are.
    no_judge_reason: str | None = None
    #: ``on``: MCP stand-ins from the mocks folders; ``off``: the plugin's real servers.
    mocks: str = "on"
    allow_real_servers: bool = False
    #: The claude binary a claude judge uses (agent mocks play their server with it).
    judge_claude_bin: str | None = None
    #: The judge backend and model that play ``type: agent`` mock servers (None: no judge).
    judge_kind: str | None = None
    judge_model: str | None = None
    #: Seconds each grader may spend matching patterns before the run is an error.
    grader_timeout: float | None = DEFAULT_GRADER_TIMEOUT
    #: The session's token, set in every run's environment (what the session's end kills).
    session_tag: str | None = None
    #: How many times the session makes a refused run again (``--eval-rate-limit-retries``);
    #: the agent is told, so that it need not retry on its own.
    rate_limit_retries: int = 0
    #: Run the agent without its sandbox, on purpose (``--eval-unconfined``).
    unconfined: bool = False
    #: What a confined run may use (``--eval-max-memory`` and its siblings).
    bounds: Bounds = DEFAULT_BOUNDS
    #: Endpoints every run may reach besides its agent's own (``--eval-allow-network``).
    allow_network: tuple[Endpoint, ...] = ()
    #: Paths every run may read besides its own (``--eval-allow-read``).
    allow_read: tuple[Path, ...] = ()


@dataclass(frozen=True)
class RunTarget:
    """Which run to make: a case's run in one arm, the plugin it tests, and how it is scored."""

    case: Case
    arm: Arm
    run: int
    #: The plugin under test (whatever the arm: its declared servers decide which mocks shadow).
    plugin_dir: Path | None
    #: Score the graders that only show a plugin fired (a second arm without a plugin).
    two_arm: bool
    #: The case's stand-ins, found once at collection (None: looked up for the run).
    mock_plan: MockPlan | None = None
    #: The agent's label in a session of several agents (``--eval-agents``).
    agent_label: str | None = None


@dataclass
class RunOutcome:
    result: RunResult
    transcript: Transcript


@dataclass(frozen=True)
class _Grades:
    verdicts: tuple[Verdict, ...] = ()
    score: float = 0.0
    passed: bool = False
    judge_cost_usd: float = 0.0
    skipped_paid: bool = False
    infra_error: str | None = None
    error: str | None = None


def execute_run(
    target: RunTarget,
    *,
    agent: Agent,
    run_root: Path,
    options: RunOptions = RunOptions(),
    environ: Mapping[str, str] | None = None,
    paid_budget: float | None = None,
) -> RunOutcome:
    """Make the ``target`` run (a case's run in one arm) under ``run_root`` and grade it.

    ``paid_budget`` is what the cost ceiling leaves for this run: when the agent alone spends
    it, paid graders are skipped (``skippedPaidGraders``) while free graders still score.
    """
    case, arm, run, plugin_dir = target.case, target.arm, target.run, target.plugin_dir
    mock_plan, agent_label = target.mock_plan, target.agent_label
    can = capabilities_of(agent)
    box = Sandbox.create(run_root, git_repository=can.git_workspace)
    model = options.model_override or case.model
    # The agent's own variables only (its endpoint and key, never another agent's), the
    # secrets the case requires and what the operator passes on purpose.
    operator = operator_environment() if environ is None else environ
    base = allowed_environment(
        operator,
        (*options.env_pass, *case.requires_secret),
        passed_of(agent, model),
    )
    env = box.environment(base)
    env.update(case.env)
    # Every process of the run carries its token, so none outlives it (kill_tagged below).
    token = uuid.uuid4().hex
    env[RUN_TAG] = token
    began = pid_mark()  # before the run's first process: only those made since can hold it
    if options.session_tag:
        env[SESSION_TAG] = options.session_tag
    request = RunRequest(
        case=case,
        arm=arm,
        run=run,
        prompt=case.prompt,
        sandbox=box,
        plugin_dir=plugin_dir if arm != "without" else None,
        model=model,
        max_turns=case.max_turns,
        timeout_seconds=case.timeout_seconds,
        allowed_tools=case.allowed_tools,
        env=env,
        rate_limit_retries=options.rate_limit_retries,
        agent_label=agent_label,
        unconfined=options.unconfined,
        bounds=options.bounds,
        allow_network=options.allow_network,
        allow_read=options.allow_read,
        private=(options.runs_dir.parent,) if options.runs_dir is not None else (),
        keep_temp=options.keep_temp,
    )
    started_at = utc_iso()
    start = time.monotonic()
    mocks: MockSetup | None = None
    host_error: str | None = None
    if can.uses_mocks:
        try:
            mocks = prepare_mocks(
                case,
                plugin_dir,
                arm != "without",
                box.out / "mocks",
                _mock_options(options, environ),
                plan=mock_plan,
                # A stand-in stops a violating run by killing the processes that carry the run's
                # token: only agents that are processes of their own (an in-process agent is
                # pytest: its stand-ins only record).
                kill_agent=can.separate_process,
                run_token=token,
            )
        except HostError as exc:  # the run is registered with the mock host, or not made
            host_error = str(exc)
        else:
            request = dataclasses.replace(request, mocks=mocks)
    try:
        scaffold = options.scaffold and host_error is None
        scaffold_error = stage_input_files(case, box.cwd) if host_error is None else None
        if scaffold_error is None and scaffold:
            scaffold_error = run_scaffold(request, env)
        if host_error is not None:
            transcript = Transcript(
                error=host_error, infra_error="mock_host", skip_grading=True, cwd=box.cwd
            )
        elif scaffold_error is not None:
            transcript = Transcript(error=scaffold_error, skip_grading=True, cwd=box.cwd)
        else:
            try:
                transcript = agent.run(request)
            except Exception as exc:  # noqa: BLE001 - an adapter bug must not take the session down
                transcript = Transcript(
                    error=f"agent adapter failed: {type(exc).__name__}: {exc}",
                    infra_error="harness",
                )
    finally:
        # What it left running: setsid, daemons, PID 1's children.
        kill_tagged(RUN_TAG, token, since=began)
        if mocks is not None:
            mocks.close()  # the run's socket on the mock host goes; nothing more is recorded
    mock_outcome = attach(mocks, transcript) if mocks is not None else None
    if mock_outcome is not None and mock_outcome.aborted is not None:
        transcript.aborted = mock_outcome.aborted
    # From here on nothing sees the credentials the agent was given — nor any other of the
    # operator's: an agent may have learnt one some other way — graders and judges
    # included, and nothing the session writes holds them.
    declared = credentials_of(agent)  # its credentials, whatever their names say
    redactor = Redactor({**secrets_in(operator, declared), **secrets_in(env, declared)})
    transcript = refuse_invalid_cost(usable_usage(redactor.scrub(transcript)))
    duration = transcript.duration_seconds or (time.monotonic() - start)
    grades = _Grades(infra_error=transcript.infra_error, error=transcript.error)
    if transcript.infra_error is None and not transcript.skip_grading:
        shadow_only = mock_plan.shadow_only if mock_plan is not None else False
        grades = _grade(target, transcript, options, paid_budget, shadow_only, spends=can.spends)
        grades = dataclasses.replace(grades, verdicts=redactor.scrub(grades.verdicts))
    trace_path = ""
    if options.runs_dir is not None:
        if not options.runs_dir.is_symlink():  # never written through a link
            mark_inert(options.runs_dir)
        dest = run_folder(options.runs_dir, case, arm, run, agent_label)
        trace_path = record_run(
            dest, transcript, getattr(agent, "name", "agent"), redact=redactor.data
        )
    answer, truncated = cut_answer(transcript.final_message)
    result = RunResult(
        arm=arm,
        run=run,
        score=grades.score,
        passed=grades.passed,
        verdicts=grades.verdicts,
        turns=transcript.turns,
        cost_usd=round(transcript.cost_usd + grades.judge_cost_usd, 10),
        cost_known=transcript.cost_known,
        judge_cost_usd=grades.judge_cost_usd,
        duration_seconds=round(duration, 3),
        started_at=started_at,
        error=grades.error,
        infra_error=grades.infra_error,
        trace_path=trace_path,
        skipped_paid_graders=grades.skipped_paid,
        answer=answer,
        answer_truncated=truncated,
        input_tokens=transcript.input_tokens,
        output_tokens=transcript.output_tokens,
        tool_calls=len(transcript.tool_calls),
        tool_call_list=brief_tool_calls(transcript.tool_calls),
        files_created=tuple(transcript.files_created),
        notes=tuple(transcript.notes),
        aborted=transcript.aborted,
        mocks=(
            mock_outcome.summary(mocks)
            if mocks is not None and mock_outcome is not None and (mocks.active or mocks.withheld)
            else None
        ),
        mock_calls=tuple(transcript.mock_calls) if transcript.mock_calls is not None else None,
        unconfined=transcript.unconfined,
    )
    if options.keep_temp:
        box.keep()
    else:
        box.remove()
    return RunOutcome(result, transcript)


def _mock_options(options: RunOptions, environ: Mapping[str, str] | None) -> MockOptions:
    """The session's mock options; the judge that plays ``type: agent`` tools reads its
    credentials from the operator's environment."""
    recordings = options.runs_dir.parent / "mock-recordings" if options.runs_dir else None
    return MockOptions(
        mode="off" if options.mocks == "off" else "on",
        allow_real_servers=options.allow_real_servers,
        judge=MockJudge(
            kind=options.judge_kind,
            model=options.judge_model,
            env=environ,
            claude_bin=options.judge_claude_bin,
            recordings_dir=recordings,
        ),
    )


def stage_input_files(case: Case, cwd: Path) -> str | None:
    """Copy the case's input files (skill-creator's ``files``) into the run's working folder;
    the run's error when one cannot be copied."""
    for source, rel in case.input_files:
        target = cwd / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        except OSError as exc:
            return f"input file {rel} could not be copied into the run: {exc.strerror or exc}"
    return None


def _grade(
    target: RunTarget,
    transcript: Transcript,
    options: RunOptions,
    paid_budget: float | None,
    shadow_only: bool = False,
    *,
    spends: bool = True,
) -> _Grades:
    """Grade the run; a judge that fails makes the run an infrastructure error."""
    case = target.case
    plan = plan_graders(case.graders, target.arm, target.two_arm, shadow_mocks_only=shadow_only)
    skip_paid = options.no_judge_reason
    spent_now = transcript.cost_usd if spends else 0.0  # a replay's agent cost is history
    if skip_paid is None and paid_budget is not None and spent_now >= paid_budget:
        skip_paid = "cost ceiling"
    judge = None if skip_paid else options.judge
    graded = grade_all(
        [spec for spec, _, _ in plan],
        transcript,
        case=case,
        judge=judge,
        time_limit=options.grader_timeout,
        second_judge=None if judge is None else options.second_judge,
    )
    verdicts = []
    skipped_paid = False
    for verdict, (spec, scored, with_only) in zip(graded, plan, strict=True):
        if skip_paid and spec.paid:
            verdict = dataclasses.replace(
                verdict, passed=None, skipped=skip_paid, explanation=f"skipped: {skip_paid}"
            )
            skipped_paid = True
        verdicts.append(dataclasses.replace(verdict, scored=scored, with_only=with_only))
    failed = next((v for v in verdicts if v.error), None)
    if failed is not None:
        # A grader that could not reach a verdict: the run is an error, kept out of the
        # scores; every verdict reached stays in the run.
        return _Grades(
            verdicts=tuple(verdicts),
            judge_cost_usd=judge_cost(verdicts),
            infra_error="judge" if failed.error == "judge" else "grader",
            error=f"{failed.name}: {failed.explanation}",
        )
    score, passed = run_score(verdicts, run_ok=transcript.error is None)
    return _Grades(
        verdicts=tuple(verdicts),
        score=score,
        passed=passed,
        judge_cost_usd=judge_cost(verdicts),
        skipped_paid=skipped_paid,
        error=transcript.error,
    )
