"""Credentials: the first rejected credential stops the session from starting more runs (as
the reference does), and a session whose runs would have no credential says so at the start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text
from tests.helpers import write_tree

CASES = {
    f"evals/{name}/prompt.md": f"---\nruns: 1\n---\nSay {name}.\n"
    for name in ("alpha", "beta", "gamma")
} | {
    f"evals/{name}/graders/said.md": f"---\ntype: regex\npattern: {name}\n---\n"
    for name in ("alpha", "beta", "gamma")
}


def test_a_rejected_credential_stops_the_session(
    pytester: pytest.Pytester, run_evals: Any, scripted_model: ScriptedModel
) -> None:
    write_tree(pytester.path, CASES)
    scripted_model.add(Rule(reply=error(401)))
    result, doc = run_evals("-n0", "-rs", "--eval-run-ahead", "off", "--eval-ablation", "none")
    assert result.ret == 2
    result.assert_outcomes(errors=1, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "auth: exit 1: Failed to authenticate. API Error: 401*",
            "a run could not authenticate: the remaining runs were not started; the result is "
            "partial (exit status 2). Runs use ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN*",
            "SKIPPED*run not started: a run could not authenticate — every remaining run would "
            "fail the same way, so no more runs are started",
        ]
    )
    assert doc["partial"] is True and doc["partialReason"] == "auth_failed"
    assert doc["errors"] == {"auth": 1} and doc["skipped"] == {"auth_failed": 2}
    (refused,) = [c for c in doc["cases"] if c["arms"]["with"]]
    assert refused["arms"]["with"][0]["infraError"] == "auth"
    assert refused["aggregates"]["score"] is None  # an error, not a score
    calls = [r for r in scripted_model.requests if r["path"].endswith("/messages")]
    assert len(calls) == 1  # no other run reached the API
    # The scripted model's key is a credential: no notice at the start.
    assert "no credential" not in result.stdout.str()


def test_a_rejected_credential_stops_workers_too(
    pytester: pytest.Pytester, run_evals: Any, scripted_model: ScriptedModel
) -> None:
    write_tree(pytester.path, CASES)
    scripted_model.add(Rule(reply=error(401)))
    result, doc = run_evals("-n2", "--eval-ablation", "none")
    assert result.ret == 2
    assert doc["partialReason"] == "auth_failed"
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) >= 1
    assert outcomes.get("errors", 0) + outcomes.get("skipped", 0) == 3


def test_a_login_session_without_a_credential_is_said_at_the_start_and_is_auth(
    pytester: pytest.Pytester,
    run_evals: Any,
    scripted_model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No credential variable, logged in with /login on this machine (the operator's home is
    read): said at the start, with what to set instead, and the run cannot log in. Which line
    each environment gets is tests/unit/test_stops.py's ``credential_notice``."""
    write_tree(pytester.path, CASES)
    scripted_model.add(Rule(reply=text("alpha beta gamma")))
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    credentials = Path.home() / ".claude" / ".credentials.json"
    credentials.parent.mkdir(parents=True, exist_ok=True)
    credentials.write_text("{}", encoding="utf-8")
    result, doc = run_evals("-n0", "--eval-run-ahead", "off", "--eval-ablation", "none")
    result.stdout.fnmatch_lines(
        [
            "claude: a /login session is not carried into the isolated runs, so they have no "
            "credential: set ANTHROPIC_API_KEY*",
            "*auth: exit 1: Not logged in*",
        ]
    )
    assert doc["partialReason"] == "auth_failed" and doc["errors"] == {"auth": 1}
