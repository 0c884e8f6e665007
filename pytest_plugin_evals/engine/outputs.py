"""The files a session writes at its end, their names and paths: the JSON result document (in
the results folder, a copy where ``--eval-json`` says, and an evals.json suite's own report
beside it), the HTML report (``report.html``, or ``--eval-report``), the Markdown summary
(``--eval-markdown``, and added to the job's summary under ``--eval-step-summary``) and
skill-creator's workspace iteration (``--eval-skill-creator-workspace``). The shell calls
:func:`write_outputs` once the session has its result and its exit status; what it wrote is
listed in that order under the table. A file that cannot be written is said once
(:attr:`Written.error`); it never changes the exit status."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_plugin_evals.recording import ignore_all, run_folder
from pytest_plugin_evals.records import LoadErrorRecord, Record
from pytest_plugin_evals.reporting.document import dumps_document
from pytest_plugin_evals.reporting.html import render_html
from pytest_plugin_evals.reporting.markdown import ReportLink, render_markdown
from pytest_plugin_evals.reporting.result import SessionResult
from pytest_plugin_evals.reporting.skill_creator_write import workspace_files, write_workspace
from pytest_plugin_evals.reporting.syntic import REPORT_FILE, report_text, syntic_cases
from pytest_plugin_evals.settings import EvalSettings

#: The variable GitHub Actions names the job's summary file in.
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
#: How the summary labels the HTML report (the Markdown summary links it).
HTML = "HTML"


@dataclass
class Written:
    """What the session wrote, ``(label, path)`` in the order the summary lists them, and
    what it could not write (one line, said as a warning)."""

    paths: list[tuple[str, Path]] = field(default_factory=list)
    error: str | None = None

    def failed(self, line: str) -> None:
        """A file that could not be written: the first one is said."""
        if self.error is None:
            self.error = line

    def said(self, line: str) -> None:
        """One more line among the errors."""
        self.error = line if self.error is None else f"{self.error}; {line}"

    def write(self, label: str, target: Path, text: str) -> None:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.failed(f"could not write the eval reports: {exc}")
            return
        self.paths.append((label, target))


def report_files(
    result: SessionResult, folder: Path, settings: EvalSettings, here: Path
) -> list[tuple[str, Path, str]]:
    """The JSON document and the HTML report: ``(label, path, text)`` each, in order
    (``here``: the folder pytest was started in, which the evals.json report's paths are
    relative to)."""
    text = dumps_document(result)
    files = [("JSON", folder / "aggregate-result.json", text)]
    if syntic_cases(result):  # an evals.json suite: the report its system writes, too
        files.append(("JSON", folder / REPORT_FILE, report_text(result, str(here))))
    if settings.json_path is not None:
        files.append(("JSON", settings.json_path, text))
    html = settings.report_path or folder / "report.html"
    return [*files, (HTML, html, render_html(result))]


def markdown_text(
    result: SessionResult,
    settings: EvalSettings,
    html: Path | None,
    beside: Path | None,
    *,
    here: Path,
    exit_status: int,
) -> str:
    """The Markdown summary; its link to the HTML report ``html`` (if written) relative to
    ``beside`` (None: the report's path from ``here``, as text), unless ``--eval-report-url``
    gives its address."""
    report = None
    if settings.report_url is not None:
        report = ReportLink(href=settings.report_url)
    elif html is not None and beside is not None:
        report = ReportLink(href=Path(os.path.relpath(html, beside)).as_posix())
    elif html is not None:
        report = ReportLink(path=os.path.relpath(html, here))
    return render_markdown(result, exit_status=exit_status, report=report)


def write_outputs(
    result: SessionResult,
    folder: Path,
    settings: EvalSettings,
    records: Iterable[Record],
    *,
    here: Path,
    exit_status: int,
    environ: Mapping[str, str],
) -> Written:
    """Write the session's files. A session that made no run (load errors only) makes no
    results folder; one that did has git ignore it."""
    written = Written()
    kept = any(not isinstance(r, LoadErrorRecord) for r in records) or folder.is_dir()

    def put(label: str, target: Path, text: str) -> None:
        if target.parent == folder and not kept:
            return
        if target.parent == folder:
            ignore_all(folder)
        written.write(label, target, text)

    for label, target, text in report_files(result, folder, settings, here):
        put(label, target, text)
    html = next((path for label, path in written.paths if label == HTML), None)
    if settings.markdown_path is not None:
        beside = settings.markdown_path.parent
        text = markdown_text(result, settings, html, beside, here=here, exit_status=exit_status)
        put("Markdown", settings.markdown_path, text)
    if settings.step_summary:
        text = markdown_text(result, settings, html, None, here=here, exit_status=exit_status)
        _add_step_summary(environ, text, written)
    if settings.skill_creator_workspace is not None:
        _add_iteration(result, folder, settings.skill_creator_workspace, written)
    return written


def _add_step_summary(environ: Mapping[str, str], text: str, written: Written) -> None:
    target = environ.get(STEP_SUMMARY, "")
    if not target:
        said = f"--eval-step-summary: ${STEP_SUMMARY} is not set (not a GitHub Actions job?): "
        written.said(said + "no step summary was written")
        return
    try:
        with open(target, "a", encoding="utf-8") as summary:
            summary.write(text)
    except OSError as exc:
        written.said(f"--eval-step-summary: could not add to ${STEP_SUMMARY}: {exc}")


def _add_iteration(result: SessionResult, folder: Path, workspace: Path, written: Written) -> None:
    """The session's runs as the next iteration of a skill-creator workspace."""
    runs = folder / "runs"
    files = workspace_files(result, lambda r: run_folder(runs, r.case, r.arm, r.run, r.agent))
    if not files:
        return
    try:
        written.paths.append(("skill-creator", write_workspace(workspace, files)))
    except OSError as exc:
        written.failed(f"could not write the skill-creator workspace: {exc}")
