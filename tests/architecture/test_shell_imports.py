"""The pytest shell's imports: no circle, and imports inside functions only where they are meant.

Read from the code's own import statements (the AST of every module), so an import circle or a
function-local import that the lists below do not name fails here, whatever happens to import
first at run time. See docs/explanation/architecture.md ("The shell's import rules").
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_plugin_evals"
SHELL = "pytest_plugin_evals.plugin"

#: Circles between modules outside the shell, each a strongly connected set of modules, left as
#: they are: most are a package's ``__init__`` exporting its names lazily while its modules
#: import from the package. A new circle fails; a circle that is gone must leave this list.
KNOWN_CIRCLES: frozenset[frozenset[str]] = frozenset(
    frozenset(f"pytest_plugin_evals.{m}" for m in circle)
    for circle in (
        ("util.jsregex", "util.regexbox"),
        ("judges", "judges.anthropic_api", "judges.base", "judges.claude_cli", "judges.openai_api"),
        ("mocks", "mocks.calls", "mocks.config", "mocks.host"),
        (
            "agents",
            "agents.base",
            "agents.cli",
            "agents.command",
            "agents.mcp",
            "agents.python",
            "agents.replay",
            "agents.workspace",
        ),
        ("graders.base", "graders.judge", "graders.targets"),
        ("graders", "graders.assertions", "graders.dispatch"),
        ("reporting.compare", "reporting.result", "reporting.verdicts"),
        ("testing", "testing.handler", "testing.server"),
    )
)

#: The shell's function-local imports, by importing module (``plugin.<name>``), of the modules
#: each may import inside a function. Every one is deliberate, for start-up time:
#:
#: * the modules loaded in every pytest session, eval cases or none (the entry point, options,
#:   fixtures), and in every eval session's controller (its session and what it loads:
#:   compare, plan, progress, html_extras) import the loaders, collectors, records,
#:   scoring, reports, agents, judges and the run-making where they are used, and the modules
#:   of one option (baseline, compare, sharding, plan) only when it is given;
#: * the entry point imports the controller's modules (session, plan, progress) once
#:   the session turns out to hold evals and it knows it is not an xdist worker, and the
#:   pytest-xdist and pytest-html hooks only when those plugins are active;
#: * the entry point, the options and the StashKeys import pytest itself only in the hook that
#:   raises a usage error or reads an exit code, and when a key is first read: importing the
#:   entry point imports no pytest;
#: * items import what a report shows of a run (which loads the reports) once a run was made;
#:   the run-making imports the runner, the agents' confinement and the results folder's hold
#:   only when a run is made (the runner loads the MCP SDK); interrupts import the stopping of
#:   runs only once a signal came.
#:
#: A module loaded only in an eval session imports its dependencies at its top.
LOCAL_IMPORTS: dict[str, frozenset[str]] = {
    name: frozenset(targets)
    for name, targets in {
        "plugin": {
            "plugin.baseline",
            "plugin.collect",
            "engine.run_ahead",
            "plugin.compare",
            "plugin.html_extras",
            "plugin.plan",
            "plugin.progress",
            "plugin.replay_last",
            "plugin.rounds",
            "plugin.session",
            "plugin.sharding",
            "plugin.unselected",
            "plugin.xdist",
            "records",
            "reporting.terminal",
        },
        "plugin.baseline": set(),
        "plugin.collect": {"plugin.baseline"},
        "plugin.compare": {"reporting.compare"},
        "plugin.fixtures": {
            "agents",
            "engine.starts",
            "graders.assertions",
            "judges",
            "making",
            "plugin.items",
            "plugin.runs",
            "sandbox",
        },
        "plugin.html_extras": {"pytest_html"},
        "plugin.items": {"reporting.failures", "runner"},
        "plugin.keys": {"pytest"},
        "plugin.options": {"pytest"},
        "plugin.plan": {"engine.gates"},
        "plugin.progress": {"engine.progress", "records"},
        "plugin.loaded": {"records"},
        "plugin.runs": {"plugin.rounds"},
        "plugin.session": {
            "engine.controller",
            "engine.gates",
            "mocks.recordings",
            "plugin.limiter",
            "plugin.rounds",
            "plugin.runs",
            "plugin.sharding",
            "plugin.unselected",
            "recording",
            "reporting.terminal",
            "suites.baseline",
            "suites.manifest",
            "util.process",
        },
    }.items()
}

#: How many function-local import statements the shell has (134 before its import circle was
#: taken apart, 100 after; ``--eval-runs auto`` added five, for its option; the comparable-session
#: picker, ``replay:last``, ``--eval-reuse`` and syntic's report fifteen, in modules every session
#: loads; 117 once a case's verdict was decided in the core and the session's token read from
#: ``keys``; 101 once the settings, the option parsers and making the agent moved to the core
#: and the controller's hooks were split; 100 once the shard line moved to the core, and still
#: 100 once the options' declarations moved there too and the entry point stopped importing
#: pytest; 71 once the session's policy and its writers moved to the engine, and the run
#: making, collection, progress and plan's policy to the core; 69 once the entry point's and the
#: interrupts' policy did; 66 once run-ahead, reuse's replay and the agents of
#: ``--eval-agents`` were made by the core; 54 with both); it may only go down.
MOST_LOCAL_IMPORTS = 54


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the module imported
    line: int
    kind: str  # "top" (run time, at import), "type" (under TYPE_CHECKING) or "local"


@functools.cache
def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(node: ast.AST, kind: str) -> Iterator[tuple[ast.AST, str]]:
    for child in ast.iter_child_nodes(node):
        inner = kind
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner = "local"
        elif isinstance(child, ast.If) and kind == "top" and _is_type_checking(child):
            for branch in child.body:
                yield branch, "type"
                yield from _statements(branch, "type")
            for branch in child.orelse:
                yield branch, kind
                yield from _statements(branch, kind)
            continue
        yield child, inner
        yield from _statements(child, inner)


@functools.cache
def imports_of(module: str) -> tuple[Import, ...]:
    """Every import statement of ``module``: each module it names (``from pkg import mod``
    names ``pkg.mod`` when that is a module), absolute, with its line and kind."""
    path = modules()[module]
    known = modules()
    found = []
    for node, kind in _statements(ast.parse(path.read_text(encoding="utf-8")), "top"):
        if isinstance(node, ast.Import):
            found += [Import(module, alias.name, node.lineno, kind) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if path.name == "__init__.py" else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.append(Import(module, target, node.lineno, kind))
            found += [
                Import(module, f"{target}.{alias.name}", node.lineno, kind)
                for alias in node.names
                if f"{target}.{alias.name}" in known
            ]
    return tuple(found)


def circles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected sets of more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.add(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(frozenset(members))
    return found


def graph(within: str) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports, every kind of import counted (a circle through
    a type-only import is still a circle a reader has to hold in their head)."""
    known = modules()
    inside = {m for m in known if m == within or m.startswith(within + ".")}
    return {m: {i.target for i in imports_of(m) if i.target in inside} for m in sorted(inside)}


