"""How one option's given text becomes its value: a parser per kind of value.

Each parser takes a :class:`Given` (the raw value, and where it came from) and returns the
value, or raises :class:`Bad` with what the option accepts; :mod:`.options` names the option
(its flag, or its ini key) in front of it. The modules a parser needs are imported
when the option is given, so a session that does not give it never loads them.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.util.manifest import manifest_path

if TYPE_CHECKING:
    from pytest_plugin_evals.shards import Shard


class Bad(ValueError):
    """A given value the option does not accept: the rest of the line after the option's name
    (``must be … (got …)``, or ``: …`` for what is wrong with a path)."""


class Whole(Bad):
    """A given value the option does not accept, said in a line that names the option."""


@dataclass(frozen=True)
class Given:
    """One option's value as given, and where: ``--eval-x`` or ``ini eval_x``; ``base`` is
    the folder a relative path is read from (where pytest started, or the ini file's)."""

    raw: Any
    where: str
    from_cli: bool
    start: Path
    base: Path


Parse = Callable[[Given], Any]


def text(given: Given) -> str:
    return str(given.raw).strip()


def number(
    accepts: str, low: float, high: float, *, above: bool = False
) -> Callable[[Given], float]:
    """A number from ``low`` (excluded when ``above``) to ``high``."""

    def parse(given: Given) -> float:
        try:
            value = float(given.raw)
        except (TypeError, ValueError):
            raise Bad(f"must be {accepts} (got {given.raw!r})") from None
        if math.isnan(value) or not (low < value if above else low <= value) or value > high:
            raise Bad(f"must be {accepts} (got {given.raw!r})")
        return value

    return parse


def whole(low: int, high: int) -> Callable[[Given], int]:
    """A whole number from ``low`` to ``high``."""
    accepts = f"a whole number from {low} to {high}"

    def parse(given: Given) -> int:
        value = number(accepts, low, high)(given)
        if not value.is_integer():
            raise Bad(f"must be {accepts} (got {given.raw!r})")
        return int(value)

    return parse


SHARE = number("a number between 0 and 1", 0, 1)


def choice(*names: str, shown: str | None = None) -> Parse:
    """One of ``names`` (any case); ``shown``: how the message lists them."""
    listed = shown or (", ".join(names[:-1]) + " or " + names[-1])

    def parse(given: Given) -> str:
        value = text(given).lower()
        if value not in names:
            raise Bad(f"must be {listed} (got {value!r})")
        return value

    return parse


def runs(given: Given) -> tuple[int | None, int | None]:
    """N runs per arm, or ``auto`` / ``auto:MAX`` (rounds): ``(runs, runs_auto)``."""
    accepts = "a whole number from 1 to 50, auto or auto:MAX (MAX from 2 to 50)"
    value = text(given).lower()
    if value == "auto":
        from pytest_plugin_evals.stats import DEFAULT_MAX_RUNS

        return None, DEFAULT_MAX_RUNS
    if value.startswith("auto:"):
        most = value.partition(":")[2]
        if not most.isdigit() or not 2 <= int(most) <= 50:
            raise Bad(f"must be {accepts} (got {given.raw!r})")
        return None, int(most)
    try:
        return whole(1, 50)(given), None
    except Bad:
        raise Bad(f"must be {accepts} (got {given.raw!r})") from None


def path(given: Given) -> Path:
    return Path(given.start, text(given)).resolve()


def url(given: Given) -> str:
    """An http(s) address, as given."""
    found = text(given)
    if not re.fullmatch(r"https?://[^\s<>]+", found):
        raise Bad(f"must be an http:// or https:// address (got {found!r})")
    return found


def json_path(given: Given) -> Path:
    found = path(given)
    if found.suffix != ".json":
        raise Bad(f"must name a .json file (got {found.name!r})")
    return found


def recorded_runs(given: Given, at: str = "in") -> Path:
    """A results folder holding recorded runs."""
    folder = path(given)
    if not (folder / "runs").is_dir():
        raise Bad(f": no recorded runs {at} {folder} (expected a results folder holding runs/)")
    return folder


def last_or_path(given: Given) -> str:
    """``last``, or a path made absolute."""
    return "last" if text(given).lower() == "last" else str(path(given))


def last_or_runs(given: Given) -> str:
    """``last``, or a results folder holding recorded runs, made absolute."""
    return "last" if text(given).lower() == "last" else str(recorded_runs(given, "at"))


def age(given: Given) -> float:
    from pytest_plugin_evals.util.ages import parse_age

    try:
        return parse_age(str(given.raw))
    except ValueError:
        raise Bad(f"must be an age such as 7d, 12h, 30m or 90s (got {given.raw!r})") from None


def size(given: Given) -> int:
    from pytest_plugin_evals.agents.confine.bounds import parse_size

    try:
        return parse_size(str(given.raw))
    except ValueError:
        raise Bad(f"takes a size such as 4G, 512M or 2048 (bytes) (got {given.raw!r})") from None


def seconds_or_off(given: Given) -> float | None:
    if text(given).lower() == "off":
        return None
    return number("a number of seconds above 0, or off", 0, 1e6, above=True)(given)


def split(given: Given) -> tuple[str, ...]:
    """Every value, each split on commas."""
    out: list[str] = []
    for value in given.raw or []:
        out.extend(part.strip() for part in str(value).split(",") if part.strip())
    return tuple(out)


def split_tools(values: Any) -> tuple[str, ...]:
    """Split on commas outside parentheses: ``Bash(a, b),Write`` is two grants."""
    out: list[str] = []
    for value in values or []:
        depth, current = 0, ""
        for char in str(value):
            if char == "," and depth == 0:
                if current.strip():
                    out.append(current.strip())
                current = ""
                continue
            depth += (char == "(") - (char == ")")
            current += char
        if current.strip():
            out.append(current.strip())
    return tuple(out)


def tools(given: Given) -> tuple[str, ...]:
    return split_tools(given.raw)


def endpoints(given: Given) -> tuple[str, ...]:
    """Endpoints as ``HOST:PORT`` or URLs, each checked."""
    from pytest_plugin_evals.agents.confine.network import Endpoint

    found = split(given)
    for value in found:
        if Endpoint.parse(value) is None:
            raise Bad(f"takes HOST:PORT or a URL such as https://api.example.com (got {value!r})")
    return found


def readable(given: Given) -> tuple[Path, ...]:
    """Paths that exist, made absolute (from where pytest started)."""
    found: list[Path] = []
    for value in split(given):
        where = Path(value).expanduser().absolute()
        if not os.path.lexists(where):
            raise Bad(f": {value} does not exist")
        found.append(where)
    return tuple(dict.fromkeys(found))


def folders(given: Given) -> tuple[Path, ...]:
    return tuple(Path(p).resolve() for p in given.raw)


def reducer(given: Given) -> str:
    from pytest_plugin_evals.scoring import parse_reducer

    try:
        return parse_reducer(str(given.raw))
    except ValueError as exc:
        raise Bad(str(exc)) from None


def case_reducers(given: Given) -> tuple[tuple[str, str], ...]:
    """``GLOB = REDUCER`` lines, each checked."""
    from pytest_plugin_evals.scoring import parse_reducer

    pairs: list[tuple[str, str]] = []
    for line in given.raw:
        pattern, sep, name = str(line).partition("=")
        if not sep or not pattern.strip():
            raise Bad(f': each line is "GLOB = REDUCER" (got {line!r})')
        try:
            pairs.append((pattern.strip(), parse_reducer(name)))
        except ValueError as exc:
            raise Bad(f": {pattern.strip()} {exc}") from None
    return tuple(pairs)


def baseline(given: Given) -> str:
    """``git:REF``, or the plugin folder it names (absolute, relative to ``given.base``)."""
    from pytest_plugin_evals.suites.baseline import GIT_PREFIX

    raw = str(given.raw)
    value = raw.strip()
    if value.startswith(GIT_PREFIX):
        ref = value[len(GIT_PREFIX) :].strip()
        if not ref or ref.startswith("-") or any(c.isspace() or not c.isprintable() for c in ref):
            raise Bad(f'git: needs a commit, branch or tag, e.g. "git:HEAD~1" (got {raw!r})')
        return GIT_PREFIX + ref
    accepts = "must be a plugin folder or git:REF"
    if not value:
        raise Bad(f"{accepts} (got {raw!r})")
    folder = Path(given.base, value).resolve()
    if not folder.is_dir():
        raise Bad(f"{accepts} (got {raw!r}: no such folder)")
    if not manifest_path(folder).is_file():
        raise Bad(f"{accepts} (got {raw!r}: no .claude-plugin/plugin.json in that folder)")
    return str(folder)


def agent(given: Given) -> str:
    """The agent's form, checked now (one line, nothing runs); the adapter itself is made
    once collection finishes with eval items to run
    (:func:`pytest_plugin_evals.settings.agent.agent_problem`)."""
    from pytest_plugin_evals.agents import AgentError, check_spec

    try:
        return check_spec(text(given))
    except AgentError as exc:
        raise Whole(str(exc)) from None


def agents(given: Given) -> tuple[tuple[tuple[str, str], ...], str]:
    """Several agents, ``(label, spec)`` each, each checked as one agent is, and the first's
    spec (the session's agent)."""
    from pytest_plugin_evals.agents import AgentError
    from pytest_plugin_evals.agents.roster import parse_agents

    try:
        found = parse_agents(str(v) for v in given.raw)
    except AgentError as exc:
        raise Whole(str(exc)) from None
    return found, found[0][1]


#: ``auto`` shards: the CI variables that number a parallel job, and whether the index counts
#: from 0.
SHARD_VARIABLES = (
    ("CI_NODE_INDEX", "CI_NODE_TOTAL", 1),  # GitLab (parallel: N)
    ("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),  # Buildkite
    ("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),  # CircleCI
)


def shard(given: Given) -> Shard | None:
    """``K/N``, or ``auto``: the first CI's parallel-job variables that are set (none set:
    the whole suite runs)."""
    from pytest_plugin_evals.shards import parse_shard

    value = text(given)
    if value.lower() != "auto":
        try:
            return parse_shard(value)
        except ValueError as exc:
            raise Bad(f"{exc} or auto") from None
    for index_name, total_name, first in SHARD_VARIABLES:
        index, total = os.environ.get(index_name), os.environ.get(total_name)
        if index and total:
            try:
                return parse_shard(f"{int(index) + 1 - first}/{int(total)}")
            except ValueError:
                names = f"{index_name}={index}, {total_name}={total}"
                raise Bad(f"auto: the CI variables do not name a shard ({names})") from None
    return None
