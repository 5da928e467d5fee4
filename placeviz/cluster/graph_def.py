"""Ops as plain records, so a task process can rebuild the part of a client's graph it runs.

placeviz has no GraphDef protobuf; a record keeps what a task needs to run the op and to name it
in errors: type, inputs, control inputs, attrs, the device the master assigned, its colocation
groups and the user's source line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from placeviz.graph.core import Graph, Operation

Location = Any  # graph.source's (file, line) of the user's code


@dataclass(frozen=True)
class OpRecord:
    name: str
    type: str
    inputs: tuple[tuple[str, int], ...]  # (producing op's name, output index)
    control_inputs: tuple[str, ...]
    attrs: dict[str, Any]
    device: str  # the full name of the device the master assigned
    colocation: tuple[str, ...]
    location: Location


def export_ops(ops: Sequence[Operation], device_of: Callable[[Operation], str]) -> list[OpRecord]:
    return [
        OpRecord(
            name=op.name,
            type=op.type,
            inputs=tuple((t.op.name, t.value_index) for t in op.inputs),
            control_inputs=tuple(c.name for c in op.control_inputs),
            attrs=dict(op.attrs),
            device=device_of(op),
            colocation=op._colocation,
            location=op.location,
        )
        for op in ops
    ]


def import_ops(
    graph: Graph, records: Sequence[OpRecord], keeps: Callable[[Operation], bool]
) -> None:
    """Add ``records`` (in creation order) to ``graph``, each pinned to its assigned device.

    A control input on an op that ``keeps`` rejects (it runs in another task) is dropped: the
    master orders the two tasks' partitions instead, and this task could not run that op.
    """
    made = []
    for record in records:
        inputs = [graph._ops_by_name[name].outputs[index] for name, index in record.inputs]
        op = graph.create_op(record.type, inputs, name=record.name + "/", attrs=record.attrs)
        op._set_device(record.device)
        op._colocation = record.colocation
        op.location = record.location
        made.append((op, record))
    for op, record in made:
        controls = (graph._ops_by_name[name] for name in record.control_inputs)
        op.control_inputs = [c for c in controls if keeps(c)]
