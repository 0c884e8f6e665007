"""Drafting a skill's cases with the judge model: the request, and the reply checked.

One judge call per skill asks for prompts a user would type that should fire the skill and
near misses that should not (the plugin's other skills, commands, agents and MCP servers are
named so the near misses sit between them), each with a short name and what a good answer
does. The reply is model output: it is read as one JSON object, every field is bounded, every
name must be a safe folder name, and the first problem refuses the whole draft in one line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pytest_plugin_evals.scaffold.files import NAME_RULE
from pytest_plugin_evals.scaffold.inventory import Inventory, Part
from pytest_plugin_evals.suites.directory import TODO as BLANK_PROMPT
from pytest_plugin_evals.suites.validate import kind as _kind
from pytest_plugin_evals.util.safeload import json_data

SYSTEM_PROMPT = (
    "You draft evaluation cases for a coding agent's plugin. Answer with one JSON object and "
    "nothing else."
)

#: Bounds on what the judge may return.
REPLY_LIMIT = 200_000
PROMPT_LIMIT = 2_000
EXPECTED_LIMIT = 1_000
NAME_LIMIT = 48
MAX_PER_KIND = 10
_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]")
KINDS = ("should_trigger", "should_not_trigger")


class DraftError(Exception):
    """The judge's draft cannot be used: one line saying why."""


@dataclass(frozen=True)
class Draft:
    """One drafted case: its name, the user's prompt, what a good answer does."""

    name: str
    prompt: str
    expected: str
    should_trigger: bool


def request(inventory: Inventory, skill: Part, count: int) -> str:
    """The drafting prompt for ``skill``."""
    others = [
        *(f"- skill {p.name}: {p.description}" for p in inventory.skills if p is not skill),
        *(f"- command /{p.name}: {p.description}" for p in inventory.commands),
        *(f"- agent {p.name}: {p.description}" for p in inventory.agents),
        *(f"- MCP server {name}" for name in inventory.servers),
    ]
    shape = {
        "should_trigger": [{"name": "short-kebab-case-name", "prompt": "...", "expected": "..."}],
        "should_not_trigger": [
            {"name": "short-kebab-case-name", "prompt": "...", "expected": "..."}
        ],
    }
    return "\n".join(
        [
            f"Draft eval prompts for the skill {skill.name!r} of the plugin {inventory.name!r}.",
            "",
            "The skill's description (what the agent sees when it chooses a skill):",
            skill.description or "(none)",
            "",
            "The skill's instructions:",
            "<skill>",
            skill.body or "(none)",
            "</skill>",
            "",
            "The plugin's other parts:",
            *(others or ["(none)"]),
            "",
            f"Write {count} prompts a user would really type that should make the agent use "
            "this skill (should_trigger), varied in wording, and "
            f"{count} near misses that should not (should_not_trigger): requests on a "
            "neighbouring topic, or for another part of the plugin, that this skill does not "
            "serve. Each prompt is self-contained and at most a few sentences.",
            "For each, 'expected' says in one or two sentences what a good answer does, so a "
            "judge can grade the agent's reply against it; 'name' is 2 to 5 lowercase words "
            "joined by hyphens, unique in your answer.",
            "",
            "Answer with exactly this JSON shape and nothing else:",
            json.dumps(shape, indent=2),
        ]
    )


def parse(reply: str, count: int) -> list[Draft]:
    """The drafts in the judge's ``reply``; DraftError (one line) when it cannot be used."""
    if len(reply) > REPLY_LIMIT:
        raise DraftError(f"the reply is longer than {REPLY_LIMIT:,} characters")
    text = _unfenced(reply)
    try:
        doc = json_data(text)
    except ValueError as exc:  # not JSON, or nested past the loaders' bound
        where = (
            f" (line {exc.lineno}, column {exc.colno})"
            if isinstance(exc, json.JSONDecodeError)
            else f" ({exc})"
        )
        head = _plain(reply.strip()[:60]) or "an empty reply"
        raise DraftError(f"the reply is not JSON{where}: {head!r}") from None
    if not isinstance(doc, dict):
        raise DraftError(f"the reply must be a JSON object (got {_kind(doc)})")
    unknown = sorted(set(doc) - set(KINDS))
    if unknown:
        raise DraftError(f'unknown key "{_plain(unknown[0][:40])}" (expected {", ".join(KINDS)})')
    drafts: list[Draft] = []
    names: set[str] = set()
    for kind in KINDS:
        entries = doc.get(kind)
        if not isinstance(entries, list) or not entries:
            got = "an empty list" if entries == [] else _kind(entries)
            raise DraftError(f"{kind} must be a non-empty list (got {got})")
        for index, entry in enumerate(entries[: min(count, MAX_PER_KIND)]):
            draft = _entry(entry, f"{kind}[{index}]", kind == "should_trigger")
            if draft.name in names:
                raise DraftError(f'{kind}[{index}].name "{draft.name}" is used twice')
            names.add(draft.name)
            drafts.append(draft)
    return drafts


def _entry(entry: Any, where: str, should: bool) -> Draft:
    if not isinstance(entry, dict):
        raise DraftError(f"{where} must be an object (got {_kind(entry)})")
    unknown = sorted(set(entry) - {"name", "prompt", "expected"})
    if unknown:
        raise DraftError(f'{where}: unknown key "{_plain(unknown[0][:40])}"')
    name, prompt, expected = entry.get("name"), entry.get("prompt"), entry.get("expected")
    if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > NAME_LIMIT:
        shown = json.dumps(name, ensure_ascii=True)[:80] if name is not None else "nothing"
        raise DraftError(
            f"{where}.name {shown} won't work — lowercase letters, digits and '-' only, "
            f"at most {NAME_LIMIT} characters ({NAME_RULE})"
        )
    return Draft(
        name=name,
        prompt=_text(prompt, f"{where}.prompt", PROMPT_LIMIT),
        expected=_text(expected, f"{where}.expected", EXPECTED_LIMIT),
        should_trigger=should,
    )


def _text(value: Any, where: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DraftError(f"{where} must be a non-empty string (got {_kind(value)})")
    cleaned = _CONTROL.sub(" ", value.replace("\r\n", "\n")).strip()
    if len(cleaned) > limit:
        raise DraftError(f"{where} is longer than {limit:,} characters")
    if cleaned == BLANK_PROMPT:
        raise DraftError(f"{where} is the blank template's TODO line")
    if cleaned.startswith("---"):
        raise DraftError(f"{where} starts with '---', which would read as frontmatter")
    return cleaned


def _unfenced(reply: str) -> str:
    """The reply without a Markdown code fence around it."""
    text = reply.strip()
    fence = re.fullmatch(r"```[A-Za-z]*\n(.*)\n```", text, re.DOTALL)
    return fence.group(1) if fence else text


def _plain(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)
