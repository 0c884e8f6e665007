"""What names an agent for ``--eval-reuse``'s fingerprint: the agent itself (its version, its
program, its source) and where its model answers (see :mod:`pytest_plugin_evals.reuse`)."""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.agents.base import spec_of
from pytest_plugin_evals.util.digests import file_digest
from pytest_plugin_evals.util.environment import operator_environment
from pytest_plugin_evals.util.process import output_of

if TYPE_CHECKING:
    from pytest_plugin_evals.agents import Agent


def agent_identity(agent: Agent) -> dict[str, Any]:
    """The agent's name and version: an agent CLI's ``--version`` output (the bytes of its
    binary when it prints none), a ``cmd:`` program's command line and the bytes of the files
    it names, a ``py:`` callable's target and its module's source."""

    name = str(getattr(agent, "name", type(agent).__name__))
    found: dict[str, Any] = {"name": name, "type": type(agent).__qualname__}
    spec = spec_of(agent)
    binary = getattr(agent, "binary", None)
    if spec is not None and isinstance(binary, str):
        version = output_of([binary, *spec.version_args])
        found["version"] = version or file_digest(Path(binary).resolve())
    argv = getattr(agent, "argv", None)
    if isinstance(argv, tuple):
        found["argv"] = list(argv)
        found["files"] = [file_digest(Path(a).resolve()) for a in argv if os.path.isfile(a)]
    func = getattr(agent, "func", None)
    if callable(func):
        found["target"] = getattr(agent, "target", None)
        try:
            source = inspect.getsourcefile(func)
        except TypeError:
            source = None
        found["source"] = file_digest(Path(source)) if source else None
    return found


def model_context(agent: Agent) -> dict[str, Any]:
    """Where the agent's model answers and which model it runs when none is given: its
    endpoint variables and its own ``*MODEL*`` variables (``ANTHROPIC_MODEL`` …), as set."""

    spec = spec_of(agent)
    if spec is None:
        return {}
    environ = operator_environment()
    passed, prefixes = spec.passed, spec.passed.prefixes_in(environ)
    return {
        "endpoints": {v: environ.get(v, d) for v, d in sorted(spec.endpoints.items())},
        "variables": {
            k: v
            for k, v in sorted(environ.items())
            if "MODEL" in k and (k in passed.names or k.startswith(prefixes))
        },
    }
