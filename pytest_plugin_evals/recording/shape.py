"""The JSON shape of a kept run's ``meta.json``, as pydantic models: checked strictly before
a replayed or reused run is built from it.

Strict means ``true`` is not a number and ``"3"`` is not a count; a field of the wrong type
is an error naming it, never read as "not recorded". A missing field takes the value a run
that did not record it has (so a folder an earlier version kept still replays); a field this
version does not read is not looked at. The models are built on first use (``defer_build``):
a session that only keeps runs pays nothing.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, StrictBool, StrictInt, StrictStr
from pydantic_core import PydanticCustomError


def _number(value: Any) -> float:
    """A finite JSON number (``true`` and ``"3"`` are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise PydanticCustomError("float_type", "Input should be a valid number")
    return float(value)


Number = Annotated[float, PlainValidator(_number)]
Amount = Annotated[Number, Field(ge=0)]
Count = Annotated[StrictInt, Field(ge=0)]


class Shape(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, defer_build=True)


class ToolCall(Shape):
    name: StrictStr = ""
    input: dict[str, Any] = Field(default_factory=dict)
    output: StrictStr | None = None
    isError: StrictBool = False
    id: StrictStr | None = None
    originalName: StrictStr | None = None


class MockCall(Shape):
    server: StrictStr = ""
    tool: StrictStr = ""
    input: dict[str, Any] = Field(default_factory=dict)
    output: StrictStr | None = None
    isError: StrictBool = False


class Aborted(Shape):
    server: StrictStr = ""
    tool: StrictStr = ""
    reason: StrictStr = ""


class Meta(Shape):
    agent: StrictStr = ""
    finalMessage: StrictStr = ""
    toolCalls: list[ToolCall] = Field(default_factory=list)
    turns: Count = 0
    inputTokens: Count | None = None
    outputTokens: Count | None = None
    costUsd: Amount = 0.0
    costUnknown: StrictBool = False
    durationSeconds: Amount = 0.0
    error: StrictStr | None = None
    infraError: StrictStr | None = None
    filesCreated: list[StrictStr] = Field(default_factory=list)
    delivered: StrictBool | None = None
    latencyMs: Amount | None = None
    notes: list[StrictStr] = Field(default_factory=list)
    aborted: Aborted | None = None
    skipGrading: StrictBool = False
    unconfined: StrictBool = False
    #: What earlier versions called ``unconfined``.
    unconfinedShell: StrictBool = False
    mockCalls: list[MockCall] | None = None
