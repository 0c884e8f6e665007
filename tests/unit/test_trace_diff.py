"""Two runs' steps aligned, the first divergence, the typical run of an arm and the arms'
summary: plain functions over run results, called directly."""

from __future__ import annotations

import json
from typing import Any

from pytest_plugin_evals.model import RunResult, ToolCallBrief, Verdict
from pytest_plugin_evals.reporting.trace_diff import (
    FILES_ALIGNED,
    align,
    arm_summary,
    first_divergence,
    steps,
    typical,
)
from pytest_plugin_evals.reporting.trace_diff_view import ALL_PAIRS, diff_view, pair_view
from tests.helpers import run_record, summary
from tests.unit.test_reporting_html import case as make_case


def call(name: str, is_error: bool = False, **given: Any) -> ToolCallBrief:
    return ToolCallBrief(name, json.dumps(given, separators=(",", ":")), is_error)


SKILL = call("Skill", skill="release-helper:next-version")
READ = call("Read", file_path="CHANGELOG.md")
TAGS = call("Bash", command="git tag --list")
TEST = call("Bash", command="npm test")


def run(*calls: ToolCallBrief, n: int = 1, score: float = 1.0, answer: str = "1.4.1",
        files: tuple[str, ...] = (), arm: str = "with") -> RunResult:  # fmt: skip
    return RunResult(
        arm=arm,  # type: ignore[arg-type]
        run=n,
        score=score,
        passed=score >= 1,
        answer=answer,
        tool_calls=len(calls),
        tool_call_list=calls,
        files_created=files,
    )


def statuses(left: RunResult, right: RunResult) -> list[tuple[str, str | None, str | None]]:
    return [
        (r.status, r.left.name if r.left else None, r.right.name if r.right else None)
        for r in align(steps(left), steps(right))
    ]


def test_identical_traces_align_row_by_row_with_no_divergence() -> None:
    a = run(SKILL, READ, files=("NOTES.md",))
    rows = align(steps(a), steps(a))
    assert [r.status for r in rows] == ["same"] * 4
    assert [r.left.kind for r in rows if r.left] == ["skill", "tool", "file", "answer"]
    assert first_divergence(rows) is None


def test_the_first_divergence_is_where_the_runs_part() -> None:
    rows = align(steps(run(SKILL, READ, TAGS)), steps(run(SKILL, READ, TEST)))
    assert [r.status for r in rows] == ["same", "same", "changed", "same"]
    assert first_divergence(rows) == 2


def test_a_step_only_the_left_run_took_is_an_insertion_on_its_side() -> None:
    assert statuses(run(SKILL, READ, TAGS), run(READ, TAGS)) == [
        ("left", "release-helper:next-version", None),
        ("same", "Read", "Read"),
        ("same", "Bash", "Bash"),
        ("same", "answer", "answer"),
    ]
    assert first_divergence(align(steps(run(SKILL, READ)), steps(run(READ)))) == 0


def test_a_step_only_the_right_run_took_is_an_insertion_on_its_side() -> None:
    assert statuses(run(READ, TAGS), run(READ, TEST, TAGS)) == [
        ("same", "Read", "Read"),
        ("right", None, "Bash"),
        ("same", "Bash", "Bash"),
        ("same", "answer", "answer"),
    ]


def test_another_answer_after_the_same_calls_is_the_divergence() -> None:
    rows = align(steps(run(READ)), steps(run(READ, answer="2.0.0")))
    assert [r.status for r in rows] == ["same", "changed"]
    assert first_divergence(rows) == 1


def test_a_skill_that_did_not_load_is_a_failed_call_not_a_skill() -> None:
    failed = call("Skill", is_error=True, skill="release-helper:next-version")
    left = align(steps(run(SKILL)), steps(run(failed)))[0]
    assert left.status == "changed"
    assert left.left is not None and left.left.kind == "skill"
    assert left.right is not None and left.right.kind == "tool" and left.right.failed


def test_a_skill_loaded_by_reading_its_file_is_the_same_skill() -> None:
    read = call("Read", file_path="/tmp/x/home/.claude/skills/next-version/SKILL.md")
    by_tool = call("Skill", skill="next-version")
    assert [r.status for r in align(steps(run(read)), steps(run(by_tool)))] == ["same", "same"]


def test_paths_in_each_runs_own_folder_are_the_same_path() -> None:
    a = call("Write", file_path="/tmp/s1/run-a/home/cwd/NOTES.md")
    b = call("Write", file_path="/tmp/s1/run-b/home/cwd/NOTES.md")
    c = call("Write", file_path="/tmp/s1/run-b/home/cwd/OTHER.md")
    assert [r.status for r in align(steps(run(a)), steps(run(b)))] == ["same", "same"]
    assert first_divergence(align(steps(run(a)), steps(run(c)))) == 0


def test_files_written_and_a_run_error_are_steps() -> None:
    broken = RunResult(arm="without", run=1, error="timed out", files_created=("b.md", "a.md"))
    assert [(s.kind, s.name) for s in steps(broken)] == [
        ("file", "a.md"), ("file", "b.md"), ("error", "error"), ("answer", "answer"),
    ]  # fmt: skip


def test_the_typical_run_is_nearest_the_arms_mean_score_and_tool_calls() -> None:
    runs = [
        run(SKILL, READ, n=1, score=1.0),
        run(SKILL, READ, n=2, score=1.0),
        run(SKILL, READ, TAGS, TAGS, TAGS, n=3, score=1.0),  # the outlier in calls
        run(READ, n=4, score=0.0),  # the outlier in score
    ]
    found = typical(runs)
    assert found is not None and found.run == 1  # 1 and 2 tie: the lower number
    assert typical(runs[2:]) is not None
    assert typical([RunResult(arm="with", run=1, infra_error="timeout")]) is None


