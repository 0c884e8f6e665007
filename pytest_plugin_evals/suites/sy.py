"""sy suites (YAML or JSON): ``name:``, suite-level ``tags:`` and ``cases:`` of ``input`` + checks.

One grader per list item of ``expected_contains`` / ``expected_not_contains`` /
``expected_regex`` / ``expected_not_regex`` / ``expect_tool_success``, and one each for
``max_tokens``, ``max_latency_ms`` and ``expect_delivered``. Patterns are Python ``re``
(``(?i)`` works) and are compiled now. The case keys are a closed set: a misspelt one is an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import Case, GraderSpec, LoadError
from pytest_plugin_evals.suites import validate as v
from pytest_plugin_evals.suites.file_case import file_case
from pytest_plugin_evals.suites.validate import Spot, Value
from pytest_plugin_evals.util import jsregex as patterns
from pytest_plugin_evals.util.frontmatter import Located

CASE_KEYS = (
    "name",
    "input",
    "expected_contains",
    "expected_not_contains",
    "expected_regex",
    "expected_not_regex",
    "max_tokens",
    "max_latency_ms",
    "tags",
    "expect_tool_success",
    "expect_delivered",
    "requires_secret",
)

#: list key -> (grader name template, config key)
LIST_CHECKS = {
    "expected_contains": ('contains "{}"', "value"),
    "expected_not_contains": ('does not contain "{}"', "value"),
    "expected_regex": ("matches /{}/", "pattern"),
    "expected_not_regex": ("does not match /{}/", "pattern"),
    "expect_tool_success": ("tool {} succeeded", "tool"),
}


def load(path: Path, suite_root: Path, doc: Located) -> list[Case | LoadError]:
    """The cases of a parsed sy suite; a bad suite header raises, a bad case becomes an error."""
    data: dict[str, Any] = doc.data
    top = Spot(path, doc, (), "", 1)
    suite_name = v.optional_string(top.value(data, "name"))
    suite_tags = v.names(top.value(data, "tags"))
    return v.each_case(
        path,
        doc,
        "cases",
        lambda raw, spot: _case(raw, spot, path, suite_root, suite_tags, suite_name),
        duplicate='duplicate case name "{name}" (first used on line {first})',
        name_key="name",
    )


def _case(
    raw: object,
    spot: Spot,
    path: Path,
    suite_root: Path,
    suite_tags: tuple[str, ...],
    suite_name: str | None,
) -> Case:
    if not isinstance(raw, dict):
        spot.fail(f"{spot.prefix.rstrip('.')} must be a mapping (got {v.kind(raw)})")
    v.check_keys(raw, spot, CASE_KEYS, "key")
    for required in ("name", "input"):
        if required not in raw:
            spot.fail(f"{spot.label(required)} is required")
    name = v.name(Value(raw["name"], spot, "name")).strip()
    prompt = v.string(Value(raw["input"], spot, "input")).strip()
    graders: list[GraderSpec] = []
    for key in CASE_KEYS:
        value = spot.value(raw, key)
        if value is None or value.raw is None:
            continue
        if key in LIST_CHECKS:
            graders += _list_check(value, path)
        elif key == "max_tokens":
            tokens = v.whole_number(value, 1, None)
            graders.append(_spec(f"at most {tokens} tokens", key, {"max": tokens}, value, path))
        elif key == "max_latency_ms":
            budget = v.positive_number(value)
            shown = int(budget) if budget.is_integer() else budget
            graders.append(_spec(f"latency at most {shown} ms", key, {"max": shown}, value, path))
        elif key == "expect_delivered":
            flag = v.boolean(value)
            label = "delivered" if flag else "not delivered"
            graders.append(_spec(label, key, {"value": flag}, value, path))
    tags = list(suite_tags)
    tags += [tag for tag in v.names(spot.value(raw, "tags")) if tag not in tags]
    return file_case(
        "sy",
        path,
        suite_root,
        name,
        prompt,
        graders,
        tags=tuple(tags),
        requires_secret=v.string_list(spot.value(raw, "requires_secret")),
        regex_dialect="python",
        line=spot.line(),
        extra={"suite": suite_name} if suite_name else {},
    )


def _list_check(value: Value, path: Path) -> list[GraderSpec]:
    template, config_key = LIST_CHECKS[value.key]
    items = v.string_list(value)
    inner = value.spot.child(value.key, f"{value.label}.")
    found = []
    for index, item in enumerate(items):
        here = Value(item, inner, index)
        if config_key == "pattern":
            try:
                patterns.compile_py(item)
            except patterns.RegexSyntaxError as exc:
                raise LoadError(path, f'invalid {here.label} "{item}": {exc}', here.line) from None
        elif not item.strip():
            here.fail("must not be empty")
        name = template.format(item)
        found.append(_spec(name, value.key, {config_key: item}, here, path))
    return found


def _spec(name: str, kind: str, config: dict[str, Any], value: Value, path: Path) -> GraderSpec:
    return GraderSpec(name=name, type=kind, config=config, path=str(path), line=value.line)
