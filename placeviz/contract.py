"""The kernel-browser contract, declared once: the placement document's records, the event columns
and every kind the document names (event kinds, timing sources, reason kinds...).

Everything else is derived from here: the recorder's columns and dtypes, the live messages' binary
layout, the JSON schema (``placeviz/events/schema/placeviz-1.schema.json``) and the TypeScript
declarations the views use (``labextension/src/render/contract.gen.ts``). The two files are
written by ``python3 scripts/generate_contract.py`` and a test fails when they drift.

This module imports nothing of placeviz, so every layer may read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Any

import numpy as np

SCHEMA = "placeviz/1"
# Views list at most this many run records, the newest: a loop's thousands of runs would make
# every run list, and a live view's first update, slow to build and to read.
RUNS_LISTED = 1000
# A comparison's summary lists this many moved ops; the rest are counted (its document has all).
MOVED_LISTED = 20
# Above this many events the document a notebook keeps of a cell holds the latest run's events
# only (the kernel has them all): a loop's millions of events would bloat the notebook.
SHOWN_EVENTS = 250_000


class EventKind(IntEnum):
    """What an event row records; its code fills the ``kind`` column."""

    RUN = 0  # t0..t1: one Session.run
    PLACEMENT = 1  # t0: an op was placed (node, device)
    OP = 2  # t0..t1: an op ran (node, device, stream, bytes out)
    TRANSFER = 3  # t0..t1: a tensor moved (node = producer, device = destination, peer = source)
    ALLOC = 4  # t0: bytes allocated on device for node's output
    FREE = 5  # t0: those bytes freed after the last consumer ran
    # t0: the card's own reading of its used memory (NVML), taken while a run was in flight;
    # device = the first device carved from that card, bytes = the card's used bytes
    CARD_MEMORY = 6
    # t0..t1: an op of a cond's branch not taken did not run (node, device): dead inputs; with
    # a peer, the transfer of such a dead value (node, device <- peer) moved nothing
    NOT_RUN = 7
    # t0..t1: a while loop ran (node = its LoopCond); each op execution inside it is an OP (or
    # NOT_RUN) event within that span, and each copy of a value between its devices a TRANSFER
    # (or NOT_RUN with a peer) (their frame and iteration: CompiledPlan.executions)
    FRAME = 8
    # t0..t1: a cluster task's stage waited for the tensors and control tokens other tasks send
    # it (node = the stage's first op, device = that op's device, peer = the device whose tensor
    # arrived last, -1 when a control token did); not time its device was busy
    WAIT = 9

    @property
    def label(self) -> str:
        return self.name.lower()


class TimingSource(IntEnum):
    """Where an event's times come from; its code fills the ``source`` column."""

    NONE = 0
    CLOCK = 1  # the host's monotonic clock around the kernel
    CUDA_EVENT = 2  # CUDA events recorded on the device's stream
    MODELED = 3  # a simulated GPU: roofline duration laid out by a discrete-event simulation

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", "-")


class ReasonKind(str, Enum):
    """Why an op went where it did, in the words ``explain`` uses; ``meaning`` says when."""

    meaning: str

    def __new__(cls, value: str, meaning: str) -> ReasonKind:
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    __str__ = str.__str__  # f-strings and JSON show the kind's word, as before it was an enum

    PINNED = "pinned", "the user asked for this device (a device scope, function or _set_device)"
    DEFAULT = "default", "nothing was asked: GPU:0 when a GPU kernel exists, else CPU:0"
    SOFT = "soft", "the request could not be met and soft placement chose a supported device"
    COLOCATED = "colocated", "placed with its colocation group (a variable's ops, colocate_with)"
    STICKY = "sticky", "kept where an earlier run of the same session put its group"
    # TensorFlow's placer heuristics (core/common_runtime/placer.cc), each used only among the
    # devices the op's group may take:
    GENERATOR = "generator", "no inputs, one output: goes where all its consumers went"
    METADATA = "metadata", "Shape, Size, Rank read only their input's shape: placed with it"
    IDENTITY = "identity", "an unpinned Identity between two ops requesting the same device"
    REFERENCE = "reference", "takes a variable by reference: its own conflicting request is ignored"
    # ConfigProto(placer="cost"): not TensorFlow's rule but the whitepaper's cost-model placer.
    COST = "cost", "nothing was asked: the device where a simulation of the graph finishes it first"
    # Trace.what_if: a prediction's op that the question moved.
    MOVED = "moved", "a what-if moved it here: the trace is a prediction, not a run"
    # Not a decision: the reason's text is the error a run that needs the op raises.
    UNPLACED = "unplaced", "the op's group could not be placed; the text is the error"


