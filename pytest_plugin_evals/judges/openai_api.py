"""``--eval-judge openai``: any OpenAI-compatible chat completions endpoint (the ``openai`` SDK).

Endpoint and key come from ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` — a local vLLM or
llama.cpp server works. Without ``OPENAI_API_KEY`` a placeholder key is sent (local servers
ignore it). The model has no default: ``--eval-judge-model`` names it.

Such servers rarely report prices, so a call costs 0 unless the server reports its cost in the
usage (``usage.cost``, as some gateways do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import (
    SYSTEM_PROMPT,
    JudgeError,
    JudgeImage,
    JudgeReply,
    JudgeSetupError,
    SdkJudge,
    round_cost,
)

#: Sent when OPENAI_API_KEY is unset: the SDK insists on a key, local servers ignore it.
PLACEHOLDER_KEY = "sk-no-key"


def reported_cost(usage: Any) -> float:
    """``usage.cost`` when the server reports one, else 0."""
    extra = getattr(usage, "model_extra", None) or {}
    cost = extra.get("cost", getattr(usage, "cost", None))
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
        return round_cost(float(cost))
    return 0.0


class OpenAIJudge(SdkJudge):
    """A judge that calls ``POST /chat/completions`` with the ``openai`` SDK."""

    kind = "openai"

    sdk_module = "openai"
    client_class = "OpenAI"
    base_error = "OpenAIError"

    @classmethod
    def model_name(cls, model: str | None) -> str:
        if not model or not model.strip():
            raise JudgeSetupError(
                "--eval-judge openai needs a model: pass --eval-judge-model NAME "
                "(the model name your OpenAI-compatible server serves)"
            )
        return model.strip()

    @classmethod
    def client_options(cls, env: Mapping[str, str]) -> dict[str, Any]:
        options = {"api_key": env.get("OPENAI_API_KEY") or PLACEHOLDER_KEY}
        if env.get("OPENAI_BASE_URL"):
            options["base_url"] = env["OPENAI_BASE_URL"]
        return options

    def call(
        self, prompt: str, images: Sequence[JudgeImage] = (), *, system: str | None = None
    ) -> JudgeReply:
        content: str | list[dict[str, Any]] = prompt
        if images:
            content = [{"type": "text", "text": prompt}]
            content += [{"type": "image_url", "image_url": {"url": i.data_url()}} for i in images]
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT if system is None else system},
            {"role": "user", "content": content},
        ]
        completion = self._request(
            lambda: self.client.chat.completions.create(model=self.model, messages=messages),
        )
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise JudgeError("the judge's reply holds no choice")
        text = getattr(choices[0].message, "content", None) or ""
        usage = getattr(completion, "usage", None)
        return JudgeReply(
            text=str(text),
            cost_usd=reported_cost(usage),
            input_tokens=getattr(usage, "prompt_tokens", None),
            output_tokens=getattr(usage, "completion_tokens", None),
        )
