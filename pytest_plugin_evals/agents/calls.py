"""A run's tool calls as an agent's stream tells them: each call when it is made, its result
later, found again by the call's id (the bookkeeping every stream reader shares)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pytest_plugin_evals.model import ToolCall


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
