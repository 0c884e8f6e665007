"""Gemini CLI, declared (see :mod:`pytest_plugin_evals.agents.spec`)."""

from __future__ import annotations

from pytest_plugin_evals.agents.spec import AgentSpec, Capabilities
from pytest_plugin_evals.util.environment import Passed

#: The operator's variables Gemini CLI reads for its endpoint, key and model.
OPERATOR_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GEMINI_MODEL")

#: The variable naming Gemini CLI's endpoint, and Google's when it is unset.
ENDPOINTS: dict[str, str | None] = {
    "GOOGLE_GEMINI_BASE_URL": "https://generativelanguage.googleapis.com"
}

SPEC = AgentSpec(
    name="gemini",
    title="Gemini CLI",
    package="@google/gemini-cli",
    version="0.61.0",
    endpoints=ENDPOINTS,
    #: Its endpoint, key and model, and Google's project settings.
    passed=Passed(
        names=frozenset(
            {
                *OPERATOR_VARIABLES,
                "GOOGLE_CLOUD_PROJECT",
                "GOOGLE_CLOUD_LOCATION",
                "GOOGLE_GENAI_USE_VERTEXAI",
            }
        ),
        prefixes=("GEMINI_",),
    ),
    credentials=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    #: MCP tools: ``mcp_<server>_<tool>`` of a known server, mapped by the adapter.
    tools={
        "run_shell_command": "Bash",
        "read_file": "Read",
        "read_many_files": "Read",
        "write_file": "Write",
        "replace": "Edit",
        "glob": "Glob",
        "grep_search": "Grep",
        "search_file_content": "Grep",
        "list_directory": "LS",
        "activate_skill": "Skill",
        "write_todos": "TodoWrite",
        "web_fetch": "WebFetch",
        "google_web_search": "WebSearch",
    },
    capabilities=Capabilities(prices=False, reports_tokens=True, network_forwarder=True),
    rank=4,
    plugin_loading="translated into an extension, `gemini extensions link`, `-e <name>`",
)
