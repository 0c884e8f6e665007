"""Every option, declared once (:data:`OPTIONS`), and what is derived from the declarations
apart from pytest: the help each shows, the value read (command line over ini file over the
default), a bad value as one line naming the option (its flag, or its ini key), the rules between
options, and the :class:`EvalSettings` the session reads. The default of the field an option
fills is its default (``--help`` and the docs show it). The shell (``plugin.options``) registers
the declarations with pytest and hands over what pytest read."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest_plugin_evals.settings.parsers as p
from pytest_plugin_evals.agents import CLI_AGENTS, agent_forms
from pytest_plugin_evals.judges import JUDGE_KINDS
from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.settings.option import Option
from pytest_plugin_evals.settings.parsers import Bad, Given, Whole
from pytest_plugin_evals.util.ages import show_age

_AGENT_HELP = "the agent under test: " + agent_forms()
_SECONDS = p.number("a number of seconds above 0", 0, 1e6, above=True)

# One declaration a row, kept as written: the table reads better than one argument a line.
# fmt: off
OPTIONS: tuple[Option, ...] = (
    Option("--eval-agent", _AGENT_HELP, p.agent, "agent", metavar="AGENT"),
    Option("--eval-agents", "run every case on each of several agents, comma-separated "
           "(claude,copilot,codex), each LABEL=SPEC or as {agent} names it; repeatable (a "
           "cmd:/py:/replay: spec takes the rest of its value); not with {agent}",
           p.agents, ("agents", "agent"), "lines", "AGENTS", otherwise="one agent"),
    Option("--eval-runs", "runs per case and arm, overriding each case's own (1-50); auto or "
           "auto:MAX: run each case's arms in rounds and stop a case once its verdict is "
           "decided (at most MAX runs per arm; auto: MAX 20)", p.runs, ("runs", "runs_auto"),
           metavar="N|auto[:MAX]", otherwise="each case's own"),
    Option("--eval-ablation", "arms to run: none (one arm, plugin loaded), with-without, or "
           "auto (with-without when a plugin resolves)", p.choice("auto", "none", "with-without",
           shown='"none" or "with-without"'), "ablation", metavar="none|with-without"),
    Option("--eval-baseline-plugin", "A/B: the second arm loads this plugin instead of none: "
           "a plugin folder, or git:REF (the plugin's folder at that commit of its repository, "
           "e.g. git:HEAD~1)", p.baseline, "baseline_plugin", metavar="PATH|git:REF"),
    Option("--eval-aa", "A/A calibration: the second arm loads the plugin under test too, so "
           "every difference called is a false call; reports the false-call rate and wiring "
           "faults, and gates on wiring faults only", field="aa", kind="flag"),
    Option("--eval-threshold", "minimum case score (0-1); below 1 the session passes when "
           "every case's mean meets it", p.SHARE, "threshold", metavar="X"),
    Option("--eval-trigger-threshold", "trigger evals (trigger_eval.json): fail the session "
           "when a skill's F1 is below X (0-1)", p.SHARE, "trigger_threshold", metavar="X"),
    Option("--eval-output-dir", "where results go", p.path, "output_dir", metavar="DIR",
           otherwise="<evals folder>/results/<timestamp>"),
    Option("--eval-json", "also write the JSON result document here", p.json_path, "json_path",
           metavar="PATH"),
    Option("--eval-report", "write the HTML report here", p.path, "report_path",
           metavar="PATH"),
    Option("--eval-markdown", "also write a Markdown summary of the session here, for a pull "
           "request: the verdicts, Δ, what got worse, cost, the runs not made and a link to the "
           "HTML report", p.path, "markdown_path", metavar="PATH"),
    Option("--eval-step-summary", "also add the Markdown summary to the file "
           "$GITHUB_STEP_SUMMARY names (a GitHub Actions job's summary)",
           field="step_summary", kind="flag"),
    Option("--eval-report-url", "the address the Markdown summary links the HTML report at "
           "(e.g. the CI run's page, where the report is an artifact)", p.url, "report_url",
           metavar="URL", otherwise="a path relative to the Markdown file"),
    Option("--eval-skill-creator-workspace", "also write skill-creator's layout", p.path,
           "skill_creator_workspace", metavar="DIR"),
    Option("--eval-compare", "compare each case with an earlier session: its results folder "
           "or its aggregate-result.json, or last (the newest results folder under <evals "
           "folder>/results)", p.last_or_path, "compare", metavar="PATH|last"),
    Option("--eval-reuse", "take the without arm's (and a git:REF baseline arm's) runs from "
           "an earlier session when nothing that shapes them changed: last (the newest results "
           "folder under <evals folder>/results) or that results folder", p.last_or_runs,
           "reuse", metavar="last|DIR"),
    Option("--eval-reuse-max-age", "runs older than this are not reused (e.g. 12h, 30m, 2w)",
           p.age, "reuse_max_age", metavar="AGE", show=show_age),
    Option("--eval-fail-on-regression", "fail the session when a case regressed since the "
           "{compare} session", field="fail_on_regression", kind="flag"),
    Option("--eval-case", "only cases whose name matches this glob", field="case_glob",
           metavar="GLOB"),
    Option("--eval-tag", "only cases with this tag (repeatable: any of the tags)", p.split,
           "tags", "list", "TAG"),
    Option("--eval-shard", "run the K-th of N parts of the selected cases (a CI job matrix), "
           "each case whole; auto: from the CI's parallel-job variables (GitLab, Buildkite, "
           "CircleCI)", p.shard, "shard", metavar="K/N|auto"),
    Option("--eval-shard-durations", "weigh the shards by the run durations recorded in this "
           "results folder", p.recorded_runs, "shard_durations", metavar="DIR",
           otherwise="by runs × arms"),
    Option("--eval-keep-temp", "keep each run's sandbox folder", field="keep_temp", kind="flag"),
    *(
        Option(f"--eval-{name}-bin", f"the {binary} binary", field="claude_bin" if name ==
               "claude" else f"agent_bins.{name}", metavar="PATH", otherwise=f"{binary} on PATH")
        for name, binary in CLI_AGENTS
    ),
    Option("--eval-model", "the model of every run, overriding each case's own", field="model",
           metavar="MODEL"),
    Option("--eval-allow-tools", "grant a tool that is not read-only to the cases that list "
           "it (repeatable or comma-separated; Tool(pattern) syntax)", p.tools, "allow_tools",
           "list", "TOOL"),
    Option("--eval-unconfined", "run the agents without their sandbox, on purpose: their "
           "tools can then reach your files, processes and network", field="unconfined",
           kind="flag"),
    Option("--eval-unconfined-shell", "the former name of {unconfined}",
           field="unconfined", kind="flag"),
    Option("--eval-allow-network", "let the runs reach this endpoint too, HOST:PORT or a URL "
           "(repeatable or comma-separated): a cmd: agent's model, an MCP server's",
           p.endpoints, "allow_network", "list", "HOST:PORT"),
    Option("--eval-allow-read", "let the runs read this file or folder too, read-only "
           "(repeatable or comma-separated): what a cmd: agent or an MCP server needs beyond "
           "its own program", p.readable, "allow_read", "list", "PATH"),
    # The bounds' defaults are agents.confine.bounds.Bounds' (too heavy to import at start-up;
    # tests/unit/test_options_declared.py checks these words against them).
    Option("--eval-max-memory", "the most memory a confined run's processes may use "
           "together", p.size, "bounds.memory", metavar="SIZE", otherwise="4G"),
    Option("--eval-max-file-size", "the largest file a confined run may write", p.size,
           "bounds.file_size", metavar="SIZE", otherwise="1G"),
    Option("--eval-max-disk", "the most a confined run's folders (home, working directory, "
           "tmp) may hold", p.size, "bounds.disk", metavar="SIZE", otherwise="4G"),
    Option("--eval-max-processes", "the most processes a confined run may have at once",
           p.whole(8, 100_000), "bounds.processes", metavar="N", otherwise="512"),
    Option("--eval-max-files", "the most files a confined run's folders may hold",
           p.whole(100, 100_000_000), "bounds.files", metavar="N", otherwise="100000"),
    Option("--eval-disallow-tools", "remove a built-in tool from every run (repeatable)",
           p.split, "disallow_tools", "list", "TOOL"),
    Option("--eval-scaffold", "run each case's scaffold_script (as you, before the agent)",
           field="scaffold", kind="flag"),
    Option("--eval-judge", "the judge of llm, baseline and meetsCriteria graders: "
           + ", ".join(JUDGE_KINDS), p.choice(*JUDGE_KINDS, shown="one of "
           + ", ".join(JUDGE_KINDS)), "judge", metavar="|".join(JUDGE_KINDS)),
    Option("--eval-judge-model", "the judge's model (required for openai)",
           field="judge_model", metavar="MODEL", otherwise="the judge's own"),
    Option("--eval-judge-second", "a second judge of the same answers, [BACKEND:]MODEL (the "
           "backend: {judge}'s unless named): its verdicts are recorded and compared, never "
           "scored", field="judge_second", metavar="MODEL"),
    Option("--eval-labels", "verdicts people gave on this session's runs, to measure each "
           "judge against: a JSON lines file, or skill-creator's feedback.json (repeatable)",
           p.readable, "labels", "list", metavar="FILE"),
    Option("--eval-no-judge", "skip paid graders (llm, baseline, meetsCriteria) on purpose",
           field="no_judge", kind="flag"),
    Option("--eval-mocks", "on: MCP servers are answered by the mocks folders' stand-ins; "
           "off: mocks are ignored and the plugin's real servers start", p.choice("on", "off"),
           "mocks", metavar="on|off"),
    Option("--eval-allow-real-servers", "start the plugin's declared MCP servers that have no "
           "mocks (withheld otherwise)", field="allow_real_servers", kind="flag"),
    Option("--eval-max-cost-usd", "stop starting runs once this much was spent (the result is "
           "then partial)", p.number("a number, 0 or more", 0, float("inf")), "max_cost_usd",
           metavar="USD"),
    Option("--eval-grader-timeout", "seconds each grader may spend matching patterns before "
           "the run is an error", _SECONDS, "grader_timeout", metavar="SECONDS"),
    Option("--eval-progress", "while runs go on, show runs done, in flight, spend and ETA: a "
           "live line on a terminal, else a line every SECONDS; off: none", p.seconds_or_off,
           "progress_seconds", metavar="SECONDS|off"),
    Option("--eval-run-ahead", "on: while a process makes one run it starts its next items' "
           "when the CPUs have been idle lately, up to its share of {max_concurrency} "
           "(4 runs per CPU unless capped); always: whatever the CPUs; off: one run at a time per "
           "process", p.choice("on", "always", "off"), "run_ahead", metavar="on|always|off"),
    Option("--eval-reducer", "how a case's runs become its verdict: mean (the mean score "
           "meets the threshold), all (every run does: pass^k), any (one does: pass@k) or "
           "at-least:M", p.reducer, "reducer", metavar="mean|all|any|at-least:M"),
    Option("--eval-rate-limit-retries", "make a run the provider refused (429 rate limit, 529 "
           "overloaded) again up to N times, every process of the session waiting together "
           "(0: the run is an error)", p.whole(0, 100), "rate_limit_retries", metavar="N"),
    Option("--eval-max-concurrency", "at most N runs in flight in the session, whatever -n and "
           "{run_ahead} start, each process keeping its share in flight",
           p.whole(1, 1000), "max_concurrency", metavar="N",
           otherwise="no cap, 4 runs per CPU in flight"),
    Option("--eval-max-rate-limit-wait", "the most seconds the session waits out rate limits "
           "in all; past it a refused run is not made again",
           p.number("a number of seconds, 0 or more", 0, 1e7), "max_rate_limit_wait",
           metavar="SECONDS"),
    Option("--eval-session-timeout", "end the session after this many seconds, as Ctrl-C "
           "does: the runs in flight are stopped, the result is partial",
           p.number("a number of seconds above 0", 0, 1e7, above=True), "session_timeout",
           metavar="SECONDS", otherwise="no limit"),
    Option("--eval-env-pass", "also pass this operator variable to the agent (repeatable)",
           p.split, "env_pass", "list", "NAME"),
    Option("--eval-margin", "a difference (Δ, a change since {compare}) is 'equivalent' "
           "when its 95%% interval lies within ±X (0-1; 0: never)", p.SHARE, "margin",
           metavar="X"),
    Option("--eval-gate", "also fail the session on the verdicts: not-worse (no case and not "
           "the suite is worse than the second arm or the compared session) or better (the "
           "suite's mean Δ is better)", p.choice("not-worse", "better"), "verdict_gate",
           metavar="not-worse|better"),
    Option("--eval-fail-on-cost-regression", "fail the session when the suite's agent cost "
           "with the plugin is more than RATIO times the cost without, with evidence (the 95%% "
           "interval of the ratio lies above RATIO; e.g. 1.2)", p.number("a ratio above 0", 0,
           1e6, above=True), "cost_regression", metavar="RATIO"),
    Option("--eval-plan", "start no agent: print the runs per arm and the cases it would take "
           "to detect a Δ of {min_effect} at 80 percent power, from the newest earlier "
           "session, and their cost and time", field="plan", kind="flag"),
    Option("--eval-min-effect", "the Δ {plan} plans to detect (above 0, at most 1)",
           p.number("a number above 0, at most 1", 0, 1, above=True), "min_effect",
           metavar="X"),
    Option("eval_case_reducers", 'reducers of the cases that have their own, one "GLOB = '
           "REDUCER\" per line (the first glob that matches a case's name wins)",
           p.case_reducers, "case_reducers", "lines"),
    Option("eval_paths", "more folders (besides those named evals) holding eval suites",
           p.folders, "eval_paths", "paths"),
)
# fmt: on

#: The option that fills each field (the current name, where a former one fills it too).
FIELD = {o.key: o for o in reversed(OPTIONS)}


def help_text(option: Option) -> str:
    """The option's help, another option's ``{field}`` named by its flag, and the default."""
    text = re.sub(r"\{(\w+)\}", lambda found: FIELD[found.group(1)].flag, option.help)
    default = option.default
    return text if default is None else f"{text} (default: {default})"


#: The type pytest reads the ini twin of each kind of option as (else a string).
INI_TYPES = {"flag": "bool", "list": "args", "lines": "linelist", "paths": "paths"}


def keywords(option: Option) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """pytest's ``addoption`` keywords for ``option`` (None: it has no flag; its value is kept
    under its ini name, None when not given), and ``addini``'s for its ini twin."""
    text, ini_type = help_text(option), INI_TYPES.get(option.kind)
    empty: Any = False if option.kind == "flag" else [] if ini_type else None
    ini = {"help": text.replace("%%", "%"), "type": ini_type, "default": empty}
    if not option.on_cli:
        return None, ini
    action = {"flag": "store_true", "list": "append", "lines": "append"}.get(option.kind, "store")
    extra = {} if option.kind == "flag" else {"metavar": option.metavar}
    return {"action": action, "default": None, "dest": option.ini, "help": text, **extra}, ini


