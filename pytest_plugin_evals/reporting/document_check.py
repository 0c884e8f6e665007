"""The shape of a result document, checked before it is read back.

A document handed to ``merge`` or ``--eval-compare`` may have been written by anyone: every
field the reader uses must have the type the writer gives it (``null`` is accepted wherever
the reader takes it as "not known"), and a field that does not is one :class:`DocumentError`
naming it by its JSON path. Fields this version does not read are not looked at, and fields
that are missing read as "not known", as before: a reference document still reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_plugin_evals.util.jsonlines import json_path


class DocumentError(ValueError):
    """A file that is not a result document this version can read: what is wrong, and where
    (a JSON path) when one field is."""

    def __init__(self, problem: str, at: str | None = None) -> None:
        super().__init__(problem if at is None else f"{problem} (at {at})")
        self.problem = problem
        self.at = at


Path_ = list[str | int]


def _found(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)[:30]
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__  # pragma: no cover - JSON holds nothing else


class Spec:
    """What one field may hold."""

    name = "anything"
    nullable = False

    def check(self, value: Any, at: Path_) -> None:
        if value is None and self.nullable:
            return
        if not self.accepts(value):
            what = f"{self.name} or null" if self.nullable else self.name
            raise DocumentError(f"expected {what}, found {_found(value)}", json_path(at))
        self.inner(value, at)

    def accepts(self, value: Any) -> bool:
        return True

    def inner(self, value: Any, at: Path_) -> None:
        pass


class _Scalar(Spec):
    def __init__(self, name: str, types: tuple[type, ...], nullable: bool) -> None:
        self.name = name
        self.types = types
        self.nullable = nullable

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool):
            return bool in self.types
        return isinstance(value, self.types)


def text(nullable: bool = True) -> Spec:
    return _Scalar("a string", (str,), nullable)


def number(nullable: bool = True) -> Spec:
    return _Scalar("a number", (int, float), nullable)


class _Fraction(_Scalar):
    """A number from 0 to 1 (a score)."""

    def __init__(self) -> None:
        super().__init__("a number from 0 to 1", (int, float), True)

    def accepts(self, value: Any) -> bool:
        return super().accepts(value) and not isinstance(value, bool) and 0 <= value <= 1


def flag(nullable: bool = True) -> Spec:
    return _Scalar("true or false", (bool,), nullable)


class ListOf(Spec):
    name = "a list"

    def __init__(self, item: Spec, nullable: bool = True) -> None:
        self.item = item
        self.nullable = nullable

    def accepts(self, value: Any) -> bool:
        return isinstance(value, list)

    def inner(self, value: Any, at: Path_) -> None:
        for index, item in enumerate(value):
            self.item.check(item, [*at, index])


class Obj(Spec):
    """A JSON object: the listed fields are checked when present (``required`` ones must be)."""

    name = "an object"

    def __init__(
        self, fields: Mapping[str, Spec], *, required: tuple[str, ...] = (), nullable: bool = True
    ) -> None:
        self.fields = fields
        self.required = required
        self.nullable = nullable

    def accepts(self, value: Any) -> bool:
        return isinstance(value, Mapping)

    def inner(self, value: Any, at: Path_) -> None:
        for key in self.required:
            if key not in value:
                raise DocumentError(f"the field {key!r} is missing", json_path(at))
        for key, spec in self.fields.items():
            if key in value:
                spec.check(value[key], [*at, key])


class MapOf(Spec):
    """A JSON object whose every value is ``item`` (counts by reason)."""

    name = "an object"

    def __init__(self, item: Spec, nullable: bool = True) -> None:
        self.item = item
        self.nullable = nullable

    def accepts(self, value: Any) -> bool:
        return isinstance(value, Mapping)

    def inner(self, value: Any, at: Path_) -> None:
        for key, item in value.items():
            self.item.check(item, [*at, str(key)])


ANY = Spec()
STR, NUM, BOOL = text(), number(), flag()
STRINGS = ListOf(STR)
INTERVAL = ListOf(NUM)
#: A verdict on a difference (:mod:`pytest_plugin_evals.decisions`).
DECISION = Obj(
    {
        "verdict": STR,
        "claim": STR,
        "pValue": NUM,
        "moreRuns": NUM,
        "fdrWithdrawn": BOOL,
        "unadjusted": STR,
    }
)
OBJECT = Obj({})

TIMING = {
    "latency": Obj({"meanSeconds": NUM, "p50Seconds": NUM, "p95Seconds": NUM}),
    "tokens": Obj({"input": NUM, "output": NUM, "turnsMean": NUM}),
}

VERDICT = Obj(
    {
        "name": STR,
        "type": STR,
        "passed": BOOL,
        "weight": NUM,
        "explanation": STR,
        "withOnly": BOOL,
        "scored": BOOL,
        "skipped": STR,
        "error": STR,
        "judgeVotes": ListOf(Obj({"vote": STR, "reason": STR})),
        "evidence": STR,
        "judgeCostUsd": NUM,
    }
)

MOCKS = Obj(
    {
        "servers": ListOf(
            Obj(
                {
                    "server": STR,
                    "kind": STR,
                    "withheld": BOOL,
                    "tools": ListOf(Obj({"tool": STR, "responder": STR})),
                }
            )
        ),
        "warnings": STRINGS,
        "calls": Obj(
            {
                "total": NUM,
                "errors": NUM,
                "unmocked": ListOf(Obj({"tool": STR, "count": NUM})),
                "costUsd": NUM,
                "replay": Obj({"hits": NUM, "misses": NUM}),
            }
        ),
    }
)

SCORE = _Fraction()

RUN = Obj(
    {
        "nodeid": STR,
        "score": SCORE,
        "passed": BOOL,
        "turns": NUM,
        "costUsd": NUM,
        "judgeCostUsd": NUM,
        "durationSeconds": NUM,
        "startedAt": STR,
        "error": STR,
        "tracePath": STR,
        "skippedPaidGraders": BOOL,
        "graders": ListOf(VERDICT),
        "arm": STR,
        "run": NUM,
        "infraError": STR,
        "answer": STR,
        "answerTruncated": BOOL,
        "inputTokens": NUM,
        "outputTokens": NUM,
        "toolCalls": NUM,
        "toolCallList": ListOf(
            Obj({"name": STR, "input": STR, "isError": BOOL, "originalName": STR})
        ),
        "costUnknown": BOOL,
        "filesCreated": STRINGS,
        "notes": STRINGS,
        "aborted": Obj({"server": STR, "tool": STR, "reason": STR}),
        "mocks": MOCKS,
        "mockCalls": ListOf(
            Obj({"server": STR, "tool": STR, "input": OBJECT, "output": STR, "isError": BOOL})
        ),
        "unconfinedShell": BOOL,
        "retries": NUM,
        "retryWaitSeconds": NUM,
    }
)

CASE_AGGREGATES = Obj(
    {
        "score": NUM,
        "passRate": NUM,
        "scoreInterval": INTERVAL,
        "passRateInterval": INTERVAL,
        "scoreWithout": NUM,
        "passRateWithout": NUM,
        "scoreWithoutInterval": INTERVAL,
        "passRateWithoutInterval": INTERVAL,
        "deltaNote": STR,
        "delta": NUM,
        "deltaInterval": INTERVAL,
        "deltaSignificant": BOOL,
        "deltaDecision": DECISION,
        "passed": BOOL,
        "reducer": STR,
        "unstable": STRINGS,
        "runsGraded": NUM,
        "runsErrored": NUM,
        "runsNotMade": NUM,
        **TIMING,
    }
)

GRADER = Obj(
    {
        "name": STR,
        "type": STR,
        "weight": NUM,
        "arm": STR,
        "graderMarkdown": STR,
        "config": OBJECT,
    }
)

CASE = Obj(
    {
        "name": STR,
        "agent": STR,
        "dir": STR,
        "source": STR,
        "promptMarkdown": STR,
        "model": STR,
        "runsPerCase": NUM,
        "timeoutSeconds": NUM,
        "maxTurns": NUM,
        "tags": STRINGS,
        "description": STR,
        "path": STR,
        "suiteRoot": STR,
        "graders": ListOf(GRADER),
        "arms": Obj({"with": ListOf(RUN), "without": ListOf(RUN), "baseline": ListOf(RUN)}),
        "aggregates": CASE_AGGREGATES,
        "notes": STR,
    }
)

BASELINE = {"spec": STR, "name": STR, "version": STR, "path": STR, "commit": STR}

SUITE = Obj(
    {
        "root": STR,
        "ablation": STR,
        "threshold": NUM,
        "concurrency": NUM,
        "agent": STR,
        "caseFilter": STR,
        "tagFilters": STRINGS,
        "plugins": ListOf(
            Obj({"name": STR, "version": STR, "path": text(False)}, required=("path",))
        ),
        "baselinePlugin": Obj({**BASELINE, "plugins": ListOf(Obj(BASELINE))}),
    }
)

AGENT = Obj(
    {
        "agent": STR,
        "spec": STR,
        "cases": NUM,
        "casesPassed": NUM,
        "overallScore": NUM,
        "overallScoreWithout": NUM,
        "meanDelta": NUM,
        "meanDeltaInterval": INTERVAL,
        "meanDeltaSignificant": BOOL,
        "meanDeltaDecision": DECISION,
        "runsTotal": NUM,
        "runsGraded": NUM,
        "errors": MapOf(NUM),
        "costUsd": NUM,
        "costUnknown": BOOL,
        **TIMING,
    }
)

AGGREGATES = Obj(
    {
        "casesTotal": NUM,
        "casesPassed": NUM,
        "overallScore": NUM,
        "overallPassRate": NUM,
        "meanDelta": NUM,
        "meanDeltaInterval": INTERVAL,
        "meanDeltaSignificant": BOOL,
        "meanDeltaDecision": DECISION,
        "margin": NUM,
        "overallScoreWithout": NUM,
        "runsTotal": NUM,
        "runsGraded": NUM,
        "runsErrored": NUM,
        "runsNotMade": NUM,
        "runsSkipped": NUM,
        "runsNotStarted": NUM,
        "thresholdMet": BOOL,
        "reducer": STR,
        "casesUnstable": NUM,
        "rateLimitRetries": NUM,
        "rateLimitWaitSeconds": NUM,
        **TIMING,
    }
)

COMPARISON = Obj(
    {
        "against": STR,
        "againstStartedAt": STR,
        "cases": ListOf(
            Obj(
                {
                    "name": STR,
                    "dir": STR,
                    "before": NUM,
                    "after": NUM,
                    "change": NUM,
                    "changeInterval": INTERVAL,
                    "deltaBefore": NUM,
                    "deltaAfter": NUM,
                    "verdict": STR,
                    "decision": DECISION,
                }
            )
        ),
    }
)

SHARD = Obj(
    {
        "index": NUM,
        "total": NUM,
        "weights": STR,
        "version": STR,
        "settings": OBJECT,
        "suiteRoot": STR,
        "suiteCases": ListOf(
            Obj(
                {
                    "name": STR,
                    "nodeid": STR,
                    "key": STR,
                    "runs": NUM,
                    "cost": NUM,
                    "shard": NUM,
                }
            )
        ),
    }
)

SHARD_SOURCE = Obj(
    {
        "path": STR,
        "index": NUM,
        "total": NUM,
        "startedAt": STR,
        "durationSeconds": NUM,
        "cases": STRINGS,
    }
)

DOCUMENT = Obj(
    {
        "startedAt": STR,
        "durationSeconds": NUM,
        "costUsd": NUM,
        "costUnknown": BOOL,
        "partial": BOOL,
        "partialReason": STR,
        "suite": SUITE,
        "agents": ListOf(AGENT),
        "cases": ListOf(CASE),
        "aggregates": AGGREGATES,
        "loadErrors": ListOf(Obj({"path": STR, "line": NUM, "message": STR})),
        "errors": MapOf(number(False)),
        "skipped": MapOf(number(False)),
        "notStarted": ListOf(Obj({"case": STR, "agent": STR, "nodeid": STR, "runs": NUM})),
        "ungated": STR,
        "comparison": COMPARISON,
        "shard": SHARD,
        "shards": ListOf(SHARD_SOURCE),
    },
    nullable=False,
)


def check_document(doc: Any, schema_version: int) -> None:
    """Refuse ``doc`` (a parsed JSON value) unless it is a result document of
    ``schema_version`` whose every field read back has the type the writer gives it."""
    if not isinstance(doc, Mapping):
        raise DocumentError(f"not a result document: expected an object, found {_found(doc)}")
    if doc.get("schemaVersion") != schema_version or isinstance(doc.get("schemaVersion"), bool):
        raise DocumentError(f"not a schemaVersion {schema_version} result document")
    DOCUMENT.check(doc, [])
