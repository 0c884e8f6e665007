"""Sessions made up for the report's browser tests: any number of cases, two arms, runs whose
outcomes are chosen per case (so which Δ is significant and which case is unstable is known),
tool calls, answers, latencies and costs. Built from typed run records, as the controller
builds a real session's result."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import Case, GraderSpec, PluginInfo, ToolCallBrief, Verdict
from pytest_plugin_evals.reporting.result import SessionResult
from tests.helpers import run_record, summary

ROOT = Path("/suite/evals")
PLUGIN = PluginInfo("release-kit", "2.0.0", Path("/suite"))

#: Passes out of five runs, with and without the plugin, and what that makes of the case.
PATTERNS: dict[str, tuple[int, int]] = {
    "up": (5, 0),  # significant, up
    "down": (0, 5),  # significant, down
    "flat-pass": (5, 5),  # not significant, both stable
    "flat-fail": (0, 0),
    "noisy": (3, 2),  # not significant, both arms unstable
    "noisy-up": (4, 1),  # not significant with 5 runs, unstable
}


def make_case(name: str, folder: str | None = None) -> Case:
    folder = folder or name
    graders = (
        GraderSpec("answer", "regex", {"pattern": "1\\.4\\.1", "target": "last_message"}),
        GraderSpec("skill-fired", "tool_used", {"tool": "Skill", "min": 1}),
    )
    return Case(
        name=name,
        prompt=f"We fixed two bugs since v1.4.0 ({name}). What should the next version be?",
        source="prose",
        path=ROOT / folder / "prompt.md",
        dir=ROOT / folder,
        suite_root=ROOT,
        graders=graders,
    )


def tool_calls(arm: str, n: int) -> tuple[int, tuple[ToolCallBrief, ...]]:
    """How many calls a run made and those its record keeps (a long run keeps only some)."""
    if arm == "without":
        return 1, (ToolCallBrief("Read", '{"file_path":"CHANGELOG.md"}'),)
    calls = (
        ToolCallBrief("Skill", '{"skill":"release-kit:next-version"}'),
        ToolCallBrief("Bash", '{"command":"git tag --list"}', is_error=n == 2),
        ToolCallBrief("Read", '{"file_path":"CHANGELOG.md"}'),
    )
    return (5, calls) if n == 3 else (3, calls)


def records_for(case: Case, pattern: str, rng: random.Random, runs: int = 5) -> list[Any]:
    passes = dict(zip(("with", "without"), PATTERNS[pattern], strict=True))
    out = []
    for arm in ("with", "without"):
        for n in range(1, runs + 1):
            passed = n <= passes[arm]
            verdicts = [
                Verdict("answer", passed, "matched 1\\.4\\.1" if passed else "pattern not found"),
            ]
            if arm == "with":
                verdicts.append(
                    Verdict("skill-fired", True, "Skill called 1x", scored=False, with_only=True)
                )
            record = run_record(
                case, arm, n, verdicts,
                answer="The next version is 1.4.1." if passed else "Probably 2.0.0.",
                duration=round(rng.uniform(8, 40) if arm == "with" else rng.uniform(5, 25), 1),
                cost=round(rng.uniform(0.01, 0.09), 3),
                turns=rng.randint(1, 6),
            )  # fmt: skip
            total, kept = tool_calls(arm, n)
            result = dataclasses.replace(record.result, tool_calls=total, tool_call_list=kept)
            out.append(dataclasses.replace(record, result=result))
    return out


def session(patterns: list[tuple[str, str]], seed: int = 7) -> SessionResult:
    """A two-arm session of ``(case name, pattern)`` pairs."""
    rng = random.Random(seed)
    records: list[Any] = []
    for index, (name, pattern) in enumerate(patterns):
        case = make_case(name, folder=f"case-{index:03d}")
        records.extend(records_for(case, pattern, rng))
    plugin_records = [dataclasses.replace(r, plugin=PLUGIN) for r in records]
    return summary(plugin_records, duration_seconds=640.0, threshold=0.8)


def many(count: int, seed: int = 11) -> list[tuple[str, str]]:
    """``count`` cases with made-up names and patterns drawn at random (reproducibly)."""
    rng = random.Random(seed)
    words = ["release", "notes", "version", "changelog", "tag", "decoy", "capital", "semver",
             "hotfix", "breaking", "deprecate", "migrate", "golden", "bump"]  # fmt: skip
    names = []
    for index in range(count):
        name = "-".join(rng.sample(words, 2)) + f"-{index:03d}"
        names.append((name, rng.choice(list(PATTERNS))))
    return names


def expected(result: SessionResult) -> dict[str, int]:
    """What the charts must show, counted from the result's own aggregates."""
    cases = result.cases
    return {
        "cases": len(cases),
        "with": sum(1 for c in cases if c.aggregates.score is not None),
        "deltas": sum(1 for c in cases if c.aggregates.delta is not None),
        "significant": sum(1 for c in cases if c.aggregates.delta_significant),
        "up": sum(
            1 for c in cases if c.aggregates.delta_significant and (c.aggregates.delta or 0) > 0
        ),
        "unstable": sum(1 for c in cases if c.aggregates.unstable),
        "failing": sum(1 for c in cases if not c.aggregates.passed),
    }
