"""pytest-html integration: its hooks hand it the columns and extras of a run
(``reporting.html_extras``). Only used when pytest-html is installed and active (``--html``)."""

from __future__ import annotations

from typing import Any

from pytest_plugin_evals.plugin.loaded import record_of
from pytest_plugin_evals.records import RunRecord
from pytest_plugin_evals.reporting import html_extras as shown


class HtmlColumns:
    """Registered on the controller when pytest-html is active. ``several_agents``: the
    session runs every case on several agents (``--eval-agents``), and an Agent column comes
    first."""

    def __init__(self, several_agents: bool = False) -> None:
        self.names = shown.column_names(several_agents)

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells[2:2] = shown.header_cells(self.names)

    def pytest_html_results_table_row(self, report: Any, cells: list[str]) -> None:
        shown.escape_test_id(str(report.nodeid), report.when, cells)
        cells[2:2] = shown.row_cells(record_of(report), self.names)


def extras_for(record: RunRecord) -> list[dict[str, Any]]:
    """The pytest-html extras of one run: its verdicts, its tool calls and its answer."""
    from pytest_html import extras

    answer = extras.text(shown.answer_text(record.result), name="Answer")
    return [extras.html(shown.run_html(record.result)), answer]
