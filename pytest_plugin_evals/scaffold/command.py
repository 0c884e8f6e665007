"""``init``'s steps in order, and every line it prints.

``init --bare NAME`` writes the reference's blank case. ``init`` reads the plugin, asks the
judge for each skill's drafts, writes what it may (never over a case or a trigger file that is
there), pilots the cases it wrote once, and prints the next command. It never asks a question,
so it runs the same without a terminal. Exit status: 0 done, 1 something could not be done (a
draft the judge got wrong, a judge that failed, no skill to draft for, a case already there
for ``--bare``, a pilot that could not run), 4 bad arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytest_plugin_evals.model import LoadError
from pytest_plugin_evals.scaffold import files
from pytest_plugin_evals.scaffold.cases import Written, write_skill
from pytest_plugin_evals.scaffold.draft import SYSTEM_PROMPT, DraftError, parse, request
from pytest_plugin_evals.scaffold.inventory import read_inventory
from pytest_plugin_evals.scaffold.pilot import pilot
from pytest_plugin_evals.scaffold.settings import JudgeChoice, choose

USAGE_ERROR = 4
PER_SKILL = 3

Say = Callable[[str], None]


@dataclass(frozen=True)
class InitOptions:
    """What ``init`` was asked."""

    root: Path
    bare: bool = False
    name: str | None = None
    eval_dir: str | None = None
    judge: str | None = None
    judge_model: str | None = None
    claude_bin: str | None = None
    per_skill: int = PER_SKILL
    pilot: bool = True


def run_init(options: InitOptions, say: Say, warn: Say) -> int:
    """Do what ``options`` asks; ``say`` what was done, ``warn`` what went wrong (one line
    each); the exit status."""
    root = options.root
    try:
        if options.eval_dir is None:
            files.plugin_root(root)
        evals = files.eval_dir(root, options.eval_dir)
        if options.bare:
            if not options.name:
                warn("init: a case name is required for --bare (init --bare NAME)")
                return USAGE_ERROR
            problem = files.name_problem(options.name)
            if problem is not None:
                warn(f"init: {problem}")
                return USAGE_ERROR
            say(files.write_bare(root, evals, options.name))
            say(
                "Next: write the prompt in prompt.md and what a good answer does in "
                "graders/criteria.md, then run: " + files.next_command(evals, root)
            )
            return 0
        if options.name:
            warn("init: a case name goes with --bare (init --bare NAME); init alone drafts cases")
            return USAGE_ERROR
        judge_choice = choose(root, options.judge, options.judge_model, options.claude_bin)
    except (files.AlreadyThere, files.NotAPlugin) as exc:
        warn(f"init: {exc}")
        return 1
    except files.InitError as exc:
        warn(f"init: {exc}")
        return USAGE_ERROR
    except OSError as exc:
        warn(f"init: cannot write the case: {_os_error(exc)}")
        return 1
    except ValueError as exc:
        warn(f"init: {exc}")
        return USAGE_ERROR
    return _draft_all(options, evals, judge_choice, say, warn)


def _draft_all(options: InitOptions, evals: Path, choice: JudgeChoice, say: Say, warn: Say) -> int:
    from pytest_plugin_evals.judges import JudgeProblem, make_judge

    root = options.root
    try:
        inventory = read_inventory(root)
    except LoadError as exc:
        warn(f"init: {exc.render(root)}")
        return 1
    say(f"init: read {inventory.summary()}")
    if not inventory.skills:
        warn(
            "init: the plugin has no skill (SKILL.md) to draft cases for — write one by hand "
            "with: python -m pytest_plugin_evals init --bare NAME"
        )
        return 1
    model = f", model {choice.model}" if choice.model else ""
    source = f" (from {files.shown(choice.ini, root)})" if choice.ini else ""
    say(f"init: drafting with the {choice.kind} judge{model}{source}")
    try:
        judge = make_judge(choice.kind, choice.model, claude_bin=choice.claude_bin)
    except JudgeProblem as exc:
        warn(f"init: cannot draft: {exc}")
        return 1
    status = 0
    cost = 0.0
    written: list[Path] = []
    triggers: list[Path] = []
    try:
        for skill in inventory.skills:
            try:
                reply = judge.call(
                    request(inventory, skill, options.per_skill), system=SYSTEM_PROMPT
                )
                cost += reply.cost_usd
                drafts = parse(reply.text, options.per_skill)
            except JudgeProblem as exc:
                warn(f"init: skill {skill.name}: the judge failed: {exc}; nothing written for it")
                status = 1
                continue
            except DraftError as exc:
                warn(
                    f"init: skill {skill.name}: the judge's draft is not usable: {exc}; "
                    "nothing written for it"
                )
                status = 1
                continue
            try:
                done = write_skill(evals, skill, drafts)
            except (OSError, files.InitError) as exc:
                warn(f"init: skill {skill.name}: cannot write its cases: {_os_error(exc)}")
                status = 1
                continue
            written.extend(done.cases)
            triggers.extend(t for t in (done.trigger_file, done.trigger_kept) if t is not None)
            for line in _written_lines(root, skill.name, done):
                say(line)
    finally:
        close = getattr(judge, "close", None)
        if callable(close):
            close()
    if cost > 0:
        say(f"init: the judge's drafts cost ${cost:.4f}")
    if written and options.pilot:
        say(f"init: piloting {len(written)} case(s), one run each")
        args = _pytest_args(options)
        if not files.collected(evals):
            args += ["-o", f"eval_paths={files.shown(evals, root)}"]
        result = pilot(root, written, pytest_args=args)
        for line in result.lines:
            (say if result.ran else warn)(f"init: {line}" if line.startswith("pilot") else line)
        status = status or (0 if result.ran else 1)
    say(f"Next: {files.next_command(evals, root)}")
    for trigger in triggers:
        folder = files.shown(trigger.parent, root)
        if not trigger.parent.resolve().is_relative_to(evals.resolve()):
            say(f"  and for trigger accuracy: pytest {folder}/")
    return status


def _written_lines(root: Path, skill: str, done: Written) -> list[str]:
    lines = [f"init: skill {skill}: wrote {len(done.cases)} case(s)"]
    lines.extend(f"  + {files.shown(c, root)}/" for c in done.cases)
    lines.extend(f"  = {files.shown(c, root)}/ is already there: left as it is" for c in done.kept)
    if done.trigger_file is not None:
        lines.append(f"  + {files.shown(done.trigger_file, root)}")
    if done.trigger_kept is not None:
        lines.append(f"  = {files.shown(done.trigger_kept, root)} is already there: left as it is")
    return lines


def _pytest_args(options: InitOptions) -> list[str]:
    """What ``init`` was told on its command line, passed on to the pilot's session (the ini
    it read is read by the session itself)."""
    args = []
    if options.judge:
        args += ["--eval-judge", options.judge]
    if options.judge_model:
        args += ["--eval-judge-model", options.judge_model]
    if options.claude_bin:
        args += ["--eval-claude-bin", options.claude_bin]
    return args


def _os_error(exc: BaseException) -> str:
    """``<path>: <reason>`` of a failed write, in one line."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror}"
    return " ".join(str(exc).split())
