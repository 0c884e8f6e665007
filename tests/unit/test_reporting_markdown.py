"""The Markdown summary for a pull request: its structure once rendered by a CommonMark/GFM
renderer (markdown-it-py, with GFM's tables, strikethrough and autolinks), its raw lines within
80 columns, and what the agent or the suite wrote shown as text — no link, image, tag, mention,
issue reference or broken table."""

from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from pytest_plugin_evals.model import Case, Verdict
from pytest_plugin_evals.reporting.compare import compare
from pytest_plugin_evals.reporting.markdown import (
    MARKER,
    ROWS,
    ReportLink,
    render_markdown,
)
from pytest_plugin_evals.reporting.markdown_text import WIDTH, ZWSP, inline, wrap
from tests.helpers import run_record, summary

ROOT = Path("/suite/evals")


def case(name: str, folder: str | None = None) -> Case:
    where = ROOT / (folder or name)
    return Case(name=name, prompt="p", source="prose", path=where / "prompt.md", dir=where,
                suite_root=ROOT)  # fmt: skip


def runs(c: Case, with_scores: list[float], without: list[float], note: str = "nope") -> list[Any]:
    records = []
    for arm, scores in (("with", with_scores), ("without", without)):
        for n, score in enumerate(scores, 1):
            verdict = Verdict("answer", score >= 1, note if score < 1 else "matched")
            records.append(
                run_record(c, arm, n, [verdict], score=score, nodeid=f"{c.name}[{arm}-{n}]")
            )
    return records


def gfm() -> MarkdownIt:
    """A GFM-like renderer: tables, strikethrough, bare addresses linked (GFM's autolink
    extension links www. and scheme addresses and e-mail addresses, not bare domains)."""
    md = MarkdownIt("commonmark", {"linkify": True}).enable(["table", "strikethrough", "linkify"])
    assert md.linkify is not None
    md.linkify.set({"fuzzy_link": False})
    return md


