"""Why an arm did better: two runs' steps aligned, and how the arms' runs differ as a whole.

A run's steps are what its record keeps of it (already bounded: its first
:data:`~pytest_plugin_evals.model.TOOL_CALLS_KEPT` tool calls, each input cut, the answer cut):
the skills it loaded, its other tool calls by name and input, the files it wrote and its
answer. :func:`align` lines two runs' steps up (:class:`difflib.SequenceMatcher` on the steps'
keys) and :func:`first_divergence` finds the first row where they part. :func:`typical` picks
the run of an arm closest to its arm's centre, :func:`arm_summary` counts what an arm's runs
did. Everything here is data from an agent, read as text and never run.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any, Literal

from pytest_plugin_evals.model import (
    TOOL_CALLS_KEPT,
    TOOL_INPUT_LIMIT,
    RunResult,
    ToolCallBrief,
    fired_skill,
)

StepKind = Literal["skill", "tool", "file", "error", "answer"]
RowStatus = Literal["same", "changed", "left", "right"]

#: A path inside a run's own working folder (``…/home/cwd``) is compared as relative to it:
#: each run has a folder of its own, so the same file has another absolute path in each.
#: A run's files written are aligned by name, the first this many of them (sorted).
FILES_ALIGNED = 20

_RUN_FOLDER = re.compile(r"""(?:[A-Za-z]:)?[^\s"'=,:]*[/\\]home[/\\]cwd(?=[/\\"'\s,]|$)""")


@dataclass(frozen=True)
class Step:
    """One step of a run: a skill it loaded, a tool call, a file it wrote, its error, its
    answer. ``text`` is what the step shows (an input, a file name, the answer)."""

    kind: StepKind
    name: str
    text: str = ""
    failed: bool = False
    #: A failed call's error text.
    error: str | None = None

    @property
    def key(self) -> tuple[str, ...]:
        """What two runs must share for this step to be the same step. A tool call: its name,
        its input (paths made relative to the run's folder) and whether it failed; a skill: its
        name, however it was loaded; the answer and a run error line up with the other run's
        whatever they say."""
        if self.kind in ("answer", "error"):
            return (self.kind,)
        if self.kind == "skill":
            return (self.kind, self.name)
        text = self.text
        if self.kind == "tool":  # a record's input is cut at its limit; a longer one, read as is
            text = _RUN_FOLDER.sub(".", text[:TOOL_INPUT_LIMIT]) + text[TOOL_INPUT_LIMIT:]
        return (self.kind, self.name, text, "failed" if self.failed else "")


@dataclass(frozen=True)
class Row:
    """One row of an alignment: a step of each run, or of one of them. ``same`` when both
    steps are the same (an answer: the same text), ``changed`` when the runs did different
    things there, ``left`` or ``right`` when only that run has a step."""

    status: RowStatus
    left: Step | None
    right: Step | None


def _input(call: ToolCallBrief) -> Any:
    try:
        return json.loads(call.input)
    except ValueError:  # cut at the records' limit: no longer JSON
        return None


def steps(run: RunResult) -> tuple[Step, ...]:
    """``run``'s steps in order: its kept tool calls (a call that loaded a skill as the skill),
    the first :data:`FILES_ALIGNED` files it wrote (by name, sorted), its error, its answer."""
    found: list[Step] = []
    for call in run.tool_call_list[:TOOL_CALLS_KEPT]:
        skill = fired_skill(call.name, _input(call), call.is_error)
        if skill is not None:
            found.append(Step("skill", skill, call.input))
        else:
            found.append(Step("tool", call.name, call.input, call.is_error, call.error))
    written = sorted(run.files_created)[:FILES_ALIGNED]
    found.extend(Step("file", name, name) for name in written)
    if run.error:
        found.append(Step("error", "error", run.error, failed=True))
    found.append(Step("answer", "answer", run.answer))
    return tuple(found)


def align(left: Sequence[Step], right: Sequence[Step]) -> tuple[Row, ...]:
    """The two step sequences lined up: the longest runs of equal keys matched, the steps
    between them side by side (``changed``) and the rest on one side."""
    matcher = difflib.SequenceMatcher(
        None, [s.key for s in left], [s.key for s in right], autojunk=False
    )
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for a, b in zip(left[i1:i2], right[j1:j2], strict=True):
                said = a.kind not in ("answer", "error") or a.text == b.text
                rows.append(Row("same" if said else "changed", a, b))
            continue
        for a, b in zip_longest(left[i1:i2], right[j1:j2]):
            status: RowStatus = "changed" if a and b else "left" if a else "right"
            rows.append(Row(status, a, b))
    return tuple(rows)


def first_divergence(rows: Sequence[Row]) -> int | None:
    """The index of the first row where the runs part, None when they did the same."""
    return next((i for i, row in enumerate(rows) if row.status != "same"), None)


def _profile(run: RunResult) -> Counter[str]:
    return Counter(call.name for call in run.tool_call_list[:TOOL_CALLS_KEPT])


def typical(runs: Sequence[RunResult]) -> RunResult | None:
    """The run closest to its arm's centre, of the graded ``runs`` (None: none graded).

    Its distance is how far its score lies from the arm's mean score, plus how far its tool
    calls lie from the arm's mean calls per tool (the sum over tools of the gap in calls,
    divided by the arm's mean calls per run, at least 1). The nearest wins; a tie goes to
    the lower run number."""
    graded = [r for r in runs if r.graded]
    if not graded:
        return None
    mean_score = sum(r.score for r in graded) / len(graded)
    profiles = [_profile(r) for r in graded]
    tools = sorted(set().union(*profiles))
    centre = {t: sum(p[t] for p in profiles) / len(graded) for t in tools}
    scale = max(1.0, sum(centre.values()))

    def distance(pair: tuple[RunResult, Counter[str]]) -> tuple[float, int]:
        run, profile = pair
        calls = sum(abs(profile[t] - centre[t]) for t in tools) / scale
        return round(abs(run.score - mean_score) + calls, 9), run.run

    return min(zip(graded, profiles, strict=True), key=distance)[0]


@dataclass(frozen=True)
class ArmSummary:
    """What an arm's graded runs did, as a whole."""

    runs: int
    mean_score: float | None
    #: Mean calls per run of each tool (the skill loads under their tool's name).
    calls: dict[str, float]
    #: In how many runs a skill loaded, and which skills, by how many runs loaded each.
    skill_runs: int
    skills: dict[str, int]
    #: Mean files written per run, and each file's name with how many runs wrote it.
    files_mean: float | None
    files: dict[str, int]
    #: Whether a run made more calls than its record keeps (the counts are of those kept).
    calls_cut: bool

    @property
    def skill_share(self) -> float | None:
        return self.skill_runs / self.runs if self.runs else None


def arm_summary(runs: Sequence[RunResult]) -> ArmSummary:
    """What ``runs``' graded runs did: their tools, skills and files (runs not made left out)."""
    graded = [r for r in runs if r.graded]
    n = len(graded)
    calls: Counter[str] = Counter()
    skills: Counter[str] = Counter()
    files: Counter[str] = Counter()
    for run in graded:
        calls.update(_profile(run))
        skills.update(sorted({s.name for s in steps(run) if s.kind == "skill"}))
        files.update(sorted(set(run.files_created)))
    skill_runs = sum(1 for r in graded if any(s.kind == "skill" for s in steps(r)))
    return ArmSummary(
        runs=n,
        mean_score=sum(r.score for r in graded) / n if n else None,
        calls={tool: count / n for tool, count in calls.most_common()},
        skill_runs=skill_runs,
        skills=dict(skills.most_common()),
        files_mean=sum(len(r.files_created) for r in graded) / n if n else None,
        files=dict(files.most_common()),
        calls_cut=any(r.tool_calls > len(r.tool_call_list) for r in graded),
    )