def _said(circle: frozenset[str], edges: dict[str, set[str]]) -> str:
    lines = [f"{m} -> {t}" for m in sorted(circle) for t in sorted(edges[m]) if t in circle]
    return "circle: " + "; ".join(lines)


def test_the_shell_has_no_import_circle() -> None:
    edges = graph(SHELL)
    found = circles(edges)
    assert not found, "\n".join(_said(c, edges) for c in found)


def test_the_package_has_no_new_import_circle() -> None:
    edges = graph("pytest_plugin_evals")
    found = set(circles(edges))
    new = [_said(c, edges) for c in found - KNOWN_CIRCLES]
    gone = [sorted(c) for c in KNOWN_CIRCLES - found]
    assert not new, "\n".join(new)
    assert not gone, f"no longer a circle, take it off KNOWN_CIRCLES: {gone}"


def test_the_circle_finder_finds_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(edges) == [frozenset({"a", "b", "c"})]
    assert circles({"a": {"b"}, "b": set()}) == []


def _short(module: str) -> str:
    return module.removeprefix("pytest_plugin_evals.")


def shell_local_imports() -> list[Import]:
    return [
        i
        for module in modules()
        if module == SHELL or module.startswith(SHELL + ".")
        for i in imports_of(module)
        if i.kind == "local"
        # ``from pkg import mod`` is one statement: counted once, under its module
        and not any(
            j.line == i.line and j.kind == "local" and i.target.startswith(j.target + ".")
            for j in imports_of(module)
        )
    ]


def test_the_shell_imports_inside_functions_only_what_it_means_to() -> None:
    wrong = []
    for found in shell_local_imports():
        allowed = LOCAL_IMPORTS.get(_short(found.module), frozenset())
        if _short(found.target) not in allowed and found.target not in allowed:
            path = modules()[found.module].relative_to(PACKAGE.parent)
            wrong.append(
                f"{path}:{found.line}: imports {found.target} inside a function (import it at "
                "the top, or say why not in LOCAL_IMPORTS)"
            )
    assert not wrong, "\n".join(wrong)


def test_every_allowed_local_import_is_still_there() -> None:
    seen = {(_short(i.module), _short(i.target)) for i in shell_local_imports()}
    stale = sorted(
        f"{module}: {target}"
        for module, targets in LOCAL_IMPORTS.items()
        for target in targets
        if (module, target) not in seen
    )
    assert not stale, "take off LOCAL_IMPORTS: " + ", ".join(stale)


def test_the_shell_has_no_more_local_imports_than_it_had() -> None:
    statements = {(i.module, i.line) for i in shell_local_imports()}
    assert len(statements) <= MOST_LOCAL_IMPORTS, (
        f"{len(statements)} function-local imports in the shell (at most {MOST_LOCAL_IMPORTS})"
    )


@pytest.mark.parametrize("where", ["function", "method", "type"])
def test_the_import_reader_tells_the_kinds_apart(tmp_path: Path, where: str) -> None:
    source = {
        "function": "def f():\n    import json\n",
        "method": "class C:\n    def m(self):\n        import json\n",
        "type": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import json\n",
    }[where]
    kinds = {kind for node, kind in _statements(ast.parse(source), "top")
             if isinstance(node, ast.Import)}  # fmt: skip
    assert kinds == {"type" if where == "type" else "local"}
