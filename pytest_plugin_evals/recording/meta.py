"""A kept run's ``meta.json``: everything the replay agent needs to rebuild its transcript,
written from a :class:`~pytest_plugin_evals.model.Transcript` and read back through the
strict shape of :mod:`.shape` (what an agent left in a results folder is not trusted)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, get_args

from pytest_plugin_evals.model import Abort, InfraKind, MockCall, ToolCall, Transcript
from pytest_plugin_evals.util.jsonlines import camel_fields, json_path
from pytest_plugin_evals.util.plainfiles import relative_name

if TYPE_CHECKING:
    import pytest_plugin_evals.recording.shape as shape


class MetaError(ValueError):
    """A ``meta.json`` that is not of the shape a session writes: one line naming the field."""


def _call_json(call: ToolCall) -> dict[str, Any]:
    fields = camel_fields(call, "name", "input", "output", "is_error", "id")
    return {**fields, **({"originalName": call.original_name} if call.original_name else {})}


def transcript_meta(transcript: Transcript, agent: str) -> dict[str, Any]:
    """The ``meta.json`` of a kept run: everything the replay agent needs to rebuild it."""
    aborted = transcript.aborted
    return {
        "agent": agent,
        "finalMessage": transcript.final_message,
        "toolCalls": [_call_json(call) for call in transcript.tool_calls],
        "turns": transcript.turns,
        "inputTokens": transcript.input_tokens,
        "outputTokens": transcript.output_tokens,
        "costUsd": transcript.cost_usd,
        **({} if transcript.cost_known else {"costUnknown": True}),
        "durationSeconds": transcript.duration_seconds,
        "error": transcript.error,
        "infraError": transcript.infra_error,
        "filesCreated": transcript.files_created,
        "delivered": transcript.delivered,
        "latencyMs": transcript.latency_ms,
        "notes": transcript.notes,
        "aborted": None if aborted is None else {
            "server": aborted.server, "tool": aborted.tool, "reason": aborted.reason
        },
        "skipGrading": transcript.skip_grading,
        "unconfined": transcript.unconfined,
        "mockCalls": None if transcript.mock_calls is None else [
            c.to_json() for c in transcript.mock_calls
        ],
    }  # fmt: skip


def check_meta(meta: Any) -> shape.Meta:
    """``meta`` checked against the shape a session writes; :class:`MetaError` naming the
    first field that is not (``costUsd is not as a session writes it: Input should be a valid
    number``)."""
    # Deferred for speed: pydantic and the models cost a session that only keeps runs.
    from pydantic import ValidationError

    import pytest_plugin_evals.recording.shape as shape

    try:
        return shape.Meta.model_validate(meta)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = json_path(list(error["loc"])).removeprefix("$.")
        raise MetaError(f"{where} is not as a session writes it: {error['msg']}") from None


def _infra(value: str | None) -> InfraKind | None:
    """A recorded infrastructure error's kind (one this version does not know: ``harness``)."""
    if value is None:
        return None
    return cast("InfraKind", value) if value in get_args(InfraKind) else "harness"


def transcript_from_meta(meta: Any, cwd: Path, trace: Path | None) -> Transcript:
    """The transcript a kept run's ``meta.json`` describes (see :func:`transcript_meta`);
    :class:`MetaError` when it is not of the shape a session writes."""
    doc = check_meta(meta)
    aborted = doc.aborted
    return Transcript(
        final_message=doc.finalMessage,
        tool_calls=[
            ToolCall(c.name, c.input, c.output, c.isError, c.id, c.originalName or None)
            for c in doc.toolCalls
        ],
        turns=doc.turns,
        input_tokens=doc.inputTokens,
        output_tokens=doc.outputTokens,
        cost_usd=doc.costUsd,
        cost_known=not doc.costUnknown,
        duration_seconds=doc.durationSeconds,
        error=doc.error,
        infra_error=_infra(doc.infraError),
        trace_path=trace,
        files_created=[f for f in doc.filesCreated if relative_name(f)],
        cwd=cwd,
        mock_calls=None
        if doc.mockCalls is None
        else [
            MockCall(m.server, m.tool, m.input, m.output or "", m.isError) for m in doc.mockCalls
        ],
        delivered=doc.delivered,
        latency_ms=doc.latencyMs,
        skip_grading=doc.skipGrading,
        unconfined=doc.unconfined or doc.unconfinedShell,
        notes=list(doc.notes),
        aborted=None if aborted is None else Abort(aborted.server, aborted.tool, aborted.reason),
    )
