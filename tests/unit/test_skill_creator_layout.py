"""The session's runs as a skill-creator workspace, from records (``reporting.skill_creator*``):
eval IDs, configurations, grading, timing, benchmark numbers, trigger results, and what a
run's kept folder may put in the workspace."""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from pytest_plugin_evals.model import Case, GraderSpec, PluginInfo, Verdict
from pytest_plugin_evals.recording import case_key, run_folder
from pytest_plugin_evals.reporting.skill_creator import eval_ids, output_names
from pytest_plugin_evals.reporting.skill_creator_benchmark import benchmark, stats
from pytest_plugin_evals.reporting.skill_creator_triggers import trigger_documents
from pytest_plugin_evals.reporting.skill_creator_write import (
    MAX_RUN_BYTES,
    workspace_files,
    write_workspace,
)
from pytest_plugin_evals.util.inert import INERT_MARKER
from tests.helpers import run_record, summary

ROOT = Path("/skill/evals")
PLUGIN = PluginInfo("pdf", None, Path("/skill"), layout="skill")
GRADERS = (
    GraderSpec("expectation-1", "llm", {"criteria": "The form is filled"}),
    GraderSpec("names-ada", "contains", {"value": "Ada"}),
)


def case(name: str, **kw: Any) -> Case:
    return Case(
        name=name,
        prompt=f"Prompt of {name}",
        source=kw.pop("source", "skill_creator"),
        path=kw.pop("path", ROOT / "evals.json"),
        dir=ROOT,
        suite_root=ROOT,
        graders=kw.pop("graders", GRADERS),
        runs=2,
        **kw,
    )


def verdicts(*passed: bool) -> list[Verdict]:
    names = ("expectation-1", "names-ada")
    return [
        Verdict(n, p, f"{n}: {'yes' if p else 'no'}") for n, p in zip(names, passed, strict=True)
    ]


def rec(c: Case, arm: str, n: int, *passed: bool, **kw: Any) -> Any:
    return run_record(c, arm, n, verdicts(*passed), plugin=PLUGIN, **kw)


def texts(files: Any) -> dict[str, Any]:
    return {
        f.path.as_posix(): json.loads(f.text) if f.path.suffix == ".json" else f.text
        for f in files
        if f.text is not None
    }


def no_folder(_: Any) -> None:
    return None


def test_evals_keep_their_number_and_the_others_are_numbered_after() -> None:
    result = summary(
        [
            rec(case("eval-3"), "with", 1, True, True),
            rec(case("eval-7"), "with", 1, True, True),
            rec(case("fills-the-form"), "with", 1, True, True),
            rec(case("pdf-eval-3", path=ROOT / "b.json"), "with", 1, True, True),
        ],
        ablation="none",
    )
    # "pdf-eval-3" (a collection's prefix) and "eval-3" share 3: neither keeps it.
    by_name = dict(zip((c.name for c in result.cases), eval_ids(result.cases), strict=True))
    assert by_name == {"eval-3": 1, "eval-7": 7, "fills-the-form": 2, "pdf-eval-3": 3}


def test_two_arms_are_with_and_without_skill_and_each_run_is_graded() -> None:
    c = case("eval-1")
    result = summary(
        [
            rec(c, "with", 1, True, True, duration=2.5),
            rec(c, "with", 2, True, False),
            rec(c, "without", 1, False, False),
            rec(c, "without", 2, False, True, infra="agent_not_started"),
        ]
    )
    files = texts(workspace_files(result, no_folder))
    assert "eval-1/without_skill/run-2/grading.json" not in files  # not made: no run
    grading = files["eval-1/with_skill/run-2/grading.json"]
    assert grading["expectations"] == [
        {"text": "The form is filled", "passed": True, "evidence": "expectation-1: yes"},
        {"text": "names-ada", "passed": False, "evidence": "names-ada: no"},
    ]
    assert grading["summary"] == {"passed": 1, "failed": 1, "total": 2, "pass_rate": 0.5}
    timing = files["eval-1/with_skill/run-1/timing.json"]
    assert timing["total_duration_seconds"] == 2.5 and timing["duration_ms"] == 2500
    assert "total_tokens" not in timing  # unknown: not a zero
    meta = files["eval-1/eval_metadata.json"]
    assert meta == files["eval-1/with_skill/eval_metadata.json"]  # where the viewer looks
    assert meta["eval_id"] == 1 and meta["prompt"] == "Prompt of eval-1"
    assert meta["assertions"] == ["The form is filled", "names-ada"]
    assert files["eval-1/with_skill/run-1/outputs/answer.md"] == "Paris."


