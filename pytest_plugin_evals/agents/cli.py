"""Running an agent CLI for one request: confined, bounded, its stdout kept as the run's trace.

The part every CLI adapter shares (every agent CLI of the registry, and ``cmd:``): the
command line run inside the run's sandbox (:mod:`.confine`) unless the run is unconfined on
purpose, through :func:`pytest_plugin_evals.util.process.run_process` with the request's
timeout and the sandbox's bounds; a run that was stopped, went over a bound or could not start
turned into its transcript at once.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_plugin_evals.agents import confine
from pytest_plugin_evals.agents.base import RunRequest
from pytest_plugin_evals.agents.confine.network import Endpoint, endpoints_from
from pytest_plugin_evals.agents.confine.pids import own_pids
from pytest_plugin_evals.agents.confine.programs import interpreter_of, program_reach, shown_anyway
from pytest_plugin_evals.agents.mcp import McpPlan, McpServer
from pytest_plugin_evals.agents.workspace import original_add_dirs
from pytest_plugin_evals.model import STOPPED, InfraKind, Transcript
from pytest_plugin_evals.util.process import RUN_TAG, ProcessResult, run_process

#: The note of a run made without the sandbox, on purpose.
UNCONFINED_NOTE = (
    "run unconfined on purpose (--eval-unconfined): its tools could reach the operator's files, "
    "processes and network"
)


@dataclass(frozen=True)
class Reach:
    """What an agent process may reach besides its run's own folders."""

    #: Folders and files it must read (its install, its MCP servers' programs).
    read: tuple[Path, ...] = ()
    #: Sockets (and folders) it must write to (the mock host's).
    write: tuple[Path, ...] = ()
    #: The TCP endpoints it may connect to.
    endpoints: tuple[Endpoint, ...] = ()
    #: It runs a sandbox of its own inside ours (Claude Code's shell, Codex's commands).
    nests: bool = False
    #: It runs nothing but the agent itself (no shell, no plugin hook, no real MCP server):
    #: where our sandbox cannot be made, its own permission rules are enough to run it.
    reads_only: bool = False
    #: What the plugin asked for and the run was refused (a path, an endpoint): one line each.
    notes: tuple[str, ...] = ()


def hidden_folders(request: RunRequest) -> list[Path]:
    """The folders a run never sees whole: the operator's home, the folder pytest runs in, the
    suite and the case."""
    return [Path.home(), Path.cwd(), request.case.suite_root, request.case.dir]


def reach_of(
    request: RunRequest,
    binary: str,
    *,
    env: Mapping[str, str],
    endpoint_variables: Mapping[str, str | None] | None = None,
    mcp: McpPlan | None = None,
    nests: bool = False,
    also_read: Iterable[Path] = (),
    reads_only: bool = False,
) -> Reach:
    """What a run of ``binary`` may reach: its install (and its ``#!`` interpreter), its
    model's endpoints (the variables ``endpoint_variables`` names, with their defaults), the
    stand-ins' programs and the mock host's socket, a real MCP server's command (as a file:
    :func:`~.confine.programs.program_reach`) and the operator's ``--eval-allow-network``
    endpoints. Nothing else a plugin declares: what it asks for beyond is refused, one note
    each."""
    allowed = request.allow_network
    endpoints = [e for e in endpoints_from(env, endpoint_variables or {}) if e not in allowed]
    endpoints += allowed
    hidden = hidden_folders(request)
    shebang = interpreter_of(binary, hidden)
    read = [confine.install_root(binary), *shebang.read, *also_read]
    write: list[Path] = []
    notes: list[str] = []
    if mcp is not None:
        read += mcp.readable
        write += mcp.writable
        for server in mcp.servers:
            if not server.stand_in:
                notes += _server_reach(request, server, hidden, read, endpoints)
    return Reach(tuple(read), tuple(write), tuple(endpoints), nests, reads_only, tuple(notes))


