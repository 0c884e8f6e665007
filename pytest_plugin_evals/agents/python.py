"""``--eval-agent "py:<module>:<function>"``: an in-process callable.

The callable gets the :class:`~pytest_plugin_evals.agents.base.RunRequest` and returns a
:class:`~pytest_plugin_evals.model.Transcript` or a string (the final message). It runs with
the sandbox's working directory as the current directory.
"""

from __future__ import annotations

import importlib
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from ..model import Transcript
from .base import AgentError, Capabilities, RunRequest


@dataclass(frozen=True)
class PythonAgent:
    target: str
    func: Callable[[RunRequest], Transcript | str]
    name: str = "py"
    #: In-process: it is pytest itself; its working directory needs no repository (an agent
    #: that wants one makes it).
    capabilities: ClassVar[Capabilities] = Capabilities(separate_process=False, git_workspace=False)

    @classmethod
    def parse(cls, target: str) -> PythonAgent:
        module_name, func_name = cls.split(target)
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # noqa: BLE001 - the user's module may raise anything on import
            raise AgentError(f"--eval-agent py: cannot import {module_name!r}: {exc}") from None
        func = getattr(module, func_name, None)
        if not callable(func):
            raise AgentError(f"--eval-agent py: {module_name}.{func_name} is not a callable")
        return cls(target, func)

    @staticmethod
    def split(target: str) -> tuple[str, str]:
        """``module:function`` -> its two parts (no import); AgentError when malformed."""
        module_name, sep, func_name = target.rpartition(":")
        if not sep or not module_name or not func_name:
            raise AgentError(f'--eval-agent py: needs "py:<module>:<function>" (got "py:{target}")')
        return module_name, func_name

    def run(self, request: RunRequest) -> Transcript:
        box = request.sandbox
        box.snapshot()
        start = time.monotonic()
        previous = os.getcwd()
        os.chdir(box.cwd)
        try:
            produced = self.func(request)
        except Exception as exc:  # noqa: BLE001 - the user's agent may raise anything: its run fails
            where = traceback.extract_tb(exc.__traceback__)[-1]
            return Transcript(
                error=f"agent raised {type(exc).__name__}: {exc} ({where.filename}:{where.lineno})",
                duration_seconds=time.monotonic() - start,
                cwd=box.cwd,
                files_created=box.created_files(),
            )
        finally:
            os.chdir(previous)
        duration = time.monotonic() - start
        if isinstance(produced, str):
            transcript = Transcript(final_message=produced, turns=1)
        elif isinstance(produced, Transcript):
            transcript = produced
        else:
            return Transcript(
                error=f"agent returned {type(produced).__name__}, expected a Transcript or a str",
                duration_seconds=duration,
                cwd=box.cwd,
            )
        if not transcript.duration_seconds:
            transcript.duration_seconds = duration
        if transcript.cwd is None:
            transcript.cwd = box.cwd
        if not transcript.files_created:
            transcript.files_created = box.created_files()
        if transcript.trace_path is None and box.trace_file.exists():
            transcript.trace_path = box.trace_file
        return transcript
