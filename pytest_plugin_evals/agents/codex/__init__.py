"""``--eval-agent codex``: OpenAI Codex CLI's ``codex exec --json`` — its command line, model
provider and plugin install (:mod:`.agent`) and its JSON event stream (:mod:`.events`)."""

from __future__ import annotations

from pytest_plugin_evals.agents.codex.agent import CodexAgent, find_binary, make_agent

__all__ = ["CodexAgent", "find_binary", "make_agent"]
