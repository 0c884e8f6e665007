"""JSON values as JavaScript writes them: ``String(value)``, ``JSON.stringify(value)``, dot paths.

The reference evaluates grader inputs, templates and ``expect:`` guards in JavaScript, so the
same JSON value must give the same text here: ``1.0`` is ``1``, ``1e-7`` is ``1e-7`` (not
Python's ``1e-07``), ``NaN`` stringifies as ``null``. Every room that turns a value into text the
way JavaScript would calls these functions; nothing else does it.
"""

from __future__ import annotations

import json
import math
from typing import Any

#: Returned by :func:`lookup` when the path does not exist in the value.
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


def lookup(value: Any, path: str) -> Any:
    """The value at dot path ``path`` (``a.b.0.c``) in ``value``, or :data:`MISSING`.

    An empty path is the whole value. A numeric segment indexes a list.
    """
    if not path:
        return value
    current = value
    for segment in path.split("."):
        if isinstance(current, dict):
            if segment not in current:
                return MISSING
            current = current[segment]
        elif isinstance(current, list) and segment.isdigit():
            index = int(segment)
            if index >= len(current):
                return MISSING
            current = current[index]
        else:
            return MISSING
    return current


def js_number(number: float | int) -> str:
    """``String(number)`` as JavaScript writes it (``1.0`` → ``1``, ``1e-7``, ``1e+21``)."""
    if isinstance(number, bool):
        return "true" if number else "false"
    if isinstance(number, int):
        return str(number)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    text = repr(number)  # the shortest round-trip digits, as JavaScript picks them too
    sign = "-" if text.startswith("-") else ""
    mantissa, _, exp_text = text.lstrip("-").partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    # n = the position of the decimal point relative to the digit string (JS spec terms).
    point = len(whole.lstrip("0")) if whole.strip("0") else -(len(frac) - len(frac.lstrip("0")))
    point += int(exp_text or 0)
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exponent = point - 1
    shown = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{shown}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


def js_json(value: Any) -> str:
    """``JSON.stringify(value)``: no spaces, non-ASCII kept, numbers as JavaScript writes them,
    non-finite numbers as ``null``; anything that is not JSON is written as its text."""
    if value is None or isinstance(value, (bool, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return "null"
        return js_number(value)
    if isinstance(value, dict):
        items = (f"{json.dumps(str(k), ensure_ascii=False)}:{js_json(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(js_json(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def js_string(value: Any) -> str:
    """``String(value)``: strings raw, numbers and booleans as JavaScript writes them."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, (bool, int, float)):
        return js_number(value)
    if isinstance(value, (list, tuple)):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def inserted(value: Any) -> str:
    """How a template inserts a value: strings raw, anything else as compact JSON."""
    if value is MISSING:
        return ""
    if isinstance(value, str):
        return value
    return js_json(value)


def show(value: Any, limit: int = 60) -> str:
    """A value as JSON for an explanation, long strings cut with an ellipsis."""
    if isinstance(value, str) and len(value) > limit:
        value = value[: limit - 1] + "…"
    text = js_json(value)
    return text if len(text) <= limit + 2 else text[: limit + 1] + "…"