def test_the_summary_counts_tools_skills_and_files_per_run() -> None:
    s = arm_summary(
        [
            run(SKILL, READ, READ, n=1, files=("NOTES.md",)),
            run(READ, n=2),
            RunResult(arm="with", run=3, infra_error="timeout"),  # not made: left out
        ]
    )
    assert s.runs == 2 and s.mean_score == 1.0
    assert s.calls == {"Read": 1.5, "Skill": 0.5}
    assert (s.skill_runs, s.skill_share, s.skills) == (1, 0.5, {"release-helper:next-version": 1})
    assert (s.files_mean, s.files) == (0.5, {"NOTES.md": 1})
    assert s.calls_cut is False


def test_a_pair_view_cuts_long_texts_and_says_how_long_they_were() -> None:
    long_answer = "x" * 5000
    view = pair_view(run(READ, answer=long_answer), run(READ))
    answer = view.rows[-1].left
    assert answer is not None and answer.text.cut_from == 5000
    assert len(answer.text.text) == 1000
    assert view.divergence == 1 and view.rows[1].first


CASE = make_case("next-version")


def verdicts(passed: bool) -> list[Verdict]:
    return [Verdict("answer", passed, "matched" if passed else "not found")]


def test_a_case_with_few_runs_keeps_every_pair_and_the_typical_first() -> None:
    records = [
        run_record(CASE, arm, n, verdicts(arm == "with" or n == 1))
        for arm in ("with", "without")
        for n in (1, 2, 3)
    ]
    (case,) = summary(records).cases
    view = diff_view(case)
    assert view is not None
    assert view.pairs[0].typical and view.pairs[0].key == "1-2"  # without: 2 fails like 3
    assert len(view.pairs) == 9 == ALL_PAIRS
    assert len({p.key for p in view.pairs}) == 9


def test_a_case_with_many_runs_keeps_the_pairs_that_share_a_typical_run() -> None:
    records = [
        run_record(CASE, arm, n, verdicts(True)) for arm in ("with", "without") for n in range(1, 6)
    ]
    (case,) = summary(records).cases
    view = diff_view(case)
    assert view is not None
    assert view.pairs[0].key == "1-1"
    assert sorted(p.key for p in view.pairs) == sorted(
        ["1-1"] + [f"1-{n}" for n in range(2, 6)] + [f"{n}-1" for n in range(2, 6)]
    )


def test_one_arm_or_an_arm_without_a_graded_run_has_no_diff() -> None:
    single = [run_record(CASE, "single", 1, verdicts(True), two_arm=False)]
    assert diff_view(summary(single).cases[0]) is None
    unmade = [
        run_record(CASE, "with", 1, verdicts(True)),
        run_record(CASE, "without", 1, verdicts(True), infra="timeout"),
    ]
    assert diff_view(summary(unmade).cases[0]) is None


def test_a_run_of_many_files_aligns_the_first_of_them_and_says_so() -> None:
    many = run(files=tuple(f"f{i:02}" for i in range(FILES_ALIGNED + 5)))
    assert [s.name for s in steps(many) if s.kind == "file"][-1] == f"f{FILES_ALIGNED - 1:02}"
    view = pair_view(many, run())
    assert view.left.files_unlisted == 5 and view.right.files_unlisted == 0


def test_an_ab_case_sets_its_runs_beside_the_baseline_plugins() -> None:
    records = [
        run_record(CASE, "with", 1, verdicts(True)),
        run_record(CASE, "baseline", 1, verdicts(False)),
    ]
    (case,) = summary(records).cases
    view = diff_view(case)
    assert view is not None and [p.key for p in view.pairs] == ["1-1"]
    assert view.pairs[0].right.run.arm == "baseline"
    assert view.summary[1].left == "1.00" and view.summary[1].right == "0.00"


def test_the_report_shows_an_ab_cases_diff_under_its_arms_names() -> None:
    from pytest_plugin_evals.reporting.html import render_html
    from tests.helpers import trace_diffs

    records = [
        run_record(CASE, "with", 1, verdicts(True), answer="1.4.1"),
        run_record(CASE, "baseline", 1, verdicts(False), answer="2.0.0"),
    ]
    (diff,) = trace_diffs(render_html(summary(records))).values()
    assert diff["caption"] == (
        "With plugin (this version), run 1, beside Baseline plugin (--eval-baseline-plugin),"
        " run 1: the most typical run of each arm. They part at step 0."
    )
    assert diff["rows"] == [["0 first divergence", "answer 1.4.1", "answer 2.0.0"]]


def test_a_run_read_from_elsewhere_is_bounded_as_a_session_keeps_it() -> None:
    """A document written elsewhere may hold more calls, and longer inputs, than a session
    keeps: the first calls are aligned, and a long input costs no more than its length."""
    import time

    from pytest_plugin_evals.model import TOOL_CALLS_KEPT

    slow = ToolCallBrief("Bash", "/" * 200_000)  # no run folder in it: the worst case
    many = run(*[slow] * (TOOL_CALLS_KEPT + 10))
    started = time.process_time()
    found = steps(many)
    rows = align(found, found)
    assert len([s for s in found if s.kind == "tool"]) == TOOL_CALLS_KEPT
    assert first_divergence(rows) is None
    assert time.process_time() - started < 5
