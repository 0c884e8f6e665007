"""The credential variables of a run: what a command its agent runs must not see (a shell
tool's sandbox hides them; Copilot's ``--secret-env-vars``), by name, by the shape of the name,
and every agent's declared credentials (:mod:`.registry`); and the refused run of an agent
without the key it needs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from pytest_plugin_evals.model import Transcript

#: Variables a sandboxed command never sees (by name, and by the shape of the name).
CREDENTIAL_NAMES = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AZURE_CLIENT_SECRET",
        "GH_TOKEN",
        "GITHUB_TOKEN",
        "NPM_TOKEN",
        "NODE_AUTH_TOKEN",
    }
)
_SECRET_SHAPE = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|CREDENTIAL)", re.IGNORECASE
)


def credential_names(env: Mapping[str, str]) -> list[str]:
    """The run's variables a sandboxed command must not see."""
    from pytest_plugin_evals.agents.registry import credential_names as declared

    known = CREDENTIAL_NAMES | declared()
    return sorted(name for name in env if name in known or _SECRET_SHAPE.search(name) is not None)


def without_openai_key(agent: str, env: Mapping[str, str], cwd: Path) -> Transcript | None:
    """The run refused before it starts when an agent that speaks to an OpenAI-compatible
    endpoint has no ``OPENAI_API_KEY``; None when it has one."""
    if env.get("OPENAI_API_KEY", "").strip():
        return None
    return Transcript(
        error=f"--eval-agent {agent} needs OPENAI_API_KEY (and OPENAI_BASE_URL for an "
        "endpoint other than OpenAI's) in the environment",
        infra_error="auth",
        cwd=cwd,
    )