def test_the_benchmark_counts_graded_runs_only_and_says_which_were_left_out() -> None:
    c = case("eval-1")
    result = summary(
        [
            rec(c, "with", 1, True, True, duration=4.0),
            rec(c, "with", 2, True, False, duration=2.0),
            rec(c, "with", 3, False, False, infra="auth"),
            rec(c, "without", 1, False, False, duration=1.0),
            rec(c, "without", 2, True, False, duration=1.0),
        ]
    )
    doc = benchmark(result)
    assert [(r["configuration"], r["run_number"]) for r in doc["runs"]] == [
        ("with_skill", 1), ("with_skill", 2), ("without_skill", 1), ("without_skill", 2),
    ]  # fmt: skip
    summary_ = doc["run_summary"]
    assert list(summary_) == ["with_skill", "without_skill", "delta"]
    assert summary_["with_skill"]["pass_rate"] == {
        "mean": 0.75, "stddev": 0.3536, "min": 0.5, "max": 1.0,
    }  # fmt: skip
    assert summary_["without_skill"]["pass_rate"]["mean"] == 0.25
    assert summary_["delta"] == {"pass_rate": "+0.50", "time_seconds": "+2.0", "tokens": "+0"}
    assert doc["metadata"]["evals_run"] == [1]
    assert doc["metadata"]["runs_per_configuration"] == 2
    assert any(n.startswith("Eval 1 (eval-1): Δ +0.50 [") for n in doc["notes"])
    assert any("1 run(s) could not be made (auth 1)" in n for n in doc["notes"])


def test_a_verdict_the_false_discovery_rate_withdrew_is_said_so() -> None:
    from dataclasses import replace

    from pytest_plugin_evals.reporting.skill_creator_benchmark import case_note
    from pytest_plugin_evals.stats import Decision

    c = case("eval-2")
    result = summary([rec(c, "with", 1, True, True), rec(c, "without", 1, False, False)])
    withdrawn = Decision("inconclusive", "better", 0.03, fdr_withdrawn=True, unadjusted="better")
    found = replace(result.cases[0].aggregates, delta_decision=withdrawn)
    note = case_note(replace(result.cases[0], aggregates=found), 2)
    assert note is not None and note.startswith("Eval 2 (eval-2): Δ +1.00 [")
    assert note.endswith("inconclusive (better alone, not beyond the false discovery rate)")


def test_stats_are_skill_creators() -> None:
    # aggregate_benchmark.calculate_stats: sample standard deviation, rounded to 4 places.
    assert stats([1.0, 0.0, 0.5]) == {"mean": 0.5, "stddev": 0.5, "min": 0.0, "max": 1.0}
    assert stats([0.25]) == {"mean": 0.25, "stddev": 0.0, "min": 0.25, "max": 0.25}


def test_an_ab_session_is_new_and_old_skill() -> None:
    c = case("eval-1")
    result = summary([rec(c, "with", 1, True, True), rec(c, "baseline", 1, False, True)])
    names = {f.path.as_posix() for f in workspace_files(result, no_folder)}
    assert "eval-1/new_skill/run-1/grading.json" in names
    assert "eval-1/old_skill/run-1/grading.json" in names
    assert list(benchmark(result)["run_summary"]) == ["new_skill", "old_skill", "delta"]


