"""Command-line options and their ini twins, and their validation into :class:`EvalSettings`."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.agents import CLI_AGENTS, agent_forms, cli_agents
from pytest_plugin_evals.judges import JUDGE_KINDS
from pytest_plugin_evals.plugin.settings import (
    ABLATIONS,
    DEFAULT_MAX_RATE_LIMIT_WAIT,
    DEFAULT_RATE_LIMIT_RETRIES,
    EvalSettings,
)

if TYPE_CHECKING:
    from pytest_plugin_evals.shards import Shard


@dataclass(frozen=True)
class Option:
    flag: str
    help: str
    kind: str = "string"  # string | bool | list | lines (a list whose ini twin is a linelist)
    metavar: str | None = None


OPTIONS: tuple[Option, ...] = (
    Option(
        "--eval-agent",
        "the agent under test: " + agent_forms().replace('"claude"', '"claude" (default)', 1),
        metavar="AGENT",
    ),
    Option(
        "--eval-agents",
        "run every case on each of several agents, comma-separated (claude,copilot,codex), "
        "each LABEL=SPEC or as --eval-agent names it; repeatable (a cmd:/py:/replay: spec "
        "takes the rest of its value); not with --eval-agent",
        kind="lines",
        metavar="AGENTS",
    ),
    Option(
        "--eval-runs",
        "runs per case and arm, overriding each case's own (1-50); auto or auto:MAX: run "
        "each case's arms in rounds and stop a case once its verdict is decided (at most MAX "
        "runs per arm, default 20)",
        metavar="N|auto[:MAX]",
    ),
    Option(
        "--eval-ablation",
        "arms to run: none (one arm, plugin loaded) or with-without "
        "(default when a plugin resolves)",
        metavar="none|with-without",
    ),
    Option(
        "--eval-baseline-plugin",
        "A/B: the second arm loads this plugin instead of none: a plugin folder, or git:REF "
        "(the plugin's folder at that commit of its repository, e.g. git:HEAD~1)",
        metavar="PATH|git:REF",
    ),
    Option(
        "--eval-threshold",
        "minimum case score (0-1, default 1.0); below 1 the session passes "
        "when every case's mean meets it",
        metavar="X",
    ),
    Option(
        "--eval-trigger-threshold",
        "trigger evals (trigger_eval.json): fail the session when a skill's F1 is below X (0-1)",
        metavar="X",
    ),
    Option(
        "--eval-output-dir",
        "where results go (default: <evals folder>/results/<timestamp>)",
        metavar="DIR",
    ),
    Option("--eval-json", "also write the JSON result document here", metavar="PATH"),
    Option("--eval-report", "write the HTML report here", metavar="PATH"),
    Option("--eval-skill-creator-workspace", "also write skill-creator's layout", metavar="DIR"),
    Option(
        "--eval-compare",
        "compare each case with an earlier session: its results folder or its "
        "aggregate-result.json, or last (the newest results folder under <evals folder>/results)",
        metavar="PATH|last",
    ),
    Option(
        "--eval-reuse",
        "take the without arm's (and a git:REF baseline arm's) runs from an earlier session "
        "when nothing that shapes them changed: last (the newest results folder under "
        "<evals folder>/results) or that results folder",
        metavar="last|DIR",
    ),
    Option(
        "--eval-reuse-max-age",
        "runs older than this are not reused (default 7d; e.g. 12h, 30m, 2w)",
        metavar="AGE",
    ),
    Option(
        "--eval-fail-on-regression",
        "fail the session when a case regressed since the --eval-compare session",
        kind="bool",
    ),
    Option("--eval-case", "only cases whose name matches this glob", metavar="GLOB"),
    Option(
        "--eval-tag",
        "only cases with this tag (repeatable: any of the tags)",
        kind="list",
        metavar="TAG",
    ),
    Option(
        "--eval-shard",
        "run the K-th of N parts of the selected cases (a CI job matrix), each case whole; "
        "auto: from the CI's parallel-job variables (GitLab, Buildkite, CircleCI)",
        metavar="K/N|auto",
    ),
    Option(
        "--eval-shard-durations",
        "weigh the shards by the run durations recorded in this results folder "
        "(default: by runs x arms)",
        metavar="DIR",
    ),
    Option("--eval-keep-temp", "keep each run's sandbox folder", kind="bool"),
    *(
        Option(
            f"--eval-{name}-bin",
            f"the {binary} binary (default: {binary} on PATH)",
            "string",
            "PATH",
        )
        for name, binary in CLI_AGENTS
    ),
    Option("--eval-model", "the model of every run, overriding each case's own", metavar="MODEL"),
    Option(
        "--eval-allow-tools",
        "grant a tool that is not read-only to the cases that list it "
        "(repeatable or comma-separated; Tool(pattern) syntax)",
        kind="list",
        metavar="TOOL",
    ),
    Option(
        "--eval-unconfined",
        "run the agents without their sandbox, on purpose: their tools can then reach your "
        "files, processes and network",
        kind="bool",
    ),
    Option(
        "--eval-unconfined-shell",
        "the former name of --eval-unconfined",
        kind="bool",
    ),
    Option(
        "--eval-allow-network",
        "let the runs reach this endpoint too, HOST:PORT or a URL (repeatable or "
        "comma-separated): a cmd: agent's model, an MCP server's",
        kind="list",
        metavar="HOST:PORT",
    ),
    Option(
        "--eval-allow-read",
        "let the runs read this file or folder too, read-only (repeatable or comma-separated): "
        "what a cmd: agent or an MCP server needs beyond its own program",
        kind="list",
        metavar="PATH",
    ),
    Option(
        "--eval-max-memory",
        "the most memory a confined run's processes may use together (default 4G)",
        metavar="SIZE",
    ),
    Option(
        "--eval-max-processes",
        "the most processes a confined run may have at once (default 512)",
        metavar="N",
    ),
    Option(
        "--eval-max-file-size",
        "the largest file a confined run may write (default 1G)",
        metavar="SIZE",
    ),
    Option(
        "--eval-max-disk",
        "the most a confined run's folders (home, working directory, tmp) may hold (default 4G)",
        metavar="SIZE",
    ),
    Option(
        "--eval-max-files",
        "the most files a confined run's folders may hold (default 100000)",
        metavar="N",
    ),
    Option(
        "--eval-disallow-tools",
        "remove a built-in tool from every run (repeatable)",
        kind="list",
        metavar="TOOL",
    ),
    Option(
        "--eval-scaffold", "run each case's scaffold_script (as you, before the agent)", kind="bool"
    ),
    Option(
        "--eval-judge",
        "the judge of llm, baseline and meetsCriteria graders: claude (default), anthropic "
        "or openai",
        metavar="claude|anthropic|openai",
    ),
    Option(
        "--eval-judge-model",
        "the judge's model (default: haiku for claude and anthropic; required for openai)",
        metavar="MODEL",
    ),
    Option(
        "--eval-no-judge",
        "skip paid graders (llm, baseline, meetsCriteria) on purpose",
        kind="bool",
    ),
    Option(
        "--eval-mocks",
        "on (default): MCP servers are answered by the mocks folders' stand-ins; off: mocks "
        "are ignored and the plugin's real servers start",
        metavar="on|off",
    ),
    Option(
        "--eval-allow-real-servers",
        "start the plugin's declared MCP servers that have no mocks (withheld otherwise)",
        kind="bool",
    ),
    Option(
        "--eval-max-cost-usd",
        "stop starting runs once this much was spent (the result is then partial)",
        metavar="USD",
    ),
    Option(
        "--eval-grader-timeout",
        "seconds each grader may spend matching patterns before the run is an error (default 10)",
        metavar="SECONDS",
    ),
    Option(
        "--eval-progress",
        "while runs go on, show runs done, in flight, spend and ETA: a live line on a terminal, "
        "else a line every SECONDS (default 30); off: none",
        metavar="SECONDS|off",
    ),
    Option(
        "--eval-run-ahead",
        "on (default): while a process makes one run it starts its next items' when the CPUs "
        "have been idle lately, up to its share of --eval-max-concurrency (default: 4 runs "
        "per CPU); always: whatever the CPUs; off: one run at a time per process",
        metavar="on|always|off",
    ),
    Option(
        "--eval-reducer",
        "how a case's runs become its verdict: mean (default: the mean score meets the "
        "threshold), all (every run does: pass^k), any (one does: pass@k) or at-least:M",
        metavar="mean|all|any|at-least:M",
    ),
    Option(
        "--eval-rate-limit-retries",
        "make a run the provider refused (429 rate limit, 529 overloaded) again up to N times, "
        "every process of the session waiting together (default 5; 0: the run is an error)",
        metavar="N",
    ),
    Option(
        "--eval-max-concurrency",
        "at most N runs in flight in the session, whatever -n and --eval-run-ahead start, "
        "each process keeping its share in flight (default: no cap, 4 runs per CPU in flight)",
        metavar="N",
    ),
    Option(
        "--eval-max-rate-limit-wait",
        "the most seconds the session waits out rate limits in all; past it a refused run is "
        "not made again (default 600)",
        metavar="SECONDS",
    ),
    Option(
        "--eval-session-timeout",
        "end the session after this many seconds, as Ctrl-C does: the runs in flight are "
        "stopped, the result is partial (default: no limit)",
        metavar="SECONDS",
    ),
    Option(
        "--eval-env-pass",
        "also pass this operator variable to the agent (repeatable)",
        kind="list",
        metavar="NAME",
    ),
    Option(
        "--eval-margin",
        "a difference (Δ, a change since --eval-compare) is 'equivalent' when its 95%% interval "
        "lies within ±X (0-1, default 0.1; 0: never)",
        metavar="X",
    ),
    Option(
        "--eval-gate",
        "also fail the session on the verdicts: not-worse (no case and not the suite is worse "
        "than the second arm or the compared session) or better (the suite's mean Δ is better)",
        metavar="not-worse|better",
    ),
    Option(
        "--eval-plan",
        "start no agent: print the runs per arm and the cases it would take to detect a Δ of "
        "--eval-min-effect at 80 percent power, from the newest earlier session, and their cost "
        "and time",
        kind="bool",
    ),
    Option(
        "--eval-min-effect",
        "the Δ --eval-plan plans to detect (0-1, default 0.2)",
        metavar="X",
    ),
)


def ini_name(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("evals", "agent plugin evals (pytest-plugin-evals)")
    for opt in OPTIONS:
        dest = ini_name(opt.flag)
        if opt.kind == "bool":
            group.addoption(opt.flag, action="store_true", default=None, dest=dest, help=opt.help)
            parser.addini(dest, opt.help, type="bool", default=False)
        elif opt.kind in ("list", "lines"):
            group.addoption(
                opt.flag,
                action="append",
                default=None,
                dest=dest,
                metavar=opt.metavar,
                help=opt.help,
            )
            if opt.kind == "lines":
                parser.addini(dest, opt.help, type="linelist", default=[])
            else:
                parser.addini(dest, opt.help, type="args", default=[])
        else:
            group.addoption(opt.flag, default=None, dest=dest, metavar=opt.metavar, help=opt.help)
            parser.addini(dest, opt.help, default=None)
    parser.addini(
        "eval_case_reducers",
        'reducers of the cases that have their own, one "GLOB = REDUCER" per line '
        "(the first glob that matches a case's name wins)",
        type="linelist",
        default=[],
    )
    parser.addini(
        "eval_paths",
        "more folders (besides those named evals) holding eval suites",
        type="paths",
        default=[],
    )


def _value(config: pytest.Config, flag: str) -> tuple[Any, str]:
    """The option's value and how to name it in an error (the flag or the ini key)."""
    dest = ini_name(flag)
    cli = config.getoption(dest)
    if cli is not None:
        return cli, flag
    return config.getini(dest), f"ini {dest}"