def given_of(
    option: Option, cli: Any, ini: Any, start: Path, ini_folder: Path | None
) -> Given | None:
    """The option's value as given (command line over ini file), or None: not given. ``start``
    is where pytest started, ``ini_folder`` the ini file's folder (None: no ini file)."""
    if cli is not None:  # given, if empty: the ini file's value is not read
        return None if cli == "" else Given(cli, option.flag, True, start, start)
    if ini in (None, "", [], False):
        return None
    base = start if ini_folder is None else ini_folder
    return Given(ini, f"ini {option.ini}", False, start, base)


def _value(option: Option, given: Given) -> Any:
    parse = option.parse or (lambda g: True if option.kind == "flag" else str(g.raw).strip())
    try:
        return parse(given)
    except Whole as exc:
        raise Whole(str(exc).replace(option.flag, given.where, 1)) from None
    except Bad as exc:
        rest = str(exc)
        raise Whole(given.where + ("" if rest.startswith(":") else " ") + rest) from None


def settings_from(given: Givens) -> EvalSettings:
    """The settings of the options given (by the field each is known by), each value read and
    checked, and the rules between them. Raises :class:`Whole`: one line naming the option (its
    flag, or its ini key) and what it accepts."""
    _one_agent_or_several(given)
    fields: dict[str, Any] = {}
    pairs: dict[str, list[tuple[str, Any]]] = {}
    for option in OPTIONS:
        found = given.get(option.key)
        if found is None:
            continue
        value = _value(option, found)
        if isinstance(option.field, tuple):
            fields.update(zip(option.field, value, strict=True))
        elif isinstance(option.field, str) and "." in option.field:
            name, _, key = option.field.partition(".")
            pairs.setdefault(name, []).append((key, value))
        elif value not in ("", ()):
            fields[str(option.field)] = value
    fields.update({name: tuple(found) for name, found in pairs.items()})
    for rule in RULES:
        fields.update(rule(given, fields))
    return EvalSettings(**fields)


