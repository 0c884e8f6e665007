"""Merging shards' results folders: one re-summarized result, refusals, the gate's status."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.model import Case, GraderSpec, PluginInfo, Verdict
from pytest_plugin_evals.records import LoadErrorRecord
from pytest_plugin_evals.reporting.document import document_json, dumps_document
from pytest_plugin_evals.reporting.merge import (
    MISSING_SHARDS,
    MergeError,
    ShardResults,
    check,
    exit_status,
    gate_lines,
    merge,
    read_shard,
    write,
)
from pytest_plugin_evals.reporting.result import NotStarted
from pytest_plugin_evals.shards import ShardCase, ShardPlan
from pytest_plugin_evals.util.inert import is_inert
from tests.helpers import run_record, skipped_record, summary

ROOT = Path("/suite/evals")
PLUGIN = PluginInfo("release-kit", "1.2.0", Path("/suite"))
GRADERS = (GraderSpec("answer", "regex", {"pattern": "paris", "target": "last_message"}),)
SETTINGS = {"threshold": 0.5, "ablation": "auto", "agent": "cmd:agent", "runs": 2}


def case(name: str) -> Case:
    where = ROOT / name
    return Case(
        name=name,
        prompt=f"Prompt of {name}",
        source="prose",
        path=where / "prompt.md",
        dir=where,
        suite_root=ROOT,
        graders=GRADERS,
        runs=2,
    )


CASES = {name: case(name) for name in ("alpha", "beta", "gamma", "delta")}
#: Which shard each case went to.
SPLIT = {"alpha": 1, "beta": 2, "gamma": 1, "delta": 2}
#: case -> arm -> the runs' verdicts (True: the answer grader passed).
PASSES = {
    "alpha": {"with": [True, True], "without": [False, False]},
    "beta": {"with": [True, False], "without": [False, True]},
    "gamma": {"with": [False, False], "without": [False, False]},
    "delta": {"with": [True, True], "without": [True, False]},
}


def records_of(name: str) -> list[Any]:
    return [
        run_record(
            CASES[name],
            arm,
            n,
            [Verdict("answer", passed, "ok" if passed else "no")],
            plugin=PLUGIN,
            duration=0.5 * n,
        )
        for arm, runs in PASSES[name].items()
        for n, passed in enumerate(runs, start=1)
    ]


def plan(index: int, total: int = 2, **kw: Any) -> ShardPlan:
    cases = tuple(
        ShardCase(f"evals/{n}::{n}", n, f"{n}-0000abcd", 4, 4000, SPLIT.get(n, total))
        for n in sorted(CASES)
    )
    options: dict[str, Any] = dict(
        index=index, total=total, weights="runs", cases=cases, version="0.1.0", settings=SETTINGS
    )
    options.update(kw)
    return ShardPlan(**options)


def shard_folder(
    root: Path, index: int, *, total: int = 2, records: list[Any] | None = None, **kw: Any
) -> Path:
    """A shard's results folder: its document, and a recorded run for each of its runs."""
    folder = root / f"shard-{index}"
    if records is None:
        records = [r for n in sorted(CASES) if SPLIT[n] == index for r in records_of(n)]
    moved = []
    for record in records:
        if hasattr(record, "result"):
            run = folder / "runs" / f"{record.case.name}-0000abcd" / f"{record.arm}-{record.run}"
            run.mkdir(parents=True)
            (run / "trace.jsonl").write_text("{}\n", encoding="utf-8")
            (run / "meta.json").write_text('{"finalMessage": "x"}', encoding="utf-8")
            record = replace(
                record, result=replace(record.result, trace_path=str(run / "trace.jsonl"))
            )
        moved.append(record)
    shard_kw = {k: kw.pop(k) for k in list(kw) if k in ("version", "settings", "cases", "weights")}
    result = summary(moved, threshold=0.5, agent="cmd:agent", **kw)
    result = replace(result, shard=plan(index, total, **shard_kw))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "aggregate-result.json").write_text(dumps_document(result), encoding="utf-8")
    return folder


def shards(root: Path, *indexes: int, **kw: Any) -> list[ShardResults]:
    return [read_shard(shard_folder(root, i, **kw)) for i in indexes]


