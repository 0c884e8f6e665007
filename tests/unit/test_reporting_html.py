"""The self-contained HTML report."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html import unescape as html_unescape
from html.parser import HTMLParser
from pathlib import Path

from pytest_plugin_evals.model import ANSWER_LIMIT, Case, GraderSpec, PluginInfo, Verdict
from pytest_plugin_evals.records import LoadErrorRecord
from pytest_plugin_evals.reporting.document import document_json, load_document
from pytest_plugin_evals.reporting.html import FILES_LISTED, render_html
from tests.helpers import run_record, summary

ROOT = Path("/suite/evals")
PLUGIN_INFO = PluginInfo("release-kit", "1.2.0", Path("/suite"))
EVIL = '</script><script>alert("x")</script><!-- & "quotes"'


def case(name: str) -> Case:
    graders = (
        GraderSpec("answer", "regex", {"pattern": "paris", "target": "last_message"}),
        GraderSpec("skill", "tool_used", {"tool": "Skill", "min": 1}),
        GraderSpec("judge", "llm", {"focus": "last_message"}, weight=2, criteria="Is it <b>?"),
    )
    return Case(
        name=name,
        prompt=f"Prompt of {name} <tag>",
        source="prose",
        path=ROOT / name / "prompt.md",
        dir=ROOT / name,
        suite_root=ROOT,
        graders=graders,
    )


def record(
    c, arm, n, verdicts=(), *, score=1.0, answer="Paris.", error=None, infra=None, two_arm=True
):
    return run_record(
        c, arm, n, verdicts, score=score, answer=answer, error=error, infra=infra,
        two_arm=two_arm, nodeid=f"{c.name}[{arm}-{n}]", plugin=PLUGIN_INFO, turns=3,
        duration=2.5,
    )  # fmt: skip


ANSWER_OK = Verdict("answer", True, "matched paris", type="regex")
INDICATOR = Verdict(
    "skill",
    False,
    "Skill called 0x (expected 1..∞)",
    type="tool_used",
    scored=False,
    with_only=True,
)
SKIPPED = Verdict("judge", None, "not judged", weight=2, type="llm", skipped="cost ceiling")


def build(records, ablation="with-without", **kw):
    return summary(records, duration_seconds=12.0, ablation=ablation, concurrency=1, **kw)


def two_arm_document():
    alpha, beta = case("alpha"), case("beta")
    return build(
        [
            record(alpha, "with", 1, [ANSWER_OK, INDICATOR, SKIPPED], answer=EVIL),
            record(alpha, "with", 2, [ANSWER_OK], answer="x" * (ANSWER_LIMIT + 1000)),
            record(alpha, "without", 1, [Verdict("answer", False, "pattern not found")], score=0.0),
            record(beta, "with", 1, [ANSWER_OK], error="timed out after 300s", score=0.5),
            record(beta, "without", 1, score=0.0, infra="rate_limit", error="API Error: 429"),
            LoadErrorRecord(
                "bad", "evals/bad/case.yaml", 4, 'graders: duplicate grader name "g"', str(ROOT)
            ),
        ]
    )


class Page(HTMLParser):
    """Collects the script blocks and the text a reader sees with JS disabled."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict, str]] = []
        self.text: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self._script: dict | None = None

    def handle_starttag(self, tag, attrs):
        self.attrs.extend(attrs)
        if tag == "script":
            self._script = dict(attrs)
            self.scripts.append((self._script, ""))

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)
        else:
            self.text.append(data)


def parse(page: str) -> Page:
    parser = Page()
    parser.feed(page)
    parser.close()
    return parser


def embedded(page: str) -> dict:
    (data,) = [text for attrs, text in parse(page).scripts if attrs.get("id") == "eval-document"]
    return json.loads(data)


def test_embedded_document_parses_back():
    doc = two_arm_document()
    assert embedded(render_html(doc)) == json.loads(json.dumps(document_json(doc)))


