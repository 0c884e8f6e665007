"""Claude Code, declared (see :mod:`pytest_plugin_evals.agents.spec`)."""

from __future__ import annotations

from pytest_plugin_evals.agents.spec import AgentSpec, Capabilities
from pytest_plugin_evals.util.environment import CLAUDE

#: The variables that name Claude Code's model endpoint, with the endpoint each defaults to.
ENDPOINTS: dict[str, str | None] = {"ANTHROPIC_BASE_URL": "https://api.anthropic.com"}

SPEC = AgentSpec(
    name="claude",
    title="Claude Code",
    package="@anthropic-ai/claude-code",
    version="2.1.328",
    endpoints=ENDPOINTS,
    passed=CLAUDE,
    credentials=(
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ),
    # Claude Code's names are the canonical ones.
    tools={},
    capabilities=Capabilities(
        prices=True,
        reports_tokens=True,
        loads_history=True,
        network_forwarder=True,
        # Its shell tools run in its own sandbox (bubblewrap), inside ours.
        nests_sandbox=True,
    ),
    rank=0,
    plugin_loading="`--plugin-dir`; its init event must list the plugin, skills, commands",
)
