"""Confining a granted shell (Bash, PowerShell) with Claude Code's own sandbox.

A run that may use a shell gets, in its user settings, a ``sandbox`` block: every command the
model runs goes through Claude Code's sandbox (bubblewrap and socat on Linux, Seatbelt on
macOS), which it refuses to run without (``failIfUnavailable``). What a command may touch:

- write: the run's ``home/`` (its working directory is inside) and ``tmp/``, nothing else —
  not the run's ``config/`` and ``out/``, not the repository's ``.git/config`` and hooks;
  writes elsewhere fail, or land in a throw-away layer that the real disk never sees;
- read: the system (``/usr``, ``/etc`` …) and the run's own folders, its plugin's ``skills/``
  and its ``add_dirs`` (the copies, and the folders where they are: an ``allowRead`` opens a
  folder inside a ``denyRead`` one), and the tools on PATH; not the operator's home, the
  system temp folder (other runs live there), the project the session runs in, the plugin, the
  evals folder or the case (apart from its ``add_dirs``);
- network: none (no domain is allowed);
- environment: credential variables (the model's key, cloud and registry tokens) are hidden.

Pure: :func:`sandbox_settings` builds the block, :func:`missing_backend` says what is missing.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents.credentials import credential_names
from pytest_plugin_evals.agents.permissions import base_tool

#: The tools that run shell commands.
SHELL_TOOLS = frozenset({"Bash", "PowerShell"})


#: The one line of a run refused for want of a sandbox.
UNAVAILABLE = (
    "a shell tool ({tools}) was granted but this machine cannot confine it: {why} — install "
    "it, drop the grant, or pass --eval-unconfined to run it unconfined on purpose"
)


def shell_tools(allowed: Iterable[str]) -> list[str]:
    """The shell tools among a run's allowed tool rules (``Bash``, ``Bash(npm test *)`` …)."""
    return sorted({base_tool(entry) for entry in allowed} & SHELL_TOOLS)


def missing_backend(path: str | None) -> str | None:
    """What the sandbox lacks on this machine (one phrase), or None when it can run."""
    if sys.platform == "darwin":
        return None  # Seatbelt is part of macOS
    if not sys.platform.startswith("linux"):
        return f"Claude Code has no command sandbox on {sys.platform}"
    missing = [tool for tool in ("bwrap", "socat") if shutil.which(tool, path=path) is None]
    if not missing:
        return None
    names = {"bwrap": "bubblewrap (bwrap)", "socat": "socat"}
    return (
        " and ".join(names[m] for m in missing)
        + (" is" if len(missing) == 1 else " are")
        + " not installed (apt install bubblewrap socat)"
    )


def _readable_folder(path: Path) -> bool:
    """Whether ``path`` is a folder this user can look into (not one in another's home)."""
    try:
        return path.is_dir() and os.access(path, os.R_OK | os.X_OK)
    except OSError:
        return False


def _both(path: Path) -> list[Path]:
    """A path as given and where it really is (a rule must name both to hold)."""
    real = path.resolve()
    return [path] if real == path else [path, real]


def _unique(paths: Iterable[Path]) -> list[str]:
    return list(dict.fromkeys(str(p) for p in paths))


class ShellRefused(Exception):
    """The shell cannot be confined on this machine; the message is the one line to show."""


def sandbox_settings(
    *,
    home: Path,
    tmp: Path,
    config: Path,
    out: Path,
    cwd: Path,
    read_also: Iterable[Path],
    hidden: Iterable[Path],
    env: Mapping[str, str],
    nested: bool = False,
) -> dict[str, Any]:
    """The ``sandbox`` block of a run's settings.

    ``read_also`` are folders a command may read besides the run's home and tmp (the plugin's
    skills, the add_dirs copies and originals), even inside a hidden folder; ``hidden`` are
    folders it may not read (the operator's home, the project, the plugin, the evals folder) —
    the system temp folder is always hidden, unless the run is ``nested`` in the harness's own
    sandbox, where ``/tmp`` is the run's own and the rest is not there at all. Tools on PATH
    inside a hidden folder stay readable, so commands still find them. Nested in a sandbox
    that root started, Claude Code's cannot mount a fresh ``/proc`` (the outer one covers
    parts of its own): it runs in its weaker nested mode, which the outer sandbox's own PID
    namespace makes up for (no host process is there to see).
    """
    deny_read = [
        *([] if nested else _both(Path(tempfile.gettempdir()))),
        *(q for h in hidden for q in _both(h)),
    ]
    runtime = os.environ.get("XDG_RUNTIME_DIR") or (
        f"/run/user/{os.getuid()}" if hasattr(os, "getuid") else ""
    )
    if runtime:
        deny_read.append(Path(runtime))
    deny_read = [p for p in deny_read if p != Path(p.anchor)]
    if not deny_read:
        raise ShellRefused("no folder to hide was found")
    tools = [
        Path(entry)
        for entry in env.get("PATH", "").split(os.pathsep)
        if entry and Path(entry).is_absolute() and _readable_folder(Path(entry))
        and any(Path(entry).resolve().is_relative_to(h) for h in deny_read)
    ]  # fmt: skip
    writable = [home, tmp]
    readable = [*writable, *read_also, *tools]
    git_dir = cwd / ".git"
    weaker = nested and hasattr(os, "geteuid") and os.geteuid() == 0
    return {
        **({"enableWeakerNestedSandbox": True} if weaker else {}),
        "enabled": True,
        "failIfUnavailable": True,
        "autoAllowBashIfSandboxed": False,
        "allowUnsandboxedCommands": False,
        "filesystem": {
            "allowWrite": _unique(q for p in writable for q in _both(p)),
            "denyWrite": _unique(
                q for p in (config, out, git_dir / "config", git_dir / "hooks") for q in _both(p)
            ),
            "denyRead": _unique([*deny_read, *_both(config), *_both(out)]),
            "allowRead": _unique(q for p in readable for q in _both(p)),
        },
        "network": {"allowedDomains": []},
        "credentials": {
            "envVars": [{"name": name, "mode": "deny"} for name in credential_names(env)]
        },
    }
