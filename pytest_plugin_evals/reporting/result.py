"""The session's result, typed: cases with their runs and aggregates, the suite's numbers, the gate.

:func:`summarize` turns the items' records into a :class:`SessionResult`: cases with their runs
and aggregates, sorted, so the order the records arrived in does not matter. The document that
writes it as ``aggregate-result.json`` and reads it back is :mod:`.document`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

from pytest_plugin_evals import stats
from pytest_plugin_evals.model import SECOND_ARMS, BaselinePlugin, PluginInfo
from pytest_plugin_evals.records import (
    CaseInfo,
    LoadErrorRecord,
    Record,
    RunRecord,
    SkippedRun,
)
from pytest_plugin_evals.reporting.compare import (
    Comparison,
)
from pytest_plugin_evals.reporting.verdicts import mean_delta_decision, with_case_verdicts
from pytest_plugin_evals.scoring import (
    CaseAggregates,
    CaseVerdict,
    Gate,
    ScoringRules,
    Timing,
    case_aggregates,
    case_verdict,
    clean,
    gate,
    mean,
    timing,
)
from pytest_plugin_evals.shards import (
    ShardPlan,
    ShardSource,
)
from pytest_plugin_evals.stats import CaseStop, Decision, Interval, decisions
from pytest_plugin_evals.util.trigger_files import is_trigger_file

#: ``partialReason`` when runs could not be made and no other reason was given.
INFRA_PARTIAL_REASON = "infra_errors"


@dataclass(frozen=True)
class CaseResult:
    """One case of the session: its runs by arm, its numbers and its NOTES."""

    case: CaseInfo
    two_arm: bool
    with_runs: tuple[RunRecord, ...]
    without_runs: tuple[RunRecord, ...]
    aggregates: CaseAggregates
    notes: str | None = None
    #: The second arm loaded ``--eval-baseline-plugin`` (``without_runs`` are its runs).
    baseline: bool = False
    #: The agent's label in a session of several agents (``--eval-agents``): a case on each
    #: agent is a result of its own, with its own arms, scores and Δ.
    agent: str | None = None

    @property
    def name(self) -> str:
        return self.case.name

    @property
    def label(self) -> str:
        """The case's name, and the agent it ran on in a session of several (``plants on
        codex``)."""
        return self.name if self.agent is None else f"{self.name} on {self.agent}"

    @property
    def second_arm(self) -> str:
        """The arm Δ compares the with arm with: ``without``, or ``baseline`` in an A/B."""
        return "baseline" if self.baseline else "without"

    @property
    def dir(self) -> str:
        """The case folder, relative to its suite root (``.`` for a suite file's cases)."""
        return relative(self.case.dir, self.case.suite_root)

    @property
    def runs(self) -> tuple[RunRecord, ...]:
        return (*self.with_runs, *self.without_runs)

    @property
    def trigger_query(self) -> bool:
        """A query of a skill's ``trigger_eval.json``: counted in trigger accuracy, never as a
        case (in the suite score, the case count or the threshold)."""
        return self.case.source == "trigger_eval"

    @property
    def cost_usd(self) -> float:
        return sum(r.result.cost_usd for r in self.runs)

    @property
    def cost_known(self) -> bool:
        """False when an agent of one of its runs reported no price: ``cost_usd`` is less."""
        return all(r.result.cost_known for r in self.runs)


@dataclass(frozen=True)
class SuiteInfo:
    root: str | None
    ablation: str
    threshold: float
    concurrency: int
    agent: str
    case_filter: str | None = None
    tag_filters: tuple[str, ...] = ()
    plugins: tuple[PluginInfo, ...] = ()
    #: What ``--eval-baseline-plugin`` resolved to (one per plugin under test).
    baseline_plugins: tuple[BaselinePlugin, ...] = ()
    #: The cases collected but not selected (``-k``, ``-m``, ``--eval-case`` …): (name, dir).
    not_selected: tuple[tuple[str, str], ...] = ()
    #: An A/A session (``--eval-aa``): the second arm loaded the plugin under test too.
    aa: bool = False


@dataclass(frozen=True)
class NotStarted:
    """Selected runs of one case that were never started (an interruption, ``-x``)."""

    #: The node id every run item of the case shares (its id without the ``[run]`` label).
    nodeid: str
    case: str
    runs: int
    #: The agent's label in a session of several agents (``--eval-agents``).
    agent: str | None = None

    @property
    def trigger_query(self) -> bool:
        """A query of a trigger file: trigger accuracy, never a case."""
        return is_trigger_file(PurePath(self.nodeid.partition("::")[0]).name)


@dataclass(frozen=True)
class SuiteAggregates:
    cases_total: int = 0
    cases_passed: int = 0
    overall_score: float | None = None
    overall_pass_rate: float | None = None
    mean_delta: float | None = None
    overall_score_without: float | None = None
    runs_total: int = 0
    runs_graded: int = 0
    runs_errored: int = 0
    runs_not_made: int = 0
    runs_skipped: int = 0
    runs_not_started: int = 0
    threshold_met: bool = False
    #: The suite's mean Δ's 95% interval, cases as the unit, and whether it excludes 0.
    mean_delta_interval: Interval | None = None
    mean_delta_significant: bool | None = None
    #: The mean Δ's verdict, and the margin of "equivalent" every verdict used.
    mean_delta_decision: Decision | None = None
    margin: float = decisions.DEFAULT_MARGIN
    #: The session's reducer (cases may have their own: ``CaseAggregates.reducer``).
    reducer: str = "mean"
    #: Cases whose runs disagree within an arm.
    cases_unstable: int = 0
    #: Latency, tokens and turns of every graded run.
    timing: Timing = field(default_factory=Timing)
    #: Runs made again after the provider refused them, and how long the session was paused
    #: for that (wall-clock seconds; see ``--eval-rate-limit-retries``).
    rate_limit_retries: int = 0
    rate_limit_wait_seconds: float = 0.0


@dataclass(frozen=True)
class AgentSummary:
    """One agent of a session of several (``--eval-agents``): its cases' numbers side by side
    with the other agents' ("the plugin helps claude +0.60 and codex +0.10")."""

    label: str
    spec: str
    cases: int = 0
    cases_passed: int = 0
    #: Means over the agent's cases of their with-arm score, second-arm score and Δ.
    score: float | None = None
    score_without: float | None = None
    mean_delta: float | None = None
    #: The mean Δ's 95% interval (the agent's cases as the unit), and whether it excludes 0.
    mean_delta_interval: Interval | None = None
    mean_delta_significant: bool | None = None
    mean_delta_decision: Decision | None = None
    runs_total: int = 0
    runs_graded: int = 0
    #: Runs of this agent that could not be made, by infrastructure kind.
    errors: dict[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0
    #: Some of its runs' cost is unknown (the CLI reports no price): ``cost_usd`` is a floor.
    cost_unknown: bool = False
    #: Latency, tokens and turns of its graded runs: how the agents compare beside the scores.
    timing: Timing = field(default_factory=Timing)


def suite_delta_interval(scored: Sequence[CaseAggregates]) -> Interval | None:
    """The cluster-robust interval of the mean Δ of these cases (see
    :func:`pytest_plugin_evals.stats.intervals.mean_delta_interval`)."""
    with_delta = [a for a in scored if a.delta is not None]
    deltas = [a.delta for a in with_delta if a.delta is not None]
    bounds = [a.delta_interval for a in with_delta if a.delta_interval is not None]
    return stats.mean_delta_interval(deltas, bounds)


def agent_summaries(
    cases: Sequence[CaseResult],
    agents: Sequence[tuple[str, str]],
    margin: float = decisions.DEFAULT_MARGIN,
) -> tuple[AgentSummary, ...]:
    """Per agent of ``agents`` (``(label, spec)``, in order), the numbers of its cases."""
    summaries = []
    for label, spec in agents:
        own = [c for c in cases if c.agent == label and not c.trigger_query]
        scored = [c.aggregates for c in own if c.aggregates.score is not None]
        deltas = [a.delta for a in scored if a.delta is not None]
        runs = [r.result for c in own for r in c.runs]
        errors = Counter(str(r.infra_error) for r in runs if r.infra_error)
        interval = suite_delta_interval(scored)
        summaries.append(
            AgentSummary(
                label=label,
                spec=spec,
                cases=len(own),
                cases_passed=sum(1 for c in own if c.aggregates.passed),
                score=mean([a.score for a in scored if a.score is not None]),
                score_without=mean(
                    [a.score_without for a in scored if a.score_without is not None]
                ),
                mean_delta=mean(deltas) if deltas else None,
                mean_delta_interval=interval,
                mean_delta_significant=None if interval is None else stats.excludes_zero(interval),
                mean_delta_decision=mean_delta_decision(own, margin),
                runs_total=len(runs),
                runs_graded=sum(1 for r in runs if r.graded),
                errors=dict(sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))),
                cost_usd=clean(sum(r.cost_usd for r in runs)) or 0.0,
                cost_unknown=not all(c.cost_known for c in own),
                timing=timing([r for r in runs if r.graded]),
            )
        )
    return tuple(summaries)


