"""Graders over text: ``regex`` and the substring / pattern checks of the other suite formats.

- ``regex`` (directory format): ``pattern``, ``flags``, ``match`` (``contains`` |
  ``not_contains`` | ``count:N``), ``target`` (see :mod:`.targets`).
- ``contains`` / ``not_contains`` / ``min_chars`` (evals.json): case-sensitive substring,
  length of the final message.
- ``expected_contains`` / ``expected_not_contains`` / ``expected_regex`` /
  ``expected_not_regex`` (sy): case-insensitive substrings, Python-dialect patterns.
- ``includes`` / ``matches`` (package.json): case-insensitive substring, JavaScript pattern.
"""

from __future__ import annotations

import re

from pytest_plugin_evals.graders.base import (
    GradeContext,
    GraderConfigError,
    Outcome,
    count,
    number,
    presence,
    required_str,
    search,
)
from pytest_plugin_evals.graders.targets import target_label, target_text
from pytest_plugin_evals.model import GraderSpec

_COUNT = re.compile(r"^count:\s*(\d+)$")


def parse_match(match: object) -> int | str:
    """``contains`` / ``not_contains``, or the N of ``count:N``."""
    if match is None:
        return "contains"
    if match in ("contains", "not_contains"):
        return str(match)
    found = _COUNT.match(match) if isinstance(match, str) else None
    if found is None:
        raise GraderConfigError(f"match must be contains | not_contains | count:N (got {match!r})")
    return int(found.group(1))


def grade_regex(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    config = spec.config
    source = required_str(config, "pattern", "regex")
    flags = config.get("flags") or ""
    if not isinstance(flags, str):
        raise GraderConfigError(f"flags must be a string of regex flags (got {flags!r})")
    match = parse_match(config.get("match"))
    pattern = ctx.pattern(source, flags)
    target = config.get("target")
    text = target_text(target, ctx)
    if isinstance(match, int):
        found = count(pattern, text)
        return Outcome(found == match, f"found {found} matches (expected {match})")
    hit = search(pattern, text)
    if match == "not_contains":
        if hit:
            return Outcome(False, "pattern found (expected absent)")
        return Outcome(True, "pattern absent as expected")
    if hit:
        return Outcome(True, f"matched {source}")
    return Outcome(False, f"pattern not found in {target_label(target)}")


# -- substrings -------------------------------------------------------------------------------


def _substring(
    spec: GraderSpec, ctx: GradeContext, *, absent: bool, fold: bool, verb: str = "contain"
) -> Outcome:
    value = required_str(spec.config, "value", spec.type)
    answer = ctx.transcript.final_message or ""
    found = value.casefold() in answer.casefold() if fold else value in answer
    quoted = f'"{value}"'
    return presence(
        found,
        not absent,
        (
            f"{verb}s {quoted}",
            f"{verb}s {quoted} (expected absent)",
            f"missing {quoted}",
            f"does not {verb} {quoted}",
        ),
    )


def grade_contains(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """evals.json ``contains``: case-sensitive substring of the final message."""
    return _substring(spec, ctx, absent=False, fold=False)


def grade_not_contains(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """evals.json ``not_contains``: case-sensitive, the final message must not hold it."""
    return _substring(spec, ctx, absent=True, fold=False)


def grade_expected_contains(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """sy ``expected_contains``: case-insensitive substring of the reply."""
    return _substring(spec, ctx, absent=False, fold=True)


def grade_expected_not_contains(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """sy ``expected_not_contains``: case-insensitive, the reply must not hold it."""
    return _substring(spec, ctx, absent=True, fold=True)


def grade_includes(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """package.json ``includes``: case-insensitive substring of the response."""
    return _substring(spec, ctx, absent=False, fold=True, verb="include")


def grade_min_chars(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """evals.json ``min_chars``: the final message has at least ``min`` characters."""
    least = number(spec.config, "min", spec.type, None)
    if least is None:
        raise GraderConfigError(f'a {spec.type} grader needs a number "min"')
    got = len(ctx.transcript.final_message or "")
    shown = int(least) if float(least).is_integer() else least
    if got >= least:
        return Outcome(True, f"at least {shown} characters (got {got})")
    return Outcome(False, f"fewer than {shown} characters (got {got})")


# -- patterns over the final message ----------------------------------------------------------


def _pattern_check(spec: GraderSpec, ctx: GradeContext, *, absent: bool, dialect: str) -> Outcome:
    source = required_str(spec.config, "pattern", spec.type)
    flags = spec.config.get("flags") or ""
    hit = ctx.pattern(source, flags, default_dialect=dialect).search(
        ctx.transcript.final_message or ""
    )
    return presence(
        bool(hit),
        not absent,
        (
            f"matched {source}",
            f"matched {source} (expected no match)",
            f"no match for {source}",
            f"no match for {source}, as expected",
        ),
    )


def grade_expected_regex(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """sy ``expected_regex``: the reply matches (Python dialect: ``(?i)`` works)."""
    return _pattern_check(spec, ctx, absent=False, dialect="python")


def grade_expected_not_regex(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """sy ``expected_not_regex``: the reply does not match."""
    return _pattern_check(spec, ctx, absent=True, dialect="python")


def grade_matches(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """package.json ``matches``: the response matches a JavaScript pattern."""
    return _pattern_check(spec, ctx, absent=False, dialect="js")
