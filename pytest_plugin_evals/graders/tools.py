"""Graders over the tool calls the agent made, in order.

- ``tool_used`` (directory format): calls named exactly ``tool`` whose input text
  (``JSON.stringify(input)``) matches ``input_match``, counted between ``min`` (1) and ``max`` (∞).
- ``tool_order``: the first call matching ``before`` comes before the first matching ``after``.
- ``expect_tool_success`` (sy): the tool was called and no call of it failed.
- ``callsTool`` (package.json): a call of the tool whose arguments satisfy a matcher tree.

``expect_tool_success`` and ``callsTool`` also accept an MCP-style name whose part after the
last ``__`` is the tool (``mcp__server__get-todos`` for ``get-todos``).
"""

from __future__ import annotations

from typing import Any

from pytest_plugin_evals.graders.base import (
    GradeContext,
    GraderConfigError,
    Outcome,
    number,
    required_str,
)
from pytest_plugin_evals.graders.matchers import mismatches
from pytest_plugin_evals.model import (
    SKILL_NOT_LOADED,
    GraderSpec,
    fired_skill,
    names_skill,
    tool_error_text,
)
from pytest_plugin_evals.util.jsvalues import js_number


def name_matches(call_name: str, wanted: str) -> bool:
    """Exactly, or as the part after the last ``__`` of an MCP tool name."""
    return call_name == wanted or ("__" in call_name and call_name.rsplit("__", 1)[1] == wanted)


def _named_indices(ctx: GradeContext, tool: str) -> list[int]:
    return [i for i, call in enumerate(ctx.transcript.tool_calls) if call.name == tool]


def _matching_indices(ctx: GradeContext, tool: str, input_match: str | None) -> list[int]:
    indices = _named_indices(ctx, tool)
    if input_match is None or not indices:
        return indices
    pattern = ctx.pattern(input_match)
    return [i for i in indices if pattern.search(ctx.input_text(i))]


#: A call's input quoted in a ``tool_used`` explanation is cut at this many characters.
QUOTED_INPUT_LIMIT = 120