def _number(
    config: pytest.Config,
    flag: str,
    accepts: str,
    check: Callable[[float], bool],
    integer: bool = False,
) -> float | None:
    raw, where = _value(config, flag)
    if raw in (None, ""):
        return None
    try:
        value = float(raw)
        if integer and not value.is_integer():
            raise ValueError
    except (TypeError, ValueError):
        raise pytest.UsageError(f"{where} must be {accepts} (got {raw!r})") from None
    if math.isnan(value) or not check(value):
        raise pytest.UsageError(f"{where} must be {accepts} (got {raw!r})")
    return value


def _runs(config: pytest.Config) -> tuple[float | None, int | None]:
    """``--eval-runs``: N runs per arm, or ``auto`` / ``auto:MAX`` (sequential runs)."""
    raw, where = _value(config, "--eval-runs")
    text = str(raw or "").strip().lower()
    if text == "auto" or text.startswith("auto:"):
        from pytest_plugin_evals.stats import DEFAULT_MAX_RUNS

        most = text.partition(":")[2]
        if not most:
            return None, DEFAULT_MAX_RUNS if text == "auto" else _bad_runs(where, raw)
        if not most.isdigit() or not 2 <= int(most) <= 50:
            _bad_runs(where, raw)
        return None, int(most)
    accepts = "a whole number from 1 to 50, auto or auto:MAX (MAX from 2 to 50)"
    runs = _number(config, "--eval-runs", accepts, lambda v: 1 <= v <= 50, integer=True)
    return runs, None


