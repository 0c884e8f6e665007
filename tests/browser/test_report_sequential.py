"""Sequential runs (``--eval-runs auto``) as a person reads them in the report: a table with,
per case, the runs per arm it took of its budget, why it stopped, its verdict and how many of
its runs were reused from an earlier session (named, as hostile text). (A session of fixed runs
has no such section: tests/browser/test_report_charts.py.)"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.reporting.html import render_html
from pytest_plugin_evals.stats.sequential import CaseStop, Stop
from tests.browser import synthetic
from tests.browser.test_report_escaping import IMG, assert_inert, open_page
from tests.helpers import summary

if TYPE_CHECKING:
    from playwright.sync_api import Browser

SOURCE = f"/ci/cache/evals/results/2026-11-30 {IMG}"


def sequential_session() -> Any:
    """``wins`` decided after its runs (its without arm reused), ``coin`` stopped for
    futility, ``late`` still running when the session ended."""
    rng = random.Random(5)
    records: list[Any] = []
    stops = {}
    for index, (name, pattern, stop) in enumerate(
        [
            ("wins", "up", Stop("decided", 5, "better")),
            ("coin", "noisy", Stop("futility", 5)),
            ("late", "flat-pass", None),
        ]
    ):
        case = synthetic.make_case(name, folder=f"case-{index:03d}")
        for record in synthetic.records_for(case, pattern, rng):
            result = record.result
            if name == "wins" and result.arm == "without" and result.run <= 3:
                result = dataclasses.replace(result, reused_from=SOURCE, judge_cost_usd=0.0)
            records.append(dataclasses.replace(record, plugin=synthetic.PLUGIN, result=result))
        key = (records[-1].nodeid.rpartition("[")[0], None)
        stops[key] = CaseStop(5, 10, stop)
    return summary(records, sequential=stops)


def test_each_case_says_its_runs_why_it_stopped_and_its_verdict(
    browser: Browser, tmp_path: Path
) -> None:
    result = sequential_session()
    path = tmp_path / "report.html"
    path.write_text(render_html(result), encoding="utf-8")
    page, found = open_page(browser, path.as_uri(), "#sequential")
    assert_inert(found)
    section = page.locator("#sequential")
    assert section.locator("h3").inner_text().lower() == "sequential runs"
    rows = section.locator("tr.seq-row")
    assert rows.count() == 3
    shown: dict[str, tuple[str, ...]] = {}
    row_of: dict[str, Any] = {}
    for i in range(3):
        row = rows.nth(i)
        cells = [row.locator(f".seq-{k}").inner_text() for k in ("runs", "stopped", "reason")]
        name = row.locator(".seq-case").inner_text()
        shown[name] = (*cells, row.locator(".seq-verdict").inner_text())
        row_of[name] = row
    assert shown["wins"] == ("5 of 10", "decided", "decided after 5 runs: better", "better")
    assert shown["coin"][1] == "futility"
    assert shown["coin"][2].startswith("stopped after 5 runs as inconclusive")
    assert shown["coin"][3] == "inconclusive"
    assert shown["late"][1:3] == ("not stopped", "still running when the session ended")
    # The reused runs are counted and their session named, as text.
    reused = row_of["wins"].locator(".seq-reused")
    assert reused.inner_text().splitlines()[0] == "without 3"
    assert reused.locator(".seq-source").inner_text() == f"from {SOURCE}"
    assert row_of["coin"].locator(".seq-reused").inner_text() == "—"
    assert page.locator("#sequential img").count() == 0
    assert page.evaluate("window.__pwned") is None
