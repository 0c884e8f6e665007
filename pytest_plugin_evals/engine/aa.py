"""``--eval-aa`` in the session's gates and lines (pure).

An A/A session measures the verdicts, not the plugin: both arms load the plugin under test, so
a case's score says nothing about a change and a difference called is the verdicts' own error.
It therefore gates on nothing but its own wiring faults (an arm that did not load the plugin or
never fired its skill while the other always did: the calibration is void, exit status 1). The
threshold, ``--eval-fail-on-regression``, ``--eval-gate`` and ``--eval-trigger-threshold`` do
not apply; a partial result still exits 2 (its rate is over fewer cases than asked).
"""

from __future__ import annotations

from pytest_plugin_evals.engine.gates import Gate
from pytest_plugin_evals.engine.notices import FAILURE, INFO, WARNING, Notice
from pytest_plugin_evals.model import ExitStatus
from pytest_plugin_evals.reporting.aa import calibrate, calibration_line
from pytest_plugin_evals.reporting.result import SessionResult

#: What an A/A session without a wiring fault says of its gates.
UNGATED = (
    "--eval-aa: an A/A session gates on its wiring faults only (none found); the threshold, "
    "--eval-fail-on-regression and --eval-gate do not apply"
)


def aa_gate(result: SessionResult) -> Gate | None:
    """An A/A session's gate: its wiring faults turn OK into 1 (None: not an A/A session)."""
    found = calibrate(result)
    if found is None:
        return None
    if not found.faults:
        return Gate(ExitStatus.OK, UNGATED)
    cases = sorted({f.case for f in found.faults})
    return Gate(
        ExitStatus.FAILED,
        f"--eval-aa: {len(found.faults)} wiring fault(s) in {len(cases)} case(s) "
        f"({', '.join(cases)}): the arms did not run the plugin alike, so the false-call "
        "rate does not measure the verdicts",
    )


def aa_notices(result: SessionResult) -> list[Notice]:
    """The false-call rate against the nominal level, then each wiring fault."""
    found = calibrate(result)
    if found is None:
        return []
    return [
        Notice(WARNING if found.above_nominal else INFO, calibration_line(found)),
        *(Notice(FAILURE, f"--eval-aa wiring fault: {f.message}") for f in found.faults),
    ]
