"""The inner loop's lists of slow tests (``tests/conftest.py``) name tests that exist: a renamed
test would otherwise slip back into the inner loop unnoticed."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import SLOW_MODULES, SLOW_TESTS

TESTS = Path(__file__).parent.parent


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_slow_module_is_an_integration_module() -> None:
    found = {p.stem for p in (TESTS / "integration").glob("test_*.py")}
    assert sorted(SLOW_MODULES - found) == []


def test_every_slow_test_names_one_test_function() -> None:
    files: dict[str, list[Path]] = {}
    for path in TESTS.rglob("test_*.py"):
        files.setdefault(path.name, []).append(path)
    missing = []
    for entry in sorted(SLOW_TESTS):
        name, _, function = entry.partition("::")
        paths = files.get(name, [])
        if len(paths) != 1 or function not in _functions(paths[0]):
            missing.append(entry)
    assert missing == []
