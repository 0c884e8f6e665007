"""How well the verdicts decide, and at what cost: fixed 3 runs, fixed 10, ``--eval-runs auto:20``.

A simulated suite of 30 cases with known per-arm pass probabilities: 10 with no effect, 20
with a true Δ from −0.3 to +0.5. Each design's verdicts (after the session's false discovery
rate control) are compared with the truth: *correct* is ``better`` for Δ > 0, ``worse`` for
Δ < 0 and ``equivalent`` for Δ = 0; a *false decision* is ``better`` or ``worse`` where Δ = 0.
That share is the benchmark's measure, with its standard error. Because ``equivalent``
within ±0.1 needs hundreds of runs per arm, no design here reaches it, so the share mixes a
third of cases that can never count with the ones that can; two more columns say the same
apart: the *power* (the right direction among the cases with an effect) and the false calls
at Δ = 0. The runs each design spends per case are shown by true Δ.

The many repetitions call the decision code directly (``decisions``, ``rounds``: the code the
session runs), in the order the session's rounds run at ``-n 0``; ``--pytest N`` also runs N
repetitions of each design through pytest with a ``py:`` agent drawing from the same
probabilities, to show the two agree.

    python bench/bench_decisions.py [--reps 200] [--pytest 2]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_plugin_evals.engine.rounds import Rounds
from pytest_plugin_evals.stats import decisions, sequential


def suite(seed: int = 7) -> list[tuple[str, float, float, float]]:
    """``(name, p with, p without, true Δ)`` for the 30 cases."""
    effects = [0.0] * 10 + [-0.3, -0.25, -0.2, -0.15, -0.1]
    effects += [round(0.1 + i * 0.4 / 14, 3) for i in range(15)]
    rng = random.Random(seed)
    cases = []
    for i, d in enumerate(effects):
        base = round(rng.uniform(max(0.05, 0.05 - d), min(0.95, 0.95 - d)), 2)
        cases.append((f"c{i:02d}", round(base + d, 3), base, d))
    return cases


def fixed(cases: list, n: int, rng: random.Random) -> tuple[list, int]:
    found = []
    for _, pw, pb, _ in cases:
        a = [float(rng.random() < pw) for _ in range(n)]
        b = [float(rng.random() < pb) for _ in range(n)]
        found.append(decisions.decide_difference(a, b, decisions.DEFAULT_MARGIN))
    return decisions.control_fdr(found), [2 * n] * len(cases)


def auto(cases: list, most: int, rng: random.Random) -> tuple[list, int]:
    rounds = Rounds([(c[0], most) for c in cases], decisions.DEFAULT_MARGIN)
    runs = dict.fromkeys((c[0] for c in cases), 0)
    for r in range(1, most + 1):
        for name, pw, pb, _ in cases:
            if rounds.ask(name, r) is None:
                runs[name] += 2
                rounds.report(name, True, r, float(rng.random() < pw))
                rounds.report(name, False, r, float(rng.random() < pb))
    found = []
    for name, *_ in cases:
        pairs = list(zip(*_arms(rounds, name), strict=True))
        found.append(sequential.case_verdict(pairs, decisions.DEFAULT_MARGIN, most)[1])
    return decisions.control_fdr(found), [runs[c[0]] for c in cases]


def _arms(rounds: Rounds, name: str) -> tuple[list[float], list[float]]:
    scores = rounds.cases[name].scores
    done = [r for r in sorted(scores) if len(scores[r]) == 2]
    return [scores[r][True] or 0.0 for r in done], [scores[r][False] or 0.0 for r in done]


def grade(cases: list, found: list) -> tuple[int, int, int]:
    """Correct verdicts, false ones at Δ = 0, and false ones at Δ = 0 before the false
    discovery rate control (each case's own 95% error rate)."""
    correct = false = alone = 0
    for (_, _, _, d), decision in zip(cases, found, strict=True):
        verdict = decision.verdict if decision is not None else "inconclusive"
        before = (decision.unadjusted if decision is not None else None) or verdict
        truth = "equivalent" if d == 0 else ("better" if d > 0 else "worse")
        correct += verdict == truth
        false += d == 0 and verdict in ("better", "worse")
        alone += d == 0 and before in ("better", "worse")
    return correct, false, alone


AGENT = """\
import json, random
TABLE = json.load(open(__file__.replace('.py', '.json')))
def answer(request):
    p = TABLE['cases'][request.case.name][0 if request.arm == 'with' else 1]
    rng = random.Random(f"{TABLE['seed']}-{request.case.name}-{request.arm}-{request.run}")
    return 'PASS' if rng.random() < p else 'no'
"""


def through_pytest(cases: list, runs: str, seed: int) -> tuple[list[str], int, float]:
    """One session of the suite through pytest: the verdicts, the runs made, the wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".claude-plugin").mkdir()
        (root / ".claude-plugin" / "plugin.json").write_text('{"name": "sim"}')
        for name, *_ in cases:
            folder = root / "evals" / name
            (folder / "graders").mkdir(parents=True)
            (folder / "prompt.md").write_text(f"Do {name}")
            (folder / "graders" / "pass.md").write_text("---\ntype: regex\npattern: PASS\n---\n")
        table = {"seed": seed, "cases": {c[0]: [c[1], c[2]] for c in cases}}
        (root / "sim_agent.json").write_text(json.dumps(table))
        (root / "sim_agent.py").write_text(AGENT)
        (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pytest", "evals", "-q", "-p", "no:cacheprovider",
             "--eval-agent", "py:sim_agent:answer", "--eval-runs", runs,
             "--eval-threshold", "0", "--eval-json", "out.json"],
            cwd=root, capture_output=True, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - start
        doc = json.loads((root / "out.json").read_text())
        by = {c["name"]: c["aggregates"] for c in doc["cases"]}
        verdicts = [by[c[0]]["deltaDecision"]["verdict"] for c in cases]
        made = doc["aggregates"]["runsGraded"]
        return verdicts, made, wall


def _draw(seed: int, name: str, arm: str, run: int, p: float) -> float:
    """The draw the pytest agent makes (``AGENT``), made here the same way."""
    return float(random.Random(f"{seed}-{name}-{arm}-{run}").random() < p)


def replay(cases: list, runs: str, seed: int) -> tuple[list, int]:
    """The verdicts the decision code gives for the draws a pytest session made (the same
    order of rounds as at ``-n 0``)."""
    if not runs.startswith("auto"):
        n = int(runs)
        found = []
        for name, pw, pb, _ in cases:
            a = [_draw(seed, name, "with", r, pw) for r in range(1, n + 1)]
            b = [_draw(seed, name, "without", r, pb) for r in range(1, n + 1)]
            found.append(decisions.decide_difference(a, b, decisions.DEFAULT_MARGIN))
        return decisions.control_fdr(found), 2 * n * len(cases)
    most = int(runs.partition(":")[2] or sequential.DEFAULT_MAX_RUNS)
    rounds = Rounds([(c[0], most) for c in cases], decisions.DEFAULT_MARGIN)
    made = 0
    for r in range(1, most + 1):
        for name, pw, pb, _ in cases:
            if rounds.ask(name, r) is None:
                made += 2
                rounds.report(name, True, r, _draw(seed, name, "with", r, pw))
                rounds.report(name, False, r, _draw(seed, name, "without", r, pb))
    found = []
    for name, *_ in cases:
        pairs = list(zip(*_arms(rounds, name), strict=True))
        found.append(sequential.case_verdict(pairs, decisions.DEFAULT_MARGIN, most)[1])
    return decisions.control_fdr(found), made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--pytest", type=int, default=0)
    args = parser.parse_args()
    cases = suite()
    designs = {
        "fixed 3": lambda rng: fixed(cases, 3, rng),
        "fixed 10": lambda rng: fixed(cases, 10, rng),
        "auto:20": lambda rng: auto(cases, 20, rng),
    }
    print(
        f"{'design':10} {'runs':>5} {'correct':>14} {'power Δ≠0':>10} {'false at Δ=0':>13}"
        f" {'before FDR':>11}  runs per case: Δ=0 / |Δ|≤0.2 / |Δ|>0.2  ({args.reps} reps)"
    )
    groups = [
        [i for i, c in enumerate(cases) if c[3] == 0],
        [i for i, c in enumerate(cases) if 0 < abs(c[3]) <= 0.2],
        [i for i, c in enumerate(cases) if abs(c[3]) > 0.2],
    ]
    nulls, effects = len(groups[0]), len(cases) - len(groups[0])
    for label, design in designs.items():
        rng = random.Random(1)
        correct = false = alone = power = 0
        per_rep: list[int] = []
        spent = [0.0, 0.0, 0.0]
        start = time.perf_counter()
        for _ in range(args.reps):
            found, made = design(rng)
            c, f, a = grade(cases, found)
            correct, false, alone = correct + c, false + f, alone + a
            power += sum(
                d is not None and d.verdict == ("better" if case[3] > 0 else "worse")
                for case, d in zip(cases, found, strict=True)
                if case[3] != 0
            )
            per_rep.append(sum(made))
            for g, members in enumerate(groups):
                spent[g] += sum(made[i] for i in members) / len(members)
        total = args.reps * len(cases)
        share = correct / total
        se = (share * (1 - share) / total) ** 0.5
        runs = sum(per_rep) / args.reps
        print(
            f"{label:10} {runs:5.0f} {share:8.1%} ±{se:4.1%} {power / (args.reps * effects):10.1%}"
            f" {false / (args.reps * nulls):13.2%} {alone / (args.reps * nulls):11.2%}  "
            + " / ".join(f"{x / args.reps:.1f}" for x in spent)
            + f"  {(time.perf_counter() - start) / args.reps * 1000:.0f} ms/rep"
        )
    for label, runs_option in (("fixed 3", "3"), ("fixed 10", "10"), ("auto:20", "auto:20")):
        for seed in range(args.pytest):
            verdicts, made, wall = through_pytest(cases, runs_option, seed)
            found = [decisions.Decision(v, v, 0.0) for v in verdicts]
            c, f, _ = grade(cases, found)
            same, direct_runs = replay(cases, runs_option, seed)
            agree = sum(
                d is not None and d.verdict == v for d, v in zip(same, verdicts, strict=True)
            )
            print(
                f"pytest {label:9} seed {seed}: {made} runs, {wall:.1f}s, "
                f"{c / len(cases):.1%} correct, {f} false at Δ=0; the direct simulation of "
                f"the same draws: {direct_runs} runs, {agree} of {len(cases)} verdicts the same"
            )


if __name__ == "__main__":
    main()
