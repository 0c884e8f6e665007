"""The terminal summary table, as text lines (pure: the pytest hook only prints them).

Two arms (Δ with its 95% interval, see :mod:`pytest_plugin_evals.stats.intervals`)::

    CASE          WITH  W/OUT Δ                    RUNS COST    NOTES
    decoy         0.50  1.00  -0.50 [-0.91, +0.15] 4    $0.02   no-skill: Skill called 1x …
    3 case(s) · mean Δ +0.17 [-0.40, +0.74] · 7s · $0.06

One arm: ``CASE   SCORE PASS% RUNS COST    NOTES`` (the score with its interval) and
``N case(s) · score 0.83 · 7s · $0.06``. Then: the verdicts on Δ, latency and tokens,
the cases whose runs disagree, and a hint to make more runs when intervals are wide.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

from pytest_plugin_evals.model import LAYOUT_TOLD
from pytest_plugin_evals.reporting.compare import Comparison
from pytest_plugin_evals.reporting.efficiency import efficiency_line
from pytest_plugin_evals.reporting.grader_splits import grader_lines
from pytest_plugin_evals.reporting.result import INFRA_PARTIAL_REASON, CaseResult, SessionResult
from pytest_plugin_evals.reporting.triggers import cases_counted, trigger_lines, trigger_results
from pytest_plugin_evals.reporting.verdict_lines import comparison_family, verdict_lines
from pytest_plugin_evals.scoring import Timing
from pytest_plugin_evals.stats import Interval, runs_for_width, width

#: A Δ interval wider than this (of 2, the whole range) asks for more runs ...
WIDE_DELTA = 1.0
#: ... and so does a single-arm score interval wider than this (of 1).
WIDE_SCORE = 0.5
#: Names listed on one line before "…".
NAMES_SHOWN = 5

MISSING = "—"
NOTES_LIMIT = 80

#: Column -> the width it never goes under (the reference's layout).
_MIN_WIDTHS = {
    "WITH": 5,
    "W/OUT": 5,
    "BASE": 5,
    "Δ": 6,
    "SCORE": 5,
    "PASS%": 5,
    "RUNS": 4,
    "COST": 7,
}


def _num(x: float | None) -> str:
    return MISSING if x is None else f"{x:.2f}"


def _signed(x: float | None) -> str:
    return MISSING if x is None else f"{x:+.2f}"


def _with_interval(text: str, interval: Interval | None, signed: bool) -> str:
    if interval is None:
        return text
    low, high = (f"{v:+.2f}" if signed else f"{v:.2f}" for v in interval)
    return f"{text} [{low}, {high}]"


def _percent(x: float | None) -> str:
    return MISSING if x is None else f"{round(x * 100)}%"


def _money(x: float | None) -> str:
    return f"${(x or 0.0):.2f}"


def _duration(seconds: float | None) -> str:
    total = round(seconds or 0.0)
    if total < 60:
        return f"{total}s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


#: Terminal escape sequences: CSI (``ESC [`` or the 8-bit CSI), the OSC, DCS, SOS, PM and APC
#: strings (to BEL or ST), and the other ``ESC x`` sequences. An unfinished one is removed as
#: far as it goes (a string up to the next control character), a lone ESC too.
_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x00-\x1f\x7f-\x9f]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
#: Control characters left after the sequences are gone: C0 (but tab and line feed), DEL, C1.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _control_picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code == 0x7F:
        return "\u2421"  # ␡
    return chr(0x2400 + code) if code < 0x20 else "\ufffd"


def plain(text: str, *, newlines: bool = False) -> str:
    """``text`` safe to print on a terminal: escape sequences removed, other control characters
    shown as their symbol (``\\r`` as ␍, BEL as ␇, a C1 control as �), tabs as spaces, and line
    feeds kept only when ``newlines`` (else spaces). Any other character, é 😀 Δ, is kept.

    Case names, notes, explanations and answers come from suites and from a model's output:
    printed raw, they could recolour the terminal, clear it, retitle its window or overwrite
    the lines above.
    """
    text = _ESCAPE_SEQUENCE.sub("", text.replace("\r\n", "\n"))
    text = _CONTROL.sub(_control_picture, text).replace("\t", " ")
    return text if newlines else text.replace("\n", " ")


def cut(text: str, limit: int = NOTES_LIMIT) -> str:
    """One line of at most ``limit`` characters, ending in ``…`` when cut (and :func:`plain`)."""
    line = " ".join(plain(text).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _row(case: CaseResult, two_arm: bool, agents: bool = False) -> list[str]:
    agg = case.aggregates
    if two_arm:
        delta = _signed(agg.delta)
        if agg.delta is not None:
            delta = _with_interval(delta, agg.delta_interval, signed=True)
        numbers = [_num(agg.score), _num(agg.score_without), delta]
    else:
        score = _num(agg.score)
        if agg.score is not None:
            score = _with_interval(score, agg.score_interval, signed=False)
        numbers = [score, _percent(agg.pass_rate)]
    notes = cut(case.notes) if case.notes else ""
    named = [plain(case.name), *([plain(case.agent or MISSING)] if agents else [])]
    cost = _money(case.cost_usd) + ("+?" if not case.cost_known else "")
    return [*named, *numbers, _runs_made(case), cost, notes]


def _runs_made(case: CaseResult) -> str:
    """The RUNS cell: the runs made, and of how many when some could not be (``4 of 6 made``:
    a replay with more runs than were recorded, rate limits)."""
    made = sum(1 for run in case.runs if run.result.graded)
    return str(made) if made == len(case.runs) else f"{made} of {len(case.runs)} made"


def spend(result: SessionResult) -> str:
    """The session's cost; a replay's agent cost was recorded, not spent (its judges were)."""
    if result.agents or not result.suite.agent.startswith("replay:"):
        return _money(result.cost_usd)
    judged = sum(run.result.judge_cost_usd for case in result.cases for run in case.runs)
    return f"{_money(result.cost_usd - judged)} recorded · {_money(judged)} spent"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [
        max(_MIN_WIDTHS.get(title, 0), len(title), *(len(row[i]) for row in rows))
        for i, title in enumerate(header[:-1])
    ]
    widths[0] += 1  # the case name gets one more space of air
    return [
        " ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False))
        + " "
        + line[-1]
        for line in [header, *rows]
    ]


def partial_lines(result: SessionResult) -> list[str]:
    lines = []
    if result.errors:
        kinds = ", ".join(f"{kind} {count}" for kind, count in result.errors.items())
        lines.append(
            f"partial: {sum(result.errors.values())} run(s) could not be made ({kinds})"
            " — kept out of the scores"
        )
    reason = result.partial_reason
    if result.partial and reason and reason != INFRA_PARTIAL_REASON:
        not_started = result.aggregates.runs_skipped
        extra = f" · {not_started} run(s) not started" if not_started else ""
        lines.append(f"partial: {reason}{extra}")
    return lines


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown + (f", … ({len(names) - NAMES_SHOWN} more)" if len(names) > NAMES_SHOWN else "")


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else str(n)


def timing_line(t: Timing) -> str | None:
    """``latency mean 4.2s · p50 3.9s · p95 8.1s · tokens 12.3k in / 3.1k out · 4.1 turns/run``
    (None when no run reported a duration or tokens)."""
    parts = []
    if t.latency_mean is not None:
        parts.append(
            f"latency mean {t.latency_mean:.1f}s · p50 {t.latency_p50 or 0:.1f}s"
            f" · p95 {t.latency_p95 or 0:.1f}s"
        )
    if t.input_tokens is not None or t.output_tokens is not None:
        parts.append(
            f"tokens {_tokens(t.input_tokens or 0)} in / {_tokens(t.output_tokens or 0)} out"
        )
    if parts and t.turns_mean is not None:
        parts.append(f"{t.turns_mean:.1f} turns/run")
    return " · ".join(parts) if parts else None


def _more_runs(result: SessionResult) -> str | None:
    """A hint to make more runs when intervals are too wide to tell a change from noise."""
    two_arm = result.two_arm
    limit = WIDE_DELTA if two_arm else WIDE_SCORE
    wide: list[tuple[str, int | None]] = []
    for case in result.cases:
        agg = case.aggregates
        span = width(agg.delta_interval if two_arm else agg.score_interval)
        if span is None or span <= limit + 1e-9 or agg.sequential is not None:
            continue  # a case run in rounds stopped where more runs would not decide it
        first = [r.result.score for r in case.with_runs if r.result.graded]
        second = [r.result.score for r in case.without_runs if r.result.graded]
        wide.append((case.label, runs_for_width(first, second if two_arm else None, limit)))
    if not wide:
        return None
    what = "Δ" if two_arm else "score"
    needed = [n for _, n in wide]
    advice = (
        f"about --eval-runs {max(n for n in needed if n is not None)} would narrow them"
        if all(n is not None for n in needed)
        else "more runs (up to --eval-runs 50) would narrow them"
    )
    return (
        f"wide intervals: the {what} of {len(wide)} case(s) spans more than {limit:.1f} "
        f"({_names([name for name, _ in wide])}) — {advice}"
    )


def plugin_lines(result: SessionResult) -> list[str]:
    """How each plugin under test without a manifest was resolved (a bare skill layout)."""
    return [
        f"PLUGIN: {p.name} at {p.path} — {LAYOUT_TOLD[p.layout]}; loaded in the with arm"
        for p in result.suite.plugins
        if p.layout in LAYOUT_TOLD
    ]


def _before(result: SessionResult) -> str:
    """The baseline, named short: ``git:HEAD~1`` (or its folder's name)."""
    found = result.suite.baseline_plugins
    if len(found) != 1:
        return "the baseline"
    spec = found[0].spec
    return spec[:40] if spec.startswith("git:") else PurePath(spec).name[:40]


def baseline_lines(result: SessionResult) -> list[str]:
    """``BASE: demo 1.0.0 from git:HEAD~1 (3f2c1a9e0b7d) · Δ = WITH − BASE`` in an A/B."""
    if not result.baseline:
        return []
    if result.suite.aa:
        return ["BASE: the plugin under test again (--eval-aa: an A/A) · Δ = WITH − BASE"]
    lines = []
    for plugin in result.suite.baseline_plugins:
        named = plugin.name + (f" {plugin.version}" if plugin.version else "")
        commit = f" ({plugin.commit[:12]})" if plugin.commit else ""
        lines.append(f"BASE: {named} from {plugin.spec}{commit} · Δ = WITH − BASE")
    return lines or ["BASE: the baseline plugin (--eval-baseline-plugin) · Δ = WITH − BASE"]


def evidence_lines(result: SessionResult) -> list[str]:
    """What the numbers are worth: significant Δ, timing, unstable cases, blind graders, hints."""
    lines = []
    lines.extend(verdict_lines(result))
    timing = timing_line(result.aggregates.timing)
    if timing:
        lines.append(timing)
    lines.extend(line for line in [efficiency_line(result)] if line is not None)
    unstable = [
        f"{c.label} ({', '.join(c.aggregates.unstable)})"
        for c in result.cases
        if c.aggregates.unstable
    ]
    if unstable:
        lines.append(
            f"unstable: {len(unstable)} case(s) whose runs disagree within an arm: "
            + _names(unstable)
        )
    lines.extend(grader_lines(result.cases))
    hint = _more_runs(result)
    if hint:
        lines.append(hint)
    reducers = {c.aggregates.reducer for c in result.cases}
    if reducers - {"mean"}:
        lines.append("reducer: " + ", ".join(sorted(reducers)) + " (how runs become a verdict)")
    return lines


def comparison_lines(comparison: Comparison) -> list[str]:
    """``compared with <startedAt>: 1 worse, 3 inconclusive``, then one line per case that was
    decided, came or went (``worse  slow  1.00 → 0.33  -0.67 [-0.95, -0.10]``), then the
    verdicts' false discovery rate line."""
    counts = ", ".join(f"{n} {verdict}" for verdict, n in comparison.counts.items() if n)
    when = comparison.against_started_at or comparison.against
    lines = [f"compared with {when}: {counts or 'no case'}"]
    shown = [c for c in comparison.cases if c.verdict != "inconclusive"]
    verdicts = max((len(c.verdict) for c in shown), default=0)
    names = max((len(plain(c.name)) for c in shown), default=0)
    for case in shown:
        line = (
            f"{case.verdict.ljust(verdicts)}  {plain(case.name).ljust(names)}  "
            f"{_num(case.before)} → {_num(case.after)}"
        )
        if case.change is not None:
            line += "  " + _with_interval(_signed(case.change), case.change_interval, signed=True)
        lines.append(line.rstrip())
    family = comparison_family(comparison)
    if family:
        lines.append(plain(family))
    if changed := [plain(c.name) for c in comparison.graders_changed]:
        lines.append(f"graders changed since then in {len(changed)} case(s) ({_names(changed)}):"
                     " their change measures the graders' as well as the plugin's")  # fmt: skip
    return lines


def _report_line(path: str) -> str:
    label = {".json": "JSON", ".html": "HTML", ".md": "Markdown"}.get(PurePath(path).suffix.lower())
    return f"{label or 'Report'}: {path}"


def rate_limit_lines(result: SessionResult) -> list[str]:
    """``rate limits: 7 retries, waited 12s``: runs made again after the provider refused
    them, and how long the session was paused for that (nothing when neither happened)."""
    agg = result.aggregates
    if not agg.rate_limit_retries and not agg.rate_limit_wait_seconds:
        return []
    retries = "1 retry" if agg.rate_limit_retries == 1 else f"{agg.rate_limit_retries} retries"
    wait = agg.rate_limit_wait_seconds
    waited = f"{wait:.1f}s" if wait < 10 else _duration(wait)
    return [f"rate limits: {retries}, waited {waited}"]


def agent_lines(result: SessionResult) -> list[str]:
    """In a session of several agents (``--eval-agents``), each agent's numbers on one line:
    ``claude: mean Δ +0.60 [+0.20, +1.00] · codex: mean Δ +0.10 [-0.30, +0.50]`` (``score`` in
    one arm), then the runs of an agent that could not be made."""
    if not result.agents:
        return []
    parts = []
    for agent in result.agents:
        if result.two_arm:
            number = "mean Δ " + _signed(agent.mean_delta)
            if agent.mean_delta is not None:
                number = "mean Δ " + _with_interval(
                    _signed(agent.mean_delta), agent.mean_delta_interval, signed=True
                )
        else:
            number = f"score {_num(agent.score)}"
        parts.append(f"{agent.label}: {number}")
    lines = [" · ".join(parts)]
    for agent in result.agents:
        if agent.errors:
            kinds = ", ".join(f"{kind} {count}" for kind, count in agent.errors.items())
            lines.append(
                f"{agent.label}: {sum(agent.errors.values())} run(s) could not be made ({kinds})"
            )
    return lines


def summary_lines(result: SessionResult, *, report_paths: Sequence[str] = ()) -> list[str]:
    """The summary table, its footer, the partial and load-error notices and the report paths."""
    two_arm = result.two_arm
    agents = any(c.agent is not None for c in result.cases)
    header = (
        ["CASE", "WITH", "BASE" if result.baseline else "W/OUT", "Δ", "RUNS", "COST", "NOTES"]
        if two_arm
        else ["CASE", "SCORE", "PASS%", "RUNS", "COST", "NOTES"]
    )
    if agents:
        header.insert(1, "AGENT")
    rows = [_row(c, two_arm, agents) for c in result.cases]
    lines = [line.rstrip() for line in _table(header, rows)] if rows else []
    agg = result.aggregates
    headline = (
        "mean Δ " + _with_interval(_signed(agg.mean_delta), agg.mean_delta_interval, signed=True)
        if two_arm and agg.mean_delta is not None
        else f"mean Δ {_signed(agg.mean_delta)}"
        if two_arm
        else f"score {_num(agg.overall_score)}"
    )
    counted = cases_counted(result.cases, len(result.agents))
    lines.append(
        f"{counted} · {headline} · {_duration(result.duration_seconds)} · {spend(result)}"
        + (
            ""
            if all(c.cost_known for c in result.cases)
            else " + unknown (agents that report no price)"
        )
    )
    lines.extend(agent_lines(result))
    from pytest_plugin_evals.reporting.syntic import summary_line

    syntic = summary_line(result)  # an evals.json suite's own summary, as its system says it
    if syntic is not None:
        lines.append(syntic)
    lines.extend(plugin_lines(result))
    lines.extend(trigger_lines(trigger_results(result.cases), _before(result)))
    lines.extend(baseline_lines(result))
    lines.extend(evidence_lines(result))
    lines.extend(rate_limit_lines(result))
    lines.extend(partial_lines(result))
    load_errors = len(result.load_errors)
    if load_errors:
        files = "case file could" if load_errors == 1 else "case files could"
        lines.append(f"{load_errors} {files} not be loaded — see the errors above")
    if result.comparison is not None:
        lines.extend(comparison_lines(result.comparison))
    lines.extend(_report_line(path) for path in report_paths)
    return [plain(line) for line in lines]
