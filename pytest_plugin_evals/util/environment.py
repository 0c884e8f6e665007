"""Which of the operator's environment variables an agent (or a judge) may see, and the
variables that point a process's home, temp and config folders into an isolated root.

Every agent gets the basics (:data:`BASE_NAMES`, the ``LC_*`` locale), the operator's
``EVAL_*`` settings (not one named like a secret: ``EVAL_TRACKER_TOKEN`` reaches only a case
that requires it) and what it names itself — its own endpoint and credential variables
(:class:`Passed`), never another agent's — plus the variables a case requires and those the
operator passes on purpose.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_plugin_evals.util.redact import SECRET_NAME

#: Variables every agent gets, by exact name: basics, locale, certificates, proxies.
BASE_NAMES = frozenset(
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
    }
)
BASE_PREFIXES = ("LC_",)

#: Never passed, whatever a prefix or --eval-env-pass says: these would point the agent outside
#: its sandbox, or hand it the key that signs what sessions keep.
BLOCKED_NAMES = frozenset({"CLAUDE_CONFIG_DIR", "CLAUDE_CODE_GIT_BASH_PATH", "EVAL_STAMP_KEY"})

EVAL_ENV_KEY = re.compile(r"^EVAL_[A-Z0-9_]*$")


@dataclass(frozen=True)
class Passed:
    """The operator variables one agent reads: by name, by prefix, and by prefix only while a
    switch variable is set (Claude Code's ``AWS_*`` under ``CLAUDE_CODE_USE_BEDROCK``)."""

    names: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    switched: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def prefixes_in(self, environ: Mapping[str, str]) -> tuple[str, ...]:
        found = list(self.prefixes)
        for switch, more in self.switched:
            if environ.get(switch, "") not in ("", "0", "false"):
                found.extend(more)
        return tuple(found)


#: What a judge or a model playing an MCP server may read: every provider's own variables
#: (it runs in the harness, never in a run's sandbox): OpenAI's, and Claude Code's (a cloud
#: provider's when selected), as its declaration lists them (``agents/claude/spec.yaml``).
JUDGES = Passed(
    names=frozenset({"OPENAI_BASE_URL", "OPENAI_API_KEY"}),
    prefixes=("ANTHROPIC_", "CLAUDE_CODE_"),
    switched=(
        ("CLAUDE_CODE_USE_BEDROCK", ("AWS_",)),
        ("CLAUDE_CODE_USE_VERTEX", ("GOOGLE_", "CLOUD_ML_", "VERTEX_")),
    ),
)


def operator_environment() -> dict[str, str]:
    """A copy of the operator's environment (``os.environ``) that holds while another thread
    sets or unsets a variable: pytest sets ``PYTEST_CURRENT_TEST`` in its thread at every test
    phase while runs made ahead read the environment in theirs. ``dict(os.environ)`` lists
    the names at once and then looks each up, so a name unset in between is a ``KeyError``;
    the copy is taken again then."""
    while True:
        try:
            return dict(os.environ)
        except KeyError:  # unset by another thread between the listing and the lookup
            continue


def allowed_environment(
    environ: Mapping[str, str],
    extra: Iterable[str] = (),
    passed: Passed = JUDGES,
) -> dict[str, str]:
    """The part of the operator's environment a process may see: the basics, what ``passed``
    names, and the ``extra`` names (a case's required secrets, ``--eval-env-pass``)."""
    extra_names = set(extra)
    prefixes = BASE_PREFIXES + passed.prefixes_in(environ)
    allowed: dict[str, str] = {}
    for key, value in environ.items():
        if key in BLOCKED_NAMES:
            continue
        if (
            key in BASE_NAMES
            or key in passed.names
            or key in extra_names
            or key.startswith(prefixes)
            or (key.startswith("EVAL_") and SECRET_NAME.search(key) is None)
        ):
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
