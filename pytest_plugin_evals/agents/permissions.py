"""Which tools a run may use, and where, in Claude Code's (canonical) tool rules: pure rules,
no process. Every adapter plans its run's tools here, then says them its own agent's way.

* Read access (Read, Glob, Grep) is always granted, scoped to the run's own home and temp
  folders, the plugin's ``skills/`` and the case's ``add_dirs``, both the copies and the
  folders where they are (``read_openings``).
* Other read-only tools the case lists (Skill, ToolSearch, Agent …) are granted as listed.
* A tool that is not read-only runs only when the case lists it **and** the operator grants it
  (``--eval-allow-tools``). A grant never gives a tool to a case that does not list it.
* A file-writing tool granted bare (``Write``, ``Edit`` …) writes only in the run's own home
  and temp folders (``Edit(//…/home/**)`` rules: Claude Code checks every file write against
  ``Edit`` rules); a case entry with a path pattern keeps the case author's pattern.
* Built-in tools that are not granted are removed (``--disallowed-tools``), so the model is not
  offered them; ``--eval-disallow-tools`` and the case's ``disallowed_tools`` remove more.
* Deny rules: reading the evals folder, the run's config and output folders; editing the plugin
  and the case folder. Claude Code's deny rules beat its allow rules, so an evals folder that
  holds an opened ``add_dirs`` folder is not denied whole: every entry beside the way down to
  it is (:func:`hidden_around`), and whatever is made there later is named by no allow rule,
  which ``dontAsk`` refuses all the same.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_plugin_evals.agents.base import RunRequest
    from pytest_plugin_evals.agents.mcp import McpServer

#: Tools that only read: granted when the case lists them, no operator grant needed.
READ_ONLY = frozenset(
    {
        "Read",
        "Glob",
        "Grep",
        "LS",
        "Skill",
        "ToolSearch",
        "Agent",
        "Task",
        "TodoWrite",
        "NotebookRead",
    }
)

#: File-reading tools: scoped to the run's folders, whatever the case lists.
FILE_READERS = frozenset({"Read", "Glob", "Grep", "LS"})

#: File-writing tools: a bare grant is scoped to the run's writable folders.
FILE_WRITERS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})

#: Built-in tools removed unless granted (the model is not even offered them).
BUILTIN_WRITERS = (
    "Bash",
    "BashOutput",
    "KillShell",
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
    "CronCreate",
    "CronDelete",
    "CronList",
    "EnterWorktree",
    "ExitWorktree",
    "ListAgents",
    "Monitor",
    "ReportFindings",
    "ScheduleWakeup",
    "SendMessage",
    "TaskStop",
    "Workflow",
    "PowerShell",
)

_ENTRY = re.compile(r"^(?P<tool>[A-Za-z0-9_.*-]+)(?:\((?P<spec>.*)\))?$")


def base_tool(entry: str) -> str:
    """``Bash(npm test *)`` → ``Bash``."""
    match = _ENTRY.match(entry.strip())
    return match.group("tool") if match else entry.strip()


def _spec(entry: str) -> str | None:
    match = _ENTRY.match(entry.strip())
    return match.group("spec") if match else None


def path_rule(tool: str, folder: Path) -> str:
    """A Claude Code permission rule for everything under an absolute folder."""
    return f"{tool}(/{folder.as_posix().rstrip('/')}/**)"


def entry_rules(tool: str, entry: Path) -> list[str]:
    """Rules for one file or folder and all a folder holds (``Read(//a/b)``, ``Read(//a/b/**)``):
    whichever it is, or becomes."""
    posix = entry.as_posix().rstrip("/")
    return [f"{tool}(/{posix})", f"{tool}(/{posix}/**)"]


#: Names an evals or a case folder may come to hold while a session runs (its results, a case's
#: inputs): hidden beside the way to an opened folder whether they exist yet or not.
LATER_NAMES = ("results", "mocks", "graders", "prompt.md", "case.yaml")


def hidden_around(folder: Path, shown: Iterable[Path]) -> list[Path]:
    """What to deny so that, of ``folder``, only the folders ``shown`` inside it can be read.

    At each level from ``folder`` down to a shown folder: every entry not on the way to one (as
    listed now) and the :data:`LATER_NAMES`. Empty when none is inside ``folder``. An entry made
    later under a level (a new case, another session's results) is named by no rule here, and
    by no allow rule either, so Claude Code refuses it (``dontAsk``). A name holding a pattern
    character (``*``) may hide more, the shown folder too: that fails closed.
    """
    inside = [p for p in shown if p != folder and p.is_relative_to(folder)]
    targets = {p for p in inside if not any(p != q and p.is_relative_to(q) for q in inside)}
    on_way = {a for t in targets for a in (t, *t.parents) if a.is_relative_to(folder)}
    hidden: list[Path] = []
    for level in sorted(on_way - targets):
        try:
            names = sorted(os.listdir(level))
        except OSError:
            names = []
        entries = (level / name for name in dict.fromkeys([*names, *LATER_NAMES]))
        hidden.extend(entry for entry in entries if entry not in on_way)
    return hidden


class ToolAccess:
    """What a run says of its tools, by Claude Code's names, read the same way for every agent:
    the tools its case lists (``allowed_tools``), the operator's grants
    (``--eval-allow-tools``), and the disallowed entries (the case's ``disallowed_tools`` and
    ``--eval-disallow-tools``). Each agent's tool plan reads it; :meth:`granted`,
    :meth:`not_granted` and :meth:`denied` say what it means for one MCP server."""

    def __init__(
        self,
        case_tools: Iterable[str] = (),
        grants: Iterable[str] = (),
        disallowed: Iterable[str] = (),
    ) -> None:
        self.case_tools, self.grants, self.disallowed = (
            tuple(e.strip() for e in entries if e.strip())
            for entries in (case_tools, grants, disallowed)
        )

    @classmethod
    def of(
        cls,
        request: RunRequest,
        grants: Iterable[str],
        disallow: Iterable[str],
        *,
        skill: bool = False,
    ) -> ToolAccess:
        """A run's: its case's tools (and the Skill tool, which Claude Code offers whatever a
        case lists, when ``skill``) and disallowed tools, the operator's grants and
        ``--eval-disallow-tools`` (``disallow``)."""
        tools = ("Skill", *request.allowed_tools) if skill else request.allowed_tools
        return cls(tools, grants, (*request.case.disallowed_tools, *disallow))

    def granted(self, server: McpServer) -> tuple[str, ...]:
        """The tools of ``server`` the run may call, by their own names (``*``: all): a
        stand-in's all; a real server's those the case lists (``mcp__plugin_p_s__tool``,
        ``mcp__plugin_p_s__*``) and a grant covers."""
        if server.stand_in:
            return ("*",)
        prefix = server.prefix
        found = [
            e[len(prefix) :] or "*"
            for e in self.case_tools
            if e.startswith(prefix) and grants_for(e, self.grants)
        ]
        return tuple(dict.fromkeys(found))

    def not_granted(self, server: McpServer) -> tuple[str, ...]:
        """The case's entries of a real server's tools that no grant covers."""
        if server.stand_in:
            return ()
        return tuple(
            e
            for e in self.case_tools
            if e.startswith(server.prefix) and not grants_for(e, self.grants)
        )

    def denied(self, server: McpServer) -> tuple[str, ...]:
        """The tools of ``server`` the disallowed entries take away (a stand-in's too), by their
        own names; ``*``: all of them, for the server's bare name (``mcp__<s>``), its prefix,
        ``<prefix>*`` or a wildcard whose stem the prefix starts with (``mcp__*``, as a grant's
        wildcard reads: :func:`~.permissions.grants_for`)."""
        prefix = server.prefix
        found: list[str] = []
        for entry in self.disallowed:
            if entry.startswith(prefix):
                found.append(entry[len(prefix) :] or "*")
            elif entry == prefix[:-2] or (entry.endswith("*") and prefix.startswith(entry[:-1])):
                found.append("*")
        return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class ToolPlan:
    allowed: tuple[str, ...]
    disallowed: tuple[str, ...]
    deny: tuple[str, ...]
    #: Case entries dropped for want of a grant (or malformed), for the run's notes.
    not_granted: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def grants_for(entry: str, grants: Iterable[str]) -> tuple[str, ...]:
    """The forms in which a case entry is granted; empty when it is not.

    A bare grant (``Write``) or a wildcard (``mcp__*``) covers the entry as the case wrote it;
    narrower grants (``Bash(npm test *)``, ``Bash(npm run lint)``) narrow a bare case entry
    (``Bash``) to every one of them; two patterns must be equal.
    """
    tool, spec = base_tool(entry), _spec(entry)
    narrowed: list[str] = []
    for grant in grants:
        g_tool, g_spec = base_tool(grant), _spec(grant)
        if g_tool.endswith("*") and g_spec is None and tool.startswith(g_tool[:-1]):
            return (entry,)
        if g_tool != tool:
            continue
        if g_spec is None or spec == g_spec:
            return (entry,)
        if spec is None:
            narrowed.append(grant)
    return tuple(dict.fromkeys(narrowed))


def grant_for(entry: str, grants: Iterable[str]) -> str | None:
    """The first form in which a case entry is granted, or None (see :func:`grants_for`)."""
    forms = grants_for(entry, grants)
    return forms[0] if forms else None


def plan_tools(
    access: ToolAccess,
    *,
    read_roots: Iterable[Path],
    deny_read: Iterable[Path],
    deny_edit: Iterable[Path],
    write_roots: Iterable[Path],
    readonly_roots: Iterable[Path] = (),
    read_openings: Iterable[Path] = (),
) -> ToolPlan:
    """``read_openings``: folders inside a ``deny_read`` folder that stay readable (the
    ``add_dirs`` where they are), never writable."""
    grants = access.grants
    openings = list(dict.fromkeys(read_openings))
    allowed: list[str] = []
    #: (tool, rule): the path rules of a bare file-writer grant, kept while the tool is.
    writes: list[tuple[str, str]] = []
    not_granted: list[str] = []
    for root in [*read_roots, *openings]:
        allowed.append(path_rule("Read", root))
    for entry in access.case_tools:
        tool = base_tool(entry)
        if not _ENTRY.match(entry):
            not_granted.append(entry)
        elif tool in FILE_READERS:
            continue  # scoped above
        elif tool in READ_ONLY:
            allowed.append(entry)
        elif not (granted := grants_for(entry, grants)):
            not_granted.append(entry)
        elif tool in FILE_WRITERS and any(_spec(form) is None for form in granted):
            # Claude Code checks every file write against Edit(path) rules.
            writes.extend(
                (tool, path_rule(t, root)) for root in write_roots for t in ("Edit", tool)
            )
        else:
            allowed.extend(granted)
    enabled = {base_tool(a) for a in allowed} | {tool for tool, _ in writes}
    disallowed = [t for t in BUILTIN_WRITERS if t not in enabled]
    for entry in access.disallowed:
        tool = base_tool(entry)
        if tool not in disallowed:
            disallowed.append(tool)
        allowed = [a for a in allowed if base_tool(a) != tool]
        writes = [(t, rule) for t, rule in writes if t != tool]
    allowed.extend(rule for _, rule in writes)
    deny: list[str] = []
    for folder in deny_read:
        if any(o != folder and o.is_relative_to(folder) for o in openings):
            hidden = hidden_around(folder, openings)
            deny.extend(rule for entry in hidden for rule in entry_rules("Read", entry))
        else:
            deny.append(path_rule("Read", folder))
    for folder in [*deny_edit, *readonly_roots, *openings]:
        deny.extend((path_rule("Edit", folder), path_rule("Write", folder)))
    return ToolPlan(
        allowed=tuple(dict.fromkeys(allowed)),
        disallowed=tuple(disallowed),
        deny=tuple(dict.fromkeys(deny)),
        not_granted=tuple(not_granted),
    )


def plan_confined_tools(
    request: RunRequest,
    *,
    grants: Iterable[str],
    disallow: Iterable[str],
    write_root: Path | None,
    skill: bool = False,
) -> ToolPlan:
    """The tool plan of a CLI that our sandbox confines whole (no read or deny rules of its
    own): the case's tools — and the Skill tool, which Claude Code offers whatever the case
    lists, when ``skill`` —, the operator's grants and refusals. A bare Write/Edit grant
    becomes path rules under ``write_root`` (without one it would be dropped)."""
    return plan_tools(
        ToolAccess.of(request, grants, disallow, skill=skill),
        read_roots=[],
        write_roots=[] if write_root is None else [write_root],
        deny_read=[],
        deny_edit=[],
    )
