"""Rate limits waited out with the real ``claude`` binary: a burst of scripted 429s under
``-n 2`` costs retries and seconds, not errors.

Claude Code retries a 429 itself (10 times by default, ``CLAUDE_CODE_MAX_RETRIES``), each
process on its own. While the session retries refused runs, a run gets
``CLAUDE_CODE_MAX_RETRIES=0`` unless the operator set it: the first 429 ends the run and the
session's shared pause is the one that waits. Claude Code's stream-json does not carry the
``retry-after`` header (its ``api_retry`` events only say what it waited itself), so the
session's backoff decides the wait.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error
from tests.e2e.test_claude_agent import make_plugin, skill_rules


def test_a_burst_of_429s_is_waited_out_under_two_workers(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    run_evals: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_plugin(pytester)
    # The harness, not the environment, keeps Claude Code from retrying on its own.
    monkeypatch.delenv("CLAUDE_CODE_MAX_RETRIES")
    # Three 429s for two runs (one a worker): a run is refused twice at least.
    scripted_model.add(Rule(reply=error(429, retry_after=1), times=3), *skill_rules())
    result, doc = run_evals("-n", "2", "--eval-runs", "1")
    result.assert_outcomes(passed=2)
    assert doc["errors"] == {} and doc["partial"] is False
    assert doc["aggregates"]["runsTotal"] == 2  # the run count is unchanged
    statuses = [r["status"] for r in scripted_model.message_requests]
    assert statuses.count(429) == 3
    runs = [run for runs in doc["cases"][0]["arms"].values() for run in runs]
    assert sum(run["retries"] for run in runs) == 3  # each 429 ended one attempt
    assert doc["aggregates"]["rateLimitRetries"] == 3
    assert doc["aggregates"]["rateLimitWaitSeconds"] >= 0.5
    result.stdout.fnmatch_lines(["rate limits: 3 retries, waited *s"])
    assert doc["cases"][0]["aggregates"]["delta"] == 1.0
