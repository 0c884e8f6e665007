"""``--eval-agent copilot``: GitHub Copilot CLI — its command line (:mod:`.agent`), the tools a
run is offered and may use (:mod:`.tools`) and its JSON event trace (:mod:`.events`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_plugin_evals.agents.copilot.agent import CopilotAgent as CopilotAgent
    from pytest_plugin_evals.agents.copilot.agent import find_binary as find_binary
    from pytest_plugin_evals.agents.copilot.agent import make_agent as make_agent

#: Imported from :mod:`.agent` on first use: the registry reads :mod:`.spec` alone.
__all__ = ["CopilotAgent", "find_binary", "make_agent"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.agent"), name)
