"""The shape of a result document's ``triggers`` section (trigger accuracy per skill, and in
an A/B its ``baseline`` with the ``difference`` of each number), checked as
:mod:`document_check` checks the rest: strict types, rates in ``[0, 1]``, differences in
``[-1, 1]``, counts not negative, an interval two numbers at most."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from pytest_plugin_evals.records.shape import Bool, Str
from pytest_plugin_evals.records.shape import Shape as _Shape

Score = Annotated[float, Field(strict=True, ge=0, le=1)] | None
Tally = Annotated[float, Field(strict=True, ge=0)] | None
Change = Annotated[float, Field(strict=True, ge=-1, le=1)] | None


class Matrix(_Shape):
    tp: Tally = None
    fp: Tally = None
    fn: Tally = None
    tn: Tally = None


class TriggerNumber(_Shape):
    value: Score = None
    interval: Annotated[list[Score], Field(max_length=2)] | None = None


class TriggerChange(_Shape):
    value: Change = None
    interval: Annotated[list[Change], Field(max_length=2)] | None = None


class TriggerQuery(_Shape):
    query: Str = None
    shouldTrigger: Bool = None
    runs: Tally = None
    fired: Tally = None
    rate: Score = None
    triggered: Bool = None
    errors: Tally = None
    firedInstead: dict[str, Tally] | None = None


class TriggerArm(_Shape):
    matrix: Matrix | None = None
    precision: TriggerNumber | None = None
    recall: TriggerNumber | None = None
    f1: TriggerNumber | None = None
    accuracy: TriggerNumber | None = None
    errors: Tally = None
    firedInstead: dict[str, Tally] | None = None
    queries: list[TriggerQuery | None] | None = None


class TriggerDifference(_Shape):
    precision: TriggerChange | None = None
    recall: TriggerChange | None = None
    f1: TriggerChange | None = None
    accuracy: TriggerChange | None = None


class TriggerBaseline(TriggerArm):
    difference: TriggerDifference | None = None


class TriggerSkill(TriggerArm):
    skill: Str = None
    baseline: TriggerBaseline | None = None


def trigger_range(loc: tuple[Any, ...]) -> str:
    """What a number of the ``triggers`` section must be, by where it is."""
    if "difference" in loc:
        return "a number from -1 to 1"
    if loc[-1] in ("tp", "fp", "fn", "tn", "runs", "fired", "errors") or "firedInstead" in loc:
        return "a count (0 or more)"
    return "a number from 0 to 1"
