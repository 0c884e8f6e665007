"""A reused run (``--eval-reuse``) in the run viewer, as a person reads it: its head says
"reused", its body names the session it came from and that its agent cost was spent then; a
run made in this session says neither, and a hostile folder name stays text."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.reporting.html import render_html
from tests.browser import synthetic
from tests.browser.test_report_escaping import IMG, assert_inert, open_page
from tests.helpers import summary

if TYPE_CHECKING:
    from playwright.sync_api import Browser

SOURCE = f"/ci/cache/evals/results/2026-11-30 {IMG}"


def reused_session() -> Any:
    case = synthetic.make_case("suggests-version", folder="case-000")
    records = []
    for record in synthetic.records_for(case, "up", random.Random(5), runs=2):
        result = record.result
        if result.arm == "without":
            result = dataclasses.replace(result, reused_from=SOURCE, judge_cost_usd=0.0)
        records.append(dataclasses.replace(record, plugin=synthetic.PLUGIN, result=result))
    return summary(records)


def test_a_reused_run_is_marked_in_the_run_viewer(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    path.write_text(render_html(reused_session()), encoding="utf-8")
    page, found = open_page(browser, path.as_uri(), "details.run")
    assert_inert(found)
    without = page.locator('details.run[data-arm="without"]')
    with_arm = page.locator('details.run[data-arm="with"]')
    assert without.count() == 2 and with_arm.count() == 2
    for index in range(2):
        head = without.nth(index).locator("summary")
        assert head.locator(".badge.reused").inner_text() == "reused"
        assert head.locator(".badge.reused").get_attribute("title") == f"reused from {SOURCE}"
        without.nth(index).locator("summary").click()
        body = without.nth(index).locator(".reused-from")
        assert body.is_visible()
        text = body.inner_text()
        assert f"reused from an earlier session: {SOURCE}" in text
        assert "was spent when it was made" in text
    assert with_arm.locator(".badge.reused").count() == 0
    assert with_arm.locator(".reused-from").count() == 0
    assert page.evaluate("window.pwned") is None
