"""``--eval-agents``: several agents in one session, each under a short label.

A value names one agent or several, comma-separated: ``claude,copilot,codex``. An agent CLI is
labelled by its name; any agent can be given a label of its own, ``fast=cmd:./agent.sh``; a
``cmd:``, ``py:`` or ``replay:`` agent without one is ``cmd1``, ``cmd2`` … in the order given.
A ``cmd:``, ``py:`` or ``replay:`` spec takes the rest of its value, commas included (give one
per ``--eval-agents`` to name several). The label is in every item's id (``case[fast-with-1]``),
in its ``evals(agent=...)`` marker and in the reports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pytest_plugin_evals.agents import AgentError, check_spec, split_spec

#: A label: a letter, then letters, digits, ``_`` or ``.`` (no ``-``: it separates the label
#: from the arm and run in an item's id).
LABEL = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")

#: Labels that would read as an arm in an item's id.
RESERVED_LABELS = frozenset({"with", "without", "baseline", "single"})

#: Kinds whose spec takes the rest of the value (their argument may hold commas).
_OPEN_KINDS = ("cmd:", "py:", "replay:")

_LABELLED = re.compile(r"\s*([A-Za-z][A-Za-z0-9_.-]*)\s*=(.*)", re.DOTALL)
#: Something meant as a label that is not one (``my agent=cmd:…``): said as such.
_BAD_LABEL = re.compile(r"\s*([^=:,]+?)\s*=")


def _label_problem(label: str) -> AgentError:
    return AgentError(
        f"--eval-agents: the label {label!r} must be a letter then letters, digits, "
        f"_ or . (no -), and not {', '.join(sorted(RESERVED_LABELS))}"
    )


def _pieces(value: str) -> list[tuple[str | None, str]]:
    """The ``(label, spec)`` pieces of one option value, in order."""
    pieces: list[tuple[str | None, str]] = []
    rest = value
    while rest.strip():
        label: str | None = None
        labelled = _LABELLED.match(rest)
        if labelled is not None:
            label, rest = labelled.group(1), labelled.group(2)
        elif (bad := _BAD_LABEL.match(rest)) is not None:
            raise _label_problem(bad.group(1))
        body = rest.lstrip()
        if body.startswith(_OPEN_KINDS):
            spec, rest = body, ""
        else:
            spec, _, rest = body.partition(",")
        spec = spec.strip()
        if not spec:
            named = f" {label}=" if label else ""
            raise AgentError(f"--eval-agents: an empty agent{named} in {value!r}")
        pieces.append((label, spec))
    return pieces


def parse_agents(values: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """The ``(label, spec)`` of every agent the ``--eval-agents`` values name, each spec
    checked as ``--eval-agent`` checks it; :class:`AgentError` (one line) when one is wrong."""
    agents: list[tuple[str, str]] = []
    counters: dict[str, int] = {}
    for value in values:
        for label, spec in _pieces(str(value)):
            try:
                spec = check_spec(spec)
                kind, _ = split_spec(spec)
            except AgentError as exc:
                raise AgentError(str(exc).replace("--eval-agent ", "--eval-agents ", 1)) from None
            if label is None:
                if kind in ("cmd", "py", "replay"):
                    counters[kind] = counters.get(kind, 0) + 1
                    label = f"{kind}{counters[kind]}"
                else:
                    label = kind
            if not LABEL.fullmatch(label) or label in RESERVED_LABELS:
                raise _label_problem(label)
            if any(label == known for known, _ in agents):
                raise AgentError(
                    f"--eval-agents: two agents are labelled {label!r}: name them "
                    f"(LABEL=SPEC, e.g. {label}2={spec})"
                )
            agents.append((label, spec))
    if not agents:
        raise AgentError("--eval-agents: no agent named (e.g. claude,codex)")
    return tuple(agents)
