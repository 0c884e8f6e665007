"""The aggregate result document, built from the items' plain records."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.model import Case, GraderSpec, PluginInfo, Verdict
from pytest_plugin_evals.records import LoadErrorRecord
from pytest_plugin_evals.reporting.document import document_json, dumps_document, load_document
from pytest_plugin_evals.scoring import gate
from tests.helpers import run_record, skipped_record, summary

ROOT = Path("/suite/evals")
ROOT_S = str(ROOT)
PLUGIN = {"name": "release-kit", "version": "1.2.0", "path": "/suite"}
PLUGIN_INFO = PluginInfo("release-kit", "1.2.0", Path("/suite"))
GRADERS = (
    GraderSpec("answer", "regex", {"pattern": "paris", "target": "last_message"}),
    GraderSpec("skill", "tool_used", {"tool": "Skill", "min": 1}),
)


def case(name: str, folder: str | None = None, **kw: Any) -> Case:
    where = ROOT / (folder or name)
    return Case(
        name=name,
        prompt=f"Prompt of {name}",
        source="prose",
        path=where / "prompt.md",
        dir=where,
        suite_root=ROOT,
        graders=GRADERS,
        runs=2,
        **kw,
    )


def record(c: Case, arm: str, n: int, verdicts=(), *, skipped: str | None = None, **kw: Any):
    if skipped is not None:
        return skipped_record(c, arm, n, skipped, two_arm=kw.get("two_arm", True))
    return run_record(c, arm, n, verdicts, plugin=PLUGIN_INFO, **kw)


def ok(name="answer", weight=1.0):
    return Verdict(name, True, f"{name} passed", weight=weight)


def ko(name="answer", weight=1.0, explanation=None, **kw):
    return Verdict(name, False, explanation or f"{name} failed", weight=weight, **kw)


def indicator(passed):
    return Verdict(
        "skill",
        passed,
        f"Skill called {int(passed)}x (expected 1..∞)",
        scored=False,
        with_only=True,
    )


def scores(doc):
    return [(c["name"], c["aggregates"]["score"]) for c in doc["cases"]]


def build(records, **kw):
    return document_json(summary(records, **kw))


LOAD_ERRORS = [
    LoadErrorRecord(
        "evals/b", "evals/b/case.yaml", 2, "case.yaml must be a YAML object", str(ROOT)
    ),
    LoadErrorRecord(
        "evals/a", "evals/a/prompt.md", None, "execution.prompt is required", str(ROOT)
    ),
]

ALPHA, DECOY, GAMMA = case("alpha"), case("decoy"), case("gamma")


def two_arm_records():
    return [
        # alpha: with 1.0, 0.5 (weights 1/1) -> 0.75; without 0.5, 0.0 -> 0.25; delta 0.5
        record(ALPHA, "with", 1, [ok(), ok("style"), indicator(True)]),
        record(ALPHA, "with", 2, [ok(), ko("style"), indicator(True)]),
        record(ALPHA, "without", 1, [ok(), ko("style")]),
        record(ALPHA, "without", 2, [ko(), ko("style")]),
        # decoy: with 0.5, without 1.0 -> delta -0.5
        record(DECOY, "with", 1, [ok(), ko("no-skill", explanation="Skill called 1x")]),
        record(DECOY, "without", 1, [ok(), ok("no-skill")]),
        # gamma: with 0.25 (weights 3 fail / 1 pass), without 0.0 -> delta 0.25
        record(GAMMA, "with", 1, [ko("big", 3), ok("small")]),
        record(GAMMA, "without", 1, [ko("big", 3), ko("small")]),
    ]


def test_shape_keeps_the_reference_field_names():
    doc = build(two_arm_records())
    assert doc["schemaVersion"] == 1
    for key in (
        "startedAt",
        "durationSeconds",
        "costUsd",
        "partial",
        "suite",
        "cases",
        "aggregates",
        "loadErrors",
        "errors",
    ):
        assert key in doc
    assert set(doc["suite"]) >= {"root", "ablation", "threshold", "concurrency", "agent", "plugins"}
    assert doc["suite"]["root"] == str(ROOT)
    assert doc["suite"]["plugins"] == [PLUGIN]
    first = doc["cases"][0]
    for key in (
        "name",
        "dir",
        "source",
        "promptMarkdown",
        "runsPerCase",
        "timeoutSeconds",
        "maxTurns",
        "tags",
        "graders",
        "arms",
        "aggregates",
        "notes",
    ):
        assert key in first
    assert set(first["graders"][0]) >= {"name", "type", "weight", "config"}
    assert set(doc["aggregates"]) >= {
        "casesTotal",
        "casesPassed",
        "overallScore",
        "overallPassRate",
        "meanDelta",
        "thresholdMet",
    }
    run = first["arms"]["with"][0]
    for key in (
        "score",
        "passed",
        "turns",
        "costUsd",
        "judgeCostUsd",
        "durationSeconds",
        "startedAt",
        "error",
        "tracePath",
        "skippedPaidGraders",
        "graders",
    ):
        assert key in run
    json.loads(dumps_document(doc))  # plain JSON all the way down


def test_case_scores_deltas_and_means_by_hand():
    doc = build(two_arm_records())
    by_name = {c["name"]: c["aggregates"] for c in doc["cases"]}
    assert by_name["alpha"]["score"] == 0.75
    assert by_name["alpha"]["passRate"] == 0.5
    assert by_name["alpha"]["scoreWithout"] == 0.25
    assert by_name["alpha"]["passRateWithout"] == 0.0
    assert by_name["alpha"]["delta"] == 0.5
    assert by_name["decoy"]["delta"] == -0.5
    assert by_name["gamma"]["score"] == 0.25
    assert by_name["gamma"]["delta"] == 0.25
    agg = doc["aggregates"]
    assert agg["casesTotal"] == 3
    assert agg["overallScore"] == pytest.approx((0.75 + 0.5 + 0.25) / 3)
    assert agg["overallPassRate"] == pytest.approx((0.5 + 0 + 0) / 3)
    assert agg["meanDelta"] == pytest.approx((0.5 - 0.5 + 0.25) / 3)
    assert agg["overallScoreWithout"] == pytest.approx((0.25 + 1.0 + 0.0) / 3)
    assert doc["costUsd"] == 0.08
    assert doc["partial"] is False and "partialReason" not in doc


def test_the_prediction_interval_of_a_new_case():
    """``newCaseDeltaInterval``: Δ̄ ± t(0.975, C−1) · s · √(1 + 1/C) over the cases' Δ
    (scipy's t), clipped to [-1, 1] — the answer for "a case like these", beside the mean's."""
    from scipy import stats as sp

    records = [
        run_record(case(name), arm, n, score=s)
        for name, scores in {"a": (0.9, 0.5), "b": (0.8, 0.6), "c": (0.7, 0.6)}.items()
        for arm, s in zip(("with", "without"), scores, strict=True)
        for n in (1, 2)
    ]
    agg = build(records)["aggregates"]
    deltas = [0.4, 0.2, 0.1]
    half = sp.t.ppf(0.975, 2) * sp.tstd(deltas) * (1 + 1 / 3) ** 0.5
    mean = sum(deltas) / 3
    assert agg["newCaseDeltaInterval"] == [
        pytest.approx(max(-1.0, mean - half), abs=1e-9),
        pytest.approx(min(1.0, mean + half)),
    ]
    one = build([run_record(case("a"), arm, 1, score=0.5) for arm in ("with", "without")])
    assert one["aggregates"]["newCaseDeltaInterval"] is None  # one case: no spread to go by


def test_threshold_decides_case_passes_and_the_gate():
    doc = build(two_arm_records(), threshold=0.5)
    passed = {c["name"]: c["aggregates"]["passed"] for c in doc["cases"]}
    assert passed == {"alpha": True, "decoy": True, "gamma": False}
    assert doc["aggregates"]["casesPassed"] == 2
    assert doc["aggregates"]["thresholdMet"] is False
    assert gate(scores(doc), 0.5).below == ["gamma"]
    assert gate(scores(doc), 0.25).met is True
    assert build(two_arm_records(), threshold=0.25)["aggregates"]["thresholdMet"] is True


def test_single_arm_runs_go_under_with_and_there_is_no_without():
    records = [
        record(ALPHA, "single", 1, [ok(), ko("skill")], two_arm=False),
        record(ALPHA, "single", 2, [ok(), ok("skill")], two_arm=False),
    ]
    doc = build(records, ablation="none")
    (c,) = doc["cases"]
    assert list(c["arms"]) == ["with"]
    assert [r["run"] for r in c["arms"]["with"]] == [1, 2]
    assert c["aggregates"]["score"] == 0.75
    assert c["aggregates"]["passRate"] == 0.5
    for key in ("scoreWithout", "passRateWithout", "delta"):
        assert key not in c["aggregates"]
    assert "meanDelta" not in doc["aggregates"]


def test_two_arm_case_without_baseline_runs_keeps_an_empty_without_arm():
    doc = build([record(ALPHA, "with", 1, [ok()])])
    (c,) = doc["cases"]
    assert c["arms"]["without"] == []
    assert c["aggregates"]["score"] == 1.0
    assert "delta" not in c["aggregates"]


def test_infra_error_runs_are_kept_but_out_of_every_score_and_make_it_partial():
    records = [
        record(ALPHA, "with", 1, [ok()]),
        record(ALPHA, "with", 2, infra="rate_limit", error="API Error: 429", cost=0.002),
        record(ALPHA, "without", 1, [ko()]),
        record(ALPHA, "without", 2, infra="rate_limit", error="API Error: 429"),
        record(DECOY, "with", 1, infra="agent_start", error="claude: not found", cost=0.0),
    ]
    doc = build(records)
    alpha, decoy = doc["cases"]
    assert len(alpha["arms"]["with"]) == 2 and len(alpha["arms"]["without"]) == 2
    assert alpha["aggregates"]["score"] == 1.0 and alpha["aggregates"]["passRate"] == 1.0
    assert alpha["aggregates"]["scoreWithout"] == 0.0
    assert alpha["aggregates"]["delta"] == 1.0
    assert decoy["aggregates"]["score"] is None
    assert decoy["aggregates"]["passed"] is False
    assert doc["partial"] is True
    assert doc["partialReason"] == "infra_errors"
    assert doc["errors"] == {"rate_limit": 2, "agent_start": 1}
    assert doc["aggregates"]["runsNotMade"] == 3
    assert doc["aggregates"]["overallScore"] == 1.0  # the ungraded case has no score to average
    assert doc["costUsd"] == 0.032  # cost counts every run, made or not
    assert doc["aggregates"]["thresholdMet"] is False
    assert gate(scores(doc), 0.8).ungraded == ["decoy"]


def test_a_given_partial_reason_wins():
    doc = build([record(ALPHA, "with", 1, [ok()])], partial_reason="cost_ceiling")
    assert doc["partial"] is True and doc["partialReason"] == "cost_ceiling"
    assert doc["errors"] == {}


def test_skipped_runs_are_not_listed_and_cases_without_runs_are_dropped():
    records = [
        record(ALPHA, "with", 1, [ok()]),
        record(ALPHA, "without", 1, skipped="cost ceiling"),
        record(DECOY, "with", 1, skipped="missing secret OPENAI_KEY"),
    ]
    doc = build(records)
    assert [c["name"] for c in doc["cases"]] == ["alpha"]
    assert doc["cases"][0]["arms"]["without"] == []
    assert doc["aggregates"]["runsSkipped"] == 2
    assert doc["skipped"] == {"cost ceiling": 1, "missing secret OPENAI_KEY": 1}


def test_duplicate_records_are_deduped_by_nodeid_last_wins():
    first = record(ALPHA, "with", 1, [ko()])
    second = record(ALPHA, "with", 1, [ok()])
    doc = build([first, record(ALPHA, "with", 2, [ok()]), second])
    runs = doc["cases"][0]["arms"]["with"]
    assert [r["run"] for r in runs] == [1, 2]
    assert runs[0]["score"] == 1.0
    assert doc["costUsd"] == 0.02


def test_order_does_not_depend_on_arrival():
    records = [*two_arm_records(), *LOAD_ERRORS]
    expected = dumps_document(build(records))
    rng = random.Random(7)
    for _ in range(5):
        shuffled = records[:]
        rng.shuffle(shuffled)
        assert dumps_document(build(shuffled)) == expected


def test_cases_sort_by_directory_then_name_and_runs_by_number():
    zeta = case("zeta", "a-first")
    nested = case("nested", "group/nested")
    records = [
        record(ALPHA, "with", 3, [ok()]),
        record(nested, "with", 1, [ok()]),
        record(ALPHA, "with", 1, [ok()]),
        record(zeta, "with", 1, [ok()]),
        record(ALPHA, "with", 2, [ok()]),
    ]
    doc = build(records)
    assert [(c["name"], c["suiteDir"]) for c in doc["cases"]] == [
        ("zeta", "a-first"),
        ("alpha", "alpha"),
        ("nested", "group/nested"),
    ]
    assert [r["run"] for r in doc["cases"][1]["arms"]["with"]] == [1, 2, 3]


def test_cases_of_one_file_are_told_apart_by_name():
    one = Case(
        name="one",
        prompt="p",
        source="evals_json",
        path=ROOT / "evals.json",
        dir=ROOT,
        suite_root=ROOT,
    )
    two = Case(
        name="two",
        prompt="p",
        source="evals_json",
        path=ROOT / "evals.json",
        dir=ROOT,
        suite_root=ROOT,
    )
    doc = build([record(two, "single", 1, two_arm=False), record(one, "single", 1, two_arm=False)])
    assert [(c["name"], c["suiteDir"]) for c in doc["cases"]] == [("one", "."), ("two", ".")]
    assert [c["dir"] for c in doc["cases"]] == ["evals", "evals"]  # the plugin's folder
    assert doc["cases"][0]["aggregates"]["score"] == 1.0  # no checks + run ok = pass


def test_load_errors_are_listed_sorted():
    doc = build(LOAD_ERRORS)
    assert doc["loadErrors"] == [
        {"path": "evals/a/prompt.md", "line": None, "message": "execution.prompt is required"},
        {"path": "evals/b/case.yaml", "line": 2, "message": "case.yaml must be a YAML object"},
    ]
    assert doc["cases"] == []
    assert doc["aggregates"]["casesTotal"] == 0
    assert doc["aggregates"]["overallScore"] is None


def test_filters_and_root_are_recorded():
    doc = build(
        [record(ALPHA, "with", 1, [ok()])],
        root="/elsewhere",
        case_filter="al*",
        tag_filters=["smoke"],
    )
    assert doc["suite"]["root"] == "/elsewhere"
    assert doc["suite"]["caseFilter"] == "al*"
    assert doc["suite"]["tagFilters"] == ["smoke"]
    assert "caseFilter" not in build([])["suite"]


def test_delta_is_left_out_when_arms_were_graded_under_different_rules():
    records = [
        record(ALPHA, "with", 1, [ok()], skipped_paid=True),
        record(ALPHA, "without", 1, [ko()]),
    ]
    agg = build(records)["cases"][0]["aggregates"]
    assert "delta" not in agg
    assert agg["scoreWithout"] == 0.0
    assert "deltaNote" in agg


def test_float_noise_is_stripped_from_sums():
    records = [
        record(ALPHA, "with", 1, [ok()], cost=0.1),
        record(ALPHA, "with", 2, [ok()], cost=0.2),
    ]
    assert build(records)["costUsd"] == 0.3


# --- NOTES ------------------------------------------------------------------------------------


def notes_of(records):
    return build(records)["cases"][0]["notes"]


def test_notes_first_with_arm_run_error_wins():
    records = [
        record(ALPHA, "with", 2, [ok()], error="timed out after 300s"),
        record(
            ALPHA, "with", 1, [ko("big", 5)], error="exit 1: Reached maximum number of turns (2)"
        ),
        record(ALPHA, "without", 1, [ko()], error="without error"),
    ]
    assert notes_of(records) == "exit 1: Reached maximum number of turns (2)"


def test_notes_show_an_infra_error_with_its_kind():
    records = [record(ALPHA, "with", 1, infra="rate_limit", error="Request rejected (429)")]
    assert notes_of(records) == "error: rate_limit: Request rejected (429)"
    assert notes_of([record(ALPHA, "with", 1, infra="auth")]) == "error: auth"


def test_notes_highest_weight_failing_scored_grader_first_wins_ties():
    records = [
        record(ALPHA, "with", 1, [ko("small", 1), ko("first-big", 2, "first"), ok("ok", 9)]),
        record(ALPHA, "with", 2, [ko("second-big", 2, "second")]),
    ]
    assert notes_of(records) == "first-big: first"


def test_notes_ignore_indicators_skipped_graders_and_the_without_arm():
    records = [
        record(
            ALPHA,
            "with",
            1,
            [
                ok(),
                indicator(False),
                Verdict("judge", None, "not judged", weight=9, skipped="cost ceiling"),
            ],
        ),
        record(ALPHA, "without", 1, [ko("answer", 5)]),
    ]
    assert notes_of(records) is None
    records.append(record(ALPHA, "with", 2, [ko("style", 0.5, "too long")]))
    assert notes_of(records) == "style: too long"


def test_a_document_reads_back_into_the_same_document():
    records = [*two_arm_records(), *LOAD_ERRORS]
    doc = build(records)
    again = document_json(load_document(json.loads(dumps_document(doc))))
    assert again == doc


@pytest.mark.parametrize(
    ("plugin_path", "folder", "expected"),
    [
        ("/suite", "group/alpha", "evals/group/alpha"),  # as the reference writes it
        ("/elsewhere", "group/alpha", "group/alpha"),  # outside the plugin: the suite's
        (None, "alpha", "alpha"),  # no plugin: the suite's
    ],
)
def test_dir_is_the_references_and_suite_dir_ours(
    plugin_path: str | None, folder: str, expected: str
) -> None:
    c = Case(
        name="alpha", prompt="p", source="prose", path=Path("/suite/evals", folder, "prompt.md"),
        dir=Path("/suite/evals", folder), suite_root=Path("/suite/evals"), graders=GRADERS,
    )  # fmt: skip
    plugin = None if plugin_path is None else PluginInfo("p", None, Path(plugin_path))
    doc = document_json(summary([run_record(c, "with", 1, [ok()], plugin=plugin)]))
    (written,) = doc["cases"]
    assert written["dir"] == expected and written["suiteDir"] == folder
    # Read back, the case is in the same folder (and a reference document's dir, relative to
    # its suite root, the plugin's folder, reads the same).
    (back,) = load_document(doc).cases
    assert str(back.case.dir) == f"/suite/evals/{folder}"
    reference = {"schemaVersion": 1, "suite": {"root": "/suite"},
                 "cases": [{"name": "alpha", "dir": f"evals/{folder}"}]}  # fmt: skip
    (theirs,) = load_document(reference).cases
    assert str(theirs.case.dir) == f"/suite/evals/{folder}"
