"""What an A/A session (``--eval-aa``) should measure: the false-call rate of fixed designs.

For pass/fail runs where both arms pass with the same chance ``p`` (no case has an effect):

* one case alone: the exact chance its verdict calls it better or worse
  (:func:`pytest_plugin_evals.stats.operating.fixed`, enumerated over the arms' pass counts);
* a session of 10 and of 20 such cases, its verdicts held together by the false discovery
  rate control as a session holds them: the share of cases called, and the chance that any
  case is called, simulated (each case's verdict is the session's own, taken from a table of
  every pass-count pair; a fixed seed, so the figures repeat).

    python bench/bench_aa_false_calls.py [--sessions N]
"""

from __future__ import annotations

import argparse
import random

from pytest_plugin_evals.stats.decisions import DEFAULT_MARGIN, control_fdr, decide_difference
from pytest_plugin_evals.stats.operating import fixed

RUNS = (3, 5, 10)
RATES = (0.2, 0.5, 0.8)
SUITES = (10, 20)
CALLS = ("better", "worse")


def session_rates(n: int, p: float, cases: int, sessions: int, rng: random.Random) -> str:
    """The share of cases called and the chance of any call, over ``sessions`` sessions."""
    table = {
        (a, b): decide_difference([1.0] * a + [0.0] * (n - a), [1.0] * b + [0.0] * (n - b),
                                  DEFAULT_MARGIN)
        for a in range(n + 1)
        for b in range(n + 1)
    }  # fmt: skip
    called = anyone = 0
    for _ in range(sessions):
        verdicts = [
            table[
                (sum(rng.random() < p for _ in range(n)), sum(rng.random() < p for _ in range(n)))
            ]
            for _ in range(cases)
        ]
        found = sum(1 for d in control_fdr(verdicts) if d is not None and d.verdict in CALLS)
        called += found
        anyone += found > 0
    return f"{cases} cases: {called / (sessions * cases):.2%} of cases, any {anyone / sessions:.2%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20_000)
    args = parser.parse_args()
    rng = random.Random(40)
    for n in RUNS:
        for p in RATES:
            one = fixed(n, p, p).false_call
            many = " | ".join(session_rates(n, p, c, args.sessions, rng) for c in SUITES)
            print(f"fixed {n:>2} runs, p {p}: one case {one:.2%} | {many}", flush=True)


if __name__ == "__main__":
    main()
