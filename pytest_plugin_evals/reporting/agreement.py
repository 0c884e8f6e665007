"""Whether the judges can be believed: each judge grader's split votes, the first judge's
agreement with a second (``--eval-judge-second``) and each judge's agreement with people
(``--eval-labels``), as Cohen's κ with a 95% interval (:mod:`pytest_plugin_evals.stats.
agreement`). A grader whose κ is under :data:`~pytest_plugin_evals.stats.agreement.LOW_KAPPA`
is flagged.

A grader is one grader of one case (``pick-version: rubric``); the first row, ``all judge
graders``, pools every verdict of the session.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import Verdict
from pytest_plugin_evals.records import JSONObject, RunRecord
from pytest_plugin_evals.reporting.result import CaseResult, SessionResult
from pytest_plugin_evals.reporting.skill_creator import eval_cases, eval_ids
from pytest_plugin_evals.stats.agreement import FEW, LOW_KAPPA, Agreement, Pair, agreement
from pytest_plugin_evals.util.jsonlines import camel_fields
from pytest_plugin_evals.util.labels import Labels, LabelsError, Review, read_labels

#: The pooled row's name.
ALL = "all judge graders"


@dataclass(frozen=True)
class GraderAgreement:
    """One grader's judging: its verdicts, how many were split votes, and agreement."""

    case: str
    grader: str
    verdicts: int
    split: int
    judges: Agreement | None = None
    first_people: Agreement | None = None
    second_people: Agreement | None = None

    @property
    def name(self) -> str:
        return self.grader if not self.case else f"{self.case}: {self.grader}"

    @property
    def flagged(self) -> bool:
        return any(a is not None and a.low for a in self._measures())

    def _measures(self) -> tuple[Agreement | None, ...]:
        return (self.judges, self.first_people, self.second_people)


@dataclass(frozen=True)
class JudgeAgreement:
    """The session's judge agreement: the pooled row first, then one row a grader."""

    second_judge: str | None
    labelled: bool
    rows: tuple[GraderAgreement, ...]

    @property
    def flagged(self) -> tuple[GraderAgreement, ...]:
        return tuple(r for r in self.rows if r.flagged)

    @property
    def compared(self) -> bool:
        """Whether a second judge or people gave verdicts to compare with (a merged document
        keeps the second judge's verdicts, not its name)."""
        return self.labelled or any(r.judges is not None for r in self.rows)


@dataclass
class _Tally:
    verdicts: int = 0
    split: int = 0

    def __post_init__(self) -> None:
        self.judges: list[Pair] = []
        self.first_people: list[Pair] = []
        self.second_people: list[Pair] = []

    def add(self, verdict: Verdict, person: bool | None) -> None:
        judged = verdict.judgement
        assert judged is not None and verdict.passed is not None
        first = verdict.passed
        self.verdicts += 1
        self.split += judged.split
        second = judged.second.passed if judged.second is not None else None
        if second is not None:
            self.judges.append((first, second))
        if person is not None:
            self.first_people.append((first, person))
            if second is not None:
                self.second_people.append((second, person))

    def row(self, case: str, grader: str) -> GraderAgreement:
        def measured(pairs: Sequence[Pair]) -> Agreement | None:
            return agreement(pairs) if pairs else None

        return GraderAgreement(
            case,
            grader,
            self.verdicts,
            self.split,
            measured(self.judges),
            measured(self.first_people),
            measured(self.second_people),
        )


#: The last result measured, and what was found (every report of a session asks).
_LAST: list[tuple[SessionResult, JudgeAgreement | None]] = []


def judge_agreement(result: SessionResult) -> JudgeAgreement | None:
    """The session's judge agreement, against its second judge and the verdicts people gave
    (``result.labels``); None when no judge grader reached a verdict."""
    if _LAST and _LAST[0][0] is result:
        return _LAST[0][1]
    found = _measure(result)
    _LAST[:] = [(result, found)]
    return found


def _measure(result: SessionResult) -> JudgeAgreement | None:
    labels = _labels(result.labels)
    person = _PersonFinder(result, labels)
    pooled = _Tally()
    tallies: dict[tuple[str, str], _Tally] = {}
    for case, record, verdict in _judged(result):
        said = person.verdict(case, record, verdict.name)
        pooled.add(verdict, said)
        tallies.setdefault((case.label, verdict.name), _Tally()).add(verdict, said)
    if not pooled.verdicts:
        return None
    rows = [pooled.row("", ALL), *(t.row(c, g) for (c, g), t in tallies.items())]
    labelled = labels is not None and not labels.empty
    return JudgeAgreement(result.second_judge, labelled, tuple(rows))


@functools.lru_cache(maxsize=4)
def _labels(paths: tuple[Path, ...]) -> Labels | None:
    """The labels of ``paths`` (checked when the options were read), read once for the reports;
    None without any, or when a file can no longer be read."""
    try:
        return read_labels(paths) if paths else None
    except LabelsError:
        return None


def _judged(result: SessionResult) -> Iterator[tuple[CaseResult, RunRecord, Verdict]]:
    for case in result.cases:
        if case.trigger_query:
            continue
        for record in case.runs:
            for verdict in record.result.verdicts:
                judged = verdict.judgement is not None and bool(verdict.judgement.votes)
                if judged and verdict.passed is not None and verdict.error is None:
                    yield case, record, verdict