def _server_reach(
    request: RunRequest,
    server: McpServer,
    hidden: Sequence[Path],
    read: list[Path],
    endpoints: Sequence[Endpoint],
) -> list[str]:
    """A plugin's real MCP server: its command (a file, with its runtime's installation) added
    to ``read``; the notes of what else it asked for, refused."""
    asked = "the plugin asked for it; the operator can allow it with"
    notes: list[str] = []
    found = Endpoint.parse(server.url) if server.url else None
    if found is not None and found not in endpoints:
        notes.append(
            f"MCP server {server.name}: {server.url} not reachable "
            f"({asked} --eval-allow-network {found})"
        )
    refused: list[tuple[Path, str]] = []
    if server.command and os.path.isabs(server.command):
        for program in (program_reach(server.command, hidden, files_only=True),
                        interpreter_of(server.command, hidden)):  # fmt: skip
            read += program.read
            refused += [
                (p, "" if p == Path(server.command) else f" (around {server.command})")
                for p in program.refused
            ]
    refused += [(Path(a), "") for a in server.args if os.path.isabs(a) and os.path.exists(a)]
    shown = [*read, *request.allow_read]
    if request.plugin_dir is not None:
        shown.append(request.plugin_dir)
    for path, around in dict.fromkeys(refused):
        if path not in read and not shown_anyway(path, shown):
            notes.append(
                f"MCP server {server.name}: {path}{around} not readable "
                f"({asked} --eval-allow-read {path})"
            )
    return notes


def confinement_for(request: RunRequest, reach: Reach) -> confine.Confinement:
    """The sandbox of one process of ``request``'s run."""
    box = request.sandbox
    hidden = hidden_folders(request)
    if request.plugin_dir is not None:
        hidden.append(request.plugin_dir)
    read: list[Path] = [
        *confine.tools_on_path(request.env.get("PATH"), hidden),
        *reach.read,
        *request.allow_read,
        *original_add_dirs(request),
        box.root / "context",
    ]
    if request.plugin_dir is not None:
        read.append(request.plugin_dir)
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"):
        if request.env.get(name):
            read.append(Path(request.env[name]))
    write = [box.home, box.config, *reach.write]
    if box.outbox.is_dir():
        write.append(box.outbox)
    return confine.Confinement(
        read=tuple(read),
        write=tuple(write),
        hide=tuple(private_parts(request)),
        tmp=box.tmp,
        cwd=box.cwd,
        endpoints=reach.endpoints,
        bounds=request.bounds,
        nests=reach.nests,
        tag=(request.env.get(RUN_TAG) or "run")[:12],
    )


#: Files of a plugin's folder a run never sees: its repository, its secrets.
PRIVATE_NAMES = (".git", ".env", ".envrc", ".netrc", ".npmrc", ".pypirc")


def private_parts(request: RunRequest) -> list[Path]:
    """What a run must not see although it is inside a folder it may read: the evals folder,
    the case and the results (unless the plugin under test is inside them: a ``package.json``
    suite at the plugin's root), and the plugin's repository and secret files."""
    case = request.case
    plugin = request.plugin_dir.resolve() if request.plugin_dir is not None else None
    found = [
        folder
        for folder in (case.suite_root, case.dir, *request.private)
        if plugin is None or not plugin.is_relative_to(folder.resolve())
    ]
    if plugin is not None:
        found += [plugin / name for name in PRIVATE_NAMES]
        found += sorted(plugin.glob(".env.*"))
    return found


