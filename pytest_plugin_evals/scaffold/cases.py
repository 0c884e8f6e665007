"""A skill's drafts as files: one case folder each, and the skill's ``trigger_eval.json``.

A case is ``evals/<skill>-<name>/``: ``prompt.md`` (the user's prompt, tagged ``init``, the
skill and ``should-fire`` or ``near-miss``), ``graders/outcome.md`` (an ``llm`` grader on what
a good answer does) and ``graders/skill-fired.md`` (a ``tool_used`` grader on a ``Skill`` call
naming the skill: at least once for a prompt that should fire it, an indicator; never, scored
in both arms, for a near miss). The queries go to ``trigger_eval.json`` in the skill's
``evals/`` folder, skill-creator's ``[{"query", "should_trigger"}]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_plugin_evals.scaffold.draft import Draft
from pytest_plugin_evals.scaffold.files import AlreadyThere, name_problem, write_case
from pytest_plugin_evals.scaffold.files import write_new_file as write_file
from pytest_plugin_evals.scaffold.inventory import Part
from pytest_plugin_evals.suites.trigger_eval import FILE_NAME as TRIGGER_FILE

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_REGEX_SPECIAL = re.compile(r"([\\^$.|?*+()\[\]{}/])")


@dataclass
class Written:
    """What one skill's drafts became: the cases written, those left as they were."""

    cases: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    trigger_file: Path | None = None
    trigger_kept: Path | None = None


def slug(skill: Part) -> str:
    """The skill's folder name when it is a safe case-name prefix, else a safe form of it."""
    name = skill.folder.name if skill.path.name == "SKILL.md" else skill.name
    if name_problem(name, 40) is None:
        return name
    safe = _UNSAFE.sub("-", name).strip("-._")[:40]
    return safe if safe and name_problem(safe, 40) is None else "skill"


def case_files(skill: Part, draft: Draft) -> dict[str, str]:
    """The files of one drafted case."""
    kind = "should-fire" if draft.should_trigger else "near-miss"
    purpose = "should fire it" if draft.should_trigger else "is a near miss: it should not fire"
    description = f"Drafted by init for the {skill.name} skill: a prompt that {purpose}."
    tags = ["init", slug(skill), kind]
    prompt = (
        "---\n"
        f"description: {json.dumps(description, ensure_ascii=False)}\n"
        f"tags: [{', '.join(json.dumps(t) for t in tags)}]\n"
        "max_turns: 10\n"
        "allowed_tools: [Read, Glob, Grep, Skill]\n"
        "---\n\n"
        f"{draft.prompt}\n"
    )
    outcome = f"---\ntype: llm\nweight: 1\n---\n\n{draft.expected}\n"
    pattern = '"skill":"(?:[^":]+:)?' + _REGEX_SPECIAL.sub(r"\\\1", skill.name) + '"'
    fired = (
        "---\n"
        "type: tool_used\n"
        "tool: Skill\n"
        f"input_match: {json.dumps(pattern)}\n"
        + ("" if draft.should_trigger else "min: 0\nmax: 0\narm: both\n")
        + "---\n"
    )
    return {
        "prompt.md": prompt,
        "graders/outcome.md": outcome,
        "graders/skill-fired.md": fired,
    }


def trigger_path(skill: Part) -> Path:
    """Where the skill's ``trigger_eval.json`` goes: its ``evals/`` folder."""
    return skill.folder / "evals" / TRIGGER_FILE


def trigger_text(drafts: Sequence[Draft]) -> str:
    entries = [{"query": d.prompt, "should_trigger": d.should_trigger} for d in drafts]
    return json.dumps(entries, indent=2, ensure_ascii=False) + "\n"


def write_skill(evals: Path, skill: Part, drafts: Sequence[Draft]) -> Written:
    """Write ``drafts`` for ``skill``: what was written and what was already there."""
    written = Written()
    prefix = slug(skill)
    for draft in drafts:
        folder = evals / f"{prefix}-{draft.name}"
        try:
            write_case(folder, case_files(skill, draft))
        except AlreadyThere:
            written.kept.append(folder)
        else:
            written.cases.append(folder)
    target = trigger_path(skill)
    try:
        write_file(target, trigger_text(drafts))
    except AlreadyThere:
        written.trigger_kept = target
    else:
        written.trigger_file = target
    return written
