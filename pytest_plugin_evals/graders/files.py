"""``file_exists``: a file created during the run matches a path glob (or none does).

The glob is matched against the whole path, relative to the run's working directory and
``/``-separated: ``**/`` is any number of folders (none included), ``**`` anything, ``*``
anything but ``/``, ``?`` one character. Scaffolded, edited and deleted files are not in the
list of created files, so they never match.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pytest_plugin_evals.graders.base import (
    GradeContext,
    GraderConfigError,
    Outcome,
    presence,
    required_str,
)
from pytest_plugin_evals.model import GraderSpec

_GLOB_TOKEN = re.compile(r"\*\*/|\*\*|\*|\?|[^*?]+")


@lru_cache(maxsize=256)
def glob_to_regex(glob: str) -> re.Pattern[str]:
    """The regular expression of a path glob (use it with ``fullmatch``)."""
    parts: list[str] = []
    for token in _GLOB_TOKEN.findall(glob):
        if token == "**/":
            parts.append("(?:.*/)?")
        elif token == "**":
            parts.append(".*")
        elif token == "*":
            parts.append("[^/]*")
        elif token == "?":
            parts.append(".")
        else:
            parts.append(re.escape(token))
    return re.compile("".join(parts))


def grade_file_exists(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    path = required_str(spec.config, "path", "file_exists")
    exists = spec.config.get("exists", True)
    if exists is None:
        exists = True
    if not isinstance(exists, bool):
        raise GraderConfigError(f"exists must be true or false (got {exists!r})")
    pattern = glob_to_regex(path)
    found = any(pattern.fullmatch(f) for f in ctx.transcript.files_created)
    return presence(
        found,
        exists,
        (
            f"{path} exists as expected",
            f"{path} exists (expected absent)",
            f"{path} missing (expected present)",
            f"{path} absent as expected",
        ),
    )
