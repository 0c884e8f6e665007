"""``--eval-agent opencode``: opencode's ``opencode run --format json`` — its command line and
configuration (:mod:`.agent`, :mod:`.config`) and its JSON event stream (:mod:`.events`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_plugin_evals.agents.opencode.agent import OpencodeAgent as OpencodeAgent
    from pytest_plugin_evals.agents.opencode.agent import find_binary as find_binary
    from pytest_plugin_evals.agents.opencode.agent import make_agent as make_agent

#: Imported from :mod:`.agent` on first use: the registry reads :mod:`.spec` alone.
__all__ = ["OpencodeAgent", "find_binary", "make_agent"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.agent"), name)