@dataclass(frozen=True)
class SessionResult:
    """Everything a session's reports show."""

    started_at: str
    duration_seconds: float
    cost_usd: float
    partial: bool
    partial_reason: str | None
    suite: SuiteInfo
    cases: tuple[CaseResult, ...] = ()
    aggregates: SuiteAggregates = SuiteAggregates()
    load_errors: tuple[LoadErrorRecord, ...] = ()
    #: Runs that could not be made, by infrastructure kind (most first).
    errors: dict[str, int] = field(default_factory=dict)
    #: Runs never started, by reason.
    skipped: dict[str, int] = field(default_factory=dict)
    #: Selected runs the session never got to, by case.
    not_started: tuple[NotStarted, ...] = ()
    #: Why no gate was applied (no with-arm run was selected), if none was.
    ungated: str | None = None
    #: This session against an earlier one (``--eval-compare``), when asked.
    comparison: Comparison | None = None
    #: The split, when the session ran one shard of the suite (``--eval-shard``).
    shard: ShardPlan | None = None
    #: The shards' results folders a merged result was made from.
    shards: tuple[ShardSource, ...] = ()
    #: Each agent's numbers, in a session of several agents (``--eval-agents``).
    agents: tuple[AgentSummary, ...] = ()
    #: The second judge (``--eval-judge-second``) and the files of people's verdicts
    #: (``--eval-labels``) the judges are measured against (``reporting.agreement``).
    second_judge: str | None = None
    labels: tuple[Path, ...] = ()

    @property
    def two_arm(self) -> bool:
        if self.cases:
            return any(c.two_arm for c in self.cases)
        return self.suite.ablation in ("with-without", "with-baseline")

    @property
    def baseline(self) -> bool:
        """Whether the second arm loaded ``--eval-baseline-plugin`` (an A/B of two plugins)."""
        if self.cases:
            return any(c.baseline for c in self.cases)
        return self.suite.ablation == "with-baseline"

    @property
    def threshold(self) -> float:
        return self.suite.threshold


