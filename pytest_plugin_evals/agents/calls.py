"""What every reader of an agent's stream shares: the run's tool calls as the stream tells them
(each call when it is made, its result later, found again by the call's id), the stream's
first and last events, and the trace file read line by line."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from pytest_plugin_evals.model import InfraKind, ToolCall, Transcript

_Summary = TypeVar("_Summary")


@dataclass
class StreamEnds:
    """A stream's first and last events: its ``init`` (the run under way) and its ``result``
    (the run over); None where the stream has none (the CLI ended before). A reader whose
    result event tells errors says so in :attr:`error_message` and :meth:`outside`."""

    init: dict[str, Any] | None = None
    result: dict[str, Any] | None = None

    @property
    def error_message(self) -> str | None:
        """The run's error, when its result says it failed."""
        return None

    def outside(self, stderr: str) -> InfraKind | None:
        """The kind of the run's error when it lies outside the model (an API error's), else
        None; ``stderr``: the tail of the run's stderr."""
        return None


def read_trace(
    path: Path, parse: Callable[[Iterable[str]], tuple[Transcript, _Summary]]
) -> tuple[Transcript, _Summary]:
    """The trace file at ``path`` read line by line through ``parse`` (a stream's
    ``parse_events``), its transcript knowing its file."""
    with path.open(encoding="utf-8", errors="replace") as fh:
        transcript, summary = parse(fh)
    transcript.trace_path = path
    return transcript, summary


class CallLog:
    """The tool calls of one run, in the order they were made."""

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []
        self._by_id: dict[str, int] = {}

    def made(self, original: str, name: str, given: Any, call_id: Any) -> None:
        """A call of the tool the agent names ``original`` (canonically ``name``) with input
        ``given`` (kept only when it is an object) under ``call_id`` (None: no id)."""
        key = None if call_id is None else str(call_id)
        if key is not None:
            self._by_id[key] = len(self.calls)
        self.calls.append(
            ToolCall(
                name=name,
                input=given if isinstance(given, dict) else {},
                id=key,
                original_name=original if original != name else None,
            )
        )

    def answered(self, call_id: Any, output: str | None, is_error: bool) -> bool:
        """The result of the call made under ``call_id``; False when no such call was made."""
        index = self._by_id.get(str(call_id))
        if index is None:
            return False
        self.calls[index] = replace(self.calls[index], output=output, is_error=is_error)
        return True
