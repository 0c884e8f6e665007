"""pytest-html's columns and extras of a run, as text and HTML fragments: the agent (under
``--eval-agents``), arm, run and score cells; the test id cell made text; the verdicts, tool calls
and answer. Everything shown is text: case names, prompts, explanations and answers come from
suites and from a model's output, and pytest-html puts the cells and the HTML extras into its
page as markup. ``plugin.html_extras`` hands them to pytest-html."""

from __future__ import annotations

import html
import json

from pytest_plugin_evals.model import ANSWER_LIMIT, RunResult
from pytest_plugin_evals.records import Record, RunRecord


def column_names(several_agents: bool) -> list[str]:
    """The columns after pytest-html's first two: an Agent column first when the session runs
    every case on several agents."""
    return (["Agent"] if several_agents else []) + ["Arm", "Run", "Score"]


def header_cells(names: list[str]) -> list[str]:
    return [
        '<th class="sortable" data-column-type="score">Score</th>'
        if name == "Score"
        else f"<th>{name}</th>"
        for name in names
    ]


def row_cells(record: Record | None, names: list[str]) -> list[str]:
    """A report's cells of ``names``: empty but for a run's (col-score: sortable)."""
    values = dict.fromkeys(names, "")
    if isinstance(record, RunRecord):
        result = record.result
        values.update(
            Agent=record.agent or "",
            Arm=result.arm,
            Run=str(result.run),
            Score="" if result.infra_error else f"{result.score:.2f}",
        )
    return [
        f'<td class="col-score">{html.escape(values[name])}</td>'
        if name == "Score"
        else f"<td>{html.escape(values[name])}</td>"
        for name in names
    ]


def escape_test_id(nodeid: str, when: str | None, cells: list[str]) -> None:
    """Show the test id as text: pytest-html 4 puts the node id (and ``::when`` for a setup or
    teardown row) into its Test cell as it is, so a case named ``<img onerror=…>`` would be
    markup in the page. Only the cell pytest-html built is replaced."""
    test_id = nodeid if when == "call" else f"{nodeid}::{when}"
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


def run_html(result: RunResult) -> str:
    """A run's HTML extra: its score, arm and run, its verdicts, mocked and tool calls."""
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
    return head + "</p><ul>" + "".join(rows) + "</ul>" + _tool_calls_html(result)


def answer_text(result: RunResult) -> str:
    """A run's answer, as the text extra, saying where it was cut."""
    if result.answer_truncated:
        return result.answer + f"\n[… cut at {ANSWER_LIMIT:,} characters]"
    return result.answer