def test_script_in_an_answer_cannot_break_out():
    page = render_html(two_arm_document())
    parsed = parse(page)
    assert [attrs.get("type") for attrs, _ in parsed.scripts] == ["application/json", None]
    assert page.count("</script>") == 2
    assert "<script>alert" not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(" in page
    assert EVIL in "".join(parsed.text)  # shown as text, whole
    assert embedded(page)["cases"][0]["arms"]["with"][0]["answer"] == EVIL


def test_answer_is_cut_at_the_limit():
    doc = two_arm_document()
    page = render_html(doc)
    assert "x" * ANSWER_LIMIT in page
    assert "x" * (ANSWER_LIMIT + 1) not in page
    assert "cut at 4,000 characters" in page
    # Even a document carrying a longer answer shows no more than the limit.
    data = document_json(doc)
    data["cases"][0]["arms"]["with"][1]["answer"] = "y" * (ANSWER_LIMIT + 10)
    visible = "".join(parse(render_html(load_document(data))).text)
    assert "y" * ANSWER_LIMIT in visible and "y" * (ANSWER_LIMIT + 1) not in visible


def test_nothing_is_loaded_from_the_network():
    page = render_html(two_arm_document())
    for name, value in parse(page).attrs:
        if name in {"src", "href", "action", "srcset", "poster"}:
            assert not re.match(r"\s*(https?:)?//", value or ""), (name, value)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.IGNORECASE)
    assert "@import" not in page
    assert not re.search(r"url\(\s*['\"]?\s*(https?:)?//", page)


def test_readable_without_javascript():
    page = render_html(two_arm_document())
    text = " ".join(" ".join(parse(page).text).split())
    for expected in (
        "release-kit v1.2.0",
        "alpha",
        "beta",
        "matched paris",
        "Skill called 0x (expected 1..∞)",
        "not scored",
        "skipped: cost ceiling",
        "run error: timed out after 300s",
        "could not be made (rate_limit): API Error: 429",
        "Prompt of alpha <tag>",
        "Is it <b>?",
        '"pattern": "paris"',
        "With plugin",
        "Without plugin",
        "Δ",
        'evals/bad/case.yaml:4: graders: duplicate grader name "g"',
        "1 of 2",
        "Without plugin score",
        "×2",
    ):
        assert expected in text, expected


def test_one_word_for_one_thing():
    """ "regressed" is said only against an earlier session, and "baseline" only of
    --eval-baseline-plugin: a session without either says neither of the without arm."""
    page = re.sub(
        r"<(style|script)\b.*?</\1>", "", render_html(two_arm_document()), flags=re.DOTALL
    )
    text = " ".join(" ".join(parse(page).text).split()).lower()
    assert "regressed" not in text
    assert "baseline" not in text


def test_warning_banner_for_partial_documents_and_errored_runs():
    page = render_html(two_arm_document())
    banners = re.findall(r'<div class="banner">(.*?)</div>', page)
    assert any("Partial results" in b and "rate_limit 1" in b for b in banners)
    assert any("1 run(s) ended with an error" in b for b in banners)
    clean = build([record(case("alpha"), "with", 1, [ANSWER_OK])])
    assert 'class="banner"' not in render_html(clean)


def test_one_arm_headline():
    doc = build([record(case("alpha"), "single", 1, [ANSWER_OK], two_arm=False)], ablation="none")
    page = render_html(doc)
    text = " ".join(parse(page).text)
    assert "Suite score" in text and "Cases" in text
    assert "Baseline" not in text
    assert embedded(page)["suite"]["ablation"] == "none"


def test_colour_schemes_and_self_containment():
    page = render_html(two_arm_document())
    assert "prefers-color-scheme: dark" in page
    assert "<link" not in page
    assert page.startswith("<!DOCTYPE html>")


def test_empty_document_renders():
    page = render_html(build([]))
    assert "No eval case ran." in page
    assert embedded(page)["cases"] == []


# -- charts, filters' data, the comparison ------------------------------------------------------


