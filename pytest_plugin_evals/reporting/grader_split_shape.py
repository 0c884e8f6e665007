"""The shape of a case's ``graderSplits`` in a result document, checked as
:mod:`document_check` checks the rest: strict types, counts not negative, Δ and its interval in
``[-1, 1]``. The reader never takes its numbers: they are computed again from the case's runs
(:mod:`.grader_splits`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from pytest_plugin_evals.records.shape import Bool, Shape, Str
from pytest_plugin_evals.reporting.trigger_shape import Change, Tally


class GraderSplit(Shape):
    name: Str = None
    scored: Bool = None
    passWith: Tally = None
    runsWith: Tally = None
    passWithout: Tally = None
    runsWithout: Tally = None
    delta: Change = None
    deltaInterval: Annotated[list[Change], Field(max_length=2)] | None = None
    flag: Str = None


def split_range(loc: tuple[Any, ...]) -> str | None:
    """What a number of a case's ``graderSplits`` must be, by where it is (None elsewhere)."""
    if len(loc) < 5 or loc[0] != "cases" or loc[2] != "graderSplits":
        return None
    return "a number from -1 to 1" if str(loc[4]).startswith("delta") else "a count (0 or more)"
