"""An agent that reports no price: its runs' cost is unknown, not 0, everywhere it is shown."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pytest_plugin_evals.model import Case
from pytest_plugin_evals.records import RunRecord, run_from_json, run_to_json
from pytest_plugin_evals.reporting.document import document_json
from pytest_plugin_evals.reporting.terminal import summary_lines
from tests.helpers import run_record, summary

ROOT = Path("/suite/evals")
CASE = Case(
    name="priced", prompt="p", source="prose", path=ROOT / "priced" / "prompt.md",
    dir=ROOT / "priced", suite_root=ROOT,
)  # fmt: skip


def unpriced(record: RunRecord) -> RunRecord:
    return replace(record, result=replace(record.result, cost_known=False, cost_usd=0.0))


def test_an_unknown_cost_survives_the_record_and_the_document() -> None:
    known = run_record(CASE, "with", 1, score=1.0)
    unknown = unpriced(run_record(CASE, "without", 1, score=0.0))
    assert "costUnknown" not in run_to_json(known.result)
    assert run_to_json(unknown.result)["costUnknown"] is True
    assert run_from_json(run_to_json(unknown.result)).cost_known is False
    assert run_from_json(run_to_json(known.result)).cost_known is True
    doc = document_json(summary([known, unknown]))
    assert doc["costUnknown"] is True
    assert "costUnknown" not in document_json(summary([known]))


def test_the_terminal_says_the_cost_is_unknown() -> None:
    result = summary([unpriced(run_record(CASE, "with", 1, score=1.0))], ablation="none")
    _, row, footer, *_ = summary_lines(result)
    assert row.split()[-1] == "$0.00+?"  # no notes: the cost is the last cell
    assert footer.endswith("· $0.00 + unknown (agents that report no price)")
    priced = summary([run_record(CASE, "with", 1, score=1.0)], ablation="none")
    assert summary_lines(priced)[2].endswith("· $0.01")
