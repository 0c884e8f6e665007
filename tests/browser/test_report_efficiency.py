"""Efficiency in the report as a person reads it: a table for the suite and one in each case,
with each arm's geometric mean and mean per run and the ratio with/without with its interval;
a run whose tokens were not reported is left out and said so."""

from __future__ import annotations

import dataclasses
import math
import random
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.reporting.html import render_html
from tests.browser import synthetic
from tests.browser.test_report_escaping import assert_inert, open_page
from tests.helpers import summary

if TYPE_CHECKING:
    from playwright.sync_api import Browser

MEASURES = ["cost", "input tokens", "output tokens", "turns", "time"]


def costly_session() -> Any:
    """Two cases; the with arm's runs cost twice the without arm's, run for run; the first
    with-arm run of ``beta`` reported no tokens."""
    rng = random.Random(3)
    records: list[Any] = []
    for index, name in enumerate(("alpha", "beta")):
        case = synthetic.make_case(name, folder=f"case-{index:03d}")
        for record in synthetic.records_for(case, "noisy", rng):
            result = record.result
            cost = (0.04 if result.arm == "with" else 0.02) * (1 + 0.1 * result.run)
            tokens: int | None = 2000 if result.arm == "with" else 1000
            if name == "beta" and result.arm == "with" and result.run == 1:
                tokens = None
            result = dataclasses.replace(
                result, cost_usd=cost, judge_cost_usd=0.0, input_tokens=tokens, output_tokens=50
            )
            records.append(dataclasses.replace(record, plugin=synthetic.PLUGIN, result=result))
    return summary(records)


def _ratio(text: str) -> tuple[float, float, float]:
    found = re.fullmatch(r"×([\d.]+) \[([\d.]+), ([\d.]+)\]", text)
    assert found is not None, text
    return float(found[1]), float(found[2]), float(found[3])


def test_the_suite_and_each_case_show_their_efficiency(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    path.write_text(render_html(costly_session()), encoding="utf-8")
    page, found = open_page(browser, path.as_uri(), "#efficiency")
    assert_inert(found)
    suite = page.locator("#efficiency table.efficiency")
    assert "over 2 cases" in suite.locator("caption").inner_text()
    rows = suite.locator("tr.eff-row")
    assert [rows.nth(i).locator("th").inner_text() for i in range(rows.count())] == MEASURES
    cost = suite.locator('tr[data-measure="cost"]')
    ratio, low, high = _ratio(cost.locator(".eff-ratio").inner_text())
    assert ratio == 2 and low < 2 < high
    # The geometric mean of 0.04·(1.1, 1.2, …, 1.5), shown to 4 digits.
    geo = 0.04 * math.exp(sum(math.log(1 + 0.1 * r) for r in range(1, 6)) / 5)
    assert cost.locator(".eff-with").inner_text().startswith(f"${geo:.4g} (mean $0.052)")
    assert "10 run(s)" in cost.locator(".eff-with").inner_text()
    tokens = suite.locator('tr[data-measure="input tokens"]')
    assert "9 run(s), 1 left out" in tokens.locator(".eff-with").inner_text()
    assert tokens.locator(".eff-ratio").inner_text().startswith("×2 ")
    # Each case has its own table, inside its section.
    for index in range(2):
        table = page.locator(f"#case-{index} table.efficiency")
        assert table.locator("tr.eff-row").count() == len(MEASURES)
        case_ratio = _ratio(table.locator('tr[data-measure="cost"] .eff-ratio').inner_text())
        assert case_ratio[0] == 2 and case_ratio[1] < 2 < case_ratio[2]
    assert "1 left out" in page.locator("#case-1 tr[data-measure='input tokens']").inner_text()
