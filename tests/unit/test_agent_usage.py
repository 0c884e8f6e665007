"""What an agent reports of its spend is hostile (a ``py:`` callable may return anything): a
cost that is no price refuses the run; tokens, turns or a duration that are no count or no
time are left out with a note, never a record that cannot be sent."""

from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_plugin_evals.agents.usage import refuse_invalid_cost, usable_usage
from pytest_plugin_evals.model import Transcript


@pytest.mark.parametrize("cost", [math.nan, math.inf, -0.5, "0.5", None, True])
def test_a_cost_that_is_no_price_refuses_the_run(cost: Any) -> None:
    refused = refuse_invalid_cost(Transcript(cost_usd=cost))
    assert (refused.infra_error, refused.cost_usd) == ("invalid_cost", 0.0)


@pytest.mark.parametrize("cost", [0, 0.0, 0.25, 3, 10**400])
def test_a_price_is_kept(cost: Any) -> None:
    assert refuse_invalid_cost(Transcript(cost_usd=cost)).infra_error is None


def test_counts_and_times_that_are_none_are_left_out_with_a_note() -> None:
    given = Transcript(
        input_tokens="lots",  # type: ignore[arg-type]
        output_tokens=-3,
        turns=2.5,  # type: ignore[arg-type]
        duration_seconds=math.nan,
    )
    kept = usable_usage(given)
    assert (kept.input_tokens, kept.output_tokens, kept.turns, kept.duration_seconds) == (
        None,
        None,
        0,
        0.0,
    )
    assert len(kept.notes) == 1 and "'lots'" in kept.notes[0] and "left out" in kept.notes[0]
    fine = Transcript(input_tokens=10, output_tokens=0, turns=3, duration_seconds=1.5)
    assert usable_usage(fine) is fine
