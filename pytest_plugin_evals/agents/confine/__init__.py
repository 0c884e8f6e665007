"""Confine an agent process: one sandbox, built from an allow-list, for every agent that runs
tools.

A confined run starts inside bubblewrap with namespaces of its own — user (every capability
dropped; a run started by root is an unprivileged user inside), PID (its own ``/proc``: no
host process can be seen, read or signalled; everything it started ends when it ends, daemons
included), network (loopback only, its endpoints forwarded: :mod:`.network`), IPC and UTS, a
new session — and a file system made of what it may see and nothing else:

- read-only: the system's folders (``/usr``, ``/etc`` without its secrets, the ``/bin`` and
  ``/lib`` links), the tools on ``PATH``, the agent's own install, the plugin under test (with
  arm), the case's ``add_dirs``, and what the run's MCP servers need;
- writable: the run's own home (its working directory is inside), config and temporary
  folder — which is ``/tmp`` inside, on disk in the run's folder;
- nothing else: not the folder pytest runs in, not the repository around the plugin, not the
  operator's home, not ``XDG_RUNTIME_DIR`` or ``/run``, not other runs' or users' temporary
  files, not ``/etc/shadow``.

Bounds (:mod:`.bounds`) hold its memory, processes, file sizes and folders. Only argv and the
run's environment are built here; the adapter runs them through
:mod:`pytest_plugin_evals.util.process`.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pytest_plugin_evals.agents.confine import seccomp
from pytest_plugin_evals.agents.confine.available import problem, tool_path
from pytest_plugin_evals.agents.confine.bounds import (
    DEFAULT_BOUNDS,
    Bounds,
    Watchdog,
    limits,
    show_size,
)
from pytest_plugin_evals.agents.confine.cgroup import RunCgroup
from pytest_plugin_evals.agents.confine.network import (
    PROXY_VARIABLES,
    Endpoint,
    NetPlan,
    launcher_script,
    plan_network,
    sockets_dir,
)
from pytest_plugin_evals.util.process import ProcessResult, run_process

__all__ = [
    "DEFAULT_BOUNDS",
    "Bounds",
    "Confined",
    "Confinement",
    "Endpoint",
    "problem",
    "show_size",
]

#: TMPDIR inside a run: this folder of its /tmp.
TMPDIR_NAME = "run"
#: ``/dev/shm`` inside a run: this folder of its /tmp (on disk, counted by its bounds).
SHM_NAME = ".shm"
INSIDE_TMPDIR = Path("/tmp") / TMPDIR_NAME

#: The user a run started by root is inside its sandbox (an unprivileged one).
ROOT_INSIDE = 65534

#: Files of ``/etc`` a run never reads, even when its user could.
ETC_SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/security/opasswd",
)
#: Folders of ``/etc`` shown empty.
ETC_SECRET_FOLDERS = ("/etc/sudoers.d", "/etc/ssl/private")

#: Top-level system folders, shown read-only (or as the links they are).
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FOLDERS = ("/usr", "/etc", "/nix/store")


@dataclass(frozen=True)
class Confinement:
    """What one agent process may see, reach and use."""

    #: Shown read-only (beside the system's folders).
    read: tuple[Path, ...] = ()
    #: Shown writable: the run's own folders, and sockets it connects to.
    write: tuple[Path, ...] = ()
    #: The run's temporary folder: ``/tmp`` inside.
    tmp: Path | None = None
    cwd: Path | None = None
    #: The TCP endpoints it may reach (its model's, its MCP servers').
    endpoints: tuple[Endpoint, ...] = ()
    bounds: Bounds = DEFAULT_BOUNDS
    #: Shown empty although inside something shown: the evals folder and the results in a
    #: plugin under test, its repository (``.git``), its ``.env`` files.
    hide: tuple[Path, ...] = ()
    #: The agent runs a sandbox of its own inside this one (it needs user namespaces).
    nests: bool = False
    #: Names the run's sockets and cgroup (the run's token).
    tag: str = "run"


def tools_on_path(path: str | None, hidden: Iterable[Path]) -> list[Path]:
    """The folders of ``PATH`` a run may read (so its commands are found where they are):
    absolute, existing, and none that is, or holds, a folder it must not see (the project,
    the operator's home); with each, the installation a version manager runs its tools from
    (:func:`tool_installs`)."""
    hidden = [h for h in (_real(p) for p in hidden) if h is not None]
    found: list[Path] = []
    for entry in (path or "").split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        real = _real(Path(entry))
        if real is None or _kind(real) != "dir" or real == Path("/"):
            continue
        if any(h == real or h.is_relative_to(real) for h in hidden):
            continue
        found.append(real)
        found.extend(p for p in tool_installs(real) if not any(h.is_relative_to(p) for h in hidden))
    return list(dict.fromkeys(found))


def tool_installs(entry: Path) -> list[Path]:
    """What the commands in a ``PATH`` folder need beside it: a version manager's root for its
    ``shims`` (pyenv, rbenv, nodenv, asdf: the shims run its versions), the version folder of
    a ``…/versions/<tool>/<version>/bin`` (nvm), and rustup's toolchains for ``~/.cargo/bin``
    — never the rest of a home (``~/.cargo``'s credentials, ``~/.local``)."""
    if entry.name == "shims":
        root = entry.parent
        while root.parent.name == "plugins":  # a plugin's shims: <root>/plugins/<name>/shims
            root = root.parent.parent
        return [root]
    if entry.name == "bin" and any(part == "versions" for part in entry.parts[-4:-1]):
        return [entry.parent]
    if entry.name == "bin" and entry.parent.name == ".cargo":
        rustup = entry.parent.parent / ".rustup"
        return [rustup] if _kind(rustup) == "dir" else []
    return []


def install_root(binary: str) -> Path:
    """What of a CLI's install a run must see: for ``…/node_modules/.bin/x`` (a link into its
    package) the whole ``node_modules``, else the binary itself."""
    path = Path(binary)
    for candidate in (path, path.resolve()):
        for parent in candidate.parents:
            if parent.name == "node_modules":
                return parent
    return path.resolve()


def _real(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _kind(path: Path) -> str | None:
    """``dir``, ``file`` (anything else that exists) or None when it does not exist or this
    user may not look (a folder in another user's home)."""
    try:
        return "dir" if path.is_dir() else "file" if os.path.lexists(path) else None
    except OSError:
        return None


def _inside_system(path: Path) -> bool:
    return any(path.is_relative_to(s) for s in ("/usr", "/etc"))


def mount_args(confinement: Confinement) -> list[str]:
    """bubblewrap's file-system arguments for ``confinement``: the system, the run's ``/tmp``
    (first: what follows may be under the host's ``/tmp``), what it may read, then its own
    folders, each shown at the path it has outside (later ones win). No tmpfs stays
    writable (their pages would be memory no bound counts): the root, ``/dev`` and the folders
    shown empty are made read-only last, and ``/dev/shm`` is a folder of the run's ``/tmp``,
    on disk (read-only without one)."""
    args = ["--proc", "/proc", "--dev", "/dev"]
    if confinement.tmp is not None:
        args += ["--bind-try", str(confinement.tmp / SHM_NAME), "/dev/shm"]
    read_only = ["/dev", *(f for f in ETC_SECRET_FOLDERS if os.path.isdir(f))]
    for link in SYSTEM_LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    for folder in SYSTEM_FOLDERS:
        if os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    for secret in ETC_SECRETS:
        if os.path.isfile(secret):
            args += ["--ro-bind", "/dev/null", secret]
    for folder in ETC_SECRET_FOLDERS:
        if os.path.isdir(folder):
            args += ["--tmpfs", folder]
    if confinement.tmp is not None:
        # First: what follows may live under the host's /tmp, and is shown on top of it.
        args += ["--bind", str(confinement.tmp), "/tmp"]
    # What it may read, and what it may not inside that, shallowest first: a folder hidden
    # inside a shown one (the evals folder in the plugin) is emptied, and a folder shown inside
    # a hidden one (an add_dirs folder in the case) is shown again on top.
    layers = sorted(
        {
            *((p, "read") for p in (_real(q) for q in confinement.read) if p is not None),
            *((p, "hide") for p in (_real(q) for q in confinement.hide) if p is not None),
        },
        key=lambda layer: (len(layer[0].parts), layer[1] == "read", str(layer[0])),
    )
    shown: list[Path] = []
    hidden: list[Path] = []
    for path, layer in layers:
        kind = _kind(path)
        if kind is None or path == Path("/"):
            continue
        under = _last_layer(path, shown, hidden)
        if layer == "read":
            if _inside_system(path) or (under == "read" and kind == "dir"):
                continue  # already shown
            shown.append(path)
            args += ["--ro-bind", str(path), str(path)]
        elif under == "read":  # hide what is shown; what is not shown needs no hiding
            hidden.append(path)
            if kind == "dir":
                args += ["--tmpfs", str(path)]
                read_only.append(str(path))
            else:
                args += ["--ro-bind", "/dev/null", str(path)]
    for path in confinement.write:
        real = _real(path)
        if real is None or _kind(real) is None:
            continue
        args += ["--bind", str(real), str(real)]
    for folder in (*read_only, "/"):
        args += ["--remount-ro", folder]
    if confinement.cwd is not None:
        args += ["--chdir", str(confinement.cwd)]
    return args


def _last_layer(path: Path, shown: Sequence[Path], hidden: Sequence[Path]) -> str | None:
    """Whether the deepest layer so far that holds ``path`` shows it (``read``), hides it
    (``hide``), or none holds it."""
    best: tuple[int, str] | None = None
    for kind, folders in (("read", shown), ("hide", hidden)):
        for folder in folders:
            if path.is_relative_to(folder) and (best is None or len(folder.parts) > best[0]):
                best = (len(folder.parts), kind)
    if best is None:
        return "read" if _inside_system(path) else None
    return best[1]


def bwrap_argv(confinement: Confinement, launcher: str, argv: Sequence[str]) -> list[str]:
    """``argv`` run inside bubblewrap as ``confinement`` says, started by ``launcher``."""
    out = [
        tool_path("bwrap"),
        "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--hostname", "plugin-eval",
        "--die-with-parent", "--new-session", "--cap-drop", "ALL",
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        out += ["--uid", str(ROOT_INSIDE), "--gid", str(ROOT_INSIDE)]
    if not confinement.nests:
        out.append("--disable-userns")
    out += mount_args(confinement)
    return [*out, "--", "/bin/sh", "-c", launcher, "sh", *argv]


@dataclass
class Confined:
    """A process ready to start confined: its argv and environment, the watchdog the harness
    calls while it runs, and what :meth:`close` ends after."""

    argv: list[str]
    env: dict[str, str]
    watchdog: Watchdog
    network: NetPlan | None = None
    cgroup: RunCgroup | None = None
    notes: list[str] = field(default_factory=list)

    def close(self) -> list[str]:
        """End the run's listeners and cgroup; notes for the run (what it was refused)."""
        notes = list(self.notes)
        if self.network is not None:
            notes += [
                where
                if where.startswith("network: ")
                else f"network: {where} refused (not an endpoint of this run)"
                for where in self.network.close()
            ]
            notes += self.network.crowd()
        if self.cgroup is not None:
            self.cgroup.remove()
        return notes

    def run(
        self,
        *,
        stdin_text: str,
        cwd: Path,
        timeout: float,
        out_dir: Path,
        json_lines: bool = False,
        stop_on: Callable[[bytes], bool] | None = None,
    ) -> ProcessResult:
        """Run it (once), watched; the result names the bound it went over, and its notes
        hold the sandbox's. The listeners and the cgroup end with it."""
        try:
            result = run_process(
                self.argv,
                stdin_text=stdin_text,
                cwd=cwd,
                env=self.env,
                timeout=timeout,
                out_dir=out_dir,
                json_lines=json_lines,
                stop_on=stop_on,
                watch=self.watchdog.check,
                on_start=self.watchdog.attach,
            )
            went_over = self.watchdog.went_over()
        finally:
            notes = self.close()
        return replace(result, bound=result.bound or went_over, notes=(*result.notes, *notes))


def prepare(confinement: Confinement, argv: Sequence[str], env: Mapping[str, str]) -> Confined:
    """Make ``argv`` ready to run confined: open its network's listeners, make its cgroup,
    build its command line and environment. OSError when a listener cannot be made."""
    network = plan_network(confinement.endpoints, sockets_dir(), confinement.tag)
    run_env = {k: v for k, v in env.items() if k not in PROXY_VARIABLES}
    run_env.update(network.env)
    if confinement.tmp is not None:
        # Inside, the run's temporary folder is /tmp; TMPDIR a folder in it, since an agent
        # may refuse to keep its own files under TMPDIR (Codex: its helpers in CODEX_HOME,
        # which is under the host's /tmp when the run's folders are).
        for name in (TMPDIR_NAME, SHM_NAME):
            (confinement.tmp / name).mkdir(exist_ok=True)
        inside = str(INSIDE_TMPDIR)
        run_env.update({"TMPDIR": inside, "TMP": inside, "TEMP": inside})
    sockets = [listener.path for listener in network.listeners]
    with_sockets = Confinement(
        read=confinement.read,
        write=(*confinement.write, *sockets),
        hide=confinement.hide,
        tmp=confinement.tmp,
        cwd=confinement.cwd,
        endpoints=confinement.endpoints,
        bounds=confinement.bounds,
        nests=confinement.nests,
        tag=confinement.tag,
    )
    launcher = launcher_script(
        network.forwards,
        limits(confinement.bounds),
        socat=tool_path("socat"),
        prlimit=tool_path("prlimit"),
    )
    with_sockets = replace(
        with_sockets,
        read=(*with_sockets.read, *(Path(tool_path(t)) for t in ("socat", "prlimit"))),
    )
    full = seccomp.with_filter(
        bwrap_argv(with_sockets, launcher, argv), sockets_dir(), confinement.nests
    )
    bounds = confinement.bounds
    cgroup = RunCgroup.make(f"plugin-evals-{confinement.tag}", bounds.processes, bounds.memory)
    if cgroup is not None:
        # Joined before bubblewrap starts, so that every process of the run is in it.
        join = " && ".join(f"echo $$ > {shlex.quote(str(p))}" for p in cgroup.procs)
        full = ["/bin/sh", "-c", f'{join} && exec "$@"', "sh", *full]
    folders = [p for p in (confinement.tmp, *confinement.write) if p is not None]
    watchdog = Watchdog(
        confinement.bounds, [p for p in folders if _kind(p) == "dir"], cgroup=cgroup
    )
    return Confined(full, run_env, watchdog, network=network, cgroup=cgroup)


def remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        shutil.rmtree(path)