def relative(path: str | None, root: str | None) -> str:
    if not path:
        return ""
    if root:
        try:
            rel = PurePath(path).relative_to(root)
        except ValueError:
            return PurePath(path).as_posix()
        return rel.as_posix() or "."
    return PurePath(path).as_posix()


def _dedupe(records: Iterable[Record]) -> list[Record]:
    """One record per nodeid, the last one received winning (setup and call both report)."""
    by_id: dict[str, Record] = {}
    for index, record in enumerate(records):
        key = record.nodeid or f"#{index}"
        by_id.pop(key, None)
        by_id[key] = record
    return list(by_id.values())


def _case_key(case: CaseInfo) -> tuple[str, str, str, str]:
    return (case.suite_root, relative(case.dir, case.suite_root), case.name, case.path)


def case_notes(with_runs: Sequence[RunRecord]) -> str | None:
    """The NOTES of a case: the first with-arm run error (runs in order), else the failing
    scored grader with the highest weight (the first one wins ties)."""
    for record in with_runs:
        run = record.result
        if run.infra_error:
            return f"error: {run.infra_error}" + (f": {run.error}" if run.error else "")
        if run.error:
            return run.error
        if run.aborted is not None:
            return run.aborted.message
    worst = None
    for record in with_runs:
        if not record.result.graded:
            continue
        for verdict in record.result.verdicts:
            if verdict.passed or not verdict.counts:
                continue
            if worst is None or verdict.weight > worst.weight:
                worst = verdict
    return None if worst is None else f"{worst.name}: {worst.explanation}"


def _run_order(record: RunRecord) -> tuple[int, str]:
    return record.run, record.nodeid


