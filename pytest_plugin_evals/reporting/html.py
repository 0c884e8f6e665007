"""The self-contained HTML report: one file, nothing from the network, readable without JS.

Rendered from a Jinja2 template with autoescaping on (every value is text); the result document
is embedded as ``<script type="application/json" id="eval-document">`` so tools can read it back
with the standard library. The charts are inline SVG drawn by
:mod:`~pytest_plugin_evals.reporting.charts` from what
:mod:`~pytest_plugin_evals.reporting.html_views` computes; the page's small script only filters
and orders what is already there.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.model import ANSWER_LIMIT, SKILL_NOT_LOADED, JudgeVote, Verdict
from pytest_plugin_evals.reporting.aa import calibrate
from pytest_plugin_evals.reporting.agreement import agreement_view, judge_agreement
from pytest_plugin_evals.reporting.document import document_json
from pytest_plugin_evals.reporting.efficiency import case_table, suite_table
from pytest_plugin_evals.reporting.grader_splits import grader_splits
from pytest_plugin_evals.reporting.html_views import comparison_view, interval_pts, overview
from pytest_plugin_evals.reporting.result import SessionResult
from pytest_plugin_evals.reporting.trace_diff_view import diff_views
from pytest_plugin_evals.reporting.triggers import trigger_json, trigger_results
from pytest_plugin_evals.stats import FDR, Decision, counts, describe
from pytest_plugin_evals.stats.agreement import LOW_KAPPA

if TYPE_CHECKING:
    import jinja2


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.0f}%"


def _pts(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:+.1f} pts"


def _money(x: float | None) -> str:
    return f"${(x or 0.0):.2f}"


def _secs(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}s"


def _tokens(given: int | None, taken: int | None) -> str:
    """Input / output tokens, ``?`` where the agent does not report them."""
    return f"{'?' if given is None else f'{given:,}'} / {'?' if taken is None else f'{taken:,}'}"


def _width(score: float | None) -> float:
    return 0.0 if score is None else max(0.0, min(1.0, score)) * 100


def _num(x: float) -> str:
    return f"{x:g}"


def _vote_marks(votes: Iterable[JudgeVote]) -> str:
    return " ".join("✓" if v.vote == "PASS" else "✗" for v in votes)


def _skip_reasons(verdicts: Iterable[Verdict]) -> str:
    return ", ".join(sorted({v.skipped for v in verdicts if v.skipped}))


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _json_pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


#: How many of a run's created files its view lists (by the names the run gave them).
FILES_LISTED = 100


#: Where the compiled templates are kept between sessions: beside the templates, as Python
#: keeps the package's own bytecode (whoever can write there can change the package anyway).
TEMPLATE_CACHE = os.path.join(os.path.dirname(__file__), "templates", "__pycache__")


def _bytecode_cache() -> jinja2.BytecodeCache:
    """The templates compiled by an earlier session (Jinja checks each against its source and
    the Python version), so a session does not compile them again (80–90 ms). Written as
    Python writes bytecode (not under ``PYTHONDONTWRITEBYTECODE``); a folder that cannot be
    read or written only means compiling again."""
    import jinja2

    class TemplateCache(jinja2.FileSystemBytecodeCache):
        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            with contextlib.suppress(OSError):
                super().load_bytecode(bucket)

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            if sys.dont_write_bytecode:
                return
            with contextlib.suppress(OSError):
                os.makedirs(self.directory, exist_ok=True)
                super().dump_bytecode(bucket)

    return TemplateCache(TEMPLATE_CACHE)


@cache
def _environment() -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pytest_plugin_evals.reporting", "templates"),
        bytecode_cache=_bytecode_cache(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters.update(
        pct=_pct,
        pts=_pts,
        money=_money,
        secs=_secs,
        width=_width,
        num=_num,
        vote_marks=_vote_marks,
        skip_reasons=_skip_reasons,
        tojson_text=_json_text,
        tojson_pretty=_json_pretty,
        verdict_text=_verdict_text,
    )
    env.globals["not_loaded"] = SKILL_NOT_LOADED
    env.globals["grader_splits"] = grader_splits
    env.globals["efficiency_of"] = case_table
    return env


def _verdict_text(decision: Decision | None) -> str:
    """What a verdict says, for its badge's title."""
    return "" if decision is None else describe(decision)


