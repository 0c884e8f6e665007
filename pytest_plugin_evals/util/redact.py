"""Keeping credentials out of everything a session writes.

The credential variables an agent is given (``ANTHROPIC_API_KEY``, ``CLAUDE_CODE_OAUTH_TOKEN``,
a cloud provider's keys, any passed variable named like a secret) are known to the session; a
model can print them. :class:`Redactor` replaces each value, wherever it appears verbatim, with
``[redacted NAME]``; on the way, every string it scrubs loses its lone surrogates (U+FFFD), so
whatever an agent produced can be written as UTF-8 and sent between processes.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import Any, TypeVar, cast

from pytest_plugin_evals.util.jsonlines import fix_text

#: Variable names whose values are credentials.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE", re.IGNORECASE)
#: Shorter values are not redacted: they would match ordinary text.
MIN_LENGTH = 8

T = TypeVar("T")


def secrets_in(env: Mapping[str, str], also: Iterable[str] = ()) -> dict[str, str]:
    """The credential values in ``env``, by name: those named like a secret, and those ``also``
    names (an agent's declared credentials, whatever their names say)."""
    named = frozenset(also)
    return {
        name: value
        for name, value in env.items()
        if (name in named or SECRET_NAME.search(name)) and len(value.strip()) >= MIN_LENGTH
    }


class Redactor:
    """Replaces the given secret values with ``[redacted NAME]``."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        # Longest first, so a value that contains another is replaced whole.
        ordered = sorted(secrets.items(), key=lambda item: -len(item[1]))
        self.replacement = {value: f"[redacted {name}]" for name, value in ordered}
        self._text = (
            re.compile("|".join(re.escape(value) for _, value in ordered)) if ordered else None
        )
        self._bytes = (
            re.compile(b"|".join(re.escape(value.encode("utf-8")) for _, value in ordered))
            if ordered
            else None
        )

    def __bool__(self) -> bool:
        return self._text is not None

    def text(self, text: str) -> str:
        text = fix_text(text)
        if self._text is None:
            return text
        return self._text.sub(lambda m: self.replacement[m.group(0)], text)

    def data(self, data: bytes) -> bytes:
        if self._bytes is None:
            return data
        return self._bytes.sub(
            lambda m: self.replacement[m.group(0).decode("utf-8")].encode(), data
        )

    def scrub(self, value: T) -> T:
        """``value`` with every string in it redacted: strings, lists, tuples, dicts and
        dataclasses (a new instance when something changed); anything else as it is."""
        return cast(T, self._scrub(value))

    def _scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes):
            return self.data(value)
        if isinstance(value, (PurePath, int, float, bool)) or value is None:
            return value
        if isinstance(value, list):
            return [self._scrub(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._scrub(v) for v in value)
        if isinstance(value, dict):
            return {self._scrub(k): self._scrub(v) for k, v in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {}
            for spec in dataclasses.fields(value):
                if not spec.init:
                    continue
                old = getattr(value, spec.name)
                new = self._scrub(old)
                if new != old:
                    changes[spec.name] = new
            return dataclasses.replace(value, **changes) if changes else value
        return value
