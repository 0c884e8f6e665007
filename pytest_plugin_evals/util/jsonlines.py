"""Reading one JSON line an agent wrote, whatever it wrote, and writing JSON any reader takes.

A trace is hostile input. :func:`load_event` never raises: a line that is not a JSON object
(invalid, nested past the parser's reach, an integer too long to read) is None, and the object
it returns is safe to keep and write again: lone surrogates become U+FFFD and containers
nested deeper than :data:`MAX_DEPTH` are replaced by a short note.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

#: How deep a kept value may nest; deeper parts are replaced by :data:`TOO_DEEP`.
MAX_DEPTH = 64
TOO_DEEP = "[nested too deep]"

#: A \\uD800-\\uDFFF escape: the only way a JSON text yields a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")

#: Counts larger than this are not believed (tokens, turns).
MAX_COUNT = 10**15


def load_event(line: str) -> dict[str, Any] | None:
    """The JSON object on ``line``, tamed (see the module doc); None if it holds none."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(event, dict):
        return None
    deep = line.count("{") + line.count("[") > MAX_DEPTH
    if deep or _SURROGATE_ESCAPE.search(line):
        tamed: dict[str, Any] = _tame(event, 0)
        return tamed
    return event


def _tame(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return fix_text(value)
    if isinstance(value, (dict, list)) and depth >= MAX_DEPTH:
        return TOO_DEEP
    if isinstance(value, dict):
        return {fix_text(k): _tame(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_tame(v, depth + 1) for v in value]
    return value


def fix_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (pairs join into their character)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def dumps(doc: Any, *, indent: int | None = None) -> str:
    """JSON text that any JSON reader accepts: no NaN or infinities (written as null), and no
    lone surrogates (each becomes U+FFFD), so it encodes to UTF-8 whatever an agent produced."""
    separators = (",", ":") if indent is None else (",", ": ")
    try:
        text = json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=indent,
                          separators=separators)  # fmt: skip
    except ValueError:
        text = json.dumps(_finite(doc), ensure_ascii=False, indent=indent, separators=separators)
    return fix_text(text)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def count(value: Any) -> int | None:
    """A count an agent reported (tokens, turns), when it is believable: a non-negative int."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    return None


def number(value: Any) -> float | None:
    """A JSON number as a float (an integer too large for one is infinite); None for anything
    else. NaN, infinities and negative numbers come back as they are: see :func:`amount`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def amount(value: Any) -> float | None:
    """A duration or size an agent reported, when it is believable: finite, not negative."""
    found = number(value)
    return found if found is not None and math.isfinite(found) and found >= 0 else None
