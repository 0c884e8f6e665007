"""``--eval-agent qwen``: Qwen Code's ``qwen -p`` — its declaration (:mod:`.spec`), its command
line, settings and plugin install (:mod:`.agent`) and its stream-json trace (:mod:`.stream`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_plugin_evals.agents.qwen.agent import QwenAgent as QwenAgent
    from pytest_plugin_evals.agents.qwen.agent import find_binary as find_binary
    from pytest_plugin_evals.agents.qwen.agent import make_agent as make_agent

#: Imported from :mod:`.agent` on first use: the registry reads :mod:`.spec` alone.
__all__ = ["QwenAgent", "find_binary", "make_agent"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.agent"), name)
