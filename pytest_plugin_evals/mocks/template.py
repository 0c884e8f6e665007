"""Mock bodies: ``{{input.a.b}}`` substitutions and ``{{file:fixtures/x}}`` inserts.

``{{input.a.b}}`` inserts the call's input at a dot path: strings raw, anything else as compact
JSON, a missing path as nothing (``{{input}}`` is the whole input). ``{{file:path}}`` inserts a
file relative to the server's mock folder (the folder holding the mock file); the path may use
``{input.x}`` for one plain path segment. A file must stay inside the mock folder: no ``..``, no
absolute path, no symbolic link that leads out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from ..util.jsvalues import MISSING, inserted, js_string, lookup

#: ``{{input}}``, ``{{ input.a.b }}``, ``{{file:fixtures/x.json}}``.
PLACEHOLDER = re.compile(r"\{\{\s*(input(?:\.[^{}\s]*)?|file:[^{}]*?(?:\{[^{}]*\}[^{}]*?)*)\s*\}\}")
#: ``{input.x}`` inside a file path.
PATH_INPUT = re.compile(r"\{\s*input\.([^{}\s]+)\s*\}")
#: A fixture larger than this is refused.
MAX_FIXTURE_BYTES = 10 * 1024 * 1024


class TemplateError(ValueError):
    """A template that cannot be rendered: one sentence naming what is wrong."""


def placeholders(template: str) -> Iterator[tuple[str, int]]:
    """Every ``{{…}}`` placeholder's inside text and its 0-based line in the template."""
    for match in PLACEHOLDER.finditer(template):
        yield match.group(1).strip(), template.count("\n", 0, match.start())


def check_static(template: str, root: Path) -> list[tuple[str, int]]:
    """Problems that do not depend on the input: ``(message, line offset)`` per bad placeholder.

    File paths without ``{input.…}`` are resolved now, so an escaping or missing fixture is a load
    error rather than a surprise in the middle of a run.
    """
    problems: list[tuple[str, int]] = []
    for inner, line in placeholders(template):
        if not inner.startswith("file:"):
            continue
        path = inner[5:].strip()
        try:
            if PATH_INPUT.search(path):
                _check_relative(PATH_INPUT.sub("x", path), path)
            else:
                fixture_path(root, path)
        except TemplateError as exc:
            problems.append((str(exc), line))
    return problems


def render(template: str, arguments: Mapping[str, Any], root: Path) -> str:
    """The body with every placeholder replaced. Raises :class:`TemplateError`."""

    def replace(match: re.Match[str]) -> str:
        inner = match.group(1).strip()
        if inner.startswith("file:"):
            return read_fixture(root, _fill_path(inner[5:].strip(), arguments))
        path = inner[len("input") :].removeprefix(".")
        return inserted(lookup(dict(arguments), path))

    return PLACEHOLDER.sub(replace, template)


def _fill_path(path: str, arguments: Mapping[str, Any]) -> str:
    def segment(match: re.Match[str]) -> str:
        value = lookup(dict(arguments), match.group(1))
        text = "" if value is MISSING else js_string(value)
        if not text or text in (".", "..") or "/" in text or "\\" in text or "\0" in text:
            raise TemplateError(
                f"{{input.{match.group(1)}}} in the fixture path {path!r} must be one plain path "
                f"segment (got {text!r})"
            )
        return text

    return PATH_INPUT.sub(segment, path)


def _check_relative(path: str, shown: str) -> PurePosixPath:
    if not path:
        raise TemplateError("{{file:}} needs a path relative to the mock folder")
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute() or re.match(r"^[A-Za-z]:", path):
        raise TemplateError(
            f"fixture path {shown!r} is absolute: give a path relative to the mock folder"
        )
    if ".." in pure.parts:
        raise TemplateError(f"fixture path {shown!r} leaves the mock folder (it uses ..)")
    return pure


def fixture_path(root: Path, path: str) -> Path:
    """The fixture ``path`` names inside ``root``, checked: relative, no ``..``, no escape."""
    pure = _check_relative(path, path)
    base = root.resolve()
    target = (base / pure).resolve()
    if target != base and base not in target.parents:
        raise TemplateError(
            f"fixture path {path!r} leads out of the mock folder through a symbolic link"
        )
    if not target.is_file():
        raise TemplateError(f"fixture {path!r} does not exist in the mock folder {root}")
    return target


def read_fixture(root: Path, path: str) -> str:
    target = fixture_path(root, path)
    size = target.stat().st_size
    if size > MAX_FIXTURE_BYTES:
        raise TemplateError(f"fixture {path!r} is larger than 10 MiB ({size} bytes)")
    try:
        return target.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise TemplateError(f"fixture {path!r} is not UTF-8 text") from None
    except OSError as exc:
        raise TemplateError(f"fixture {path!r} cannot be read: {exc.strerror or exc}") from None
