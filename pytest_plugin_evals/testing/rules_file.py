"""The scripted model's rules, read from a YAML or JSON file (``serve``'s RULES argument).

The file holds what :class:`~.rules.Rule` and the reply helpers take, as data::

    default_text: OK            # optional: the answer when no rule matches
    usage: [1200, 40]           # optional: input and output tokens reported per answer
    rules:
      - when_tool_result: "Launching skill"
        reply: {text: "The next version is 1.4.1."}
      - when_prompt: {regex: "next (version|release)"}
        times: 1
        reply:
          - text: "Let me check."
          - tool_use: {name: Skill, input: {skill: "release-helper:next-version"}}
      - reply: [{delay: 1}, {error: {status: 429, retry_after: 1}}]

(or only the list of rules). A reply is one part or a list of parts; a part is ``text``,
``tool_use`` (``name``, ``input``, ``id``), ``error`` (a status, or ``status``, ``type``,
``message``, ``retry_after``) or ``delay`` (seconds); a bare string is a text part. A file
that is not such rules is one :class:`RulesFileError`: the file, the line, what is wrong.
JSON is read by suffix (``.json``), anything else as YAML (PyYAML, installed with the plugin).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..util.jsonlines import found
from ..util.safeload import OverBound, compose_yaml, json_data
from .rules import Reply, Rule, delay, error, text, tool_use

RULE_KEYS = ("reply", "when_prompt", "when_tool_offered", "when_tool_result", "when_model", "times")
PART_KEYS = ("text", "tool_use", "error", "delay")
TOP_KEYS = ("rules", "default_text", "usage")
#: A rules file larger than this is refused.
MAX_BYTES = 8 * 1024 * 1024


class RulesFileError(ValueError):
    """``RULES.yaml:12: rules[1].reply: unknown part 'txt' (text, tool_use, error, delay)``."""


@dataclass(frozen=True)
class RulesFile:
    rules: tuple[Rule, ...]
    default_text: str = "OK"
    usage: tuple[int, int] = (1200, 40)


class _Node:
    """A value and the line it starts on (1-based)."""

    __slots__ = ("line", "value")

    def __init__(self, value: Any, line: int) -> None:
        self.value = value
        self.line = line


def _nodes(text: str, is_json: bool) -> _Node:
    """The file's data as :class:`_Node` trees (mappings of str → node, lists of nodes)."""
    import yaml

    what = "JSON" if is_json else "YAML"
    try:
        if is_json:
            json_data(text)  # JSON's own syntax errors, with its line
        root = compose_yaml(text, yaml.SafeLoader)
    except json.JSONDecodeError as exc:
        raise _At(exc.lineno, f"invalid JSON: {exc.msg}") from None
    except OverBound as exc:
        raise _At(exc.line or 1, f"invalid {what}: {exc.message}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise _At(line, f"invalid {'JSON' if is_json else 'YAML'}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise _At(1, f"invalid {'JSON' if is_json else 'YAML'}: {exc}") from None
    if root is None:
        return _Node(None, 1)
    return _convert(root)


def _convert(node: Any, loader: Any = None) -> _Node:
    import yaml

    loader = loader or yaml.SafeLoader("")
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        mapping: dict[str, _Node] = {}
        for key, value in node.value:
            mapping[str(key.value)] = _convert(value, loader)
            mapping[str(key.value)].line = key.start_mark.line + 1
        return _Node(mapping, line)
    if isinstance(node, yaml.SequenceNode):
        return _Node([_convert(item, loader) for item in node.value], line)
    return _Node(loader.construct_object(node), line)


class _At(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _plain(node: _Node) -> Any:
    if isinstance(node.value, dict):
        return {k: _plain(v) for k, v in node.value.items()}
    if isinstance(node.value, list):
        return [_plain(v) for v in node.value]
    return node.value


def _keys(node: _Node, allowed: tuple[str, ...], where: str) -> dict[str, _Node]:
    if not isinstance(node.value, dict):
        raise _At(node.line, f"{where}: expected a mapping, found {found(node.value)}")
    for key, value in node.value.items():
        if key not in allowed:
            raise _At(value.line, f"{where}: unknown key {key!r} (keys: {', '.join(allowed)})")
    mapping: dict[str, _Node] = node.value
    return mapping


def _match(node: _Node, where: str) -> str | re.Pattern[str]:
    if isinstance(node.value, str):
        return node.value
    pattern = _keys(node, ("regex",), where).get("regex")
    if pattern is None or not isinstance(pattern.value, str):
        raise _At(node.line, f"{where}: expected a string, or {{regex: <pattern>}}")
    try:
        return re.compile(pattern.value)
    except re.error as exc:
        raise _At(pattern.line, f"{where}: invalid regex: {exc}") from None


def _number(node: _Node, where: str) -> float:
    if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
        raise _At(node.line, f"{where}: expected a number, found {found(node.value)}")
    return float(node.value)


def _part(node: _Node, where: str) -> Reply:
    if isinstance(node.value, str):
        return text(node.value)
    fields = _keys(node, PART_KEYS, where)
    if len(fields) != 1:
        raise _At(node.line, f"{where}: a part has exactly one of {', '.join(PART_KEYS)}")
    ((kind, value),) = fields.items()
    at = f"{where}.{kind}"
    try:
        if kind == "text":
            if not isinstance(value.value, str):
                raise _At(value.line, f"{at}: expected a string, found {found(value.value)}")
            return text(value.value)
        if kind == "delay":
            return delay(_number(value, at))
        if kind == "error":
            if isinstance(value.value, int) and not isinstance(value.value, bool):
                return error(value.value)
            spec = _keys(value, ("status", "type", "message", "retry_after"), at)
            status = _needed(spec, "status", value, at, "an HTTP error code")
            retry = spec.get("retry_after")
            return error(
                status.value,
                _str_or_none(spec.get("type"), f"{at}.type"),
                _str_or_none(spec.get("message"), f"{at}.message"),
                retry_after=None if retry is None else _number(retry, f"{at}.retry_after"),
            )
        spec = _keys(value, ("name", "input", "id"), at)
        name = _needed(spec, "name", value, at, "the tool to call")
        given = spec.get("input")
        return tool_use(
            name.value,
            None if given is None else _plain(given),
            id=_str_or_none(spec.get("id"), f"{at}.id"),
        )
    except (TypeError, ValueError) as exc:
        raise _At(value.line, f"{at}: {exc}") from None


def _needed(spec: dict[str, _Node], key: str, node: _Node, where: str, what: str) -> _Node:
    """The ``key`` of ``spec`` (the mapping ``node`` at ``where``); one line saying it lacks
    ``key`` (``what`` it is) when it does."""
    found = spec.get(key)
    if found is None:
        raise _At(node.line, f"{where}: needs a {key} ({what})")
    return found


def _str_or_none(node: _Node | None, where: str) -> str | None:
    if node is None or node.value is None:
        return None
    if not isinstance(node.value, str):
        raise _At(node.line, f"{where}: expected a string, found {found(node.value)}")
    return node.value


def _reply(node: _Node, where: str) -> Reply:
    parts = node.value if isinstance(node.value, list) else [node]
    if not parts:
        raise _At(node.line, f"{where}: an empty reply (give at least one part)")
    combined = Reply()
    for index, part in enumerate(parts):
        at = f"{where}[{index}]" if isinstance(node.value, list) else where
        try:
            combined = combined + _part(part, at)
        except ValueError as exc:  # two errors, or an error and blocks
            raise _At(part.line, f"{at}: {exc}") from None
    return combined


def _rule(node: _Node, where: str) -> Rule:
    fields = _keys(node, RULE_KEYS, where)
    if "reply" not in fields:
        raise _At(node.line, f"{where}: a rule needs a reply")
    conditions: dict[str, Any] = {}
    for key in RULE_KEYS[1:5]:
        if key in fields:
            conditions[key] = _match(fields[key], f"{where}.{key}")
    times = fields.get("times")
    if times is not None and (
        isinstance(times.value, bool) or not isinstance(times.value, int) or times.value < 1
    ):
        raise _At(times.line, f"{where}.times: expected a whole number of 1 or more")
    return Rule(
        reply=_reply(fields["reply"], f"{where}.reply"),
        times=None if times is None else times.value,
        **conditions,
    )


def _file(root: _Node) -> RulesFile:
    if isinstance(root.value, list):
        listed, top = root, {}
    else:
        if root.value is None:
            raise _At(1, "an empty file (expected rules: a list of rules)")
        top = _keys(root, TOP_KEYS, "the file")
        if "rules" not in top:
            raise _At(root.line, "the file: needs rules: a list of rules")
        listed = top["rules"]
    if not isinstance(listed.value, list):
        raise _At(listed.line, f"rules: expected a list, found {found(listed.value)}")
    rules = tuple(_rule(n, f"rules[{i}]") for i, n in enumerate(listed.value))
    default = top.get("default_text")
    usage = top.get("usage")
    tokens = (1200, 40)
    if usage is not None:
        pair = _plain(usage)
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in pair)
        ):
            raise _At(usage.line, "usage: expected [input tokens, output tokens]")
        tokens = (pair[0], pair[1])
    return RulesFile(
        rules=rules,
        default_text=_str_or_none(default, "default_text") or "OK",
        usage=tokens,
    )


def read_rules(path: Path, shown: Callable[[Path], str] = str) -> RulesFile:
    """The rules ``path`` holds; :class:`RulesFileError` of one line when it holds no rules."""
    name = shown(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise RulesFileError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise RulesFileError(f"{name}: larger than {MAX_BYTES // 2**20} MiB")
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RulesFileError(f"{name}: not UTF-8 text") from None
    try:
        return _file(_nodes(source, path.suffix.lower() == ".json"))
    except _At as exc:
        raise RulesFileError(f"{name}:{exc.line}: {exc.message}") from None
    except RecursionError:
        raise RulesFileError(f"{name}: nested too deeply") from None
