"""The shape of a case's ``graderSplits`` in a result document, checked as
:mod:`document_check` checks the rest: strict types, counts not negative, Δ and its interval in
``[-1, 1]``. The reader never takes its numbers: they are computed again from the case's runs
(:mod:`.grader_splits`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

Count = Annotated[float, Field(strict=True, ge=0)] | None
Change = Annotated[float, Field(strict=True, ge=-1, le=1)] | None


class GraderSplit(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    name: StrictStr | None = None
    scored: StrictBool | None = None
    passWith: Count = None
    runsWith: Count = None
    passWithout: Count = None
    runsWithout: Count = None
    delta: Change = None
    deltaInterval: Annotated[list[Change], Field(max_length=2)] | None = None
    flag: StrictStr | None = None


def split_range(loc: tuple[Any, ...]) -> str | None:
    """What a number of a case's ``graderSplits`` must be, by where it is (None elsewhere)."""
    if len(loc) < 5 or loc[0] != "cases" or loc[2] != "graderSplits":
        return None
    return "a number from -1 to 1" if str(loc[4]).startswith("delta") else "a count (0 or more)"
