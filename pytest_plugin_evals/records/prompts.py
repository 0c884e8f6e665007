"""A long prompt carried once: the records of a case's later runs point to its first run's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from pytest_plugin_evals.records import CaseInfo, Record, RunRecord, SkippedRun

#: The prompt a record carries when the case's first selected run carries it instead ...
PROMPT_ELSEWHERE = "\0(the prompt is in the record of the case's first run)"
#: ... which it does for a prompt of this many characters or more.
PROMPT_SHARED_OVER = 1000


def carried(info: CaseInfo, first_run: Callable[[], bool]) -> CaseInfo:
    """The case as a run's record carries it: a long prompt only in the record of the case's
    first selected run (``first_run``: whether this is it), so that a 5 MB prompt is once in
    JUnit, not once per run (the controller gives it back to the others: :func:`with_prompts`)."""
    if len(info.prompt) < PROMPT_SHARED_OVER or first_run():
        return info
    return replace(info, prompt=PROMPT_ELSEWHERE)


def with_prompts(records: list[Record]) -> list[Record]:
    """The records, each run's case with its prompt again (from its case's first run)."""
    prompts: dict[tuple[str, str, str], str] = {}
    for record in records:
        if isinstance(record, (RunRecord, SkippedRun)) and record.case.prompt != PROMPT_ELSEWHERE:
            case = record.case
            prompts.setdefault((case.suite_root, case.path, case.name), case.prompt)
    restored: list[Record] = []
    for record in records:
        if isinstance(record, (RunRecord, SkippedRun)) and record.case.prompt == PROMPT_ELSEWHERE:
            case = record.case
            prompt = prompts.get((case.suite_root, case.path, case.name), "")
            record = replace(record, case=replace(case, prompt=prompt))
        restored.append(record)
    return restored
