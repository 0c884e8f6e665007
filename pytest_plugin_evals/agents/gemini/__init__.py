"""``--eval-agent gemini``: Gemini CLI's ``gemini -p`` — its command line and run (:mod:`.agent`),
the tools a run may use (:mod:`.tools`), the plugin as a Gemini CLI extension
(:mod:`.extension`) and its stream-json trace (:mod:`.stream_json`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_plugin_evals.agents.gemini.agent import GeminiAgent as GeminiAgent
    from pytest_plugin_evals.agents.gemini.agent import find_binary as find_binary
    from pytest_plugin_evals.agents.gemini.agent import make_agent as make_agent

#: Imported from :mod:`.agent` on first use: the registry reads :mod:`.spec` alone.
__all__ = ["GeminiAgent", "find_binary", "make_agent"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.agent"), name)
