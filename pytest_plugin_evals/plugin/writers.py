"""The files a session writes, one controller-only plugin each: the JSON result document (in the
results folder, and where ``--eval-json`` says) and the HTML report.

Each runs in ``pytest_sessionfinish`` after the session has computed its result (the session's
hook runs first), writes its file, and tells the session where it is so the summary lists it.
A file that cannot be written is said once; it never changes the exit status.
"""

from __future__ import annotations

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
    def pytest_sessionfinish(self) -> None:
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
        from pytest_plugin_evals.reporting.syntic import REPORT_FILE, report_json, syntic_cases

        if syntic_cases(result):  # an evals.json suite: the report its system writes, too
            from pytest_plugin_evals.records import dumps

            here = str(self.session.config.invocation_params.dir)
            report = dumps(report_json(result, here), indent=2) + "\n"
            files.insert(1, (folder / REPORT_FILE, report))
        return files


class HtmlWriter(_Writer):
    """The self-contained HTML report (``report.html``, or ``--eval-report``)."""

    label = "HTML"

    def files(self, result: SessionResult, folder: Path) -> list[tuple[Path, str]]:
        from pytest_plugin_evals.reporting.html import render_html

        target = self.session.settings.report_path or folder / "report.html"
        return [(target, render_html(result))]


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
