"""Regular expressions in the two dialects suites are written in.

The directory format's patterns are JavaScript regular expressions, as in the reference
(``new RegExp(pattern, flags)``): named groups ``(?<n>…)`` with ``\\k<n>``, lookbehind,
``\\u{…}`` under the ``u`` flag, sticky ``y``, and no inline ``(?i)``. They run on an embedded
JavaScript engine (QuickJS), so their semantics are JavaScript's, not a translation's.
sy suites keep Python's ``re`` dialect, where ``(?i)`` works.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, Protocol

JS_FLAGS = frozenset("dgimsuvy")

_JS_SOURCE = r"""
var __cache = new Map();
function __re(p, f) {
  var key = f + "/" + p;
  var r = __cache.get(key);
  if (r === undefined) { r = new RegExp(p, f); __cache.set(key, r); }
  r.lastIndex = 0;
  return r;
}
function __compile(p, f) { __re(p, f); return true; }
function __test(p, f, s) { return __re(p, f).test(s); }
function __count(p, f, s) {
  if (f.indexOf("g") < 0) f = f + "g";
  var r = __re(p, f), n = 0, m;
  while ((m = r.exec(s)) !== null) {
    n++;
    if (m[0].length === 0) r.lastIndex++;
  }
  return n;
}
function __first(p, f, s) {
  var m = __re(p, f).exec(s);
  return m === null ? null : m[0];
}
"""


class RegexSyntaxError(ValueError):
    """A pattern that does not compile, worded as the engine words it."""


class Pattern(Protocol):
    @property
    def source(self) -> str: ...

    @property
    def flags(self) -> str: ...

    def search(self, text: str) -> bool: ...

    def count(self, text: str) -> int: ...

    def first(self, text: str) -> str | None: ...


class _Engine(threading.local):
    """One QuickJS context per thread (contexts are not thread-safe)."""

    def __init__(self) -> None:
        import quickjs

        self.ctx = quickjs.Context()
        self.ctx.eval(_JS_SOURCE)
        self.compile = self.ctx.get("__compile")
        self.test = self.ctx.get("__test")
        self.count = self.ctx.get("__count")
        self.first = self.ctx.get("__first")


_engine_holder: list[_Engine] = []
_engine_lock = threading.Lock()


def _engine() -> _Engine:
    if not _engine_holder:
        with _engine_lock:
            if not _engine_holder:
                _engine_holder.append(_Engine())
    return _engine_holder[0]


def _js_error(exc: Exception) -> RegexSyntaxError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    first = first.removeprefix("SyntaxError: ")
    return RegexSyntaxError(f"Invalid regular expression: {first}")


class _Limited:
    """The deadline of the matching going on in this thread, if there is one."""

    local = threading.local()

    @classmethod
    def deadline(cls) -> float | None:
        found: float | None = getattr(cls.local, "deadline", None)
        return found


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Match patterns in this thread under a time limit (in a helper process that is stopped
    past it: :class:`~pytest_plugin_evals.util.regexbox.PatternTimeout`); None: no limit."""
    before = _Limited.deadline()
    _Limited.local.deadline = None if seconds is None else time.monotonic() + seconds
    try:
        yield
    finally:
        _Limited.local.deadline = before


def _match(op: str, dialect: str, source: str, flags: str, text: str) -> Any:
    """``op`` under this thread's time limit, if it has one (in the helper), else here."""
    deadline = _Limited.deadline()
    if deadline is None:
        from pytest_plugin_evals.util.regexbox import evaluate

        return evaluate(op, dialect, source, flags, text)
    from pytest_plugin_evals.util.regexbox import PatternError, call

    try:
        return call(op, dialect, source, flags, text, deadline)
    except PatternError as exc:
        raise RegexSyntaxError(str(exc)) from None


@dataclass(frozen=True)
class _Dialect:
    """A regular expression of one dialect: its matches under the run's time limit."""

    source: str
    flags: str = ""
    dialect: ClassVar[str]

    def search(self, text: str) -> bool:
        return bool(_match("test", self.dialect, self.source, self.flags, text))

    def count(self, text: str) -> int:
        return int(_match("count", self.dialect, self.source, self.flags, text))

    def first(self, text: str) -> str | None:
        found = _match("first", self.dialect, self.source, self.flags, text)
        return None if found is None else str(found)


@dataclass(frozen=True)
class JSPattern(_Dialect):
    """A JavaScript regular expression."""

    dialect: ClassVar[str] = "js"

    def _here(self, op: str, text: str) -> Any:
        try:
            return getattr(_engine(), op)(self.source, self.flags, text)
        except Exception as exc:  # noqa: BLE001 - the engine raises its own exception type
            raise _js_error(exc) from None

    def search_here(self, text: str) -> bool:
        return bool(self._here("test", text))

    def count_here(self, text: str) -> int:
        return int(self._here("count", text))

    def first_here(self, text: str) -> str | None:
        found = self._here("first", text)
        return None if found is None else str(found)


@dataclass(frozen=True)
class PyPattern(_Dialect):
    """A Python ``re`` regular expression (sy suites)."""

    dialect: ClassVar[str] = "python"

    @property
    def _compiled(self) -> re.Pattern[str]:
        return _compile_py(self.source, self.flags)

    def search_here(self, text: str) -> bool:
        return self._compiled.search(text) is not None

    def count_here(self, text: str) -> int:
        return sum(1 for _ in self._compiled.finditer(text))

    def first_here(self, text: str) -> str | None:
        m = self._compiled.search(text)
        return None if m is None else m.group(0)


_PY_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


@lru_cache(maxsize=1024)
def _compile_py(source: str, flags: str) -> re.Pattern[str]:
    value = 0
    for f in flags:
        value |= _PY_FLAGS.get(f, 0)
    return re.compile(source, value)


def compile_js(source: str, flags: str = "") -> JSPattern:
    """Compile a JavaScript pattern now, so a bad one is a load error, not a grading error."""
    bad = sorted(set(flags) - JS_FLAGS)
    if bad or len(set(flags)) != len(flags):
        raise RegexSyntaxError(f"must be JS RegExp flags (d g i m s u v y), got {flags!r}")
    if "v" in flags:
        raise RegexSyntaxError(
            "the v flag (unicode sets) is not supported by this version's regex engine; use u"
        )
    # ``d`` (match indices) never changes what matches, and the engine does not know it.
    flags = flags.replace("d", "")
    try:
        _engine().compile(source, flags)
    except Exception as exc:  # noqa: BLE001 - the engine raises its own exception type
        raise _js_error(exc) from None
    return JSPattern(source, flags)


def compile_py(source: str, flags: str = "") -> PyPattern:
    """Compile a Python pattern now."""
    bad = sorted(set(flags) - set(_PY_FLAGS))
    if bad:
        raise RegexSyntaxError(f"flags must be some of i, m, s, got {flags!r}")
    try:
        _compile_py(source, flags)
    except re.error as exc:
        raise RegexSyntaxError(f"Invalid regular expression: {exc}") from None
    return PyPattern(source, flags)


def compile_pattern(source: str, flags: str = "", dialect: str = "js") -> Pattern:
    """Compile in the named dialect (``js`` or ``python``)."""
    return compile_js(source, flags) if dialect == "js" else compile_py(source, flags)
