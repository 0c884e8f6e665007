"""Ages as users write them (``7d``, ``12h``, ``30m``, ``90s``, ``2w``, ``1d12h``).

A module of its own so the options can read one without loading what reuses runs.
"""

from __future__ import annotations

import math
import re

#: How old a run may be to be reused, by default (seconds: seven days).
DEFAULT_MAX_AGE = 7 * 86400.0

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")


def parse_age(text: str) -> float:
    """``7d``, ``12h``, ``30m``, ``90s``, ``2w`` (or several: ``1d12h``) as seconds;
    :class:`ValueError` for anything else."""
    raw = text.strip().lower()
    if not raw or _AGE.sub("", raw):
        raise ValueError(text)
    total = sum(float(n) * _UNITS[unit] for n, unit in _AGE.findall(raw))
    if not math.isfinite(total) or total <= 0:
        raise ValueError(text)
    return total


def show_age(seconds: float) -> str:
    """An age as :func:`parse_age` reads it, in the largest unit that holds it whole
    but weeks (``604800`` → ``7d``, ``5400`` → ``90m``)."""
    for unit, size in sorted(_UNITS.items(), key=lambda item: -item[1])[1:]:
        if seconds >= size and float(seconds / size).is_integer():
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"