class _PersonFinder:
    """A person's verdict on a run's grader, from the labels."""

    def __init__(self, result: SessionResult, labels: Labels | None) -> None:
        self.labels = labels
        cases = eval_cases(result)
        self.ids = {id(c): n for c, n in zip(cases, eval_ids(cases), strict=True)}
        self.reviews: dict[tuple[int, str, int], Review] = {}
        for review in labels.reviews if labels is not None else ():
            self.reviews[(review.eval_id, review.arm, review.run)] = review

    def verdict(self, case: CaseResult, record: RunRecord, grader: str) -> bool | None:
        labels = self.labels
        if labels is None:
            return None
        arm = "with" if record.arm == "single" else str(record.arm)
        given = labels.verdicts.get((case.name, arm, record.run, grader))
        if given is not None:
            return given
        eval_id = self.ids.get(id(case))
        if eval_id is None:
            return None
        review = self.reviews.get((eval_id, arm, record.run))
        if review is None:
            return True if labels.complete else None
        named = dict(review.graders)
        return named.get(grader, review.passed)


# -- how reports show it --------------------------------------------------------------------


def agreement_json(found: Agreement | None) -> JSONObject | None:
    if found is None:
        return None
    return {
        **camel_fields(found, "n", "agreed", "share", "kappa"),
        "kappaInterval": None if found.interval is None else list(found.interval),
        **camel_fields(found, "low", "rough"),
    }


def judge_agreement_json(result: SessionResult) -> JSONObject:
    """``{"judgeAgreement": …}`` for the document, or nothing (no judge verdicts)."""
    found = judge_agreement(result)
    if found is None:
        return {}
    return {
        "judgeAgreement": {
            "secondJudge": found.second_judge,
            "labelled": found.labelled,
            "lowKappa": LOW_KAPPA,
            "roughUnder": FEW,
            "graders": [
                {
                    "case": row.case or None,
                    "grader": row.grader,
                    "verdicts": row.verdicts,
                    "splitVotes": row.split,
                    "judges": agreement_json(row.judges),
                    "firstJudgeWithPeople": agreement_json(row.first_people),
                    "secondJudgeWithPeople": agreement_json(row.second_people),
                    "flagged": row.flagged,
                }
                for row in found.rows
            ],
            "flagged": [row.name for row in found.flagged],
        }
    }


def describe(found: Agreement | None) -> str:
    """``κ 0.52 [0.21, 0.80], agree 8/10 (80%)``; ``κ undefined (one verdict throughout)``."""
    if found is None:
        return "—"
    share = f"agree {found.agreed}/{found.n} ({round(100 * found.agreed / found.n)}%)"
    if found.kappa is None:
        return f"κ undefined (one verdict throughout), {share}"
    low, high = found.interval if found.interval is not None else (found.kappa, found.kappa)
    rough = ", rough: few verdicts" if found.rough else ""
    return f"κ {found.kappa:.2f} [{low:.2f}, {high:.2f}]{rough}, {share}"


def agreement_lines(result: SessionResult) -> list[str]:
    """The summary's JUDGE AGREEMENT lines: the split votes, and with a second judge or labels
    each grader's agreement (nothing when no vote was split and nothing was compared)."""
    found = judge_agreement(result)
    if found is None:
        return []
    pooled = found.rows[0]
    lines = [f"JUDGE AGREEMENT ({pooled.split} of {pooled.verdicts} judge verdicts split 2-1)"]
    if not found.compared:
        return lines if pooled.split else []
    for row in found.rows:
        parts = []
        if row.judges is not None:
            parts.append(f"judges {describe(row.judges)}")
        if row.first_people is not None:
            parts.append(f"first judge vs people {describe(row.first_people)}")
        if row.second_people is not None:
            parts.append(f"second judge vs people {describe(row.second_people)}")
        mark = "⚠ " if row.flagged else "  "
        lines.append(f"{mark}{row.name}: " + ("; ".join(parts) or "nothing to compare"))
    return lines


def low_agreement_lines(result: SessionResult) -> list[str]:
    """A warning for each grader whose agreement is under :data:`LOW_KAPPA`."""
    found = judge_agreement(result)
    rows = found.flagged if found is not None else ()
    return [f"⚠ low judge agreement: {row.name} (κ < {LOW_KAPPA:g})" for row in rows]


def agreement_view(found: JudgeAgreement | None) -> dict[str, Any] | None:
    """What the HTML report's "Judge agreement" section shows (None: no judge verdicts)."""
    if found is None:
        return None
    pooled = found.rows[0]
    note = f"{pooled.split} of {pooled.verdicts} judge verdicts were split votes (2-1)."
    compared = found.compared
    if found.second_judge is not None:
        note += f" Second judge: {found.second_judge} (recorded, never scored)."
    if compared:
        note += (
            f" Cohen's κ with a 95% bootstrap interval; κ under {LOW_KAPPA:g} is flagged; under"
            f" {FEW} verdicts the interval is rough."
        )
    rows = [
        {
            "name": row.name,
            "verdicts": row.verdicts,
            "split": row.split,
            "judges": describe(row.judges),
            "first_people": describe(row.first_people),
            "second_people": describe(row.second_people),
            "flagged": row.flagged,
        }
        for row in (found.rows if compared else ())
    ]
    return {"note": note, "rows": rows}
