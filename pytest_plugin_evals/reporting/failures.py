"""The failure text of a run, as a failed eval item shows it: its score, error and failed
verdicts, its tool calls and its answer, safe for a terminal."""

from __future__ import annotations

from pytest_plugin_evals.model import SKILL_NOT_LOADED, RunResult, Verdict
from pytest_plugin_evals.reporting.terminal import plain


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
