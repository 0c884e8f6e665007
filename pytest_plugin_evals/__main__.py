"""``python -m pytest_plugin_evals merge DIR... [--output-dir OUT] [--threshold X]``.

Merges the results folders of a suite's shards (``pytest --eval-shard K/N``) into one: the
document, the HTML report and the recorded runs, the terminal table, and the exit status of
the gate: 0 met, 1 not met (or a case file that did not load, or a run that could not be
made), 2 partial (a shard missing, a cost ceiling, an interruption), 4 bad arguments, or a
shard's folder that cannot be merged as written: shards that do not belong together, a
document that is not one, a link among the recorded runs (one line saying why).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

#: The exit status of bad arguments (as pytest's usage error): 2 means "partial" here.
USAGE_ERROR = 4

DEFAULT_OUTPUT = "merged-results"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1 (got {text!r})")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m pytest_plugin_evals",
        description="Tools for pytest-plugin-evals results.",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    merge = commands.add_parser(
        "merge",
        help="merge the results folders of a suite's shards (--eval-shard K/N) into one",
        description=(
            "Merge the results folders of a suite's shards (pytest --eval-shard K/N) into one "
            "results folder: aggregate-result.json, report.html and the recorded runs (replay "
            "them with --eval-agent replay:OUT). Exit status: 0 the threshold is met, 1 it is "
            "not, 2 the result is partial (a shard is missing), 4 bad arguments, or shards "
            "that cannot be merged as written (shards that do not belong together, a "
            "malformed document, a link among the recorded runs)."
        ),
    )
    merge.add_argument("folders", nargs="+", metavar="DIR", help="a shard's results folder")
    merge.add_argument(
        "--output-dir",
        default=DEFAULT_OUTPUT,
        metavar="OUT",
        help=f"where the merged results go (default: {DEFAULT_OUTPUT})",
    )
    merge.add_argument(
        "--threshold",
        type=_threshold,
        default=None,
        metavar="X",
        help="the minimum case score (0-1) to gate on (default: the shards' --eval-threshold)",
    )
    return parser


def _merge(folders: Sequence[str], output_dir: str, threshold: float | None) -> int:
    from pytest_plugin_evals.reporting.merge import (
        MergeError,
        check,
        exit_status,
        gate_lines,
        merge,
        read_shard,
        write,
    )
    from pytest_plugin_evals.reporting.terminal import plain, summary_lines

    out = Path(output_dir)
    try:
        shards = [read_shard(Path(folder)) for folder in folders]
        check(shards, threshold_given=threshold is not None)
        merged = merge(shards, threshold=threshold, runs_dir=out.resolve() / "runs")
        written = write(merged, shards, out)
    except MergeError as exc:
        print(f"merge: {plain(str(exc))}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as exc:
        print(f"merge: cannot write the merged results: {plain(str(exc))}", file=sys.stderr)
        return USAGE_ERROR
    for line in summary_lines(merged.result, report_paths=[str(p) for p in written.paths]):
        print(line)
    for note in written.notes:
        print(f"merge: {plain(note)}")
    for line in gate_lines(merged):
        print(plain(line))
    return exit_status(merged.result)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "merge":
        return _merge(args.folders, args.output_dir, args.threshold)
    return USAGE_ERROR  # pragma: no cover - argparse requires a known command


if __name__ == "__main__":
    sys.exit(main())