DEVICE_KINDS = ("real", "logical", "simulated")
EDGE_KINDS = ("data", "control")
RUN_STATUSES = ("ok", "error")
DEVICE_NAME_PATTERN = (
    r"^/job:[A-Za-z][A-Za-z0-9_]*/replica:[0-9]+/task:[0-9]+/device:[A-Za-z][A-Za-z0-9_]*:[0-9]+$"
)


@dataclass(frozen=True)
class Column:
    """One event column: the recorder's dtype, and the little-endian type it travels as (JavaScript
    has no cheap 64-bit integers, so times and byte counts go as float64, exact up to 2**53)."""

    name: str
    dtype: type[np.generic]
    wire: str
    meaning: str
    # What an event recorded without this column holds (None: every chunk of events gives it),
    # so the events of ops outside while loops need no frame or iteration arrays.
    default: int | None = None


EVENT_COLUMNS = (
    Column("kind", np.int8, "<i1", "an EventKind code"),
    Column("t0", np.int64, "<f8", "start, ns (in a document: since origin_ns)"),
    Column("t1", np.int64, "<f8", "end, ns; t0 for an instant"),
    Column("node", np.int32, "<i4", "the op's node id, -1 for none"),
    Column("device", np.int16, "<i2", "the device id (a transfer's destination), -1 for none"),
    Column("stream", np.int16, "<i2", "the stream on the device"),
    Column("bytes", np.int64, "<f8", "bytes written, moved, allocated or freed"),
    Column("source", np.int8, "<i1", "a TimingSource code"),
    Column("run", np.int32, "<i4", "the run's id, -1 for none"),
    Column("peer", np.int16, "<i2", "a transfer's source device, -1 for none"),
    Column(
        "frame",
        np.int32,
        "<i4",
        "an op execution's while loop: its LoopCond's node id, -1 outside loops",
        default=-1,
    ),
    Column(
        "iteration",
        np.int32,
        "<i4",
        "an op execution's iteration of that loop, from 0; -1 outside loops",
        default=-1,
    ),
)
COLUMN_NAMES = tuple(c.name for c in EVENT_COLUMNS)
COLUMN_DEFAULTS = {c.name: c.default for c in EVENT_COLUMNS if c.default is not None}

# -- the document's records, as a small type language both generators read -----------------------


@dataclass(frozen=True)
class Type:
    """A JSON value's type: ``json`` is its JSON Schema, ``ts`` its TypeScript type."""

    json: dict[str, Any]
    ts: str


def integer(minimum: int | None = None) -> Type:
    return Type({"type": "integer", **({} if minimum is None else {"minimum": minimum})}, "number")


def string(pattern: str | None = None) -> Type:
    return Type({"type": "string", **({} if pattern is None else {"pattern": pattern})}, "string")


BOOLEAN = Type({"type": "boolean"}, "boolean")


def nullable(inner: Type) -> Type:
    if list(inner.json) == ["type"]:
        return Type({"type": [inner.json["type"], "null"]}, f"{inner.ts} | null")
    return Type({"oneOf": [{"type": "null"}, inner.json]}, f"{inner.ts} | null")


def array(item: Type) -> Type:
    ts = f"({item.ts})[]" if " " in item.ts else f"{item.ts}[]"
    return Type({"type": "array", "items": item.json}, ts)


