"""No function of the package takes a long parameter list: what belongs together travels as one
small frozen dataclass named for what it holds (``RunTarget``, ``MockOptions``, ``SessionFacts``,
``ScoringRules``).

Read from the code (the AST of every module), so a new function with more than
:data:`MOST_PARAMETERS` parameters fails here unless :data:`ALLOWED` names it with its reason.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_plugin_evals"

#: The most parameters a function takes (``self`` and ``cls`` not counted).
MOST_PARAMETERS = 8

#: ``module:function`` -> (its parameters today, why it keeps them). Each is keyword-only, each
#: parameter a concern of its own that callers name; an entry may only shrink, and one that is
#: no longer over the limit must leave the list.
ALLOWED: dict[str, tuple[int, str]] = {
    "util/process.py:run_process": (
        10,
        "the process runner's knobs, as subprocess.run's: each optional and independent",
    ),
    "agents/cli.py:run_confined": (
        9,
        "run_process's knobs passed through, plus what confines the run (its reach)",
    ),
    "agents/claude/shell.py:sandbox_settings": (
        9,
        "the run's folders by role (home, tmp, config, out, cwd, read, hidden) and its env",
    ),
}


@functools.cache
def parameter_counts() -> tuple[tuple[str, int, int], ...]:
    """``(module:function, line, parameters)`` of every function and method in the package
    (read once per process: both tests read it)."""
    return tuple(_parameter_counts())


def _parameter_counts() -> Iterator[tuple[str, int, int]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        module = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            args = node.args
            names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
            if names and names[0] in ("self", "cls"):
                names = names[1:]
            yield f"{module}:{node.name}", node.lineno, len(names)


def test_no_function_takes_a_long_parameter_list() -> None:
    wrong = []
    for name, line, count in parameter_counts():
        most = ALLOWED[name][0] if name in ALLOWED else MOST_PARAMETERS
        if count > most:
            wrong.append(
                f"pytest_plugin_evals/{name.partition(':')[0]}:{line}: {name.partition(':')[2]} "
                f"takes {count} parameters (at most {most}): group what belongs together in a "
                "frozen dataclass"
            )
    assert not wrong, "\n".join(wrong)


def test_every_allowed_long_parameter_list_is_still_long() -> None:
    counts: dict[str, int] = {}
    for name, _, count in parameter_counts():
        counts[name] = max(count, counts.get(name, 0))
    stale = sorted(
        f"{name} ({counts.get(name, 'gone')})"
        for name, (most, _) in ALLOWED.items()
        if counts.get(name, 0) <= MOST_PARAMETERS or counts[name] < most
    )
    assert not stale, "take off (or lower in) ALLOWED: " + ", ".join(stale)
