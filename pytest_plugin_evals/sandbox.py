"""A run's isolated folders and environment.

Each run gets a fresh root holding ``config/``, ``home/`` (the working directory ``home/cwd``
is inside it), ``tmp/`` and ``out/``. HOME, the XDG folders, TMPDIR and the agent's config
folder point there, and only an allowlist of the operator's environment reaches the agent.
This module makes folders and dictionaries; it starts no process.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
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
    }
)

#: Variables passed through by prefix: locale, provider credentials, model settings, and the
#: operator's own ``EVAL_*`` variables (as the reference passes them).
PASS_PREFIXES = ("LC_", "ANTHROPIC_", "CLAUDE_CODE_", "EVAL_")

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


@dataclass
class Sandbox:
    """The folders of one run."""

    root: Path
    config: Path = field(init=False)
    home: Path = field(init=False)
    cwd: Path = field(init=False)
    tmp: Path = field(init=False)
    out: Path = field(init=False)
    _before: frozenset[str] = field(init=False, default=frozenset())

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        self.config = self.root / "config"
        self.home = self.root / "home"
        self.cwd = self.home / "cwd"
        self.tmp = self.root / "tmp"
        self.out = self.root / "out"

    @classmethod
    def create(cls, root: Path) -> Sandbox:
        box = cls(root)
        for folder in (box.config, box.home, box.cwd, box.tmp, box.out):
            folder.mkdir(parents=True, exist_ok=True)
        return box

    @property
    def trace_file(self) -> Path:
        return self.out / "trace.jsonl"

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` (already filtered) with every home, temp and config variable pointed here."""
        env = dict(base)
        home, tmp = str(self.home), str(self.tmp)
        env.update(
            {
                "HOME": home,
                "USERPROFILE": home,
                "XDG_CONFIG_HOME": str(self.config),
                "XDG_CACHE_HOME": str(self.home / ".cache"),
                "XDG_DATA_HOME": str(self.home / ".local" / "share"),
                "XDG_STATE_HOME": str(self.home / ".local" / "state"),
                "TMPDIR": tmp,
                "TMP": tmp,
                "TEMP": tmp,
                "CLAUDE_CONFIG_DIR": str(self.config),
                "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": str(self.home / ".gitconfig"),
                "GIT_TERMINAL_PROMPT": "0",
                "GIT_ASKPASS": "",
                "NO_COLOR": "1",
            }
        )
        return env

    def snapshot(self) -> None:
        """Remember which files exist now: they are not "created during the run"."""
        self._before = frozenset(self.list_files())

    def list_files(self) -> list[str]:
        """Every file under the cwd, relative and ``/``-separated (``.git`` skipped)."""
        found: list[str] = []
        base = str(self.cwd)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            rel = os.path.relpath(dirpath, base)
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            found.extend(prefix + name for name in filenames)
        return found

    def created_files(self) -> list[str]:
        """Files that exist now and did not at the last snapshot, sorted."""
        return sorted(set(self.list_files()) - self._before)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
