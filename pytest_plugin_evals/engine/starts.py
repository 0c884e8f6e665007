"""Whether a run starts, and what a run the session stopped becomes: the run maker's rules,
read from the case, the session's stop sign and the environment (``plugin/runs.py`` reads them
from pytest and applies the answer)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace

from pytest_plugin_evals.model import STOPPED, Case, RunResult
from pytest_plugin_evals.util.stop_sign import INTERRUPTED

#: Why runs stop starting after a credential was rejected.
AUTH_STOP = (
    "a run could not authenticate — every remaining run would fail the same way, so no more "
    "runs are started"
)

#: A stop sign as the session's processes read it: its reason and its sentence.
Sign = tuple[str, str]


@dataclass(frozen=True)
class Skip:
    """A run that is not started: the reason shown, and the one recorded (if it is counted)."""

    message: str
    recorded: str | None = None


def skip_case(
    case: Case,
    sign: Sign | None,
    *,
    scaffold: bool,
    environ: Mapping[str, str] = os.environ,
) -> Skip | None:
    """Why a run of ``case`` is not started, before the budget is asked: the session's stop
    sign, a missing required secret, or a scaffold script without ``--eval-scaffold``
    (``scaffold``)."""
    if sign is not None:
        # An interruption's runs not started are listed as such, not counted as skipped.
        recorded = None if sign[0] == INTERRUPTED else sign[0]
        return Skip(f"run not started: {sign[1]}", recorded)
    missing = [name for name in case.requires_secret if not environ.get(name)]
    if missing:
        return Skip(f"missing required secret(s): {', '.join(missing)}", "missing_secret")
    if case.scaffold_script and not scaffold:
        return Skip(
            "its scaffold_script is not run without --eval-scaffold (it runs as you, "
            "outside the sandbox)"
        )
    return None


def stopped_result(result: RunResult, sign: Sign | None) -> RunResult:
    """A run that ended in error once the session was interrupted was stopped by the
    controller (its processes killed): it was not made, and is not graded."""
    if result.error is None or result.infra_error is not None or sign is None:
        return result
    if sign[0] != INTERRUPTED:
        return result
    return replace(
        result, error=STOPPED, infra_error="interrupted", verdicts=(), score=0.0, passed=False
    )