# -- Between options ---------------------------------------------------------------------------

Found = dict[str, Any]
Givens = dict[Any, Given]


def _one_agent_or_several(given: Givens) -> None:
    """One agent or several, never both: a usage error when both are given on the command
    line, or both in the ini file; one given on the command line wins over the other's ini key."""
    one, several = given.get("agent"), given.get("agents")
    if one is None or several is None:
        return
    if one.from_cli == several.from_cli:
        raise Whole(
            f"{one.where} and {several.where} cannot be given together: name one agent with "
            f"{one.where}, or every agent with {several.where}"
        )
    del given["agents" if one.from_cli else "agent"]


def _given_or_not(given: Givens, fields: Found) -> Found:
    """Whether the threshold and the judge were chosen, not defaulted."""
    return {"threshold_given": "threshold" in fields, "judge_given": "judge" in fields}


def _judge_model(given: Givens, fields: Found) -> Found:
    if fields.get("judge") == "openai" and not fields.get("judge_model"):
        judge, model = FIELD["judge"].flag, FIELD["judge_model"].flag
        raise Whole(f"{judge} openai needs {model} (the endpoint's model)")
    return {}


def _labels_readable(given: Givens, fields: Found) -> Found:
    """Every ``--eval-labels`` file read once, before any run: one that cannot be read is one
    line naming the file and line."""
    if "labels" not in fields:
        return {}
    from pytest_plugin_evals.util.labels import LabelsError, read_labels

    try:
        read_labels(fields["labels"])
    except LabelsError as exc:
        raise Whole(f"{given['labels'].where}: {exc}") from None
    return {}


