"""The self-contained HTML report: one file, nothing from the network, readable without JS.

Rendered on the server side from the result document (every value through ``html.escape``);
the document itself is embedded as ``<script type="application/json" id="eval-document">`` so
tools can read it back with the standard library.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from html import escape
from importlib import resources
from string import Template
from typing import Any

from ..model import ANSWER_LIMIT
from .terminal import is_two_arm

_PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>$title</title>
<style>
$css</style>
</head>
<body>
<main>
<header>
<div class="kicker">Plugin eval report</div>
<h1>$plugins</h1>
<div class="meta">$meta</div>
</header>
$headline
$banners
$load_errors
<div id="toolbar"></div>
$overview
$cases
</main>
<script type="application/json" id="eval-document">$data</script>
<script>
$js</script>
</body>
</html>
""")


@cache
def _resource(name: str) -> str:
    return (resources.files(__package__) / "resources" / name).read_text(encoding="utf-8")


def _e(value: Any) -> str:
    return escape("" if value is None else str(value))


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.0f}%"


def _pts(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:+.1f} pts"


def _money(x: float | None) -> str:
    return f"${(x or 0.0):.2f}"


def _secs(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}s"


def _bar(score: float | None, threshold: float | None = None) -> str:
    width = 0.0 if score is None else max(0.0, min(1.0, score)) * 100
    tick = "" if threshold is None else f'<i style="left:{threshold * 100:.1f}%"></i>'
    return f'<span class="bar"><span style="width:{width:.1f}%"></span>{tick}</span>'


def _card(label: str, value: str, note: str = "") -> str:
    extra = f'<div class="muted">{_e(note)}</div>' if note else ""
    return (
        f'<div class="card"><div class="label">{_e(label)}</div>'
        f'<div class="value">{_e(value)}</div>{extra}</div>'
    )


def _headline(doc: Mapping[str, Any]) -> str:
    agg = doc.get("aggregates") or {}
    cases = doc.get("cases") or []
    threshold = float((doc.get("suite") or {}).get("threshold") or 0.0)
    passing = f"{agg.get('casesPassed', 0)} of {agg.get('casesTotal', len(cases))}"
    at = f"≥ {_pct(threshold)} threshold"
    if not is_two_arm(doc):
        cards = [_card("Suite score", _pct(agg.get("overallScore"))), _card("Cases", passing, at)]
        return f'<div class="cards">{"".join(cards)}</div>'
    cards = [
        _card("Suite score · with plugin", _pct(agg.get("overallScore"))),
        _card("Plugin effect Δ", _pts(agg.get("meanDelta"))),
        _card("Baseline score", _pct(agg.get("overallScoreWithout"))),
        _card("Cases", passing, at),
    ]
    deltas = [c["aggregates"]["delta"] for c in cases if c["aggregates"].get("delta") is not None]
    effect = ""
    if deltas:
        up = sum(1 for d in deltas if d > 1e-9)
        down = sum(1 for d in deltas if d < -1e-9)
        mean_delta = agg.get("meanDelta") or 0.0
        arrow = "↑" if mean_delta > 1e-9 else "↓" if mean_delta < -1e-9 else "→"
        effect = (
            f'<p class="effect">Plugin effect: {arrow} {_e(_pts(agg.get("meanDelta")))} vs baseline'
            f" — improved {up} · flat {len(deltas) - up - down} · regressed {down}"
            f" of {len(deltas)} cases.</p>"
        )
    return f'{effect}<div class="cards">{"".join(cards)}</div>'