def _bad_runs(where: str, raw: Any) -> int:
    raise pytest.UsageError(
        f"{where} must be a whole number from 1 to 50, auto or auto:MAX (MAX from 2 to 50) "
        f"(got {raw!r})"
    )


def _path(config: pytest.Config, flag: str) -> Path | None:
    raw, _ = _value(config, flag)
    if not raw:
        return None
    return Path(config.invocation_params.dir, str(raw)).resolve()


def read_settings(config: pytest.Config) -> EvalSettings:
    """Validate every option; a bad value is one line naming the option and what it accepts."""
    runs, runs_auto = _runs(config)
    threshold = _number(
        config, "--eval-threshold", "a number between 0 and 1", lambda v: 0 <= v <= 1
    )
    trigger_threshold = _number(
        config, "--eval-trigger-threshold", "a number between 0 and 1", lambda v: 0 <= v <= 1
    )
    ablation, where = _value(config, "--eval-ablation")
    ablation = ablation or "auto"
    if ablation not in ABLATIONS:
        raise pytest.UsageError(f'{where} must be "none" or "with-without" (got {ablation!r})')
    json_path = _path(config, "--eval-json")
    if json_path is not None and json_path.suffix != ".json":
        raise pytest.UsageError(f"--eval-json must name a .json file (got {json_path.name!r})")
    agent, agents = _agents(config)
    tags, _ = _value(config, "--eval-tag")
    env_pass, _ = _value(config, "--eval-env-pass")
    keep, _ = _value(config, "--eval-keep-temp")
    case_glob, _ = _value(config, "--eval-case")
    max_cost = _number(config, "--eval-max-cost-usd", "a number, 0 or more", lambda v: v >= 0)
    grader_timeout = _number(
        config, "--eval-grader-timeout", "a number of seconds above 0", lambda v: 0 < v < 1e6
    )
    claude_bin, _ = _value(config, "--eval-claude-bin")
    agent_bins = tuple(
        (name, str(raw))
        for name in cli_agents()
        if name != "claude" and (raw := _value(config, f"--eval-{name}-bin")[0])
    )
    model, _ = _value(config, "--eval-model")
    grants, _ = _value(config, "--eval-allow-tools")
    disallow, _ = _value(config, "--eval-disallow-tools")
    unconfined, _ = _value(config, "--eval-unconfined")
    unconfined_old, _ = _value(config, "--eval-unconfined-shell")
    scaffold, _ = _value(config, "--eval-scaffold")
    judge, where = _value(config, "--eval-judge")
    judge_given = bool(judge)
    judge = str(judge or "claude").strip().lower()
    if judge not in JUDGE_KINDS:
        raise pytest.UsageError(f"{where} must be one of {', '.join(JUDGE_KINDS)} (got {judge!r})")
    judge_model, _ = _value(config, "--eval-judge-model")
    if judge == "openai" and not judge_model:
        raise pytest.UsageError(
            "--eval-judge openai needs --eval-judge-model (the endpoint's model)"
        )
    no_judge, _ = _value(config, "--eval-no-judge")
    mocks, where = _value(config, "--eval-mocks")
    mocks = str(mocks or "on").strip().lower()
    if mocks not in ("on", "off"):
        raise pytest.UsageError(f"{where} must be on or off (got {mocks!r})")
    real_servers, _ = _value(config, "--eval-allow-real-servers")
    compare, fail_on_regression = _compare(config)
    run_ahead, where = _value(config, "--eval-run-ahead")
    run_ahead = str(run_ahead or "on").strip().lower()
    if run_ahead not in ("on", "always", "off"):
        raise pytest.UsageError(f"{where} must be on, always or off (got {run_ahead!r})")
    reducer, case_reducers = _reducers(config)
    return EvalSettings(
        reducer=reducer,
        case_reducers=case_reducers,
        runs=int(runs) if runs is not None else None,
        runs_auto=runs_auto,
        ablation=ablation,
        threshold=threshold if threshold is not None else 1.0,
        threshold_given=threshold is not None,
        trigger_threshold=trigger_threshold,
        output_dir=_path(config, "--eval-output-dir"),
        json_path=json_path,
        report_path=_path(config, "--eval-report"),
        skill_creator_workspace=_path(config, "--eval-skill-creator-workspace"),
        agent=agent,
        agents=agents,
        case_glob=str(case_glob) if case_glob else None,
        tags=tuple(_split(tags)),
        eval_paths=tuple(Path(p).resolve() for p in config.getini("eval_paths")),
        keep_temp=bool(keep),
        env_pass=tuple(_split(env_pass)),
        max_cost_usd=max_cost,
        claude_bin=str(claude_bin) if claude_bin else None,
        agent_bins=agent_bins,
        model=str(model) if model else None,
        allow_tools=tuple(_split_tools(grants)),
        disallow_tools=tuple(_split(disallow)),
        unconfined=bool(unconfined or unconfined_old),
        allow_network=_allow_network(config),
        allow_read=_allow_read(config),
        bounds=_bounds(config),
        scaffold=bool(scaffold),
        judge=judge,
        judge_given=judge_given,
        judge_model=str(judge_model) if judge_model else None,
        no_judge=bool(no_judge),
        mocks=mocks,
        allow_real_servers=bool(real_servers),
        run_ahead=run_ahead,
        grader_timeout=grader_timeout if grader_timeout is not None else 10.0,
        progress_seconds=_progress(config),
        **_rate_limits(config),
        compare=compare,
        fail_on_regression=fail_on_regression,
        **_reuse(config),
        baseline_plugin=_baseline_plugin(config, ablation),
        shard=_shard(config),
        shard_durations=_shard_durations(config),
        **_verdict_options(config),
    )


