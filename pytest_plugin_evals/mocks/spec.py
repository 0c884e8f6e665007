"""One mock file: ``<tool>.md`` (or a server's ``_server.md``), frontmatter plus body.

Frontmatter keys (strict: anything else is a load error naming the file and line):

* ``type``: ``fixed`` (default: the body is the answer) or ``agent`` (a model plays the server);
* ``expect``: input guards (see :mod:`.guards`); a violating call aborts the run;
* ``error``: ``true`` returns the body as a tool error (the run goes on);
* ``tools``: the tools an agent server offers (``_server.md`` only);
* ``abort_when``: when the model playing an agent server (or tool) may abort the run.

The body, with leading newlines and trailing whitespace trimmed, is the tool result template;
for ``type: agent`` it tells the model what the server is (``_server.md``) or adds notes on
its tool (``<tool>.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from ..model import LoadError
from ..util.frontmatter import Unterminated, YAMLProblem, load_yaml, split
from ..util.safeload import OverBound, read_text
from ..util.suggest import did_you_mean
from .guards import Guard, GuardError, compile_expect
from .template import check_static

TYPES = ("fixed", "agent")


class _Frontmatter(BaseModel):
    """A mock file's frontmatter, checked by pydantic (strict, no unknown key); ``null`` is
    the default. ``expect`` is compiled by :func:`.guards.compile_expect`."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    type: Literal["fixed", "agent"] | None = None
    expect: Any = None
    error: StrictBool | None = None
    tools: list[Annotated[StrictStr, Field(pattern=r"\S")]] | None = None
    abort_when: StrictStr | None = None


KEYS = tuple(_Frontmatter.model_fields)
#: How a wrong value of each key reads.
_WRONG: dict[str, Callable[[Any], str]] = {
    "type": lambda raw: f"type must be fixed or agent (got {raw!r})",
    "error": lambda raw: f"error must be true or false (got {raw!r})",
    "tools": lambda raw: "tools must be a list of tool names",
    "abort_when": lambda raw: f"abort_when must be text (got {raw!r})",
}


@dataclass(frozen=True)
class MockSpec:
    """A parsed mock file."""

    path: Path
    body: str
    type: str = "fixed"
    error: bool = False
    guards: tuple[Guard, ...] = ()
    tools: tuple[str, ...] = ()
    abort_when: str | None = None
    #: The line of the ``type:`` key (where an agent mock is reported), else 1.
    type_line: int = 1


def trim_body(body: str) -> str:
    """Leading newlines and trailing whitespace off, as the reference trims a mock body."""
    return body.lstrip("\r\n").rstrip()


def parse_mock(path: Path, *, root: Path | None = None) -> MockSpec:
    """Read and check one mock file; ``root`` is the folder ``{{file:}}`` paths resolve in.

    Raises :class:`LoadError` (with the line where known) for anything wrong.
    """
    try:
        text = read_text(path)
    except OverBound as exc:
        raise LoadError(path, exc.message) from None
    except UnicodeDecodeError:
        raise LoadError(path, "mock file is not UTF-8 text") from None
    except OSError as exc:
        raise LoadError(path, f"cannot read mock file: {exc.strerror or exc}") from None
    return parse_mock_text(text, path, root=root)


def parse_mock_text(text: str, path: Path, *, root: Path | None = None) -> MockSpec:
    try:
        parts = split(text)
    except Unterminated as exc:
        raise LoadError(path, str(exc), 1) from None
    raw: dict[str, Any] = {}
    lines: dict[Any, int] = {}
    if parts.yaml_text is not None:
        try:
            located = load_yaml(parts.yaml_text, parts.yaml_line)
        except YAMLProblem as exc:
            raise LoadError(path, f"invalid mock frontmatter: {exc.message}", exc.line) from None
        if located.data is not None and not isinstance(located.data, dict):
            raise LoadError(path, "mock frontmatter must be a map of keys", parts.yaml_line)
        raw = located.data or {}
        lines = {key[0]: line for key, line in located.lines.items() if len(key) == 1}

    def fail(message: str, key: str | None = None) -> LoadError:
        return LoadError(path, message, lines.get(key, 1) if key else 1)

    try:
        front = _Frontmatter.model_validate(raw)
    except ValidationError as exc:
        # The first problem, unknown keys before wrong values (each key's own line).
        errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        key = str(errors[0]["loc"][0])
        if errors[0]["type"] == "extra_forbidden":
            expected = ", ".join(KEYS)
            raise fail(
                f'unknown key "{key}" in mock frontmatter{did_you_mean(key, KEYS)} '
                f"(expected one of: {expected})",
                key,
            ) from None
        raise fail(_WRONG[key](raw[key]), key) from None
    kind = front.type or "fixed"
    error = bool(front.error)
    try:
        guards = compile_expect(front.expect)
    except GuardError as exc:
        raise fail(str(exc), "expect") from None
    tools = front.tools or []
    abort_when = front.abort_when
    body = trim_body(parts.body)
    if root is not None:
        leading = len(parts.body) - len(parts.body.lstrip("\r\n"))
        first = parts.body_line + parts.body[:leading].count("\n")
        for message, offset in check_static(body, root):
            raise LoadError(path, message, first + offset)
    return MockSpec(
        path=path,
        body=body,
        type=kind,
        error=error,
        guards=guards,
        tools=tuple(t.strip() for t in tools),
        abort_when=abort_when,
        type_line=lines.get("type", 1),
    )
