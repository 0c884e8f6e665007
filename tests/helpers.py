"""Small helpers shared by the test modules (fixtures live in the conftest files)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> text) under ``root``; returns ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def run_command(cwd: Path, *args: str) -> pytest.RunResult:
    """``python -m pytest_plugin_evals ARGS`` run in this process from ``cwd`` (the command's
    ``main``, as the console runs it, without starting an interpreter): its exit status and
    what it printed."""
    import io
    import time

    from pytest_plugin_evals.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    before, started = Path.cwd(), time.perf_counter()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                ret: int = main(list(args))
            except SystemExit as exc:  # argparse's usage errors and --help
                ret = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(before)
    lines = [out.getvalue().splitlines(), err.getvalue().splitlines()]
    return pytest.RunResult(ret, lines[0], lines[1], time.perf_counter() - started)


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` with a fixed author and no signing; its output, stripped."""
    done = subprocess.run(
        ["git", "-c", "user.name=Eval Test", "-c", "user.email=eval@example.org",
         "-c", "commit.gpgsign=false", *args],
        cwd=root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def claude_argv(claude_bin: str, *extra: str, max_turns: int = 6) -> list[str]:
    """``claude -p`` as the harness runs it (stream-json, dontAsk, user settings only)."""
    return [
        claude_bin, "-p", "--output-format", "stream-json", "--verbose",
        "--max-turns", str(max_turns), "--permission-mode", "dontAsk",
        "--setting-sources", "user", *extra,
    ]  # fmt: skip


def judged(verdict: Any) -> dict[str, Any]:
    """A judge verdict's votes, evidence and cost, as the result document writes them."""
    from pytest_plugin_evals.records import verdict_to_json

    doc = verdict_to_json(verdict)
    return {k: doc[k] for k in ("judgeVotes", "evidence", "judgeCostUsd") if k in doc}


def nonce_of(prompt: str) -> str:
    """The nonce of the fences in a judge prompt (the first ``<<<TAG nonce>>>`` line)."""
    import re

    found = re.search(r"^<<<[A-Z ]+ ([0-9a-f]{24})>>>$", prompt, re.MULTILINE)
    assert found is not None, f"no fence in the judge prompt: {prompt!r}"
    return found.group(1)


def run_record(
    case: Any,
    arm: str,
    n: int,
    verdicts: Any = (),
    *,
    score: float | None = None,
    two_arm: bool = True,
    cost: float = 0.01,
    error: str | None = None,
    infra: str | None = None,
    skipped_paid: bool = False,
    nodeid: str | None = None,
    plugin: Any = None,
    answer: str = "Paris.",
    turns: int = 2,
    duration: float | None = 1.0,
) -> Any:
    """A typed run record as an eval item reports it (the score computed from ``verdicts``
    unless given)."""
    from pytest_plugin_evals.model import RunResult, Verdict, cut_answer
    from pytest_plugin_evals.records import CaseInfo, RunRecord
    from pytest_plugin_evals.scoring import run_score

    verdicts = list(verdicts)
    if skipped_paid:
        verdicts.append(
            Verdict("rubric", None, "skipped: cost ceiling", type="llm", scored=False,
                    skipped="cost ceiling")
        )  # fmt: skip
    computed, passed = run_score(verdicts, run_ok=error is None and infra is None)
    if score is not None:
        computed, passed = score, score >= 1.0
    shown, cut = cut_answer(answer)
    result = RunResult(
        arm=arm,  # type: ignore[arg-type]
        run=n,
        score=computed,
        passed=passed,
        verdicts=tuple(verdicts),
        turns=turns,
        cost_usd=cost,
        duration_seconds=duration,
        error=error,
        infra_error=infra,
        skipped_paid_graders=skipped_paid,
        answer=shown,
        answer_truncated=cut,
    )
    label = f"{arm}-{n}" if arm != "single" else str(n)
    return RunRecord(
        nodeid or f"evals/{case.dir.name}::{case.name}[{label}]",
        CaseInfo.of(case),
        plugin,
        two_arm,
        result,
    )


def skipped_record(case: Any, arm: str, n: int, reason: str, *, two_arm: bool = True) -> Any:
    """A run that was never started, as an eval item reports it."""
    from pytest_plugin_evals.records import CaseInfo, SkippedRun

    label = f"{arm}-{n}" if arm != "single" else str(n)
    nodeid = f"evals/{case.dir.name}::{case.name}[{label}]"
    return SkippedRun(nodeid, CaseInfo.of(case), None, two_arm, arm, n, reason)  # type: ignore[arg-type]


def summary(records: Any, **kw: Any) -> Any:
    """The session result of ``records`` (``summarize`` with test defaults)."""
    from dataclasses import fields

    from pytest_plugin_evals.reporting.result import SessionFacts, summarize
    from pytest_plugin_evals.scoring import ScoringRules

    options: dict[str, Any] = dict(
        started_at="2026-01-01T00:00:00Z",
        duration_seconds=7.0,
        threshold=0.8,
        ablation="with-without",
        concurrency=2,
        agent="claude",
    )
    options.update(kw)

    def taken(cls: Any) -> dict[str, Any]:
        names = {f.name for f in fields(cls)}
        picked = {k: options.pop(k) for k in list(options) if k in names}
        return {k: tuple(v) if isinstance(v, list) else v for k, v in picked.items()}

    facts, rules = SessionFacts(**taken(SessionFacts)), ScoringRules(**taken(ScoringRules))
    return summarize(records, facts, rules, **options)


def mocks_doc(setup: Any) -> dict[str, Any]:
    """A run's mock setup (servers and warnings) as the result document writes it."""
    from pytest_plugin_evals.model import MockSummary
    from pytest_plugin_evals.records import mocks_to_json

    servers, warnings = setup.summary()
    return mocks_to_json(MockSummary(servers, warnings))


#: ``-m "evals(arm='with')"``: marker arguments in ``-m`` came with pytest 8.3.
needs_marker_arguments = pytest.mark.skipif(
    tuple(int(part) for part in pytest.__version__.split(".")[:2]) < (8, 3),
    reason="marker arguments in -m need pytest 8.3",
)


#: What a shell prints past the fences when confinement works.
FENCE_DONE = "fence-probe-end"


def fence_probe(root: Path) -> tuple[str, Path, Path]:
    """A shell command that tries the fences of a confined agent run in a pytester project at
    ``root``: it writes in its cwd, reads a file planted beside the project, lists the evals
    folder and writes into the project. Base64-encoded, so an agent's own path checks cannot
    refuse it (bubblewrap must hold). Returns the command, the planted file and the file it
    tries to write outside."""
    import base64

    planted = root.parent / f"{root.name}-operator-notes.txt"
    planted.write_text("operator-only-7d1c", encoding="utf-8")
    outside = root / "escaped.txt"
    script = (
        f"echo made > made.txt; cat {planted} 2>&1; ls {root / 'evals'} 2>&1; "
        f"echo x > {outside} 2>&1; echo {FENCE_DONE}"
    )
    return f"echo {base64.b64encode(script.encode()).decode()} | base64 -d | sh", planted, outside


def assert_fenced(output: str, outside: Path, case_name: str) -> None:
    """The probe of :func:`fence_probe` ran and every fence held."""
    assert FENCE_DONE in output, output
    assert "operator-only-7d1c" not in output
    assert case_name not in output.replace(FENCE_DONE, "")  # the evals folder looks empty
    assert not outside.exists()


def live_processes(marker: str) -> list[int]:
    """The live processes (zombies aside) whose command line holds ``marker``."""
    found = []
    wanted = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # The command line first: most processes end the check there (the tests poll this).
            if wanted not in (entry / "cmdline").read_bytes():
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            found.append(int(entry.name))
        except OSError:
            pass
    return found


def reap(proc: subprocess.Popen[bytes], *, group: bool = False) -> None:
    """End ``proc`` if it still runs (its whole process group with ``group``), wait for it and
    close its pipes. A test that fails midway then leaves no child running and no pipe open:
    their ``ResourceWarning`` would otherwise surface later, as an error of whichever pytester
    session runs next in the same process."""
    if proc.poll() is None:
        try:
            if group:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
        except ProcessLookupError:
            pass
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=30)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


