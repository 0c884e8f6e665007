"""``--eval-judge anthropic``: the Messages API through the official ``anthropic`` SDK.

Credentials and endpoint come from ``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_AUTH_TOKEN``) and
``ANTHROPIC_BASE_URL``, as the SDK reads them. The model defaults to ``claude-haiku-4-5``. The
short names ``haiku``, ``sonnet`` and ``opus`` stand for the models Claude Code sends for them
(``claude-haiku-5-5``, ``claude-sonnet-5-5``, ``claude-opus-5-5``), so one ``--eval-judge-model``
means the same model under ``claude`` and ``anthropic``; any other name is sent as given.

The API reports tokens, not dollars: the cost of a call is an estimate from its usage at list
prices for the known model families (:data:`PRICES`), and 0 for a model not listed there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import (
    SYSTEM_PROMPT,
    JudgeImage,
    JudgeReply,
    SdkJudge,
    round_cost,
)

DEFAULT_MODEL = "claude-haiku-4-5"
ALIASES = {
    "haiku": "claude-haiku-5-5",
    "sonnet": "claude-sonnet-5-5",
    "opus": "claude-opus-5-5",
}

#: Room for a verdict and a short reason; the prompt asks for one word.
MAX_TOKENS = 1024

#: List prices in USD per million (input, output) tokens, by model-id prefix (longest wins).
PRICES: dict[str, tuple[float, float]] = {
    "claude-3-haiku": (0.25, 1.25),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-haiku-4": (1.0, 5.0),
    "claude-haiku-5": (0.1, 0.5),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-sonnet-5": (2.0, 10.0),
    "claude-3-opus": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-7": (5.0, 25.0),
    "claude-opus-4-8": (5.0, 25.0),
    "claude-opus-5": (5.0, 25.0),
    "claude-opus-5-5": (4.0, 20.0),
    "claude-fable-5": (10.0, 50.0),
    "claude-mythos-5": (10.0, 50.0),
}


def resolve_model(model: str | None) -> str:
    name = (model or "").strip()
    return ALIASES.get(name, name or DEFAULT_MODEL)


def price_of(model: str) -> tuple[float, float] | None:
    """The (input, output) list price per million tokens for ``model``, if known."""
    matches = [prefix for prefix in PRICES if model.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None


def estimate_cost(model: str, usage: Any) -> float:
    """List-price estimate of one call from its usage (cache writes 1.25x, reads 0.1x input)."""
    price = price_of(model)
    if price is None or usage is None:
        return 0.0

    def tokens(name: str) -> int:
        value = getattr(usage, name, None)
        return value if isinstance(value, int) else 0

    per_input, per_output = price
    input_units = (
        tokens("input_tokens")
        + 1.25 * tokens("cache_creation_input_tokens")
        + 0.1 * tokens("cache_read_input_tokens")
    )
    return round_cost((input_units * per_input + tokens("output_tokens") * per_output) / 1e6)


class AnthropicJudge(SdkJudge):
    """A judge that calls the Messages API with the ``anthropic`` SDK."""

    kind = "anthropic"

    sdk_module = "anthropic"
    client_class = "Anthropic"
    base_error = "AnthropicError"

    @classmethod
    def model_name(cls, model: str | None) -> str:
        return resolve_model(model)

    @classmethod
    def client_options(cls, env: Mapping[str, str]) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if env.get("ANTHROPIC_API_KEY"):
            options["api_key"] = env["ANTHROPIC_API_KEY"]
        elif env.get("ANTHROPIC_AUTH_TOKEN"):
            options["auth_token"] = env["ANTHROPIC_AUTH_TOKEN"]
        if env.get("ANTHROPIC_BASE_URL"):
            options["base_url"] = env["ANTHROPIC_BASE_URL"]
        return options

    def call(
        self, prompt: str, images: Sequence[JudgeImage] = (), *, system: str | None = None
    ) -> JudgeReply:
        content: list[dict[str, Any]] = [{"type": "text", "text": prompt}]
        content += [image.anthropic_block() for image in images]
        message = self._request(
            lambda: self.client.messages.create(
                model=self.model,
                max_tokens=MAX_TOKENS,
                system=SYSTEM_PROMPT if system is None else system,
                messages=[{"role": "user", "content": content}],
            ),
        )
        text = "\n".join(
            str(getattr(block, "text", ""))
            for block in message.content or []
            if getattr(block, "type", None) == "text"
        )
        usage = getattr(message, "usage", None)
        return JudgeReply(
            text=text,
            cost_usd=estimate_cost(str(getattr(message, "model", "") or self.model), usage),
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
        )
