"""A scripted model for tests: a Messages API server on 127.0.0.1 that answers by rules.

The names below are imported from their modules on first use: registering the
``scripted_model`` fixture (which every pytest run does) loads no server code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_plugin_evals.util.lazy import lazy_exports

if TYPE_CHECKING:  # the same names, typed, for type checkers
    from .rules import ApiError as ApiError
    from .rules import Reply as Reply
    from .rules import Request as Request
    from .rules import Rule as Rule
    from .rules import TextBlock as TextBlock
    from .rules import ToolUseBlock as ToolUseBlock
    from .rules import delay as delay
    from .rules import error as error
    from .rules import reply as reply
    from .rules import text as text
    from .rules import tool_use as tool_use
    from .server import ScriptedModel as ScriptedModel

_EXPORTS = {
    "ScriptedModel": "server",
    **dict.fromkeys(
        (
            "ApiError", "Reply", "Request", "Rule", "TextBlock", "ToolUseBlock", "delay",
            "error", "reply", "text", "tool_use",
        ),
        "rules",
    ),
}  # fmt: skip

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)