def _needs_compare(given: Givens, fields: Found) -> Found:
    if fields.get("fail_on_regression") and "compare" not in fields:
        where, compare = given["fail_on_regression"].where, FIELD["compare"].flag
        raise Whole(f"{where} needs {compare} (the earlier session to compare with)")
    return {}


def _reuse_not_own(given: Givens, fields: Found) -> Found:
    reuse, own = fields.get("reuse"), fields.get("output_dir")
    if reuse not in (None, "last") and own is not None and Path(reuse) == own:
        raise Whole(
            f"{given['reuse'].where}: {reuse} is this session's own results folder (its runs "
            "are replaced): name an earlier session's"
        )
    return {}


def _baseline_needs_two_arms(given: Givens, fields: Found) -> Found:
    if "baseline_plugin" in fields and fields.get("ablation") == "none":
        raise Whole(
            f"{given['baseline_plugin'].where} needs two arms, but the ablation is none (one "
            "arm, so no arm to load it)"
        )
    return {}


def _aa_needs_two_arms_of_one_plugin(given: Givens, fields: Found) -> Found:
    if not fields.get("aa"):
        return {}
    where = given["aa"].where
    if "baseline_plugin" in fields:
        raise Whole(
            f"{where} and {given['baseline_plugin'].where} cannot be given together: an A/A "
            "session's second arm loads the plugin under test, an A/B's another plugin"
        )
    if fields.get("ablation") == "none":
        raise Whole(
            f"{where} needs two arms, but the ablation is none (one arm, nothing to compare)"
        )
    if "reuse" in fields:
        raise Whole(
            f"{where} and {given['reuse'].where} cannot be given together: both arms of an A/A "
            "load the plugin under test, whose runs are never reused"
        )
    replayed = [s for s in (fields.get("agent"), *dict(fields.get("agents", ())).values()) if s]
    if any(str(spec).startswith("replay:") for spec in replayed):
        raise Whole(
            f"{where} needs runs made now: a replay has no second arm's runs of the plugin "
            "under test to replay"
        )
    return {}


RULES: tuple[Callable[[Givens, Found], Found], ...] = (
    _given_or_not,
    _judge_model,
    _labels_readable,
    _needs_compare,
    _reuse_not_own,
    _baseline_needs_two_arms,
    _aa_needs_two_arms_of_one_plugin,
)
