"""Each agent CLI is one package (``agents/<name>/``) that imports no other agent's package:
what two adapters share lives in a module of ``agents/`` both may import (``permissions``,
``plugins``, ``credentials``, ``cli``, ``launch`` …). Read from the import statements (type-only
and function-local imports included), as the room test reads them."""

from __future__ import annotations

import ast
from pathlib import Path

from pytest_plugin_evals.agents import registry

AGENTS = Path(__file__).resolve().parents[2] / "pytest_plugin_evals" / "agents"
PREFIX = "pytest_plugin_evals.agents."


def adapter_packages() -> list[str]:
    """The folders of ``agents/`` that are an agent's own package (they declare a spec)."""
    return sorted(p.parent.name for p in AGENTS.glob("*/spec.yaml"))


def imported(path: Path, root: Path = AGENTS) -> list[tuple[str, int]]:
    """What ``path`` (a module under ``root``, the ``agents`` folder) imports, absolute."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolved against the module's package
                rel = (
                    "pytest_plugin_evals",
                    "agents",
                    *path.relative_to(root).with_suffix("").parts,
                )
                base = list(rel[:-1])[: len(rel) - node.level]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.append((target, node.lineno))
    return found


def foreign_imports(package: str, packages: list[str], root: Path = AGENTS) -> list[str]:
    """Every import by ``package``'s modules of another adapter package (file:line: target)."""
    wrong = []
    for path in sorted((root / package).rglob("*.py")):
        for target, line in imported(path, root):
            if not target.startswith(PREFIX):
                continue
            other = target[len(PREFIX) :].split(".")[0]
            if other in packages and other != package:
                where = path.relative_to(root.parent)
                wrong.append(f"{where}:{line}: {package} -> {target}")
    return wrong


def test_every_declared_agent_is_a_package_of_its_own() -> None:
    assert adapter_packages() == sorted(registry.names())
    assert {"claude", "copilot", "codex", "opencode", "gemini"} <= set(adapter_packages())


def test_no_agent_imports_another_agents_package() -> None:
    packages = adapter_packages()
    wrong = [w for p in packages for w in foreign_imports(p, packages)]
    assert not wrong, "\n".join(wrong)


def test_the_shared_modules_import_no_agent_package() -> None:
    """``agents/*.py`` (what the adapters share) name no adapter: the registry finds them."""
    packages = adapter_packages()
    wrong = []
    for path in sorted(AGENTS.glob("*.py")):
        for target, line in imported(path):
            other = target[len(PREFIX) :].split(".")[0] if target.startswith(PREFIX) else ""
            if other in packages:
                wrong.append(f"{path.relative_to(AGENTS.parent)}:{line}: {target}")
    assert not wrong, "\n".join(wrong)


def test_the_check_fails_on_an_import_of_another_adapters_internals(tmp_path: Path) -> None:
    """The check itself: the imports the adapters used to make are caught (absolute and
    relative), in a copy of an adapter's package."""
    root = tmp_path / "agents"
    (root / "copilot").mkdir(parents=True)
    (root / "copilot" / "agent.py").write_text(
        "from pytest_plugin_evals.agents.claude.agent import plugin_contents\n"
        "from pytest_plugin_evals.agents.launch import finish\n"
        "from ..claude import shell\n"
    )
    assert foreign_imports("copilot", adapter_packages(), root) == [
        "agents/copilot/agent.py:1: copilot -> pytest_plugin_evals.agents.claude.agent",
        "agents/copilot/agent.py:3: copilot -> pytest_plugin_evals.agents.claude",
    ]