def rows(page: str) -> list[dict[str, str]]:
    """The overview rows' data attributes, in order."""
    found = re.findall(r'<tr class="case-row[^"]*"([^>]*)>', page)
    return [
        {k: html_unescape(v) for k, v in re.findall(r'(data-[a-z]+)="([^"]*)"', attrs)}
        for attrs in found
    ]


def test_each_overview_row_has_its_charts_and_the_filters_data():
    doc = two_arm_document()
    page = render_html(doc)
    data = rows(page)
    assert [r["data-name"] for r in data] == ["alpha", "beta"]
    assert [r["data-passed"] for r in data] == ["1", "0"]
    alpha = doc.cases[0].aggregates
    assert data[0]["data-sig"] == ("up" if alpha.delta_significant else "")
    assert data[0]["data-unstable"] == " ".join(alpha.unstable)
    # A score chart per case, a Δ chart for the case with a Δ, and the suite's diamond.
    assert page.count('<svg class="chart score-row"') == 2
    assert page.count('<svg class="chart delta-row"') == 2
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    assert body.count('class="mark delta') == 1  # beta's baseline run was not made: no Δ
    assert page.count('<svg class="chart delta-row mean-row"') == 1


def test_a_hostile_case_name_is_text_in_the_charts_and_the_filters_data():
    evil = record(case(EVIL), "single", 1, [ANSWER_OK], two_arm=False)
    page = render_html(build([evil], ablation="none"))
    assert rows(page)[0]["data-name"] == EVIL
    titles = [html_unescape(t) for t in re.findall(r"<title>(.*?)</title>", page, re.DOTALL)]
    assert any(t.startswith(f"{EVIL}: score 100% (95% ") for t in titles)
    assert "<script>alert" not in page


def comparison_doc(result) -> dict:
    doc = document_json(result)
    doc["comparison"] = {
        "against": "results/2026-01-01/aggregate-result.json",
        "againstStartedAt": "2026-01-01T00:00:00Z",
        "cases": [
            {"name": "alpha", "dir": "alpha", "before": 1.0, "after": 0.5, "change": -0.5,
             "changeInterval": [-0.9, -0.1], "deltaBefore": 0.5, "deltaAfter": 0.1,
             "verdict": "inconclusive", "decision": {"verdict": "inconclusive", "claim": "worse",
             "pValue": 0.2, "moreRuns": 7}},
            {"name": EVIL, "dir": "evil", "before": 1.0, "after": 0.0, "change": -1.0,
             "changeInterval": [-1.0, -0.57], "deltaBefore": 1.0, "deltaAfter": 0.0,
             "verdict": "worse"},
            {"name": "gamma", "dir": "gamma", "before": None, "after": 1.0, "change": None,
             "changeInterval": None, "deltaBefore": None, "deltaAfter": None, "verdict": "new"},
        ],
        "counts": {"better": 0, "worse": 1, "equivalent": 0, "inconclusive": 1, "new": 1,
                   "gone": 0},
        "regressed": True,
    }  # fmt: skip
    return doc


def test_the_comparison_shows_the_counts_and_each_case_that_changed_first():
    result = two_arm_document()
    doc = comparison_doc(result)
    page = render_html(result, doc)
    text = " ".join(" ".join(parse(page).text).split())
    assert "Compared with an earlier session" in text
    assert "Against results/2026-01-01/aggregate-result.json , started 2026-01-01T00:00:00Z" in text
    assert "✗ 1 case(s) worse since that session." in text
    assert "worse 1 better 0 equivalent 0 new 1 gone 0 not run 0 inconclusive 1" in text
    # An inconclusive change says what would likely decide it.
    assert "inconclusive about 7 more run(s) per arm would likely decide it" in text
    section = page[page.index('<section class="comparison"') : page.index("</section>")]
    verdicts = re.findall(r'<tr class="change-row" data-verdict="(\w+)">', section)
    assert verdicts == ["worse", "new", "inconclusive"]  # the inconclusive one folded, last
    assert '<details class="unchanged"><summary>1 inconclusive case(s)</summary>' in section
    assert f"{EVIL} evil" in text and "100% → 0%" in text and "-100.0 pts" in text
    assert "-100.0 to -57.0" in text
    assert section.count('class="mark delta sig down"') == 1  # the regression's mark
    assert embedded(page)["comparison"] == json.loads(json.dumps(doc["comparison"]))


