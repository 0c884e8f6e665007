"""The six grader types of the directory format: strict keys, defaults, and patterns compiled now.

A grader comes from a ``graders/*.md`` file (frontmatter = options, body = pattern or criteria)
or from a ``graders:`` item of case.yaml. Either way it becomes a :class:`GraderSpec` whose
``config`` holds the type's options with the defaults filled in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, field_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from pytest_plugin_evals.model import GraderSpec, LoadError
from pytest_plugin_evals.suites import validate as v
from pytest_plugin_evals.suites.validate import Spot, Value
from pytest_plugin_evals.util import jsregex as patterns
from pytest_plugin_evals.util.suggest import did_you_mean

TYPES = ("regex", "tool_order", "tool_used", "file_exists", "llm", "baseline")
ARMS = ("with-only", "both")
TARGETS = ("last_message", "trace", "files", "mock_calls")
MATCH = re.compile(r"^(?:contains|not_contains|count:\d+)$")
TYPE_HINT = " | ".join(TYPES)
Count = Annotated[int, Field(strict=True, ge=0)]


def _not_null(value: Any) -> Any:
    """An optional key written as ``null`` is wrong, not absent."""
    if value is None:
        raise PydanticCustomError("null", "must not be null")
    return value


class _Grader(BaseModel):
    """The options every grader has; a subclass per type adds its own. Strict: no coercion,
    no unknown key; cross-field checks (min <= max, a pattern compiled with its flags, a
    pattern or criteria from the body) are :func:`build`'s."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    #: How a wrong value of each key reads (after its label); a key not here is a string.
    WRONG: ClassVar[dict[str, Callable[[Any], str]]] = {
        "weight": lambda raw: f"{v.above_zero(raw)} (got {v.show(raw)})",
        "arm": lambda raw: f'must be "with-only" or "both" (got {v.show(raw)})',
    }
    #: What a missing required key's message adds after ``<label> is required``.
    NEEDS: ClassVar[dict[str, str]] = {}

    name: v.Text | None = None
    type: str
    weight: Annotated[v.Number, Field(gt=0)] = 1.0
    arm: Literal["with-only", "both"] | None = None

    _present = field_validator("name", "arm", mode="before")(_not_null)


class _Regex(_Grader):
    WRONG: ClassVar[dict[str, Callable[[Any], str]]] = {
        **_Grader.WRONG,
        "match": lambda raw: f"must be contains, not_contains or count:N (got {v.show(raw)})",
    }
    pattern: StrictStr | None = None
    flags: StrictStr = ""
    match: Annotated[StrictStr, Field(pattern=MATCH.pattern)] = "contains"
    target: Any = None

    _pattern = field_validator("pattern", mode="before")(_not_null)


class _ToolUsed(_Grader):
    WRONG: ClassVar[dict[str, Callable[[Any], str]]] = {
        **_Grader.WRONG,
        "min": lambda raw: f"must be a whole number of at least 0 (got {v.show(raw)})",
        "max": lambda raw: f"must be a whole number of at least 0 (got {v.show(raw)})",
    }
    tool: v.Text
    input_match: StrictStr | None = None
    min: Count = 1
    max: Count | None = None


class _ToolOrder(_Grader):
    NEEDS: ClassVar[dict[str, str]] = {
        "before": " (a tool name, or {tool, input_match})",
        "after": " (a tool name, or {tool, input_match})",
    }
    before: Any
    after: Any


class _FileExists(_Grader):
    WRONG: ClassVar[dict[str, Callable[[Any], str]]] = {
        **_Grader.WRONG,
        "exists": lambda raw: f"must be true or false (got {v.show(raw)})",
    }
    NEEDS: ClassVar[dict[str, str]] = {"path": " (a glob of files the run creates)"}
    path: v.Text
    exists: StrictBool = True


class _Llm(_Grader):
    criteria: v.Text | None = None
    focus: Any = None

    _criteria = field_validator("criteria", mode="before")(_not_null)


class _Baseline(_Grader):
    NEEDS: ClassVar[dict[str, str]] = {"baseline_file": " (a saved .jsonl transcript)"}
    baseline_file: v.Text
    criteria: v.Text | None = None

    _criteria = field_validator("criteria", mode="before")(_not_null)