@dataclass
class _Slot:
    case: CaseInfo
    runs: list[RunRecord] = field(default_factory=list)
    two_arm: bool = False
    baseline: bool = False
    agent: str | None = None


@dataclass(frozen=True)
class SessionFacts:
    """What the result says of the session itself (its ``suite`` block and its times)."""

    started_at: str
    duration_seconds: float
    ablation: str
    concurrency: int
    agent: str
    #: The ``(label, spec)`` of a session of several agents (``--eval-agents``): a case on
    #: each agent is then a :class:`CaseResult` of its own.
    agents: tuple[tuple[str, str], ...] = ()
    #: The suite's root (None: the one root the records share, if they share one).
    root: str | None = None
    case_filter: str | None = None
    tag_filters: tuple[str, ...] = ()
    baseline_plugins: tuple[BaselinePlugin, ...] = ()
    #: The session's pause for rate limits, when it is known (None: what its runs waited).
    rate_limit_wait_seconds: float | None = None
    second_judge: str | None = None
    labels: tuple[Path, ...] = ()
    #: An A/A session (``--eval-aa``).
    aa: bool = False


def summarize(
    records: Iterable[Record],
    session: SessionFacts,
    rules: ScoringRules,
    *,
    partial_reason: str | None = None,
    not_started: Sequence[NotStarted] = (),
    sequential: Mapping[tuple[str, str | None], CaseStop] | None = None,
) -> SessionResult:
    """The session's result from the items' records, whatever order they arrived in; its
    cases scored and gated under ``rules``.

    ``not_started`` are selected runs the session never got to: the result is then partial
    (``partial_reason`` says why) and the threshold is not met. ``sequential``
    (``--eval-runs auto``): each two-arm case's stop, by its node id without the run label and
    its agent; its Δ is then read from its confidence sequence.
    """
    agents, threshold, margin = session.agents, rules.threshold, rules.margin
    order = {label: index for index, (label, _) in enumerate(agents)}
    slots: dict[tuple[tuple[str, str, str, str], int, str], _Slot] = {}
    load_errors: list[LoadErrorRecord] = []
    plugins: dict[tuple[str, str], PluginInfo] = {}
    skipped: Counter[str] = Counter()
    for record in _dedupe(records):
        if isinstance(record, LoadErrorRecord):
            load_errors.append(record)
            continue
        on = record.agent
        slot_key = (_case_key(record.case), order.get(on or "", -1), on or "")
        slot = slots.setdefault(slot_key, _Slot(record.case, agent=on))
        slot.case = record.case
        slot.two_arm = slot.two_arm or record.two_arm
        if record.plugin is not None:
            plugins[(record.plugin.name, str(record.plugin.path))] = record.plugin
        slot.baseline = slot.baseline or record.arm == "baseline"
        if isinstance(record, SkippedRun):
            skipped[record.reason] += 1
            continue
        slot.runs.append(record)
        slot.two_arm = slot.two_arm or record.arm in SECOND_ARMS

    made = [_case_result(s, rules, sequential) for _, s in sorted(slots.items()) if s.runs]
    cases = tuple(with_case_verdicts(made))
    every_run = [r.result for c in cases for r in c.runs]
    errors = Counter(str(r.infra_error) for r in every_run if r.infra_error)
    partial = bool(partial_reason) or bool(errors) or bool(not_started)
    roots = {c.case.suite_root for c in cases if c.case.suite_root}
    counted = [c for c in cases if not c.trigger_query]
    scored = [c.aggregates for c in counted if c.aggregates.score is not None]
    deltas = [a.delta for a in scored if a.delta is not None]
    result_gate, ungated = session_gate(cases, threshold)
    started = {r.nodeid for c in cases for r in c.runs}
    unseen = [
        n
        for n in not_started
        if not any(
            nodeid.startswith(n.nodeid + "[" + (f"{n.agent}-" if n.agent else ""))
            for nodeid in started
        )
    ]
    aggregates = SuiteAggregates(
        cases_total=len(counted) + sum(1 for n in unseen if not n.trigger_query),
        cases_passed=sum(1 for c in counted if c.aggregates.passed),
        overall_score=mean([a.score for a in scored if a.score is not None]),
        overall_pass_rate=mean([a.pass_rate for a in scored if a.pass_rate is not None]),
        mean_delta=mean(deltas) if deltas else None,
        overall_score_without=mean(
            [a.score_without for a in scored if a.score_without is not None]
        ),
        runs_total=len(every_run),
        runs_graded=sum(1 for r in every_run if r.graded),
        runs_errored=sum(1 for r in every_run if r.graded and r.error),
        runs_not_made=sum(errors.values()),
        runs_skipped=sum(skipped.values()),
        runs_not_started=sum(n.runs for n in not_started),
        threshold_met=result_gate.met and not not_started,
        mean_delta_interval=(interval := suite_delta_interval(scored)),
        mean_delta_significant=None if interval is None else stats.excludes_zero(interval),
        mean_delta_decision=mean_delta_decision(counted, margin),
        margin=margin,
        reducer=rules.reducer,
        cases_unstable=sum(1 for c in counted if c.aggregates.unstable),
        timing=timing([r for r in every_run if r.graded]),
        rate_limit_retries=sum(r.retries for r in every_run),
        # The session's pause when it is known, else what its runs waited (which overlap).
        rate_limit_wait_seconds=round(
            session.rate_limit_wait_seconds
            if session.rate_limit_wait_seconds is not None
            else sum(r.retry_wait_seconds for r in every_run),
            3,
        ),
    )
    load_errors.sort(key=lambda e: (e.path, e.line or 0, e.message))
    return SessionResult(
        started_at=session.started_at,
        duration_seconds=clean(session.duration_seconds) or 0.0,
        # What this session spent: a reused run's agent cost was spent by an earlier one.
        cost_usd=clean(sum(r.judge_cost_usd if r.reused_from else r.cost_usd for r in every_run))
        or 0.0,
        partial=partial,
        partial_reason=(partial_reason or INFRA_PARTIAL_REASON) if partial else None,
        suite=SuiteInfo(
            root=(
                session.root
                if session.root is not None
                else (roots.pop() if len(roots) == 1 else None)
            ),
            ablation=session.ablation,
            threshold=threshold,
            concurrency=session.concurrency,
            agent=", ".join(label for label, _ in agents) if agents else session.agent,
            case_filter=session.case_filter,
            tag_filters=session.tag_filters,
            plugins=tuple(plugins[k] for k in sorted(plugins)),
            baseline_plugins=session.baseline_plugins,
            aa=session.aa,
        ),
        cases=cases,
        aggregates=aggregates,
        load_errors=tuple(load_errors),
        errors=dict(sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))),
        skipped=dict(sorted(skipped.items())),
        not_started=tuple(sorted(not_started, key=lambda n: (n.nodeid, n.agent or ""))),
        ungated=ungated,
        agents=agent_summaries(cases, agents, margin),
        second_judge=session.second_judge,
        labels=session.labels,
    )


