"""The placement document's tables (devices, nodes, edges, runs) for a session's graph.

The one place that turns a graph, its placement and its devices into the records the browser
draws: a Trace carries them, and a live view sends them whenever the graph or its placement
changed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from placeviz.contract import ReasonKind
from placeviz.devices.context import Device
from placeviz.graph.core import Graph, Operation, tensor_bytes
from placeviz.placement.placer import Placement, PlacementFailure
from placeviz.runtime.tracing import device_record


def document_tables(
    graph: Graph,
    placement: Placement,
    failures: Mapping[int, PlacementFailure],
    devices: Sequence[Device],
    reserved: Callable[[Device], int],
    runs: list[dict[str, Any]],
    process: Callable[[Device], tuple[int, str | None]],
) -> dict[str, Any]:
    """``failures``: by op id, the groups the placer could not place (their ops have no device,
    and their reason is the error, so the inspector can say why); ``process(device)``: the pid
    and cluster address (None for the session's own process) of the process running it."""
    device_ids = {device.name: i for i, device in enumerate(devices)}
    return {
        "devices": [
            {**device_record(d, i), "reserved": reserved(d), **_process_fields(process(d))}
            for i, d in enumerate(devices)
        ],
        "nodes": _node_records(graph, placement, failures, device_ids),
        "edges": _edge_records(graph, placement),
        "runs": runs,
    }


def graph_to_networkx(graph: Graph) -> Any:
    """A graph no session placed yet as a ``networkx.DiGraph``: type, scope, requested device,
    source line and output bytes per op (device and reason are None: placement is a
    session's, see ``Trace.to_networkx``); per edge the bytes it carries."""
    from placeviz.events.networkx_export import tables_to_networkx

    nodes = _node_records(graph, Placement(), {}, {})
    return tables_to_networkx([], nodes, _edge_records(graph, Placement()))


def _process_fields(process: tuple[int, str | None]) -> dict[str, Any]:
    pid, address = process
    return {"pid": pid, "address": address}


def _node_records(
    graph: Graph,
    placement: Placement,
    failures: Mapping[int, PlacementFailure],
    device_ids: dict[str, int],
) -> list[dict[str, Any]]:
    records = []
    for op in graph.get_operations():
        entry = placement.decision(op.name)
        reason = None
        if entry is not None:
            r = entry[1]
            reason = reason_record(r.kind, r.text, r.anchor)
        elif (failure := failures.get(op.id)) is not None:
            reason = reason_record(ReasonKind.UNPLACED, str(failure.error))
        sizes = [tensor_bytes(t) for t in op.outputs]
        records.append(
            {
                "id": op.id,
                "name": op.name,
                "type": op.type,
                "scope": op.name.rpartition("/")[0],
                "requested": op.device,
                "device": device_ids[entry[0].name] if entry is not None else None,
                "reason": reason,
                "shapes": [
                    None if t.shape.dims is None else list(t.shape.dims) for t in op.outputs
                ],
                "dtype": _made_dtype(op),
                "bytes_out": None if None in sizes else sum(s or 0 for s in sizes),
                "source": op.source,
            }
        )
    return records


def _edge_records(graph: Graph, placement: Placement) -> list[dict[str, Any]]:
    edges = []
    for op in graph.get_operations():
        mine = placement.decision(op.name)
        for tensor in op.inputs:
            theirs = placement.decision(tensor.op.name)
            crosses = edge_crosses(
                None if theirs is None else theirs[0].name, None if mine is None else mine[0].name
            )
            edges.append(
                {
                    "src": tensor.op.id,
                    "dst": op.id,
                    "kind": "data",
                    "bytes": tensor_bytes(tensor),
                    "crosses": crosses,
                }
            )
        edges.extend(
            {"src": c.id, "dst": op.id, "kind": "control", "bytes": None, "crosses": False}
            for c in op.control_inputs
        )
    return edges


def reason_record(kind: str, text: str, anchor: str | None = None) -> dict[str, Any]:
    """A node's ``reason``: the rule that put it on its device, in words, and the op whose
    request decided it (a colocated op's)."""
    return {"kind": kind, "text": text, "anchor": anchor}


def edge_crosses(src: Hashable | None, dst: Hashable | None) -> bool:
    """Whether a data edge between ops on devices ``src`` and ``dst`` crosses devices: never
    where an end has no device."""
    return src is not None and dst is not None and src != dst


def placed_node_record(
    node: Mapping[str, Any], device: int, reason: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A node record of a trace with its op on ``device`` (a prediction's), and ``reason`` for
    a new one where the op moved."""
    record = {**node, "device": device}
    if reason is not None:
        record["reason"] = reason
    return record


def placed_edge_record(edge: Mapping[str, Any], device_of: Mapping[int, int]) -> dict[str, Any]:
    """An edge record of a trace with its ops on ``device_of``'s devices (a prediction's)."""
    if edge["kind"] != "data":
        return dict(edge)
    crosses = edge_crosses(device_of.get(edge["src"]), device_of.get(edge["dst"]))
    return {**edge, "crosses": crosses}


def _made_dtype(op: Operation) -> str | None:
    """What the op makes (a comparison's bool), not the dtype that chose its kernel."""
    dtype = op.outputs[0].dtype.base_dtype if op.outputs else op.dtype
    return dtype.name if dtype is not None else None
