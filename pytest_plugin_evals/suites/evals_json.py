"""``evals/evals.json`` suites: ``{"cases": [{name, prompt, expect: {...}}]}``.

Each check in ``expect`` becomes one grader: ``contains`` (one per string), ``not_contains``
(one per string) and ``min_chars``. A case without checks has none (it scores 1.0 when the run
succeeds). Other case fields are ignored, as the format says; an unknown key inside ``expect``
is an error, since a misspelt check would otherwise pass silently.
"""

from __future__ import annotations

from pathlib import Path

from pytest_plugin_evals.model import Case, GraderSpec, LoadError
from pytest_plugin_evals.suites import validate as v
from pytest_plugin_evals.suites.file_case import file_case
from pytest_plugin_evals.suites.validate import Spot
from pytest_plugin_evals.util.frontmatter import Located

EXPECT_KEYS = ("contains", "not_contains", "min_chars")


def load(path: Path, suite_root: Path, doc: Located) -> list[Case | LoadError]:
    """The cases of a parsed suite (``doc.data["cases"]`` is a list); bad cases become errors."""
    return v.each_case(
        path,
        doc,
        "cases",
        lambda raw, spot: _case(raw, spot, path, suite_root),
        duplicate='duplicate case name "{name}" (first used on line {first})',
        name_key="name",
    )


def _case(raw: object, spot: Spot, path: Path, suite_root: Path) -> Case:
    if not isinstance(raw, dict):
        spot.fail(f"{spot.prefix.rstrip('.')} must be a mapping (got {v.kind(raw)})")
    name_value = spot.value(raw, "name")
    if name_value is None:
        spot.fail(f"{spot.label('name')} is required")
    prompt_value = spot.value(raw, "prompt")
    if prompt_value is None:
        spot.fail(f"{spot.label('prompt')} is required")
    name = v.name(name_value).strip()
    prompt = v.string(prompt_value).strip()
    graders: list[GraderSpec] = []
    expect_value = spot.value(raw, "expect")
    if expect_value is not None and expect_value.raw is not None:
        expect = v.mapping(expect_value)
        inner = spot.child("expect", f"{expect_value.label}.")
        v.check_keys(expect, inner, EXPECT_KEYS, "key")
        for key, template in (
            ("contains", 'contains "{}"'),
            ("not_contains", 'does not contain "{}"'),
        ):
            items = v.string_list(inner.value(expect, key))
            holder = inner.child(key, f"{inner.label(key)}.")
            for index, text in enumerate(items):
                label = template.format(text)
                graders.append(_spec(label, key, {"value": text}, path, holder.line(index)))
        min_value = inner.value(expect, "min_chars")
        if min_value is not None and min_value.raw is not None:
            least = v.whole_number(min_value, 0, None)
            label = f"at least {least} characters"
            graders.append(_spec(label, "min_chars", {"min": least}, path, min_value.line))
    return file_case("evals_json", path, suite_root, name, prompt, graders, line=spot.line())


def _spec(
    name: str, kind: str, config: dict[str, object], path: Path, line: int | None
) -> GraderSpec:
    return GraderSpec(name=name, type=kind, config=config, path=str(path), line=line)
