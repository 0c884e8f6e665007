"""The model that plays a ``type: agent`` server: the configured judge backend, own system prompt.

The judge backends send the grading system prompt; a stand-in needs its own (``You are standing
in for the MCP server …``). :func:`make_player` builds the backend the run's judge settings name
and puts the stand-in's system prompt in place of the judge's, leaving the backend's error
handling and cost accounting as they are:

* ``claude``: the ``--system-prompt`` argument of the CLI call;
* ``anthropic``: the ``system`` field of the Messages API request;
* ``openai``: the ``role: system`` message of the chat completion;
* any other judge object: the system text goes before the prompt.

The settings come from the stand-in's spec file (see :func:`.config.judge_settings`):
``{"kind", "model", "env"}``, ``env`` being the variables the backend reads (credentials,
endpoint), since the stand-in may run with less of the harness's environment than the judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from ..judges import Judge, JudgeImage, JudgeReply, make_judge
from ..judges.claude_cli import ClaudeJudge

#: Seconds one answer of the playing model may take.
PLAYER_TIMEOUT = 120.0


class _ClaudePlayer(ClaudeJudge):
    """The ``claude`` CLI judge with another system prompt."""

    system = ""

    def argv(self) -> list[str]:
        args = super().argv()
        args[args.index("--system-prompt") + 1] = self.system
        return args


class _Create:
    """An SDK resource whose ``create(**kwargs)`` gets its arguments rewritten first."""

    def __init__(self, create: Callable[..., Any], rewrite: Callable[[dict[str, Any]], None]):
        self._create = create
        self._rewrite = rewrite

    def create(self, **kwargs: Any) -> Any:
        self._rewrite(kwargs)
        return self._create(**kwargs)


class _AnthropicClient:
    """An ``anthropic.Anthropic`` client whose ``messages.create`` sends ``system``."""

    def __init__(self, client: Any, system: str) -> None:
        def rewrite(kwargs: dict[str, Any]) -> None:
            kwargs["system"] = system

        self._client = client
        self.messages = _Create(client.messages.create, rewrite)

    def close(self) -> None:
        self._client.close()


class _OpenAIClient:
    """An ``openai.OpenAI`` client whose ``chat.completions.create`` sends ``system``."""

    def __init__(self, client: Any, system: str) -> None:
        def rewrite(kwargs: dict[str, Any]) -> None:
            talk = [m for m in kwargs.get("messages", []) if m.get("role") != "system"]
            kwargs["messages"] = [{"role": "system", "content": system}, *talk]

        self._client = client
        self.chat = SimpleNamespace(completions=_Create(client.chat.completions.create, rewrite))

    def close(self) -> None:
        self._client.close()


class _Prefixed:
    """Any other judge: the system text leads the prompt."""

    def __init__(self, judge: Judge, system: str) -> None:
        self.judge = judge
        self.system = system

    def call(self, prompt: str, images: Sequence[JudgeImage] = ()) -> JudgeReply:
        return self.judge.call(f"{self.system}\n\n{prompt}", images)


def with_system(judge: Judge, system: str) -> Judge:
    """``judge`` answering under ``system`` instead of the grading system prompt."""
    kind = getattr(judge, "kind", None)
    if isinstance(judge, _ClaudePlayer):
        judge.system = system
        return judge
    if kind == "anthropic":
        judge.client = _AnthropicClient(judge.client, system)  # type: ignore[attr-defined]
        return judge
    if kind == "openai":
        judge.client = _OpenAIClient(judge.client, system)  # type: ignore[attr-defined]
        return judge
    return _Prefixed(judge, system)


def make_player(settings: Mapping[str, Any], system: str) -> Judge:
    """The backend ``settings`` names (``{"kind", "model", "env"}``), playing under ``system``.

    Raises ``JudgeSetupError`` (one sentence) when it cannot be built."""
    kind = str(settings.get("kind") or "").strip().lower()
    model = settings.get("model")
    env = {str(k): str(v) for k, v in dict(settings.get("env") or {}).items()}
    if kind == "claude":
        judge: Judge = _ClaudePlayer.from_settings(
            model, binary=settings.get("claudeBin"), timeout=PLAYER_TIMEOUT, environ=env
        )
    else:
        judge = make_judge(kind, model, timeout=PLAYER_TIMEOUT, environ=env)
    return with_system(judge, system)
