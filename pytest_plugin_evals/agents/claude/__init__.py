"""``--eval-agent claude``: Claude Code's ``claude -p`` — its declaration (:mod:`.spec`), its
command line (:mod:`.agent`), its command sandbox (:mod:`.shell`) and its stream-json trace
(:mod:`.stream_json`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_plugin_evals.agents.claude.agent import ClaudeAgent as ClaudeAgent
    from pytest_plugin_evals.agents.claude.agent import find_binary as find_binary
    from pytest_plugin_evals.agents.claude.agent import make_agent as make_agent

#: Imported from :mod:`.agent` on first use: the registry reads :mod:`.spec` alone.
__all__ = ["ClaudeAgent", "find_binary", "make_agent"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.agent"), name)
