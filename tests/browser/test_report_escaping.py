"""Reports show untrusted text as text: both HTML pages of one hostile session, in a real browser.

Case names, prompts and grader configurations come from suites, answers and explanations from a
model's output. One session, with case names, a prompt, an explanation and an answer that are
each a script injection, writes the plugin's own report and a pytest-html report; headless
Chromium then opens both and checks that no script ran, no dialog opened, no element carries an
event handler or a ``javascript:`` link, and that the hostile strings are on the page as text.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers import write_tree

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Dialog, Error, Page

IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "</script><script>window.__pwned=1</script>"
SVG = '"><svg onload=window.__pwned=1>'
LINK = '<a href="javascript:window.__pwned=1">javascript:window.__pwned=1</a>'
MARKDOWN_LINK = "[open me](javascript:window.__pwned=1)"
ALERT = "<script>alert(1)</script><img src=y onerror=alert(2)>"

ANSWER = f"Here you are: {IMG} {SCRIPT} {SVG} {LINK} {MARKDOWN_LINK} {ALERT}"
PROMPT = f"Reply to this. {SCRIPT} {LINK} {ALERT}"

#: Whatever the payload could have made of the page: its flag, an event-handler attribute, a
#: ``javascript:`` URL or a script that carries it (pytest-html's own page has an ``onclick``;
#: the plugin's JSON document is data, not a script).
FOUND_ACTIVE = """() => {
  const payload = /__pwned|alert\\(/;
  const all = Array.from(document.querySelectorAll("*"));
  const attributes = (test) => all.flatMap((el) => Array.from(el.attributes)
    .filter((a) => test(a) && payload.test(a.value))
    .map((a) => `${el.tagName.toLowerCase()} ${a.name}=${a.value}`));
  return {
    pwned: window.__pwned ?? null,
    handlers: attributes((a) => a.name.toLowerCase().startsWith("on")),
    jsUrls: attributes((a) => /^\\s*javascript:/i.test(a.value)),
    scripts: Array.from(document.scripts)
      .filter((s) => s.type !== "application/json" && payload.test(s.text))
      .map((s) => s.text.slice(0, 200)),
  };
}"""

#: Let late work finish: pytest-html builds its table from JSON after the page has loaded, and
#: an image's error event comes a task or two after the image is inserted.
SETTLE = """() => new Promise((done) =>
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 250))))"""


def hostile_suite(root: Path) -> None:
    """Three cases: two named by their folder, one by ``name:``; every grader explains itself
    with the hostile pattern it matched, and one never matches (so every run fails, and its
    failure text lands in pytest-html's log too)."""
    graders = {
        "graders/echo.md": f"---\ntype: regex\npattern: '{IMG}'\n---\n",
        "graders/missing.md": "---\ntype: regex\npattern: never-there\n---\n",
    }
    cases = {IMG: "", "named": f"name: '{SCRIPT}'\n", SVG: ""}
    for folder, name in cases.items():
        files = {f"{folder}/prompt.md": f"---\n{name}runs: 1\n---\n{PROMPT}\n"}
        files.update({f"{folder}/{path}": text for path, text in graders.items()})
        write_tree(root / "evals", files)


def watch(page: Page) -> tuple[list[str], list[str]]:
    """The dialogs (dismissed) and the uncaught script errors of ``page``, as they come."""
    dialogs: list[str] = []
    errors: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    def on_error(error: Error) -> None:
        errors.append(str(error))

    page.on("dialog", on_dialog)
    page.on("pageerror", on_error)
    return dialogs, errors


def open_page(
    browser: Browser, url: str, ready: str, console: list[str] | None = None
) -> tuple[Page, dict[str, Any]]:
    """Open ``url``, wait for ``ready`` and the page to settle; the page and what ran on it
    (and the console's errors, from the start, into ``console`` when given)."""
    page = browser.new_page()
    if console is not None:
        page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    dialogs, errors = watch(page)
    page.goto(url)
    page.wait_for_selector(ready, state="attached")
    page.evaluate(SETTLE)
    found: dict[str, Any] = page.evaluate(FOUND_ACTIVE)
    found.update(dialogs=dialogs, errors=errors)
    return page, found


def assert_inert(found: dict[str, Any]) -> None:
    assert found == {
        "pwned": None,
        "handlers": [],
        "jsUrls": [],
        "scripts": [],
        "dialogs": [],
        "errors": [],
    }


def test_the_check_sees_an_injection(browser: Browser) -> None:
    """The checks below are not vacuous: markup put in as markup does run, and is seen."""
    page = browser.new_page()
    dialogs, _ = watch(page)
    page.set_content(f"<p>{IMG} {SVG} {LINK} {ALERT}</p>")
    page.evaluate(SETTLE)
    found = page.evaluate(FOUND_ACTIVE)
    assert found["pwned"] == 1
    assert found["handlers"] and found["jsUrls"]
    assert dialogs


def test_both_html_reports_show_hostile_text_as_text(
    pytester: pytest.Pytester, scripted_agent: Any, browser: Browser
) -> None:
    hostile_suite(pytester.path)
    agent = scripted_agent([{"match": "Reply to this", "reply": ANSWER}])
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "--eval-agent", agent,
        "--html", "ph.html", "--self-contained-html", "--eval-report", "ours.html",
    )  # fmt: skip
    result.assert_outcomes(failed=3)
    ours, theirs = pytester.path / "ours.html", pytester.path / "ph.html"
    assert ours.is_file() and theirs.is_file()

    check_our_report(browser, ours.as_uri())
    check_pytest_html(browser, theirs.as_uri())


def check_our_report(browser: Browser, url: str) -> None:
    page, found = open_page(browser, url, "#toolbar button")
    assert_inert(found)
    page.get_by_role("button", name="Expand all").click()
    text = page.inner_text("body")
    for name in (IMG, SCRIPT, SVG):
        assert f"\n{name}" in text, f"case name {name!r} shown as text"
    assert text.count(PROMPT) == 3
    assert text.count(ANSWER) == 3
    assert text.count(f"matched {IMG}") == 3
    assert sorted(page.locator("h2").all_inner_texts()) == sorted([IMG, SCRIPT, SVG])
    # The embedded result document is still data, and still says the same.
    document = page.evaluate('JSON.parse(document.getElementById("eval-document").textContent)')
    assert sorted(c["name"] for c in document["cases"]) == sorted([IMG, SCRIPT, SVG])
    page.close()


def check_pytest_html(browser: Browser, url: str) -> None:
    page, found = open_page(browser, url, "#results-table .col-testId")
    assert_inert(found)
    test_ids = page.locator("#results-table .col-testId").all_inner_texts()
    assert sorted(test_ids) == sorted(
        [f"evals/{IMG}::{IMG}[1]", f"evals/named::{SCRIPT}[1]", f"evals/{SVG}::{SVG}[1]"]
    )
    text = page.inner_text("body")
    assert text.count(f"matched {IMG}") == 3  # the verdicts extra
    assert text.count("pattern not found in last_message") >= 6  # the extra and the log
    answers = page.locator("a.col-links__extra", has_text="Answer")
    hrefs = [answers.nth(i).get_attribute("href") or "" for i in range(answers.count())]
    page.close()
    assert len(hrefs) == 3
    for href in hrefs:
        assert href.startswith("data:text/plain;charset=utf-8;base64,")
        assert base64.b64decode(href.partition(",")[2]).decode() == ANSWER
    # Followed, the answer link opens as plain text.
    page, found = open_page(browser, hrefs[0], "body")
    assert_inert(found)
    assert page.inner_text("body") == ANSWER
    page.close()