def _input_match(value: Any, where: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise GraderConfigError(f"{where}input_match must be a pattern string (got {value!r})")
    return value


def grade_tool_used(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    config = spec.config
    tool = required_str(config, "tool", "tool_used")
    input_match = _input_match(config.get("input_match"), "")
    least = number(config, "min", "tool_used", 1)
    most = number(config, "max", "tool_used", None)
    assert least is not None
    named = _named_indices(ctx, tool)
    matching = _matching_indices(ctx, tool, input_match)
    count = len(matching)
    passed = least <= count and (most is None or count <= most)
    expected = f"(expected {js_number(least)}..{'∞' if most is None else js_number(most)})"
    if count == len(named):  # no call was left out by input_match: the reference's words
        return Outcome(passed, f"{tool} called {count}x {expected}" + _not_loaded(ctx, matching))
    # Some calls' input did not match: say how many calls there were and how many matched,
    # so "called 0x" never hides a call that was made.
    shown = f"/{input_match}/"
    if not matching:
        text = f"{tool} called {len(named)}x, but no call's input matched {shown} {expected}"
    else:
        text = f"{tool} called {len(named)}x, the input of {count} matched {shown} {expected}"
    matched = set(matching)
    missed = [i for i in named if i not in matched]
    if not passed and count < least:
        first = missed[0]
        quoted = ctx.input_text(first)
        if len(quoted) > QUOTED_INPUT_LIMIT:
            quoted = quoted[: QUOTED_INPUT_LIMIT - 1] + "…"
        more = f" (and {len(missed) - 1} more that did not match)" if len(missed) > 1 else ""
        text += f"; {tool}@{first} input: {quoted}{more}"
    return Outcome(passed, text + _not_loaded(ctx, matching))


def _not_loaded(ctx: GradeContext, indices: list[int]) -> str:
    """`` — the skill did not load …`` when ``Skill`` calls among ``indices`` failed: the
    verdict still counts the calls (as the reference does), the words say what happened."""
    calls = ctx.transcript.tool_calls
    failed = [i for i in indices if calls[i].name == "Skill" and calls[i].is_error]
    if not failed:
        return ""
    first = calls[failed[0]]
    why = tool_error_text(first.output)
    which = "" if len(indices) == 1 else f" ({len(failed)} of {len(indices)} calls)"
    return f" — {SKILL_NOT_LOADED}{which}" + (f": {why}" if why else "")


def _order_side(value: Any, side: str) -> tuple[str, str | None]:
    if isinstance(value, str) and value:
        return value, None
    if isinstance(value, dict) and isinstance(value.get("tool"), str) and value["tool"]:
        return value["tool"], _input_match(value.get("input_match"), f'"{side}" ')
    raise GraderConfigError(
        f'a tool_order grader\'s "{side}" must be a tool name or {{tool, input_match}} '
        f"(got {value!r})"
    )


def grade_tool_order(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    before, before_match = _order_side(spec.config.get("before"), "before")
    after, after_match = _order_side(spec.config.get("after"), "after")
    first_before = _matching_indices(ctx, before, before_match)
    if not first_before:
        return Outcome(False, f'"before" tool {before} never called')
    first_after = _matching_indices(ctx, after, after_match)
    if not first_after:
        return Outcome(False, f'"after" tool {after} never called')
    b, a = first_before[0], first_after[0]
    if b < a:
        return Outcome(True, f"{before}@{b} precedes {after}@{a}")
    return Outcome(False, f"{before}@{b} does NOT precede {after}@{a}")


def grade_expect_tool_success(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """sy ``expect_tool_success``: called at least once, and no call of it is an error."""
    tool = required_str(spec.config, "tool", spec.type)
    calls = [c for c in ctx.transcript.tool_calls if name_matches(c.name, tool)]
    if not calls:
        return Outcome(False, f"{tool} never called")
    failed = [c for c in calls if c.is_error]
    if not failed:
        return Outcome(True, f"{tool} succeeded ({len(calls)} of {len(calls)} calls)")
    output = (failed[0].output or "").strip().replace("\n", " ")
    tail = f": {output[:200]}{'…' if len(output) > 200 else ''}" if output else ""
    return Outcome(False, f"{tool} failed in {len(failed)} of {len(calls)} calls{tail}")


def grade_calls_tool(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """package.json ``callsTool``: some call of ``name`` satisfies the ``arguments`` matcher."""
    name = required_str(spec.config, "name", spec.type)
    arguments = spec.config.get("arguments")
    calls = [(i, c) for i, c in enumerate(ctx.transcript.tool_calls) if name_matches(c.name, name)]
    if not calls:
        return Outcome(False, f"{name} never called")
    if arguments is None:
        return Outcome(True, f"{name} called {len(calls)}x")

    def compile_js(source: str) -> Any:
        return ctx.pattern(source, default_dialect="js")

    closest: tuple[int, list[str]] | None = None
    for index, call in calls:
        failures = mismatches(arguments, call.input, compile_js)
        if not failures:
            matched = f"{name}@{index} matched the arguments ({name} called {len(calls)}x)"
            return Outcome(True, matched)
        if closest is None or len(failures) < len(closest[1]):
            closest = (index, failures)
    assert closest is not None
    which = f" (closest: {name}@{closest[0]})" if len(calls) > 1 else ""
    reasons = "; ".join(closest[1][:3]) + ("; …" if len(closest[1]) > 3 else "")
    return Outcome(False, f"{name} called {len(calls)}x but no call matched{which}: {reasons}")


def grade_skill_fired(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """A trigger case's run (``trigger_eval.json``): right when the skill fired as
    ``should_trigger`` says. It fired when a ``Skill`` call named it (plugin-namespaced or not)
    or its ``SKILL.md`` was read, and the call did not fail."""
    config = spec.config
    skill = required_str(config, "skill", "skill_fired")
    folder = str(config.get("folder") or skill)
    should = bool(config.get("should_trigger"))
    fired = [
        f
        for c in ctx.transcript.tool_calls
        if (f := fired_skill(c.name, c.input, c.is_error)) is not None
    ]
    hit = any(names_skill(f, skill, folder) for f in fired)
    others = sorted({f for f in fired if not names_skill(f, skill, folder)})
    told = f"{skill} fired" if hit else f"{skill} did not fire"
    if others:
        told += " (fired instead: " + ", ".join(o[:80] for o in others[:5]) + ")"
    return Outcome(hit == should, told + (" — expected to" if should else " — expected not to"))
