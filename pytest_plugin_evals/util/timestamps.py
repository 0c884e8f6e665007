"""The session's and runs' timestamps, in the two forms the reference writes."""

from __future__ import annotations

import time


def _split(moment: float | None) -> tuple[time.struct_time, int]:
    now = time.time() if moment is None else moment
    return time.gmtime(now), int((now % 1) * 1000)


def utc_iso(moment: float | None = None) -> str:
    """``2026-11-30T07:07:59.533Z``: a UTC instant with milliseconds (JSON ``startedAt``)."""
    parts, millis = _split(moment)
    return time.strftime("%Y-%m-%dT%H:%M:%S", parts) + f".{millis:03d}Z"


def folder_stamp(moment: float | None = None) -> str:
    """``2026-11-30T07-07-59-533Z``: :func:`utc_iso` with ``:`` and ``.`` made ``-``, the name
    of a session's results folder."""
    return utc_iso(moment).replace(":", "-").replace(".", "-")