class Html(HTMLParser):
    """The rendered summary's tags (with their attributes) and its text, by table cell."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[list[str]] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def rendered(markdown: str) -> Html:
    parsed = Html()
    parsed.feed(gfm().render(markdown))
    return parsed


#: What GitHub turns into a mention, an issue or pull request reference, or a link, in the
#: rendered text (html-pipeline's MentionFilter and IssueReferenceFilter; GFM's autolinks).
GITHUB_LINKED = (
    re.compile(r"(?:^|\W)@[a-z0-9][a-z0-9-]*", re.IGNORECASE),
    re.compile(r"(?:^|[^\w/])(?:[\w.-]+/[\w.-]+)?#\d+"),
    re.compile(r"\bGH-\d+", re.IGNORECASE),
    re.compile(r"\b(?:https?|ftp)://|\bwww\.", re.IGNORECASE),
)


def two_sessions() -> Any:
    steady, slow = case("steady"), case("slow")
    before = summary([*runs(steady, [1, 1, 1], [0, 0, 0]), *runs(slow, [1] * 6, [0] * 6)])
    after = summary([*runs(steady, [1, 1, 1], [0, 0, 0]), *runs(slow, [0] * 6, [0] * 6)])
    return replace(after, comparison=compare(before, after, "earlier/aggregate-result.json"))


def test_the_rendered_summary_holds_the_verdict_the_table_and_the_link() -> None:
    result = two_sessions()
    text = render_markdown(
        result, exit_status=1, report=ReportLink(href="results/run 1/report.html")
    )
    assert text.startswith(MARKER + "\n")
    page = rendered(text)
    assert [h for h, _ in page.tags if h in ("h2", "h3")][:1] == ["h2"]
    assert "Plugin evals: failed" in page.text
    header, *rows = page.rows
    assert header == ["case", "with", "without", "Δ [95% interval]", "verdict"]
    cells = {row[0]: row for row in rows}
    assert set(cells) == {"slow", "steady"}
    agg = next(c.aggregates for c in result.cases if c.name == "steady")
    low, high = agg.delta_interval
    assert cells["steady"][1:4] == ["1.00", "0.00", f"+1.00 [{low:+.2f}, {high:+.2f}]"]
    assert cells["steady"][4] == agg.delta_decision.verdict
    (link,) = page.named("a")
    assert link["href"] == "results/run%201/report.html"
    body = " ".join(page.text)
    assert "Since the compared session" in body and "Worse: 1 worse" in body
    assert re.search(r"slow: 1\.00 → 0\.00, change -1\.00 \[-\d\.\d\d, -\d\.\d\d\]", body)
    assert "Below the threshold (1)" in body and "slow scored 0.00: answer: nope" in body


def test_one_arm_partial_and_efficiency() -> None:
    c = case("solo")
    records = [
        run_record(c, "single", 1, score=1.0, two_arm=False, nodeid="solo[1]"),
        run_record(c, "single", 2, score=0.0, two_arm=False, nodeid="solo[2]", infra="timeout"),
    ]
    result = summary(records, ablation="none")
    text = render_markdown(result)
    page = rendered(text)
    assert page.rows[0] == ["case", "score [95% interval]", "runs", "passed"]
    body = " ".join(page.text)
    assert "Plugin evals: partial" in body and "Mean Δ" not in body
    assert "partial: 1 run(s) could not be made (timeout 1)" in body
    assert "Efficiency" not in body  # one arm: nothing to compare


def test_the_efficiency_line_sits_under_cost_and_time() -> None:
    c = case("dear")
    records = [
        *(run_record(c, "with", n, score=1.0, cost=cost) for n, cost in enumerate((0.2, 0.3), 1)),
        *(run_record(c, "without", n, score=0.0, cost=0.1) for n in (1, 2)),
    ]
    text = render_markdown(summary(records))
    cost = text.index("### Cost and time")
    line = next(x for x in text.splitlines() if x.startswith("Efficiency"))
    assert cost < text.index(line)
    assert re.search(r"Efficiency \(with vs without\): cost ×2\.45", " ".join(rendered(text).text))


HOSTILE = (
    "a|b",
    "`code` ``x``",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "![x](http://evil.example/i.png)",
    "[click](javascript:alert(1))",
    "<http://evil.example>",
    "@octocat and @org/team",
    "#123 and GH-45 and owner/repo#6",
    "www.evil.example/x",
    "mail me@evil.example",
    "*em* **strong** _u_ ~~s~~",
    "$x^2$ and $$y$$",
    "&lt;b&gt; &amp; &#x3C;",
    "- item\n# heading\n> quote\n1. one",
    "line\n\n| x | y |\n| --- | --- |",
    "\\` back\\slash \\",
    "a\u202eevil\u200bhidden\x1b[31mred",
)


def text_of(raw: str) -> str:
    """What a reader should see: the text, one line, controls and hidden characters gone."""
    cleaned = re.sub("[\u200b\u202e]|\x1b\\[31m", "", raw)
    return " ".join(cleaned.split())


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_text_shows_as_text(hostile: str) -> None:
    """A case name and a grader's explanation that hold Markdown, HTML, mentions, references,
    addresses or line breaks: the table keeps its five cells a row, and the reader sees exactly
    the characters, with nothing linked, loaded, tagged or pinged."""
    name = hostile.replace("\n", " ")[:40]
    c = case(name, folder="hostile")
    result = summary(runs(c, [1, 0], [0, 0], note=hostile))
    text = render_markdown(result, exit_status=1)
    page = rendered(text)
    header, row = page.rows
    assert len(row) == len(header) == 5
    assert text_of(row[0]).replace(ZWSP, "") == text_of(name)
    assert [tag for tag, _ in page.tags if tag not in SUMMARY_TAGS] == []
    items = page.named("li")
    assert len(items) == 1  # the note did not start a list, a heading or a quote
    body = "".join(page.text)
    assert text_of(hostile) in text_of(body.replace(ZWSP, ""))
    for pattern in GITHUB_LINKED:
        assert not pattern.search(body), (pattern.pattern, body)


#: The tags the summary itself renders (no a: no report link was given).
SUMMARY_TAGS = {"h2", "h3", "p", "strong", "table", "thead", "tbody", "tr", "th", "td", "ul", "li"}


def test_no_raw_line_is_wider_than_80_columns_but_a_table_row() -> None:
    """Long names, long notes, words longer than a line: every line but a table row fits 80
    columns; a table row is as wide as its longest name, cut at 40 characters."""
    word = "x" * 200
    notes = f"{'wandered off ' * 20} {word} - 1. # > = trailing"
    cases = [case(f"case-{i:02d}-" + "long-name-" * 8) for i in range(3)]
    records = [r for c in cases for r in runs(c, [1, 0, 0], [0, 0, 0], note=notes)]
    result = replace(two_sessions(), cases=summary(records).cases)
    text = render_markdown(result, exit_status=1, report=ReportLink(path="r/" + word))
    lines = text.splitlines()
    rows = [line for line in lines if line.startswith("|")]
    assert len(rows) == 5
    assert [line for line in lines if len(line) > WIDTH and line not in rows] == []
    assert max(len(row) for row in rows) <= 2 + 40 + 57 + 10  # name, numbers, padding
    assert len(rendered(text).named("li")) == 3 + 1  # below the threshold, worse since


@pytest.mark.parametrize("first", ["-", "+", "*", "#", ">", "=", "|", "1.", "2)", "---"])
def test_a_wrapped_line_never_starts_a_block(first: str) -> None:
    words = inline("word " * 15 + f"{first} next " + "more " * 10, 400)
    for lead in range(8):
        text = "\n".join(wrap("w" * lead + " " + words, "- ", "  "))
        page = rendered(text)
        assert [t for t, _ in page.tags] == ["ul", "li"], text


def test_a_long_table_shows_the_cases_a_reviewer_must_see() -> None:
    cases = [case(f"case-{i:03d}") for i in range(ROWS + 50)]
    records = [r for i, c in enumerate(cases) for r in runs(c, [1, 1, 1] if i % 2 else [0.5], [0])]
    text = render_markdown(summary(records))
    rows = rendered(text).rows[1:]
    assert len(rows) == ROWS
    below = [r for r in rows if int(r[0].split("-")[1]) % 2 == 0]
    assert len(below) == 75  # every case below the threshold, then the first others
    assert f"{ROWS} of {ROWS + 50} cases shown" in text


def test_trigger_queries_are_trigger_accuracy_not_cases(tmp_path: Path) -> None:
    from pytest_plugin_evals.model import Case as Loaded
    from tests.unit.test_triggers import _record, load

    queries = [c for c in load(tmp_path, [
        {"query": "a", "should_trigger": True},
        {"query": "b", "should_trigger": False},
    ]) if isinstance(c, Loaded)]  # fmt: skip
    records = [_record(queries[0], n, True) for n in (1, 2, 3)]
    records += [_record(queries[1], n, n == 1) for n in (1, 2, 3)]
    page = rendered(render_markdown(summary(records, ablation="none")))
    assert page.rows == []  # no case table: a query is not a case
    body = " ".join(" ".join(page.text).split())
    assert "No case ran with the plugin: trigger queries only." in body
    assert "Trigger accuracy" in body and "TRIGGERS olympiad: 2 queries" in body
