"""Which of the operator's environment variables an agent (or a judge) may see, and the
variables that point a process's home, temp and config folders into an isolated root."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

#: Variables passed through by exact name.
PASS_NAMES = frozenset(
    {
        "PATH",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "SYSTEMROOT",
        "COMSPEC",
        "PATHEXT",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
        # GitHub Copilot CLI: its model, offline switch, sign-in token and host.
        "COPILOT_MODEL",
        "COPILOT_OFFLINE",
        "COPILOT_GITHUB_TOKEN",
        "COPILOT_GH_HOST",
        # OpenAI Codex CLI: its endpoint and key (the adapter makes them its model provider).
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    }
)

#: Variables passed through by prefix: locale, provider credentials, model settings, and the
#: operator's own ``EVAL_*`` variables (as the reference passes them).
PASS_PREFIXES = ("LC_", "ANTHROPIC_", "CLAUDE_CODE_", "EVAL_", "COPILOT_PROVIDER_")

#: Cloud provider variables, passed only when the operator selected that provider.
_PROVIDER_PREFIXES = {
    "CLAUDE_CODE_USE_BEDROCK": ("AWS_",),
    "CLAUDE_CODE_USE_VERTEX": ("GOOGLE_", "CLOUD_ML_", "VERTEX_"),
}

#: Never passed, whatever the prefix says: these would point the agent outside its sandbox.
BLOCKED_NAMES = frozenset({"CLAUDE_CONFIG_DIR", "CLAUDE_CODE_GIT_BASH_PATH"})

EVAL_ENV_KEY = re.compile(r"^EVAL_[A-Z0-9_]*$")


def allowed_environment(environ: Mapping[str, str], extra: Iterable[str] = ()) -> dict[str, str]:
    """The part of the operator's environment an agent may see."""
    extra_names = set(extra)
    prefixes = list(PASS_PREFIXES)
    for switch, more in _PROVIDER_PREFIXES.items():
        if environ.get(switch, "") not in ("", "0", "false"):
            prefixes.extend(more)
    allowed: dict[str, str] = {}
    for key, value in environ.items():
        if key in BLOCKED_NAMES:
            continue
        if key in PASS_NAMES or key in extra_names or key.startswith(tuple(prefixes)):
            allowed[key] = value
    return allowed


def isolated_environment(
    base: Mapping[str, str], *, home: Path, tmp: Path, config: Path
) -> dict[str, str]:
    """``base`` (already filtered) with every home, temp and config variable pointed at the
    given folders, telemetry and auto-update off, git confined to ``home``."""
    env = dict(base)
    home_s, tmp_s = str(home), str(tmp)
    env.update(
        {
            "HOME": home_s,
            "USERPROFILE": home_s,
            "XDG_CONFIG_HOME": str(config),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "TMPDIR": tmp_s,
            "TMP": tmp_s,
            "TEMP": tmp_s,
            "CLAUDE_CONFIG_DIR": str(config),
            "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "",
            "NO_COLOR": "1",
        }
    )
    return env
