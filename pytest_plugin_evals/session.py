"""The controller's view of a session: gather run records, score, gate, write reports.

Registered only on the controller (never on an xdist worker). Records arrive on test reports
(``user_properties``), which xdist replays on the controller, so the numbers are the same with
and without ``-n``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from .items import PROPERTY
from .reporting.document import build_document, gate
from .reporting.html import render_html
from .reporting.terminal import summary_lines
from .settings import EvalSettings, results_dir


class EvalSession:
    def __init__(self, config: pytest.Config, settings: EvalSettings, stamp: str) -> None:
        self.config = config
        self.settings = settings
        self.stamp = stamp
        self.started_at = time.time()
        millis = int((self.started_at % 1) * 1000)
        self.started_iso = (
            time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.started_at)) + f".{millis:03d}Z"
        )
        self.records: dict[str, dict[str, Any]] = {}
        #: nodeids whose failure is a graded run below the bar (forgivable by the threshold).
        self.graded_failures: set[str] = set()
        #: nodeids that failed or errored for any other reason.
        self.other_failures: set[str] = set()
        self.document: dict[str, Any] | None = None
        self.paths: list[tuple[str, Path]] = []
        self.gate_message: str | None = None
        self.write_error: str | None = None
        self.ceiling_hit = False
        self.results_dir: Path | None = None

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = None
        for name, value in report.user_properties:
            if name == PROPERTY:
                record = json.loads(str(value))
        if record is not None:
            self.records[report.nodeid] = record
        if report.failed:
            graded = (
                record is not None
                and record.get("kind") == "run"
                and report.when == "call"
                and not record["result"].get("infraError")
            )
            (self.graded_failures if graded else self.other_failures).add(report.nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.records:
            return
        records = list(self.records.values())
        self.ceiling_hit = any(
            r.get("kind") == "run" and r["result"].get("skipped") == "cost_ceiling" for r in records
        )
        concurrency = int(getattr(self.config.option, "numprocesses", 0) or 0) or 1
        doc = build_document(
            records,
            started_at=self.started_iso,
            duration_seconds=round(time.time() - self.started_at, 3),
            threshold=self.settings.threshold,
            ablation=self._ablation(records),
            root=str(self._suite_root()),
            concurrency=concurrency,
            agent=self.settings.agent,
            case_filter=self.settings.case_glob,
            tag_filters=list(self.settings.tags) or None,
            partial_reason="cost_ceiling" if self.ceiling_hit else None,
        )
        self.document = doc
        self._write(doc)
        self._gate(session, doc)

    def _ablation(self, records: list[dict[str, Any]]) -> str:
        """The ablation the session ran: with-without when any case ran two arms."""
        if self.settings.ablation != "auto":
            return self.settings.ablation
        runs = [r for r in records if r.get("kind") == "run"]
        return "with-without" if any(r.get("twoArm") for r in runs) else "none"

    def _suite_root(self) -> Path:
        roots = sorted(
            {
                r.get("suiteRoot") or r["case"]["suiteRoot"]
                for r in self.records.values()
                if r.get("kind") == "run" or r.get("suiteRoot")
            }
        )
        if len(roots) == 1:
            return Path(roots[0])
        if not roots:
            return Path(self.config.rootpath)
        common = Path(os.path.commonpath(roots))
        # A plugin's package.json suite sits beside its evals folder: results go in evals/.
        return common / "evals" if str(common / "evals") in roots else common

    def _write(self, doc: dict[str, Any]) -> None:
        out = results_dir(self.settings, self._suite_root(), self.stamp)
        self.results_dir = out
        try:
            out.mkdir(parents=True, exist_ok=True)
            text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
            json_path = out / "aggregate-result.json"
            json_path.write_text(text, encoding="utf-8")
            self.paths.append(("JSON", json_path))
            if self.settings.json_path is not None:
                self.settings.json_path.parent.mkdir(parents=True, exist_ok=True)
                self.settings.json_path.write_text(text, encoding="utf-8")
                self.paths.append(("JSON", self.settings.json_path))
            html_path = self.settings.report_path or out / "report.html"
            html_path.parent.mkdir(parents=True, exist_ok=True)
            html_path.write_text(render_html(doc), encoding="utf-8")
            self.paths.append(("HTML", html_path))
        except OSError as exc:
            # Report-writing problems never change the exit status; they are said once.
            self.write_error = f"could not write the eval reports: {exc}"

    def _gate(self, session: pytest.Session, doc: dict[str, Any]) -> None:
        if self.ceiling_hit:
            session.exitstatus = 2
            self.gate_message = (
                f"cost ceiling ${self.settings.max_cost_usd:g} reached: the remaining runs were "
                "not started; the result is partial (exit status 2)"
            )
            return
        result = gate(doc, self.settings.threshold)
        status = session.exitstatus
        if (
            result.met
            and self.settings.threshold < 1
            and status == pytest.ExitCode.TESTS_FAILED
            and self.graded_failures
            and not self.other_failures
        ):
            session.exitstatus = pytest.ExitCode.OK
            self.gate_message = (
                f"every case's mean score meets the threshold {self.settings.threshold:g}: "
                f"{len(self.graded_failures)} failed run(s) below a perfect score are "
                "tolerated, exit status 0"
            )
        elif not result.met:
            if status == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
            self.gate_message = result.message

    def _skipped_judge_lines(self) -> list[str]:
        """Say when judge verdicts were skipped: on purpose, or for want of a judge."""
        reasons: dict[str, int] = {}
        for record in self.records.values():
            if record.get("kind") != "run":
                continue
            for verdict in record["result"].get("graders") or []:
                reason = verdict.get("skipped")
                if reason in ("--eval-no-judge", "no judge configured", "cost ceiling"):
                    reasons[reason] = reasons.get(reason, 0) + 1
        lines = []
        if reasons.get("--eval-no-judge"):
            lines.append(
                f"paid graders skipped on purpose (--eval-no-judge): "
                f"{reasons['--eval-no-judge']} verdict(s) not judged"
            )
        if reasons.get("no judge configured"):
            lines.append(
                f"{reasons['no judge configured']} judge verdict(s) skipped: no judge "
                "configured (the default judge, the claude binary, was not found) — pass "
                "--eval-judge anthropic|openai or --eval-claude-bin PATH"
            )
        if reasons.get("cost ceiling"):
            lines.append(f"{reasons['cost ceiling']} judge verdict(s) skipped: cost ceiling")
        return lines

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.document is None:
            return
        tr = terminalreporter
        tr.write_sep("=", "plugin evals")
        shown = [str(p) for _, p in self.paths]
        for line in summary_lines(self.document, report_paths=shown):
            tr.write_line(line)
        for line in self._skipped_judge_lines():
            tr.write_line(line, yellow=True)
        if self.results_dir is not None:
            from .mocks.agent import recordings_notice

            notice = recordings_notice(self.results_dir / "mock-recordings")
            if notice:
                tr.write_line(notice)
        if self.gate_message:
            tr.write_line(self.gate_message)
        if self.write_error:
            tr.write_line(self.write_error, yellow=True)
