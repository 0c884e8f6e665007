"""pytest-html integration: agent (under ``--eval-agents``), arm, run and score columns; the
verdicts, tool calls and answer as extras.

Only used when pytest-html is installed and active (``--html``). Everything shown is text:
case names, prompts, explanations and answers come from suites and from a model's output, and
pytest-html puts the table cells and the HTML extras into its page as markup.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.plugin.reported import record_of

if TYPE_CHECKING:
    from pytest_plugin_evals.model import RunResult
    from pytest_plugin_evals.records import RunRecord


class HtmlColumns:
    """Registered on the controller when pytest-html is active. ``several_agents``: the
    session runs every case on several agents (``--eval-agents``), and an Agent column comes
    first."""

    def __init__(self, several_agents: bool = False) -> None:
        self.names = ["Agent"] if several_agents else []
        self.names += ["Arm", "Run", "Score"]

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        for offset, name in enumerate(self.names):
            th = (
                '<th class="sortable" data-column-type="score">Score</th>'
                if name == "Score"
                else f"<th>{name}</th>"
            )
            cells.insert(2 + offset, th)

    def pytest_html_results_table_row(self, report: Any, cells: list[str]) -> None:
        from pytest_plugin_evals.records import RunRecord

        _escape_test_id(report, cells)
        record = record_of(report)
        values = dict.fromkeys(self.names, "")
        if isinstance(record, RunRecord):
            result = record.result
            values.update(
                Agent=record.agent or "",
                Arm=result.arm,
                Run=str(result.run),
                Score="" if result.infra_error else f"{result.score:.2f}",
            )
        for offset, name in enumerate(self.names):
            value = html.escape(values[name])
            cell = f'<td class="col-score">{value}</td>' if name == "Score" else f"<td>{value}</td>"
            cells.insert(2 + offset, cell)  # col-score: sortable


def _escape_test_id(report: Any, cells: list[str]) -> None:
    """Show the test id as text: pytest-html 4 puts ``report.nodeid`` (and ``::when`` for a
    setup or teardown row) into its Test cell as it is, so a case named ``<img onerror=…>``
    would be markup in the page. Only the cell pytest-html built is replaced."""
    test_id = str(report.nodeid)
    if report.when != "call":
        test_id += f"::{report.when}"
    raw = f'<td class="col-testId">{test_id}</td>'
    for index, cell in enumerate(cells):
        if cell == raw:
            cells[index] = f'<td class="col-testId">{html.escape(test_id)}</td>'


def _original(name: str | None) -> str:
    """The agent's own name for a tool, after the canonical one (``Bash (exec_command)``)."""
    return f" <small>({html.escape(name)})</small>" if name else ""


def _error(failed: bool, text: str | None) -> str:
    if not failed:
        return ""
    return f" <em>(error{': ' + html.escape(text) if text else ''})</em>"


def _tool_calls_html(result: RunResult) -> str:
    """The run's tool calls in order (positions from 0, as ``tool_used`` and ``tool_order``
    name them), each name and compact input as text; a failed call is marked."""
    if not result.tool_calls:
        return "<p>Tool calls: none</p>"
    items = "".join(
        f"<li>{'✗ ' if call.is_error else ''}<code>{html.escape(call.name)}</code>"
        f"{_original(call.original_name)} "
        f"{html.escape(call.input)}{_error(call.is_error, call.error)}</li>"
        for call in result.tool_call_list
    )
    more = result.tool_calls - len(result.tool_call_list)
    tail = f"<p>… {more} more not listed</p>" if more > 0 else ""
    return f'<p>Tool calls ({result.tool_calls}):</p><ol start="0">{items}</ol>{tail}'


def extras_for(record: RunRecord) -> list[dict[str, Any]]:
    """The pytest-html extras of one run: its verdicts, its tool calls and its answer."""
    from pytest_html import extras

    from pytest_plugin_evals.model import ANSWER_LIMIT  # loaded in every session: see above

    result = record.result
    rows = []
    for verdict in result.verdicts:
        mark = "✓" if verdict.passed else ("–" if verdict.skipped else "✗")
        note = "" if verdict.scored else " <em>(indicator, not scored)</em>"
        votes = "".join(
            f"<li>{html.escape(v.vote)}: {html.escape(v.reason)}</li>"
            for v in (verdict.judgement.votes if verdict.judgement else ())
        )
        rows.append(
            f"<li>{mark} <b>{html.escape(verdict.name)}</b>{note}: "
            f"{html.escape(verdict.explanation)}" + (f"<ol>{votes}</ol>" if votes else "") + "</li>"
        )
    head = f"<p><b>score {result.score:.2f}</b> · {html.escape(result.arm)} arm · run {result.run}"
    if result.error:
        head += f" · run error: {html.escape(result.error)}"
    if result.aborted is not None:
        head += f" · {html.escape(result.aborted.message)}"
    if result.mocks is not None:
        calls = result.mocks.calls
        head += f" · mocked calls {calls.total} ({calls.errors} errors)"
    for call in result.mock_calls or ():
        rows.append(
            f"<li>{'✗ ' if call.is_error else '→ '}<code>{html.escape(call.tool)}"
            f"</code> {html.escape(json.dumps(call.input, ensure_ascii=False))}: "
            f"{html.escape(call.output)}</li>"
        )
    body = head + "</p><ul>" + "".join(rows) + "</ul>" + _tool_calls_html(result)
    answer = result.answer
    if result.answer_truncated:
        answer += f"\n[… cut at {ANSWER_LIMIT:,} characters]"
    return [extras.html(body), extras.text(answer, name="Answer")]
