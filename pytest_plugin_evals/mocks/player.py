"""The model that plays a ``type: agent`` server: the configured judge backend, asked under the
stand-in's own system prompt (``You are standing in for the MCP server …``) through the judges'
public ``call(..., system=...)``, so the backend's error handling and cost accounting stay as
they are.

The settings come from the stand-in's spec file (see :func:`.config.judge_settings`):
``{"kind", "model", "env", "claudeBin"}``, ``env`` being the variables the backend reads
(credentials, endpoint), since the stand-in may run with less of the harness's environment than
the judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..judges import Backend, JudgeImage, JudgeReply, make_judge

#: Seconds one answer of the playing model may take.
PLAYER_TIMEOUT = 120.0


class Player:
    """A judge backend answering under another system prompt."""

    def __init__(self, judge: Backend, system: str) -> None:
        self.judge = judge
        self.system = system

    def call(self, prompt: str, images: Sequence[JudgeImage] = ()) -> JudgeReply:
        return self.judge.call(prompt, images, system=self.system)

    def close(self) -> None:
        close = getattr(self.judge, "close", None)
        if callable(close):
            close()


def make_player(settings: Mapping[str, Any], system: str) -> Player:
    """The backend ``settings`` names (``{"kind", "model", "env"}``), playing under ``system``.

    Raises ``JudgeSetupError`` (one sentence) when it cannot be built."""
    kind = str(settings.get("kind") or "").strip().lower()
    env = {str(k): str(v) for k, v in dict(settings.get("env") or {}).items()}
    judge = make_judge(
        kind,
        settings.get("model"),
        timeout=PLAYER_TIMEOUT,
        environ=env,
        claude_bin=settings.get("claudeBin"),
    )
    return Player(judge, system)