#: Said when a session selected no with-arm run (``-m "evals(arm='without')"``).
UNGATED = "no with-arm run was selected: no threshold applies (the runs are measurements)"


#: The gate's words when only trigger queries ran and some were judged wrong.
TRIGGERS_WRONG = "some trigger queries were judged wrong (see TRIGGERS above)"


def session_gate(cases: Sequence[CaseResult], threshold: float) -> tuple[Gate, str | None]:
    """The threshold applied to the cases with a with-arm run (without-arm runs alone are
    measurements); the second value says why no gate applies, when none does."""
    # Trigger queries are decided by their own verdict (and eval_trigger_threshold).
    gated = [c for c in cases if c.with_runs and not c.trigger_query]
    if cases and not gated and all(c.trigger_query for c in cases):
        met = all(c.aggregates.passed for c in cases if c.with_runs)
        return Gate(met=met, message="" if met else TRIGGERS_WRONG), None
    if cases and not gated:
        return Gate(met=True, message=UNGATED), UNGATED
    # Each case as its verdict decided it (scoring.case_verdict), its score to show.
    reducers = {c.aggregates.reducer for c in gated} or {"mean"}
    return (
        gate(
            [(c.label, c.aggregates.score) for c in gated],
            threshold,
            reducer=reducers.pop() if len(reducers) == 1 else "case's",
            passed=[c.aggregates.passed for c in gated],
        ),
        None,
    )


def case_rule(case: CaseInfo, rules: ScoringRules) -> tuple[float, str]:
    """The threshold and the reducer a case is decided by: the session's (its reducer by its
    name), or skill-creator's rate for a trigger query."""
    if case.source == "trigger_eval":
        from pytest_plugin_evals.reporting.triggers import trigger_threshold

        return trigger_threshold(case), "mean"
    return rules.threshold, rules.reducer_for(case.name)


