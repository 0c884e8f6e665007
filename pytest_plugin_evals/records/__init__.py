"""The wire format between xdist workers and the controller, and nothing else.

Every eval item reports one record on its test report, under one ``user_properties`` key (the
``RECORD_PROPERTY``), as one JSON string (builtins only, so execnet ships it,
JUnit shows valid JSON, and the controller reads the same thing with and without ``-n``):

- :class:`RunRecord`: a run that was made (graded, or an infrastructure error);
- :class:`SkippedRun`: a run that was never started (cost ceiling, missing secret …);
- :class:`LoadErrorRecord`: a case file that could not be loaded.

:func:`encode` and :func:`decode` are the one pair that writes and reads them. The JSON form of
a run (:func:`run_to_json` / :func:`run_from_json`) is also the form of a run in the result
document, so a run reads the same on the wire and in ``aggregate-result.json``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pytest_plugin_evals.model import (
    Arm,
    GraderSpec,
    Judgement,
    MockSummary,
    PluginInfo,
    RunResult,
    ToolCallBrief,
    Verdict,
)
from pytest_plugin_evals.records.kinds import CaseInfo as CaseInfo
from pytest_plugin_evals.records.kinds import LoadErrorRecord as LoadErrorRecord
from pytest_plugin_evals.records.kinds import Record as Record
from pytest_plugin_evals.records.kinds import RecordError as RecordError
from pytest_plugin_evals.records.kinds import RunRecord as RunRecord
from pytest_plugin_evals.records.kinds import SkippedRun as SkippedRun
from pytest_plugin_evals.util.jsonlines import camel_fields, json_path
from pytest_plugin_evals.util.jsonlines import dumps as dumps

if TYPE_CHECKING:
    from pydantic import BaseModel

#: The version of the wire format; a record of another version is refused, not misread.
RECORD_SCHEMA = 1
#: The ``user_properties`` key every eval item reports its record under (JUnit: a ``<property>``).
RECORD_PROPERTY = "plugin_evals"

JSONObject = dict[str, Any]


# -- pieces ----------------------------------------------------------------------------------


def grader_to_json(spec: GraderSpec) -> JSONObject:
    doc: JSONObject = {"name": spec.name, "type": spec.type, "weight": spec.weight}
    if spec.arm:
        doc["arm"] = spec.arm
    if spec.criteria is not None:
        doc["graderMarkdown"] = spec.criteria
    doc["config"] = spec.config
    return doc


def plugin_to_json(plugin: PluginInfo) -> JSONObject:
    doc: JSONObject = {"name": plugin.name}
    if plugin.version is not None:
        doc["version"] = plugin.version
    doc["path"] = str(plugin.path)
    if plugin.layout != "manifest":
        doc["layout"] = plugin.layout
    return doc


def plugin_from_json(doc: Any) -> PluginInfo | None:
    """The plugin a JSON object describes (None for null); :class:`RecordError` when it is
    not one."""
    from pytest_plugin_evals.records import read, shape

    return None if doc is None else read.plugin(_checked(shape.Plugin, doc, "a plugin"))


def run_from_json(doc: Any) -> RunResult:
    """The run a JSON object describes; :class:`RecordError` when it is not one."""
    from pytest_plugin_evals.records import read, shape

    return read.run(_checked(shape.Run, doc, "a run"))


def case_to_json(case: CaseInfo) -> JSONObject:
    return {
        **camel_fields(case, "name", "source", "path", "dir", "suite_root"),
        "promptMarkdown": case.prompt,
        "description": case.description,
        "tags": list(case.tags),
        **camel_fields(case, "runs_per_case", "model", "max_turns", "timeout_seconds"),
        "graders": [grader_to_json(g) for g in case.graders],
        "expectedOutput": case.expected_output,
    }


def verdict_to_json(verdict: Verdict) -> JSONObject:
    doc: JSONObject = {
        "name": verdict.name,
        "type": verdict.type,
        "passed": None if verdict.error else bool(verdict.passed),
        "weight": verdict.weight,
        "explanation": verdict.explanation,
        "withOnly": verdict.with_only,
        "scored": verdict.counts,
    }
    if verdict.skipped is not None:
        doc["skipped"] = verdict.skipped
    if verdict.error is not None:
        doc["error"] = verdict.error
    judged = verdict.judgement
    if judged is not None:
        doc["judgeVotes"] = [{"vote": v.vote, "reason": v.reason} for v in judged.votes]
        if judged.evidence is not None:
            doc["evidence"] = judged.evidence
        doc["judgeCostUsd"] = judged.cost_usd
        if judged.votes:
            doc["splitVote"] = judged.split
        if judged.second is not None:
            doc["secondJudge"] = second_judge_to_json(judged.second)
    return doc


def second_judge_to_json(second: Judgement) -> JSONObject:
    doc: JSONObject = {
        "passed": second.passed,
        "votes": [{"vote": v.vote, "reason": v.reason} for v in second.votes],
        "costUsd": second.cost_usd,
    }
    if second.error is not None:
        doc["error"] = second.error
    return doc


def tool_call_to_json(call: ToolCallBrief) -> JSONObject:
    doc: JSONObject = {"name": call.name, "input": call.input, "isError": call.is_error}
    if call.original_name:
        doc["originalName"] = call.original_name
    if call.error:
        doc["error"] = call.error
    return doc


def mocks_to_json(mocks: MockSummary) -> JSONObject:
    servers: list[JSONObject] = []
    for server in mocks.servers:
        entry: JSONObject = {"server": server.server, "kind": server.kind}
        if server.withheld:
            entry["withheld"] = True
        entry["tools"] = [{"tool": t, "responder": r} for t, r in server.tools]
        servers.append(entry)
    calls = mocks.calls
    return {
        "servers": servers,
        "warnings": list(mocks.warnings),
        "calls": {
            "total": calls.total,
            "errors": calls.errors,
            "unmocked": [{"tool": t, "count": n} for t, n in calls.unmocked],
            "costUsd": calls.cost_usd,
            "replay": {"hits": calls.replay_hits, "misses": calls.replay_misses},
        },
    }


#: A run's fields the document writes as they are (keys in camelCase): the reference's, then
#: (after its graders) ours.
_RUN_FIELDS = ("score", "passed", "turns", "cost_usd", "judge_cost_usd", "duration_seconds",
               "started_at", "error", "trace_path", "skipped_paid_graders")  # fmt: skip
_OUR_RUN_FIELDS = ("arm", "run", "infra_error", "answer", "answer_truncated", "input_tokens",
                   "output_tokens", "tool_calls")  # fmt: skip


def run_to_json(result: RunResult) -> JSONObject:
    """A run as the result document lists it (the reference's field names, then ours)."""
    doc: JSONObject = {
        **camel_fields(result, *_RUN_FIELDS),
        "graders": [verdict_to_json(v) for v in result.verdicts],
        **camel_fields(result, *_OUR_RUN_FIELDS),
        "toolCallList": [tool_call_to_json(c) for c in result.tool_call_list],
        **({} if result.cost_known else {"costUnknown": True}),
        "filesCreated": list(result.files_created),
    }
    if result.notes:
        doc["notes"] = list(result.notes)
    if result.aborted is not None:
        aborted = result.aborted
        doc["aborted"] = camel_fields(aborted, "server", "tool", "reason")
    if result.mocks is not None:
        doc["mocks"] = mocks_to_json(result.mocks)
    if result.mock_calls is not None:
        doc["mockCalls"] = [c.to_json() for c in result.mock_calls]
    if result.unconfined:
        doc["unconfined"] = True
    doc["retries"] = result.retries
    if result.retry_wait_seconds:
        doc["retryWaitSeconds"] = result.retry_wait_seconds
    if result.reused_from is not None:
        doc["reusedFrom"] = result.reused_from
    return doc


# -- the records -----------------------------------------------------------------------------


def to_json(record: Record) -> JSONObject:
    """A record as a JSON object (see :func:`encode`)."""
    if isinstance(record, LoadErrorRecord):
        return {
            "schema": RECORD_SCHEMA,
            "kind": "load_error",
            **camel_fields(record, "nodeid", "path", "line", "message", "suite_root"),
        }
    doc: JSONObject = {
        "schema": RECORD_SCHEMA,
        "kind": "run" if isinstance(record, RunRecord) else "skipped",
        "nodeid": record.nodeid,
        "case": case_to_json(record.case),
        "plugin": plugin_to_json(record.plugin) if record.plugin else None,
        **camel_fields(record, "two_arm", "arm", "run"),
    }
    if record.agent is not None:
        doc["agent"] = record.agent
    if isinstance(record, RunRecord):
        doc["result"] = run_to_json(record.result)
    else:
        doc["reason"] = record.reason
    return doc


def from_json(doc: Any) -> Record:
    """The record a JSON object holds; :class:`RecordError` when it is not one."""
    from pytest_plugin_evals.records import read, shape

    if not isinstance(doc, Mapping):
        raise RecordError("a record must be a JSON object")
    if doc.get("schema") != RECORD_SCHEMA:
        raise RecordError(
            f"record schema {doc.get('schema')!r} is not {RECORD_SCHEMA}: the workers and the "
            "controller run different versions of pytest-plugin-evals"
        )
    record = _checked(shape.Record, doc, "a record")
    nodeid = record.nodeid or ""
    if record.kind == "load_error":
        return LoadErrorRecord(
            nodeid=nodeid,
            path=record.path or "",
            line=read.opt_count(record.line),
            message=record.message or "",
            suite_root=record.suiteRoot or "",
        )
    if record.kind not in ("run", "skipped") or record.case is None:
        raise RecordError(f"unknown record kind {record.kind!r}")
    case = read.case(record.case)
    plugin = read.plugin(record.plugin)
    two_arm = record.twoArm is True
    if record.kind == "run":
        if record.result is None:
            raise RecordError("a run record needs its result")
        return RunRecord(nodeid, case, plugin, two_arm, read.run(record.result), record.agent)
    return SkippedRun(
        nodeid=nodeid,
        case=case,
        plugin=plugin,
        two_arm=two_arm,
        arm=cast(Arm, record.arm or "with"),
        run=read.count(record.run, 1),
        reason=record.reason or "",
        agent=record.agent,
    )


def encode(record: Record) -> str:
    """The record as the JSON string an item reports (valid UTF-8, finite numbers only)."""
    return dumps(to_json(record))


def record_in(properties: Iterable[tuple[str, object]]) -> Record | None:
    """The record among a test report's ``user_properties``, if any."""
    for name, value in properties:
        if name == RECORD_PROPERTY:
            return decode(str(value))
    return None


@functools.lru_cache(maxsize=16)
def decode(text: str) -> Record:
    """The record an item reported; :class:`RecordError` when it cannot be read. Read once,
    though its setup, call and teardown reports all carry it."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise RecordError(f"a record is not JSON: {exc}") from None
    return from_json(doc)


# -- reading ---------------------------------------------------------------------------------

S = TypeVar("S", bound="BaseModel")


def _checked(model: type[S], doc: Any, what: str) -> S:
    """``doc`` as ``model`` checks it; :class:`RecordError` naming the first wrong field."""
    from pydantic import ValidationError

    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        raise RecordError(
            f"{what} does not have the shape of this version's: "
            f"{json_path(list(error['loc']))}: {error['msg']}"
        ) from None


def as_map(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one (for lenient reading)."""
    return value if isinstance(value, Mapping) else {}


def opt_number(value: Any) -> float | None:
    """``value`` when it is a finite JSON number, else None (see :func:`read.number`)."""
    from pytest_plugin_evals.records.read import number

    return number(value)


def interval_from_json(value: Any) -> tuple[float, float] | None:
    """A ``[low, high]`` interval as documents write them, else None."""
    from pytest_plugin_evals.records.read import interval

    return interval(list(value)) if isinstance(value, (list, tuple)) else None
