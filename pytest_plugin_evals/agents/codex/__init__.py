"""``--eval-agent codex``: OpenAI Codex CLI's ``codex exec --json`` — its command line, model
provider and plugin install (:mod:`.agent`) and its JSON event stream (:mod:`.events`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_plugin_evals.agents.codex.agent import CodexAgent as CodexAgent
    from pytest_plugin_evals.agents.codex.agent import find_binary as find_binary
    from pytest_plugin_evals.agents.codex.agent import make_agent as make_agent

#: Imported from :mod:`.agent` on first use: the registry reads :mod:`.spec` alone.
__all__ = ["CodexAgent", "find_binary", "make_agent"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.agent"), name)
