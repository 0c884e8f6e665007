"""The rooms of the package import downward only, as docs/explanation/architecture.md draws them.

Read from the code's own import statements (the AST of every module, type-only imports
included), so a new edge that the table does not allow fails here, whatever imports it at run
time.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_plugin_evals"

#: room -> the rooms it may import (a room may always import its own modules).
ALLOWED: dict[str, frozenset[str]] = {
    "util": frozenset(),
    "model": frozenset(),
    "records": frozenset({"model", "util"}),
    "suites": frozenset({"model", "util"}),
    "sandbox": frozenset({"model", "util"}),
    "recording": frozenset({"model", "util"}),
    "reuse": frozenset({"model", "recording", "util"}),
    "judges": frozenset({"model", "util"}),
    "graders": frozenset({"model", "judges", "util"}),
    "mocks": frozenset({"model", "judges", "util"}),
    "agents": frozenset({"model", "sandbox", "recording", "mocks", "util"}),
    "stats": frozenset(),
    "scoring": frozenset({"model", "records", "stats"}),
    "shards": frozenset({"util"}),
    "settings": frozenset({"agents", "judges", "scoring", "shards", "stats", "suites", "util"}),
    "engine": frozenset(
        {
            "agents",
            "model",
            "records",
            "recording",
            "scoring",
            "settings",
            "stats",
            "reporting",
            "reuse",
            "shards",
            "util",
        }
    ),
    "reporting": frozenset({"model", "records", "scoring", "shards", "stats", "util"}),
    "runner": frozenset(
        {"model", "util", "sandbox", "recording", "judges", "graders", "mocks", "agents", "scoring"}
    ),
    "making": frozenset(
        {"model", "settings", "agents", "judges", "recording", "reuse", "engine", "runner", "util"}
    ),
    "testing": frozenset({"model", "util"}),
    "scaffold": frozenset({"model", "suites", "judges", "mocks", "util"}),
    "__main__": frozenset({"reporting", "scaffold"}),
    "plugin": frozenset(
        {
            "model",
            "records",
            "util",
            "suites",
            "sandbox",
            "recording",
            "reuse",
            "judges",
            "graders",
            "mocks",
            "agents",
            "scoring",
            "stats",
            "engine",
            "reporting",
            "runner",
            "making",
            "settings",
            "shards",
            "testing",
        }
    ),
}

#: Rooms that form the core: no pytest, and no process but through ``util.process``.
CORE = frozenset(ALLOWED) - {"plugin", "testing"}


def room_of(module: str) -> str:
    """``pytest_plugin_evals.graders.judge`` -> ``graders``."""
    parts = module.split(".")
    assert parts[0] == "pytest_plugin_evals", module
    return parts[1] if len(parts) > 1 else "<package>"


@functools.cache
def modules() -> tuple[tuple[str, Path], ...]:
    """Every module of the package, by dotted name, with its file."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.append((".".join(parts), path))
    return tuple(found)


@functools.cache
def parsed(path: Path) -> list[ast.AST]:
    """Every node of the module at ``path`` (parsed once for all the tests)."""
    return list(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def imports(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """Every module ``module`` imports, absolute, with the line of the statement."""
    is_package = path.name == "__init__.py"
    for node in parsed(path):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            yield target, node.lineno
            for alias in node.names:  # ``from . import x`` imports the module x
                yield f"{target}.{alias.name}", node.lineno


ROOMS = sorted({room_of(m) for m, _ in modules()} - {"<package>"})


def test_every_room_is_in_the_table() -> None:
    assert set(ROOMS) == set(ALLOWED)


@pytest.mark.parametrize("room", ROOMS)
def test_rooms_import_downward_only(room: str) -> None:
    wrong = []
    known = dict(modules())
    for module, path in modules():
        if room_of(module) != room:
            continue
        for target, line in imports(module, path):
            if not target.startswith("pytest_plugin_evals."):
                continue
            if target not in known and target.rsplit(".", 1)[0] in known:
                target = target.rsplit(".", 1)[0]  # ``from pkg.mod import name``
            other = room_of(target)
            if other not in (room, "<package>") and other not in ALLOWED[room]:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {room} -> {other}")
    assert not wrong, "\n".join(dict.fromkeys(wrong))


@pytest.mark.parametrize("room", sorted(CORE))
def test_the_core_imports_no_pytest_and_starts_processes_only_through_util(room: str) -> None:
    wrong = []
    for module, path in modules():
        if room_of(module) != room:
            continue
        for target, line in imports(module, path):
            top = target.split(".")[0]
            where = f"{path.relative_to(PACKAGE.parent)}:{line}"
            if top in ("pytest", "_pytest", "pluggy"):
                wrong.append(f"{where}: imports {target}")
            if top in PROCESS_MODULES and room != "util":
                wrong.append(f"{where}: imports {target} (start processes through util.process)")
        if room != "util":
            wrong += [f"{path.relative_to(PACKAGE.parent)}:{line}: {what}" for what, line in
                      process_calls(path)]  # fmt: skip
    assert not wrong, "\n".join(dict.fromkeys(wrong))


#: Modules whose import means starting processes.
PROCESS_MODULES = frozenset({"subprocess", "multiprocessing", "pty", "concurrent"})

#: Functions of ``os`` (and of an asyncio loop) that start, or turn into, another program.
PROCESS_FUNCTIONS = re.compile(
    r"fork|forkpty|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?|system|popen|startfile"
    r"|create_subprocess_(exec|shell)|subprocess_(exec|shell)"
)


def process_calls(path: Path) -> Iterator[tuple[str, int]]:
    """Every use of a process-starting function: ``os.fork``, ``os.execv``…, ``from os import
    fork``, ``loop.subprocess_exec``, ``asyncio.create_subprocess_exec``."""
    for node in parsed(path):
        if (
            isinstance(node, ast.Attribute)
            and PROCESS_FUNCTIONS.fullmatch(node.attr)
            # ``os.system``, not a ``self.system`` attribute; a loop's methods by their names.
            and (
                (isinstance(node.value, ast.Name) and node.value.id in ("os", "posix"))
                or "subprocess" in node.attr
            )
        ):
            yield f"uses .{node.attr} (start processes through util.process)", node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "asyncio"):
            for alias in node.names:
                if PROCESS_FUNCTIONS.fullmatch(alias.name):
                    yield (
                        f"imports {node.module}.{alias.name} (start processes through "
                        "util.process)",
                        node.lineno,
                    )


def test_the_process_check_sees_every_way_to_start_one(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os, asyncio\nfrom os import execvp\nos.fork()\nos.execv('a', [])\n"
        "os.posix_spawn('a', [], {})\nasyncio.create_subprocess_exec('a')\nos.system('a')\n"
        "os.getpid()\nself.system = 1\n"
    )
    assert [line for _, line in process_calls(sample)] == [2, 3, 4, 5, 6, 7]


def test_only_the_testing_fixture_module_imports_pytest_in_testing() -> None:
    users = {
        module
        for module, path in modules()
        if room_of(module) == "testing"
        and any(t.split(".")[0] == "pytest" for t, _ in imports(module, path))
    }
    assert users == {"pytest_plugin_evals.testing.fixtures"}
