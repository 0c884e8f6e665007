"""Small checks shared by the loaders: each failure is one sentence naming the key and the line.

The checks themselves are pydantic's (strict types and constraints: :func:`accepts` and the
models of :mod:`.grader_schema`); this module gives their failures our wording and the file and
line they come from: :func:`model_problems` maps a pydantic error's location (its key path)
back to the YAML or frontmatter line of that key.

A :class:`Value` is a value read from a suite file together with where it came from, so merged
data (case.yaml overridden by prompt.md) still reports the right file and line. A loader that
checks many things gathers their failures in :class:`Problems`, so one load error
(:class:`LoadErrors`) lists every problem of a case at once, one ``file:line: message`` each.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar

from pydantic import BaseModel, Field, StrictBool, StrictStr, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from pytest_plugin_evals.model import Case, LoadError
from pytest_plugin_evals.util import jsonlines, safeload
from pytest_plugin_evals.util.frontmatter import Located
from pytest_plugin_evals.util.suggest import did_you_mean

ENV_KEY = re.compile(r"^EVAL_[A-Z0-9_]*$")

T = TypeVar("T")
D = TypeVar("D")
P = ParamSpec("P")


class LoadErrors(LoadError):
    """Several problems of one case (or one mapping), reported at once.

    ``path``, ``line`` and the first line of ``message`` are the first problem's; the message's
    further lines are the other problems as ``file:line: message``, their files named from
    ``folder`` (the case's folder) on: ``greets/case.yaml:7: …``. :meth:`render` gives every
    problem as its own ``file:line: message`` line.
    """

    def __init__(self, problems: Sequence[LoadError], folder: Path) -> None:
        self.problems = tuple(problems)
        first = self.problems[0]
        rest = "".join(f"\n{problem.render(folder.parent)}" for problem in self.problems[1:])
        super().__init__(first.path, first.message + rest, first.line)

    def render(self, root: Path | None = None) -> str:
        return "\n".join(problem.render(root) for problem in self.problems)


class Problems:
    """The problems found so far while loading one case; :meth:`check` runs a check and keeps
    its failure instead of stopping at it."""

    def __init__(self) -> None:
        self.found: list[LoadError] = []

    def __len__(self) -> int:
        return len(self.found)

    def add(self, error: LoadError) -> None:
        self.found.extend(error.problems if isinstance(error, LoadErrors) else (error,))

    def check(self, default: D, run: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T | D:
        """``run(*args, **kwargs)``, or ``default`` when it fails (its problem is kept)."""
        try:
            return run(*args, **kwargs)
        except LoadError as error:
            self.add(error)
            return default

    def raise_any(self, folder: Path) -> None:
        """Raise the problems found, if any: one LoadError, or :class:`LoadErrors` listing
        them by file and line."""
        if not self.found:
            return
        ordered = sorted(self.found, key=lambda e: (str(e.path), e.line or 0))
        if len(ordered) == 1:
            raise ordered[0]
        raise LoadErrors(ordered, folder)


def read_source(path: Path) -> str:
    """The file's text, or a LoadError saying why it cannot be read (or is too large)."""
    try:
        return safeload.read_text(path)
    except safeload.OverBound as exc:
        raise LoadError(path, exc.message) from None
    except UnicodeDecodeError as exc:
        raise LoadError(path, f"the file is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise LoadError(path, f"cannot read the file: {exc.strerror or exc}") from None


def kind(value: Any) -> str:
    """What a value is, in words: ``a string``, ``a number``, ``a list``, ``a mapping`` ..."""
    return jsonlines.kind(value, mapping="a mapping")


def show(value: Any) -> str:
    """A value as a message quotes it: a string quoted, other scalars literally, containers by
    kind."""
    if isinstance(value, str):
        return f'"{value}"'
    return kind(value) if isinstance(value, (list, tuple, Mapping)) else jsonlines.found(value)


@dataclass(frozen=True)
class Spot:
    """Where a mapping sits: its file, its located document and key path, and its label."""

    path: Path
    doc: Located | None = None
    at: tuple[Any, ...] = ()
    #: How messages name the mapping's keys: ``""``, ``"execution."``, ``"graders[0]."``.
    prefix: str = ""
    #: A line to fall back on when the document has none (e.g. a frontmatter's first line).
    fallback_line: int | None = None

    def line(self, key: Any = None) -> int | None:
        if self.doc is None:
            return self.fallback_line
        found = self.doc.line(*self.at, key) if key is not None else self.doc.line(*self.at)
        return found if found is not None else self.fallback_line

    def child(self, key: Any, prefix: str) -> Spot:
        return Spot(self.path, self.doc, (*self.at, key), prefix, self.fallback_line)

    def label(self, key: Any) -> str:
        if isinstance(key, int) and not isinstance(key, bool):
            return f"{self.prefix.rstrip('.')}[{key}]"
        return f"{self.prefix}{key}"

    def fail(self, message: str, key: Any = None) -> NoReturn:
        raise LoadError(self.path, message, self.line(key))

    def value(self, mapping: Mapping[str, Any], key: str) -> Value | None:
        """The value of ``key`` in ``mapping`` (None when absent)."""
        if key not in mapping:
            return None
        return Value(mapping[key], self, key)


@dataclass(frozen=True)
class Value:
    """A value and the spot of the mapping holding it."""

    raw: Any
    spot: Spot
    key: Any

    @property
    def label(self) -> str:
        return self.spot.label(self.key)

    @property
    def line(self) -> int | None:
        return self.spot.line(self.key)

    def fail(self, message: str) -> NoReturn:
        """Raise ``<label> <message>`` at this value's line."""
        raise LoadError(self.spot.path, f"{self.label} {message}", self.line)


M = TypeVar("M", bound=BaseModel)
#: How a pydantic error reads: ``(label, error) -> message`` (the whole line's text).
Describe = Callable[[str, "ErrorDetails"], str]


def each_case(
    path: Path,
    doc: Located,
    key: str,
    make: Callable[[object, Spot], Case],
    *,
    duplicate: str,
    name_key: str,
) -> list[Case | LoadError]:
    """The cases of the list at ``doc.data[key]``, each made by ``make`` (a bad one becomes its
    error; the others still load); a name used twice is ``duplicate`` (formatted with the
    ``name`` and the ``first`` line it was used on), said at the entry's ``name_key``."""
    found: list[Case | LoadError] = []
    seen: dict[str, int | None] = {}
    for index, raw in enumerate(doc.data[key]):
        spot = Spot(path, doc, (key, index), f"{key}[{index}].", 1)
        try:
            case = make(raw, spot)
            if case.name in seen:
                spot.fail(duplicate.format(name=case.name, first=seen[case.name]), name_key)
            seen[case.name] = case.line
            found.append(case)
        except LoadError as exc:
            found.append(exc)
    return found


def model_problems(
    model: type[M], raw: Mapping[str, Any], spot: Spot, describe: Describe
) -> tuple[M | None, list[LoadError]]:
    """``raw`` validated by pydantic's ``model``, or its problems: one LoadError per pydantic
    error, worded by ``describe`` and placed at the line of the key the error's location names."""
    try:
        return model.model_validate(raw), []
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False, include_context=True):
            where, loc = spot, error["loc"]
            for key in loc[:-1]:
                where = where.child(key, f"{where.label(key)}.")
            last = loc[-1] if loc else None
            label = where.label(last) if loc else spot.prefix.rstrip(".")
            problems.append(LoadError(spot.path, describe(label, error), where.line(last)))
        return None, problems


def check_keys(mapping: Mapping[Any, Any], spot: Spot, allowed: Iterable[str], what: str) -> None:
    """Reject unknown keys: ``unknown <what> "k" (expected one of: a, b)``, one problem for
    each unknown key; a key near a known one adds `` — did you mean <known>?``."""
    allowed = tuple(allowed)
    problems = Problems()
    for key in mapping:
        if key not in allowed:
            near = did_you_mean(key, allowed)
            message = (
                f'unknown {what} "{spot.label(key)}"{near} (expected one of: {", ".join(allowed)})'
            )
            problems.add(LoadError(spot.path, message, spot.line(key)))
    problems.raise_any(spot.path.parent)


#: A string holding something other than whitespace.
Text = Annotated[StrictStr, Field(pattern=r"\S")]
#: A finite number (not a boolean).
Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
_STRING = TypeAdapter(StrictStr)
_TEXT = TypeAdapter(Text)
_STRINGS = TypeAdapter(list[StrictStr])
_BOOLEAN = TypeAdapter(StrictBool)
_POSITIVE = TypeAdapter(Annotated[Number, Field(gt=0)])


def accepts(adapter: TypeAdapter[Any], raw: Any) -> bool:
    """Whether pydantic's ``adapter`` accepts ``raw`` as it is (strict: no coercion)."""
    try:
        adapter.validate_python(raw)
    except ValidationError:
        return False
    return True


@cache
def _whole(low: int, high: int | None) -> TypeAdapter[int]:
    return TypeAdapter(Annotated[int, Field(strict=True, ge=low, le=high)])


@cache
def _between(low: float, high: float) -> TypeAdapter[float]:
    return TypeAdapter(Annotated[Number, Field(ge=low, le=high)])


def mapping(value: Value) -> dict[str, Any]:
    if not isinstance(value.raw, Mapping):
        value.fail(f"must be a mapping (got {kind(value.raw)})")
    return dict(value.raw)


def string(value: Value, *, empty: bool = False) -> str:
    if not accepts(_STRING, value.raw):
        value.fail(f"must be a string (got {kind(value.raw)})")
    if not empty and not accepts(_TEXT, value.raw):
        value.fail("must not be empty")
    return str(value.raw)


def optional_string(value: Value | None) -> str | None:
    return None if value is None or value.raw is None else string(value, empty=True)


def string_list(value: Value | None) -> tuple[str, ...]:
    if value is None or value.raw is None:
        return ()
    raw = value.raw
    if not accepts(_STRINGS, raw):
        got = (
            kind(raw)
            if not isinstance(raw, list)
            else "a list holding " + next(kind(item) for item in raw if not isinstance(item, str))
        )
        value.fail(f"must be a list of strings (got {got})")
    return tuple(raw)


def whole_number(value: Value, low: int, high: int | None) -> int:
    raw = value.raw
    if not accepts(_whole(low, high), raw):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        value.fail(f"must be a whole number {span} (got {show(raw)})")
    return int(raw)


def number_between(value: Value, low: float, high: float) -> float:
    raw = value.raw
    if not accepts(_between(low, high), raw):
        value.fail(f"must be a number from {low:g} to {high:g} (got {show(raw)})")
    number: float = raw  # as written: 300 stays an int
    return number


def positive_number(value: Value) -> float:
    raw = value.raw
    if not accepts(_POSITIVE, raw):
        value.fail(f"{above_zero(raw)} (got {show(raw)})")
    return float(raw)


def above_zero(raw: Any) -> str:
    """``must be a number above 0``, or ``must be a finite number above 0`` for ``.inf``/NaN."""
    finite = not isinstance(raw, float) or math.isfinite(raw)
    return "must be a number above 0" if finite else "must be a finite number above 0"


def boolean(value: Value) -> bool:
    if not accepts(_BOOLEAN, value.raw):
        value.fail(f"must be true or false (got {show(value.raw)})")
    return bool(value.raw)


def one_of(value: Value, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if value.raw not in choices:
        shown = " or ".join(f'"{c}"' for c in choices) if len(choices) == 2 else ", ".join(choices)
        value.fail(f"must be {shown} (got {show(value.raw)})")
    return str(value.raw)


#: Format characters that reorder what follows them on a terminal (bidirectional controls).
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def unprintable(text: str) -> str | None:
    """What makes ``text`` unfit to be shown raw (pytest prints node ids as they are): ``NUL``,
    ``a newline``, ``an escape character``, ``a control character (U+0007)``, ``a
    bidirectional control (U+202E)``; None when it is fine."""
    for char in text:
        code = ord(char)
        if char == "\0":
            return "NUL"
        if char in "\r\n\u2028\u2029\x85":
            return f"a line break (U+{code:04X})"
        if char == "\x1b":
            return "an escape character (U+001B)"
        if code < 0x20 or 0x7F <= code < 0xA0:
            return f"a control character (U+{code:04X})"
        if char in BIDI:
            return f"a bidirectional control (U+{code:04X})"
    return None


def escaped(text: str) -> str:
    """``text`` with every character :func:`unprintable` names written as ``\\uXXXX``."""
    return "".join(f"\\u{ord(c):04x}" if unprintable(c) else c for c in text)


def name(value: Value) -> str:
    """A non-empty string fit to be shown raw: a case's, a grader's or a tag's name."""
    text = string(value)
    bad = unprintable(text)
    if bad is not None:
        value.fail(f'"{escaped(text)}" holds {bad}: a name must be printable text')
    return text


def names(value: Value | None) -> tuple[str, ...]:
    """:func:`string_list` of names (tags), each checked by :func:`name`."""
    items = string_list(value)
    if value is not None:
        inner = value.spot.child(value.key, f"{value.label}.")
        for index, item in enumerate(items):
            name(Value(item, inner, index))
    return items


def env(value: Value | None) -> dict[str, str]:
    """``env``: a mapping of ``EVAL_*`` keys to strings."""
    if value is None or value.raw is None:
        return {}
    found = mapping(value)
    inner = value.spot.child(value.key, f"{value.label}.")
    for key, item in found.items():
        if not isinstance(key, str) or not ENV_KEY.match(key):
            inner.fail(
                f'{value.label} key "{key}" is not allowed: only EVAL_* keys '
                "(matching ^EVAL_[A-Z0-9_]*$) can be set from a case",
                key,
            )
        if not isinstance(item, str):
            Value(item, inner, key).fail(f"must be a string (got {kind(item)})")
        if "\0" in item:
            Value(item, inner, key).fail("holds a NUL character, which no environment can carry")
    return found


def escapes(path: str) -> bool:
    """Whether a relative path leaves its folder (``..`` anywhere, or absolute)."""
    posix, windows = PurePosixPath(path), PureWindowsPath(path)
    return (
        posix.is_absolute()
        or windows.is_absolute()
        or bool(windows.drive)
        or any(part == ".." for part in windows.parts)
    )


def inside(value: Value, where: str = "the case directory") -> str:
    """A relative path that must stay inside ``where``."""
    text = string(value)
    if escapes(text):
        value.fail(
            f'path "{text}" escapes {where} (`..` or an absolute path) — it must name something '
            "inside it"
        )
    return text


#: At most this many links are named in one message about a folder's links.
LINKS_SHOWN = 5


def link_leaving(folder: Path, rel: str) -> tuple[str, Path] | None:
    """Where the relative path ``rel`` leaves ``folder`` through a symbolic link.

    Returns the part of ``rel`` that is the link (``/``-joined, as written) and where that link
    leads, or None when the path stays inside ``folder`` (a link that stays inside is
    fine). A path that does not exist is followed as far as it goes; ``..`` is :func:`escapes`'s
    business, so a path without links never leaves.
    """
    root = _real(folder)
    current = folder
    walked: list[str] = []
    for part in Path(rel).parts:
        current = current / part
        walked.append(part)
        if not _real(current).is_relative_to(root):
            return "/".join(walked), _real(current)
    return None


def links_leaving_under(folder: Path, rel: str) -> list[tuple[str, Path]]:
    """The symbolic links anywhere inside the folder ``rel`` (relative to ``folder``) that
    resolve outside ``folder``: each as ``rel/…`` and where it leads, in path order.

    Links are not followed while walking, so a loop cannot trap the walk; a link that stays
    inside ``folder`` is fine. A missing ``rel`` holds nothing.
    """
    root = _real(folder)
    start = _real(folder / rel)
    if not start.is_dir():
        return []
    found: list[tuple[str, Path]] = []
    for here, dirs, files in os.walk(start):
        dirs.sort()
        for name in sorted((*dirs, *files)):
            path = Path(here, name)
            if path.is_symlink():
                target = _real(path)
                if not target.is_relative_to(root):
                    shown = PurePosixPath(*Path(rel).parts, *path.relative_to(start).parts)
                    found.append((shown.as_posix(), target))
    return sorted(found, key=lambda item: item[0].split("/"))


def _real(path: Path) -> Path:
    """Where ``path`` leads, links followed as far as they go (a link loop does not raise)."""
    return Path(os.path.realpath(path))


def _what(target: Path) -> str:
    if target.is_dir():
        return "a folder"
    return "a file" if target.exists() else "a path that does not exist"


def describe_link(rel: str, found: tuple[str, Path], where: str = "the case directory") -> str:
    """``is a link to a file outside <where> (<target>)``, or ``goes through "<link>", a link
    to a folder outside <where> (<target>)`` when the link is a folder on the way."""
    link, target = found
    what = f"a link to {_what(target)} outside {where} ({target})"
    if link == "/".join(Path(rel).parts):
        return f"is {what}"
    return f'goes through "{link}", {what}'


def inside_folder(value: Value, folder: Path, where: str = "the case directory") -> str:
    """:func:`inside`, and the path must not leave ``folder`` through a symbolic link."""
    text = inside(value, where)
    found = link_leaving(folder, text)
    if found is not None:
        value.fail(
            f'path "{text}" {describe_link(text, found, where)} — it must name something inside it'
        )
    return text


def folder_inside(value: Value, folder: Path, where: str = "the case directory") -> str:
    """:func:`inside_folder` for a folder whose files are used: no link in it may lead out."""
    text = inside_folder(value, folder, where)
    links = links_leaving_under(folder, text)
    if links:
        shown = ", ".join(f'"{link}" ({target})' for link, target in links[:LINKS_SHOWN])
        more = len(links) - LINKS_SHOWN
        if more > 0:
            shown += f" and {more} more"
        count = "a link" if len(links) == 1 else f"{len(links)} links"
        value.fail(
            f'path "{text}" holds {count} leading outside {where}: {shown} — everything in it '
            f"must stay inside {where}"
        )
    return text