def numbers(doc: dict[str, Any]) -> dict[str, Any]:
    """Each case's aggregates and verdicts, without what depends on where runs are kept."""
    return {
        c["name"]: (
            c["aggregates"],
            {arm: [(r["score"], r["graders"]) for r in runs] for arm, runs in c["arms"].items()},
        )
        for c in doc["cases"]
    }


def test_the_merge_is_the_summary_of_every_run(tmp_path: Path) -> None:
    given = shards(tmp_path, 2, 1)
    check(given)
    merged = merge(given)
    every = [r for n in sorted(CASES) for r in records_of(n)]
    whole = document_json(summary(every, threshold=0.5, agent="cmd:agent"))
    doc = document_json(merged.result)
    assert numbers(doc) == numbers(whole)
    for key in ("casesTotal", "casesPassed", "overallScore", "meanDelta", "meanDeltaInterval"):
        assert doc["aggregates"][key] == whole["aggregates"][key], key
    assert doc["aggregates"]["runsTotal"] == 16
    assert not doc["partial"]
    assert [(s["index"], s["cases"]) for s in doc["shards"]] == [
        (1, ["alpha", "gamma"]),
        (2, ["beta", "delta"]),
    ]
    assert doc["suite"]["concurrency"] == 4  # two shards of two workers
    assert "shard" not in doc
    # gamma scores 0 with the plugin: below 0.5.
    assert exit_status(merged.result) == 1
    assert gate_lines(merged)[-1] == "1 of 4 case(s) below the threshold 0.50: gamma (0.00)"
    assert gate_lines(merged)[0] == "merged 2 of 2 shard(s): 1/2 (2 case(s)), 2/2 (2 case(s))"


def test_a_lower_threshold_given_to_the_merge_is_its_gate(tmp_path: Path) -> None:
    merged = merge(shards(tmp_path, 1, 2), threshold=0.0)
    assert merged.result.threshold == 0.0
    assert merged.result.aggregates.threshold_met
    assert exit_status(merged.result) == 0


def test_a_missing_shard_makes_the_merge_partial_and_names_its_cases(tmp_path: Path) -> None:
    given = shards(tmp_path, 1, total=3)
    merged = merge(given, threshold=0.0)
    result = merged.result
    assert merged.missing_shards == (2, 3)
    assert [c.name for c in merged.missing_cases] == ["beta", "delta"]
    assert (result.partial, result.partial_reason) == (True, MISSING_SHARDS)
    assert result.not_started == (
        NotStarted("evals/beta::beta", "beta", 4),
        NotStarted("evals/delta::delta", "delta", 4),
    )
    assert result.aggregates.cases_total == 4
    assert not result.aggregates.threshold_met
    assert exit_status(result) == 2
    assert gate_lines(merged)[-1].startswith(
        "missing shard(s) 2/3, 3/3: 2 case(s) not run: beta, delta; the result is partial"
    )


def test_load_errors_and_skipped_runs_are_counted_once_each(tmp_path: Path) -> None:
    error = LoadErrorRecord("evals/broken.json::case", "/suite/evals/broken.json", 3, "bad", "")
    one = [*records_of("alpha"), *records_of("gamma"), error]
    two = [*records_of("beta"), skipped_record(CASES["delta"], "with", 1, "missing_secret"), error]
    given = [
        read_shard(shard_folder(tmp_path, 1, records=one)),
        read_shard(shard_folder(tmp_path, 2, records=two)),
    ]
    result = merge(given, threshold=0.0).result
    assert [(e.path, e.line) for e in result.load_errors] == [("/suite/evals/broken.json", 3)]
    assert result.skipped == {"missing_secret": 1}
    assert result.aggregates.runs_skipped == 1
    assert exit_status(result) == 1  # a case file that did not load


@pytest.mark.parametrize(
    ("reason", "status"),
    [("cost_ceiling", 2), ("auth_failed", 2), ("interrupted", 2), ("maxfail", 2)],
)
def test_a_shard_cut_short_makes_the_merge_partial(
    tmp_path: Path, reason: str, status: int
) -> None:
    given = shards(tmp_path, 1)
    given.append(read_shard(shard_folder(tmp_path, 2, partial_reason=reason)))
    merged = merge(given, threshold=0.0)
    assert merged.result.partial_reason == reason
    assert exit_status(merged.result) == status
    assert "the result is partial" in gate_lines(merged)[-1]


