"""The controller's decisions at a session's end, as data: which selected runs never started,
why the result is partial, which ablation ran, the gates (:mod:`.gates`) and the notices
(:mod:`.notices`) said under the table. Pure: run records and the session's rules in; the
shell turns what comes out into the exit status (in one place) and lines."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_plugin_evals.engine.aa import aa_gate, aa_notices
from pytest_plugin_evals.engine.gates import (
    Gate,
    cost_gate,
    partial_gate,
    regression_gate,
    shard_gate,
    threshold_gate,
    trigger_gate,
    verdicts_gate,
)
from pytest_plugin_evals.engine.nodeids import case_unit
from pytest_plugin_evals.engine.notices import (
    FAILURE,
    INFO,
    WARNING,
    Notice,
    notices,
    skipped_judges,
    unconfined,
    unpriced,
)
from pytest_plugin_evals.engine.reuse import reuse_notices
from pytest_plugin_evals.model import ExitStatus
from pytest_plugin_evals.records import Record, RunRecord, SkippedRun
from pytest_plugin_evals.reporting.agreement import agreement_lines, low_agreement_lines
from pytest_plugin_evals.reporting.earlier import same_kind
from pytest_plugin_evals.reporting.result import NotStarted, SessionResult
from pytest_plugin_evals.scoring import ScoringRules
from pytest_plugin_evals.shards import shard_line

#: A case on one agent: its node id group and its agent's label.
Unit = tuple[str, str | None]


@dataclass(frozen=True)
class SessionRules:
    """What the controller's gates and notices read of the session's settings."""

    scoring: ScoringRules = field(default_factory=ScoringRules)
    max_cost_usd: float | None = None
    trigger_threshold: float | None = None
    fail_on_regression: bool = False
    verdict_gate: str | None = None
    #: ``--eval-fail-on-cost-regression`` (None: not asked).
    cost_regression: float | None = None
    #: ``--eval-ablation`` as asked (``auto``: as the cases have it).
    ablation: str = "auto"
    #: ``--eval-reuse`` (None: not asked), and the kind of session ``last`` takes.
    reuse: str | None = None
    #: The session's kind (its agents, baseline, A/A or not): what ``--eval-reuse last`` takes.
    agent: str = "claude"
    agents: tuple[tuple[str, str], ...] = ()
    baseline_plugin: str | None = None
    aa: bool = False
    #: ``--eval-session-timeout``, when it ended the session.
    timed_out: float | None = None


@dataclass(frozen=True)
class Said:
    """What the shell found for the summary that the engine does not read itself: the lines of
    the other rooms and plugins, each None or empty when there is nothing to say."""

    suite_root: Path | None = None
    results_dir: Path | None = None
    no_plugin: str | None = None
    recordings: str | None = None
    compare: tuple[str, ...] = ()
    replay: tuple[str, ...] = ()
    write_error: str | None = None


@dataclass(frozen=True)
class Settled:
    """The session's gates, in the order they apply, and the lines they say."""

    gates: tuple[Gate | None, ...]
    #: The partial, shard or threshold gate's line (said as information).
    first: str | None = None
    #: The trigger, regression, verdict and cost gates' lines (said as failures).
    failed: tuple[str, ...] = field(default_factory=tuple)


def not_started(expected: Mapping[Unit, int], reported: Iterable[str]) -> list[NotStarted]:
    """The selected runs of each case that never reported (an interruption, ``-x``)."""
    done: dict[Unit, int] = {}
    for nodeid in reported:
        unit = case_unit(nodeid)
        if unit is not None:
            done[unit] = done.get(unit, 0) + 1
    ordered = sorted(expected.items(), key=lambda e: (e[0][0], e[0][1] or ""))
    return [
        NotStarted(group, group.rpartition("::")[2], count - done.get((group, agent), 0), agent)
        for (group, agent), count in ordered
        if count > done.get((group, agent), 0)
    ]


def partial_reason(
    records: Iterable[Record], *, interrupted: bool, unfinished: bool, maxfail_reached: bool
) -> str | None:
    """Why the result is partial beyond runs that could not be made, if it is: the cost
    ceiling, a rejected credential, ``-x``/``--maxfail``, an interruption (or runs that never
    reported)."""
    records = list(records)
    reasons = {r.reason for r in records if isinstance(r, SkippedRun)}
    if "cost_ceiling" in reasons:
        return "cost_ceiling"
    if "auth_failed" in reasons or any(
        isinstance(r, RunRecord) and r.result.infra_error == "auth" for r in records
    ):
        return "auth_failed"
    if unfinished and maxfail_reached:
        return "maxfail"
    if interrupted or unfinished:
        return "interrupted"
    return None


def ablation(records: Iterable[Record], asked: str) -> str:
    """The ablation the session ran: with-baseline when the second arm loaded
    ``--eval-baseline-plugin``, the one asked, else with-without when any case ran two arms."""
    runs = [r for r in records if isinstance(r, (RunRecord, SkippedRun))]
    if any(r.arm == "baseline" for r in runs):
        return "with-baseline"
    if asked != "auto":
        return asked
    return "with-without" if any(r.two_arm for r in runs) else "none"


def settle(result: SessionResult, rules: SessionRules) -> Settled:
    """The session's gates, in order: the shard's, else the partial result's or the
    threshold's; then the triggers', the regressions', the verdicts' and the cost's. An A/A
    session's (:mod:`.aa`): the shard's or the partial result's, then its wiring faults'."""
    shard = shard_gate(result)
    if result.suite.aa:
        first = shard or partial_gate(result, rules.max_cost_usd, rules.timed_out)
        wiring = aa_gate(result)
        if wiring is not None and wiring.status == ExitStatus.OK:  # said, as information
            first, wiring = first or wiring, None
        return Settled(
            (first, wiring),
            None if first is None or shard is not None else first.reason,
            () if wiring is None else (wiring.reason,),
        )
    first = shard or (
        partial_gate(result, rules.max_cost_usd, rules.timed_out)
        or threshold_gate(result, rules.scoring.threshold)
    )
    failed = (
        trigger_gate(result, rules.trigger_threshold),
        regression_gate(result, rules.fail_on_regression),
        verdicts_gate(result, rules.verdict_gate),
        cost_gate(result, rules.cost_regression),
    )
    return Settled(
        (first, *failed),
        None if first is None or shard is not None else first.reason,
        tuple(g.reason for g in (failed[1], failed[0], failed[2], failed[3]) if g is not None),
    )


def summary_notices(
    result: SessionResult, records: Iterable[Record], rules: SessionRules, said: Said
) -> list[Notice]:
    """Every line said under the table, in order."""
    ablated = rules.ablation == "auto" and result.cases and not result.suite.plugins
    settled = settle(result, rules)
    return [
        *notices(WARNING, [said.no_plugin if ablated else None]),
        *notices(INFO, [None if result.shard is None else shard_line(result.shard)]),
        *skipped_judges(records),
        *unpriced(result, rules.max_cost_usd),
        *unconfined(result),
        *reuse_notices(
            result,
            rules.reuse,
            said.suite_root,
            said.results_dir,
            same_kind(rules.agent, rules.agents, rules.baseline_plugin, rules.aa),
        ),
        *aa_notices(result),
        *notices(INFO, agreement_lines(result)),
        *notices(WARNING, low_agreement_lines(result)),
        *notices(INFO, [said.recordings, settled.first]),
        *notices(WARNING, said.compare),
        *notices(INFO, said.replay),
        *notices(FAILURE, settled.failed),
        *notices(WARNING, [said.write_error]),
    ]
