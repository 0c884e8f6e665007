"""A case's graders per arm as a person reads them in the report: a row per grader with its
passes in each arm, Δ and its interval, the flag; the rows of graders that cannot tell the arms
apart marked; hostile grader names and explanations shown as text, nothing run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.model import Case, GraderSpec, Verdict
from tests.browser.test_report_charts import write_report
from tests.browser.test_report_escaping import ALERT, IMG, SCRIPT, assert_inert, open_page
from tests.helpers import run_record, summary

if TYPE_CHECKING:
    from playwright.sync_api import Browser

ROOT = Path("/suite/evals")
#: Grader names as a suite could write them, and an explanation as a model could make one.
ALWAYS, NEVER, USEFUL = f"always {IMG}", f"never {SCRIPT}", "answer"
EXPLANATION = f"matched {ALERT}"


def records() -> list[Any]:
    graders = tuple(GraderSpec(name, "regex", {"pattern": "x"}) for name in (ALWAYS, NEVER, USEFUL))
    case = Case(
        name="alpha",
        prompt="p",
        source="prose",
        path=ROOT / "alpha" / "prompt.md",
        dir=ROOT / "alpha",
        suite_root=ROOT,
        graders=graders,
    )
    made = []
    for arm in ("with", "without"):
        for n in (1, 2, 3):
            verdicts = [
                Verdict(ALWAYS, True, EXPLANATION),
                Verdict(NEVER, False, EXPLANATION),
                Verdict(USEFUL, arm == "with", EXPLANATION),
            ]
            made.append(run_record(case, arm, n, verdicts))
    return made


def test_the_table_marks_the_graders_that_cannot_tell_the_arms_apart(
    browser: Browser, tmp_path: Path
) -> None:
    url = write_report(tmp_path, summary(records())).as_uri()
    errors: list[str] = []
    page, found = open_page(browser, url, "table.grader-splits", console=errors)
    assert_inert(found)
    table = page.locator("details.case table.grader-splits")
    assert table.locator("th").all_inner_texts() == [
        "Grader",
        "With",
        "Without",
        "Δ",
        "95%",
        "Flag",
    ]
    rows = table.locator("tbody tr")
    shown = [rows.nth(i).locator("td").all_inner_texts() for i in range(rows.count())]
    assert shown == [
        [ALWAYS, "3/3 (100%)", "3/3 (100%)", "+0.0 pts", "-56.1 to +56.1", "passes in both arms"],
        [NEVER, "0/3 (0%)", "0/3 (0%)", "+0.0 pts", "-56.1 to +56.1", "fails in both arms"],
        [USEFUL, "3/3 (100%)", "0/3 (0%)", "+100.0 pts", "+20.6 to +100.0", "discriminates"],
    ]
    marked = [rows.nth(i).evaluate("e => e.classList.contains('blind')") for i in range(3)]
    assert marked == [True, True, False]
    background = [
        rows.nth(i).evaluate("e => getComputedStyle(e).backgroundColor") for i in range(3)
    ]
    assert background[0] == background[1] != background[2]  # the flagged rows stand out
    title = rows.nth(0).locator(".flag").get_attribute("title") or ""
    assert "passed it, in both arms" in title
    # The explanations, in the run viewer, are text too.
    assert page.get_by_text(EXPLANATION).count() > 0
    assert errors == []
    page.close()
