"""The shape of a result document, checked before it is read back.

A document handed to ``merge`` or ``--eval-compare`` may have been written by anyone: every
field the reader uses must have the type the writer gives it (``null`` is accepted wherever
the reader takes it as "not known"), and a field that does not is one :class:`DocumentError`
naming it by its JSON path. The shape is a tree of pydantic models (strict: ``true`` is not
a number, ``"3"`` is not a count); fields this version does not read are not looked at, and
fields that are missing read as "not known", as before: a reference document still reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError

from pytest_plugin_evals.records.shape import (
    Bool,
    CaseInfo,
    Interval,
    Num,
    Number,
    Object,
    Plugin,
    Run,
    Shape,
    Str,
    Strs,
)
from pytest_plugin_evals.reporting.document_error import DocumentError as DocumentError
from pytest_plugin_evals.reporting.grader_split_shape import GraderSplit, split_range
from pytest_plugin_evals.reporting.trigger_shape import TriggerSkill, trigger_range
from pytest_plugin_evals.util.jsonlines import found, json_path

_Shape = Shape


class Latency(_Shape):
    meanSeconds: Num = None
    p50Seconds: Num = None
    p95Seconds: Num = None


class Tokens(_Shape):
    input: Num = None
    output: Num = None
    turnsMean: Num = None


class _Timed(_Shape):
    latency: Latency | None = None
    tokens: Tokens | None = None


class Decision(_Shape):
    """A verdict on a difference (:mod:`pytest_plugin_evals.stats.decisions`)."""

    verdict: Str = None
    claim: Str = None
    pValue: Num = None
    moreRuns: Num = None
    fdrWithdrawn: Bool = None
    unadjusted: Str = None


class Sequential(_Shape):
    """A case under ``--eval-runs auto``: the runs per arm it took and why it stopped."""

    runs: Num = None
    maxRuns: Num = None
    stopped: Str = None
    reason: Str = None


class CaseAggregates(_Timed):
    score: Num = None
    passRate: Num = None
    scoreInterval: Interval = None
    passRateInterval: Interval = None
    scoreWithout: Num = None
    passRateWithout: Num = None
    scoreWithoutInterval: Interval = None
    passRateWithoutInterval: Interval = None
    deltaNote: Str = None
    delta: Num = None
    deltaInterval: Interval = None
    deltaSignificant: Bool = None
    deltaDecision: Decision | None = None
    passed: Bool = None
    reducer: Str = None
    unstable: Strs = None
    runsGraded: Num = None
    runsErrored: Num = None
    runsNotMade: Num = None
    sequential: Sequential | None = None


Runs = list[Run | None] | None


class Arms(_Shape):
    with_: Runs = Field(None, alias="with")
    without: Runs = None
    baseline: Runs = None


class Case(CaseInfo):
    agent: Str = None
    suiteDir: Str = None
    arms: Arms | None = None
    aggregates: CaseAggregates | None = None
    graderSplits: list[GraderSplit | None] | None = None
    notes: Str = None


class _Baseline(_Shape):
    spec: Str = None
    name: Str = None
    version: Str = None
    path: Str = None
    commit: Str = None


class BaselinePlugin(_Baseline):
    plugins: list[_Baseline | None] | None = None


class NamedCase(_Shape):
    name: Str = None
    dir: Str = None


class Suite(_Shape):
    root: Str = None
    ablation: Str = None
    threshold: Num = None
    concurrency: Num = None
    agent: Str = None
    caseFilter: Str = None
    tagFilters: Strs = None
    plugins: list[Plugin | None] | None = None
    baselinePlugin: BaselinePlugin | None = None
    notSelected: list[NamedCase | None] | None = None
    aa: Bool = None


class Agent(_Timed):
    agent: Str = None
    spec: Str = None
    cases: Num = None
    casesPassed: Num = None
    overallScore: Num = None
    overallScoreWithout: Num = None
    meanDelta: Num = None
    meanDeltaInterval: Interval = None
    meanDeltaSignificant: Bool = None
    meanDeltaDecision: Decision | None = None
    runsTotal: Num = None
    runsGraded: Num = None
    errors: dict[str, Num] | None = None
    costUsd: Num = None
    costUnknown: Bool = None


class Aggregates(_Timed):
    casesTotal: Num = None
    casesPassed: Num = None
    overallScore: Num = None
    overallPassRate: Num = None
    meanDelta: Num = None
    meanDeltaInterval: Interval = None
    meanDeltaSignificant: Bool = None
    meanDeltaDecision: Decision | None = None
    margin: Num = None
    overallScoreWithout: Num = None
    runsTotal: Num = None
    runsGraded: Num = None
    runsErrored: Num = None
    runsNotMade: Num = None
    runsSkipped: Num = None
    runsNotStarted: Num = None
    thresholdMet: Bool = None
    reducer: Str = None
    casesUnstable: Num = None
    rateLimitRetries: Num = None
    rateLimitWaitSeconds: Num = None


class ComparedCase(_Shape):
    name: Str = None
    dir: Str = None
    before: Num = None
    after: Num = None
    change: Num = None
    changeInterval: Interval = None
    deltaBefore: Num = None
    deltaAfter: Num = None
    verdict: Str = None
    decision: Decision | None = None
    gradersChanged: Bool = None


class Comparison(_Shape):
    against: Str = None
    againstStartedAt: Str = None
    cases: list[ComparedCase | None] | None = None


class ShardCase(_Shape):
    name: Str = None
    nodeid: Str = None
    key: Str = None
    runs: Num = None
    cost: Num = None
    shard: Num = None


class Shard(_Shape):
    index: Num = None
    total: Num = None
    weights: Str = None
    version: Str = None
    settings: Object = None
    suiteRoot: Str = None
    suiteCases: list[ShardCase | None] | None = None


class ShardSource(_Shape):
    path: Str = None
    index: Num = None
    total: Num = None
    startedAt: Str = None
    durationSeconds: Num = None
    cases: Strs = None


class LoadErrorEntry(_Shape):
    path: Str = None
    line: Num = None
    message: Str = None


class NotStarted(_Shape):
    case: Str = None
    agent: Str = None
    nodeid: Str = None
    runs: Num = None


class Document(_Shape):
    startedAt: Str = None
    durationSeconds: Num = None
    costUsd: Num = None
    costUnknown: Bool = None
    partial: Bool = None
    partialReason: Str = None
    suite: Suite | None = None
    agents: list[Agent | None] | None = None
    cases: list[Case | None] | None = None
    aggregates: Aggregates | None = None
    loadErrors: list[LoadErrorEntry | None] | None = None
    errors: dict[str, Number] | None = None
    skipped: dict[str, Number] | None = None
    notStarted: list[NotStarted | None] | None = None
    ungated: Str = None
    comparison: Comparison | None = None
    shard: Shard | None = None
    shards: list[ShardSource | None] | None = None
    triggers: list[TriggerSkill | None] | None = None


#: What each pydantic error type says the field should have held.
_EXPECTED = {
    "string_type": "a string",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
    "model_type": "an object",
    "dict_type": "an object",
    "greater_than_equal": "a number from 0 to 1",
    "less_than_equal": "a number from 0 to 1",
}
#: The top-level maps whose values must not be null.
_NOT_NULL_MAPS = ("errors", "skipped")


def _nullable(loc: tuple[Any, ...]) -> bool:
    """Whether the field at ``loc`` may be null (all but a few may)."""
    if len(loc) == 2 and loc[0] in _NOT_NULL_MAPS:
        return False
    return not (len(loc) >= 3 and loc[-3] == "plugins" and loc[-1] == "path")


def check_document(doc: Any, schema_version: int) -> Document:
    """``doc`` (a parsed JSON value) as the result document of ``schema_version`` it is;
    :class:`DocumentError` unless every field read back has the type the writer gives it."""
    if not isinstance(doc, Mapping):
        raise DocumentError(f"not a result document: expected an object, found {found(doc)}")
    if doc.get("schemaVersion") != schema_version or isinstance(doc.get("schemaVersion"), bool):
        raise DocumentError(f"not a schemaVersion {schema_version} result document")
    try:
        return Document.model_validate(doc)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        loc = tuple(error["loc"])
        if error["type"] == "missing":
            raise DocumentError(
                f"the field {loc[-1]!r} is missing", json_path(list(loc[:-1]))
            ) from None
        what = _EXPECTED.get(error["type"], "another value")
        if len(loc) >= 4 and loc[-4] == "arms" and loc[-1] == "score":  # a run's score
            what = _EXPECTED["greater_than_equal"]
        if loc[:1] == ("triggers",) and error["type"] in ("greater_than_equal", "less_than_equal"):
            what = trigger_range(loc)
        if error["type"] in ("greater_than_equal", "less_than_equal"):
            what = split_range(loc) or what
        if error["type"] == "too_long":
            what = "a list of two numbers (low, high)"
        if _nullable(loc):
            what += " or null"
        got = found(error["input"])
        raise DocumentError(f"expected {what}, found {got}", json_path(list(loc))) from None
