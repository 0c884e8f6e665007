"""Judge graders: ``llm``, ``baseline`` (directory format) and ``meetsCriteria`` (package.json).

A judge backend is anything with ``vote(prompt) -> str`` (:class:`Judge`). Without one these
graders are skipped (``passed`` None, ``skipped`` "no judge configured"): never passed, never
scored. With one, each grader asks it three times, one after the other, and passes when more
than half of the replies vote PASS (a reply votes PASS when it holds the word PASS and not the
word FAIL, in any case). The prompts are laid out as the reference lays them out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any, Protocol, runtime_checkable

from pytest_plugin_evals.graders.base import (
    GradeContext,
    GraderConfigError,
    Outcome,
    js_json,
    skip,
)
from pytest_plugin_evals.graders.targets import read_focus_bytes, target_label, target_text
from pytest_plugin_evals.model import GraderSpec

NO_JUDGE = "no judge configured"
VOTES = 3

#: Text longer than this is shown as its head and tail.
TEXT_LIMIT = 100_000
TEXT_HEAD = 80_000
TEXT_TAIL = 20_000
#: A trace with more events than this is shown as its first and last events.
TRACE_EVENTS = 24

_PASS = re.compile(r"\bPASS\b", re.IGNORECASE | re.ASCII)
_FAIL = re.compile(r"\bFAIL\b", re.IGNORECASE | re.ASCII)

LLM_PROMPT = (
    "You are grading the output of a coding agent against a criterion.\n\n"
    "Criterion:\n{criteria}\n\n\n"
    "Agent output ({focus}):\n{text}\n\n\n"
    "Respond with exactly one word: PASS or FAIL."
)
BASELINE_PROMPT = (
    "You are comparing a NEW coding-agent trajectory against a BASELINE.\n\n"
    "Criterion:\n{criteria}\n\n\n"
    "BASELINE trajectory:\n{baseline}\n\n\n"
    "NEW trajectory:\n{trace}\n\n\n"
    "Does the NEW trajectory satisfy the criterion at least as well as the BASELINE?\n\n"
    "Respond with exactly one word: PASS or FAIL."
)


@runtime_checkable
class Judge(Protocol):
    """A judge backend: one model call per vote, the reply's text returned."""

    def vote(self, prompt: str) -> str: ...


def parse_vote(reply: str) -> bool:
    """PASS when the reply holds the word PASS and not the word FAIL (``PASSED`` is no PASS)."""
    return bool(_PASS.search(reply)) and not _FAIL.search(reply)


def elide_text(text: str) -> str:
    if len(text) <= TEXT_LIMIT:
        return text
    gone = len(text) - TEXT_HEAD - TEXT_TAIL
    return f"{text[:TEXT_HEAD]}\n[…{gone} chars elided…]\n{text[-TEXT_TAIL:]}"


def elide_events(lines: list[str]) -> str:
    if len(lines) > TRACE_EVENTS:
        half = TRACE_EVENTS // 2
        gone = len(lines) - TRACE_EVENTS
        lines = [*lines[:half], f"[…{gone} messages elided…]", *lines[-half:]]
    return elide_text("\n".join(lines))


def _criteria(spec: GraderSpec, *keys: str) -> str:
    for value in (spec.criteria, *(spec.config.get(k) for k in keys)):
        if isinstance(value, str) and value.strip():
            return value.strip()
    raise GraderConfigError(f"a {spec.type} grader needs criteria (the rubric to judge by)")


def _trace_shown(ctx: GradeContext) -> str:
    text = ctx.trace_text()
    return elide_events(text.split("\n") if text else [])


def focus_evidence(focus: Any, ctx: GradeContext) -> str:
    """What the judge is shown for a focus (``last_message``, ``trace``, a file ...)."""
    if focus == "trace":
        return _trace_shown(ctx)
    if isinstance(focus, dict) and isinstance(focus.get("path"), str):
        data = read_focus_bytes(focus["path"], ctx)
        from pytest_plugin_evals.graders.targets import is_image

        if is_image(data):
            raise GraderConfigError(
                f'focus file "{focus["path"]}" is an image; this judge backend takes text only'
            )
        return elide_text(data.decode("utf-8", errors="replace"))
    text = target_text(focus, ctx)
    if focus == "files" and not text:
        return "(no file changes)"
    if focus == "mock_calls" and not text:
        return "(no mocked tool calls)"
    return elide_text(text)


def _ask(judge: Judge, prompt: str, evidence: str) -> Outcome:
    votes: list[str] = []
    for _ in range(VOTES):
        try:
            reply = judge.vote(prompt)
        except Exception as exc:
            message = str(exc).strip() or type(exc).__name__
            if not message.startswith("judge call failed"):
                message = f"judge call failed: {message}"
            raise RuntimeError(message) from exc
        votes.append("PASS" if parse_vote(str(reply)) else "FAIL")
    passed = votes.count("PASS") * 2 > len(votes)
    return Outcome(
        passed,
        "judge votes: " + " ".join(votes),
        details={"judgeVotes": votes, "evidence": evidence},
    )


def grade_llm(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    if ctx.judge is None:
        return skip(NO_JUDGE)
    criteria = _criteria(spec, "criteria")
    focus = spec.config.get("focus", spec.config.get("target")) or "last_message"
    evidence = focus_evidence(focus, ctx)
    label = target_label(focus)
    prompt = LLM_PROMPT.format(criteria=criteria, focus=label, text=evidence)
    return _ask(ctx.judge, prompt, evidence)


def grade_meets_criteria(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """package.json ``meetsCriteria``: the judge reads the final message against the criterion."""
    if ctx.judge is None:
        return skip(NO_JUDGE)
    criteria = _criteria(spec, "value", "criteria")
    evidence = focus_evidence("last_message", ctx)
    prompt = LLM_PROMPT.format(criteria=criteria, focus="last_message", text=evidence)
    return _ask(ctx.judge, prompt, evidence)


def grade_baseline(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    if ctx.judge is None:
        return skip(NO_JUDGE)
    criteria = _criteria(spec, "criteria")
    baseline = _read_baseline(spec, ctx)
    if isinstance(baseline, Outcome):
        return baseline
    trace = _trace_shown(ctx)
    prompt = BASELINE_PROMPT.format(criteria=criteria, baseline=baseline, trace=trace)
    return _ask(ctx.judge, prompt, trace)


def _read_baseline(spec: GraderSpec, ctx: GradeContext) -> str | Outcome:
    rel = spec.config.get("baseline_file", spec.config.get("baseline"))
    if not isinstance(rel, str) or not rel.strip():
        raise GraderConfigError(
            'a baseline grader needs "baseline_file" (a .jsonl in the case folder)'
        )
    name = ctx.case_name
    where = f'case "{name}": ' if name is not None else ""
    parts = PurePosixPath(rel.replace("\\", "/"))
    if parts.is_absolute() or ".." in parts.parts:
        return Outcome(
            False,
            f'failed to read baseline: {where}path "{rel}" escapes the case directory '
            "(`..` or an absolute path) — it must name something inside it",
        )
    base = ctx.case.dir if ctx.case is not None else Path.cwd()
    path = Path(base).joinpath(*parts.parts)
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return Outcome(False, f'failed to read baseline: {where}path "{rel}" does not exist')
    except OSError as exc:
        return Outcome(False, f'failed to read baseline: {where}path "{rel}": {exc.strerror}')
    lines = []
    for line in raw.splitlines():
        if not line.strip():
            continue
        try:
            lines.append(js_json(json.loads(line)))
        except ValueError:
            lines.append(line)
    return elide_events(lines)
