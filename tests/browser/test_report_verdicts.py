"""The verdicts as a person reads them in the report: a badge per case (better, worse,
inconclusive with the runs that would decide it), the suite's, and the false discovery rate
sentence in the summary."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tests.browser import synthetic
from tests.browser.test_report_charts import write_report
from tests.browser.test_report_escaping import assert_inert, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser

PATTERNS = [("wins", "up"), ("loses", "down"), ("coin", "noisy"), ("steady", "flat-pass")]


def test_each_case_and_the_suite_show_their_verdict(browser: Browser, tmp_path: Path) -> None:
    result = synthetic.session(PATTERNS)
    verdicts = {c.name: c.aggregates.delta_decision for c in result.cases}
    assert {n: d.verdict for n, d in verdicts.items() if d} == {
        "wins": "better",
        "loses": "worse",
        "coin": "inconclusive",
        "steady": "inconclusive",
    }  # the setup: 5 of 5 against 0 of 5, its reverse, 3 of 5 against 2 of 5, 5 against 5
    url = write_report(tmp_path, result).as_uri()
    errors: list[str] = []
    page, found = open_page(browser, url, "#toolbar button", console=errors)
    assert_inert(found)

    rows = page.locator("table.overview tr.case-row")
    shown = {}
    for i in range(rows.count()):
        row = rows.nth(i)
        flag = row.locator(".flag.verdict")
        title = flag.get_attribute("title") or ""
        shown[row.get_attribute("data-name") or ""] = (flag.inner_text(), title)
    assert shown["wins"][0] == "better" and shown["wins"][1].startswith("better (p 0.")
    assert shown["loses"][0] == "worse"
    assert shown["coin"][0] == "inconclusive"
    assert "more run(s) per arm would likely decide it" in shown["coin"][1]
    assert page.locator("table.overview tr.case-row .flag.verdict.better").evaluate(
        "e => getComputedStyle(e).color"
    ) != page.locator("table.overview tr.case-row .flag.verdict.worse").evaluate(
        "e => getComputedStyle(e).color"
    )
    # The suite row carries the suite's verdict.
    suite = result.aggregates.mean_delta_decision
    assert suite is not None
    assert page.locator("tfoot tr.suite-row .flag.verdict").inner_text() == suite.verdict
    # The summary says how the cases were held together.
    effect = page.locator("p.effect").inner_text()
    assert "Case verdicts (equivalent within ±10 pts): 1 better, 1 worse, 2 inconclusive" in effect
    assert "false discovery rate held at 5% (Benjamini–Hochberg)" in effect
    # A case's section says its verdict in words.
    section = page.locator("details.case", has_text="coin").first
    badge = section.locator("summary .badge.verdict")
    assert badge.inner_text().startswith("inconclusive — about ")
    assert errors == []
    page.close()
