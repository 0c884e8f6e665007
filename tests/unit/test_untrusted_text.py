"""Untrusted text stays text: the terminal sanitiser, the failure text of a run, and the cells
and extras the plugin gives pytest-html. (Both HTML pages in a browser: tests/browser/.)"""

from __future__ import annotations

import html
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_plugin_evals.model import (
    Abort,
    Case,
    Judgement,
    JudgeVote,
    MockCall,
    RunResult,
    ToolCallBrief,
    Verdict,
)
from pytest_plugin_evals.plugin.html_extras import HtmlColumns, extras_for
from pytest_plugin_evals.records import RECORD_PROPERTY, RecordError, encode, record_in
from pytest_plugin_evals.reporting.failures import failure_message
from pytest_plugin_evals.reporting.terminal import cut, plain, summary_lines
from tests.helpers import run_record, summary

ROOT = Path("/suite/evals")
HOSTILE = '<img src=x onerror="alert(1)">'
ESCAPES = "\x1b[2J\x1b[H\x1b]0;owned\x07\x1b[31mred\x1b[0m\rover"


def case(name: str) -> Case:
    return Case(
        name=name, prompt="p", source="prose", path=ROOT / "c" / "prompt.md",
        dir=ROOT / "c", suite_root=ROOT,
    )  # fmt: skip


# -- the terminal -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[2Jclear", "clear"),  # CSI: erase the screen
        ("\x1b[1;31mred\x1b[0m", "red"),  # SGR colours
        ("\x1b]0;title\x07after", "after"),  # OSC window title, ended by BEL
        ("\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink, ST
        ("\x1bPq#0;2;0;0;0\x1b\\dcs", "dcs"),  # DCS (sixel)
        ("\x9b2J8-bit", "8-bit"),  # the 8-bit CSI
        ("\x1bcreset", "reset"),  # RIS: reset the terminal
        ("\x1b(0charset", "charset"),  # designate a character set
        ("cut short\x1b[", "cut short"),
        ("lone escape\x1b", "lone escape"),
        ("\x1b]0;no end\nnext", " next"),  # an unended string stops at the line's end
        ("progress\rrewritten", "progress␍rewritten"),
        ("bell\x07 backspace\x08 del\x7f nul\x00", "bell␇ backspace␈ del␡ nul␀"),
        ("c1 \x85 \x9c", "c1 \ufffd \ufffd"),
        ("tab\there", "tab here"),
        ("é 😀 Δ — 日本語 👩‍💻", "é 😀 Δ — 日本語 👩‍💻"),
        ("<b>html is not a terminal's business</b>", "<b>html is not a terminal's business</b>"),
    ],
)
def test_plain_removes_what_a_terminal_would_obey(text: str, shown: str) -> None:
    assert plain(text) == shown


def test_plain_keeps_line_feeds_only_when_asked() -> None:
    assert plain("one\r\ntwo\nthree") == "one two three"
    assert plain("one\r\ntwo\nthree", newlines=True) == "one\ntwo\nthree"
    assert plain("a\rb\n", newlines=True) == "a␍b\n"


def test_plain_leaves_nothing_a_terminal_acts_on() -> None:
    every_control = "".join(chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)])
    shown = plain(f"x{every_control}[31m{ESCAPES}y", newlines=True)
    assert not [c for c in shown if c != "\n" and (ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0)]


def test_cut_is_one_plain_line() -> None:
    assert cut(f"note: {ESCAPES}\nmore") == "note: red␍over more"
    assert cut("\x1b[31m" + "é" * 100) == "é" * 79 + "…"


def test_summary_lines_show_hostile_names_and_notes_as_plain_text() -> None:
    hostile = case(f"evil\x1b[2J\x1b]0;t\x07{HOSTILE}\r")
    bad = Verdict("g\x1b[31m", False, f"expected x, got {ESCAPES}")
    records = [run_record(hostile, "single", 1, [bad], two_arm=False)]
    lines = summary_lines(summary(records, ablation="none"), report_paths=["out\x1b[8m.html"])
    text = "\n".join(lines)
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert lines[1].startswith(f"evil{HOSTILE}␍ ")
    assert "g: expected x, got red␍over" in lines[1]
    assert lines[-1] == "HTML: out.html"


def test_summary_lines_columns_line_up_after_cleaning() -> None:
    records = [
        run_record(case("\x1b[1mbold\x1b[0m"), "single", 1, two_arm=False, score=1.0),
        run_record(case("plain-name"), "single", 1, two_arm=False, score=1.0),
    ]
    header, *rows = summary_lines(summary(records, ablation="none"))[:3]
    starts = {line.index("1.00") for line in rows}
    assert len(starts) == 1 and header.index("SCORE") in starts


def test_failure_message_is_safe_for_a_terminal() -> None:
    result = RunResult(
        arm="single",
        run=1,
        score=0.0,
        error=f"exit 1: {ESCAPES}",
        aborted=Abort("srv", "tool\x1b[2K", "stop\rhere"),
        verdicts=(
            Verdict("answer\x1b[8m", False, f"line one\nline two {ESCAPES}"),
            Verdict("judge", None, "skipped: \x1b]0;t\x07cost ceiling", skipped="cost ceiling"),
        ),
        answer=f"said {ESCAPES}\nbye\x1b[2J",
        tool_calls=1,
        tool_call_list=(ToolCallBrief("Bash\x1b[31m", '{"command":"x\x1b]0;t\x07"}', True),),
    )
    message = failure_message(result)
    assert message.splitlines() == [
        "score 0.00 (run 1, single arm)",
        "run error: exit 1: red␍over",  # the codes are gone, and \r shows
        "aborted by mock srv/tool: stop␍here",
        "✗ answer: line one",
        "line two red␍over",
        "- judge: skipped: cost ceiling",
        "tool calls (1):",
        '  @0 Bash {"command":"x"} ✗ error',
        f"answer ({len(result.answer)} characters):",
        "  said red␍over",
        "  bye",
    ]


