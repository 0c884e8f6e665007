"""OpenAI Codex CLI, declared (see :mod:`pytest_plugin_evals.agents.spec`)."""

from __future__ import annotations

from pytest_plugin_evals.agents.spec import AgentSpec, Capabilities
from pytest_plugin_evals.util.environment import Passed

#: OpenAI's endpoint, when the operator sets no ``OPENAI_BASE_URL``.
OPENAI_URL = "https://api.openai.com/v1"

#: The variable naming Codex's endpoint, and OpenAI's when it is unset.
ENDPOINTS: dict[str, str | None] = {"OPENAI_BASE_URL": OPENAI_URL}

SPEC = AgentSpec(
    name="codex",
    title="OpenAI Codex CLI",
    package="@openai/codex",
    version="0.169.0",
    endpoints=ENDPOINTS,
    #: Its endpoint and key (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``) and OpenAI's others.
    passed=Passed(prefixes=("OPENAI_",)),
    credentials=("OPENAI_API_KEY",),
    #: Its stream names items, not tools: the adapter records each item under its tool's
    #: name; a shell command that reads a plugin skill's SKILL.md is a ``Skill`` call.
    tools={
        "exec_command": "Bash",
        "shell": "Bash",
        "local_shell": "Bash",
        "write_stdin": "BashOutput",
        "apply_patch": "Edit",
        "view_image": "Read",
        "web_search": "WebSearch",
        "update_plan": "TodoWrite",
    },
    capabilities=Capabilities(
        prices=False,
        reports_tokens=True,
        network_forwarder=True,
        # Every command and patch runs in Codex's own sandbox (-s), inside ours.
        nests_sandbox=True,
    ),
    rank=2,
    plugin_loading="`codex plugin marketplace add` + `codex plugin add` into its own home",
)
