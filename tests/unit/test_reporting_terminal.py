"""The terminal summary table: golden text for two arms and one arm, and the NOTES column."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.model import Case, Verdict
from pytest_plugin_evals.records import LoadErrorRecord
from pytest_plugin_evals.reporting.terminal import cut, summary_lines
from tests.helpers import run_record, summary

GOLDEN = Path(__file__).parent / "golden"
ROOT = Path("/suite/evals")


def case(name: str) -> Case:
    return Case(
        name=name,
        prompt="p",
        source="prose",
        path=ROOT / name / "prompt.md",
        dir=ROOT / name,
        suite_root=ROOT,
    )


def record(c: Case, arm: str, n: int, verdicts=(), *, score: float, **kw: Any):
    return run_record(
        c, arm, n, verdicts, score=score, two_arm=arm != "single", nodeid=f"{c.name}[{arm}-{n}]",
        duration=None, turns=0, answer="", **kw,
    )  # fmt: skip


def build(records, ablation="with-without", **kw):
    return summary(records, duration_seconds=7.2, threshold=1.0, ablation=ablation,
                   concurrency=1, **kw)  # fmt: skip


def check_golden(name: str, lines: list[str]) -> None:
    path = GOLDEN / name
    text = "\n".join(lines) + "\n"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


DECOY, SUGGESTS, SKILLED = case("decoy"), case("suggests-version"), case("skill-fires")
NO_SKILL = Verdict("no-skill", False, "Skill called 1x (expected 0..0)")


def two_arm_document():
    long = "pattern not found in last_message " + "because the answer wandered off " * 4
    return build(
        [
            record(
                DECOY, "with", 1, [Verdict("answer", True, "matched paris"), NO_SKILL], score=0.5
            ),
            record(DECOY, "without", 1, [Verdict("answer", True, "matched paris")], score=1.0),
            record(SUGGESTS, "with", 1, [Verdict("version", True, "matched 1.4.1")], score=1.0),
            record(SUGGESTS, "with", 2, [Verdict("version", False, long)], score=0.0, cost=0.004),
            record(SUGGESTS, "without", 1, [Verdict("version", False, "nope")], score=0.0),
            record(SUGGESTS, "without", 2, [Verdict("version", False, "nope")], score=0.0),
            record(SKILLED, "with", 1, [Verdict("answer", True, "matched")], score=1.0),
            record(SKILLED, "without", 1, score=0.0, infra="rate_limit", error="API Error: 429"),
        ],
        partial_reason=None,
    )


def test_two_arm_table_golden():
    lines = summary_lines(two_arm_document(), report_paths=["out/result.json", "out/report.html"])
    check_golden("terminal_two_arm.txt", lines)


def test_one_arm_table_golden():
    doc = build(
        [
            record(case("alpha"), "single", 1, [Verdict("answer", True, "ok")], score=1.0),
            record(case("beta"), "single", 1, score=0.5, error="timed out after 300s"),
            record(case("beta"), "single", 2, [Verdict("a", False, "missing")], score=0.0),
            record(case("beta"), "single", 3, [Verdict("a", True, "ok")], score=1.0),
            LoadErrorRecord(
                "evals/bad", "evals/bad/case.yaml", 1, "case.yaml must be a YAML object", str(ROOT)
            ),
        ],
        ablation="none",
    )
    check_golden("terminal_one_arm.txt", summary_lines(doc))


def test_two_arm_columns_and_footer():
    header, *rows = summary_lines(two_arm_document())
    assert header.split() == ["CASE", "WITH", "W/OUT", "Δ", "RUNS", "COST", "NOTES"]
    decoy = next(r for r in rows if r.startswith("decoy "))
    assert decoy.split()[1:4] == ["0.50", "1.00", "-0.50"]
    assert decoy.split()[6:8] == ["2", "$0.02"]
    assert decoy.endswith("no-skill: Skill called 1x (expected 0..0)")
    # The W/OUT of a case whose baseline runs could not be made is missing, not 0.
    skilled = next(r for r in rows if r.startswith("skill-fires "))
    assert skilled.split()[1:4] == ["1.00", "—", "—"]
    # (-0.5 + 0.5) / 2, with the cluster-robust interval of two cases' Δ (clipped)
    assert "3 case(s) · mean Δ +0.00 [-1.00, +1.00] · 7s · $0.07" in rows
    # Both arms of the decoy agree within themselves: its Δ still has an interval.
    assert decoy.split()[4:6] == ["[-0.95,", "+0.41]"]


def test_columns_line_up_on_the_widest_name():
    header, *rows = summary_lines(two_arm_document())
    at = header.index("WITH")
    assert at == len("suggests-version") + 2
    for row in rows[:3]:
        assert row[at - 1] == " " and row[at] != " "


def test_one_arm_headline_and_pass_rate():
    doc = build(
        [
            record(case("alpha"), "single", 1, score=1.0),
            record(case("alpha"), "single", 2, score=0.5),
            record(case("alpha"), "single", 3, score=1.0),
        ],
        ablation="none",
    )
    header, row, footer, *rest = summary_lines(doc)
    assert header.split() == ["CASE", "SCORE", "PASS%", "RUNS", "COST", "NOTES"]
    # Scores 1, 0.5, 1: Wilson's interval with 2.5 of 3 as the count.
    assert row.split() == ["alpha", "0.83", "[0.31,", "0.98]", "67%", "3", "$0.03"]
    assert footer == "1 case(s) · score 0.83 · 7s · $0.03"
    assert rest == [
        "unstable: 1 case(s) whose runs disagree within an arm: alpha (with)",
        # The interval spans 0.67 with 3 runs; Wilson's at a mean of 0.83 is 0.5 wide at 8.
        "wide intervals: the score of 1 case(s) spans more than 0.5 (alpha) — about "
        "--eval-runs 8 would narrow them",
    ]


def test_notes_are_cut_to_eighty_characters():
    header, *rows = summary_lines(two_arm_document())
    suggests = next(r for r in rows if r.startswith("suggests-version"))
    notes = suggests[header.index("NOTES") :]
    assert len(notes) == 80
    assert notes.endswith("…")
    assert notes.startswith("version: pattern not found")


def test_cut_keeps_short_text_and_flattens_lines():
    assert cut("short") == "short"
    assert cut("a\nb  c") == "a b c"
    assert cut("x" * 80) == "x" * 80
    assert cut("x" * 81) == "x" * 79 + "…"


def test_partial_and_load_error_lines():
    doc = build(
        [
            record(DECOY, "with", 1, score=0.0, infra="rate_limit", error="429"),
            record(DECOY, "with", 2, score=0.0, infra="agent_start", error="no binary"),
            record(DECOY, "with", 3, score=0.0, infra="rate_limit", error="429"),
        ]
    )
    doc = replace(doc, load_errors=(LoadErrorRecord("", "a", None, "x", ""),) * 2)
    lines = summary_lines(doc)
    assert (
        "partial: 3 run(s) could not be made (rate_limit 2, agent_start 1)"
        " — kept out of the scores" in lines
    )
    assert "2 case files could not be loaded — see the errors above" in lines
    row = lines[1]
    assert row.split()[1:4] == ["—", "—", "—"]
    assert row.endswith("error: rate_limit: 429")


def test_partial_reason_line_without_infra_errors():
    doc = build([record(DECOY, "with", 1, score=1.0)], partial_reason="cost_ceiling")
    doc = replace(doc, aggregates=replace(doc.aggregates, runs_skipped=4))
    assert "partial: cost_ceiling · 4 run(s) not started" in summary_lines(doc)


def test_report_paths_are_labelled():
    lines = summary_lines(build([]), report_paths=["r/aggregate-result.json", "r/report.html"])
    assert lines[-2:] == ["JSON: r/aggregate-result.json", "HTML: r/report.html"]


@pytest.mark.parametrize(
    ("seconds", "shown"), [(7.2, "7s"), (59.4, "59s"), (125, "2m05s"), (3725, "1h02m")]
)
def test_durations(seconds, shown):
    doc = build([])
    doc = replace(doc, duration_seconds=seconds)
    assert f"· {shown} ·" in summary_lines(doc)[-1]
