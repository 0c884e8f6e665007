"""The six grader types of the directory format: strict keys, defaults, and patterns compiled now.

A grader comes from a ``graders/*.md`` file (frontmatter = options, body = pattern or criteria)
or from a ``graders:`` item of case.yaml. Either way it becomes a :class:`GraderSpec` whose
``config`` holds the type's options with the defaults filled in.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import GraderSpec, LoadError
from pytest_plugin_evals.suites import validate as v
from pytest_plugin_evals.suites.validate import Spot, Value
from pytest_plugin_evals.util import jsregex as patterns

TYPES = ("regex", "tool_order", "tool_used", "file_exists", "llm", "baseline")
COMMON_KEYS = ("name", "type", "weight", "arm")
TYPE_KEYS: dict[str, tuple[str, ...]] = {
    "regex": ("pattern", "flags", "match", "target"),
    "tool_used": ("tool", "input_match", "min", "max"),
    "tool_order": ("before", "after"),
    "file_exists": ("path", "exists"),
    "llm": ("criteria", "focus"),
    "baseline": ("baseline_file", "criteria"),
}
ARMS = ("with-only", "both")
TARGETS = ("last_message", "trace", "files", "mock_calls")
MATCH = re.compile(r"^(?:contains|not_contains|count:\d+)$")
TYPE_HINT = " | ".join(TYPES)


def build(
    raw: dict[str, Any],
    spot: Spot,
    *,
    default_name: str | None = None,
    body: str | None = None,
    body_line: int | None = None,
    line: int | None = None,
    folder: Path | None = None,
) -> GraderSpec:
    """One grader from its options; ``body`` is a grader file's Markdown body (trimmed).

    ``folder`` is the case folder: a ``baseline_file`` must not leave it through a link.
    """
    type_value = spot.value(raw, "type")
    if type_value is None or type_value.raw is None:
        if default_name is not None:  # a grader file
            spot.fail(f'frontmatter must include "type:" ({TYPE_HINT})')
        spot.fail(f"{spot.label('type')} is required ({TYPE_HINT})")
    kind = type_value.raw
    if kind not in TYPES:
        type_value.fail(f"must be one of {', '.join(TYPES)} (got {v.show(kind)})")
    allowed = COMMON_KEYS + TYPE_KEYS[kind]
    for key in raw:
        if key not in allowed:
            spot.fail(
                f'unknown key "{spot.label(key)}" for a {kind} grader '
                f"(expected one of: {', '.join(allowed)})",
                key,
            )
    name_value = spot.value(raw, "name")
    if name_value is not None:
        name = v.string(name_value).strip()
    elif default_name is not None:
        name = default_name
    else:
        spot.fail(f"{spot.label('name')} is required")
    weight_value = spot.value(raw, "weight")
    weight = 1.0 if weight_value is None else v.positive_number(weight_value)
    arm_value = spot.value(raw, "arm")
    arm = None if arm_value is None else v.one_of(arm_value, ARMS)
    text = body.strip() if body is not None else ""
    config, criteria = _CONFIG[kind](raw, spot, text, body_line)
    file_value = spot.value(raw, "baseline_file")
    if folder is not None and file_value is not None:
        v.inside_folder(file_value, folder)
    return GraderSpec(
        name=name,
        type=kind,
        config=config,
        weight=weight,
        arm=arm,
        criteria=criteria,
        path=str(spot.path),
        line=line if line is not None else spot.line(),
    )


def _compile(value: Value, flags: str = "") -> str:
    source = v.string(value, empty=True)
    try:
        patterns.compile_js(source, flags)
    except patterns.RegexSyntaxError as exc:
        raise _pattern_error(value, source, str(exc)) from None
    return source


def _pattern_error(value: Value, source: str, reason: str) -> LoadError:
    return LoadError(value.spot.path, f'invalid {value.label} "{source}": {reason}', value.line)


def _target(value: Value | None, default: str = "last_message") -> str | dict[str, str]:
    if value is None:
        return default
    raw = value.raw
    if isinstance(raw, str) and raw in TARGETS:
        return raw
    if isinstance(raw, dict) and raw.get("source") == "file" and set(raw) <= {"source", "path"}:
        inner = value.spot.child(value.key, f"{value.label}.")
        path_value = inner.value(raw, "path")
        if path_value is None:
            value.fail("needs a path: {source: file, path: <path>}")
        path = v.string(path_value)
        if v.escapes(path):
            path_value.fail(
                f'path "{path}" escapes the run\'s working directory (`..` or an absolute path)'
            )
        return {"source": "file", "path": path}
    value.fail(
        "must be last_message, trace, files, mock_calls or {source: file, path: <path>} "
        f"(got {v.show(raw)})"
    )


def _regex(raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    flags_value = spot.value(raw, "flags")
    flags = "" if flags_value is None else v.string(flags_value, empty=True)
    if flags_value is not None and (
        set(flags) - patterns.JS_FLAGS or len(set(flags)) != len(flags)
    ):
        flags_value.fail(
            f"must be JS RegExp flags, each at most once (d g i m s u v y), got {flags!r}"
        )
    match_value = spot.value(raw, "match")
    match = "contains"
    if match_value is not None:
        if not isinstance(match_value.raw, str) or not MATCH.match(match_value.raw):
            match_value.fail(
                f"must be contains, not_contains or count:N (got {v.show(match_value.raw)})"
            )
        match = match_value.raw
    target = _target(spot.value(raw, "target"))
    pattern_value = spot.value(raw, "pattern")
    if pattern_value is None:
        if not body:
            spot.fail(f"{spot.label('pattern')} is required (pattern:, or the grader file's body)")
        line_spot = Spot(spot.path, None, (), spot.prefix, body_line)
        pattern_value = Value(body, line_spot, "pattern")
    elif not v.string(pattern_value, empty=True):
        pattern_value.fail("must not be empty")
    pattern = _compile(pattern_value, flags)
    return {"target": target, "pattern": pattern, "flags": flags, "match": match}, None


def _tool_used(raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    tool_value = spot.value(raw, "tool")
    if tool_value is None:
        spot.fail(f"{spot.label('tool')} is required")
    tool = v.string(tool_value)
    match_value = spot.value(raw, "input_match")
    input_match = None if match_value is None or match_value.raw is None else _compile(match_value)
    min_value = spot.value(raw, "min")
    least = 1 if min_value is None else v.whole_number(min_value, 0, None)
    max_value = spot.value(raw, "max")
    most = None
    if max_value is not None and max_value.raw is not None:
        most = v.whole_number(max_value, 0, None)
        if least > most:
            max_value.fail(f"({most}) is below min ({least}), so the grader can never pass")
    return {"tool": tool, "input_match": input_match, "min": least, "max": most}, None


def _order_side(value: Value | None, spot: Spot, side: str) -> str | dict[str, Any]:
    if value is None:
        spot.fail(f"{spot.label(side)} is required (a tool name, or {{tool, input_match}})")
    if isinstance(value.raw, str):
        return v.string(value)
    if not isinstance(value.raw, dict):
        value.fail(f"must be a tool name or {{tool, input_match}} (got {v.kind(value.raw)})")
    inner = value.spot.child(value.key, f"{value.label}.")
    v.check_keys(value.raw, inner, ("tool", "input_match"), "key")
    tool_value = inner.value(value.raw, "tool")
    if tool_value is None:
        value.fail("needs a tool: {tool, input_match}")
    found: dict[str, Any] = {"tool": v.string(tool_value)}
    match_value = inner.value(value.raw, "input_match")
    if match_value is not None and match_value.raw is not None:
        found["input_match"] = _compile(match_value)
    return found


def _tool_order(raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    before = _order_side(spot.value(raw, "before"), spot, "before")
    after = _order_side(spot.value(raw, "after"), spot, "after")
    return {"before": before, "after": after}, None


def _file_exists(raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    path_value = spot.value(raw, "path")
    if path_value is None:
        spot.fail(f"{spot.label('path')} is required (a glob of files the run creates)")
    exists_value = spot.value(raw, "exists")
    exists = True if exists_value is None else v.boolean(exists_value)
    return {"path": v.string(path_value), "exists": exists}, None


def _criteria(raw: dict[str, Any], spot: Spot, body: str) -> str:
    criteria_value = spot.value(raw, "criteria")
    if criteria_value is not None:
        return v.string(criteria_value).strip()
    if not body:
        spot.fail(f"{spot.label('criteria')} is required (criteria:, or the grader file's body)")
    return body


def _llm(raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    criteria = _criteria(raw, spot, body)
    focus = _target(spot.value(raw, "focus"))
    return {"criteria": criteria, "focus": focus}, criteria


def _baseline(raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    file_value = spot.value(raw, "baseline_file")
    if file_value is None:
        spot.fail(f"{spot.label('baseline_file')} is required (a saved .jsonl transcript)")
    baseline_file = v.inside(file_value)
    criteria = _criteria(raw, spot, body)
    return {"baseline_file": baseline_file, "criteria": criteria}, criteria


_CONFIG = {
    "regex": _regex,
    "tool_used": _tool_used,
    "tool_order": _tool_order,
    "file_exists": _file_exists,
    "llm": _llm,
    "baseline": _baseline,
}
