"""The package uses pytest, pytest-xdist and pluggy through their public API, but for the uses
listed below, each with why there is no public way: no ``_pytest`` import (nor of xdist's
modules, nor pluggy's private ones), no private attribute of one of their objects
(``config._x``, ``item._x``, ``getattr(node, "_x")``), and none of xdist's inner objects (its
controller's ``dsession`` plugin, its worker's ``WorkerInteractor``) or what they hold
(``dsession.queue``, ``getattr(dsession, "sched")``, a worker's ``torun``).

Read from the code (the AST of every module). A pytest object is told by the name it is reached
through: the names pytest's hooks and fixtures give them (``config``, ``session``, ``item``,
``node``, ``report``…), also as an attribute (``self.config``, ``item.session``). An inner object
of xdist is told by its name given as a string (``get_plugin("dsession")``), and whatever is
read from a name assigned one is inner too.
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
        "hook",
        "ihook",
        "item",
        "items",
        "metafunc",
        "nextitem",
        "node",
        "parent",
        "parser",
        "pluginmanager",
        "plugin",
        "pytestconfig",
        "report",
        "request",
        "session",
        "terminalreporter",
        "tr",
    }
)

#: The names of xdist's inner objects (its plugins' and classes' names) and of what they hold:
#: none has a public API (xdist's is its hooks, ``node.workerinput``/``workeroutput``, and the
#: top-level ``xdist`` functions).
XDIST_INNER = frozenset(
    {
        "dsession",
        "DSession",
        "WorkerInteractor",
        "WorkerController",
        "NodeManager",
        "looponfailsession",
        "queue",
        "sched",
        "torun",
        "triggershutdown",
        "shuttingdown",
        "nodemanager",
    }
)

#: The modules whose own API is public: any other module of theirs is not.
PUBLIC_MODULES = {"_pytest": False, "xdist": True, "pluggy": True}

#: Private uses still made, each with why there is no public way (file, what).
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
    # ``--eval-runs auto`` puts the items the controller has not handed out yet in its
    # least-certain-first order; xdist's public way is a scheduler of one's own
    # (``pytest_xdist_make_scheduler``), which would replace --dist's.
    ("plugin/rounds.py", "'dsession'"): "xdist's controller, for its scheduler",
    ("plugin/rounds.py", "dsession.sched"): "the scheduler of xdist's controller",
    ("plugin/rounds.py", "sched.pending"): "the items not handed out yet",
    ("plugin/rounds.py", "sched.collection"): "the node ids those items are",
    ("plugin/rounds.py", "pending.sort"): "put in the order the rounds decide",
    # Run-ahead starts the runs of the items an xdist worker runs next: only the worker's
    # queue of the items it was sent knows them (xdist has no hook that tells them).
    ("plugin/runs.py", "'WorkerInteractor'"): "xdist's worker plugin, found by its type",
    ("plugin/runs.py", "plugin.torun"): "the items an xdist worker was sent and runs next",
    ("plugin/runs.py", "queue.lock"): "that queue's lock, held while it is read",
}


def _reached_through(node: ast.expr) -> str | None:
    """The last name of ``config`` / ``self.config`` / ``item.session`` (None for a call…)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_module(module: str) -> bool:
    """``_pytest.x``, ``xdist.dsession``, ``pluggy._hooks``: not a module's public face."""
    top, _, rest = module.partition(".")
    public = PUBLIC_MODULES.get(top)
    if public is None:
        return False
    return not public or (top == "xdist" and bool(rest)) or any(map(_private, rest.split(".")))


def _getattr_name(node: ast.Call) -> str | None:
    """The attribute ``getattr(x, "name")`` (``setattr``, ``hasattr``, ``delattr``) names."""
    if (
        isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[1].value
    return None


def _read(node: ast.expr) -> tuple[ast.expr, str] | None:
    """``x.name`` or ``getattr(x, "name")``: (x, name)."""
    if isinstance(node, ast.Attribute):
        return node.value, node.attr
    if isinstance(node, ast.Call) and (name := _getattr_name(node)) is not None:
        return node.args[0], name
    return None


def _inner_names(tree: ast.AST) -> set[str]:
    """The names assigned one of xdist's inner objects, or something read from one."""
    inner: set[str] = set()

    def is_inner(value: ast.expr) -> bool:
        for sub in ast.walk(value):
            if isinstance(sub, ast.Constant) and sub.value in XDIST_INNER:
                return True
            if isinstance(sub, ast.Name) and sub.id in inner:
                return True
        return False

    assigns = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))]
    while True:
        before = len(inner)
        for node in assigns:
            if node.value is None or not is_inner(node.value):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        inner.add(sub.id)
        if len(inner) == before:
            return inner


