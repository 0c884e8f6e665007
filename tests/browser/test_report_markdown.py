"""The Markdown summary of a hostile session, rendered as a pull request's comment would be (a
CommonMark renderer that lets raw HTML through, with GFM's tables and autolinks) and opened in
headless Chromium: no script ran, no dialog opened, nothing was fetched (no image, no
stylesheet), the only link is the report's, and the hostile strings are on the page as text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_plugin_evals.model import Case, Verdict
from pytest_plugin_evals.reporting.markdown import ReportLink, render_markdown
from pytest_plugin_evals.reporting.markdown_text import ZWSP
from tests.helpers import run_record, summary
from tests.unit.test_reporting_markdown import gfm

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Dialog, Request

NAME = '<img src="http://127.0.0.1:9/n.png" onerror="window.__pwned=1"> @octocat'
NOTE = (
    "<script>window.__pwned=1</script> ![x](http://127.0.0.1:9/i.png) "
    "[open](javascript:window.__pwned=1) <style>body{display:none}</style> #1 | `x`"
)
REPORT = "https://ci.example/runs/1"


def hostile_summary() -> str:
    root = Path("/suite/evals")
    case = Case(name=NAME, prompt="p", source="prose", path=root / "x" / "prompt.md",
                dir=root / "x", suite_root=root)  # fmt: skip
    records = [
        run_record(case, arm, n, [Verdict("g", False, NOTE)], score=0.0, nodeid=f"x[{arm}-{n}]")
        for arm in ("with", "without")
        for n in (1, 2)
    ]
    return render_markdown(summary(records), exit_status=1, report=ReportLink(href=REPORT))


def test_a_hostile_summary_renders_as_text_in_a_browser(browser: Browser) -> None:
    html = "<!doctype html><meta charset=utf-8><body>" + gfm().render(hostile_summary())
    page = browser.new_page()
    fetched: list[str] = []
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    def on_request(request: Request) -> None:
        fetched.append(request.url)

    page.on("dialog", on_dialog)
    page.on("request", on_request)
    page.set_content(html)
    page.wait_for_timeout(250)  # an image's error event comes a task or two later
    assert page.evaluate("() => window.__pwned ?? null") is None
    assert dialogs == [] and fetched == []
    links = page.evaluate("() => Array.from(document.links, (a) => a.href)")
    assert links == [REPORT]
    counts = page.evaluate(
        """() => ({img: document.images.length, scripts: document.scripts.length,
                   styles: document.querySelectorAll("style").length,
                   rows: document.querySelectorAll("tbody tr").length,
                   cells: document.querySelectorAll("tbody td").length})"""
    )
    assert counts == {"img": 0, "scripts": 0, "styles": 0, "rows": 1, "cells": 5}
    text = page.inner_text("body").replace(ZWSP, "")
    assert " ".join(NOTE.split())[:60] in " ".join(text.split())
    assert page.inner_text("tbody td:first-child").replace(ZWSP, "") == NAME[:39] + "…"
