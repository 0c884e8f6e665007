"""The report of a session of several agents (``--eval-agents``), as a person reads it: a row
per agent with its scores, Δ and interval, latency, tokens and cost — one of them an agent
whose CLI reports no price (its cost a floor, ``+?``) and no tokens — and a section per case on
each agent. An agent's name chosen to break out of the page stays text."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.reporting.html import render_html
from tests.browser import synthetic
from tests.browser.test_report_escaping import IMG, assert_inert, open_page
from tests.helpers import summary

if TYPE_CHECKING:
    from playwright.sync_api import Browser

#: Agent -> (case, pattern) pairs: ``claude`` is helped by the plugin, ``copilot`` is not.
AGENTS = {
    "claude": [("suggests-version", "up"), ("writes-notes", "up")],
    IMG: [("suggests-version", "flat-pass"), ("writes-notes", "down")],
}


def agents_session() -> Any:
    rng = random.Random(3)
    records: list[Any] = []
    for label, patterns in AGENTS.items():
        for index, (name, pattern) in enumerate(patterns):
            case = synthetic.make_case(name, folder=f"case-{index:03d}")
            for record in synthetic.records_for(case, pattern, rng):
                result = record.result
                if label == IMG:  # a CLI that reports no price and no tokens
                    result = dataclasses.replace(result, cost_known=False)
                else:
                    result = dataclasses.replace(result, input_tokens=1000, output_tokens=20)
                nodeid = record.nodeid.replace("[", f"[{label}-")
                records.append(
                    dataclasses.replace(
                        record, nodeid=nodeid, plugin=synthetic.PLUGIN, agent=label,
                        result=result,
                    )
                )  # fmt: skip
    return summary(
        records, agents=[(label, f"spec-of-{i}") for i, label in enumerate(AGENTS)],
        agent=", ".join(AGENTS),
    )  # fmt: skip


def test_agents_table_compares_the_agents_side_by_side(browser: Browser, tmp_path: Path) -> None:
    result = agents_session()
    path = tmp_path / "report.html"
    path.write_text(render_html(result), encoding="utf-8")
    page, found = open_page(browser, path.as_uri(), "table.agents")
    assert_inert(found)

    rows = page.locator("table.agents tr.agent-row")
    assert rows.count() == 2
    headers = [h.strip() for h in page.locator("table.agents thead th").all_inner_texts()]
    assert headers == ["Agent", "Cases", "With", "Without", "Δ", "95% interval",
                       "Latency p50 / p95", "Tokens in / out", "Cost", "Runs not made"]  # fmt: skip
    by_agent = {s.label: s for s in result.agents}
    for index, label in enumerate(AGENTS):
        cells = [c.strip() for c in rows.nth(index).locator("td").all_inner_texts()]
        want = by_agent[label]
        # The agent's name is shown as text (the hostile one too), beside its spec.
        assert cells[0] == f"{label} spec-of-{index}"
        assert cells[1] == "2"
        assert cells[2] == f"{want.score * 100:.0f}%"
        assert cells[4] == f"{want.mean_delta * 100:+.1f} pts"
        p50, p95 = want.timing.latency_p50, want.timing.latency_p95
        assert cells[6] == f"{p50:.1f}s / {p95:.1f}s"
        if label == IMG:
            assert cells[7] == "? / ?"
            assert cells[8].endswith("+?")  # a floor: the CLI does not price its runs
        else:
            assert cells[7] == "20,000 / 400"  # 20 graded runs of 1,000 in and 20 out
            assert cells[8] == f"${want.cost_usd:.2f}"
    # claude: +100 pts on both cases; the other: 0 and -100.
    assert by_agent["claude"].mean_delta == pytest.approx(1.0)
    assert by_agent[IMG].mean_delta == pytest.approx(-0.5)
    # A section per case on each agent.
    titles = page.locator("details.case h2").all_inner_texts()
    assert "suggests-version on claude" in titles
    assert f"writes-notes on {IMG}" in titles


def test_pytest_html_has_an_agent_column_under_several_agents(
    pytester: pytest.Pytester, scripted_agent: Any, browser: Browser
) -> None:
    pytester.makefile(".json", **{".claude-plugin/plugin": '{"name": "kit"}'})
    pytester.makefile(".md", **{"evals/hello/prompt": "---\nruns: 1\n---\nSay hi\n"})
    pytester.makefile(".md", **{"evals/hello/graders/hi": "---\ntype: regex\npattern: hi\n---\n"})
    good = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    poor = scripted_agent([{"match": "Say hi", "reply": "no"}])
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "--eval-agents", f"good={good}",
        "--eval-agents", f"poor={poor}", "--eval-threshold", "0",
        "--html", "ph.html", "--self-contained-html",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    page, found = open_page(browser, (pytester.path / "ph.html").as_uri(), "#results-table")
    assert_inert(found)
    headers = page.locator("#results-table thead th").all_inner_texts()
    assert [h.strip() for h in headers[2:6]] == ["Agent", "Arm", "Run", "Score"]
    rows = page.locator("#results-table tbody.results-table-row tr.collapsible")
    seen = sorted(
        tuple(c.strip() for c in rows.nth(i).locator("td").all_inner_texts()[2:6])
        for i in range(rows.count())
    )
    assert seen == sorted(
        [("good", "with", "1", "1.00"), ("good", "without", "1", "1.00"),
         ("poor", "with", "1", "0.00"), ("poor", "without", "1", "0.00")]
    )  # fmt: skip
    page.close()
