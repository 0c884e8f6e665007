"""A run's opencode configuration (``OPENCODE_CONFIG_CONTENT``): the model provider and the
permissions. Pure: dictionaries in, dictionaries out.

Which tools a run may use is decided as for Claude Code (:func:`plan_tools`: the case's
``allowed_tools``, the operator's grants, the disallowed tools); the outcome becomes opencode
permission rules, every tool not named being denied (``"*": "deny"``), which also keeps it out
of the tools the model is offered:

=====================================  ==================================================
case entry (canonical)                 opencode permission
=====================================  ==================================================
Read, Glob, Grep, LS (always)          ``read``, ``glob``, ``grep``, ``list``
Skill, Task / Agent, TodoWrite         ``skill``, ``task``, ``todowrite``
Write, Edit, MultiEdit (granted)       ``edit`` (opencode's one permission for its file
                                       writers ``write``, ``edit``, ``apply_patch``)
Bash (granted)                         ``bash``; ``Bash(npm test *)`` → ``{"*": "deny",
                                       "npm test *": "allow"}``
WebFetch, WebSearch (granted)          ``webfetch``, ``websearch``
=====================================  ==================================================

Every path outside the run's working directory is an ``external_directory`` opencode asks
about, and a headless run refuses: denied, except the plugin's copied skills and the case's
``add_dirs`` copies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents.claude.permissions import base_tool

#: Canonical tool → the opencode permission that governs it.
PERMISSIONS: dict[str, tuple[str, ...]] = {
    "Read": ("read",),
    "Glob": ("glob",),
    "Grep": ("grep",),
    "LS": ("list",),
    "Skill": ("skill",),
    "Task": ("task",),
    "Agent": ("task",),
    "TodoWrite": ("todowrite", "todoread"),
    "Write": ("edit",),
    "Edit": ("edit",),
    "MultiEdit": ("edit",),
    "NotebookEdit": ("edit",),
    "Bash": ("bash",),
    "WebFetch": ("webfetch",),
    "WebSearch": ("websearch",),
}

#: The model when neither the case nor ``--eval-model`` names one.
DEFAULT_MODEL = "anthropic/claude-sonnet-4-5"

#: Claude Code's model aliases, as opencode's catalog names the models.
ALIASES = {
    "sonnet": "claude-sonnet-4-5",
    "opus": "claude-opus-4-5",
    "haiku": "claude-haiku-4-5",
}


def model_id(model: str | None) -> str:
    """``provider/model`` as opencode wants it: a bare model id is an Anthropic one."""
    if not model:
        return DEFAULT_MODEL
    model = model.strip()
    if "/" in model:
        return model
    return f"anthropic/{ALIASES.get(model, model)}"


def _bash_pattern(spec: str) -> list[str]:
    """``git:*`` (Claude Code's prefix form) → ``git``, ``git *``; others as they are."""
    spec = spec.strip()
    if spec.endswith(":*"):
        prefix = spec[:-2].strip()
        return [prefix, f"{prefix} *"]
    return [spec]


def permission_rules(
    allowed: Iterable[str], *, external_allowed: Iterable[Path] = ()
) -> tuple[dict[str, Any], list[str]]:
    """opencode's ``permission`` block for a run's allowed tool entries (Claude Code's names,
    as :func:`plan_tools` left them), and the entries it has no permission for (notes)."""
    rules: dict[str, Any] = {"*": "deny"}
    bash: dict[str, str] = {}
    bash_whole = False
    unmapped: list[str] = []
    for entry in allowed:
        tool = base_tool(entry)
        keys = PERMISSIONS.get(tool)
        if keys is None:
            unmapped.append(entry)
            continue
        if tool == "Bash":
            spec = entry.strip()[len("Bash") :].strip()
            if spec.startswith("(") and spec.endswith(")") and spec[1:-1].strip() not in ("", "*"):
                bash.update({p: "allow" for p in _bash_pattern(spec[1:-1])})
            else:
                bash_whole = True
            continue
        for key in keys:
            rules[key] = "allow"
    if bash_whole:
        rules["bash"] = "allow"
    elif bash:
        rules["bash"] = {"*": "deny", **bash}
    outside: dict[str, str] = {"*": "deny"}
    for folder in external_allowed:
        outside[f"{folder.as_posix().rstrip('/')}/*"] = "allow"
    rules["external_directory"] = outside
    return rules, list(dict.fromkeys(unmapped))


def run_config(
    *,
    model: str | None,
    permission: Mapping[str, Any],
    env: Mapping[str, str],
    max_turns: int | None = None,
) -> dict[str, Any]:
    """The whole ``OPENCODE_CONFIG_CONTENT``: the model, Anthropic's endpoint from
    ``ANTHROPIC_BASE_URL`` when the operator set one, the permissions, the turn limit (the
    ``build`` agent's ``steps``: at the last one opencode asks the model for a final answer
    without tools), sharing and auto-update off."""
    chosen = model_id(model)
    config: dict[str, Any] = {
        "model": chosen,
        # Its own small model answers title requests: the run names its session itself
        # (``--title``), so none is made; it is pinned all the same.
        "small_model": chosen,
        "autoupdate": False,
        "share": "disabled",
        "permission": dict(permission),
    }
    if max_turns is not None and max_turns > 0:
        config["agent"] = {"build": {"steps": max_turns}}
    base_url = (env.get("ANTHROPIC_BASE_URL") or "").strip().rstrip("/")
    if base_url:
        # Claude Code's variable names the API's root; the AI SDK wants its ``/v1``.
        if not base_url.endswith("/v1"):
            base_url += "/v1"
        config["provider"] = {"anthropic": {"options": {"baseURL": base_url}}}
    return config