#: ``--eval-gate`` values.
GATES = ("not-worse", "better")


def _verdict_options(config: pytest.Config) -> dict[str, Any]:
    """``--eval-margin`` and ``--eval-gate``."""
    margin = _number(config, "--eval-margin", "a number between 0 and 1", lambda v: 0 <= v <= 1)
    raw, where = _value(config, "--eval-gate")
    gate = str(raw or "").strip().lower() or None
    if gate is not None and gate not in GATES:
        raise pytest.UsageError(f"{where} must be not-worse or better (got {raw!r})")
    effect = _number(
        config, "--eval-min-effect", "a number above 0, at most 1", lambda v: 0 < v <= 1
    )
    plan, _ = _value(config, "--eval-plan")
    return {
        "margin": 0.1 if margin is None else margin,
        "verdict_gate": gate,
        "plan": bool(plan),
        "min_effect": 0.2 if effect is None else effect,
    }


def _allow_network(config: pytest.Config) -> tuple[str, ...]:
    """``--eval-allow-network``: endpoints as ``HOST:PORT`` or URLs, each checked."""
    raw, where = _value(config, "--eval-allow-network")
    found: list[str] = []
    for value in _split(raw):
        from pytest_plugin_evals.agents.confine.network import Endpoint

        if Endpoint.parse(value) is None:
            raise pytest.UsageError(
                f"{where} takes HOST:PORT or a URL such as https://api.example.com (got {value!r})"
            )
        found.append(value)
    return tuple(found)


