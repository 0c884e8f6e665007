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
from collections.abc import Iterable, Iterator, Mapping
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


def load_events(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects of ``lines``, tamed (:func:`load_event`); lines holding none skipped."""
    for line in lines:
        event = load_event(line)
        if event is not None:
            yield event


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


# -- reading a JSON file that must hold only what JSON can ------------------------------------


class JSONFileError(ValueError):
    """A JSON text that cannot be read as written: what is wrong (``problem``) and where
    (``at``: a JSON path such as ``$.cases[0].costUsd``, or a line and column)."""

    def __init__(self, problem: str, at: str) -> None:
        super().__init__(f"{problem} (at {at})")
        self.problem = problem
        self.at = at


class _Unheld:
    """A number JSON cannot hold, as the strict reader found it (replaced by an error)."""

    __slots__ = ("shown",)

    def __init__(self, shown: str) -> None:
        self.shown = shown


#: A float holds integers of up to 309 digits (1.8e308); JSON writes no leading zeros.
_FLOAT_DIGITS = 309

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def kind(value: Any, *, mapping: str = "an object") -> str:
    """What a value of a JSON or YAML document is, in words: ``null``, ``a boolean``, ``a
    number``, ``a string``, ``a list``, or ``mapping`` (the word for a mapping: ``an object``
    in JSON's, ``a mapping`` in YAML's)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return mapping
    return f"a {type(value).__name__}"


def found(value: Any) -> str:
    """A value as a message says it found it: ``true``, ``false``, a number (at most 30
    characters), else its :func:`kind`: never text of the document, which may be anyone's."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)[:30]
    return kind(value)


def camel(name: str) -> str:
    """A field's name as our documents spell their keys: ``started_at`` → ``startedAt``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def camel_fields(obj: object, *names: str) -> dict[str, Any]:
    """The attributes ``names`` of ``obj`` as fields of a document, keyed by :func:`camel`."""
    return {camel(name): getattr(obj, name) for name in names}


def json_path(parts: list[str | int]) -> str:
    """``["cases", 0, "costUsd"]`` as ``$.cases[0].costUsd`` (odd keys quoted, escaped)."""
    text = "$"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _NAME.fullmatch(part):
            text += f".{part}"
        else:
            text += f"[{json.dumps(part)}]"
    return text


def _integer(text: str) -> int | _Unheld:
    digits = len(text.lstrip("-"))
    if digits <= _FLOAT_DIGITS:
        value = int(text)
        try:
            float(value)
        except OverflowError:
            pass
        else:
            return value
    return _Unheld(f"an integer of {digits} digits")


def _float(text: str) -> float | _Unheld:
    value = float(text)
    return value if math.isfinite(value) else _Unheld(text[:40])


def _find_unheld(doc: Any) -> tuple[str, str]:
    """The first number JSON cannot hold in ``doc``: what it is and its JSON path (iterative,
    so a deeply nested document does not exhaust the stack)."""
    stack: list[tuple[Any, list[str | int]]] = [(doc, [])]
    while stack:
        value, parts = stack.pop()
        if isinstance(value, _Unheld):
            return value.shown, json_path(parts)
        if isinstance(value, dict):
            items = list(value.items())
            stack.extend((v, [*parts, k]) for k, v in reversed(items))
        elif isinstance(value, list):
            stack.extend((v, [*parts, i]) for i, v in reversed(list(enumerate(value))))
    return "?", "$"  # pragma: no cover - only called when one was found


def load_strict(text: str) -> Any:
    """The JSON value ``text`` holds, when every reader would read it so: NaN, Infinity and
    numbers beyond a float's range (``1e400``, an integer of 400 digits) are refused, like
    text that is not JSON, with a :class:`JSONFileError` saying what and where."""
    unheld: list[str] = []

    def constant(name: str) -> _Unheld:
        unheld.append(name)
        return _Unheld(name)

    def integer(found: str) -> int | _Unheld:
        value = _integer(found)
        if isinstance(value, _Unheld):
            unheld.append(found)
        return value

    def floating(found: str) -> float | _Unheld:
        value = _float(found)
        if isinstance(value, _Unheld):
            unheld.append(found)
        return value

    try:
        doc = json.loads(text, parse_constant=constant, parse_int=integer, parse_float=floating)
    except json.JSONDecodeError as exc:
        raise JSONFileError(
            f"not JSON: {exc.msg}", f"line {exc.lineno}, column {exc.colno}"
        ) from None
    except RecursionError:
        raise JSONFileError("not JSON a reader can follow: nested too deep", "$") from None
    if unheld:
        shown, at = _find_unheld(doc)
        raise JSONFileError(f"a number JSON cannot hold: {shown}", at)
    return doc
