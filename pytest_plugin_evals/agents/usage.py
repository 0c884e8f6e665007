"""What an agent reported of its spend, checked as hostile input: a cost that is no price
refuses the run; tokens, turns or a duration that are no count or no time are left out."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from pytest_plugin_evals.model import Transcript


def _amount(value: object) -> bool:
    """Whether ``value`` is a count or an amount: a number (not a bool), finite, not below 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return value >= 0 and (isinstance(value, int) or math.isfinite(value))


def usable_usage(transcript: Transcript) -> Transcript:
    """What an agent (a ``py:`` callable may return anything) reported of its tokens, turns
    and duration, where it is no count or no time: left out (tokens unreported, turns 0, the
    duration measured), with a note; never a record that cannot be sent."""
    kept: dict[str, Any] = {}
    for name, empty in (("input_tokens", None), ("output_tokens", None), ("turns", 0)):
        value = getattr(transcript, name)
        if value != empty and not (isinstance(value, int) and _amount(value)):
            kept[name] = empty
    if transcript.duration_seconds and not _amount(transcript.duration_seconds):
        kept["duration_seconds"] = 0.0
    if not kept:
        return transcript
    left = ", ".join(f"{name} {getattr(transcript, name)!r}"[:80] for name in kept)
    note = f"agent reported an unusable {left}; left out"
    return dataclasses.replace(transcript, **kept, notes=[*transcript.notes, note])


def refuse_invalid_cost(transcript: Transcript) -> Transcript:
    """A cost that is not a price (not a number, negative, NaN, infinite) is refused: the run
    is an error, its cost counts as nothing, and the cost ceiling and the totals never see it."""
    cost = transcript.cost_usd
    if _amount(cost):
        return transcript
    return dataclasses.replace(
        transcript,
        cost_usd=0.0,
        infra_error="invalid_cost",
        error=f"agent reported an invalid cost ({cost!r} USD); the run is not scored",
    )
