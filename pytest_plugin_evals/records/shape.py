"""The JSON shape of a run and of a case, as pydantic models: what the wire records and the
result document hold, checked strictly before either is read.

Strict means ``true`` is not a number and ``"3"`` is not a count. A field that is missing
reads as "not known" (None), so a document of the reference, which has fewer fields, still
reads; a field this version does not read is not looked at. Numbers keep the type they were
written with (a whole number stays an ``int``), so what is read back writes the same.

The models are built on first use (``defer_build``): a session that only writes pays nothing.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, StrictBool, StrictStr
from pydantic_core import PydanticCustomError


def _number(value: Any) -> int | float:
    """A JSON number as written (``true`` and ``"3"`` are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PydanticCustomError("float_type", "Input should be a valid number")
    return value


Number = Annotated[float, PlainValidator(_number)]
Str = StrictStr | None
Num = Number | None
Bool = StrictBool | None
Strs = list[StrictStr | None] | None
Interval = list[Num] | None
Object = dict[str, Any] | None
Score = Annotated[Number, Field(ge=0, le=1)] | None


class Shape(BaseModel):
    """A JSON object of ours: strict types, extra fields ignored, every field optional."""

    model_config = ConfigDict(extra="ignore", strict=True, populate_by_name=True, defer_build=True)


class Vote(Shape):
    vote: Str = None
    reason: Str = None


class SecondJudge(Shape):
    votes: list[Vote | None] | None = None
    costUsd: Num = None
    error: Str = None


class Verdict(Shape):
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
    secondJudge: SecondJudge | None = None


class MockTool(Shape):
    tool: Str = None
    responder: Str = None


class MockServer(Shape):
    server: Str = None
    kind: Str = None
    withheld: Bool = None
    tools: list[MockTool | None] | None = None


class Unmocked(Shape):
    tool: Str = None
    count: Num = None


class Replay(Shape):
    hits: Num = None
    misses: Num = None


class MockCalls(Shape):
    total: Num = None
    errors: Num = None
    unmocked: list[Unmocked | None] | None = None
    costUsd: Num = None
    replay: Replay | None = None


class Mocks(Shape):
    servers: list[MockServer | None] | None = None
    warnings: Strs = None
    calls: MockCalls | None = None


class ToolCall(Shape):
    name: Str = None
    input: Str = None
    isError: Bool = None
    originalName: Str = None
    error: Str = None


class Aborted(Shape):
    server: Str = None
    tool: Str = None
    reason: Str = None


class MockCall(Shape):
    server: Str = None
    tool: Str = None
    input: Object = None
    output: Str = None
    isError: Bool = None


class Run(Shape):
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
    unconfined: Bool = None
    unconfinedShell: Bool = None  # the name of an earlier version
    retries: Num = None
    retryWaitSeconds: Num = None
    reusedFrom: Str = None


class Grader(Shape):
    name: Str = None
    type: Str = None
    weight: Num = None
    arm: Str = None
    graderMarkdown: Str = None
    config: Object = None


class CaseInfo(Shape):
    """What a record and a document say of a case (a document's case says more)."""

    name: Str = None
    source: Str = None
    path: Str = None
    dir: Str = None
    suiteRoot: Str = None
    promptMarkdown: Str = None
    description: Str = None
    tags: Strs = None
    runsPerCase: Num = None
    model: Str = None
    maxTurns: Num = None
    timeoutSeconds: Num = None
    graders: list[Grader | None] | None = None
    expectedOutput: Str = None


class Plugin(Shape):
    name: Str = None
    version: Str = None
    path: StrictStr
    layout: Str = None


class Record(Shape):
    """One wire record (:mod:`pytest_plugin_evals.records`), of any kind."""

    schema_: Any = Field(None, alias="schema")
    kind: Str = None
    nodeid: Str = None
    case: CaseInfo | None = None
    plugin: Plugin | None = None
    twoArm: Bool = None
    arm: Str = None
    run: Num = None
    agent: Str = None
    result: Run | None = None
    reason: Str = None
    path: Str = None
    line: Num = None
    message: Str = None
    suiteRoot: Str = None
