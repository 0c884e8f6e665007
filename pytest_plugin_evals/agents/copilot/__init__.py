"""``--eval-agent copilot``: GitHub Copilot CLI — its command line (:mod:`.agent`), the tools a
run is offered and may use (:mod:`.tools`) and its JSON event trace (:mod:`.events`)."""

from __future__ import annotations

from pytest_plugin_evals.agents.copilot.agent import CopilotAgent, find_binary, make_agent

__all__ = ["CopilotAgent", "find_binary", "make_agent"]
