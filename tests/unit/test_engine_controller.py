"""The controller's decisions at a session's end (``engine.controller``) and the notices it says
under the table (``engine.notices``, ``engine.reuse``), called directly: run records in,
decisions, gates and notices out. No pytest session."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from pytest_plugin_evals.engine import controller
from pytest_plugin_evals.engine.controller import Said, SessionRules, settle, summary_notices
from pytest_plugin_evals.engine.gates import exit_status
from pytest_plugin_evals.engine.notices import FAILURE, INFO, WARNING, Notice
from pytest_plugin_evals.engine.reuse import NOT_REUSED, SHOWN_REASONS, miss_note, reuse_notices
from pytest_plugin_evals.model import ExitStatus, Verdict
from pytest_plugin_evals.reporting.compare import CaseChange, Comparison
from pytest_plugin_evals.reuse import PARTS, Miss
from pytest_plugin_evals.scoring import ScoringRules
from pytest_plugin_evals.shards import ShardCase, ShardPlan
from tests.helpers import run_record, skipped_record, summary
from tests.unit.test_engine_gates import case


def two_arm(name: str, runs: int = 1, **kw: Any) -> list[Any]:
    return [
        run_record(case(name), arm, n, **kw)
        for n in range(1, runs + 1)
        for arm in ("with", "without")
    ]


def with_result(record: Any, **changes: Any) -> Any:
    return replace(record, result=replace(record.result, **changes))


# -- what was not started, why the result is partial, which ablation ran ---------------------


def test_not_started_counts_each_case_s_selected_runs_that_never_reported() -> None:
    expected = {("evals/b::b", None): 2, ("evals/a::a", "fast"): 3, ("evals/a::a", None): 1}
    reported = ["evals/a::a[fast-with-1]", "evals/b::b[with-1]", "evals/b::b[with-2]", "x.py::t"]
    found = controller.not_started(expected, reported)
    assert [(n.nodeid, n.case, n.runs, n.agent) for n in found] == [
        ("evals/a::a", "a", 1, None),
        ("evals/a::a", "a", 2, "fast"),
    ]


@pytest.mark.parametrize(
    ("records", "flags", "reason"),
    [
        ([skipped_record(case("a"), "with", 1, "cost_ceiling")], {}, "cost_ceiling"),
        ([skipped_record(case("a"), "with", 1, "auth_failed")], {}, "auth_failed"),
        ([run_record(case("a"), "with", 1, infra="auth")], {"interrupted": True}, "auth_failed"),
        ([], {"unfinished": True, "maxfail_reached": True}, "maxfail"),
        ([], {"maxfail_reached": True}, None),  # -x with every run made: not partial
        ([], {"interrupted": True}, "interrupted"),
        ([], {"unfinished": True}, "interrupted"),
        ([run_record(case("a"), "with", 1)], {}, None),
    ],
)
def test_partial_reason_in_its_order(
    records: list[Any], flags: dict[str, bool], reason: str | None
) -> None:
    given = {"interrupted": False, "unfinished": False, "maxfail_reached": False, **flags}
    assert controller.partial_reason(records, **given) == reason


def test_the_ablation_the_session_ran() -> None:
    single = [run_record(case("a"), "single", 1, two_arm=False)]
    baseline = [run_record(case("a"), "baseline", 1)]
    assert controller.ablation(two_arm("a"), "auto") == "with-without"
    assert controller.ablation(single, "auto") == "none"
    assert controller.ablation(single, "with-without") == "with-without"
    assert controller.ablation(baseline, "none") == "with-baseline"


# -- the gates, in order ---------------------------------------------------------------------


def regressed(result: Any) -> Any:
    worse = CaseChange("a", "a", 1.0, 0.0, -1.0, None, None, None, "worse")
    return replace(result, comparison=Comparison("before.json", "2026-01-01", (worse,)))


def test_settle_orders_the_gates_and_says_the_failed_ones() -> None:
    result = regressed(summary(two_arm("a", score=0.0), threshold=1.0))
    settled = settle(result, SessionRules(ScoringRules(threshold=1.0), fail_on_regression=True))
    assert exit_status(int(ExitStatus.OK), settled.gates) == int(ExitStatus.FAILED)
    assert settled.first is not None  # the threshold's line, said as information
    assert settled.failed == ("--eval-fail-on-regression: 1 case(s) worse since 2026-01-01: a",)


def test_a_timed_out_session_says_the_timeout() -> None:
    result = summary(two_arm("a"), partial_reason="interrupted")
    settled = settle(result, SessionRules(timed_out=30.0))
    assert settled.first is not None and settled.first.startswith("--eval-session-timeout 30s")
    assert exit_status(int(ExitStatus.OK), settled.gates) == int(ExitStatus.PARTIAL)


# -- the notices -----------------------------------------------------------------------------


def test_skipped_judges_unpriced_and_unconfined_runs_are_warnings() -> None:
    no_judge = Verdict(
        "rubric", None, "skipped", type="llm", scored=False, skipped="--eval-no-judge"
    )
    records = [
        run_record(case("a"), "with", 1, [no_judge], skipped_paid=True),
        with_result(run_record(case("a"), "without", 1), cost_known=False, unconfined=True),
    ]
    said = summary_notices(summary(records), records, SessionRules(max_cost_usd=1.0), Said())
    assert said == [
        Notice(
            WARNING, "paid graders skipped on purpose (--eval-no-judge): 1 verdict(s) not judged"
        ),
        Notice(WARNING, "1 judge verdict(s) skipped: cost ceiling"),
        Notice(
            WARNING,
            "--eval-max-cost-usd could not see the spend of 1 run(s), whose agent reports no "
            "price: claude 1",
        ),
        Notice(
            WARNING,
            "1 run(s) ran unconfined, on purpose (--eval-unconfined): their tools could reach "
            "your files, processes and network",
        ),
    ]
    unpriced_without_ceiling = summary_notices(summary(records), records, SessionRules(), Said())
    assert not any("could not see the spend" in n.text for n in unpriced_without_ceiling)


def test_the_shell_s_lines_and_the_gates_come_in_the_summary_s_order() -> None:
    records = two_arm("a", score=0.0)
    mine = ShardCase("evals/a::a", "a", "a", 2, 2, shard=1)
    result = replace(
        regressed(summary(records, threshold=1.0)), shard=ShardPlan(1, 2, "runs", (mine,))
    )
    said = Said(
        no_plugin="no plugin found",
        recordings="recorded answers",
        compare=("compared with x",),
        replay=("replayed y",),
        write_error="could not write",
    )
    rules = SessionRules(ScoringRules(threshold=1.0), fail_on_regression=True)
    kinds = [(n.kind, n.text.split(":")[0]) for n in summary_notices(result, records, rules, said)]
    assert kinds[:3] == [
        (WARNING, "no plugin found"),
        (INFO, "shard 1/2"),
        (INFO, "recorded answers"),
    ]
    assert kinds[4:] == [
        (WARNING, "compared with x"),
        (INFO, "replayed y"),
        (FAILURE, "--eval-fail-on-regression"),
        (WARNING, "could not write"),
    ]


def test_reuse_notices_say_what_was_reused_and_why_the_rest_was_made() -> None:
    reused = [
        with_result(r, reused_from="/old", notes=())
        for r in two_arm("a")
        if r.result.arm == "without"
    ]
    made = [
        with_result(run_record(case(f"c{i}"), "without", 1), notes=(f"{NOT_REUSED}: reason {i}",))
        for i in range(SHOWN_REASONS + 2)
    ]
    records = [*reused, *made]
    said = reuse_notices(summary(records, ablation="with-without"), "last", None, None)
    assert said[0] == Notice(
        INFO,
        f"--eval-reuse: 1 of {len(records)} without-arm run(s) reused from /old (their agent "
        "cost, $0.0100, was spent when they were made)",
    )
    assert [n.kind for n in said[1:]] == [WARNING] * (SHOWN_REASONS + 1)
    assert said[-1].text.startswith("--eval-reuse: 2 more run(s) made, not reused")
    assert reuse_notices(summary(records), None, None, None) == []


def test_a_miss_becomes_the_note_of_the_run_made() -> None:
    assert miss_note(Miss("absent", "")) is None
    assert miss_note(Miss("old", "")) == f"{NOT_REUSED}: older than --eval-reuse-max-age"
    assert miss_note(Miss("changed", "model, mocks")) == (
        f"{NOT_REUSED}: changed since: {PARTS['model']}, {PARTS['mocks']}"
    )
