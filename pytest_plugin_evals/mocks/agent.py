"""``type: agent`` mocks: a small model plays the server; its answers are recorded and replayed.

For each call to an agent tool the stand-in:

1. looks for an adopted answer, ``<mocks>/.replay/<server>/<tool>-<sha256>.json`` (the sha256 of
   the call's input as canonical JSON: sorted keys, no spaces): found, it is the answer and no
   model is asked (a replay *hit*);
2. else asks the model (a *miss*): the system prompt says which server it stands in for, what
   the server is (the ``_server.md`` body) and its tools; the user message is the call::

       Current call: search
       Arguments:
       {
         "q": "release"
       }

   (earlier calls of the run come first, so answers can depend on them). The answer is saved as
   ``<results>/mock-recordings/<server>/<tool>-<sha256>.json`` beside an ``ADOPT.txt`` saying how
   to adopt it: copy the files into ``mocks/.replay/<server>/`` and commit them.

A reply ``ERROR: <message>`` is a tool error (``<message>``); ``ABORT: <reason>`` stops the run
(the reason is recorded) when the server (or tool) has ``abort_when:``, and is plain text
otherwise. Without a judge a miss answers ``no judge configured to play this server`` as a tool
error.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..util.safeload import json_data, read_text
from .recordings import ADOPT_FILE

NO_JUDGE = "ERROR: no judge configured to play this server"
ERROR_PREFIX = "ERROR:"
ABORT_PREFIX = "ABORT:"

Replay = Literal["hit", "miss"]


def canonical_input(arguments: Mapping[str, Any]) -> str:
    """The call's input as canonical JSON: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def answer_file(tool: str, arguments: Mapping[str, Any]) -> str:
    """``<tool>-<sha256 of the canonical input>.json``: where one answer is recorded (a tool
    name's characters other than letters, digits, ``_``, ``-`` and ``.`` become ``_``)."""
    digest = hashlib.sha256(canonical_input(arguments).encode("utf-8")).hexdigest()
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", tool).lstrip(".") or "tool"
    return f"{name}-{digest}.json"


@dataclass(frozen=True)
class AgentTool:
    """What the model is told about one tool."""

    name: str
    description: str | None = None
    input_schema: dict[str, Any] = field(default_factory=dict)
    #: The body of the tool's own ``type: agent`` file, if it has one.
    notes: str = ""
    abort_when: str | None = None


