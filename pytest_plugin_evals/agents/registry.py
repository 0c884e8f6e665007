"""The agent CLIs this version knows: every ``agents/<name>/spec.yaml``
(:func:`~pytest_plugin_evals.agents.spec.declared`), found by looking, in their ``rank``
order. Adding an agent is adding its package; nothing here names one.

What is derived from the registry: ``--eval-agent``'s and ``--eval-agents``' accepted names
(:data:`NAMES`), the ``--eval-<name>-bin`` options, the operator variables each agent's runs
see (:func:`spec_for` → ``passed``), the credentials the session redacts
(:func:`credential_names`), the note of a run whose cost its agent cannot report, the
canonical tool names (:mod:`.canonical`) and the agents' table in the docs
(:func:`markdown_table`).
"""

from __future__ import annotations

import pkgutil
from functools import cache
from pathlib import Path

from pytest_plugin_evals.agents.spec import SPEC_FILE, AgentSpec, declared

_HERE = Path(__file__).resolve().parent


@cache
def specs() -> tuple[AgentSpec, ...]:
    """Every agent CLI's declaration, by rank then name."""
    found = [
        declared(info.name)
        for info in pkgutil.iter_modules([str(_HERE)])
        if info.ispkg and (_HERE / info.name / SPEC_FILE).is_file()
    ]
    return tuple(sorted(found, key=lambda s: (s.rank, s.name)))


def names() -> tuple[str, ...]:
    """The agent CLIs' ``--eval-agent`` names, the default (``claude``) first."""
    return tuple(s.name for s in specs())


def spec_for(name: str) -> AgentSpec | None:
    return next((s for s in specs() if s.name == name), None)


def credential_names() -> frozenset[str]:
    """Every agent's credential variables (redacted wherever they appear)."""
    return frozenset(n for s in specs() for n in s.credentials)


TABLE_START = "<!-- agents table: generated from the registry (tests check it) -->"
TABLE_END = "<!-- end of agents table -->"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def markdown_table() -> str:
    """The agents' table of docs/reference/agents.md, as the registry declares them."""
    rows = [
        "| `--eval-agent` | Agent | Binary (package, tested version) | Endpoint variables | "
        "Credentials (redacted) | Prices runs | Reports tokens | MCP stand-ins | "
        "`history_file` | Own sandbox inside ours |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in specs():
        can = s.capabilities
        rows.append(
            f"| `{s.name}` | {s.title} | `{s.binary}` (`{s.package}` {s.version}) | "
            + (", ".join(f"`{v}`" for v in s.endpoints) or "—")
            + " | "
            + (", ".join(f"`{v}`" for v in s.credentials) or "—")
            + f" | {_yes(can.prices)} | {_yes(can.reports_tokens)} | {_yes(can.uses_mocks)} | "
            f"{_yes(can.loads_history)} | {_yes(can.nests_sandbox)} |"
        )
    return "\n".join(rows)
