"""Confine a whole agent process with bubblewrap: what it may read and write on the machine.

Claude Code confines its own shell (its ``sandbox`` settings, see ``agents/claude/shell.py``).
The other agent CLIs either confine no reads at all (codex's sandbox limits writes and network,
not reads) or nothing, and every one of them has a shell. So their adapters run the CLI itself
inside a bubblewrap mount namespace built from a :class:`Confinement`:

the whole file system read-only (``--ro-bind / /``), with a fresh ``/dev`` and ``/proc``, then
layers in order, each winning over the ones before (bubblewrap makes the mount points it
needs): ``hide`` a folder (an empty one in its place: the operator's home, the project the
session runs in, the system temp folder where other runs live), ``read`` one (shown again,
read-only: the CLI's own install, the plugin in the with arm, a case's ``add_dirs``), ``write``
one (the run's own home, cwd, config and tmp). :func:`for_run` builds a run's. The network
is left alone (the agent must reach its model). Only argv is built here: the adapter runs it
through :mod:`pytest_plugin_evals.util.process`.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_plugin_evals.agents.base import RunRequest

#: Said when bubblewrap cannot be used (one line, with what to install).
UNAVAILABLE = (
    "cannot confine the agent: bubblewrap (bwrap) was not found — install it (Debian/Ubuntu: "
    "apt install bubblewrap), or pass --eval-unconfined-shell to run the agent unconfined on "
    "purpose"
)
#: Said on a system without Linux namespaces.
UNSUPPORTED = (
    "cannot confine the agent on this system (bubblewrap needs Linux); pass "
    "--eval-unconfined-shell to run it unconfined on purpose"
)


#: What a layer does to a folder: ``hide`` (an empty folder in its place), ``read`` (shown,
#: read-only) or ``write`` (shown, writable).
Layer = tuple[str, Path]


@dataclass(frozen=True)
class Confinement:
    """What one run of an agent CLI may see: layers over a read-only root, the later ones
    winning (see the module's docstring)."""

    layers: Sequence[Layer] = field(default_factory=tuple)


def problem(bwrap: str | None = None) -> str | None:
    """Why agent processes cannot be confined here (None when they can)."""
    if not sys.platform.startswith("linux"):
        return UNSUPPORTED
    if (bwrap or shutil.which("bwrap")) is None:
        return UNAVAILABLE
    return None


def _paths(paths: Iterable[Path], *, folders_only: bool) -> list[Path]:
    """The existing folders (and files or sockets, unless ``folders_only``) among ``paths``,
    resolved, each once, in order; never the root itself."""
    seen: dict[Path, None] = {}
    for path in paths:
        try:
            real = path.resolve()
        except OSError:
            continue
        shown = real.is_file() or real.is_socket()
        if real == Path("/") or not (real.is_dir() or (shown and not folders_only)):
            continue
        seen.setdefault(real, None)
    return list(seen)


def install_root(binary: str) -> Path:
    """What of a CLI's install to show again when it sits in a hidden folder: for
    ``…/node_modules/.bin/x`` (a link into its package) the whole ``node_modules``, else the
    binary itself (its folder may be a project holding the evals)."""
    path = Path(binary)
    for candidate in (path, path.resolve()):
        for parent in candidate.parents:
            if parent.name == "node_modules":
                return parent
    return path.resolve()


def confined_argv(
    argv: Sequence[str], confinement: Confinement, *, bwrap: str = "bwrap"
) -> list[str]:
    """``argv`` run inside bubblewrap as ``confinement`` says."""
    out = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        # No --new-session: run_process starts bwrap as the leader of a session of its own
        # (no terminal), and the whole tree must stay in its process group to be killed.
        "--die-with-parent",
    ]  # fmt: skip
    flags = {"hide": "--tmpfs", "read": "--ro-bind", "write": "--bind"}
    done: list[Layer] = []
    for kind, path in confinement.layers:
        for folder in _paths([path], folders_only=kind == "hide"):
            if kind == "hide" and _hidden(folder, done):
                continue  # a mount point in an emptied folder would show its name
            done.append((kind, folder))
            mount = [str(folder)] if kind == "hide" else [str(folder), str(folder)]
            out += [flags[kind], *mount]
    return [*out, "--", *argv]


def _hidden(folder: Path, done: Sequence[Layer]) -> bool:
    """Whether ``folder`` is already hidden: the last layer so far that holds it hides."""
    for kind, earlier in reversed(done):
        if folder.is_relative_to(earlier):
            return kind == "hide"
    return False


def for_run(
    request: RunRequest,
    binary: str,
    *,
    also_readable: Sequence[Path] = (),
    also_writable: Sequence[Path] = (),
    also_hidden: Sequence[Path] = (),
) -> Confinement:
    """What a run of an agent CLI may see: its run's home, cwd, config and tmp (writable); the
    CLI's install, the plugin in the with arm, the case's ``add_dirs`` and ``also_readable``
    (read-only); ``also_writable`` (the run's socket on the mock host); not the operator's
    home, the project, the system temp folder (other runs), ``also_hidden`` (the mock host's
    folder, which holds other runs' sockets), the run's ``out`` folder, the evals folder or
    the case (unless the plugin of the with arm is inside them)."""

    from pytest_plugin_evals.agents.workspace import original_add_dirs

    box = request.sandbox
    case = request.case
    layers: list[Layer] = [
        ("hide", Path.home()),
        ("hide", Path.cwd()),
        ("hide", Path(tempfile.gettempdir())),
        *(("hide", p) for p in also_hidden),
    ]
    # Tools on PATH stay runnable where they are (a node under ~/.nvm, ~/.local/bin).
    layers += [("read", Path(p)) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    if request.plugin_dir is not None:
        layers.append(("read", request.plugin_dir))
    elif case.suite_root.parent != Path(case.suite_root.anchor):
        layers.append(("hide", case.suite_root.parent))  # the plugin, in the without arm
    # The evals folder and the case are hidden, unless the plugin is in them (a package.json
    # suite at the plugin's root): the with arm must see its plugin.
    plugin = request.plugin_dir.resolve() if request.plugin_dir is not None else None
    layers += [
        ("hide", folder)
        for folder in (case.suite_root, case.dir)
        if plugin is None or not plugin.is_relative_to(folder.resolve())
    ]
    layers.append(("read", install_root(binary)))
    layers += [("read", p) for p in (*original_add_dirs(request), *also_readable)]
    layers += [("write", p) for p in (box.home, box.cwd, box.config, box.tmp, *also_writable)]
    return Confinement(tuple(layers))
