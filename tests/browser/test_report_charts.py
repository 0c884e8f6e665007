"""The report as a person uses it in a browser: the charts (a mark per case, the significant
ones marked), the filters and the order, the run viewer, the comparison with an earlier session,
and a 200-case report, whose full-page screenshot is kept for CI (``$EVAL_ARTIFACTS_DIR``)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.reporting.document import document_json
from pytest_plugin_evals.reporting.html import render_html
from tests.browser import synthetic
from tests.browser.test_report_escaping import IMG, assert_inert, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

#: Two cases of every pattern, one of them named to break out of the page.
PATTERNS = [
    ("suggests-version", "up"),
    ("writes-notes", "up"),
    ("decoy-capital", "down"),
    ("golden-path", "flat-pass"),
    ("hard-one", "flat-fail"),
    ("flaky-tag", "noisy"),
    ("flaky-notes", "noisy-up"),
    (IMG, "down"),
]

VISIBLE_ROWS = "table.overview tr.case-row:not([hidden])"


def comparison(result: Any) -> dict[str, Any]:
    """The document with a comparison against an earlier session: one case regressed."""
    doc = document_json(result)
    doc["comparison"] = {
        "against": "results/2026-01-01T00-00-00-000Z/aggregate-result.json",
        "againstStartedAt": "2026-01-01T00:00:00Z",
        "cases": [
            {"name": "decoy-capital", "dir": "case-002", "before": 1.0, "after": 0.0,
             "change": -1.0, "changeInterval": [-1.0, -0.566], "deltaBefore": 0.2,
             "deltaAfter": -1.0, "verdict": "worse"},
            {"name": "suggests-version", "dir": "case-000", "before": 0.6, "after": 1.0,
             "change": 0.4, "changeInterval": [-0.06, 0.77], "deltaBefore": 0.6,
             "deltaAfter": 1.0, "verdict": "inconclusive",
             "decision": {"verdict": "inconclusive", "claim": "better", "pValue": 0.09,
                          "moreRuns": 3}},
            {"name": "retired", "dir": "retired", "before": 1.0, "after": None, "change": None,
             "changeInterval": None, "deltaBefore": None, "deltaAfter": None, "verdict": "gone"},
            {"name": "deselected", "dir": "deselected", "before": 1.0, "after": None,
             "change": None, "changeInterval": None, "deltaBefore": None, "deltaAfter": None,
             "verdict": "not run"},
        ],
        "counts": {"better": 0, "worse": 1, "equivalent": 0, "inconclusive": 1, "new": 0,
                   "gone": 1, "not run": 1},
        "regressed": True,
    }  # fmt: skip
    return doc


def write_report(folder: Path, result: Any, document: dict[str, Any] | None = None) -> Path:
    path = folder / "report.html"
    path.write_text(render_html(result, document), encoding="utf-8")
    return path


def console_errors(page: Page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors


def visible_sections(page: Page) -> int:
    return page.locator("details.case:not([hidden])").count()


def test_charts_filters_run_viewer_and_comparison(browser: Browser, tmp_path: Path) -> None:
    result = synthetic.session(PATTERNS)
    want = synthetic.expected(result)
    assert want["significant"] == 4 and want["up"] == 2 and want["unstable"] == 2  # the setup
    url = write_report(tmp_path, result, comparison(result)).as_uri()

    errors: list[str] = []
    page, found = open_page(browser, url, "#toolbar select", console=errors)
    assert_inert(found)
    assert errors == []

    # The charts: a with and a without mark per case, a Δ per case, the significant ones marked.
    rows = page.locator("table.overview tr.case-row")
    assert rows.count() == want["cases"] == 8
    scores = page.locator("table.overview tbody svg.score-row")
    assert scores.locator(".mark.with").count() == want["with"]
    assert scores.locator(".mark.without").count() == want["cases"]
    forest = page.locator("table.overview tbody svg.delta-row")
    assert forest.count() == want["cases"]
    assert forest.locator(".zero").count() == want["cases"]
    assert forest.locator(".mark.delta").count() == want["deltas"]
    assert forest.locator(".mark.sig").count() == want["significant"]
    assert forest.locator(".mark.sig.up").count() == want["up"]
    assert page.locator("table.overview tfoot .mark.mean").count() == 1
    # A name is a chart's title, as text.
    index = [c.name for c in result.cases].index(IMG)
    title = forest.nth(index).locator("title").text_content() or ""
    assert title.startswith(f"{IMG}: Δ -100.0 pts (95% ")
    assert page.locator("svg.histogram").count() == 2
    assert page.locator("#sequential").count() == 0  # fixed runs: no sequential section

    # Filters: significant only, unstable only, outcome, name; sections follow the rows.
    page.get_by_label("Significant Δ only").check()
    assert page.locator(VISIBLE_ROWS).count() == visible_sections(page) == want["significant"]
    assert page.locator(".count").inner_text() == f"4 of {want['cases']} cases"
    page.get_by_label("Significant Δ only").uncheck()
    page.get_by_label("Unstable only").check()
    shown = sorted(page.locator(f"{VISIBLE_ROWS} a").all_inner_texts())
    assert shown == ["flaky-notes", "flaky-tag"]
    assert visible_sections(page) == want["unstable"]
    page.get_by_label("Unstable only").uncheck()
    page.get_by_label("Outcome").select_option("failing")
    assert page.locator(VISIBLE_ROWS).count() == want["failing"]
    page.get_by_label("Outcome").select_option("all")
    page.get_by_label("Filter by case name").fill("FLAKY")
    assert sorted(page.locator(f"{VISIBLE_ROWS} a").all_inner_texts()) == shown
    page.get_by_label("Significant Δ only").check()
    assert page.locator(VISIBLE_ROWS).count() == 0
    assert page.get_by_text("No case matches the filters.").is_visible()
    page.get_by_label("Significant Δ only").uncheck()
    page.get_by_label("Filter by case name").fill("")
    assert page.locator(VISIBLE_ROWS).count() == want["cases"] == visible_sections(page)

    # Order: the forest plot sorted by Δ, highest first, then back.
    page.get_by_label("Order").select_option("delta-desc")
    deltas = [float(d) for d in page.locator(VISIBLE_ROWS).evaluate_all(
        "rows => rows.map(r => r.dataset.delta)")]  # fmt: skip
    assert deltas == sorted(deltas, reverse=True)
    page.get_by_label("Order").select_option("suite")
    names = page.locator(f"{VISIBLE_ROWS} a").all_inner_texts()
    assert names == [c.name for c in result.cases]

    # The run viewer: a run folds to a line; open, its tool calls, its answer, its grades.
    case = page.locator("details.case", has=page.locator("h2", has_text="suggests-version"))
    assert case.get_attribute("open") is not None  # 8 cases: sections start unfolded
    run = case.locator("details.run[data-arm=with]").nth(2)  # run 3 made 5 calls, kept 3
    line = run.locator("summary")
    assert "5 tool calls" in line.inner_text() and "pass" in line.inner_text()
    answer = run.get_by_text("The next version is 1.4.1.")
    assert not answer.is_visible()
    line.click()
    assert answer.is_visible()
    calls = run.locator(".tool-calls li")
    assert [" ".join(t.split()) for t in calls.all_inner_texts()] == [
        'Skill {"skill":"release-kit:next-version"}',
        'Bash {"command":"git tag --list"}',
        'Read {"file_path":"CHANGELOG.md"}',
    ]
    assert run.get_by_text("Tool calls (5)").is_visible()
    assert run.get_by_text("… 2 more not listed", exact=False).is_visible()
    assert "matched 1\\.4\\.1" in run.locator("ul.verdicts").inner_text()
    assert case.locator("pre.prompt").inner_text().startswith("We fixed two bugs")

    # The comparison: the counts, and the regressed case first, marked.
    section = page.locator("section.comparison")
    assert section.get_by_text("1 case(s) worse since that session.").is_visible()
    first = section.locator("tr.change-row").first
    assert first.locator(".badge.verdict").inner_text() == "worse"
    assert "decoy-capital" in first.inner_text() and "100% → 0%" in first.inner_text()
    assert first.locator("svg .mark.sig.down").count() == 1
    # A case this session did not select is "not run", shown beside the one that is gone.
    assert section.locator(".counts .badge.verdict").all_inner_texts() == [
        "worse 1", "better 0", "equivalent 0", "new 0", "gone 1", "not run 1", "inconclusive 1",
    ]  # fmt: skip
    rows = section.locator("table.comparison > tbody > tr.change-row")
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.verdict)")[:3] == [
        "worse", "gone", "not run",
    ]  # fmt: skip
    assert "deselected" in rows.nth(2).inner_text() and "100% → —" in rows.nth(2).inner_text()
    unchanged = section.locator("details.unchanged tr.change-row")
    assert unchanged.count() == 1 and not unchanged.is_visible()  # folded
    section.get_by_text("1 inconclusive case(s)").click()
    assert "suggests-version" in unchanged.inner_text()
    assert "about 3 more run(s) per arm would likely decide it" in unchanged.inner_text()
    assert errors == []
    page.close()


def artifacts_dir(tmp_path: Path) -> Path:
    """Where the screenshot goes: ``$EVAL_ARTIFACTS_DIR`` (CI uploads it), else a tmp folder."""
    folder = Path(os.environ.get("EVAL_ARTIFACTS_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_a_200_case_report_stays_usable_and_is_photographed(
    browser: Browser, tmp_path: Path
) -> None:
    result = synthetic.session(synthetic.many(200))
    want = synthetic.expected(result)
    out = artifacts_dir(tmp_path)
    report = write_report(out, result)
    report = report.rename(out / "report-200-cases.html")
    page_text = report.read_text(encoding="utf-8")
    charts = sum(len(svg) for svg in re.findall(r"<svg.*?</svg>", page_text, re.DOTALL))
    assert charts / 200 < 4000, "the charts stay small: under 4 kB a case"

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = console_errors(page)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(report.as_uri())
    page.wait_for_selector("#toolbar select")
    assert page.locator("table.overview tbody svg.delta-row .mark").count() == 200
    assert page.locator("table.overview tbody .mark.sig").count() == want["significant"]
    # The forest plot grows a row at a time, each row as tall as its chart.
    heights = page.locator("table.overview tr.case-row").evaluate_all(
        "rows => rows.map(r => r.getBoundingClientRect().height)"
    )
    assert len(heights) == 200 and max(heights) <= 22.5  # + half a border, first and last
    # Past 20 cases the sections start folded; a row's link unfolds its case.
    assert page.locator("details.case[open]").count() == 0
    page.locator("table.overview tr.case-row a").nth(150).click()
    target = page.locator("details.case").nth(150)
    # The case unfolds on the hashchange event the click's navigation fires afterwards.
    page.wait_for_function(
        "n => document.querySelectorAll('details.case')[n].open", arg=150, timeout=10_000
    )
    assert target.get_attribute("open") is not None
    assert target.locator("h2").is_visible()

    page.evaluate("window.scrollTo(0, 0)")
    shot = out / "report-200-cases.png"
    page.screenshot(path=str(shot), full_page=True)
    page.close()
    assert errors == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 50_000


def test_the_charts_are_drawn_in_both_colour_schemes(browser: Browser, tmp_path: Path) -> None:
    """Light, then dark on the same page: each scheme tells up, down, the with arm and the
    page apart, and the two schemes differ."""
    url = write_report(tmp_path, synthetic.session(PATTERNS)).as_uri()
    page = browser.new_page(color_scheme="light")
    page.goto(url)
    drawn = {}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        colours = page.evaluate(
            """() => {
      const fill = (s) => getComputedStyle(document.querySelector(s)).fill;
      return {up: fill("svg .mark.sig.up"), down: fill("svg .mark.sig.down"),
              with: fill("svg .mark.with"), page: getComputedStyle(document.body).backgroundColor};
    }"""
        )
        assert len(set(colours.values())) == 4, (scheme, colours)
        drawn[scheme] = colours["page"]
    page.close()
    assert drawn["light"] != drawn["dark"], drawn
