"""pytest-html integration: arm, run and score columns; the answer and verdicts as extras.

Only used when pytest-html is installed and active (``--html``).
"""

from __future__ import annotations

import html
import json
from typing import Any

from .items import PROPERTY


def _record(report: Any) -> dict[str, Any] | None:
    for name, value in getattr(report, "user_properties", ()):
        if name == PROPERTY:
            doc: dict[str, Any] = json.loads(value)
            return doc
    return None


class HtmlColumns:
    """Registered on the controller when pytest-html is active."""

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells.insert(2, "<th>Arm</th>")
        cells.insert(3, "<th>Run</th>")
        cells.insert(4, '<th class="sortable" data-column-type="score">Score</th>')

    def pytest_html_results_table_row(self, report: Any, cells: list[str]) -> None:
        record = _record(report)
        if record is None or record.get("kind") != "run":
            arm = run = score = ""
        else:
            result = record["result"]
            arm, run = str(record["arm"]), str(record["run"])
            score = "" if result.get("infraError") else f"{result['score']:.2f}"
        cells.insert(2, f"<td>{html.escape(arm)}</td>")
        cells.insert(3, f"<td>{html.escape(run)}</td>")
        cells.insert(4, f"<td>{html.escape(score)}</td>")


def extras_for(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The pytest-html extras of one run: its verdicts and its answer."""
    from pytest_html import extras

    if record.get("kind") != "run":
        return []
    result = record["result"]
    rows = []
    for verdict in result.get("graders", []):
        mark = "✓" if verdict["passed"] else ("–" if verdict.get("skipped") else "✗")
        note = "" if verdict.get("scored", True) else " <em>(indicator, not scored)</em>"
        votes = "".join(
            f"<li>{html.escape(str(v.get('vote')))}: {html.escape(str(v.get('reason', '')))}</li>"
            for v in verdict.get("judgeVotes") or []
            if isinstance(v, dict)
        )
        rows.append(
            f"<li>{mark} <b>{html.escape(verdict['name'])}</b>{note}: "
            f"{html.escape(str(verdict['explanation']))}"
            + (f"<ol>{votes}</ol>" if votes else "")
            + "</li>"
        )
    error = result.get("error")
    head = f"<p><b>score {result['score']:.2f}</b> · {record['arm']} arm · run {record['run']}"
    if error:
        head += f" · run error: {html.escape(str(error))}"
    aborted = result.get("aborted")
    if aborted:
        head += (
            f" · aborted by mock {html.escape(str(aborted.get('server')))}/"
            f"{html.escape(str(aborted.get('tool')))}: {html.escape(str(aborted.get('reason')))}"
        )
    calls = (result.get("mocks") or {}).get("calls")
    if calls:
        head += f" · mocked calls {calls.get('total', 0)} ({calls.get('errors', 0)} errors)"
    for call in result.get("mockCalls") or []:
        rows.append(
            f"<li>{'✗ ' if call.get('isError') else '→ '}<code>{html.escape(str(call['tool']))}"
            f"</code> {html.escape(json.dumps(call.get('input'), ensure_ascii=False))}: "
            f"{html.escape(str(call.get('output', '')))}</li>"
        )
    body = head + "</p><ul>" + "".join(rows) + "</ul>"
    answer = result.get("answer") or ""
    if result.get("answerTruncated"):
        answer += "\n[… cut at 4,000 characters]"
    return [extras.html(body), extras.text(answer, name="Answer")]
