"""The release-helper plugin the agent CLIs' end-to-end tests share: one skill
(``next-version``), a case ``next`` asking which version to release, and the kept run's
``meta.json`` reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

SKILL_MD = """---
name: next-version
description: Work out the next semantic version. Use when asked which version to release.
---
Bump the patch part for fixes, the minor part for features.
"""
#: Text only the plugin's skill listing holds (its description).
SKILL_LISTING = "Work out the next semantic version"
PROMPT = "We fixed two bugs since v1.4.0. Which version should we release next?"


def make_plugin(
    pytester: pytest.Pytester,
    front: str,
    graders: dict[str, str],
    *,
    prompt: str = PROMPT,
    command: str | None = None,
) -> None:
    """release-helper 1.2.0 with its skill (and ``commands/bump.md`` when ``command`` is its
    text), and the case ``next``: ``front`` adds front-matter lines, ``graders`` name -> text."""
    pytester.makefile(
        ".json",
        **{".claude-plugin/plugin": json.dumps({"name": "release-helper", "version": "1.2.0"})},
    )
    pytester.makefile(".md", **{"skills/next-version/SKILL": SKILL_MD})
    if command is not None:
        pytester.makefile(".md", **{"commands/bump": command})
    pytester.makefile(".md", **{"evals/next/prompt": f"---\nruns: 1\n{front}---\n{prompt}\n"})
    for name, body in graders.items():
        pytester.makefile(".md", **{f"evals/next/graders/{name}": body})


#: The graders of :func:`make_skill_plugin`'s case: the answer, and that the skill fired.
SKILL_GRADERS = {
    "answer": "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n",
    "skill-fired": "---\ntype: tool_used\ntool: Skill\n---\n",
}


def make_skill_plugin(
    pytester: pytest.Pytester,
    *,
    tools: str = "[Skill]",
    graders: dict[str, str] | None = None,
    prompt: str = PROMPT,
) -> None:
    """:func:`make_plugin` with its ``bump`` command, the case granting ``tools`` and graded by
    ``graders`` (:data:`SKILL_GRADERS` by default)."""
    make_plugin(
        pytester,
        f"allowed_tools: {tools}\n",
        graders or SKILL_GRADERS,
        prompt=prompt,
        command="---\ndescription: Bump it\n---\nBump $ARGUMENTS\n",
    )


def meta(run: dict[str, Any]) -> dict[str, Any]:
    """The kept run's ``meta.json`` (its tool calls, with the agent's own names)."""
    data: dict[str, Any] = json.loads(
        (Path(run["tracePath"]).parent / "meta.json").read_text(encoding="utf-8")
    )
    return data