# -- pytest-html ---------------------------------------------------------------------------


def pytest_html_cells(test_id: str) -> list[str]:
    """The row cells as pytest-html 4 builds them before calling the row hook."""
    return [
        '<td class="col-result">Failed</td>',
        f'<td class="col-testId">{test_id}</td>',
        '<td class="col-duration">5 ms</td>',
        '<td class="col-links"></td>',
    ]


def test_a_report_s_record_is_read_from_its_property_only() -> None:
    """The record an eval item reported is the one under ``RECORD_PROPERTY`` (a test's own
    properties beside it are not records); what does not read as one is refused."""
    record = run_record(case("c"), "with", 1)
    assert record_in([("owner", "me"), (RECORD_PROPERTY, encode(record))]) == record
    assert record_in([("owner", encode(record))]) is None
    with pytest.raises(RecordError):
        record_in([(RECORD_PROPERTY, '{"kind": "run", "run": "<script>"}')])


def html_report(nodeid: str, when: str = "call", record: Any = None) -> Any:
    props = [(RECORD_PROPERTY, encode(record))] if record is not None else []
    return SimpleNamespace(nodeid=nodeid, when=when, user_properties=props)


def test_the_row_hook_escapes_the_test_id_of_an_eval_item() -> None:
    record = run_record(case(HOSTILE), "single", 1, two_arm=False, score=0.5)
    nodeid = f"evals/{HOSTILE}::{HOSTILE}[1]"
    cells = pytest_html_cells(nodeid)
    HtmlColumns().pytest_html_results_table_row(html_report(nodeid, record=record), cells)
    assert cells == [
        '<td class="col-result">Failed</td>',
        f'<td class="col-testId">{html.escape(nodeid)}</td>',
        "<td>single</td>",
        "<td>1</td>",
        '<td class="col-score">0.50</td>',
        '<td class="col-duration">5 ms</td>',
        '<td class="col-links"></td>',
    ]
    assert "<img" not in "".join(cells)


@pytest.mark.parametrize("when", ["setup", "teardown", "collect"])
def test_the_row_hook_escapes_every_other_row_too(when: str) -> None:
    nodeid = 'tests/test_x.py::test_y[<svg onload="alert(1)">]'
    cells = pytest_html_cells(f"{nodeid}::{when}")
    HtmlColumns().pytest_html_results_table_row(html_report(nodeid, when), cells)
    assert cells[1] == f'<td class="col-testId">{html.escape(f"{nodeid}::{when}")}</td>'
    assert cells[2:5] == ["<td></td>", "<td></td>", '<td class="col-score"></td>']


def test_the_row_hook_leaves_a_test_id_cell_someone_else_built() -> None:
    nodeid = "evals/a::<b>[1]"
    cells = pytest_html_cells(nodeid)
    cells[1] = '<td class="col-testId"><a href="#x">evals/a::&lt;b&gt;[1]</a></td>'
    built = cells[1]
    HtmlColumns().pytest_html_results_table_row(html_report(nodeid), cells)
    assert cells[1] == built


def test_extras_escape_everything_the_run_brought() -> None:
    hostile_case = case(HOSTILE)
    verdicts = [
        Verdict(HOSTILE, False, f"matched {HOSTILE}"),
        Verdict(
            "judge", True, "</li></ul><script>alert(1)</script>", type="llm",
            judgement=Judgement(votes=(JudgeVote("PASS", f"because {HOSTILE}"),)),
        ),
    ]  # fmt: skip
    record = run_record(hostile_case, "single", 1, verdicts, two_arm=False, answer=HOSTILE)
    result = replace(
        record.result,
        error=f"exit 1: {HOSTILE}",
        aborted=Abort("srv", HOSTILE, HOSTILE),
        mock_calls=(MockCall("srv", HOSTILE, {"q": HOSTILE}, f"<svg onload=alert(1)>{HOSTILE}"),),
        tool_calls=2,
        tool_call_list=(
            ToolCallBrief(HOSTILE, f"<svg onload=alert(1)>{HOSTILE}", True),
            ToolCallBrief("Bash", '{"command":"ls"}', original_name=HOSTILE),
        ),
    )
    body, answer = extras_for(replace(record, result=result))
    assert body["format_type"] == "html"
    content = body["content"]
    for marker in ("<img", "<script", "<svg", "</li></ul><script"):
        assert marker not in content
    assert content.count(html.escape(HOSTILE)) >= 9
    # The agent's own name for a tool follows the canonical one, as text.
    assert f"<code>Bash</code> <small>({html.escape(HOSTILE)})</small>" in content
    # The answer is a text extra: pytest-html writes it out as a text/plain file or data: URI.
    assert answer == {
        "name": "Answer",
        "format_type": "text",
        "content": HOSTILE,
        "mime_type": "text/plain",
        "extension": "txt",
    }
