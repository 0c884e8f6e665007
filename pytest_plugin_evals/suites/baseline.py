"""The baseline arm's plugin (``--eval-baseline-plugin``), resolved: a plugin folder loaded where
it is, or the plugin's own folder as the commit ``REF`` of its git repository holds it (the
same subfolder when the plugin does not sit at the top of its repository).

That tree is checked out once per session, through an index of its own (the repository, its
index and its worktrees are never touched), into the folder the session's processes share: the
first process that needs it makes it under a lock and every other uses that copy. What each
baseline resolved to is written beside it (:func:`resolved`), for the session's document. git
runs through :mod:`pytest_plugin_evals.util.process`; a value the option does not accept, or a
baseline that cannot be had, is one :class:`BaselineError` line naming the option.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import BaselinePlugin, LoadError, PluginInfo
from pytest_plugin_evals.suites.manifest import read_plugin
from pytest_plugin_evals.util import locks
from pytest_plugin_evals.util.environment import operator_environment
from pytest_plugin_evals.util.process import run_to_end

FLAG = "--eval-baseline-plugin"
GIT_PREFIX = "git:"
#: In the session's shared folder: the baseline copies and what each resolved to.
FOLDER = "baseline"
#: In the session's shared folder: why a worker could not have the baseline.
PROBLEM_FILE = "baseline-problem.txt"
#: Seconds a git command may take.
GIT_TIMEOUT = 300

#: Variables that would point git at another repository, index or object store than the one
#: the plugin lives in (set when pytest runs from a git hook, say).
_GIT_LOCATION = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)


class BaselineError(Exception):
    """Why the baseline plugin cannot be had: one line, naming the option."""


class Baselines:
    """The baseline of each plugin under test under ``spec`` (resolved once per process,
    under ``folder``), or why it cannot be had."""

    def __init__(self, spec: str, folder: Path) -> None:
        self.spec, self.folder = spec, folder
        self.found: dict[str, PluginInfo | str] = {}

    def of(self, plugin: PluginInfo) -> PluginInfo | None:
        """The plugin the baseline arm of ``plugin``'s cases loads (None: see :meth:`problem`)."""
        key = str(plugin.path)
        if key not in self.found:
            try:
                self.found[key] = resolve(self.spec, plugin, self.folder)
            except BaselineError as exc:
                self.found[key] = str(exc)
        found = self.found[key]
        return found if isinstance(found, PluginInfo) else None

    def problem(self) -> str | None:
        """The first reason a baseline could not be had, if any."""
        return next((f for f in self.found.values() if isinstance(f, str)), None)


def resolve(spec: str, plugin: PluginInfo, folder: Path) -> PluginInfo:
    """The baseline plugin of ``plugin`` under ``spec``, made (once) under ``folder``, and what
    it resolved to written beside it (see :func:`resolved`)."""
    folder.mkdir(parents=True, exist_ok=True)
    if not spec.startswith(GIT_PREFIX):
        where = Path(spec)
        key = "folder-" + _digest(spec)
        found = _read_plugin(where, f"{FLAG} {spec}")
        _write_info(folder, key, BaselinePlugin(spec, found.name, found.version, spec))
        return found
    ref = spec[len(GIT_PREFIX) :]
    named = f"{FLAG} {spec}"
    top = Path(
        _git(plugin.path, ["rev-parse", "--show-toplevel"], named, _not_a_repo(spec, plugin))
    )
    try:
        rel = plugin.path.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        raise BaselineError(_not_a_repo(spec, plugin)) from None
    commit = _git(
        top,
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
        named,
        f"{named}: no commit {ref!r} in the git repository {top}",
    )
    short = commit[:12]
    inside = "" if rel == "." else f"{rel}/"
    tree = f"{commit}:{inside}"
    shown = "the top of the repository" if rel == "." else inside
    kind = _git(top, ["cat-file", "-t", tree], named, f"{named}: {shown} is not in {ref} ({short})")
    if kind != "tree":
        raise BaselineError(f"{named}: {shown} is not a folder in {ref} ({short})")
    _git(
        top,
        ["cat-file", "-e", f"{tree}.claude-plugin/plugin.json"],
        named,
        f"{named}: {shown} in {ref} ({short}) is not a plugin (no .claude-plugin/plugin.json)",
    )
    key = f"{short}-{_digest(rel)}"
    dest = folder / key
    with _lock(folder / f"{key}.lock"):
        if not dest.is_dir():
            _check_out(top, tree, dest, named)
    for part in (".claude-plugin", ".claude-plugin/plugin.json"):
        if (dest / part).is_symlink():  # what it leads to is the operator's, not the commit's
            raise BaselineError(
                f"{named}: {inside}{part} in {ref} ({short}) is a symbolic link: a plugin's "
                "manifest must be a file of the commit"
            )
    found = _read_plugin(dest, f"{named} ({short})")
    _write_info(folder, key, BaselinePlugin(spec, found.name, found.version, rel, commit))
    return found


