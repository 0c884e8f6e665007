"""``--eval-agent claude``: Claude Code's ``claude -p`` — its command line (:mod:`.agent`), which
tools a run may use and where (:mod:`.permissions`), and its stream-json trace
(:mod:`.stream_json`)."""

from __future__ import annotations

from pytest_plugin_evals.agents.base import infra_kind
from pytest_plugin_evals.agents.claude.agent import ClaudeAgent, find_binary, plugin_contents

__all__ = ["ClaudeAgent", "find_binary", "infra_kind", "plugin_contents"]
