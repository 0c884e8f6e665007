"""The one way a YAML or JSON file a user or an agent wrote is read and parsed: bounded.

A suite's files (``case.yaml``, prompt and grader front matter, ``evals.json``, sy suites,
``package.json`` evals, trigger files), mock specs and replay files, the messages a run's
processes send the mock host, and the scripted model's rules are all someone else's text.
Three bounds keep a hostile one from stalling or crashing the session, each a
:class:`OverBound` (one sentence, and the line where known) that the caller reports as the
file's load error:

- a file holds at most :data:`MAX_FILE_BYTES` (5 MiB);
- YAML's aliases expand to at most :data:`MAX_ALIAS_NODES` nodes in all (a "billion laughs"
  document of a few hundred bytes would otherwise expand to billions), and none refers to a
  node that holds it;
- YAML and JSON nest at most :data:`MAX_DEPTH` deep (deeper ones would exhaust the stack of
  whatever walks them next).

Each check takes time in proportion to the text, never to what its aliases expand to.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # YAML is imported when YAML is read: finding no suite loads no parser
    import yaml

#: The most a file of a suite (or a spec, a replay file) may hold.
MAX_FILE_BYTES = 5 * 2**20
#: How deep YAML and JSON may nest.
MAX_DEPTH = 100
#: The most nodes a YAML document's aliases may expand to, all of them together.
MAX_ALIAS_NODES = 10_000

_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class OverBound(ValueError):
    """Text past one of the bounds: ``message`` is one sentence, ``line`` 1-based or None."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def read_text(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """The file's text (UTF-8); :class:`OverBound` when it holds more than ``limit`` bytes
    (OSError and UnicodeDecodeError as reading raises them)."""
    with path.open(encoding="utf-8") as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise OverBound(_too_big(limit))
        text = handle.read(limit + 1)  # a file that is not a regular one says no size
    if len(text) > limit:
        raise OverBound(_too_big(limit))
    return text


def _too_big(limit: int) -> str:
    return f"the file is larger than {limit // 2**20} MiB, the most a suite's file may hold"


def json_data(text: str | bytes) -> Any:
    """``json.loads``, bounded in depth (json.JSONDecodeError as it raises it)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except RecursionError:
        _json_depth(text)  # json read it up to there: a prefix where every string closes
        raise OverBound(f"nested more than {MAX_DEPTH} deep") from None
    if text.count("[") + text.count("{") > MAX_DEPTH:
        _json_depth(text)  # valid JSON: every string closes, so the scan is linear
    return data


def _json_depth(text: str) -> None:
    depth = 0
    for found in _BRACKETS.finditer(text):
        token = found.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, found.start()) + 1
                raise OverBound(f"nested more than {MAX_DEPTH} deep", line)
        elif token in "]}":
            depth -= 1


def yaml_loader() -> type[yaml.SafeLoader] | type[yaml.CSafeLoader]:
    """libyaml's safe loader when PyYAML has it (much faster, the same nodes), else PyYAML's."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def compose_yaml(
    text: str, loader: type[yaml.SafeLoader] | type[yaml.CSafeLoader] | None = None
) -> yaml.Node | None:
    """One YAML document's nodes (``yaml.compose``), within the bounds (yaml.YAMLError as
    composing raises it; lines in :class:`OverBound` are ``text``'s, 1-based)."""
    import yaml

    try:
        node = yaml.compose(text, Loader=loader or yaml_loader())
    except RecursionError:
        raise OverBound(f"nested more than {MAX_DEPTH} deep") from None
    if node is not None:
        _measure(node)
    return node


def yaml_data(text: str) -> Any:
    """One YAML document's data (``yaml.safe_load``), within the bounds."""
    import yaml

    node = compose_yaml(text)
    if node is None:
        return None
    return yaml.constructor.SafeConstructor().construct_document(node)


def _children(node: yaml.Node) -> list[yaml.Node]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _measure(root: yaml.Node) -> None:
    """Walk the nodes once, in the document's order (so a node is met first where it is
    defined, and again only through an alias): the depth, and what aliases expand to."""
    import yaml

    sizes: dict[int, int] = {}  # a node met before → the nodes it expands to
    open_ = {id(root)}
    stack: list[tuple[yaml.Node, Iterator[yaml.Node]]] = [(root, iter(_children(root)))]
    through_aliases = 0
    while stack:
        node, rest = stack[-1]
        child = next(rest, None)
        if child is None:
            stack.pop()
            open_.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in _children(node))
            continue
        line = child.start_mark.line + 1
        if id(child) in open_:
            raise OverBound("an alias refers to a node that holds it", node.start_mark.line + 1)
        if id(child) in sizes:
            through_aliases += sizes[id(child)]
            if through_aliases > MAX_ALIAS_NODES:
                message = f"aliases expand to more than {MAX_ALIAS_NODES:,} nodes"
                raise OverBound(message, node.start_mark.line + 1)
            continue
        if len(stack) >= MAX_DEPTH and isinstance(child, yaml.CollectionNode):
            raise OverBound(f"nested more than {MAX_DEPTH} deep", line)
        open_.add(id(child))
        stack.append((child, iter(_children(child))))
