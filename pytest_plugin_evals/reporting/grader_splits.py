"""Which graders discriminate: each grader's pass rate per arm, their Δ and its interval, and a
flag for the graders that cannot tell the arms apart (pure).

A case's score mixes its graders. A grader every run passes in both arms (the baseline cannot
fail it), or that every run fails in both, adds the same to both arms' scores: it measures
nothing about the plugin. :func:`grader_splits` counts, for each grader of a case, the graded
runs of each arm that judged it and those it passed; :func:`grader_lines` names, one line per
case (the first :data:`CASES_SHOWN` cases, then one line for the rest), the graders flagged
``both`` or ``neither``.

What counts (docs/explanation/arms-and-scoring.md#which-graders-discriminate says it for users):

* a run that was not graded (an infrastructure error, a grader that could not reach a verdict)
  counts for no grader, as it counts in no score;
* a verdict that did not judge (``passed`` is None: a paid grader skipped under the cost
  ceiling or ``--eval-no-judge``) is not counted for its grader in that run: ``runs*`` are the
  runs that judged it;
* several verdicts of one name in one run (a document written elsewhere) are one: the run
  passed it when every one passed.

The flag (two arms, each with a run that judged the grader): ``both`` when every such run
passed it in both arms, ``neither`` when every one failed it, else ``discriminates`` when the
95% interval of Δ (Newcombe's, the one a case's Δ gets) excludes 0, else ``not-shown``. With
no such run in an arm (a with-only indicator, a single-arm session) there is no flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_plugin_evals.model import RunResult
from pytest_plugin_evals.records import JSONObject
from pytest_plugin_evals.reporting.result import CaseResult
from pytest_plugin_evals.stats import Interval
from pytest_plugin_evals.stats.intervals import newcombe
from pytest_plugin_evals.util.jsonlines import camel_fields

#: Every graded run that judged the grader passed it, in both arms.
BOTH = "both"
#: Every one failed it, in both arms.
NEITHER = "neither"
#: Δ's 95% interval excludes 0.
DISCRIMINATES = "discriminates"
#: The arms differ in some run, but not beyond noise (yet).
NOT_SHOWN = "not-shown"
FLAGS = (BOTH, NEITHER, DISCRIMINATES, NOT_SHOWN)
#: The flags the terminal names: the grader cannot tell the arms apart in these runs.
BLIND = (BOTH, NEITHER)

#: Graders named on one terminal line before "and N more".
NAMES_SHOWN = 4
#: Case lines the terminal prints before one line for the rest.
CASES_SHOWN = 5


@dataclass(frozen=True)
class GraderSplit:
    """One grader of one case: its passes and judged runs per arm, Δ and the flag."""

    name: str
    #: Whether it counts in the score (a with-only indicator does not).
    scored: bool
    pass_with: int
    runs_with: int
    #: None in a single-arm case.
    pass_without: int | None = None
    runs_without: int | None = None
    #: The 95% interval of :attr:`delta` (Newcombe's).
    delta_interval: Interval | None = None

    @property
    def delta(self) -> float | None:
        """``rate_with − rate_without`` (None: one arm, or an arm with no run that judged it)."""
        if not self.runs_with or not self.runs_without or self.pass_without is None:
            return None
        return round(self.pass_with / self.runs_with - self.pass_without / self.runs_without, 10)

    @property
    def flag(self) -> str | None:
        """One of :data:`FLAGS`, or None (one arm, or an arm with no run that judged it)."""
        if self.delta_interval is None:
            return None
        if self.pass_with == self.runs_with and self.pass_without == self.runs_without:
            return BOTH
        if self.pass_with == 0 and self.pass_without == 0:
            return NEITHER
        low, high = self.delta_interval
        return DISCRIMINATES if low > 0 or high < 0 else NOT_SHOWN

    @property
    def counts(self) -> str:
        """``3/3, 0/3`` (with, then the second arm), or ``3/3`` in one arm."""
        shown = f"{self.pass_with}/{self.runs_with}"
        if self.runs_without is None:
            return shown
        return f"{shown}, {self.pass_without}/{self.runs_without}"


@dataclass
class _Tally:
    passes: int = 0
    runs: int = 0
    scored: bool = False


def _tally(runs: Sequence[RunResult], names: dict[str, None]) -> dict[str, _Tally]:
    """Per grader name: the graded runs that judged it and those it passed (in ``names``,
    the order names were first seen)."""
    tallies: dict[str, _Tally] = {}
    for run in runs:
        if not run.graded:
            continue
        passed: dict[str, bool] = {}
        for verdict in run.verdicts:
            if verdict.passed is None:
                continue
            names.setdefault(verdict.name)
            passed[verdict.name] = passed.get(verdict.name, True) and verdict.passed
            tally = tallies.setdefault(verdict.name, _Tally())
            tally.scored = tally.scored or verdict.scored
        for name, ok in passed.items():
            tallies[name].runs += 1
            tallies[name].passes += int(ok)
    return tallies


def _split(name: str, with_: _Tally, without: _Tally | None) -> GraderSplit:
    if without is None:
        return GraderSplit(name, with_.scored, with_.passes, with_.runs)
    scored = with_.scored or without.scored
    interval = newcombe(with_.passes, with_.runs, without.passes, without.runs)
    return GraderSplit(
        name, scored, with_.passes, with_.runs, without.passes, without.runs, interval
    )


def split_graders(
    with_runs: Sequence[RunResult], without_runs: Sequence[RunResult] | None
) -> tuple[GraderSplit, ...]:
    """Every grader judged in a case's graded runs, in the order first seen (with arm first);
    ``without_runs`` is None in a single-arm case (the second arm's runs otherwise: without,
    or the baseline's in an A/B)."""
    names: dict[str, None] = {}
    with_ = _tally(with_runs, names)
    without = _tally(without_runs, names) if without_runs is not None else None
    empty = _Tally()
    return tuple(
        _split(name, with_.get(name, empty), None if without is None else without.get(name, empty))
        for name in names
    )


def grader_splits(case: CaseResult) -> tuple[GraderSplit, ...]:
    """A case's splits, computed from its runs; none for a trigger query (trigger accuracy is
    its own table)."""
    if case.trigger_query:
        return ()
    with_runs = [r.result for r in case.with_runs]
    without_runs = [r.result for r in case.without_runs] if case.two_arm else None
    return split_graders(with_runs, without_runs)


def split_json(split: GraderSplit) -> JSONObject:
    """One entry of a case's ``graderSplits`` in the document."""
    doc: JSONObject = camel_fields(split, "name", "scored", "pass_with", "runs_with")
    if split.runs_without is not None:
        doc.update(camel_fields(split, "pass_without", "runs_without", "delta"))
        interval = split.delta_interval
        doc.update(deltaInterval=None if interval is None else list(interval), flag=split.flag)
    return doc


def _quoted(splits: Sequence[GraderSplit]) -> str:
    shown = [f'"{s.name}" ({s.counts})' for s in splits[:NAMES_SHOWN]]
    more = len(splits) - len(shown)
    if more:
        return ", ".join(shown) + f" and {more} more"
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def blind_line(label: str, splits: Sequence[GraderSplit]) -> str | None:
    """``alpha: grader "mentions-version" passes in both arms (3/3, 3/3) — it cannot tell
    them apart``, or None when no grader of the case is flagged ``both`` or ``neither``."""
    both = [s for s in splits if s.flag == BOTH]
    neither = [s for s in splits if s.flag == NEITHER]
    if not both and not neither:
        return None
    if len(both) + len(neither) == 1:
        (only,) = both or neither
        verb = "passes" if both else "fails"
        said = f'grader "{only.name}" {verb} in both arms ({only.counts})'
        return f"{label}: {said} — it cannot tell them apart"
    parts = [
        f"graders {_quoted(group)} {many} in both arms"
        if len(group) > 1
        else f"grader {_quoted(group)} {one} in both arms"
        for group, one, many in ((both, "passes", "pass"), (neither, "fails", "fail"))
        if group
    ]
    return f"{label}: {'; '.join(parts)} — they cannot tell the arms apart"


def blind_graders(cases: Sequence[CaseResult]) -> list[tuple[str, list[GraderSplit]]]:
    """Each two-arm case with a grader flagged ``both`` or ``neither``: its label and those
    graders (every case's graders tell the arms apart: nothing)."""
    found = []
    for case in cases:
        if case.two_arm:
            blind = [s for s in grader_splits(case) if s.flag in BLIND]
            if blind:
                found.append((case.label, blind))
    return found


def grader_lines(cases: Sequence[CaseResult]) -> list[str]:
    """One line per two-arm case where a grader cannot tell the arms apart (see
    :func:`blind_line`), the first :data:`CASES_SHOWN` of them, then one line for the rest;
    nothing when every grader can."""
    found = blind_graders(cases)
    lines = [line for label, splits in found[:CASES_SHOWN] if (line := blind_line(label, splits))]
    more = len(found) - CASES_SHOWN
    if more > 0:
        lines.append(
            f"… and {more} more case(s) with graders that cannot tell the arms apart "
            "(see the JSON's graderSplits or the HTML report)"
        )
    return lines
