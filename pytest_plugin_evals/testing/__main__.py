"""``python -m pytest_plugin_evals.testing serve --port N RULES``: the scripted model as a
server of its own, on 127.0.0.1 only, answering by the rules of a YAML or JSON file (see
:mod:`.rules_file`) until Ctrl-C or SIGTERM.

It prints its URL and the variables that point Claude Code at it, then one line per request
it answers (which rule matched). A rules file that holds no rules is one line naming the file
and the line, and exit status 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

USAGE_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_plugin_evals.testing",
        description="The scripted model: a fake model API on 127.0.0.1 that answers by rules.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve",
        help="serve a rules file (YAML or JSON) until Ctrl-C or SIGTERM",
        description="Serve the Messages, OpenAI and Gemini APIs on 127.0.0.1, answering by "
        "the rules of RULES (YAML, or JSON by its .json suffix).",
    )
    serve.add_argument("rules", metavar="RULES", help="the rules file (YAML or JSON)")
    serve.add_argument(
        "--port", type=int, default=0, help="the port on 127.0.0.1 (default 0: any free one)"
    )
    serve.add_argument(
        "--quiet", action="store_true", help="print the URL only, not a line per request"
    )
    return parser


def _says(entry: dict[str, object]) -> str:
    """``POST /v1/messages model claude-sonnet-5-5: rules[1]`` (of a logged request)."""
    rule = entry.get("rule")
    chosen = "no rule (the default text)" if rule is None else f"rules[{rule}]"
    prompt = str(entry.get("prompt") or "").replace("\n", " ")
    prompt = prompt if len(prompt) <= 60 else prompt[:59] + "…"
    said = f"{entry.get('method', 'POST')} {entry.get('path', '')}"
    if entry.get("model"):
        said += f" model {entry['model']}"
    return f"{said}: {chosen}" + (f" (prompt {prompt!r})" if prompt else "")


def serve(rules_path: str, port: int, quiet: bool) -> int:
    from .rules_file import RulesFileError, read_rules
    from .server import ScriptedModel

    try:
        loaded = read_rules(Path(rules_path))
    except RulesFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    if not 0 <= port <= 65535:
        print(f"error: --port must be from 0 to 65535 (got {port})", file=sys.stderr)
        return USAGE_ERROR
    model = ScriptedModel(loaded.rules, default_text=loaded.default_text, usage=loaded.usage)
    try:
        model.start(port)
    except OSError as exc:
        print(f"error: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}", file=sys.stderr)
        return USAGE_ERROR
    stop = threading.Event()

    def stopping(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, stopping)
    signal.signal(signal.SIGTERM, stopping)
    count = len(loaded.rules)
    print(f"scripted model on {model.base_url} ({count} rule{'s' if count != 1 else ''} from "
          f"{rules_path}); Ctrl-C stops it")  # fmt: skip
    print(f"  ANTHROPIC_BASE_URL={model.base_url} ANTHROPIC_API_KEY=sk-test")
    print(f"  OPENAI_BASE_URL={model.openai_base_url} GOOGLE_GEMINI_BASE_URL={model.base_url}")
    sys.stdout.flush()
    shown = 0
    try:
        while not stop.wait(0.1):
            if quiet:
                continue
            for entry in model.requests[shown:]:
                if entry.get("status") is None:
                    break  # still being answered: said once it is
                print(_says(entry), flush=True)
                shown += 1
    finally:
        model.stop()
    print(f"stopped after {len(model.requests)} request(s)", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return serve(args.rules, args.port, args.quiet)


if __name__ == "__main__":
    sys.exit(main())