def _allow_read(config: pytest.Config) -> tuple[Path, ...]:
    """``--eval-allow-read``: paths that exist, made absolute (from where pytest started)."""
    raw, where = _value(config, "--eval-allow-read")
    found: list[Path] = []
    for value in _split(raw):
        path = Path(value).expanduser().absolute()
        if not os.path.lexists(path):
            raise pytest.UsageError(f"{where}: {value} does not exist")
        found.append(path)
    return tuple(dict.fromkeys(found))


def _bounds(config: pytest.Config) -> tuple[tuple[str, int], ...]:
    """The confined runs' bounds given (``--eval-max-memory`` …), as (name, value) pairs."""
    found: list[tuple[str, int]] = []
    for flag, name in (
        ("--eval-max-memory", "memory"),
        ("--eval-max-file-size", "file_size"),
        ("--eval-max-disk", "disk"),
    ):
        raw, where = _value(config, flag)
        if raw is None or str(raw).strip() == "":
            continue
        from pytest_plugin_evals.agents.confine.bounds import parse_size

        try:
            found.append((name, parse_size(str(raw))))
        except ValueError:
            raise pytest.UsageError(
                f"{where} takes a size such as 4G, 512M or 2048 (bytes) (got {raw!r})"
            ) from None
    processes = _number(
        config,
        "--eval-max-processes",
        "a whole number from 8 to 100000",
        lambda v: 8 <= v <= 100_000,
        integer=True,
    )
    if processes is not None:
        found.append(("processes", int(processes)))
    files = _number(
        config,
        "--eval-max-files",
        "a whole number from 100 to 100000000",
        lambda v: 100 <= v <= 100_000_000,
        integer=True,
    )
    if files is not None:
        found.append(("files", int(files)))
    return tuple(found)


