"""``report.json`` as ``syntic plugin eval`` writes it, for the ``evals.json`` suites of that
system (``{"cases": [{name, prompt, expect}]}``), and its summary line.

Its users' scripts read it, so its shape is the seed system's::

    {"plugin": "./release-helper", "passed": 2, "total": 3, "score": 0.889,
     "cases": [{"name": "...", "passed": false, "score": 0.667,
                "checks": [{"check": "contains \\"changelog\\"", "passed": true}, ...],
                "output": "…the answer, cut at 4,000 characters…", "error": null}]}

A case is one session there; here a case may have several with-arm runs: its ``score`` is
the mean of its runs' scores, where a run whose session failed (a run error, or a run that
could not be made) scores 0 as there. Its checks, output and
error are the first run's: a failed session's reason is its ``error``, with no output. A case
passes when every check of every run passed (``--eval-threshold`` decides our gate, not this).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

from pytest_plugin_evals.records import JSONObject, RunRecord, dumps
from pytest_plugin_evals.reporting.result import CaseResult, SessionResult

#: The suite format this report is for (``CaseInfo.source``).
SOURCE = "evals_json"
#: The file's name, beside ``aggregate-result.json``.
REPORT_FILE = "report.json"
#: An answer is cut at this many characters.
OUTPUT_LIMIT = 4000


def syntic_cases(result: SessionResult) -> list[CaseResult]:
    """The session's cases of that format (none: no report)."""
    return [c for c in result.cases if c.case.source == SOURCE]


def _first_run(case: CaseResult) -> RunRecord | None:
    runs = sorted(case.with_runs, key=lambda r: r.result.run)
    made = [r for r in runs if r.result.graded]
    chosen = made or runs
    return chosen[0] if chosen else None


def _error(record: RunRecord) -> str | None:
    run = record.result
    if run.infra_error and run.error:
        return f"{run.infra_error}: {run.error}"
    return run.error or run.infra_error


def _run_score(record: RunRecord) -> float:
    run = record.result
    return 0.0 if run.error or run.infra_error else min(1.0, max(0.0, run.score))


def case_score(case: CaseResult) -> tuple[float, bool]:
    """The case's score and whether it passed, as that system counts them."""
    runs = case.with_runs
    if not runs:
        return 0.0, False
    scores = [_run_score(r) for r in runs]
    # A case passes only when every check passed, whatever --eval-threshold says.
    return sum(scores) / len(scores), all(score == 1.0 for score in scores)


def _case(case: CaseResult) -> JSONObject:
    record = _first_run(case)
    checks: list[JSONObject] = []
    output = ""
    error: str | None = None
    if record is not None:
        run = record.result
        error = _error(record)
        if run.graded:
            checks = [{"check": v.name, "passed": bool(v.passed)} for v in run.verdicts if v.counts]
        else:
            checks = [{"check": g.name, "passed": False} for g in record.case.graders]
        if error is None:
            output = run.answer[:OUTPUT_LIMIT]
    score, passed = case_score(case)
    return {
        "name": case.name,
        "passed": passed,
        "score": round(score, 3),
        "checks": checks,
        "output": output,
        "error": error,
    }


def _shown(plugin: str, here: str | None) -> str:
    """``./release-helper`` when the plugin is under ``here``, else its path."""
    if here:
        try:
            rel = PurePath(plugin).relative_to(here).as_posix()
        except ValueError:
            return plugin
        return "." if rel == "." else f"./{rel}"
    return plugin


def report_json(result: SessionResult, here: str | None = None) -> JSONObject:
    """``report.json`` of the session's cases of that format; ``here`` is the folder the
    session started in (the plugin is shown relative to it)."""
    cases = syntic_cases(result)
    judged = [case_score(c) for c in cases]
    scores = [score for score, _ in judged]
    plugins: Sequence[str] = [str(p.path) for p in result.suite.plugins]
    plugin = plugins[0] if plugins else str(PurePath(cases[0].case.suite_root).parent)
    return {
        "plugin": _shown(plugin, here),
        "passed": sum(1 for _, passed in judged if passed),
        "total": len(cases),
        "score": round(sum(scores) / len(scores), 3) if scores else 0.0,
        "cases": [_case(c) for c in cases],
    }


def report_text(result: SessionResult, here: str | None = None) -> str:
    """:func:`report_json` as ``report.json`` holds it."""
    return dumps(report_json(result, here), indent=2) + "\n"


def summary_line(result: SessionResult) -> str | None:
    """``2 of 3 cases passed, score 89%`` (None: no case of that format)."""
    cases = syntic_cases(result)
    if not cases:
        return None
    judged = [case_score(c) for c in cases]
    passed = sum(1 for _, ok in judged if ok)
    score = sum(s for s, _ in judged) / len(judged)
    return f"{passed} of {len(cases)} cases passed, score {score * 100:.0f}%"
