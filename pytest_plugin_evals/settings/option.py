"""One option as declared: its flag (its ini key derived), its help, its parser, the settings
field it fills and its default as ``--help`` and the docs show it. :mod:`.options` declares
every option with it; the shell derives pytest's options and ini keys from the declarations."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.settings.parsers import Parse


@dataclass(frozen=True)
class Option:
    """One option: ``flag`` (its ini key is derived), its help, how its value is read
    (``parse``; None: the text as given), the :class:`EvalSettings` field it fills
    (``name.key``: a ``(key, value)`` pair of a tuple field; a tuple: ``parse`` returns one
    value per field; None: a rule between options reads it), ``kind`` (``value``, ``flag``,
    ``list``: repeatable; ``lines``: repeatable, one ini entry a line; ``paths``: ini only),
    and ``otherwise``: the default in words where the field's default does not say it."""

    flag: str
    help: str
    parse: Parse | None = None
    field: str | tuple[str, ...] | None = None
    kind: str = "value"
    metavar: str | None = None
    otherwise: str | None = None
    show: Callable[[Any], str] | None = None

    @property
    def ini(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def key(self) -> str | None:
        """The field the option is known by (the first it fills)."""
        return self.field[0] if isinstance(self.field, tuple) else self.field

    @property
    def on_cli(self) -> bool:
        return self.flag.startswith("--")

    @property
    def default(self) -> str | None:
        """The default as ``--help`` and the docs show it (None: nothing, off or none)."""
        if self.otherwise is not None:
            return self.otherwise
        if not isinstance(self.field, str) or self.field not in DEFAULTS:
            return None
        value = DEFAULTS[self.field]
        if value in (None, False, ()):
            return None
        if self.show is not None:
            return self.show(value)
        return f"{value:g}" if isinstance(value, float) else str(value)


DEFAULTS: dict[str, Any] = {
    f.name: f.default
    for f in dataclasses.fields(EvalSettings)
    if f.default is not dataclasses.MISSING
}