def _progress(config: pytest.Config) -> float | None:
    """``--eval-progress``: seconds between plain progress lines (default 30), or off (None)."""
    raw, _ = _value(config, "--eval-progress")
    if str(raw).strip().lower() == "off":
        return None
    accepts = "a number of seconds above 0, or off"
    seconds = _number(config, "--eval-progress", accepts, lambda v: 0 < v < 1e6)
    return 30.0 if seconds is None else seconds


def _rate_limits(config: pytest.Config) -> dict[str, Any]:
    """``--eval-rate-limit-retries`` and ``--eval-max-concurrency``, checked."""
    retries = _number(
        config,
        "--eval-rate-limit-retries",
        "a whole number from 0 to 100",
        lambda v: 0 <= v <= 100,
        integer=True,
    )
    cap = _number(
        config,
        "--eval-max-concurrency",
        "a whole number from 1 to 1000",
        lambda v: 1 <= v <= 1000,
        integer=True,
    )
    max_wait = _number(
        config, "--eval-max-rate-limit-wait", "a number of seconds, 0 or more",
        lambda v: 0 <= v < 1e7,
    )  # fmt: skip
    session_timeout = _number(
        config, "--eval-session-timeout", "a number of seconds above 0", lambda v: 0 < v < 1e7
    )
    return {
        "rate_limit_retries": DEFAULT_RATE_LIMIT_RETRIES if retries is None else int(retries),
        "max_concurrency": None if cap is None else int(cap),
        "max_rate_limit_wait": DEFAULT_MAX_RATE_LIMIT_WAIT if max_wait is None else max_wait,
        "session_timeout": session_timeout,
    }