#: The syntic seed's own evals.json suite (seed 000).
SYNTIC_SEED_SUITE: dict[str, list[dict[str, Any]]] = {
    "cases": [
        {
            "name": "suggests the next version",
            "prompt": "We fixed two bugs since v1.4.0. What should the next version be?",
            "expect": {"contains": ["1.4.1"], "not_contains": ["2.0.0"]},
        },
        {
            "name": "slash command explains itself",
            "prompt": "/release-helper:ship --help",
            "expect": {"contains": ["changelog", "tag"], "min_chars": 80},
        },
        {"name": "answers something", "prompt": "Summarise what the release helper can do."},
    ]
}


def trace_diffs(page: str) -> dict[str, dict[str, Any]]:
    """The trace diffs an HTML report shows without script, by case section id: each one's
    caption and the rows of its step table, each cell's text with its whitespace runs made
    one space (the pairs kept in ``<template>`` elements are left out)."""
    from html.parser import HTMLParser

    void = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}

    class Diffs(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.found: dict[str, dict[str, Any]] = {}
            self.stack: list[tuple[str, str]] = []  # (tag, class)
            self.current: dict[str, Any] | None = None
            self.text: list[str] | None = None

        def within(self, cls: str) -> bool:
            return any(cls in c.split() for _, c in self.stack)

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            got = dict(attrs)
            if tag in void:
                return
            self.stack.append((tag, got.get("class") or ""))
            if tag == "section" and "trace-diff" in (got.get("class") or "").split():
                self.current = self.found.setdefault(got.get("id") or "", {"rows": []})
            if self.current is None or any(t == "template" for t, _ in self.stack):
                return
            body = any(t == "tbody" for t, _ in self.stack)
            if tag == "tr" and body and self.within("diff-steps") and self.within("diff-shown"):
                self.current["rows"].append([])
            elif self.within("diff-shown") and (
                tag == "td" or (tag == "p" and "diff-caption" in (got.get("class") or "").split())
            ):
                self.text = []

        def handle_endtag(self, tag: str) -> None:
            if self.text is not None and tag in ("td", "p") and self.current is not None:
                said = " ".join("".join(self.text).split())
                if tag == "td":
                    self.current["rows"][-1].append(said)
                else:
                    self.current["caption"] = said
                self.text = None
            while self.stack:
                if self.stack.pop()[0] == tag:
                    break
            if tag == "section":
                self.current = None

        def handle_data(self, data: str) -> None:
            if self.text is not None:
                self.text.append(data)

    parser = Diffs()
    parser.feed(page)
    parser.close()
    return parser.found