def test_runs_that_could_not_be_made_fail_the_merge(tmp_path: Path) -> None:
    broken = run_record(CASES["beta"], "with", 1, [], infra="rate_limit", plugin=PLUGIN)
    given = [
        *shards(tmp_path, 1),
        read_shard(shard_folder(tmp_path, 2, records=[*records_of("delta"), broken])),
    ]
    result = merge(given, threshold=0.0).result
    assert result.errors == {"rate_limit": 1}
    assert exit_status(result) == 1


def refusal(given: list[ShardResults], **kw: Any) -> str:
    with pytest.raises(MergeError) as info:
        check(given, **kw)
    text = str(info.value)
    assert "\n" not in text
    return text


def test_shards_of_different_splits_or_given_twice_are_refused(tmp_path: Path) -> None:
    one = read_shard(shard_folder(tmp_path / "a", 1, total=2))
    other = read_shard(shard_folder(tmp_path / "b", 1, total=3))
    assert "different splits: 2 shards in shard 1/2" in refusal([one, other])
    again = read_shard(shard_folder(tmp_path / "c", 1, total=2))
    assert refusal([one, again]).startswith("cannot merge: shard 1/2 is given twice")


def test_shards_of_other_versions_suites_or_settings_are_refused(tmp_path: Path) -> None:
    (one,) = shards(tmp_path / "a", 1)

    def other(**kw: Any) -> ShardResults:
        return read_shard(shard_folder(tmp_path / str(len(list(tmp_path.iterdir()))), 2, **kw))

    assert "different versions of pytest-plugin-evals: '0.1.0'" in refusal(
        [one, other(version="0.2.0")]
    )
    fewer = plan(2).cases[:3]
    assert "different suites or selections of cases: 4 selected case(s)" in refusal(
        [one, other(cases=fewer)]
    )
    text = refusal([one, other(settings={**SETTINGS, "threshold": 0.8})])
    assert text.startswith("cannot merge shards with different --eval-threshold: 0.5 in shard 1/2")
    check([one, other(settings={**SETTINGS, "threshold": 0.8})], threshold_given=True)
    assert "different --eval-agent: 'cmd:agent'" in refusal(
        [one, other(settings={**SETTINGS, "agent": "claude"})]
    )
    moved = tuple(replace(c, shard=3 - c.shard) for c in plan(2).cases)
    assert "--eval-shard-durations" in refusal([one, other(cases=moved)])


def test_folders_that_are_not_shards_are_refused(tmp_path: Path) -> None:
    with pytest.raises(MergeError, match=r"no aggregate-result\.json there"):
        read_shard(tmp_path)
    with pytest.raises(MergeError, match="no such folder"):
        read_shard(tmp_path / "nope")
    whole = summary(records_of("alpha"))
    (tmp_path / "aggregate-result.json").write_text(dumps_document(whole), encoding="utf-8")
    with pytest.raises(MergeError, match=r"not the results of a shard \(run each shard with"):
        read_shard(tmp_path)
    (tmp_path / "aggregate-result.json").write_text('{"schemaVersion": 9}', encoding="utf-8")
    with pytest.raises(MergeError, match="not a schemaVersion 1 result document"):
        read_shard(tmp_path)


def test_the_merged_folder_keeps_every_run_where_replay_finds_it(tmp_path: Path) -> None:
    given = shards(tmp_path, 1, 2)
    out = tmp_path / "merged"
    merged = merge(given, runs_dir=out / "runs")
    written = write(merged, given, out).paths
    assert written == [out / "aggregate-result.json", out / "report.html"]
    assert is_inert(out / "runs")
    kept = sorted(p.name for p in (out / "runs").iterdir() if p.is_dir())
    assert kept == [f"{n}-0000abcd" for n in sorted(CASES)]
    doc = json.loads(written[0].read_text(encoding="utf-8"))
    traces = [r["tracePath"] for c in doc["cases"] for runs in c["arms"].values() for r in runs]
    assert len(traces) == 16
    assert all(Path(t).is_file() and Path(t).is_relative_to(out / "runs") for t in traces)
    assert 'id="eval-document"' in written[1].read_text(encoding="utf-8")
    # Merged again into the same folder: the earlier runs are replaced, not mixed.
    (out / "runs" / "stale").mkdir()
    write(merged, given, out)
    assert not (out / "runs" / "stale").exists()


