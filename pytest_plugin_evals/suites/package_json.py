"""``ai.evals`` in a package.json: ``{input, mocks, expected: [...]}`` per eval.

Expectations become graders: ``includes`` ``{"value"}``, ``matches`` ``{"pattern"}`` (JavaScript,
compiled now), ``meetsCriteria`` (a judge rubric) and ``callsTool`` ``{"name", "arguments"}``
(short form: a tool name, arguments None). ``mocks`` (tool name -> canned result) go to
``Case.mocks``. A case is named by its ``name``, else by a slug of its input.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import MATCHER_OPERATORS, Case, GraderSpec, LoadError
from pytest_plugin_evals.suites import validate as v
from pytest_plugin_evals.suites.file_case import file_case
from pytest_plugin_evals.suites.grader_schema import tool_entry
from pytest_plugin_evals.suites.json_lines import JSONProblem, load_json
from pytest_plugin_evals.suites.validate import Spot, Value
from pytest_plugin_evals.util import jsregex as patterns

EVAL_KEYS = ("name", "input", "mocks", "expected", "usedAsExample")
EXPECTATIONS = ("includes", "matches", "meetsCriteria", "callsTool")
SLUG_LIMIT = 60


def load(path: Path) -> list[Case | LoadError]:
    """The evals of a package.json; a bad file raises, a bad eval becomes a LoadError item."""
    try:
        doc = load_json(v.read_source(path))
    except JSONProblem as exc:
        raise LoadError(path, exc.message, exc.line) from None
    if not isinstance(doc.data, dict):
        raise LoadError(path, f"package.json must be a JSON object (got {v.kind(doc.data)})", 1)
    top = Spot(path, doc, (), "", 1)
    ai_value = top.value(doc.data, "ai")
    if ai_value is None:
        top.fail('there is no "ai" object, so no ai.evals to run')
    ai = v.mapping(ai_value)
    evals_value = top.child("ai", "ai.").value(ai, "evals")
    if evals_value is None:
        ai_value.fail('has no "evals" list')
    if not isinstance(evals_value.raw, list):
        evals_value.fail(f"must be a list of evals (got {v.kind(evals_value.raw)})")
    found: list[Case | LoadError] = []
    used: set[str] = set()
    for index, raw in enumerate(evals_value.raw):
        spot = Spot(path, doc, ("ai", "evals", index), f"ai.evals[{index}].", 1)
        try:
            found.append(_case(raw, spot, path, used))
        except LoadError as exc:
            found.append(exc)
    return found


def slug(text: str) -> str:
    """``@todo-list What are my todos?`` -> ``todo-list-what-are-my-todos``."""
    cut = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:SLUG_LIMIT].strip("-")
    return cut or "eval"


def _unique(name: str, used: set[str]) -> str:
    candidate, number = name, 1
    while candidate in used:
        number += 1
        candidate = f"{name}-{number}"
    used.add(candidate)
    return candidate


def _case(raw: object, spot: Spot, path: Path, used: set[str]) -> Case:
    if not isinstance(raw, dict):
        spot.fail(f"{spot.prefix.rstrip('.')} must be an object (got {v.kind(raw)})")
    v.check_keys(raw, spot, EVAL_KEYS, "key")
    input_value = spot.value(raw, "input")
    if input_value is None:
        spot.fail(f"{spot.label('input')} is required")
    prompt = v.string(input_value).strip()
    name_value = spot.value(raw, "name")
    base = v.name(name_value).strip() if name_value is not None else slug(prompt)
    mocks_value = spot.value(raw, "mocks")
    mocks = {} if mocks_value is None or mocks_value.raw is None else v.mapping(mocks_value)
    graders: list[GraderSpec] = []
    expected_value = spot.value(raw, "expected")
    if expected_value is not None and expected_value.raw is not None:
        if not isinstance(expected_value.raw, list):
            expected_value.fail(
                f"must be a list of expectations (got {v.kind(expected_value.raw)})"
            )
        holder = spot.child("expected", f"{expected_value.label}.")
        for index, item in enumerate(expected_value.raw):
            graders.append(_expectation(item, holder, index))
    return file_case(
        "package_json",
        path,
        path.parent,
        _unique(base, used),
        prompt,
        graders,
        mocks=mocks,
        line=spot.line(),
    )


def _expectation(item: Any, parent: Spot, index: int) -> GraderSpec:
    here = Value(item, parent, index)
    if not isinstance(item, dict) or len(item) != 1 or next(iter(item)) not in EXPECTATIONS:
        shown = ", ".join(f"{{{k}: …}}" for k in EXPECTATIONS)
        got = f"keys {', '.join(map(str, item))}" if isinstance(item, dict) else v.kind(item)
        here.fail(f"must be one of {shown} (got {got})")
    spot = parent.child(index, f"{here.label}.")
    ((kind, raw),) = item.items()
    value = Value(raw, spot, kind)
    path, line = str(spot.path), here.line
    if kind == "includes":
        text = v.string(value)
        return GraderSpec(f'includes "{text}"', kind, {"value": text}, path=path, line=line)
    if kind == "matches":
        source = v.string(value)
        _compile(value, source)
        return GraderSpec(f"matches /{source}/", kind, {"pattern": source}, path=path, line=line)
    if kind == "meetsCriteria":
        text = v.string(value).strip()
        short = text if len(text) <= 60 else text[:59] + "…"
        return GraderSpec(
            f'meets criteria "{short}"',
            kind,
            {"criteria": text},
            criteria=text,
            path=path,
            line=line,
        )
    return _calls_tool(value, path, line)


def _calls_tool(value: Value, path: str, line: int | None) -> GraderSpec:
    tool, arguments_value = tool_entry(value, ("name", "arguments"))
    arguments = None
    if arguments_value is not None:
        arguments = v.mapping(arguments_value)
        _check_matcher(arguments_value)
    shown = f" ({', '.join(map(str, arguments))})" if arguments else ""
    config = {"name": tool, "arguments": arguments}
    return GraderSpec(f"calls tool {tool}{shown}", "callsTool", config, path=path, line=line)


def _check_matcher(value: Value) -> None:
    """Compile every ``matches`` pattern of an argument matcher, walking and/or/not and maps."""
    raw = value.raw
    inner = value.spot.child(value.key, f"{value.label}.")
    if isinstance(raw, list):
        for index, item in enumerate(raw):
            _check_matcher(Value(item, inner, index))
    elif isinstance(raw, dict):
        if len(raw) == 1 and next(iter(raw)) in MATCHER_OPERATORS:
            ((op, arg),) = raw.items()
            if op == "matches":
                source = v.string(Value(arg, inner, op), empty=True)
                _compile(Value(arg, inner, op), source)
            elif op in ("and", "or", "not"):
                _check_matcher(Value(arg, inner, op))
            return
        for key, item in raw.items():
            _check_matcher(Value(item, inner, key))


def _compile(value: Value, source: str) -> None:
    try:
        patterns.compile_js(source)
    except patterns.RegexSyntaxError as exc:
        raise LoadError(
            value.spot.path, f'invalid {value.label} "{source}": {exc}', value.line
        ) from None