def _reducers(config: pytest.Config) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``--eval-reducer`` and ini ``eval_case_reducers``, checked (one line per mistake)."""
    raw, where = _value(config, "--eval-reducer")
    lines = config.getini("eval_case_reducers")
    if not raw and not lines:
        return "mean", ()  # nothing to check: the scoring module stays unimported
    from pytest_plugin_evals.scoring import parse_reducer

    try:
        reducer = parse_reducer(str(raw)) if raw else "mean"
    except ValueError as exc:
        raise pytest.UsageError(f"{where} {exc}") from None
    pairs: list[tuple[str, str]] = []
    for line in lines:
        pattern, sep, name = str(line).partition("=")
        if not sep or not pattern.strip():
            raise pytest.UsageError(
                f'ini eval_case_reducers: each line is "GLOB = REDUCER" (got {line!r})'
            )
        try:
            pairs.append((pattern.strip(), parse_reducer(name)))
        except ValueError as exc:
            raise pytest.UsageError(f"ini eval_case_reducers: {pattern.strip()} {exc}") from None
    return reducer, tuple(pairs)


def _compare(config: pytest.Config) -> tuple[str | None, bool]:
    """``--eval-compare`` (``last``, or a path made absolute; the document is read once
    collection is done, see :mod:`pytest_plugin_evals.plugin.compare`) and
    ``--eval-fail-on-regression``, which needs it."""
    raw, _ = _value(config, "--eval-compare")
    text = str(raw or "").strip()
    compare = None
    if text.lower() == "last":
        compare = "last"
    elif text:
        compare = str(Path(config.invocation_params.dir, text).resolve())
    fail, where = _value(config, "--eval-fail-on-regression")
    if fail and compare is None:
        raise pytest.UsageError(
            f"{where} needs --eval-compare (the earlier session to compare with)"
        )
    return compare, bool(fail)


def _reuse(config: pytest.Config) -> dict[str, Any]:
    """``--eval-reuse`` (``last``, or a results folder made absolute) and
    ``--eval-reuse-max-age``."""
    from pytest_plugin_evals.util.ages import DEFAULT_MAX_AGE, parse_age

    raw, where = _value(config, "--eval-reuse")
    text = str(raw or "").strip()
    reuse = None
    if text.lower() == "last":
        reuse = "last"
    elif text:
        folder = Path(config.invocation_params.dir, text).resolve()
        if not (folder / "runs").is_dir():
            raise pytest.UsageError(
                f"{where}: no recorded runs at {folder} (expected a results folder holding runs/)"
            )
        own = _path(config, "--eval-output-dir")
        if own is not None and own == folder:
            raise pytest.UsageError(
                f"{where}: {folder} is this session's own results folder (its runs are "
                "replaced): name an earlier session's"
            )
        reuse = str(folder)
    age, where = _value(config, "--eval-reuse-max-age")
    max_age = DEFAULT_MAX_AGE
    if age not in (None, ""):
        try:
            max_age = parse_age(str(age))
        except ValueError:
            raise pytest.UsageError(
                f"{where} must be an age such as 7d, 12h, 30m or 90s (got {age!r})"
            ) from None
    return {"reuse": reuse, "reuse_max_age": max_age}


def _agent(config: pytest.Config) -> str:
    """``--eval-agent``, its form checked now (one line, nothing runs); the adapter itself
    (an import, a binary, a ``cmd:`` program) is made and checked once collection finishes
    with eval items to run, so a project without evals never pays for it (see
    :func:`pytest_plugin_evals.plugin.fixtures.agent_problem`)."""
    from pytest_plugin_evals.agents import AgentError, check_spec

    raw, _ = _value(config, "--eval-agent")
    try:
        return check_spec(str(raw or "claude"))
    except AgentError as exc:
        raise pytest.UsageError(str(exc)) from None


def _agents(config: pytest.Config) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``--eval-agent`` or ``--eval-agents`` (never both: a usage error), each checked now.
    A command-line option wins over the other's ini key."""
    from pytest_plugin_evals.agents import AgentError
    from pytest_plugin_evals.agents.roster import parse_agents

    one = config.getoption(ini_name("--eval-agent"))
    several = config.getoption(ini_name("--eval-agents"))
    if one is not None and several is not None:
        raise pytest.UsageError(
            "--eval-agent and --eval-agents cannot be given together: name one agent with "
            "--eval-agent, or every agent with --eval-agents"
        )
    if one is None and several is None:
        ini_one = config.getini(ini_name("--eval-agent"))
        several = config.getini(ini_name("--eval-agents")) or None
        if ini_one and several:
            raise pytest.UsageError(
                "ini eval_agent and eval_agents cannot be given together: name one agent with "
                "eval_agent, or every agent with eval_agents"
            )
    if one is not None or not several:
        return _agent(config), ()
    try:
        agents = parse_agents(str(v) for v in several)
    except AgentError as exc:
        message = str(exc)
        if config.getoption(ini_name("--eval-agents")) is None:
            message = message.replace("--eval-agents", "ini eval_agents", 1)
        raise pytest.UsageError(message) from None
    return agents[0][1], agents


