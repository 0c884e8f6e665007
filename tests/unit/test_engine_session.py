"""The controller's session as data (``engine.session``) and the files it writes
(``engine.outputs``), called directly: node ids and records in; a case's failing sentence, the
result, its folders and the files written out. No pytest session."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.engine.controller import Said, SessionRules
from pytest_plugin_evals.engine.outputs import STEP_SUMMARY, report_files, write_outputs
from pytest_plugin_evals.engine.session import _RULES_SETTINGS, Ending, Session
from pytest_plugin_evals.records import LoadErrorRecord
from pytest_plugin_evals.records.prompts import (
    PROMPT_ELSEWHERE,
    PROMPT_SHARED_OVER,
    carried,
    with_prompts,
)
from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.shards import ShardCase, ShardPlan
from pytest_plugin_evals.stats import CaseStop
from tests.helpers import run_record, summary
from tests.unit.test_engine_gates import ROOT, case


def session(**settings: Any) -> Session:
    return Session(EvalSettings(**settings), "20260101-000000")


def runs(s: Session, name: str, scores: list[float], *, outcome: str = "passed") -> list[Any]:
    """Each run of ``name`` reported in turn: what :meth:`Session.take` said of each."""
    said = []
    for n, score in enumerate(scores, 1):
        record = run_record(case(name), "with", n, score=score)
        said.append(s.take(record.nodeid, record, "call", outcome))
    return said


def test_the_selected_runs_are_counted_once() -> None:
    s = session()
    ids = ["evals/a::a[with-1]", "evals/a::a[with-2]", "evals/b::b[fast-1]", "test_x.py::t"]
    assert s.expect(ids) is True
    assert s.expect(ids) is False  # every xdist worker collects the same items
    assert s.expected == {("evals/a::a", None): 2, ("evals/b::b", "fast"): 1}
    assert session().expect(["test_x.py::t"]) is False


def test_a_case_of_measurements_is_decided_when_its_last_run_reports() -> None:
    s = session(threshold=0.8)
    s.expect([f"evals/a::a[with-{n}]" for n in (1, 2)] + ["evals/b::b[with-1]"])
    first, last = runs(s, "a", [1.0, 0.2])
    assert first is None
    assert last is not None and "a" in last and "0.20" in last
    assert runs(s, "b", [0.9]) == [None]  # a case that passes
    assert s.records.keys() == {"evals/a::a[with-1]", "evals/a::a[with-2]", "evals/b::b[with-1]"}


@pytest.mark.parametrize(
    ("settings", "outcome"),
    [
        ({}, "passed"),  # threshold 1: each run is a test of its own, decided by its item
        ({"threshold": 0.8}, "failed"),  # the last report failed already
        ({"threshold": 0.8, "aa": True}, "passed"),  # an A/A session gates on its wiring only
    ],
)
def test_a_case_is_not_decided_over_its_items(settings: dict[str, Any], outcome: str) -> None:
    s = session(**settings)
    s.expect(["evals/a::a[with-1]"])
    assert runs(s, "a", [0.0], outcome=outcome) == [None]


def test_a_run_whose_setup_failed_is_done_and_one_that_passed_setup_is_not() -> None:
    s = session(threshold=0.8)
    s.expect(["evals/a::a[with-1]"])
    record = run_record(case("a"), "with", 1, score=0.0)
    assert s.take(record.nodeid, record, "setup", "passed") is None
    assert s.finished == {}
    assert s.take(record.nodeid, record, "setup", "skipped") is not None


def test_the_rules_are_read_from_the_settings_of_the_same_names() -> None:
    names = {f.name for f in fields(SessionRules)}
    assert set(_RULES_SETTINGS) == names - {"scoring", "timed_out"}
    s = session(threshold=0.5, reducer="any", max_cost_usd=2.0, verdict_gate="better")
    rules = s.rules()
    assert (rules.scoring.threshold, rules.scoring.reducer) == (0.5, "any")
    assert (rules.max_cost_usd, rules.verdict_gate, rules.timed_out) == (2.0, "better", None)
    s = session(session_timeout=30.0)
    s.timed_out = True
    assert s.rules().timed_out == 30.0


def plan(index: int, shard: int) -> ShardPlan:
    mine = ShardCase("evals/a::a", "a", "a", 1, 1, shard=shard)
    return ShardPlan(index, 2, "runs", (mine,), root="/suite/evals")


def test_a_session_ends_with_a_result_when_it_has_something_to_say() -> None:
    s = session()
    assert not s.ends_with_result(False, None)
    assert not s.ends_with_result(True, None)  # interrupted before anything was selected
    assert not s.ends_with_result(False, plan(1, 1))
    assert s.ends_with_result(False, plan(2, 1))  # no selected case fell to this shard
    s.expect(["evals/a::a[with-1]"])
    assert s.ends_with_result(True, None)  # cut short: the document says so all the same


def test_an_interrupted_session_s_result_names_the_runs_not_started() -> None:
    s = session(ablation="none", tags=("t",))
    s.expect(["evals/a::a[with-1]", "evals/a::a[with-2]"])
    runs(s, "a", [1.0])
    stop: dict[tuple[str, str | None], CaseStop] = {("evals/a::a", None): CaseStop(1, 4)}
    end = Ending(
        interrupted=True, concurrency=2, not_selected=(("b", "b"),), sequential=stop,
        shard=plan(1, 1),
    )  # fmt: skip
    result = s.summarize(end)
    assert result.partial_reason == "interrupted"
    assert [(n.case, n.runs) for n in result.not_started] == [("a", 1)]
    assert (result.suite.concurrency, result.suite.tag_filters) == (2, ("t",))
    assert result.suite.not_selected == (("b", "b"),) and result.shard == end.shard
    assert result.suite.root == str(ROOT)


def test_maxfail_reached_with_runs_left_is_why_the_result_is_partial() -> None:
    s = session()
    s.expect(["evals/a::a[with-1]", "evals/a::a[with-2]"])
    runs(s, "a", [0.0])
    s.failures = 1
    assert s.summarize(Ending(maxfail=1)).partial_reason == "maxfail"
    assert s.summarize(Ending(maxfail=2)).partial_reason == "interrupted"


def test_the_suite_root_is_the_records_else_the_runs_choice_else_the_shard_s() -> None:
    end = Ending(rootpath=Path("/here"), chosen=(Path("/r/x"), Path("/chosen")), shard=plan(2, 1))
    s = session()
    assert s.suite_root(Ending(rootpath=Path("/here"))) == Path("/here")
    assert s.suite_root(Ending(rootpath=Path("/here"), shard=plan(2, 1))) == Path("/suite/evals")
    assert s.suite_root(end) == Path("/chosen")
    error = LoadErrorRecord("evals/x", "/elsewhere/x", 1, "bad", "/elsewhere")
    s.take(error.nodeid, error, "collect", "failed")
    assert s.suite_root(end) == Path("/elsewhere")


def test_the_results_folder_is_where_the_runs_were_recorded() -> None:
    s = session(output_dir=None)
    end = Ending(rootpath=Path("/here"), chosen=(Path("/chosen/results/x"), Path("/chosen")))
    assert s.results_folder(Ending(rootpath=Path("/here"))) == Path("/here/results/20260101-000000")
    assert s.results_folder(end) == Path("/chosen/results/x")
    record = run_record(case("a"), "with", 1, score=1.0)
    kept = "/kept/runs/a/with-1/trace.jsonl"
    traced = replace(record, result=replace(record.result, trace_path=kept))
    s.take(traced.nodeid, traced, "call", "passed")
    assert s.results_folder(end) == Path("/kept")
    assert s.results_folder(Ending(made_in=Path("/made"))) == Path("/made")


def test_a_long_prompt_is_carried_by_the_first_run_s_record_only() -> None:
    long = replace(case("a"), prompt="p" * PROMPT_SHARED_OVER)
    first, second = (run_record(long, "with", n, score=1.0) for n in (1, 2))
    kept = carried(first.case, lambda: True)
    elsewhere = carried(second.case, lambda: False)
    assert kept == first.case and elsewhere.prompt == PROMPT_ELSEWHERE
    unasked = carried(run_record(case("b"), "with", 2).case, lambda: 1 / 0 == 0)
    assert unasked.prompt == "p"  # a short prompt: not asked whether the run is the first
    reported = [replace(second, case=elsewhere), replace(first, case=kept)]
    restored = with_prompts(reported)
    assert [r.case.prompt for r in restored if not isinstance(r, LoadErrorRecord)] == [
        long.prompt
    ] * 2  # given back by the controller


def test_the_session_timeout_left_counts_from_the_start() -> None:
    assert session().timeout_left() is None
    s = session(session_timeout=30.0)
    assert 29.0 < (s.timeout_left() or 0) <= 30.0
    s.started_at -= 40
    assert s.timeout_left() == 0.0  # past already: the session ends at once


def test_a_missing_claude_credential_is_said_only_for_claude_runs(tmp_path: Path) -> None:
    line = session(agent="claude").credential_line({}, tmp_path)
    assert line is not None and line.startswith("claude: no credential")
    assert session(agent="claude").credential_line({"ANTHROPIC_API_KEY": "k"}, tmp_path) is None
    assert session(agent="codex").credential_line({}, tmp_path) is None
    both = session(agent="codex", agents=(("a", "codex"), ("b", "claude")))
    assert both.credential_line({}, tmp_path) == line


def test_an_output_dir_another_session_holds_is_one_usage_line(tmp_path: Path) -> None:
    from pytest_plugin_evals import recording
    from pytest_plugin_evals.util import locks

    assert session().hold_output_dir("session-1") is None
    s = session(output_dir=tmp_path / "out")
    try:
        assert s.hold_output_dir("session-1") is None
        assert s.hold_output_dir("session-1") is None  # the session's workers share the hold
        problem = s.hold_output_dir("session-2")
    finally:
        recording.release_results_folders("session-1")
    if locks.AVAILABLE:
        assert problem is not None and problem.startswith(f"--eval-output-dir {tmp_path}")
        assert problem.endswith("or give this session another --eval-output-dir")


def test_a_failing_case_s_sentence_is_safe_for_a_terminal() -> None:
    s = session(threshold=0.8)
    record = run_record(case("a\x1b[2Jb"), "with", 1, score=0.0)
    s.expect([record.nodeid])
    said = s.take(record.nodeid, record, "call", "passed")
    assert said is not None and "\x1b" not in said and "case a" in said


def test_the_session_concludes_with_its_result_folder_gates_files_and_lines(
    tmp_path: Path,
) -> None:
    s = session(threshold=0.8, json_path=tmp_path / "out.json")
    s.expect(["evals/a::a[with-1]"])
    runs(s, "a", [0.0])
    end = Ending(made_in=tmp_path / "res")
    gates = s.conclude(end, lambda result: replace(result, duration_seconds=99.0))
    assert s.result is not None and s.result.duration_seconds == 99.0  # compared first
    assert s.results_dir == tmp_path / "res"
    (gate, *others) = gates
    assert gate is not None and gate.status == 1 and not any(others)
    s.write(Said(replay=("replayed",)), here=tmp_path, exit_status=1, environ={})
    assert str(tmp_path / "out.json") in s.paths and (tmp_path / "out.json").is_file()
    assert [n.text for n in s.notices] == [gate.reason, "replayed"]


# -- the files written ----------------------------------------------------------------------
def test_the_files_and_their_names(tmp_path: Path) -> None:
    result = summary([run_record(case("a"), "with", 1, score=1.0)])
    settings = EvalSettings(json_path=tmp_path / "copy.json", report_path=tmp_path / "r.html")
    files = report_files(result, tmp_path / "res", settings, tmp_path)
    assert [(label, path) for label, path, _ in files] == [
        ("JSON", tmp_path / "res" / "aggregate-result.json"),
        ("JSON", tmp_path / "copy.json"),
        ("HTML", tmp_path / "r.html"),
    ]
    assert files[0][2] == files[1][2] and json.loads(files[0][2])["cases"]


def write(tmp_path: Path, records: list[Any], **settings: Any) -> Any:
    return write_outputs(
        summary(records), tmp_path / "res", EvalSettings(**settings), records,
        here=tmp_path, exit_status=0, environ={},
    )  # fmt: skip


def test_a_session_of_load_errors_only_writes_no_results_folder(tmp_path: Path) -> None:
    error = LoadErrorRecord("evals/x", str(tmp_path / "x"), 1, "bad", str(tmp_path))
    written = write(tmp_path, [error], json_path=tmp_path / "out.json")
    assert not (tmp_path / "res").exists()
    assert written.paths == [("JSON", tmp_path / "out.json")]
    assert len(json.loads((tmp_path / "out.json").read_text())["loadErrors"]) == 1


def test_git_ignores_the_results_folder_but_not_a_folder_of_yours(tmp_path: Path) -> None:
    written = write(tmp_path, [run_record(case("a"), "with", 1, score=1.0)])
    assert (tmp_path / "res" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert [label for label, _ in written.paths] == ["JSON", "HTML"] and written.error is None
    (tmp_path / "res" / ".gitignore").unlink()
    (tmp_path / "res" / "notes.txt").write_text("mine")
    write(tmp_path, [run_record(case("a"), "with", 1, score=1.0)])
    assert not (tmp_path / "res" / ".gitignore").exists()


def test_the_markdown_links_the_report_and_the_job_summary_needs_its_variable(
    tmp_path: Path,
) -> None:
    """Outside GitHub Actions, ``--eval-step-summary`` is one line; the file is written."""
    target = tmp_path / "out" / "summary.md"
    records = [run_record(case("a"), "with", 1, score=1.0)]
    written = write(tmp_path, records, markdown_path=target, step_summary=True)
    assert written.error == (
        f"--eval-step-summary: ${STEP_SUMMARY} is not set (not a GitHub Actions job?): no step "
        "summary was written"
    )
    assert [label for label, _ in written.paths] == ["JSON", "HTML", "Markdown"]
    assert "(../res/report.html)" in target.read_text()


def test_a_file_that_cannot_be_written_is_said_once(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("a file, not a folder")
    records = [run_record(case("a"), "with", 1, score=1.0)]
    written = write(
        tmp_path, records, json_path=tmp_path / "blocked" / "a.json",
        report_path=tmp_path / "blocked" / "r.html",
    )  # fmt: skip
    assert written.error is not None and written.error.startswith("could not write the eval")
    assert written.error.count("could not write") == 1
    assert [label for label, _ in written.paths] == ["JSON"]
