"""Qwen Code, declared (see :mod:`pytest_plugin_evals.agents.spec`)."""

from __future__ import annotations

from pytest_plugin_evals.agents.spec import AgentSpec, Capabilities
from pytest_plugin_evals.util.environment import Passed

#: OpenAI's endpoint, when the operator sets no ``OPENAI_BASE_URL``.
OPENAI_URL = "https://api.openai.com/v1"

SPEC = AgentSpec(
    name="qwen",
    title="Qwen Code",
    package="@qwen-code/qwen-code",
    version="0.24.4",
    # An OpenAI-compatible endpoint (``--auth-type openai``).
    endpoints={"OPENAI_BASE_URL": OPENAI_URL},
    passed=Passed(names=frozenset({"OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"})),
    credentials=("OPENAI_API_KEY",),
    #: Its built-in tools (Gemini CLI's family); MCP tools are mapped by the adapter.
    tools={
        "run_shell_command": "Bash",
        "read_file": "Read",
        "read_many_files": "Read",
        "write_file": "Write",
        "edit": "Edit",
        "notebook_edit": "NotebookEdit",
        "glob": "Glob",
        "grep_search": "Grep",
        "list_directory": "LS",
        "skill": "Skill",
        "agent": "Task",
        "todo_write": "TodoWrite",
        "web_fetch": "WebFetch",
        "web_search": "WebSearch",
    },
    capabilities=Capabilities(
        prices=False,
        reports_tokens=True,
        network_forwarder=True,
        # Its own sandbox needs a container runtime or a setting it is not given: the whole
        # CLI runs inside ours instead.
        nests_sandbox=False,
    ),
    rank=5,
    plugin_loading="`qwen extensions install <plugin> --consent` (it reads Claude Code's "
    "plugin layout) into its own home; its init event must list the skills",
)