MODELS: dict[str, type[_Grader]] = {
    "regex": _Regex,
    "tool_used": _ToolUsed,
    "tool_order": _ToolOrder,
    "file_exists": _FileExists,
    "llm": _Llm,
    "baseline": _Baseline,
}
COMMON_KEYS = tuple(_Grader.model_fields)
TYPE_KEYS: dict[str, tuple[str, ...]] = {
    kind: tuple(key for key in model.model_fields if key not in COMMON_KEYS)
    for kind, model in MODELS.items()
}


def _describer(model: type[_Grader], kind: str, raw: dict[str, Any]) -> v.Describe:
    allowed = ", ".join(model.model_fields)

    def describe(label: str, error: ErrorDetails) -> str:
        key = error["loc"][0] if error["loc"] else ""
        if error["type"] == "extra_forbidden":
            near = did_you_mean(key, model.model_fields)
            return f'unknown key "{label}" for a {kind} grader{near} (expected one of: {allowed})'
        if error["type"] == "missing":
            return f"{label} is required{model.NEEDS.get(str(key), '')}"
        value = raw.get(str(key))
        wrong = model.WRONG.get(str(key))
        if wrong is not None:
            return f"{label} {wrong(value)}"
        if not isinstance(value, str):
            return f"{label} must be a string (got {v.kind(value)})"
        return f"{label} must not be empty"

    return describe


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
    Every problem of the grader is found before it raises (several are one
    :class:`~pytest_plugin_evals.suites.validate.LoadErrors`).
    """
    type_value = spot.value(raw, "type")
    if type_value is None or type_value.raw is None:
        if default_name is not None:  # a grader file
            spot.fail(f'frontmatter must include "type:" ({TYPE_HINT})')
        spot.fail(f"{spot.label('type')} is required ({TYPE_HINT})")
    kind = type_value.raw
    if kind not in TYPES:
        type_value.fail(f"must be one of {', '.join(TYPES)} (got {v.show(kind)})")
    model = MODELS[kind]
    found, errors = v.model_problems(model, raw, spot, _describer(model, kind, raw))
    problems = v.Problems()
    for error in errors:
        problems.add(error)
    if "name" not in raw and default_name is None:
        problems.add(LoadError(spot.path, f"{spot.label('name')} is required", spot.line()))
    config: Any = None
    criteria: str | None = None
    if found is not None:  # the checks across keys, on keys of the right types
        text = body.strip() if body is not None else ""
        config, criteria = problems.check(
            (None, None), _CONFIG[kind], found, raw, spot, text, body_line
        )
        file_value = spot.value(raw, "baseline_file")
        if folder is not None and file_value is not None:
            problems.check(None, v.inside_folder, file_value, folder)
    name_value = spot.value(raw, "name")
    if found is not None and name_value is not None:
        problems.check(None, v.name, name_value)
    elif found is not None and default_name is not None:  # the file's name is the grader's
        problems.check(None, v.name, Value(default_name, Spot(spot.path, fallback_line=1), "name"))
    problems.raise_any(folder or spot.path.parent)
    assert found is not None
    return GraderSpec(
        name=found.name.strip() if found.name is not None else str(default_name),
        type=kind,
        config=config,
        weight=float(found.weight),
        arm=found.arm,
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


#: An inline flag group, as Python and PCRE write them: ``(?i)``, ``(?im)``, ``(?i:…)``.
INLINE_FLAGS = re.compile(r"\(\?([a-zA-Z]+)[:)]")


def _pattern_error(value: Value, source: str, reason: str) -> LoadError:
    message = f'invalid {value.label} "{source}": {reason}'
    inline = INLINE_FLAGS.search(source)
    if inline is not None:
        flags = "".join(dict.fromkeys(f for f in inline.group(1) if f in patterns.JS_FLAGS))
        message += f" — JavaScript patterns have no inline flags: remove `{inline.group(0)}`"
        if value.key == "pattern":
            message += f" and set `flags: {flags}`" if flags else " and use `flags:`"
        else:
            message += f" ({value.label} takes no flags)"
    return LoadError(value.spot.path, message, value.line)


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


def _regex(m: Any, raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    flags = m.flags
    if set(flags) - patterns.JS_FLAGS or len(set(flags)) != len(flags):
        Value(flags, spot, "flags").fail(
            f"must be JS RegExp flags, each at most once (d g i m s u v y), got {flags!r}"
        )
    target = _target(spot.value(raw, "target"))
    pattern_value = spot.value(raw, "pattern")
    if pattern_value is None or m.pattern is None:
        if not body:
            spot.fail(f"{spot.label('pattern')} is required (pattern:, or the grader file's body)")
        line_spot = Spot(spot.path, None, (), spot.prefix, body_line)
        pattern_value = Value(body, line_spot, "pattern")
    elif not m.pattern:
        pattern_value.fail("must not be empty")
    pattern = _compile(pattern_value, flags)
    return {"target": target, "pattern": pattern, "flags": flags, "match": m.match}, None


def _tool_used(m: Any, raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    match_value = spot.value(raw, "input_match")
    input_match = None if match_value is None or m.input_match is None else _compile(match_value)
    if m.max is not None and m.min > m.max:
        Value(m.max, spot, "max").fail(
            f"({m.max}) is below min ({m.min}), so the grader can never pass"
        )
    return {"tool": m.tool, "input_match": input_match, "min": m.min, "max": m.max}, None


def tool_entry(value: Value, keys: tuple[str, str]) -> tuple[str, Value | None]:
    """A tool named alone or as ``{<name>, <detail>}`` (the two ``keys``): its name, and the
    detail's value (None when it is absent or null); one clear line for anything else."""
    name_key, detail_key = keys
    shape = f"{{{name_key}, {detail_key}}}"
    if isinstance(value.raw, str):
        return v.string(value), None
    if not isinstance(value.raw, dict):
        value.fail(f"must be a tool name or {shape} (got {v.kind(value.raw)})")
    inner = value.spot.child(value.key, f"{value.label}.")
    v.check_keys(value.raw, inner, keys, "key")
    name_value = inner.value(value.raw, name_key)
    if name_value is None:
        value.fail(f"needs a {name_key}: {shape}")
    detail = inner.value(value.raw, detail_key)
    return v.string(name_value), None if detail is None or detail.raw is None else detail