@dataclass(frozen=True)
class Answer:
    """One answer of an agent tool, and how it was made."""

    text: str
    is_error: bool = False
    #: Why the model stopped the run (``ABORT:``), if it did.
    abort: str | None = None
    cost_usd: float = 0.0
    replay: Replay = "miss"

    def to_record(self, server: str, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The recording file's content."""
        doc: dict[str, Any] = {
            "server": server,
            "tool": tool,
            "input": dict(arguments),
            "output": self.text,
            "isError": self.is_error,
        }
        if self.abort is not None:
            doc["abort"] = self.abort
        return doc


def interpret(reply: str, *, may_abort: bool) -> Answer:
    """The answer a model's reply stands for: ``ERROR:`` a tool error, ``ABORT:`` an abort."""
    text = reply.strip()
    if text.startswith(ERROR_PREFIX):
        return Answer(text[len(ERROR_PREFIX) :].strip(), is_error=True)
    if may_abort and text.startswith(ABORT_PREFIX):
        reason = text[len(ABORT_PREFIX) :].strip() or "the server's model stopped the run"
        return Answer(text, abort=reason)
    return Answer(text)


def system_prompt(server: str, instructions: str, tools: Mapping[str, AgentTool]) -> str:
    """What the model playing ``server`` is told once: its role, the server, the tools."""
    lines = [
        f'You are standing in for the MCP server "{server}" inside an automated evaluation of '
        "an AI agent. The agent calls the server's tools and you answer each call exactly as "
        "the real server would, so that the agent cannot tell the difference.",
        "",
        "Reply with the tool result only: the text the server returns, with no commentary. "
        "Keep your answers consistent with each other and with earlier calls.",
        'If the real server would fail on the call, reply "ERROR: " followed by its error message.',
    ]
    if any(t.abort_when for t in tools.values()):
        lines.append(
            'If the call meets the abort condition of its tool, reply "ABORT: " followed by a '
            "one-line reason instead: the evaluation run stops there."
        )
    lines += ["", "The server:", instructions.strip() or "(no description given)", "", "Tools:"]
    for tool in tools.values():
        lines.append(f"- {tool.name}: {tool.description or '(no description)'}")
        lines.append(f"  Input schema: {json.dumps(tool.input_schema, ensure_ascii=False)}")
        if tool.notes.strip():
            lines.append("  Notes: " + tool.notes.strip().replace("\n", "\n  "))
        if tool.abort_when:
            lines.append(f"  Abort when: {tool.abort_when.strip()}")
    return "\n".join(lines)


History = list[tuple[str, Mapping[str, Any], Answer]]


def user_prompt(tool: str, arguments: Mapping[str, Any], history: History | None = None) -> str:
    """The call the model answers, after the run's earlier calls to this server."""
    parts = []
    if history:
        parts.append("Earlier calls in this session:")
        for index, (name, args, answer) in enumerate(history, 1):
            flag = " (error)" if answer.is_error else ""
            parts.append(f"{index}. {name} {canonical_input(args)}\n   Result{flag}: {answer.text}")
        parts.append("")
    shown = json.dumps(dict(arguments), indent=2, ensure_ascii=False)
    parts.append(f"Current call: {tool}\nArguments:\n{shown}")
    return "\n".join(parts)


def adopt_text(server: str, here: Path, target: Path | None) -> str:
    """The ``ADOPT.txt`` beside a server's recordings."""
    where = str(target) if target is not None else f"mocks/.replay/{here.name}"
    return (
        f'These files are answers a model gave while playing the MCP server "{server}" '
        "(a type: agent mock), one per call: <tool>-<sha256 of the input as canonical JSON>.json."
        "\n\nTo replay them with no model call, copy them into the suite's replay folder and "
        "commit it, so CI is deterministic:\n\n"
        f"    mkdir -p {where}\n    cp {here}/*.json {where}/\n\n"
        "A call whose tool and input match a file there is answered from it (a replay hit); "
        "any other call still asks the model and is recorded here again. Edit a file's "
        '"output" (and "isError") to change the answer.\n'
    )


def _write_atomic(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (stand-ins of parallel runs share the folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass
class AgentServer:
    """The agent tools of one stand-in: replay, model, recording."""

    server: str
    instructions: str = ""
    tools: dict[str, AgentTool] = field(default_factory=dict)
    #: Adopted answers, searched in order (the case's folder first).
    replay_dirs: tuple[Path, ...] = ()
    #: The replay folder ``ADOPT.txt`` points at.
    adopt_to: Path | None = None
    #: Where this server's new answers are saved (None: not saved).
    recordings: Path | None = None
    #: The judge settings (``{"kind", "model", "env"}``); None: no model to ask.
    judge: Mapping[str, Any] | None = None
    history: History = field(default_factory=list)
    _player: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_spec(cls, server: str, doc: Mapping[str, Any]) -> AgentServer:
        """From the ``agent`` block and the agent tools of a stand-in spec."""
        block = doc.get("agent") or {}
        tools = {
            raw["name"]: AgentTool(
                name=raw["name"],
                description=raw.get("description"),
                input_schema=raw.get("inputSchema") or {},
                notes=raw.get("notes") or "",
                abort_when=raw.get("abortWhen"),
            )
            for raw in doc.get("tools", [])
            if raw.get("responder") == "agent"
        }
        recordings = block.get("recordings")
        adopt_to = block.get("adoptTo")
        return cls(
            server=server,
            instructions=block.get("instructions") or "",
            tools=tools,
            replay_dirs=tuple(Path(p) for p in block.get("replay", [])),
            adopt_to=Path(adopt_to) if adopt_to else None,
            recordings=Path(recordings) if recordings else None,
            judge=block.get("judge"),
        )

    def answer(self, tool: str, arguments: Mapping[str, Any]) -> Answer:
        """The answer to one call: replayed if adopted, else the model's (and recorded)."""
        found = self.replayed(tool, arguments)
        answer = found if found is not None else self.ask(tool, arguments)
        with self._lock:
            self.history.append((tool, dict(arguments), answer))
        return answer

    def replayed(self, tool: str, arguments: Mapping[str, Any]) -> Answer | None:
        """The adopted answer to this call, if there is one."""
        name = answer_file(tool, arguments)
        for folder in self.replay_dirs:
            path = folder / name
            if not path.is_file():
                continue
            try:
                doc = json_data(read_text(path))
                output = doc["output"]
                if not isinstance(output, str):
                    raise ValueError('"output" must be text')
            except (OSError, ValueError, KeyError, TypeError) as exc:
                text = f"mock {self.server}/{tool}: cannot read the replay file {path}: {exc}"
                return Answer(text, is_error=True)
            abort = doc.get("abort") if self._may_abort(tool) else None
            return Answer(
                output,
                is_error=bool(doc.get("isError")),
                abort=str(abort) if abort else None,
                replay="hit",
            )
        return None

    def ask(self, tool: str, arguments: Mapping[str, Any]) -> Answer:
        """Ask the model (a replay miss); a real answer is recorded."""
        from ..judges import JudgeProblem

        if not self.judge:
            return interpret(NO_JUDGE, may_abort=False)
        with self._lock:
            earlier = list(self.history)
        try:
            reply = self.player().call(user_prompt(tool, arguments, earlier))
        except JudgeProblem as exc:
            return Answer(f"mock {self.server}/{tool} could not answer: {exc}", is_error=True)
        answer = interpret(reply.text, may_abort=self._may_abort(tool))
        answer = Answer(answer.text, answer.is_error, answer.abort, reply.cost_usd, "miss")
        self.record(tool, arguments, answer)
        return answer

    def player(self) -> Any:
        """The model, built on first use."""
        from .player import make_player

        with self._lock:
            if self._player is None:
                system = system_prompt(self.server, self.instructions, self.tools)
                self._player = make_player(self.judge or {}, system)
            return self._player

    def record(self, tool: str, arguments: Mapping[str, Any], answer: Answer) -> None:
        """Save the answer for adoption (nothing when no recordings folder is set)."""
        if self.recordings is None:
            return
        doc = answer.to_record(self.server, tool, arguments)
        try:
            _write_atomic(
                self.recordings / answer_file(tool, arguments),
                json.dumps(doc, indent=2, ensure_ascii=False) + "\n",
            )
            adopt = self.recordings / ADOPT_FILE
            if not adopt.exists():
                _write_atomic(adopt, adopt_text(self.server, self.recordings, self.adopt_to))
        except OSError:
            pass  # a recording that cannot be saved leaves the answer as it is

    def close(self) -> None:
        """Close the model's connections, if it was built."""
        with self._lock:
            player, self._player = self._player, None
        close = getattr(player, "close", None)
        if callable(close):
            close()

    def _may_abort(self, tool: str) -> bool:
        entry = self.tools.get(tool)
        return bool(entry and entry.abort_when)