def one_of(words: tuple[str, ...], ts_name: str) -> Type:
    return Type({"enum": list(words)}, ts_name)


@dataclass(frozen=True)
class Field:
    name: str
    type: Type
    required: bool = True
    comment: str = ""


@dataclass(frozen=True)
class Record:
    """A JSON object of the document: a TypeScript interface and a schema object."""

    name: str
    fields: tuple[Field, ...]
    doc: str

    @property
    def type(self) -> Type:
        return Type(record_schema(self), self.name)


def record_schema(record: Record) -> dict[str, Any]:
    return {
        "type": "object",
        "required": [f.name for f in record.fields if f.required],
        "properties": {f.name: f.type.json for f in record.fields},
    }


DEVICE = Record(
    "DeviceRecord",
    (
        Field("id", integer(0)),
        Field("name", string(DEVICE_NAME_PATTERN), comment="/job:localhost/.../device:GPU:0"),
        Field("type", string(), comment="CPU | GPU"),
        Field("index", integer(0)),
        Field("parent", string(), comment="the physical device: /physical_device:GPU:0"),
        Field("kind", one_of(DEVICE_KINDS, "DeviceKind")),
        Field("profile", nullable(string()), required=False),
        Field("description", string(), required=False),
        Field("memory_limit", integer(0)),
        Field("reserved", integer(0), required=False, comment="bytes the runtime holds"),
        Field("pid", integer(0), required=False, comment="the process that runs its ops"),
        Field(
            "address",
            nullable(string()),
            required=False,
            comment="its cluster task's address, host:port; null in the session's own process",
        ),
    ),
    "A device ops can be placed on.",
)
REASON = Record(
    "Reason",
    (
        Field("kind", one_of(tuple(k.value for k in ReasonKind), "ReasonKind")),
        Field("text", string(), comment="one sentence a student understands"),
        Field("anchor", nullable(string()), required=False, comment="the op that decided"),
    ),
    "Why an op is where it is.",
)
NODE = Record(
    "NodeRecord",
    (
        Field("id", integer(0)),
        Field("name", string()),
        Field("type", string()),
        Field("scope", string()),
        Field("requested", string(), comment="the device the op asked for, '' for none"),
        Field("device", nullable(integer()), comment="a device id, null when not placed"),
        Field("reason", nullable(REASON.type)),
        Field("shapes", array(nullable(array(nullable(integer())))), comment="per output"),
        Field("dtype", nullable(string())),
        Field("bytes_out", nullable(integer())),
        Field("source", string(), comment="where the op was made: 'Cell In[3], line 6'"),
    ),
    "An op of the graph, where it was placed and why.",
)
EDGE = Record(
    "EdgeRecord",
    (
        Field("src", integer()),
        Field("dst", integer()),
        Field("kind", one_of(EDGE_KINDS, "EdgeKind")),
        Field("bytes", nullable(integer())),
        Field("crosses", BOOLEAN, comment="its ends are on different devices"),
    ),
    "A data or control edge between two nodes.",
)
RUN = Record(
    "RunRecord",
    (
        Field("id", integer()),
        Field("t0", integer(), comment="absolute ns (subtract origin_ns)"),
        Field("t1", integer()),
        Field("status", one_of(RUN_STATUSES, "RunStatus")),
        Field("error", nullable(string()), required=False),
        Field("fetches", array(string()), required=False),
        Field("dry", BOOLEAN, required=False, comment="shapes only: no kernel ran (absent: false)"),
        Field(
            "unread",
            array(integer()),
            required=False,
            comment="nodes run as NoOps: nothing in the run read their outputs (TF's grappler)",
        ),
        Field(
            "folded",
            array(integer()),
            required=False,
            comment="nodes folded into constants: computed once from constants (TF's grappler)",
        ),
    ),
    "One Session.run.",
)
RECORDS = (DEVICE, REASON, NODE, EDGE, RUN)

