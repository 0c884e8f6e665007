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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import LoadError
from ..util.frontmatter import Unterminated, YAMLProblem, load_yaml, split
from .guards import Guard, GuardError, compile_expect
from .template import check_static

KEYS = ("type", "expect", "error", "tools", "abort_when")
TYPES = ("fixed", "agent")


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
        text = path.read_text(encoding="utf-8")
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

    for key in raw:
        if key not in KEYS:
            raise fail(
                f'unknown key "{key}" in mock frontmatter (expected one of: {", ".join(KEYS)})',
                key,
            )
    kind = raw.get("type", "fixed")
    if kind is None:
        kind = "fixed"
    if kind not in TYPES:
        raise fail(f"type must be fixed or agent (got {kind!r})", "type")
    error = raw.get("error", False)
    if error is None:
        error = False
    if not isinstance(error, bool):
        raise fail(f"error must be true or false (got {error!r})", "error")
    try:
        guards = compile_expect(raw.get("expect"))
    except GuardError as exc:
        raise fail(str(exc), "expect") from None
    tools = raw.get("tools")
    if tools is None:
        tools = []
    if not isinstance(tools, list) or not all(isinstance(t, str) and t.strip() for t in tools):
        raise fail("tools must be a list of tool names", "tools")
    abort_when = raw.get("abort_when")
    if abort_when is not None and not isinstance(abort_when, str):
        raise fail(f"abort_when must be text (got {abort_when!r})", "abort_when")
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