def run_confined(
    request: RunRequest,
    argv: Sequence[str],
    *,
    reach: Reach,
    env: dict[str, str],
    stdin_text: str,
    out_dir: Path,
    timeout: float,
    json_lines: bool = False,
    stop_on: Callable[[bytes], bool] | None = None,
) -> tuple[ProcessResult, str | None]:
    """Run one process of ``request``'s run in its sandbox (or unconfined, when the run is):
    the result (its notes hold the sandbox's too) and the sandbox's refusal (one line) when it
    could not be made (the process did not start then)."""
    if request.unconfined:
        # Only its PIDs are its own: what it starts ends with it, and with the controller. A
        # program that cannot start is started as it is, to say why as the system does.
        started = own_pids(argv, request.sandbox.cwd) if _startable(argv[0], env) else list(argv)
        result = run_process(
            started, stdin_text=stdin_text, cwd=request.sandbox.cwd, env=env,
            timeout=timeout, out_dir=out_dir, json_lines=json_lines, stop_on=stop_on,
        )  # fmt: skip
        return result, None
    why = confine.problem()
    if why is not None and reach.reads_only:
        result = run_process(
            list(argv), stdin_text=stdin_text, cwd=request.sandbox.cwd, env=env,
            timeout=timeout, out_dir=out_dir, json_lines=json_lines, stop_on=stop_on,
        )  # fmt: skip
        note = f"run outside the harness's sandbox ({why.split(' — ')[0]}): it ran no command"
        return replace(result, notes=(*result.notes, note)), None
    if why is not None:
        return _not_started(out_dir), why
    cannot = _not_a_program(argv[0])
    if cannot is not None:
        return replace(_not_started(out_dir), start_error=cannot), None
    try:
        confined = confine.prepare(confinement_for(request, reach), argv, env)
    except OSError as exc:
        return _not_started(out_dir), f"cannot confine the agent: {exc}"
    if request.keep_temp:
        keep_command(out_dir / "sandbox.json", confined.argv, confined.env)
    result = confined.run(
        stdin_text=stdin_text, cwd=request.sandbox.cwd, timeout=timeout, out_dir=out_dir,
        json_lines=json_lines, stop_on=stop_on,
    )  # fmt: skip
    cannot_start = result.start_error or _not_executed(result, argv[0])
    return replace(result, start_error=cannot_start, notes=(*reach.notes, *result.notes)), None


def _startable(program: str, env: Mapping[str, str]) -> bool:
    """Whether ``program`` (found on the run's ``PATH`` unless it is a path) is a file this
    user may execute that the kernel runs."""
    found = program if os.sep in program else shutil.which(program, path=env.get("PATH"))
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        return False
    return _not_a_program(os.path.abspath(found)) is None