def private_uses(path: Path) -> Iterator[tuple[int, str]]:
    """Every private use in ``path`` (see the module): (line, what), where what is a module
    (``_pytest.nodes``), a private attribute (``_fixtureinfo``), an inner object of xdist named
    as a string (``'dsession'``), or what is read from one (``dsession.queue``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inner = _inner_names(tree)
    named = {id(n.args[1]) for n in ast.walk(tree) if isinstance(n, ast.Call) and _getattr_name(n)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _private_module(alias.name):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and _private_module(node.module or ""):
            yield node.lineno, node.module or ""
        elif isinstance(node, ast.Constant) and node.value in XDIST_INNER and id(node) not in named:
            yield node.lineno, repr(node.value)
        elif isinstance(node, ast.expr) and (read := _read(node)) is not None:
            owner, name = read
            through = _reached_through(owner)
            if isinstance(owner, ast.Name) and owner.id in inner:
                yield node.lineno, f"{owner.id}.{name}"
            elif name in XDIST_INNER:
                yield node.lineno, f"{through}.{name}"
            elif _private(name) and through in PYTEST_OBJECTS:
                yield node.lineno, name


def test_no_private_attribute_of_pytest_is_used() -> None:
    wrong = []
    seen = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for line, name in private_uses(path):
            seen.add((where, name))
            if (where, name) not in ALLOWED:
                wrong.append(f"pytest_plugin_evals/{where}:{line}: not public: {name}")
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
        "from xdist.dsession import DSession\n"
        "import xdist\n"
        "from pluggy._hooks import HookImpl\n"
        "config.pluginmanager._name2plugin\n"
        "config.hook._hookexec\n"
        "type(plugin).__name__ == 'WorkerInteractor'\n"
        "xdist.is_xdist_worker(request)\n"
    )
    assert sorted(private_uses(sample)) == [
        (1, "_pytest.nodes"),
        (2, "_pytest.python"),
        (3, "_fixtureinfo"),
        (4, "_inicache"),
        (5, "_fixturemanager"),
        (6, "_id"),
        (11, "xdist.dsession"),
        (13, "pluggy._hooks"),
        (14, "_name2plugin"),
        (15, "_hookexec"),
        (16, "'WorkerInteractor'"),
    ]


#: What the drain after Ctrl-C once did: read xdist's controller from the inside.
OLD_DRAIN = """\
dsession: Any = self.session.config.pluginmanager.get_plugin("dsession")
events = getattr(dsession, "queue", None)
if events is None or getattr(dsession, "sched", None) is None:
    pass
dsession.triggershutdown()
waiting = set(getattr(dsession, "_active_nodes", ()))
name, kwargs = events.get(timeout=0.2)
"""


def test_the_check_sees_xdist_read_from_the_inside(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(OLD_DRAIN)
    found = {name for _, name in private_uses(sample)}
    assert {
        "'dsession'",
        "dsession.queue",
        "dsession.sched",
        "dsession.triggershutdown",
        "dsession._active_nodes",
        "events.get",
    } <= found


#: The one place a test report's outcome is changed after ``pytest_runtest_makereport`` made
#: it (file, function): a case's verdict, which only the controller can decide (the reason is
#: beside it, and in docs/explanation/architecture.md).
OUTCOME_SET_IN = {("plugin/session.py", "pytest_runtest_logreport")}


def outcome_rewrites(path: Path) -> Iterator[tuple[int, str]]:
    """Every assignment to a report's ``outcome`` or ``longrepr``: (line, function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr in ("outcome", "longrepr")
                    and _reached_through(target.value) in ("report", "rep")
                ):
                    yield node.lineno, func.name


def test_a_report_s_outcome_is_changed_in_one_place() -> None:
    found = {
        (path.relative_to(PACKAGE).as_posix(), name)
        for path in sorted(PACKAGE.rglob("*.py"))
        for _, name in outcome_rewrites(path)
    }
    assert found == OUTCOME_SET_IN
