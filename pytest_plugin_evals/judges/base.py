"""What every judge backend shares: the reply, the images it may see, its errors.

A judge backend has one method, ``call(prompt, images, system=None) -> JudgeReply``: one model
call, one user message (the prompt text, then the images), no tools, one turn, under the
grading system prompt unless another is given (a model that plays an MCP server has its own).
A call that fails raises :class:`JudgeError`; it never answers in place of the model.
"""

from __future__ import annotations

import base64
import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

from pytest_plugin_evals.judges import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT

#: The judge's system prompt, as the reference sends it.
SYSTEM_PROMPT = "You are a strict, terse evaluation judge for coding-agent traces."

#: The extra that installs every judge SDK.
EXTRA_HINT = 'pip install "pytest-plugin-evals[judges]"'


class JudgeProblem(Exception):
    """Anything wrong with a judge: it cannot be built, or one of its calls failed."""


class JudgeSetupError(JudgeProblem):
    """The judge cannot be built (unknown kind, missing SDK, missing model): one sentence."""


class JudgeError(JudgeProblem):
    """One judge call failed (API error, timeout, no usable reply): an infrastructure error."""


@dataclass(frozen=True)
class JudgeReply:
    """The model's reply to one judge call, and what the call cost."""

    text: str
    cost_usd: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class JudgeImage:
    """An image shown to the judge beside the prompt (PNG, JPEG, GIF or WebP)."""

    data: bytes
    media_type: str
    name: str = ""

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64()}"

    def anthropic_block(self) -> dict[str, Any]:
        """The Messages API image content block."""
        source = {"type": "base64", "media_type": self.media_type, "data": self.base64()}
        return {"type": "image", "source": source}


@runtime_checkable
class Judge(Protocol):
    """What grading needs of a judge: one model call per vote (yours may be any object with
    this method)."""

    def call(self, prompt: str, images: Sequence[JudgeImage] = ()) -> JudgeReply:
        """One model call: the prompt, then the images, as the user message."""
        ...


@runtime_checkable
class Backend(Protocol):
    """A judge backend of this package: a judge that can also answer under another system
    prompt (a model playing an MCP server has its own)."""

    def call(
        self, prompt: str, images: Sequence[JudgeImage] = (), *, system: str | None = None
    ) -> JudgeReply:
        """One model call under ``system`` (None: the grading system prompt)."""
        ...


def import_sdk(kind: str, module: str) -> ModuleType:
    """Import a judge SDK only when that judge is chosen, or say in one line how to get it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise JudgeSetupError(
            f"--eval-judge {kind} needs the {module} package: {EXTRA_HINT}"
        ) from None


def is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` or anything in its cause chain is a timeout (an SDK may surface a slow
    reply as a connection error, or as the socket's own ``TimeoutError``, by when it came)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, TimeoutError) or "Timeout" in type(current).__name__:
            return True
        current = current.__cause__ or current.__context__
    return False


def timeout_message(seconds: float) -> str:
    shown = int(seconds) if float(seconds).is_integer() else seconds
    return f"judge call timed out after {shown}s"


def api_error_message(status: int | None, body: Any, fallback: str) -> str:
    """``API Error: 500 <message>`` from an error body in the Anthropic or OpenAI shape."""
    message = ""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            message = str(err.get("message") or "")
        elif isinstance(err, str):
            message = err
    message = message or fallback
    return f"API Error: {status} {message}" if status is not None else f"API Error: {message}"


def round_cost(value: float) -> float:
    """Costs are kept to 10 decimal places: sums of prices carry no float noise."""
    return round(value, 10)


_Judge = TypeVar("_Judge", bound="SdkJudge")


class SdkJudge:
    """What the SDK-backed judges share: the client made from the settings, its closing, and
    reading its errors."""

    kind = "sdk"
    #: The SDK's module, its client class, and its errors' base class.
    sdk_module: ClassVar[str]
    client_class: ClassVar[str]
    base_error: ClassVar[str]

    @classmethod
    def from_settings(
        cls: type[_Judge],
        model: str | None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 2,
        environ: Mapping[str, str] | None = None,
    ) -> _Judge:
        """The judge for ``--eval-judge-model`` ``model``, its client made with the SDK."""
        name = cls.model_name(model)
        sdk = import_sdk(cls.kind, cls.sdk_module)
        env = os.environ if environ is None else environ
        options = {"timeout": timeout, "max_retries": max_retries, **cls.client_options(env)}
        try:
            client = getattr(sdk, cls.client_class)(**options)
        except getattr(sdk, cls.base_error) as exc:
            raise JudgeSetupError(f"--eval-judge {cls.kind}: {exc}") from None
        return cls(client, sdk, name, timeout=timeout)

    @classmethod
    def model_name(cls, model: str | None) -> str:
        """The model the judge asks, from ``--eval-judge-model``."""
        raise NotImplementedError

    @classmethod
    def client_options(cls, env: Mapping[str, str]) -> dict[str, Any]:
        """The client's key and endpoint, from the operator's variables."""
        raise NotImplementedError

    def __init__(self, client: Any, sdk: Any, model: str, *, timeout: float) -> None:
        self.client = client
        self.model = model
        self.timeout = timeout
        self._sdk = sdk

    def close(self) -> None:
        """Close the SDK client's connections."""
        self.client.close()

    def _request(self, send: Callable[[], Any]) -> Any:
        """``send()``, with the SDK's failures turned into :class:`JudgeError` lines."""
        sdk = self._sdk
        base_error: type[BaseException] = getattr(sdk, self.base_error)
        try:
            return send()
        except sdk.APITimeoutError:
            raise JudgeError(timeout_message(self.timeout)) from None
        except sdk.APIStatusError as exc:
            raise JudgeError(api_error_message(exc.status_code, exc.body, str(exc))) from None
        except sdk.APIConnectionError as exc:
            if is_timeout(exc):
                raise JudgeError(timeout_message(self.timeout)) from None
            raise JudgeError(f"API Error: connection failed ({exc})") from None
        except base_error as exc:
            raise JudgeError(f"API Error: {exc}") from None
        except TypeError as exc:  # e.g. the SDK's "Could not resolve authentication method"
            raise JudgeError(f"API Error: {exc}") from None
        except Exception as exc:  # a timeout the SDK did not wrap
            if is_timeout(exc):
                raise JudgeError(timeout_message(self.timeout)) from None
            raise