def _meta(doc: Mapping[str, Any]) -> str:
    suite = doc.get("suite") or {}
    runs = (doc.get("aggregates") or {}).get("runsTotal", 0)
    parts = [
        f"started {doc.get('startedAt')}",
        _secs(doc.get("durationSeconds")),
        _money(doc.get("costUsd")),
        f"{runs} run(s)",
        f"agent {suite.get('agent')}",
        f"ablation {suite.get('ablation')}",
        f"threshold {_pct(suite.get('threshold'))}",
    ]
    if suite.get("caseFilter"):
        parts.append(f"filtered: {suite['caseFilter']}")
    if suite.get("tagFilters"):
        parts.append("tags: " + ", ".join(suite["tagFilters"]))
    return " · ".join(_e(p) for p in parts)


def _banners(doc: Mapping[str, Any]) -> str:
    agg = doc.get("aggregates") or {}
    out = []
    if doc.get("partial"):
        errors = doc.get("errors") or {}
        kinds = ", ".join(f"{k} {n}" for k, n in errors.items())
        text = f"⚠ Partial results ({doc.get('partialReason')})."
        if errors:
            text += (
                f" {sum(errors.values())} run(s) could not be made ({kinds})"
                " and are kept out of the scores."
            )
        if agg.get("runsSkipped"):
            text += f" {agg['runsSkipped']} run(s) were not started."
        out.append(text)
    if agg.get("runsErrored"):
        out.append(
            f"⚠ {agg['runsErrored']} run(s) ended with an error and were graded on what they"
            " produced: the averages include them."
        )
    return "".join(f'<div class="banner">{_e(t)}</div>' for t in out)


def _load_errors(doc: Mapping[str, Any]) -> str:
    errors = doc.get("loadErrors") or []
    if not errors:
        return ""
    items = "".join(
        f"<li>{_e(e.get('path'))}{':' + _e(e['line']) if e.get('line') else ''}: "
        f"{_e(e.get('message'))}</li>"
        for e in errors
    )
    return f'<h3>{len(errors)} case file(s) could not be loaded</h3><ul class="errors">{items}</ul>'


def _overview(cases: Sequence[Mapping[str, Any]], two_arm: bool) -> str:
    if not cases:
        return '<p class="muted">No eval case ran.</p>'
    head = ["Case", "With", "W/out", "Δ"] if two_arm else ["Case", "Score", "Pass rate"]
    rows = []
    for i, case in enumerate(cases):
        agg = case["aggregates"]
        mark = '<span class="ok">✓</span>' if agg.get("passed") else '<span class="bad">✗</span>'
        cells = [f'{mark} <a href="#case-{i}">{_e(case["name"])}</a>', _pct(agg.get("score"))]
        if two_arm:
            cells += [_pct(agg.get("scoreWithout")), _pts(agg.get("delta"))]
        else:
            cells += [_pct(agg.get("passRate"))]
        cells.append(_e(case.get("notes") or ""))
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    th = "".join(f"<th>{_e(h)}</th>" for h in [*head, "Notes"])
    return f'<table class="overview"><tr>{th}</tr>{"".join(rows)}</table>'


def _verdict(v: Mapping[str, Any]) -> str:
    if "skipped" in v:
        mark, cls = "–", "skip"
    elif v.get("passed"):
        mark, cls = "✓", "ok"
    else:
        mark, cls = "✗", "bad"
    badges = []
    if "skipped" in v:
        badges.append(f'<span class="badge skip">skipped: {_e(v["skipped"])}</span>')
    if float(v.get("weight", 1)) != 1:
        badges.append(f'<span class="badge">×{float(v["weight"]):g}</span>')
    if v.get("withOnly"):
        badges.append('<span class="badge">plugin-fired indicator · not scored</span>')
    elif not v.get("scored", True):
        badges.append('<span class="badge">not scored</span>')
    votes = v.get("judgeVotes") or []
    if votes:
        marks = " ".join("✓" if _vote(x) == "PASS" else "✗" for x in votes)
        badges.append(f'<span class="badge">judge votes {_e(marks)}</span>')
    evidence = ""
    if votes:
        reasons = "".join(
            f"<li>{_e(_vote(x))}: {_e(x.get('reason', '') if isinstance(x, Mapping) else '')}</li>"
            for x in votes
        )
        evidence += f"<details><summary>Judge votes</summary><ol>{reasons}</ol></details>"
    if v.get("evidence"):
        evidence += (
            "<details><summary>Evidence (what the judge was shown)</summary>"
            f"<pre>{_e(v['evidence'])}</pre></details>"
        )
    return (
        f'<li><span class="mark {cls}">{mark}</span><b>{_e(v.get("name"))}</b> '
        + "".join(f"{b} " for b in badges)
        + f'<span class="muted">{_e(v.get("explanation"))}</span>{evidence}</li>'
    )