def _not_a_program(program: str) -> str | None:
    """A file that is no program the kernel runs (neither a binary nor a ``#!`` script): one
    line, as starting it outside the sandbox would say (inside, a shell would try to run it)."""
    if not os.path.isabs(program) or not os.path.isfile(program):
        return None
    try:
        with open(program, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        return f"could not start {program!r}: {exc.strerror}"
    if head.startswith((b"\x7fELF", b"#!")):
        return None
    return f"could not start {program!r}: Exec format error"


def _not_executed(result: ProcessResult, program: str) -> str | None:
    """The program could not be started inside the sandbox (the launcher said so): one line,
    as when it cannot be started outside."""
    if result.returncode not in (126, 127):
        return None
    first = result.stderr_tail(4000).splitlines()[:1]
    if not first or not first[0].startswith("prlimit: failed to execute"):
        return None
    reason = first[0].rpartition(": ")[2].strip() or "it did not start"
    return f"could not start {program!r}: {reason}"


def keep_command(path: Path, argv: Sequence[str], env: Mapping[str, str]) -> None:
    """Keep how a confined process was started, for a kept run folder (the values of its
    credential variables left out)."""
    from pytest_plugin_evals.agents.registry import credential_names
    from pytest_plugin_evals.util.redact import secrets_in

    secret = set(secrets_in(env, credential_names()))
    shown = {k: ("[not kept]" if k in secret else v) for k, v in env.items()}
    path.write_text(json.dumps({"argv": list(argv), "env": shown}, indent=1), encoding="utf-8")


def _not_started(out_dir: Path) -> ProcessResult:
    for name in ("stdout.txt", "stderr.txt"):
        (out_dir / name).write_bytes(b"")
    return ProcessResult(None, out_dir / "stdout.txt", out_dir / "stderr.txt", False, 0.0)


def run_cli(
    request: RunRequest,
    argv: Sequence[str],
    *,
    reach: Reach,
    env: dict[str, str],
    stdin_text: str,
    stop_on: Callable[[bytes], bool] | None = None,
) -> tuple[ProcessResult, Transcript | None]:
    """Run the CLI; returns the process result and, when the run was stopped, went over a
    bound, could not be confined or could not start, its transcript (else None: the stdout is
    then the run's trace file, and :func:`finish` adds the notes)."""
    box = request.sandbox
    result, refused = run_confined(
        request, argv, reach=reach, env=env, stdin_text=stdin_text, out_dir=box.out,
        timeout=request.timeout_seconds, json_lines=True, stop_on=stop_on,
    )  # fmt: skip
    if refused is not None:
        return result, Transcript(error=refused, infra_error="sandbox", cwd=box.cwd)
    if result.stopped:
        return result, Transcript(
            error=STOPPED,
            infra_error="interrupted",
            cwd=box.cwd,
            duration_seconds=result.duration_seconds,
        )
    if result.start_error is not None:
        return result, Transcript(
            error=result.start_error,
            infra_error="agent_start",
            cwd=box.cwd,
            duration_seconds=result.duration_seconds,
        )
    if result.bound is not None:
        return result, bound_transcript(request, result)
    result.stdout_path.replace(box.trace_file)
    return result, None


def bound_transcript(request: RunRequest, result: ProcessResult) -> Transcript:
    """A run that went over one of its bounds: an error that names it (kept out of scores)."""
    box = request.sandbox
    transcript = Transcript(
        error=f"{result.bound} (--eval-max-* bounds a run; it was ended)",
        infra_error="bound",
        cwd=box.cwd,
        duration_seconds=result.duration_seconds,
        stderr_tail=result.stderr_tail(),
    )
    transcript.notes.extend(result.notes)
    return transcript


def run_step(
    request: RunRequest, argv: Sequence[str], *, env: dict[str, str], out_dir: Path, timeout: float
) -> ProcessResult:
    """A step of a run before the agent starts (a plugin's install, an extension's link, a
    skill listing) by the CLI ``argv[0]``, in the run's sandbox like the run itself, reaching
    the CLI's files and no network. A sandbox that cannot be made shows as a ``start_error``."""
    reach = reach_of(request, argv[0], env=env)
    result, refused = run_confined(
        request, argv, reach=Reach(read=reach.read, write=reach.write), env=env,
        stdin_text="", out_dir=out_dir, timeout=timeout,
    )  # fmt: skip
    if refused is not None:
        return replace(result, start_error=refused)
    return result


def with_stderr(text: str, transcript: Transcript) -> str:
    """``text``, then the last three lines of the run's stderr (when it has any), on one line."""
    tail = [line.strip() for line in transcript.stderr_tail.splitlines()[-3:]]
    return text + (": " + " ".join(tail) if tail else "")


def did_not_start(transcript: Transcript, text: str) -> None:
    """The CLI exited before its run was under way: an ``agent_start`` error, with its stderr."""
    transcript.infra_error = "agent_start"
    transcript.error = with_stderr(text, transcript)


def failed_outside(transcript: Transcript, kind: InfraKind, error: str | None) -> bool:
    """When ``error`` says why: the run failed for a reason outside the model (an infrastructure
    error of ``kind``, e.g. ``plugin_load`` for the plugin's trust check) — whether it did."""
    if error is None:
        return False
    transcript.infra_error, transcript.error = kind, error
    return True


def check_answered(transcript: Transcript) -> None:
    """No final message and no tool call: the model never answered (``no_answer``); how the
    process ended, when it ended badly (``killed by SIGKILL``), stays the error's text."""
    if not transcript.final_message and not transcript.tool_calls:
        transcript.infra_error = "no_answer"
        transcript.error = transcript.error or "the model never answered"
