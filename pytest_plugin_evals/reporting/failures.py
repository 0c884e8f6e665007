"""What a run item's report shows of its run, safe for a terminal: whether the run fails its
item, and the failure text (its score, error and failed verdicts, its tool calls and its
answer); what a CI's test view shows beside its record (JUnit properties, the answer as
``system-out``)."""

from __future__ import annotations

from pytest_plugin_evals.model import (
    ANSWER_LIMIT,
    SECOND_ARMS,
    SKILL_NOT_LOADED,
    RunResult,
    Verdict,
)
from pytest_plugin_evals.reporting.terminal import plain

#: The most characters a readable JUnit property holds.
PROPERTY_LIMIT = 500


def item_failure(result: RunResult, source: str, *, measured: bool) -> str | None:
    """The failure text of a run's item, or None when the item passes.

    A with-arm (or single-arm) run that is below a perfect score fails its item when the
    threshold is 1 (the default): then a case passes exactly when each of its runs does. Under
    a lower threshold (``measured``: the case's runs are measurements) a run is a measurement
    like a second arm's run, and the case's verdict is reported by the session on the last of
    its runs, as is a trigger query's (its rate; see docs/explanation/arms-and-scoring.md). A
    run that ended with an error (a timeout, a non-zero exit) is graded on what it produced, as
    the document records it: the item passes when its scored graders do.
    """
    if result.arm in SECOND_ARMS or source == "trigger_eval" or measured or result.passed:
        return None
    return failure_message(result)


def failure_message(result: RunResult) -> str:
    """The failure text of a run: its score, error and failed verdicts, safe for a terminal
    (errors, names and explanations can quote the suite and the model's output)."""
    lines = [f"score {result.score:.2f} (run {result.run}, {result.arm} arm)"]
    if result.error:
        lines.append(f"run error: {result.error}")
    if result.aborted is not None:
        lines.append(result.aborted.message)
    for verdict in result.verdicts:
        if verdict.passed is False:
            note = "" if verdict.scored else " [with-only, not scored]"
            lines.append(f"✗ {verdict.name}{note}: {verdict.explanation}{judge_note(verdict)}")
        elif verdict.passed and judge_note(verdict):
            lines.append(f"✓ {verdict.name}: {verdict.explanation}{judge_note(verdict)}")
        elif verdict.passed and SKILL_NOT_LOADED in verdict.explanation:
            # Counted as a call (as the reference does), but the skill never loaded.
            note = "" if verdict.scored else " [with-only, not scored]"
            lines.append(f"⚠ {verdict.name}{note}: {verdict.explanation}")
    for verdict in result.verdicts:
        if verdict.passed is None:
            lines.append(f"- {verdict.name}: {verdict.explanation}")
    lines += tool_call_lines(result)
    lines += answer_lines(result)
    return plain("\n".join(lines), newlines=True)


def judge_note(verdict: Verdict) -> str:
    """`` [split vote 2-1; second judge: FAIL]``: a judge verdict's split votes and the second
    judge's verdict, when there is either (else empty)."""
    judged = verdict.judgement
    if judged is None or not judged.votes:
        return ""
    notes = []
    if judged.split:
        passes = sum(v.vote == "PASS" for v in judged.votes)
        fewest = min(passes, len(judged.votes) - passes)
        notes.append(f"split vote {len(judged.votes) - fewest}-{fewest}")
    second = judged.second
    if second is not None:
        said = "no verdict" if second.passed is None else "PASS" if second.passed else "FAIL"
        notes.append(f"second judge: {said}")
    return f" [{'; '.join(notes)}]" if notes else ""


#: A failure section shows at most this many characters of the answer ...
FAILURE_ANSWER_LIMIT = 1500
#: ... and of each tool call's input.
FAILURE_INPUT_LIMIT = 200


def tool_call_lines(result: RunResult) -> list[str]:
    """The run's tool calls in order, one line each: position, name, compact input, and a
    failed call marked with its error text
    (``@0 Skill {"skill":"pdf"} ✗ error: Unknown skill: pdf``)."""
    if not result.tool_calls:
        return ["tool calls: none"]
    lines = [f"tool calls ({result.tool_calls}):"]
    for index, call in enumerate(result.tool_call_list):
        shown = call.input
        if len(shown) > FAILURE_INPUT_LIMIT:
            shown = shown[: FAILURE_INPUT_LIMIT - 1] + "…"
        mark = " ✗ error" if call.is_error else ""
        if call.is_error and call.error:
            mark += f": {call.error}"
        lines.append(f"  @{index} {call.name} {shown}{mark}")
    more = result.tool_calls - len(result.tool_call_list)
    if more > 0:
        lines.append(f"  [… {more} more not listed]")
    return lines


def answer_lines(result: RunResult) -> list[str]:
    """The run's final answer, indented, its first :data:`FAILURE_ANSWER_LIMIT` characters."""
    answer = result.answer
    if not answer.strip():
        return ["answer: (empty)"]
    total = f"{len(answer):,}{'+' if result.answer_truncated else ''}"
    lines = [f"answer ({total} characters):"]
    shown = answer[:FAILURE_ANSWER_LIMIT].replace("\r\n", "\n").rstrip("\n")
    lines += [f"  {line}" for line in shown.split("\n")]  # a lone \r shows as ␍
    if len(answer) > FAILURE_ANSWER_LIMIT or result.answer_truncated:
        lines.append(f"  [… cut: the first {FAILURE_ANSWER_LIMIT:,} of {total} characters shown]")
    return lines


def junit_properties(result: RunResult) -> list[tuple[str, str]]:
    """What a CI's test view shows of a run beside its record: its arm and run, and its reuse,
    its infrastructure error or score, and its failed scored graders."""
    shown = [("eval_arm", str(result.arm)), ("eval_run", str(result.run))]
    if result.reused_from is not None:
        shown.append(("eval_reused_from", plain(result.reused_from)[:PROPERTY_LIMIT]))
    if result.infra_error:
        shown.append(("eval_infra_error", result.infra_error))
    elif result.graded:
        shown.append(("eval_score", f"{result.score:.2f}"))
    failed = [v.name for v in result.verdicts if v.passed is False and v.scored]
    if failed:
        shown.append(("eval_failed_graders", plain(", ".join(failed))[:PROPERTY_LIMIT]))
    return shown


def junit_answer(result: RunResult) -> str:
    """The run's answer as JUnit's ``system-out`` gets it (as the run's captured output): as the
    session keeps it (its first :data:`~pytest_plugin_evals.model.ANSWER_LIMIT` characters),
    escape sequences and control characters removed (pytest escapes only what XML cannot hold,
    and a CI's test view may print the text as it is)."""
    answer = result.answer
    cut = len(answer) > ANSWER_LIMIT or result.answer_truncated
    total = f"{len(answer):,}{'+' if cut else ''}"
    text = plain(answer[:ANSWER_LIMIT], newlines=True)
    if cut:
        text += f"\n[… cut at {ANSWER_LIMIT:,} characters]"
    return f"the agent's answer ({total} characters):\n{text}\n"