def _vote(vote: Any) -> str:
    return str(vote.get("vote", "")) if isinstance(vote, Mapping) else str(vote)


def _answer(run: Mapping[str, Any]) -> str:
    answer = str(run.get("answer") or "")
    if not answer:
        return ""
    cut = run.get("answerTruncated") or len(answer) > ANSWER_LIMIT
    note = f" (cut at {ANSWER_LIMIT:,} characters)" if cut else ""
    return (
        f"<details><summary>Answer{note}</summary>"
        f"<pre>{_e(answer[:ANSWER_LIMIT])}{'…' if cut else ''}</pre></details>"
    )


def _run(run: Mapping[str, Any]) -> str:
    graded = not run.get("infraError") and not run.get("skipped")
    head = [f"<b>Run {_e(run.get('run'))}</b>"]
    if graded:
        head += [_bar(run.get("score")), f"score {float(run.get('score') or 0):.2f}"]
    else:
        head.append("not graded")
    head += [
        f"{_e(run.get('turns'))} turn{'' if run.get('turns') == 1 else 's'}",
        _money(run.get("costUsd")),
        _secs(run.get("durationSeconds")),
    ]
    body = []
    if run.get("infraError"):
        body.append(
            f'<div class="skip">⚠ could not be made ({_e(run["infraError"])}): '
            f"{_e(run.get('error'))} — kept out of the scores</div>"
        )
    elif run.get("error"):
        body.append(f'<div class="bad">✗ run error: {_e(run["error"])}</div>')
    if run.get("aborted"):
        aborted = run["aborted"]
        body.append(
            f'<div class="bad">✗ aborted by mock {_e(aborted.get("server"))}/'
            f"{_e(aborted.get('tool'))}: {_e(aborted.get('reason'))}</div>"
        )
    if run.get("skippedPaidGraders"):
        reasons = sorted(
            {str(v.get("skipped")) for v in run.get("graders") or [] if v.get("skipped")}
        )
        body.append(f'<div class="skip">paid graders were skipped ({_e(", ".join(reasons))})</div>')
    mocks = run.get("mocks") or {}
    if mocks:
        calls = mocks.get("calls") or {}
        served = ", ".join(str(s.get("server")) for s in mocks.get("servers") or [])
        body.append(
            f'<div class="muted">Mocked: {_e(served)} · {_e(calls.get("total", 0))} call(s), '
            f"{_e(calls.get('errors', 0))} error(s)</div>"
        )
    mock_calls = run.get("mockCalls") or []
    if mock_calls:
        items = "".join(
            f"<li>{'✗ ' if c.get('isError') else ''}<code>{_e(c.get('tool'))}</code> "
            f"{_e(json.dumps(c.get('input'), ensure_ascii=False))} → {_e(c.get('output'))}</li>"
            for c in mock_calls
        )
        body.append(
            f"<details><summary>Mocked calls ({len(mock_calls)})</summary>"
            f"<ol>{items}</ol></details>"
        )
    for note in run.get("notes") or []:
        body.append(f'<div class="muted">note: {_e(note)}</div>')
    verdicts = run.get("graders") or []
    if verdicts:
        body.append(f'<ul class="verdicts">{"".join(_verdict(v) for v in verdicts)}</ul>')
    body.append(_answer(run))
    spans = "".join(f"<span>{h}</span>" for h in head)
    return f'<div class="run"><div class="run-head">{spans}</div>{"".join(body)}</div>'


