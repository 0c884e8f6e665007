"""The files a session writes, one controller-only plugin each: the JSON result document (in the
results folder, and where ``--eval-json`` says) and the HTML report.

Each runs in ``pytest_sessionfinish`` after the session has computed its result (the session's
hook runs first), writes its file, and tells the session where it is so the summary lists it.
A file that cannot be written is said once; it never changes the exit status.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin_evals.plugin.session import EvalSession


class JsonWriter:
    """``aggregate-result.json`` in the results folder, and a copy at ``--eval-json``."""

    def __init__(self, session: EvalSession) -> None:
        self.session = session

    @pytest.hookimpl
    def pytest_sessionfinish(self) -> None:
        session = self.session
        if session.result is None or session.results_dir is None:
            return
        from pytest_plugin_evals.reporting.document import dumps_document

        text = dumps_document(session.result)
        targets = [session.results_dir / "aggregate-result.json"]
        if session.settings.json_path is not None:
            targets.append(session.settings.json_path)
        for target in targets:
            _write(session, "JSON", target, text)


class HtmlWriter:
    """The self-contained HTML report (``report.html``, or ``--eval-report``)."""

    def __init__(self, session: EvalSession) -> None:
        self.session = session

    @pytest.hookimpl
    def pytest_sessionfinish(self) -> None:
        session = self.session
        if session.result is None or session.results_dir is None:
            return
        from pytest_plugin_evals.reporting.html import render_html

        target = session.settings.report_path or session.results_dir / "report.html"
        _write(session, "HTML", target, render_html(session.result))


def _write(session: EvalSession, label: str, target: Path, text: str) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        if session.write_error is None:
            session.write_error = f"could not write the eval reports: {exc}"
        return
    session.paths.append((label, target))