CODE_TABLE = Type({"type": "object", "additionalProperties": {"type": "string"}}, "CodeTable")
DOCUMENT = Record(
    "PlacementDocument",
    (
        Field("schema", Type({"const": SCHEMA}, "string"), comment="older versions still render"),
        Field("origin_ns", integer()),
        Field("devices", array(DEVICE.type)),
        Field("nodes", array(NODE.type)),
        Field("edges", array(EDGE.type)),
        Field("runs", array(RUN.type)),
        Field("event_kinds", CODE_TABLE, required=False, comment="kind code -> name"),
        Field("timing_sources", CODE_TABLE, required=False, comment="source code -> name"),
        Field(
            "prediction",
            nullable(string()),
            required=False,
            comment="a what-if's question: its times are modeled, not measured",
        ),
        Field(
            "events",
            Type(
                {
                    "type": "object",
                    "required": [n for n in COLUMN_NAMES if n not in COLUMN_DEFAULTS],
                    "additionalProperties": {"type": "array", "items": {"type": "integer"}},
                },
                "EventLists",
            ),
            comment="one list per column, times in ns since origin_ns",
        ),
    ),
    "The placement document: what the kernel hands the browser.",
)


COMPARE_SCHEMA = "placeviz-compare/1"
MOVED_OP = Record(
    "MovedOp",
    (
        Field("name", string()),
        Field("from", string(), comment="the first placement's device, full name"),
        Field("to", string(), comment="the second placement's device, full name"),
    ),
    "An op the two placements put on different devices.",
)
DEVICE_DELTA = Record(
    "DeviceDelta",
    (
        Field("device", string(), comment="full name; absent from a side: zeros there"),
        Field("ops", array(integer(0)), comment="[first, second]"),
        Field("busy_ns", array(integer(0)), comment="[first, second], in the last run"),
        Field(
            "peak_bytes",
            array(nullable(integer(0))),
            comment="[first, second]; null: that side recorded no memory (a what-if models none)",
        ),
    ),
    "One device under both placements.",
)
COMPARISON = Record(
    "ComparisonDocument",
    (
        Field("schema", Type({"const": COMPARE_SCHEMA}, "string")),
        Field("labels", array(string()), comment="[first, second]: 'simple', 'cost'"),
        Field("documents", array(DOCUMENT.type), comment="[first, second]"),
        Field("step_ns", array(integer(0)), comment="[first, second]: the last run's span"),
        Field("moved", array(MOVED_OP.type)),
        Field("devices", array(DEVICE_DELTA.type)),
    ),
    "Two placements of one graph side by side: what moved, and what it changed.",
)


def code_table(kinds: type[IntEnum]) -> dict[str, str]:
    """A kinds table as the document ships it (JSON object keys are strings)."""
    return {str(int(k)): k.label for k in kinds}  # type: ignore[attr-defined]


# -- generators ----------------------------------------------------------------------------------

_TYPED_ARRAYS = {
    "<i1": "Int8Array",
    "<i2": "Int16Array",
    "<i4": "Int32Array",
    "<f8": "Float64Array",
}


def json_schema() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA,
        "title": "placeviz placement document, version 1",
        "description": (
            "What the kernel hands the browser: devices, the graph with each op's placement and "
            "reason, runs, and columnar events. Times are nanoseconds from origin_ns. Generated "
            "from placeviz/contract.py: do not edit."
        ),
        **record_schema(DOCUMENT),
    }


def _ts_words(name: str, words: tuple[str, ...], constant: str) -> list[str]:
    return [
        f"export const {constant} = [{', '.join(repr(w) for w in words)}] as const;",
        f"export type {name} = (typeof {constant})[number];",
        "",
    ]


def _constant_case(name: str) -> str:
    """'ReasonKind' -> 'REASON_KIND'."""
    return "".join("_" + c if c.isupper() else c.upper() for c in name).lstrip("_")


def _ts_codes(name: str, kinds: type[IntEnum]) -> list[str]:
    members = ", ".join(f"{k.name}: {int(k)}" for k in kinds)
    labels = ", ".join(f"{int(k)}: {k.label!r}" for k in kinds)  # type: ignore[attr-defined]
    return [
        f"export const {name} = {{ {members} }} as const;",
        f"export const {_constant_case(name)}_LABELS: Readonly<Record<number, string>> = "
        f"{{ {labels} }};",
        "",
    ]


