"""GitHub Copilot CLI, declared (see :mod:`pytest_plugin_evals.agents.spec`)."""

from __future__ import annotations

from pytest_plugin_evals.agents.spec import AgentSpec, Capabilities
from pytest_plugin_evals.util.environment import Passed

SPEC = AgentSpec(
    name="copilot",
    title="GitHub Copilot CLI",
    package="@github/copilot",
    version="1.0.102",
    endpoints={"COPILOT_PROVIDER_BASE_URL": None},
    #: Its custom provider (endpoint, key, type, wire API), its model, offline switch,
    #: sign-in token and GitHub host.
    passed=Passed(
        names=frozenset(
            {"COPILOT_MODEL", "COPILOT_OFFLINE", "COPILOT_GITHUB_TOKEN", "COPILOT_GH_HOST"}
        ),
        prefixes=("COPILOT_PROVIDER_",),
    ),
    credentials=(
        "COPILOT_PROVIDER_API_KEY",
        "COPILOT_PROVIDER_BEARER_TOKEN",
        "COPILOT_GITHUB_TOKEN",
    ),
    #: GitHub Copilot CLI (MCP tools: ``mcp__<server>__<tool>`` from the events' server and
    #: tool).
    tools={
        "bash": "Bash",
        "read_bash": "BashOutput",
        "stop_bash": "KillShell",
        "view": "Read",
        "create": "Write",
        "edit": "Edit",
        "str_replace_editor": "Edit",
        "apply_patch": "Edit",
        "grep": "Grep",
        "glob": "Glob",
        "skill": "Skill",
        "task": "Task",
        "web_fetch": "WebFetch",
        "web_search": "WebSearch",
    },
    capabilities=Capabilities(prices=False, reports_tokens=False, network_forwarder=True),
    rank=1,
    plugin_loading="`--plugin-dir`; its `session.skills_loaded` event must list the skills",
)
