"""A case written in a suite file (evals.json, sy, skill-creator's evals.json, package.json):
its folder is the file's, and it is run once unless it says."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import Case, GraderSpec, SourceKind


def file_case(
    source: SourceKind,
    path: Path,
    suite_root: Path,
    name: str,
    prompt: str,
    graders: Iterable[GraderSpec],
    **fields: Any,
) -> Case:
    """The case ``name`` (its ``line`` and what else it says in ``fields``), read from the
    suite file ``path`` of the format ``source``."""
    fields.setdefault("runs", 1)
    return Case(
        name=name,
        prompt=prompt,
        source=source,
        path=path,
        dir=path.parent,
        suite_root=suite_root,
        graders=tuple(graders),
        **fields,
    )
