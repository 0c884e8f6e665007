"""``python -m pytest_plugin_evals merge DIR... [--output-dir OUT] [--threshold X]`` and
``python -m pytest_plugin_evals init [--bare NAME]`` (``scaffold.command``: a plugin's first
cases, drafted by the judge model, or the reference's blank case).

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
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from pytest_plugin_evals.reporting.result import SessionResult

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
    merge.add_argument(
        "--markdown",
        metavar="PATH",
        help="also write the merged verdict as Markdown here, for a pull request (as "
        "--eval-markdown writes a session's)",
    )
    merge.add_argument(
        "--report-url",
        type=_url,
        metavar="URL",
        help="the address the Markdown links the HTML report at (default: a path relative to "
        "the Markdown file)",
    )
    _add_init(commands)
    return parser


def _url(text: str) -> str:
    if not text.startswith(("http://", "https://")) or any(c.isspace() or c in "<>" for c in text):
        raise argparse.ArgumentTypeError(f"must be an http:// or https:// address (got {text!r})")
    return text


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 10:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 10 (got {text!r})")
    return value


def _add_init(commands: argparse._SubParsersAction[_Parser]) -> None:
    init = commands.add_parser(
        "init",
        help="write a plugin's first eval cases (drafted by the judge model, or --bare NAME)",
        description=(
            "Write eval cases for the plugin in the current folder. With --bare NAME: the "
            "blank case template of `claude plugin eval init --bare` (prompt.md and "
            "graders/criteria.md). Alone: read the plugin's skills, commands, agents and MCP "
            "servers, ask the judge model (--eval-judge, else the eval_judge of the plugin's "
            "pytest configuration) for prompts that should fire each skill and near misses "
            "that should not, write them "
            "as case folders and a trigger_eval.json per skill, and run each case once. An "
            "existing case or trigger file is never replaced. Exit status: 0 done, 1 something "
            "could not be done (said in one line), 4 bad arguments."
        ),
    )
    init.add_argument("name", nargs="?", help="the case's name (with --bare)")
    init.add_argument(
        "--bare", action="store_true", help="write the blank case template NAME, nothing else"
    )
    init.add_argument(
        "--eval-dir",
        metavar="DIR",
        help="the folder (below the current one) to write cases into (default: evals/)",
    )
    init.add_argument(
        "--eval-judge",
        metavar="KIND",
        help="claude, anthropic or openai (default: ini eval_judge, else claude)",
    )
    init.add_argument(
        "--eval-judge-model",
        metavar="MODEL",
        help="the judge's model (default: ini eval_judge_model)",
    )
    init.add_argument(
        "--eval-claude-bin",
        metavar="PATH",
        help="the claude binary (default: ini eval_claude_bin, else claude on PATH)",
    )
    init.add_argument(
        "--per-skill",
        type=_positive,
        default=3,
        metavar="N",
        help="prompts that should fire each skill, and as many near misses (default: 3)",
    )
    init.add_argument("--no-pilot", action="store_true", help="do not run the written cases once")


def _init(args: argparse.Namespace) -> int:
    from pytest_plugin_evals.scaffold.command import InitOptions, run_init

    options = InitOptions(
        root=Path.cwd(),
        bare=args.bare,
        name=args.name,
        eval_dir=args.eval_dir,
        judge=args.eval_judge,
        judge_model=args.eval_judge_model,
        claude_bin=args.eval_claude_bin,
        per_skill=args.per_skill,
        pilot=not args.no_pilot,
    )

    def say(line: str) -> None:
        print(line, flush=True)

    def warn(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        return run_init(options, say, warn)
    except KeyboardInterrupt:
        warn("init: interrupted: the cases written so far are whole; the others were not written")
        return 130


def _merge(args: argparse.Namespace) -> int:
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

    out = Path(args.output_dir)
    try:
        shards = [read_shard(Path(folder)) for folder in args.folders]
        check(shards, threshold_given=args.threshold is not None)
        merged = merge(shards, threshold=args.threshold, runs_dir=out.resolve() / "runs")
        written = write(merged, shards, out)
        if args.markdown is not None:
            summary = _markdown(
                merged.result, Path(args.markdown), written.paths[1], args.report_url
            )
            written.paths.append(summary)
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


def _markdown(result: SessionResult, target: Path, report: Path, url: str | None) -> Path:
    """The merged result's Markdown summary, written to ``target``: it links the merged HTML
    report at ``url``, else by its path from ``target``'s folder."""
    import os

    from pytest_plugin_evals.reporting.markdown import ReportLink, render_markdown
    from pytest_plugin_evals.reporting.merge import exit_status

    href = url or Path(os.path.relpath(report.resolve(), target.resolve().parent)).as_posix()
    text = render_markdown(result, exit_status=exit_status(result), report=ReportLink(href=href))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "merge":
        return _merge(args)
    if args.command == "init":
        return _init(args)
    return USAGE_ERROR  # pragma: no cover - argparse requires a known command


if __name__ == "__main__":
    sys.exit(main())