def decide_case(
    records: Iterable[Record], rules: ScoringRules, *, agent: str | None = None
) -> CaseVerdict:
    """Whether a case passes, from its runs' records (its graded with-arm runs count), and
    why not as the sentence the report of its last run says (the case named as
    :attr:`CaseResult.label` names it, on ``agent`` in a session of several). The same
    decision as its aggregates' ``passed``."""
    runs = sorted(
        (r for r in records if isinstance(r, RunRecord) and r.arm not in SECOND_ARMS),
        key=lambda r: r.run,
    )
    runs = [r for r in runs if r.result.graded]
    if not runs:
        return CaseVerdict(None)
    case = runs[0].case
    label = case.name if agent is None else f"{case.name} on {agent}"
    threshold, reducer = case_rule(case, rules)
    scores = [r.result.score for r in runs]
    verdict = case_verdict(scores, threshold, reducer)
    if verdict.passed is not False:
        return verdict
    if case.source == "trigger_eval":
        should = threshold <= 0.5  # see trigger_threshold
        fired = round(sum(scores)) if should else round(sum(1 - s for s in scores))
        rule = "at least 0.5" if should else "below 0.5"
        return CaseVerdict(
            False,
            f"trigger query {label}: the skill fired in {fired} of {len(runs)} run(s); "
            f"{'should' if should else 'should not'} trigger needs a rate {rule}",
        )
    shown = ", ".join(f"{s:.2f}" for s in scores)
    return CaseVerdict(
        False, f"case {label}: {verdict.why} (runs: {shown}); this was its last run to finish"
    )


def _sequential(
    aggregates: CaseAggregates,
    with_runs: Sequence[RunRecord],
    without_runs: Sequence[RunRecord],
    stops: Mapping[tuple[str, str | None], CaseStop],
    margin: float,
) -> CaseAggregates:
    """A case run in rounds: its Δ interval and verdict from its confidence sequence, and
    the rounds it took and why it stopped."""
    from pytest_plugin_evals.stats import case_verdict, paired_differences

    def scored(runs: Sequence[RunRecord]) -> list[tuple[int, float | None]]:
        return [(r.result.run, r.result.score if r.result.graded else None) for r in runs]

    pairs = paired_differences(scored(with_runs), scored(without_runs))
    first = with_runs[0] if with_runs else without_runs[0]
    stop = stops.get((first.nodeid.rpartition("[")[0], first.agent))
    most = stop.most if stop is not None else first.case.runs_per_case
    interval, decision = case_verdict(pairs, margin, most)
    return replace(
        aggregates,
        delta_interval=interval,
        delta_significant=None if interval is None else stats.excludes_zero(interval),
        delta_decision=decision,
        sequential=stop if stop is not None else CaseStop(len(pairs), len(pairs)),
    )


def _case_result(
    slot: _Slot,
    rules: ScoringRules,
    sequential: Mapping[tuple[str, str | None], CaseStop] | None = None,
) -> CaseResult:
    threshold, reducer = case_rule(slot.case, rules)  # a trigger query: skill-creator's verdict
    margin = rules.margin
    with_runs = tuple(sorted((r for r in slot.runs if r.arm not in SECOND_ARMS), key=_run_order))
    without_runs = tuple(sorted((r for r in slot.runs if r.arm in SECOND_ARMS), key=_run_order))
    aggregates = case_aggregates(
        [r.result for r in with_runs],
        [r.result for r in without_runs] if slot.two_arm else None,
        threshold,
        reducer,
        margin,
    )
    if sequential is not None and slot.two_arm and aggregates.delta is not None:
        aggregates = _sequential(aggregates, with_runs, without_runs, sequential, margin)
    if slot.baseline:  # the second arm's numbers are the baseline's: named so where it is said
        unstable = tuple("baseline" if a == "without" else a for a in aggregates.unstable)
        aggregates = replace(aggregates, unstable=unstable)
    return CaseResult(
        case=slot.case,
        two_arm=slot.two_arm,
        with_runs=with_runs,
        without_runs=without_runs,
        aggregates=aggregates,
        notes=case_notes(with_runs),
        baseline=slot.baseline,
        agent=slot.agent,
    )
