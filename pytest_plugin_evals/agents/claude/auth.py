"""Which credentials a Claude Code run can use, and the one line to say when it has none.

A run gets a fresh home and configuration folder, so Claude Code sees only the credential
variables that pass the environment allowlist: ``ANTHROPIC_API_KEY`` (or
``ANTHROPIC_AUTH_TOKEN``), ``CLAUDE_CODE_OAUTH_TOKEN`` (made by ``claude setup-token``), and a
cloud provider's variables when ``CLAUDE_CODE_USE_BEDROCK`` / ``CLAUDE_CODE_USE_VERTEX`` selects
it. A ``/login`` session is not carried into a run: its refresh token would be copied into every
run folder, and a run that refreshes it could leave the operator's own login signed out.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

#: Variables that carry a credential Claude Code reads.
CREDENTIAL_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
#: Variables that select a cloud provider (its own variables then pass to the run).
PROVIDER_SWITCHES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")

SET_ONE = (
    "set ANTHROPIC_API_KEY, or CLAUDE_CODE_OAUTH_TOKEN (run `claude setup-token` to make one), "
    "or select a cloud provider (CLAUDE_CODE_USE_BEDROCK=1 or CLAUDE_CODE_USE_VERTEX=1 with "
    "its variables)"
)


def _on(value: str | None) -> bool:
    return (value or "").strip().lower() not in ("", "0", "false", "no")


def logged_in(environ: Mapping[str, str], home: Path) -> bool:
    """Whether a ``/login`` session is stored for the operator (on macOS it is in the
    keychain, out of sight: assumed)."""
    config = Path(environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    return sys.platform == "darwin" or (config / ".credentials.json").is_file()


def credential_notice(environ: Mapping[str, str], home: Path) -> str | None:
    """One line for the start of a session whose runs would have no credential; None when
    the environment carries one."""
    if any((environ.get(name) or "").strip() for name in CREDENTIAL_VARIABLES):
        return None
    if any(_on(environ.get(name)) for name in PROVIDER_SWITCHES):
        return None
    if logged_in(environ, home):
        return (
            "claude: a /login session is not carried into the isolated runs, so they have no "
            f"credential: {SET_ONE}"
        )
    return f"claude: no credential for the runs: {SET_ONE}"
