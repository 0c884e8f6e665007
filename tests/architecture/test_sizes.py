"""Modules are short and functions are short: a module has at most :data:`MOST_MODULE_LINES`
lines and a function (or method) at most :data:`MOST_FUNCTION_LINES` (``end_lineno - lineno +
1`` in the AST, its decorators not counted), unless ``sizes_allowed.txt`` beside this file
names it.

Each line of ``sizes_allowed.txt`` is ``<module>[:<function>] <lines> <reason>`` (``module``
relative to the package; a method is ``Class.method``, a nested function ``outer.inner``). The
count is a ceiling: an entry that grows beyond it fails, and so does one now within the limit or
gone (so the list only shrinks), and anything over a limit the list does not name.

Regenerate it (after a merge, or once an entry shrank) with::

    cd tests/architecture && python test_sizes.py > sizes.new && mv sizes.new sizes_allowed.txt

which prints every module and function over a limit today with its count, keeping the reason of
each that was listed before (a new one reads ``REASON?``: write why it stays long, or split it).

The package's other size figure, its duplicate pairs, is not tested: the ``duplicates`` tool
that counts them is not part of the test environment or CI.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_plugin_evals"
ALLOWED_FILE = Path(__file__).with_name("sizes_allowed.txt")

MOST_MODULE_LINES = 400
MOST_FUNCTION_LINES = 50

HEADER = """\
# What stays over the size limits of tests/architecture/test_sizes.py, and why:
# <module>[:<function>] <its lines today, a ceiling> <reason>. Regenerate with
# `python tests/architecture/test_sizes.py` (see its docstring).
"""


def _functions(node: ast.AST, prefix: str) -> Iterator[tuple[str, int]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{child.name}"
            assert child.end_lineno is not None
            yield name, child.end_lineno - child.lineno + 1
            yield from _functions(child, f"{name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


@functools.cache
def sizes() -> dict[str, int]:
    """``module`` -> its lines and ``module:function`` -> its lines, for each over a limit
    (read once per process: three tests compare it; none changes it)."""
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MOST_MODULE_LINES:
            found[module] = lines
        for name, length in _functions(ast.parse(text, filename=str(path)), ""):
            if length > MOST_FUNCTION_LINES:
                found[f"{module}:{name}"] = max(length, found.get(f"{module}:{name}", 0))
    return found


def allowed() -> dict[str, tuple[int, str]]:
    """The allow-list: ``where`` -> (its ceiling, why it stays over the limit)."""
    entries: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(ALLOWED_FILE.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        where, count, reason = [*line.split(maxsplit=2), "", ""][:3]
        assert count.isdigit() and reason, f"{ALLOWED_FILE.name}:{number}: {line!r}"
        entries[where] = (int(count), reason)
    return entries


def test_new_modules_and_functions_stay_within_the_limits() -> None:
    listed = allowed()
    new = {where: n for where, n in sizes().items() if where not in listed}
    assert not new, (
        f"over {MOST_MODULE_LINES} lines (module) or {MOST_FUNCTION_LINES} (function): {new}; "
        "split it (or list it in sizes_allowed.txt with a reason)"
    )


def test_allow_listed_ones_do_not_grow() -> None:
    now = sizes()
    grown = {w: (now[w], c) for w, (c, _) in allowed().items() if w in now and now[w] > c}
    assert not grown, f"grown beyond their count in sizes_allowed.txt (now, allowed): {grown}"


def test_the_allow_list_shrinks() -> None:
    now = sizes()
    stale = [where for where in allowed() if where not in now]
    assert not stale, f"within the limit now, or gone: {stale}; remove them from sizes_allowed.txt"


def test_the_sizes_are_counted_from_the_ast() -> None:
    source = """
class A:
    def m(self):
        def inner():
            pass
        return 1
"""
    assert dict(_functions(ast.parse(source), "")) == {"A.m": 4, "A.m.inner": 2}


def main() -> None:
    listed = allowed() if ALLOWED_FILE.exists() else {}
    print(HEADER, end="")
    for where, lines in sizes().items():
        print(f"{where} {lines} {listed.get(where, (0, 'REASON?'))[1]}")


if __name__ == "__main__":
    main()
