"""``engine.starts``: whether a run starts, and what a run the session stopped becomes, called
directly (the integration tests of interruptions, secrets and scaffolds run them in sessions)."""

from __future__ import annotations

from pathlib import Path

from pytest_plugin_evals.engine.starts import Skip, skip_case, stopped_result
from pytest_plugin_evals.model import STOPPED, Case, RunResult, Verdict
from pytest_plugin_evals.util.stop_sign import INTERRUPTED

ROOT = Path("/evals")
INTERRUPTION = (INTERRUPTED, "the session was interrupted")


def case(**given: object) -> Case:
    return Case("c", "p", "prose", ROOT / "c" / "prompt.md", ROOT / "c", ROOT, **given)  # type: ignore[arg-type]


def test_a_case_with_nothing_in_its_way_starts() -> None:
    assert skip_case(case(), None, scaffold=False, environ={}) is None


def test_an_interruption_is_said_but_not_counted_as_a_skip() -> None:
    got = skip_case(case(), INTERRUPTION, scaffold=False, environ={})
    assert got == Skip("run not started: the session was interrupted", None)


def test_another_stop_is_recorded_by_its_reason() -> None:
    got = skip_case(case(), ("auth_failed", "no credential"), scaffold=True, environ={})
    assert got == Skip("run not started: no credential", "auth_failed")


def test_the_stop_sign_comes_before_a_missing_secret() -> None:
    got = skip_case(case(requires_secret=("TOKEN",)), INTERRUPTION, scaffold=False, environ={})
    assert got is not None and got.message.startswith("run not started")


def test_missing_secrets_are_named_and_counted() -> None:
    needs = case(requires_secret=("A_TOKEN", "B_TOKEN"))
    got = skip_case(needs, None, scaffold=False, environ={"B_TOKEN": "x", "A_TOKEN": ""})
    assert got == Skip("missing required secret(s): A_TOKEN", "missing_secret")
    assert skip_case(needs, None, scaffold=False, environ={"A_TOKEN": "1", "B_TOKEN": "2"}) is None


def test_a_scaffold_script_needs_eval_scaffold() -> None:
    scaffolded = case(scaffold_script="setup.sh")
    got = skip_case(scaffolded, None, scaffold=False, environ={})
    assert got is not None and got.recorded is None and "--eval-scaffold" in got.message
    assert skip_case(scaffolded, None, scaffold=True, environ={}) is None


def failed(**given: object) -> RunResult:
    return RunResult(arm="with", run=1, error="exit 137", score=1.0, passed=True, **given)  # type: ignore[arg-type]


def test_a_run_that_failed_once_interrupted_was_stopped_and_is_not_graded() -> None:
    run = failed(verdicts=(Verdict("g", True, "ok"),))
    got = stopped_result(run, INTERRUPTION)
    assert (got.error, got.infra_error, got.verdicts, got.score, got.passed) == (
        STOPPED,
        "interrupted",
        (),
        0.0,
        False,
    )


def test_other_runs_are_left_as_they_are() -> None:
    run = failed()
    assert stopped_result(run, None) is run  # no sign
    assert stopped_result(run, ("auth_failed", "no credential")) is run  # not an interruption
    clean = RunResult(arm="with", run=1)
    assert stopped_result(clean, INTERRUPTION) is clean  # it ended without an error
    infra = failed(infra_error="rate_limit")
    assert stopped_result(infra, INTERRUPTION) is infra  # its error was already the agent's
