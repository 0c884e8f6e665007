"""The package uses pytest through its public API: no ``_pytest`` import, no private attribute of
a pytest object (``config._x``, ``item._x``, ``getattr(node, "_x")``), but those listed below.

Read from the code (the AST of every module). A pytest object is told by the name it is reached
through: the names pytest's hooks and fixtures give them (``config``, ``session``, ``item``,
``node``, ``report``…), also as an attribute (``self.config``, ``item.session``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_plugin_evals"

#: The names through which the package reaches pytest's objects.
PYTEST_OBJECTS = frozenset(
    {
        "call",
        "collector",
        "config",
        "excinfo",
        "fixturedef",
        "item",
        "items",
        "metafunc",
        "nextitem",
        "node",
        "parent",
        "parser",
        "pluginmanager",
        "pytestconfig",
        "report",
        "request",
        "session",
        "terminalreporter",
        "tr",
    }
)

#: Private attributes still read, each with why there is no public way (file, attribute).
ALLOWED: dict[tuple[str, str], str] = {
    # pytest >= 9.2 keeps a node id as parts; a ``pytest.Function`` builds its own from its
    # name (``plants[1]`` as one name) and only a private callspec gives it parameters, so
    # ``--lf``/``--ff``/``--sw``/``--nf`` would never match an eval item read back from the
    # cache without the parsed id. (A ``pytest.Item``, like ``LoadErrorItem``, is given its
    # node id through ``from_parent(nodeid=...)``.)
    ("plugin/items.py", "_id"): "a Function's structured node id (pytest >= 9.2)",
    # Which definition of ``eval_agent`` an item will use (a conftest's override makes its
    # own agent): pytest has no public way to ask an item for its fixture definitions.
    ("plugin/fixtures.py", "_fixtureinfo"): "the fixture definitions an item uses",
}


def _reached_through(node: ast.expr) -> str | None:
    """The last name of ``config`` / ``self.config`` / ``item.session`` (None for a call…)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def private_uses(path: Path) -> Iterator[tuple[int, str]]:
    """Every private attribute of a pytest object read or written in ``path``, and every
    ``_pytest`` import: (line, attribute or module)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "_pytest":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "_pytest":
            yield node.lineno, node.module or ""
        elif isinstance(node, ast.Attribute):
            name = node.attr
            private = name.startswith("_") and not name.startswith("__")
            if private and _reached_through(node.value) in PYTEST_OBJECTS:
                yield node.lineno, name
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value.startswith("_")
            and not node.args[1].value.startswith("__")
            and _reached_through(node.args[0]) in PYTEST_OBJECTS
        ):
            yield node.lineno, node.args[1].value


def test_no_private_attribute_of_pytest_is_used() -> None:
    wrong = []
    seen = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for line, name in private_uses(path):
            seen.add((where, name))
            if (where, name) not in ALLOWED:
                wrong.append(f"pytest_plugin_evals/{where}:{line}: uses pytest's private {name}")
    assert not wrong, "\n".join(wrong)
    stale = sorted(f"{w}: {n}" for w, n in set(ALLOWED) - seen)
    assert not stale, "no longer used, take off ALLOWED: " + ", ".join(stale)


def test_the_check_sees_each_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from _pytest.nodes import Node\n"
        "import _pytest.python\n"
        "item._fixtureinfo\n"
        "self.config._inicache\n"
        "item.session._fixturemanager = 1\n"
        "getattr(node, '_id', None)\n"
        "item.__class__\n"
        "item.nodeid\n"
        "other._private\n"
        "getattr(other, '_x')\n"
    )
    assert list(private_uses(sample)) == [
        (1, "_pytest.nodes"),
        (2, "_pytest.python"),
        (3, "_fixtureinfo"),
        (4, "_inicache"),
        (5, "_fixturemanager"),
        (6, "_id"),
    ]