def test_trigger_queries_are_run_eval_results_without_the_errors(tmp_path: Path) -> None:
    skill = tmp_path / "pdf"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: pdf\ndescription: >\n  Fill PDF\n  forms.\n---\n")
    spec = GraderSpec(
        "skill-fired", "skill_fired", {"skill": "pdf", "folder": "pdf", "should_trigger": True}
    )
    path = skill / "evals" / "trigger_eval.json"
    fired = Verdict("skill-fired", True, "pdf fired")

    def query(n: int) -> Case:
        return Case(
            name=f"trigger-pdf-0{n}", prompt=f"query {n}", source="trigger_eval", path=path,
            dir=path.parent, suite_root=path.parent, graders=(spec,), runs=2,
        )  # fmt: skip

    def made(c: Case, n: int, calls: int, **kw: Any) -> Any:
        record = run_record(c, "with", n, [fired], two_arm=False, **kw)
        from dataclasses import replace

        from pytest_plugin_evals.model import ToolCallBrief

        brief = (ToolCallBrief("Skill", '{"skill":"pdf"}'),) * calls
        return replace(record, result=replace(record.result, tool_call_list=brief))

    result = summary(
        [
            made(query(1), 1, 1), made(query(1), 2, 0), made(query(1), 3, 0, infra="auth"),
            made(query(2), 1, 0, infra="auth"),
        ],
        ablation="none",
    )  # fmt: skip
    [(name, doc)] = trigger_documents(result)
    assert name == "pdf" and doc["skill_name"] == "pdf"
    assert doc["description"] == "Fill PDF forms."
    assert doc["results"] == [
        {"query": "query 1", "should_trigger": True, "trigger_rate": 0.5, "triggers": 1,
         "runs": 2, "pass": True, "errors": 1},
    ]  # fmt: skip
    assert doc["summary"] == {"total": 1, "passed": 1, "failed": 0}
    assert len(doc["notes"]) == 2  # the errors, and the query with no run made
    files = texts(workspace_files(result, no_folder))
    assert set(files) == {"triggers/pdf.json"}  # trigger queries are not evals


def test_outputs_are_one_level_inert_and_never_the_answer() -> None:
    kept = [PurePosixPath(p) for p in ("answer.md", "docs/notes.md", ".envrc.inert", "a.txt")]
    named = dict(output_names(kept))
    assert named == {
        kept[0]: "file-answer.md",
        kept[1]: "docs__notes.md",
        kept[2]: ".envrc.inert",
        kept[3]: "a.txt",
    }


def kept_run(tmp_path: Path, c: Case) -> Path:
    folder = run_folder(tmp_path / "results" / "runs", c, "with", 1)
    (folder / "files" / "docs").mkdir(parents=True)
    (folder / "files" / "docs" / "notes.md").write_text("notes")
    return folder


def test_a_runs_kept_files_are_its_outputs(tmp_path: Path) -> None:
    c = case("eval-1")
    folder = kept_run(tmp_path, c)
    result = summary([rec(c, "with", 1, True, True)], ablation="none")
    records = result.cases[0].with_runs
    # The controller's CaseInfo finds the folder the worker's Case kept the run in.
    assert case_key(records[0].case) == case_key(c)
    iteration = write_workspace(
        tmp_path / "ws", workspace_files(result, lambda r: run_folder(
            tmp_path / "results" / "runs", r.case, r.arm, r.run, r.agent))
    )  # fmt: skip
    assert iteration == tmp_path / "ws" / "iteration-1"
    out = iteration / "eval-1" / "with_skill" / "run-1" / "outputs"
    assert (out / "docs__notes.md").read_text() == "notes"
    assert sorted(p.name for p in out.iterdir()) == ["answer.md", "docs__notes.md", "metrics.json"]
    assert (iteration / INERT_MARKER).is_file()
    again = write_workspace(tmp_path / "ws", workspace_files(result, no_folder))
    assert again.name == "iteration-2"  # the earlier iteration is kept as it was
    assert (out / "docs__notes.md").is_file()
    assert folder.is_dir()


@pytest.mark.parametrize("hostile", ["symlink", "hardlink", "too-large"])
def test_a_hostile_kept_file_is_left_out(tmp_path: Path, hostile: str) -> None:
    c = case("eval-1")
    folder = kept_run(tmp_path, c)
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    files = folder / "files"
    if hostile == "symlink":
        (files / "link.txt").symlink_to(secret)
    elif hostile == "hardlink":
        os.link(secret, files / "link.txt")
    result = summary([rec(c, "with", 1, True, True)], ablation="none")
    plan = workspace_files(result, lambda r: folder)
    if hostile == "too-large":
        big = files / "big.bin"
        with big.open("wb") as fh:
            fh.truncate(MAX_RUN_BYTES + 1)
        plan = workspace_files(result, lambda r: folder)
    iteration = write_workspace(tmp_path / "ws", plan)
    written = [p for p in iteration.rglob("*") if p.is_file()]
    assert all(b"SECRET" not in p.read_bytes() for p in written)
    assert not any(p.is_symlink() for p in iteration.rglob("*"))
    assert not (iteration / "eval-1" / "with_skill" / "run-1" / "outputs" / "big.bin").exists()