def _order_side(value: Value | None, spot: Spot, side: str) -> str | dict[str, Any]:
    if value is None:
        spot.fail(f"{spot.label(side)} is required (a tool name, or {{tool, input_match}})")
    tool, match_value = tool_entry(value, ("tool", "input_match"))
    if isinstance(value.raw, str):
        return tool
    found: dict[str, Any] = {"tool": tool}
    if match_value is not None:
        found["input_match"] = _compile(match_value)
    return found


def _tool_order(m: Any, raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    before = _order_side(spot.value(raw, "before"), spot, "before")
    after = _order_side(spot.value(raw, "after"), spot, "after")
    return {"before": before, "after": after}, None


def _file_exists(m: Any, raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    return {"path": m.path, "exists": m.exists}, None


def _criteria(m: Any, spot: Spot, body: str) -> str:
    if m.criteria is not None:
        return str(m.criteria).strip()
    if not body:
        spot.fail(f"{spot.label('criteria')} is required (criteria:, or the grader file's body)")
    return body


def _llm(m: Any, raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    criteria = _criteria(m, spot, body)
    focus = _target(spot.value(raw, "focus"))
    return {"criteria": criteria, "focus": focus}, criteria


def _baseline(m: Any, raw: dict[str, Any], spot: Spot, body: str, body_line: int | None) -> Any:
    file_value = spot.value(raw, "baseline_file")
    assert file_value is not None
    baseline_file = v.inside(file_value)
    criteria = _criteria(m, spot, body)
    return {"baseline_file": baseline_file, "criteria": criteria}, criteria


_CONFIG = {
    "regex": _regex,
    "tool_used": _tool_used,
    "tool_order": _tool_order,
    "file_exists": _file_exists,
    "llm": _llm,
    "baseline": _baseline,
}
