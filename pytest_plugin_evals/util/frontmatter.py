"""YAML with line numbers, and Markdown files that open with a YAML frontmatter block.

Loaders report the line of the offending key, so YAML is composed into nodes first (whose marks
carry the lines) and only then constructed into Python data. :class:`Located` keeps both: the data
and a map from key paths (``("graders", 0, "weight")``) to 1-based line numbers in the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from pytest_plugin_evals.util.safeload import OverBound, compose_yaml

KeyPath = tuple[Any, ...]

FENCE = "---"


@dataclass(frozen=True)
class Located:
    """Parsed data plus the line of every mapping key and sequence item, by key path."""

    data: Any
    lines: dict[KeyPath, int] = field(default_factory=dict)
    #: The line of the document's first line (used when nothing closer is known).
    first_line: int | None = None

    def line(self, *path: Any) -> int | None:
        """The line of ``path``, else of its nearest known ancestor."""
        key: KeyPath = tuple(path)
        while key:
            found = self.lines.get(key)
            if found is not None:
                return found
            key = key[:-1]
        return self.first_line


@dataclass(frozen=True)
class Frontmatter:
    """A Markdown file split at its frontmatter fence."""

    #: The YAML between the fences, or None when the file has no frontmatter.
    yaml_text: str | None
    #: The line of the first YAML line (the line after the opening ``---``).
    yaml_line: int
    body: str
    #: The line the body starts on.
    body_line: int


class YAMLProblem(ValueError):
    """YAML that does not parse: ``message`` is one sentence, ``line`` is 1-based or None."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class Unterminated(ValueError):
    """An opening ``---`` with no closing one."""


def split(text: str) -> Frontmatter:
    """Split ``text`` at a frontmatter block fenced by ``---`` lines.

    Raises :class:`Unterminated` when the file opens a block and never closes it.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != FENCE:
        return Frontmatter(None, 1, text, 1)
    for index in range(1, len(lines)):
        if lines[index].rstrip() == FENCE:
            return Frontmatter(
                yaml_text="".join(lines[1:index]),
                yaml_line=2,
                body="".join(lines[index + 1 :]),
                body_line=index + 2,
            )
    raise Unterminated('unterminated frontmatter (opening "---" with no closing "---")')


def load_yaml(text: str, first_line: int = 1) -> Located:
    """Parse one YAML document, keeping lines (``first_line`` = the file line of ``text``'s first).

    Raises :class:`YAMLProblem` for syntax errors, unsupported tags, duplicate keys and text
    past the loaders' bounds (:mod:`pytest_plugin_evals.util.safeload`).
    """
    try:
        node = compose_yaml(text)
    except OverBound as exc:
        line = None if exc.line is None else exc.line + first_line - 1
        raise YAMLProblem(exc.message, line) from None
    except yaml.MarkedYAMLError as exc:
        raise _problem(exc, first_line, text) from None
    except yaml.YAMLError as exc:
        raise YAMLProblem(_first_line(str(exc)), None) from None
    if node is None:
        return Located(None, {}, first_line)
    lines: dict[KeyPath, int] = {}
    _index(node, (), lines, first_line - 1)
    try:
        data = yaml.constructor.SafeConstructor().construct_document(node)
    except yaml.MarkedYAMLError as exc:
        raise _problem(exc, first_line, text) from None
    except (yaml.YAMLError, TypeError, ValueError) as exc:
        raise YAMLProblem(_first_line(str(exc)), None) from None
    return Located(data, lines, node.start_mark.line + first_line)


def _index(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int], offset: int) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[Any] = set()
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            line = key_node.start_mark.line + 1 + offset
            if key is not None and key in seen:
                raise YAMLProblem(f'duplicate key "{key}"', line)
            seen.add(key)
            where = (*path, key)
            lines[where] = line
            _index(value_node, where, lines, offset)
    elif isinstance(node, yaml.SequenceNode):
        for position, item in enumerate(node.value):
            where = (*path, position)
            lines[where] = item.start_mark.line + 1 + offset
            _index(item, where, lines, offset)


def _problem(exc: yaml.MarkedYAMLError, first_line: int, text: str) -> YAMLProblem:
    mark = exc.problem_mark or exc.context_mark
    if exc.context_mark is not None and mark is not None and not text[mark.index :].strip():
        mark = exc.context_mark  # the problem is the end of the text: point where it began
    message = exc.problem or exc.context or "malformed YAML"
    line = mark.line + first_line if mark is not None else None
    return YAMLProblem(_first_line(message), line)


def _first_line(text: str) -> str:
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else "malformed YAML"