def resolved(folder: Path) -> tuple[BaselinePlugin, ...]:
    """What the session's baselines resolved to (in any of its processes), in a stable order."""
    found: list[BaselinePlugin] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, Mapping):
            found.append(
                BaselinePlugin(
                    spec=str(doc.get("spec", "")),
                    name=str(doc.get("name", "")),
                    version=_opt(doc.get("version")),
                    path=str(doc.get("path", "")),
                    commit=_opt(doc.get("commit")),
                )
            )
    return tuple(sorted(found, key=lambda b: (b.path, b.name, b.commit or "")))


def _opt(value: Any) -> str | None:
    return str(value) if isinstance(value, str) and value else None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def _not_a_repo(spec: str, plugin: PluginInfo) -> str:
    return f"{FLAG} {spec}: the plugin {plugin.name} at {plugin.path} is not in a git repository"


def _read_plugin(folder: Path, named: str) -> PluginInfo:
    try:
        return read_plugin(folder)
    except LoadError as exc:
        raise BaselineError(f"{named}: {exc.message}") from None


def _write_info(folder: Path, key: str, info: BaselinePlugin) -> None:
    doc = {
        "spec": info.spec,
        "name": info.name,
        "version": info.version,
        "path": info.path,
        "commit": info.commit,
    }
    draft = folder / f"{key}.json.{os.getpid()}"
    draft.write_text(json.dumps(doc), encoding="utf-8")
    os.replace(draft, folder / f"{key}.json")


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in operator_environment().items() if k not in _GIT_LOCATION}
    env.update(extra)
    return env


def _git(
    where: Path,
    args: list[str],
    named: str,
    failure: str,
    env: dict[str, str] | None = None,
    *,
    detail: bool = False,
) -> str:
    """git's output (stripped); :class:`BaselineError` ``failure`` when it fails (followed by
    git's own first line, when ``detail``: a failure that our sentence cannot explain)."""
    argv = ["git", "-C", str(where), *args]
    try:
        done = run_to_end(argv, env=env if env is not None else _environment(), timeout=GIT_TIMEOUT)
    except FileNotFoundError:
        raise BaselineError(f"{named}: git was not found on PATH") from None
    except TimeoutError:
        raise BaselineError(f"{named}: git {args[0]} took over {GIT_TIMEOUT}s") from None
    if done.returncode != 0:
        said = next((line.strip() for line in done.stderr.splitlines() if line.strip()), "")
        raise BaselineError(f"{failure}: {said}" if detail and said else failure)
    return done.stdout.strip()


def _check_out(top: Path, tree: str, dest: Path, named: str) -> None:
    """Write ``tree`` (``<commit>:<subfolder>``) of the repository at ``top`` into ``dest``,
    as a checkout would (filters, line endings, modes), through a private index."""
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        env = _environment(GIT_INDEX_FILE=str(staging / "index"))
        failure = f"{named}: cannot check out {tree}"
        _git(top, ["read-tree", tree], named, failure, env, detail=True)
        target = staging / "plugin"
        checkout = ["checkout-index", "--all", "--force", f"--prefix={target}{os.sep}"]
        _git(top, checkout, named, failure, env, detail=True)
        try:
            os.replace(target, dest)
        except OSError:
            if not dest.is_dir():  # else another process made it first (no lock on Windows)
                raise BaselineError(f"{named}: cannot check out {tree} into {dest}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    """One process at a time (the copy is made once per session, whichever makes it; Windows
    has no flock: the copy is still made whole, then moved into place at once)."""
    with path.open("a", encoding="utf-8") as fh, locks.held(fh):
        yield
