"""The argument matcher language of package.json ``callsTool`` expectations.

A matcher is one of:

- a value that is neither an object nor an array: ``eq`` (equal; ``1`` equals ``1.0``, but
  ``true`` does not equal ``1`` and ``"1"`` does not equal ``1``);
- an array: ``and`` of its items;
- an object with exactly one key among ``eq``, ``includes``, ``matches``, ``and``, ``or``,
  ``not``: that operator (``includes`` is a substring test on a string, membership on a list;
  ``matches`` tests a JavaScript pattern against ``String(value)``);
- any other object: a nested map, matched key by key against the argument's sub-object.

``mismatches(matcher, value)`` returns why the value does not match, one line per failed check
(empty when it matches), each prefixed with the argument's dotted path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_plugin_evals.model import MATCHER_OPERATORS
from pytest_plugin_evals.util.jsregex import Pattern
from pytest_plugin_evals.util.jsvalues import MISSING, js_string, show

Compile = Callable[[str], Pattern]


def _got(value: Any) -> str:
    return "nothing (the argument is missing)" if value is MISSING else show(value)


def equal(a: Any, b: Any) -> bool:
    """Strict equality, numbers compared by value, containers compared deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def is_operator(matcher: Any) -> bool:
    return (
        isinstance(matcher, dict) and len(matcher) == 1 and next(iter(matcher)) in MATCHER_OPERATORS
    )


def describe(matcher: Any) -> str:
    """A matcher in a few words, for explanations."""
    if is_operator(matcher):
        ((op, arg),) = matcher.items()
        if op == "eq":
            return show(arg)
        if op == "includes":
            return f"to include {show(arg)}"
        if op == "matches":
            return f"to match /{arg}/"
        if op == "not":
            return f"not {describe(arg)}"
        items = arg if isinstance(arg, list) else [arg]
        return f" {op} ".join(describe(m) for m in items)
    if isinstance(matcher, list):
        return " and ".join(describe(m) for m in matcher)
    return show(matcher)


def mismatches(matcher: Any, value: Any, compile_js: Compile, path: str = "") -> list[str]:
    """Why ``value`` fails ``matcher``: one line per failed check, empty when it matches."""
    where = path or "arguments"
    if isinstance(matcher, list):
        return [line for m in matcher for line in mismatches(m, value, compile_js, path)]
    if not isinstance(matcher, dict):
        return _unless(
            equal(value, matcher), f"{where}: expected {show(matcher)} got {_got(value)}"
        )
    if not is_operator(matcher):
        if not isinstance(value, dict):
            return [f"{where}: expected an object got {_got(value)}"]
        found: list[str] = []
        for key, sub in matcher.items():
            key_path = f"{path}.{key}" if path else str(key)
            found += mismatches(sub, value.get(key, MISSING), compile_js, key_path)
        return found
    ((op, arg),) = matcher.items()
    if op == "eq":
        return _unless(equal(value, arg), f"{where}: expected {show(arg)} got {_got(value)}")
    if op == "includes":
        wanted = f"{where}: expected to include {show(arg)} got {_got(value)}"
        return _unless(_includes(value, arg), wanted)
    if op == "matches":
        if not isinstance(arg, str):
            raise ValueError(f"{where}: a matches matcher needs a pattern string (got {show(arg)})")
        ok = value is not MISSING and compile_js(arg).search(js_string(value))
        return _unless(ok, f"{where}: expected to match /{arg}/ got {_got(value)}")
    if op == "not":
        if mismatches(arg, value, compile_js, path):
            return []
        return [f"{where}: expected not {describe(arg)} got {_got(value)}"]
    items = arg if isinstance(arg, list) else [arg]
    if op == "and":
        return [line for m in items for line in mismatches(m, value, compile_js, path)]
    # or
    failures = [mismatches(m, value, compile_js, path) for m in items]
    if any(not f for f in failures):
        return []
    return [f"{where}: expected {describe(matcher)} got {_got(value)}"]


def _unless(ok: bool, line: str) -> list[str]:
    return [] if ok else [line]


def _includes(value: Any, needle: Any) -> bool:
    if isinstance(value, str):
        return js_string(needle) in value
    if isinstance(value, (list, tuple)):
        return any(equal(item, needle) for item in value)
    return False
