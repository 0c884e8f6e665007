"""``expect:`` guards: what a mocked tool's input must look like, else the run is aborted.

A mock's ``expect:`` maps dot paths to guards::

    expect:
      title: string                   # a type: string | number | bool | boolean | object | array
      priority: [low, medium, high]   # one of these (compared as JavaScript's String() does)
      meta:                           # a nested map: meta.owner, meta.team ...
        owner: [alice, bob]
      kind: /^crash$/i                # a JavaScript regular expression with flags
      draft: false                    # any other scalar: this literal (compared as String())

A violation reads like the reference's: ``priority = "urgent" is not one of [low, medium, high]``
(the caller puts ``the model's call violates expect:`` in front). A missing value violates every
guard: ``title is missing (expected a string)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ..util.jsregex import RegexSyntaxError, compile_js
from ..util.jsvalues import MISSING, js_json, js_string, lookup

TYPE_NAMES: dict[str, str] = {
    "string": "a string",
    "number": "a number",
    "bool": "a bool",
    "boolean": "a bool",
    "object": "an object",
    "array": "an array",
}

#: ``/source/flags``: a slash-delimited JavaScript regular expression.
REGEX_LITERAL = re.compile(r"^/(?P<source>.*)/(?P<flags>[a-z]*)$", re.DOTALL)

VIOLATION_PREFIX = "the model's call violates expect: "


class GuardError(ValueError):
    """An ``expect:`` entry that is not a guard; ``path`` is its dot path."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"expect: {path}: {message}" if path else f"expect: {message}")
        self.path = path


@dataclass(frozen=True)
class Guard:
    """One check on the value at ``path``.

    ``kind`` is ``one_of`` (``value`` is the list of allowed strings), ``type`` (``value`` is a
    type name), ``regex`` (``value`` is ``[source, flags]``) or ``literal`` (``value`` is the
    literal as written).
    """

    path: str
    kind: str
    value: Any

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "value": self.value}

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Guard:
        return cls(str(doc["path"]), str(doc["kind"]), doc["value"])

    def expected(self) -> str:
        """What the guard wants, for messages about a missing value."""
        if self.kind == "one_of":
            return "one of " + _listing(self.value)
        if self.kind == "type":
            return TYPE_NAMES[self.value]
        if self.kind == "regex":
            return f"a match for /{self.value[0]}/{self.value[1]}"
        return js_json(self.value)

    def violation(self, arguments: Any) -> str | None:
        """None when the input passes, else the reason it does not."""
        found = lookup(arguments, self.path)
        if found is MISSING:
            return f"{self.path} is missing (expected {self.expected()})"
        shown = f"{self.path} = {js_json(found)}"
        if self.kind == "one_of":
            if _is_scalar(found) and js_string(found) in self.value:
                return None
            return f"{shown} is not one of {_listing(self.value)}"
        if self.kind == "type":
            if _has_type(found, self.value):
                return None
            return f"{shown} is not {TYPE_NAMES[self.value]}"
        if self.kind == "regex":
            source, flags = self.value
            if _is_scalar(found) and compile_js(source, flags).search(js_string(found)):
                return None
            return f"{shown} does not match /{source}/{flags}"
        if _is_scalar(found) and js_string(found) == js_string(self.value):
            return None
        return f"{shown} is not {js_json(self.value)}"


def _listing(values: list[str]) -> str:
    return "[" + ", ".join(values) + "]"


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _has_type(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name in ("bool", "boolean"):
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, dict)
    return isinstance(value, list)


def compile_expect(expect: Any) -> tuple[Guard, ...]:
    """The guards of an ``expect:`` block. Raises :class:`GuardError` for a bad entry."""
    if expect is None:
        return ()
    if not isinstance(expect, Mapping):
        raise GuardError("", f"must be a map of input paths to guards (got {_kind(expect)})")
    guards: list[Guard] = []
    _collect(expect, "", guards)
    return tuple(guards)


def _collect(mapping: Mapping[Any, Any], prefix: str, guards: list[Guard]) -> None:
    for key, spec in mapping.items():
        if not isinstance(key, str) or not key.strip():
            raise GuardError(prefix, f"the key {key!r} is not an input path")
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(spec, Mapping):
            if not spec:
                raise GuardError(path, "an empty map guards nothing (use object for any object)")
            _collect(spec, path, guards)
        else:
            guards.append(guard(path, spec))


def _plain(value: Any) -> Any:
    """YAML dates and times read as the text that was written."""
    return value.isoformat() if isinstance(value, (date, datetime)) else value


def guard(path: str, spec: Any) -> Guard:
    """One guard from its ``expect:`` value."""
    spec = [_plain(v) for v in spec] if isinstance(spec, list) else _plain(spec)
    if isinstance(spec, list):
        if not spec:
            raise GuardError(path, "an empty list allows no value")
        for item in spec:
            if not _is_scalar(item):
                raise GuardError(
                    path,
                    f"a list of allowed values holds strings, numbers or bools (got {_kind(item)})",
                )
        return Guard(path, "one_of", [js_string(item) for item in spec])
    if isinstance(spec, str):
        if spec in TYPE_NAMES:
            return Guard(path, "type", spec)
        match = REGEX_LITERAL.match(spec)
        if match and spec != "/":
            source, flags = match.group("source"), match.group("flags")
            try:
                compile_js(source, flags)
            except RegexSyntaxError as exc:
                raise GuardError(path, str(exc)) from None
            except ValueError as exc:
                raise GuardError(path, str(exc)) from None
            return Guard(path, "regex", [source, flags])
        return Guard(path, "literal", spec)
    if _is_scalar(spec):
        return Guard(path, "literal", spec)
    raise GuardError(path, f"is not a guard (got {_kind(spec)})")


def check(guards: tuple[Guard, ...] | list[Guard], arguments: Any) -> str | None:
    """The first violation among ``guards`` for this input (without the prefix), or None."""
    for item in guards:
        reason = item.violation(arguments)
        if reason is not None:
            return reason
    return None


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a map"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"