def _ts_interface(record: Record) -> list[str]:
    lines = [f"/** {record.doc} */", f"export interface {record.name} {{"]
    for f in record.fields:
        comment = f" // {f.comment}" if f.comment else ""
        lines.append(f"  {f.name}{'' if f.required else '?'}: {f.type.ts};{comment}")
    return [*lines, "}", ""]


def typescript() -> str:
    lines = [
        "// Generated from placeviz/contract.py by `python3 scripts/generate_contract.py`: do not",
        "// edit. The kernel-browser contract: the document's records, event columns and kinds.",
        "",
        f"export const SCHEMA = {SCHEMA!r};",
        "",
        "/** Views keep the records of the newest this many runs (the kernel sends no more). */",
        f"export const RUNS_LISTED = {RUNS_LISTED};",
        "/** Moved ops a comparison's summary lists; the rest are counted. */",
        f"export const MOVED_LISTED = {MOVED_LISTED};",
        "/** Above this many events a notebook's saved document keeps the latest run's only. */",
        f"export const SHOWN_EVENTS = {SHOWN_EVENTS};",
        "",
        *_ts_codes("EventKind", EventKind),
        *_ts_codes("TimingSource", TimingSource),
        *_ts_words("ReasonKind", tuple(k.value for k in ReasonKind), "REASON_KINDS"),
        *_ts_words("DeviceKind", DEVICE_KINDS, "DEVICE_KINDS"),
        *_ts_words("EdgeKind", EDGE_KINDS, "EDGE_KINDS"),
        *_ts_words("RunStatus", RUN_STATUSES, "RUN_STATUSES"),
        f"export const COLUMN_NAMES = [{', '.join(repr(n) for n in COLUMN_NAMES)}] as const;",
        "export type ColumnName = (typeof COLUMN_NAMES)[number];",
        "",
        "/** Event columns as the document's JSON has them (times in ns since origin_ns). */",
        "export type EventLists = Record<ColumnName, number[]>;",
        "",
        "/** What a column without a value holds (an older document's, an op outside loops). */",
        "export const COLUMN_GENERATED_DEFAULTS: Partial<Record<ColumnName, number>> = {",
        *(f"  {name}: {value}," for name, value in COLUMN_DEFAULTS.items()),
        "};",
        "",
        "/** A kinds table as the document ships it: code (as a string) -> name. */",
        "export type CodeTable = Record<string, string>;",
        "",
        "/** Each column's typed array: how it travels in a live update and how views hold it. */",
        "export const COLUMN_ARRAYS = {",
        *(f"  {c.name}: {_TYPED_ARRAYS[c.wire]}," for c in EVENT_COLUMNS),
        "} as const;",
        "",
        "/** One binary batch of a live update: a typed array per column, all of length count. */",
        "export interface EventBatch {",
        "  count: number;",
        *(f"  {c.name}: {_TYPED_ARRAYS[c.wire]}; // {c.meaning}" for c in EVENT_COLUMNS),
        "}",
        "",
    ]
    lines += [f"export const COMPARE_SCHEMA = {COMPARE_SCHEMA!r};", ""]
    for record in (*RECORDS, DOCUMENT, MOVED_OP, DEVICE_DELTA, COMPARISON):
        lines += _ts_interface(record)
    return "\n".join(lines).rstrip("\n") + "\n"


def generated_files() -> dict[str, str]:
    """Path -> the text the generator writes there (the drift test compares them)."""
    import json
    from pathlib import Path

    here = Path(__file__).resolve().parent
    schema_file = here / "events" / "schema" / "placeviz-1.schema.json"
    types_file = here.parent / "labextension" / "src" / "render" / "contract.gen.ts"
    return {
        str(schema_file): json.dumps(json_schema(), indent=2) + "\n",
        str(types_file): typescript(),
    }
