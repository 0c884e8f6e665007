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
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from pytest_plugin_evals.reporting.document_error import DocumentError as DocumentError
from pytest_plugin_evals.reporting.trigger_shape import TriggerSkill, trigger_range
from pytest_plugin_evals.util.jsonlines import json_path

Str = StrictStr | None
Num = Annotated[float, Field(strict=True)] | None
Bool = StrictBool | None
Strs = list[StrictStr | None] | None
Interval = list[Num] | None
Object = dict[str, Any] | None
Score = Annotated[float, Field(strict=True, ge=0, le=1)] | None


class _Shape(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, populate_by_name=True)


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


class Vote(_Shape):
    vote: Str = None
    reason: Str = None


class Verdict(_Shape):
    name: Str = None
    type: Str = None
    passed: Bool = None
    weight: Num = None
    explanation: Str = None
    withOnly: Bool = None
    scored: Bool = None
    skipped: Str = None
    error: Str = None
    judgeVotes: list[Vote | None] | None = None
    evidence: Str = None
    judgeCostUsd: Num = None


class MockTool(_Shape):
    tool: Str = None
    responder: Str = None


class MockServer(_Shape):
    server: Str = None
    kind: Str = None
    withheld: Bool = None
    tools: list[MockTool | None] | None = None


class Unmocked(_Shape):
    tool: Str = None
    count: Num = None


class Replay(_Shape):
    hits: Num = None
    misses: Num = None


class MockCalls(_Shape):
    total: Num = None
    errors: Num = None
    unmocked: list[Unmocked | None] | None = None
    costUsd: Num = None
    replay: Replay | None = None


class Mocks(_Shape):
    servers: list[MockServer | None] | None = None
    warnings: Strs = None
    calls: MockCalls | None = None


class ToolCall(_Shape):
    name: Str = None
    input: Str = None
    isError: Bool = None
    originalName: Str = None
    error: Str = None


class Aborted(_Shape):
    server: Str = None
    tool: Str = None
    reason: Str = None


class MockCall(_Shape):
    server: Str = None
    tool: Str = None
    input: Object = None
    output: Str = None
    isError: Bool = None


class Run(_Shape):
    nodeid: Str = None
    score: Score = None
    passed: Bool = None
    turns: Num = None
    costUsd: Num = None
    judgeCostUsd: Num = None
    durationSeconds: Num = None
    startedAt: Str = None
    error: Str = None
    tracePath: Str = None
    skippedPaidGraders: Bool = None
    graders: list[Verdict | None] | None = None
    arm: Str = None
    run: Num = None
    infraError: Str = None
    answer: Str = None
    answerTruncated: Bool = None
    inputTokens: Num = None
    outputTokens: Num = None
    toolCalls: Num = None
    toolCallList: list[ToolCall | None] | None = None
    costUnknown: Bool = None
    filesCreated: Strs = None
    notes: Strs = None
    aborted: Aborted | None = None
    mocks: Mocks | None = None
    mockCalls: list[MockCall | None] | None = None
    unconfinedShell: Bool = None
    retries: Num = None
    retryWaitSeconds: Num = None
    reusedFrom: Str = None


class Decision(_Shape):
    """A verdict on a difference (:mod:`pytest_plugin_evals.decisions`)."""

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


class Grader(_Shape):
    name: Str = None
    type: Str = None
    weight: Num = None
    arm: Str = None
    graderMarkdown: Str = None
    config: Object = None


Runs = list[Run | None] | None


class Arms(_Shape):
    with_: Runs = Field(None, alias="with")
    without: Runs = None
    baseline: Runs = None


class Case(_Shape):
    name: Str = None
    agent: Str = None
    dir: Str = None
    suiteDir: Str = None
    source: Str = None
    promptMarkdown: Str = None
    model: Str = None
    runsPerCase: Num = None
    timeoutSeconds: Num = None
    maxTurns: Num = None
    tags: Strs = None
    description: Str = None
    expectedOutput: Str = None
    path: Str = None
    suiteRoot: Str = None
    graders: list[Grader | None] | None = None
    arms: Arms | None = None
    aggregates: CaseAggregates | None = None
    notes: Str = None


class Plugin(_Shape):
    name: Str = None
    version: Str = None
    path: StrictStr


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


Count = Annotated[float, Field(strict=True)]


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
    errors: dict[str, Count] | None = None
    skipped: dict[str, Count] | None = None
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


def _nullable(loc: tuple[Any, ...]) -> bool:
    """Whether the field at ``loc`` may be null (all but a few may)."""
    if len(loc) == 2 and loc[0] in _NOT_NULL_MAPS:
        return False
    return not (len(loc) >= 3 and loc[-3] == "plugins" and loc[-1] == "path")


def check_document(doc: Any, schema_version: int) -> None:
    """Refuse ``doc`` (a parsed JSON value) unless it is a result document of
    ``schema_version`` whose every field read back has the type the writer gives it."""
    if not isinstance(doc, Mapping):
        raise DocumentError(f"not a result document: expected an object, found {_found(doc)}")
    if doc.get("schemaVersion") != schema_version or isinstance(doc.get("schemaVersion"), bool):
        raise DocumentError(f"not a schemaVersion {schema_version} result document")
    try:
        Document.model_validate(doc)
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
        if error["type"] == "too_long":
            what = "a list of two numbers (low, high)"
        if _nullable(loc):
            what += " or null"
        found = _found(error["input"])
        raise DocumentError(f"expected {what}, found {found}", json_path(list(loc))) from None
