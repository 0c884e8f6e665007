"""The files a session writes, one controller-only plugin each: the JSON result document (in the
results folder, and where ``--eval-json`` says), the HTML report, and the Markdown summary
(``--eval-markdown``, ``--eval-step-summary``).

Each runs in ``pytest_sessionfinish`` after the session has computed its result (the session's
hook runs first), writes its file, and tells the session where it is so the summary lists it.
A file that cannot be written is said once; it never changes the exit status.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_plugin_evals.plugin.session import EvalSession

if TYPE_CHECKING:
    from pytest_plugin_evals.reporting.result import SessionResult


class _Writer:
    """A writer of one kind of file, from the session's result."""

    label = ""

    def __init__(self, session: EvalSession) -> None:
        self.session = session

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.write()

    def write(self) -> None:
        session = self.session
        if session.result is None or session.results_dir is None:
            return
        folder = session.results_dir
        kept = _runs_were_made(session) or folder.is_dir()
        for target, text in self.files(session.result, folder):
            if target.parent == folder and not kept:
                continue  # no run was made (load errors only): no results folder
            if target.parent == folder:
                _ignore_all(folder)
            _write(session, self.label, target, text)

    def files(self, result: SessionResult, folder: Path) -> list[tuple[Path, str]]:
        raise NotImplementedError


class JsonWriter(_Writer):
    """``aggregate-result.json`` in the results folder, and a copy at ``--eval-json``."""

    label = "JSON"

    def files(self, result: SessionResult, folder: Path) -> list[tuple[Path, str]]:
        from pytest_plugin_evals.reporting.document import dumps_document

        text = dumps_document(result)
        targets = [folder / "aggregate-result.json"]
        if self.session.settings.json_path is not None:
            targets.append(self.session.settings.json_path)
        files = [(target, text) for target in targets]
        from pytest_plugin_evals.reporting.syntic import REPORT_FILE, report_text, syntic_cases

        if syntic_cases(result):  # an evals.json suite: the report its system writes, too
            here = str(self.session.config.invocation_params.dir)
            files.insert(1, (folder / REPORT_FILE, report_text(result, here)))
        return files


class HtmlWriter(_Writer):
    """The self-contained HTML report (``report.html``, or ``--eval-report``)."""

    label = "HTML"

    def files(self, result: SessionResult, folder: Path) -> list[tuple[Path, str]]:
        from pytest_plugin_evals.reporting.html import render_html

        target = self.session.settings.report_path or folder / "report.html"
        return [(target, render_html(result))]


class MarkdownWriter(_Writer):
    """``--eval-markdown``'s summary for a pull request, and the same added to the job's
    summary (``--eval-step-summary``). Runs after the HTML writer, so it links its report."""

    label = "Markdown"
    #: The session's exit status once its gates are settled (its outcome in the heading).
    exit_status: int | None = None

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.exit_status = int(session.exitstatus)
        self.write()
        if self.session.result is not None and self.session.settings.step_summary:
            _add_step_summary(self.session, self.text(self.session.result, None))

    def files(self, result: SessionResult, folder: Path) -> list[tuple[Path, str]]:
        target = self.session.settings.markdown_path
        return [] if target is None else [(target, self.text(result, target.parent))]

    def text(self, result: SessionResult, beside: Path | None) -> str:
        """The summary; its link to the HTML report relative to ``beside`` (None: the report's
        path as text, unless ``--eval-report-url`` gives its address)."""
        from pytest_plugin_evals.reporting.markdown import ReportLink, render_markdown

        settings, report = self.session.settings, None
        html = [path for label, path in self.session.paths if label == HtmlWriter.label]
        if settings.report_url is not None:
            report = ReportLink(href=settings.report_url)
        elif html and beside is not None:
            report = ReportLink(href=Path(os.path.relpath(html[0], beside)).as_posix())
        elif html:
            here = self.session.config.invocation_params.dir
            report = ReportLink(path=os.path.relpath(html[0], here))
        return render_markdown(result, exit_status=self.exit_status, report=report)


#: The variable GitHub Actions names the job's summary file in.
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def _add_step_summary(session: EvalSession, text: str) -> None:
    target = os.environ.get(STEP_SUMMARY, "")
    if not target:
        said = f"--eval-step-summary: ${STEP_SUMMARY} is not set (not a GitHub Actions job?): "
        _said(session, said + "no step summary was written")
        return
    try:
        with open(target, "a", encoding="utf-8") as summary:
            summary.write(text)
    except OSError as exc:
        _said(session, f"--eval-step-summary: could not add to ${STEP_SUMMARY}: {exc}")


def _said(session: EvalSession, line: str) -> None:
    """One more line among the session's write errors (said once, as a warning)."""
    session.write_error = line if session.write_error is None else f"{session.write_error}; {line}"


def register_writers(config: pytest.Config, session: EvalSession) -> None:
    """The writers, registered so that they run (the last registered first) and the summary
    lists their files in this order: the JSON document, the HTML report, then the Markdown
    summary, which links the report."""
    settings = session.settings
    if settings.markdown_path is not None or settings.step_summary:
        config.pluginmanager.register(MarkdownWriter(session), "plugin-evals-markdown")
    config.pluginmanager.register(HtmlWriter(session), "plugin-evals-html-report")
    config.pluginmanager.register(JsonWriter(session), "plugin-evals-json")


def _runs_were_made(session: EvalSession) -> bool:
    """Whether the session made (or started, or skipped) a run, not only load errors."""
    from pytest_plugin_evals.records import LoadErrorRecord

    return any(not isinstance(r, LoadErrorRecord) for r in session.records.values())


#: In every results folder, as in pytest's own cache folder: git ignores all of it.
GITIGNORE = "# Created by pytest-plugin-evals automatically.\n*\n"


def _ignore_all(folder: Path) -> None:
    """Put a ``.gitignore`` of ``*`` in the results folder, unless it has one (a folder of
    yours given as ``--eval-output-dir`` that already holds other files is left as it is)."""
    target = folder / ".gitignore"
    try:
        if target.exists() or target.is_symlink():
            return
        from pytest_plugin_evals.recording import CLAIM_LOCK, SESSION_LOCK

        ours = {CLAIM_LOCK, SESSION_LOCK, "runs", "mock-recordings", "aggregate-result.json"}
        ours |= {"report.html"}
        if folder.is_dir() and any(p.name not in ours for p in folder.iterdir()):
            return
        folder.mkdir(parents=True, exist_ok=True)
        target.write_text(GITIGNORE, encoding="utf-8")
    except OSError:
        return


def _write(session: EvalSession, label: str, target: Path, text: str) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        if session.write_error is None:
            session.write_error = f"could not write the eval reports: {exc}"
        return
    session.paths.append((label, target))
