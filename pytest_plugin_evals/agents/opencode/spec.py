"""opencode, declared (see :mod:`pytest_plugin_evals.agents.spec`)."""

from __future__ import annotations

from pytest_plugin_evals.agents.spec import AgentSpec, Capabilities
from pytest_plugin_evals.util.environment import Passed

#: The variables naming each provider's endpoint, and the endpoint each defaults to.
PROVIDER_ENDPOINTS: dict[str, dict[str, str | None]] = {
    "anthropic": {"ANTHROPIC_BASE_URL": "https://api.anthropic.com"},
    "openai": {"OPENAI_BASE_URL": "https://api.openai.com/v1"},
    "google": {"GOOGLE_GENERATIVE_AI_BASE_URL": "https://generativelanguage.googleapis.com"},
    "openrouter": {"OPENROUTER_BASE_URL": "https://openrouter.ai/api/v1"},
}

#: The variables of each provider opencode may use (its key, its endpoint): a run sees only
#: those of the provider its model names.
PROVIDER_VARIABLES: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "google": ("GOOGLE_GENERATIVE_AI_API_KEY", "GOOGLE_GENERATIVE_AI_BASE_URL"),
    "openrouter": ("OPENROUTER_API_KEY", "OPENROUTER_BASE_URL"),
}

SPEC = AgentSpec(
    name="opencode",
    title="opencode",
    package="opencode-ai",
    version="1.18.33",
    endpoints={k: v for e in PROVIDER_ENDPOINTS.values() for k, v in e.items()},
    passed=Passed(names=frozenset(n for v in PROVIDER_VARIABLES.values() for n in v)),
    credentials=tuple(n for v in PROVIDER_VARIABLES.values() for n in v if n.endswith("_KEY")),
    #: ``run --format json``: ``part.tool``.
    tools={
        "bash": "Bash",
        "read": "Read",
        "write": "Write",
        "edit": "Edit",
        "apply_patch": "Edit",
        "patch": "Edit",
        "multiedit": "MultiEdit",
        "glob": "Glob",
        "grep": "Grep",
        "list": "LS",
        "skill": "Skill",
        "task": "Task",
        "todowrite": "TodoWrite",
        "todoread": "TodoRead",
        "webfetch": "WebFetch",
        "websearch": "WebSearch",
        "question": "AskUserQuestion",
    },
    # It prices a run by its own price table (a model it has no price for: cost unknown).
    capabilities=Capabilities(prices=True, reports_tokens=True, network_forwarder=True),
    rank=3,
    plugin_loading="`OPENCODE_CONFIG_DIR` with the plugin's skills, commands, agents; "
    "`opencode debug skill` must list the skills",
)