def test_no_comparison_no_section():
    page = render_html(two_arm_document())
    assert 'class="comparison"' not in page and "Compared with" not in page


def test_a_comparison_is_read_leniently():
    from pytest_plugin_evals.reporting.html_views import comparison_view

    view = comparison_view(
        {
            "comparison": {
                "cases": [
                    {"name": "a", "verdict": "exploded", "change": "x", "changeInterval": [0, "a"]},
                    "not a case",
                    {"name": "b", "verdict": "regressed", "before": True, "after": float("nan")},
                ],
                "counts": "nope",
                "regressed": "yes",
            }
        }
    )
    assert view is not None
    # A document of an earlier version said "regressed": it is read as "worse".
    assert [(c.name, c.verdict) for c in view.changed] == [("b", "worse")]
    (a,) = view.unchanged
    assert (a.change, a.interval, view.changed[0].before, view.changed[0].after) == (
        None,
        "",
        None,
        None,
    )
    assert dict(view.counts)["worse"] == 1 and view.regressed is True
    assert comparison_view({"comparison": None}) is None
    assert comparison_view({}) is None


def test_compiled_templates_are_kept_for_the_next_session(tmp_path, monkeypatch):
    import jinja2

    from pytest_plugin_evals.reporting import html

    monkeypatch.setattr(html, "TEMPLATE_CACHE", str(tmp_path / "compiled"))
    monkeypatch.setattr(html.sys, "dont_write_bytecode", False)
    html._environment.cache_clear()
    c = case("capital")
    result = summary([record(c, "with", 1, [ANSWER_OK]), record(c, "without", 1)])
    first = render_html(result)
    # the report, its parts, the graders, efficiency and trace diff tables
    assert len(list((tmp_path / "compiled").glob("__jinja2_*.cache"))) == 5

    html._environment.cache_clear()  # the next session: loaded, not compiled
    compiled = []
    monkeypatch.setattr(jinja2.Environment, "compile", lambda *a, **k: compiled.append(a) or 1 / 0)
    try:
        assert render_html(result) == first
    finally:
        html._environment.cache_clear()
    assert compiled == []


def test_a_cache_folder_that_cannot_be_written_only_means_compiling(tmp_path, monkeypatch):
    from pytest_plugin_evals.reporting import html

    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(html.sys, "dont_write_bytecode", False)
    for folder in (blocker / "compiled", tmp_path / "unwritten"):
        monkeypatch.setattr(html, "TEMPLATE_CACHE", str(folder))
        html._environment.cache_clear()
        c = case("capital")
        try:
            assert "capital" in render_html(summary([record(c, "with", 1, [ANSWER_OK])]))
        finally:
            html._environment.cache_clear()
        monkeypatch.setattr(html.sys, "dont_write_bytecode", True)  # then: PYTHONDONTWRITEBYTECODE
    assert not (tmp_path / "unwritten").exists()


def test_a_run_lists_the_files_it_created_by_the_names_it_gave_them():
    alpha = case("alpha")
    made = ("work/.git", ".vscode/settings.json", EVIL, *(f"f{i:03}" for i in range(FILES_LISTED)))
    kept = record(alpha, "with", 1, [ANSWER_OK])
    kept = replace(kept, result=replace(kept.result, files_created=made))
    page = render_html(build([kept, record(alpha, "without", 1, [ANSWER_OK])]))
    visible = "".join(parse(page).text)
    assert f"Files created ({len(made)})" in visible
    assert "work/.git" in visible and ".vscode/settings.json" in visible and EVIL in visible
    assert "<script>alert" not in page
    assert "… 3 more not listed" in visible
    assert f"f{FILES_LISTED - 4:03}" in visible and f"f{FILES_LISTED - 3:03}" not in visible
