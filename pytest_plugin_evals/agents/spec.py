"""What an agent is, declared: :class:`Capabilities` (what it can do) and :class:`AgentSpec`
(an agent CLI: its binary, endpoint and credential variables, tool names, capabilities and
where its adapter is).

Each agent CLI's package (``agents/<name>/``) declares itself in its ``spec.yaml``: the fields
of :class:`AgentSpec` but its name (its folder's), read by :func:`declared`; :mod:`.registry`
finds them. Everything the rest of
the package says about the agents is read from there: ``--eval-agent`` and ``--eval-agents``,
the ``--eval-<name>-bin`` options, the operator variables a run may see, the values the
session redacts, the note of a run whose cost the agent cannot report, and the table in the
docs.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pytest_plugin_evals.util.environment import Passed


@dataclass(frozen=True)
class Capabilities:
    """What an agent is and can do; the runner decides by these, never by the agent's name."""

    #: It runs as a process of its own, in its own process group: a stand-in that stops a
    #: violating run may kill that group (an in-process agent is pytest itself).
    separate_process: bool = True
    #: Its runs get MCP stand-ins prepared (a replay brings the mock calls it recorded).
    uses_mocks: bool = True
    #: What it reports it cost is spent now (a replay's cost is history).
    spends: bool = True
    #: Its working directory is made a fresh git repository before it starts.
    git_workspace: bool = True
    #: It reports what a run cost in dollars (else the run is marked ``costUnknown`` and the
    #: cost ceiling cannot see it).
    prices: bool = True
    #: It reports the tokens a run used.
    reports_tokens: bool = True
    #: Its event stream is the run's trace (``trace.jsonl``), its tool calls read from it.
    records_trace: bool = True
    #: It can continue a recorded conversation (a case's ``history_file``).
    loads_history: bool = False
    #: Inside the sandbox it reaches its model endpoint through the sandbox's network
    #: forwarder (a TCP port inside, a Unix socket out).
    network_forwarder: bool = False
    #: It starts a command sandbox of its own inside ours (nested user namespaces).
    nests_sandbox: bool = False


#: What an agent that does not say is taken to be: a process that spends, like ``cmd:``.
DEFAULT_CAPABILITIES = Capabilities()


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class AgentSpec:
    """One agent CLI, declared (see the module's docstring)."""

    #: Its ``--eval-agent`` name (also its ``--eval-<name>-bin`` option's).
    name: str
    #: What the docs and reports call it.
    title: str
    #: The package it installs from (npm), and the version the harness is tested with.
    package: str
    version: str
    #: The variables naming its model endpoint, each with the endpoint it defaults to.
    endpoints: Mapping[str, str | None]
    #: The operator variables a run of it may see (its endpoint, key, model, settings).
    passed: Passed
    #: Its credential variables: their values are redacted from everything the session
    #: writes, whatever their names say.
    credentials: tuple[str, ...]
    #: Its tool names -> the canonical (Claude Code's) names.
    tools: Mapping[str, str]
    capabilities: Capabilities
    #: Its executable's name on PATH (its name, unless it says).
    binary: str = ""
    #: Its adapter: ``module:function``, ``function(binary, *, grants, disallow) -> Agent``
    #: (``binary``: ``--eval-<name>-bin`` or None), imported when the agent is chosen; unless
    #: it says, its package's ``agent:make_agent``.
    adapter: str = ""
    #: Where it stands in listings (the default agent first).
    rank: int = 100
    #: Its command line's argument that prints its version.
    version_args: tuple[str, ...] = ("--version",)
    #: The note of every run whose cost it cannot report (``capabilities.prices`` false),
    #: written from what it reports unless it says.
    cost_note: str | None = None
    #: How its run loads a plugin, in a few words (the docs' table).
    plugin_loading: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "endpoints", _frozen(self.endpoints))
        object.__setattr__(self, "tools", _frozen(self.tools))
        object.__setattr__(self, "binary", self.binary or self.name)
        adapter = self.adapter or f"{__package__}.{self.name}.agent:make_agent"
        object.__setattr__(self, "adapter", adapter)
        if not self.capabilities.prices and not self.cost_note:
            reports = (
                "tokens, no price" if self.capabilities.reports_tokens else "no tokens and no price"
            )
            object.__setattr__(self, "cost_note", f"cost unknown: {self.name} reports {reports}")

    @property
    def bin_option(self) -> str:
        return f"--eval-{self.name}-bin"

    def make(
        self, binary: str | None, *, grants: tuple[str, ...], disallow: tuple[str, ...]
    ) -> Any:
        """The adapter (its module imported now)."""
        module, _, function = self.adapter.partition(":")
        return getattr(importlib.import_module(module), function)(
            binary, grants=grants, disallow=disallow
        )


#: The file of an agent's package that declares it.
SPEC_FILE = "spec.yaml"

_HERE = Path(__file__).resolve().parent


@cache
def declared(name: str) -> AgentSpec:
    """The agent CLI ``agents/<name>/spec.yaml`` declares (see :func:`read_spec`)."""
    return read_spec(_HERE / name)


def read_spec(folder: Path) -> AgentSpec:
    """The agent CLI ``folder``'s ``spec.yaml`` declares: its keys are :class:`AgentSpec`'s
    fields but ``name`` (the folder's); ``passed`` holds ``names``, ``prefixes`` and
    ``switched`` (a switch variable → the prefixes it turns on), ``capabilities``
    :class:`Capabilities`' fields. A file that does not say so is one line naming it."""
    import yaml

    name, path = folder.name, folder / SPEC_FILE
    try:
        fields = dict(yaml.safe_load(path.read_text(encoding="utf-8")))
        passed = fields.pop("passed", {})
        switched = passed.pop("switched", {})
        spec = AgentSpec(
            name=name,
            passed=Passed(
                names=frozenset(passed.pop("names", ())),
                prefixes=tuple(passed.pop("prefixes", ())),
                switched=tuple((k, tuple(v)) for k, v in switched.items()),
                **passed,
            ),
            capabilities=Capabilities(**fields.pop("capabilities", {})),
            credentials=tuple(fields.pop("credentials", ())),
            version_args=tuple(fields.pop("version_args", ("--version",))),
            **fields,
        )
    except (OSError, yaml.YAMLError, TypeError, ValueError, AttributeError) as exc:
        raise RuntimeError(f"agents/{name}/{SPEC_FILE}: {exc}") from None
    _check_types(spec)
    return spec


def _check_types(spec: AgentSpec) -> None:
    """Every text field a string, every flag a bool, the rank a whole number (YAML reads
    ``1.0`` or ``yes`` as something else)."""
    texts = [spec.title, spec.package, spec.version, spec.binary, spec.plugin_loading]
    texts += [*spec.endpoints, *spec.credentials, *spec.tools, *spec.tools.values()]
    texts += [*spec.passed.names, *spec.passed.prefixes, *spec.version_args]
    texts += [u for u in spec.endpoints.values() if u is not None]
    flags = vars(spec.capabilities).values()
    if not all(isinstance(t, str) for t in texts) or not all(isinstance(f, bool) for f in flags):
        raise RuntimeError(f"agents/{spec.name}/{SPEC_FILE}: a value of the wrong type")
    if not isinstance(spec.rank, int) or isinstance(spec.rank, bool):
        raise RuntimeError(f"agents/{spec.name}/{SPEC_FILE}: rank is not a whole number")