def _split(values: Any) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(part.strip() for part in str(value).split(",") if part.strip())
    return out


def _split_tools(values: Any) -> list[str]:
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
    return out


def _baseline_plugin(config: pytest.Config, ablation: str) -> str | None:
    """``--eval-baseline-plugin``: ``git:REF`` or a plugin folder (a relative one from where
    pytest started, or from the ini file's folder), checked; it needs two arms."""
    raw, where = _value(config, "--eval-baseline-plugin")
    if not raw:
        return None
    from pytest_plugin_evals.plugin.baseline import check_spec

    cli = where.startswith("--")
    base = config.invocation_params.dir if cli or config.inipath is None else config.inipath.parent
    spec = check_spec(str(raw), Path(base), where)
    if ablation == "none":
        raise pytest.UsageError(
            f"{where} needs two arms, but the ablation is none (one arm, so no arm to load it)"
        )
    return spec


#: ``--eval-shard auto``: the CI variables that number a parallel job, and whether the index
#: counts from 0.
SHARD_VARIABLES = (
    ("CI_NODE_INDEX", "CI_NODE_TOTAL", 1),  # GitLab (parallel: N)
    ("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),  # Buildkite
    ("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),  # CircleCI
)


def _shard(config: pytest.Config) -> Shard | None:
    """``--eval-shard K/N``, or ``auto``: the first CI's parallel-job variables that are set
    (none set: the whole suite runs)."""
    raw, where = _value(config, "--eval-shard")
    text = str(raw or "").strip()
    if not text:
        return None
    from pytest_plugin_evals.shards import parse_shard

    if text.lower() == "auto":
        for index_name, total_name, first in SHARD_VARIABLES:
            index, total = os.environ.get(index_name), os.environ.get(total_name)
            if index and total:
                given = f"{index_name}={index}, {total_name}={total}"
                try:
                    return parse_shard(f"{int(index) + 1 - first}/{int(total)}")
                except ValueError:
                    raise pytest.UsageError(
                        f"{where} auto: the CI variables do not name a shard ({given})"
                    ) from None
        return None
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise pytest.UsageError(f"{where} {exc} or auto") from None


def _shard_durations(config: pytest.Config) -> Path | None:
    """``--eval-shard-durations``: a results folder holding recorded runs."""
    folder = _path(config, "--eval-shard-durations")
    if folder is None:
        return None
    if not (folder / "runs").is_dir():
        _, where = _value(config, "--eval-shard-durations")
        raise pytest.UsageError(
            f"{where}: no recorded runs in {folder} (expected a results folder holding runs/)"
        )
    return folder