@cache
def _resource(name: str) -> str:
    return (resources.files(__package__) / "resources" / name).read_text(encoding="utf-8")


def embedded_json(document: Mapping[str, Any]) -> str:
    """The document as JSON that cannot end the script element early."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _plugins(result: SessionResult) -> str:
    names = [p.name + (f" v{p.version}" if p.version else "") for p in result.suite.plugins]
    return ", ".join(names) or "(no plugin)"


def _baseline_label(result: SessionResult) -> str:
    """The baseline plugin of an A/B: ``demo v1.0.0 from git:HEAD~1 (3f2c1a9e0b7d)``."""
    if result.suite.aa:
        return "the plugin under test again (--eval-aa: an A/A)"
    labels = [
        p.name
        + (f" v{p.version}" if p.version else "")
        + f" from {p.spec}"
        + (f" ({p.commit[:12]})" if p.commit else "")
        for p in result.suite.baseline_plugins
    ]
    return ", ".join(labels) or "--eval-baseline-plugin"


def _meta(result: SessionResult) -> list[str]:
    suite = result.suite
    parts = [
        f"started {result.started_at}",
        _secs(result.duration_seconds),
        _money(result.cost_usd),
        f"{result.aggregates.runs_total} run(s)",
        f"agent {suite.agent}",
        f"ablation {suite.ablation}",
        f"threshold {_pct(suite.threshold)}",
    ]
    if result.baseline:
        parts.append(f"baseline {_baseline_label(result)}")
    if suite.case_filter:
        parts.append(f"filtered: {suite.case_filter}")
    if suite.tag_filters:
        parts.append("tags: " + ", ".join(suite.tag_filters))
    return parts


def _banners(result: SessionResult) -> list[str]:
    agg = result.aggregates
    out = []
    if result.partial:
        text = f"⚠ Partial results ({result.partial_reason})."
        if result.errors:
            kinds = ", ".join(f"{k} {n}" for k, n in result.errors.items())
            text += (
                f" {sum(result.errors.values())} run(s) could not be made ({kinds})"
                " and are kept out of the scores."
            )
        if agg.runs_skipped:
            text += f" {agg.runs_skipped} run(s) were not started."
        out.append(text)
    found = judge_agreement(result)
    if found is not None and found.flagged:
        names = ", ".join(r.name for r in found.flagged)
        out.append(f"⚠ Low judge agreement (κ under {LOW_KAPPA:g}): {names}.")
    if agg.runs_errored:
        out.append(
            f"⚠ {agg.runs_errored} run(s) ended with an error and were graded on what they"
            " produced: the averages include them."
        )
    return out


def _effect(result: SessionResult) -> dict[str, Any] | None:
    deltas = [c.aggregates.delta for c in result.cases if c.aggregates.delta is not None]
    if not deltas:
        return None
    up = sum(1 for d in deltas if d > 1e-9)
    down = sum(1 for d in deltas if d < -1e-9)
    agg = result.aggregates
    mean_delta = agg.mean_delta or 0.0
    arrow = "↑" if mean_delta > 1e-9 else "↓" if mean_delta < -1e-9 else "→"
    note = significance = ""
    if agg.mean_delta_interval is not None:
        beyond = "significant" if agg.mean_delta_significant else "not significant"
        note = f"95% {interval_pts(agg.mean_delta_interval)} pts · {beyond}"
        significance = f"Mean Δ {note.replace(' · ', ', ')} (cluster-robust, by case)."
    if agg.mean_delta_decision is not None:
        significance += f" Verdict: {describe(agg.mean_delta_decision, 'run(s) per arm')}."
    intervals = [c.aggregates for c in result.cases if c.aggregates.delta_interval is not None]
    if intervals:
        sig_up = sum(1 for a in intervals if a.delta_significant and (a.delta or 0) > 0)
        sig_down = sum(1 for a in intervals if a.delta_significant and (a.delta or 0) < 0)
        significance += (
            f" Beyond noise (Δ's 95% interval excludes 0): {sig_up} up, {sig_down} down"
            f" of {len(intervals)} cases."
        )
    verdicts = counts([c.aggregates.delta_decision for c in result.cases])
    if any(verdicts.values()):
        said = ", ".join(f"{n} {v}" for v, n in verdicts.items() if n)
        significance += (
            f" Case verdicts (equivalent within ±{agg.margin * 100:.0f} pts): {said}; false"
            f" discovery rate held at {FDR:.0%} (Benjamini–Hochberg)."
        )
    stops = [c.aggregates.sequential for c in result.cases if c.aggregates.sequential]
    if stops:  # --eval-runs auto: what the rounds spent, and why the cases stopped
        whys = Counter(s.stopped or "not stopped" for s in stops)
        said = ", ".join(f"{why} {n}" for why, n in sorted(whys.items()))
        significance += (
            f" Sequential runs: {sum(s.rounds for s in stops)} of {sum(s.most for s in stops)}"
            f" runs per arm made; stopped: {said}."
        )
    return {"arrow": arrow, "up": up, "down": down, "flat": len(deltas) - up - down,
            "total": len(deltas), "note": note, "significance": significance.strip()}  # fmt: skip


#: At most this many earlier sessions are named for a case's reused runs.
REUSED_SOURCES = 3


def _sequential_rows(result: SessionResult) -> list[dict[str, Any]]:
    """Each case run in rounds (``--eval-runs auto``): the runs per arm it took of its budget,
    why it stopped, its verdict, and how many of its runs were reused (``--eval-reuse``)."""
    rows = []
    for c in result.cases:
        stop = c.aggregates.sequential
        if stop is None:
            continue
        reused = {
            arm: sum(1 for r in runs if r.result.reused_from)
            for arm, runs in (("with", c.with_runs), ("without", c.without_runs))
        }
        every = c.without_runs + c.with_runs
        sources = sorted({r.result.reused_from for r in every if r.result.reused_from})
        decision = c.aggregates.delta_decision
        rows.append(
            {
                "case": c.label,
                "rounds": stop.rounds,
                "most": stop.most,
                "stopped": stop.stopped or "not stopped",
                "reason": stop.reason or "still running when the session ended",
                "verdict": decision.verdict if decision is not None else "—",
                "reused": ", ".join(f"{arm} {n}" for arm, n in reused.items() if n),
                "sources": sources[:REUSED_SOURCES],
                "more_sources": max(0, len(sources) - REUSED_SOURCES),
            }
        )
    return rows


def _agents(result: SessionResult) -> list[dict[str, Any]]:
    """Each agent's row of a session of several agents (``--eval-agents``)."""
    return [
        {
            "label": a.label,
            "spec": a.spec,
            "cases": a.cases,
            "score": a.score,
            "score_without": a.score_without,
            "mean_delta": a.mean_delta,
            "interval": (
                f"{interval_pts(a.mean_delta_interval)} pts"
                if a.mean_delta_interval is not None
                else "—"
            ),
            "not_made": sum(a.errors.values()),
            "latency_p50": a.timing.latency_p50,
            "latency_p95": a.timing.latency_p95,
            "tokens": _tokens(a.timing.input_tokens, a.timing.output_tokens),
            "cost": _money(a.cost_usd) + ("+?" if a.cost_unknown else ""),
        }
        for a in result.agents
    ]


def render_html(result: SessionResult, document: Mapping[str, Any] | None = None) -> str:
    """The report page for a session's result. ``document`` is the result document it embeds
    (by default ``document_json(result)``); the comparison with an earlier session is read
    from its ``comparison``."""
    from markupsafe import Markup

    doc = document_json(result) if document is None else document
    template = _environment().get_template("report.html.j2")
    view = overview(result)
    return template.render(
        result=result,
        overview=view,
        diffs=diff_views([case.case for case in view.cases]),
        comparison=comparison_view(doc),
        aa=calibrate(result),
        triggers=trigger_json(trigger_results(result.cases)),
        plugins=_plugins(result),
        meta=_meta(result),
        banners=_banners(result),
        effect=_effect(result),
        baseline_label=_baseline_label(result),
        agents=_agents(result),
        sequential=_sequential_rows(result),
        suite_efficiency=suite_table(result.cases),
        agreement=agreement_view(judge_agreement(result)),
        answer_limit=ANSWER_LIMIT,
        files_listed=FILES_LISTED,
        css=Markup(_resource("report.css") + _resource("trace_diff.css")),
        js=Markup(_resource("report.js") + _resource("trace_diff.js")),
        data=Markup(embedded_json(doc)),
    )
