"""The name and title of a run item, and what its node id says: the case it belongs to, and its
agent's label; which case tags become its markers."""

from __future__ import annotations

import re
from collections.abc import Iterable

#: The ``[label]`` of a run item: ``[with-2]``, ``[without-1]``, ``[baseline-1]``, ``[3]``,
#: and under ``--eval-agents`` the agent's label first: ``[codex-with-2]``, ``[fast-3]``.
_RUN_LABEL = re.compile(
    r"\[(?:(?P<agent>(?!(?:with|without|baseline)-)[A-Za-z][A-Za-z0-9_.]*)-)?"
    r"(?:with-|without-|baseline-)?\d+\]$"
)


def run_name(case: str, arm: str, run: int, agent: str | None = None) -> str:
    """A run item's name, which :data:`_RUN_LABEL` reads back: ``plants[with-2]``, ``plants[3]``
    (one arm), and under ``--eval-agents`` ``plants[codex-with-2]``."""
    label = f"{arm}-{run}" if arm != "single" else f"{run}"
    return f"{case}[{label}]" if agent is None else f"{case}[{agent}-{label}]"


def run_title(case: str, arm: str, run: int, agent: str | None = None) -> str:
    """What pytest's reports call a run item: ``eval plants [with] run 2 on codex``."""
    return f"eval {case} [{arm}] run {run}" + (f" on {agent}" if agent is not None else "")


def case_group(nodeid: str) -> str | None:
    """The node id every run item of one case shares (its id without the run label); None for
    any other item (a Python test's parameters can look like a run label: ``test_x[0]``)."""
    if nodeid.partition("::")[0].endswith(".py"):
        return None
    found = _RUN_LABEL.search(nodeid)
    return nodeid[: found.start()] if found else None


def case_unit(nodeid: str) -> tuple[str, str | None] | None:
    """The case group of a run item and its agent's label (None but under ``--eval-agents``):
    what is decided, counted and scored together (a case on one agent)."""
    if nodeid.partition("::")[0].endswith(".py"):
        return None
    found = _RUN_LABEL.search(nodeid)
    return (nodeid[: found.start()], found.group("agent")) if found else None


#: Marker names with a meaning of their own: a case tag by one of these names (``skip`` ...)
#: stays a tag (``--eval-tag``) but is not made a marker, so it cannot skip or xfail the case.
RESERVED_MARKERS = frozenset(
    {"evals", "skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"}
)

#: A tag that ``-m`` can name and ``markers`` can register (``smoke``, ``needs-net``, ``v1.2``).
MARKER_NAME = re.compile(r"[^\W_][\w.+/-]*")


def marker_tags(tags: Iterable[str]) -> list[str]:
    """The case tags that become markers (``-m smoke``); any other tag (reserved, ``_private``,
    ``two words``, ``a(b)``) is still a tag for ``--eval-tag``."""
    return [t for t in tags if MARKER_NAME.fullmatch(t) and t not in RESERVED_MARKERS]