def test_the_merge_does_not_write_over_a_shard_or_a_foreign_folder(tmp_path: Path) -> None:
    given = shards(tmp_path, 1, 2)
    merged = merge(given)
    with pytest.raises(MergeError, match="is a shard's folder"):
        write(merged, given, given[0].folder)
    (tmp_path / "mine" / "runs").mkdir(parents=True)
    with pytest.raises(MergeError, match="holds no recorded runs"):
        write(merged, given, tmp_path / "mine")


def test_the_merge_computes_each_graders_split_from_the_runs(tmp_path: Path) -> None:
    """A shard's ``graderSplits`` are never taken: the merged ones are the whole session's."""
    folders = [shard_folder(tmp_path, i) for i in (1, 2)]
    for folder in folders:
        path = folder / "aggregate-result.json"
        doc = json.loads(path.read_text(encoding="utf-8"))
        for entry in doc["cases"]:
            entry["graderSplits"] = [{"name": "answer", "passWith": 99, "flag": "both"}]
        path.write_text(json.dumps(doc), encoding="utf-8")
    merged = document_json(merge([read_shard(f) for f in folders]).result)
    every = [r for n in sorted(CASES) for r in records_of(n)]
    whole = document_json(summary(every, threshold=0.5, agent="cmd:agent"))
    splits = {c["name"]: c["graderSplits"] for c in merged["cases"]}
    assert splits == {c["name"]: c["graderSplits"] for c in whole["cases"]}
    assert [(s["passWith"], s["passWithout"], s["flag"]) for s in splits["alpha"]] == [
        (2, 0, "discriminates")
    ]
    assert [s["flag"] for s in splits["gamma"]] == ["neither"]


def test_the_merge_computes_efficiency_from_the_runs(tmp_path: Path) -> None:
    """Each shard's efficiency is of its own cases; the merged one pools every run, as one
    session of them all would (the plugin's runs cost twice the others here)."""

    def priced(name: str) -> list[Any]:
        return [
            run_record(
                CASES[name], arm, n, [Verdict("answer", True, "ok")], plugin=PLUGIN,
                cost=(0.02 if arm == "with" else 0.01) * (1 + n / 10),
            )
            for arm in ("with", "without")
            for n in (1, 2)
        ]  # fmt: skip

    folders = [
        shard_folder(tmp_path, i, records=[r for n in CASES if SPLIT[n] == i for r in priced(n)])
        for i in (1, 2)
    ]
    shard_docs = [json.loads((f / "aggregate-result.json").read_text("utf-8")) for f in folders]
    assert [d["aggregates"]["efficiency"]["cases"] for d in shard_docs] == [2, 2]
    merged = document_json(merge([read_shard(f) for f in folders]).result)
    every = [r for n in sorted(CASES) for r in priced(n)]
    whole = document_json(summary(every, threshold=0.5, agent="cmd:agent"))
    efficiency = merged["aggregates"]["efficiency"]
    assert efficiency == whole["aggregates"]["efficiency"]
    assert efficiency["cases"] == 4 and efficiency["cost"]["with"]["runs"] == 8
    assert efficiency["cost"]["ratio"] == pytest.approx(2.0, rel=0.01)
    by_name = {c["name"]: c["aggregates"]["efficiency"] for c in merged["cases"]}
    assert by_name == {c["name"]: c["aggregates"]["efficiency"] for c in whole["cases"]}


def test_an_aa_sessions_shards_merge_as_one(tmp_path: Path) -> None:
    """The merge of an A/A session's shards is an A/A result: its calibration recomputed from
    the runs, and gated on its wiring faults only (gamma is below the threshold 0.5)."""
    given = shards(tmp_path, 1, 2, aa=True)
    merged = merge(given)
    doc = document_json(merged.result)
    assert doc["suite"]["aa"] is True
    assert doc["aa"]["casesWithVerdict"] == 4 and doc["aa"]["wiringFaults"] == []
    assert exit_status(merged.result) == 0
    lines = gate_lines(merged)
    assert any(line.startswith("--eval-aa: 0 of 4 case(s) with a verdict called") for line in lines)
    assert not any("below the threshold" in line for line in lines), lines