def _arm(title: str, runs: Iterable[Mapping[str, Any]]) -> str:
    inner = "".join(_run(r) for r in runs) or '<p class="muted">No run.</p>'
    return f"<div><h4>{_e(title)}</h4>{inner}</div>"


def _grader_spec(g: Mapping[str, Any]) -> str:
    extra = [f'<span class="badge">{_e(g.get("type"))}</span>']
    if float(g.get("weight", 1)) != 1:
        extra.append(f'<span class="badge">×{float(g["weight"]):g}</span>')
    if g.get("arm"):
        extra.append(f'<span class="badge">arm: {_e(g["arm"])}</span>')
    criteria = f"<pre>{_e(g['graderMarkdown'])}</pre>" if g.get("graderMarkdown") else ""
    config = json.dumps(g.get("config") or {}, indent=2, ensure_ascii=False, sort_keys=True)
    return f"<li><b>{_e(g.get('name'))}</b> {' '.join(extra)}{criteria}<pre>{_e(config)}</pre></li>"


def _case(i: int, case: Mapping[str, Any], threshold: float) -> str:
    agg = case.get("aggregates") or {}
    arms = case.get("arms") or {}
    badges = [
        '<span class="badge pass">pass</span>'
        if agg.get("passed")
        else '<span class="badge fail">below threshold</span>'
    ]
    if "delta" in agg:
        badges.append(f'<span class="badge">Δ {_e(_pts(agg["delta"]))}</span>')
    elif agg.get("deltaNote"):
        badges.append(f'<span class="badge">Δ — ({_e(agg["deltaNote"])})</span>')
    if "without" in arms:
        results = _arm("With plugin", arms.get("with") or []) + _arm(
            "Baseline (no plugin)", arms["without"]
        )
    else:
        results = _arm("Runs", arms.get("with") or [])
    notes = f'<p class="muted">{_e(case["notes"])}</p>' if case.get("notes") else ""
    graders = "".join(_grader_spec(g) for g in case.get("graders") or [])
    return (
        f'<section class="case" id="case-{i}">'
        f'<div class="case-head"><h2>{_e(case.get("name"))}</h2>'
        f'<span class="dir">{_e(case.get("dir"))}</span>{_bar(agg.get("score"), threshold)}'
        f"<b>{_pct(agg.get('score'))}</b> {' '.join(badges)}</div>{notes}"
        f'<h3>Results</h3><div class="arms">{results}</div>'
        f"<h3>Prompt</h3><pre>{_e(case.get('promptMarkdown'))}</pre>"
        f'<h3>Graders — what "good" means for this case</h3><ul>{graders}</ul></section>'
    )


def _embedded(doc: Mapping[str, Any]) -> str:
    """The document as JSON that cannot end the script element early."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _plugins(doc: Mapping[str, Any]) -> str:
    plugins = (doc.get("suite") or {}).get("plugins") or []
    names = [
        str(p.get("name")) + (f" v{p['version']}" if p.get("version") else "") for p in plugins
    ]
    return ", ".join(names) or "(no plugin)"


def render_html(document: Mapping[str, Any]) -> str:
    """The report page for a result document."""
    cases = document.get("cases") or []
    threshold = float((document.get("suite") or {}).get("threshold") or 0.0)
    return _PAGE.substitute(
        title=_e(f"Plugin eval report — {_plugins(document)}"),
        css=_resource("report.css"),
        js=_resource("report.js"),
        plugins=_e(_plugins(document)),
        meta=_meta(document),
        headline=_headline(document),
        banners=_banners(document),
        load_errors=_load_errors(document),
        overview=_overview(cases, is_two_arm(document)),
        cases="\n".join(_case(i, c, threshold) for i, c in enumerate(cases)),
        data=_embedded(document),
    )
