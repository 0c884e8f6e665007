"""JSON with line numbers: ``json.loads`` for the data, a light token scan for the lines.

The scan records the line of every object key and array item by key path, the same
:class:`Located` the YAML loader gives, so a loader reports ``evals.json:14`` for the case
that is wrong whichever syntax the suite is written in.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_plugin_evals.util.frontmatter import KeyPath, Located
from pytest_plugin_evals.util.safeload import OverBound, json_data

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\],:\n]|[^\s{}\[\],:"]+')


class JSONProblem(ValueError):
    """JSON that does not parse: ``message`` is one sentence, ``line`` is 1-based."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def load_json(text: str) -> Located:
    """Parse ``text``; raises :class:`JSONProblem` with json's line for a syntax error, and
    for text past the loaders' bounds (:mod:`pytest_plugin_evals.util.safeload`)."""
    try:
        data = json_data(text)
    except json.JSONDecodeError as exc:
        raise JSONProblem(f"invalid JSON: {exc.msg}", exc.lineno) from None
    except OverBound as exc:
        raise JSONProblem(f"invalid JSON: {exc.message}", exc.line) from None
    return Located(data, key_lines(text), 1)


class _Frame:
    __slots__ = ("expect_key", "index", "is_object", "key", "path")

    def __init__(self, is_object: bool, path: KeyPath) -> None:
        self.is_object = is_object
        self.path = path
        self.key: Any = None
        self.index = 0
        self.expect_key = is_object


def key_lines(text: str) -> dict[KeyPath, int]:
    """The line of every object key and array item of a valid JSON text, by key path."""
    lines: dict[KeyPath, int] = {}
    stack: list[_Frame] = []
    line = 1
    for match in _TOKEN.finditer(text):
        token = match.group()
        top = stack[-1] if stack else None
        if token == "\n":
            line += 1
        elif token == ",":
            if top is not None:
                if top.is_object:
                    top.expect_key = True
                else:
                    top.index += 1
        elif token == ":":
            if top is not None:
                top.expect_key = False
        elif token in "}]":
            if stack:
                stack.pop()
        elif top is not None and top.is_object and top.expect_key and token.startswith('"'):
            top.key = json.loads(token)
            where = (*top.path, top.key)
            lines[where] = line
        else:
            here: KeyPath = ()
            if top is not None:
                here = (*top.path, top.key) if top.is_object else (*top.path, top.index)
                if not top.is_object:
                    lines[here] = line
            if token in "{[":
                stack.append(_Frame(token == "{", here))
    return lines
