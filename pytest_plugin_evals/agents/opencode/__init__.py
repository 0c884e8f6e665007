"""``--eval-agent opencode``: opencode's ``opencode run --format json`` — its command line and
configuration (:mod:`.agent`, :mod:`.config`) and its JSON event stream (:mod:`.events`)."""

from __future__ import annotations

from pytest_plugin_evals.agents.opencode.agent import OpencodeAgent, find_binary, make_agent

__all__ = ["OpencodeAgent", "find_binary", "make_agent"]
