"""Judge backends: the model that reads a run and answers PASS or FAIL.

``make_judge(kind, model)`` builds one:

- ``claude`` (the default): the ``claude`` CLI in its own temporary home, no tools, one turn;
  model default ``haiku``;
- ``anthropic``: the official ``anthropic`` SDK (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``);
  model default ``claude-haiku-4-5``;
- ``openai``: the official ``openai`` SDK against any OpenAI-compatible endpoint
  (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``); the model is required.

The SDKs are optional (``pip install "pytest-plugin-evals[judges]"``) and imported only when
their judge is chosen. Every backend answers ``call(prompt, images) -> JudgeReply`` and raises
:class:`JudgeError` when a call fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pytest_plugin_evals.util.lazy import lazy_exports

if TYPE_CHECKING:  # the same names, typed, for type checkers
    from .base import SYSTEM_PROMPT as SYSTEM_PROMPT
    from .base import Backend as Backend
    from .base import Judge as Judge
    from .base import JudgeError as JudgeError
    from .base import JudgeImage as JudgeImage
    from .base import JudgeProblem as JudgeProblem
    from .base import JudgeReply as JudgeReply
    from .base import JudgeSetupError as JudgeSetupError

#: Seconds one judge call may take before it counts as failed.
DEFAULT_TIMEOUT = 120.0

#: The judge kinds ``--eval-judge`` accepts, the default first.
JUDGE_KINDS = ("claude", "anthropic", "openai")
DEFAULT_JUDGE = "claude"


def make_judge(
    kind: str,
    model: str | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    environ: Mapping[str, str] | None = None,
    claude_bin: str | None = None,
    max_retries: int = 2,
) -> Backend:
    """Build the judge ``kind`` names; :class:`JudgeSetupError` (one sentence) when it cannot.

    ``environ`` (default ``os.environ``) is where credentials and endpoints are read;
    ``claude_bin`` is the ``claude`` binary (default: on PATH); ``max_retries`` applies to the
    SDK judges (the ``claude`` judge follows ``CLAUDE_CODE_MAX_RETRIES``); ``timeout`` is the
    limit for one call, in seconds.
    """
    name = (kind or "").strip().lower()
    if name == "claude":
        from .claude_cli import ClaudeJudge

        return ClaudeJudge.from_settings(model, binary=claude_bin, timeout=timeout, environ=environ)
    if name == "anthropic":
        from .anthropic_api import AnthropicJudge

        return AnthropicJudge.from_settings(
            model, timeout=timeout, max_retries=max_retries, environ=environ
        )
    if name == "openai":
        from .openai_api import OpenAIJudge

        return OpenAIJudge.from_settings(
            model, timeout=timeout, max_retries=max_retries, environ=environ
        )
    from .base import JudgeSetupError

    raise JudgeSetupError(f'unknown judge "{kind}": choose one of {", ".join(JUDGE_KINDS)}')


def second_judge_spec(spec: str, kind: str) -> tuple[str, str | None]:
    """``--eval-judge-second``'s ``[BACKEND:]MODEL`` as (backend, model): the backend is
    ``kind`` (the first judge's) unless the text starts with a known one and a colon
    (``openai:qwen2.5:7b``; a model named ``qwen2.5:7b`` keeps its colon)."""
    head, colon, rest = spec.partition(":")
    if colon and head.strip().lower() in JUDGE_KINDS:
        return head.strip().lower(), rest.strip() or None
    return kind, spec.strip() or None


#: Imported from :mod:`.base` on first use: validating ``--eval-judge`` at start-up does not.
_FROM_BASE = (
    "SYSTEM_PROMPT", "Backend", "Judge", "JudgeError", "JudgeImage", "JudgeProblem",
    "JudgeReply", "JudgeSetupError",
)  # fmt: skip

__all__ = [
    "DEFAULT_JUDGE", "DEFAULT_TIMEOUT", "JUDGE_KINDS", "make_judge", "second_judge_spec",
    *_FROM_BASE,
]  # fmt: skip


__getattr__ = lazy_exports(__name__, dict.fromkeys(_FROM_BASE, "base"))
