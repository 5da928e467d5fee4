"""A placed graph as a ``networkx.DiGraph``, for questions the inspector does not answer: the
critical path, the cut between two devices, the ops one op depends on.

Nodes are op names with the document's facts about each op; an edge stands for every data and
control edge between its two ops (``count``), with the bytes they carry and whether any moves data
between devices. Built from the document's tables, so a graph, a live session and a saved trace
give the same shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def tables_to_networkx(
    devices: Sequence[Mapping[str, Any]],
    nodes: Sequence[Mapping[str, Any]],
    edges: Sequence[Mapping[str, Any]],
    time_ns: Mapping[int, int] | None = None,
) -> Any:
    """``time_ns``: by node id, the time its op ran (summed over the traced runs)."""
    import networkx as nx

    device_names = {d["id"]: d["name"] for d in devices}
    names = {n["id"]: n["name"] for n in nodes}
    times = time_ns or {}
    graph = nx.DiGraph()
    for node in nodes:
        reason = node["reason"]
        graph.add_node(
            node["name"],
            type=node["type"],
            scope=node["scope"],
            requested=node["requested"],
            device=device_names.get(node["device"]),
            reason=str(reason["kind"]) if reason else None,
            why=reason["text"] if reason else None,
            source=node["source"],
            time_ns=times.get(node["id"]),
            bytes_out=node["bytes_out"],
        )
    for edge in edges:
        src, dst = names[edge["src"]], names[edge["dst"]]
        size = edge["bytes"] or 0
        control = edge["kind"] == "control"
        if graph.has_edge(src, dst):
            merged = graph.edges[src, dst]
            merged["count"] += 1
            merged["bytes"] += size
            merged["crosses"] = merged["crosses"] or edge["crosses"]
            merged["control"] = merged["control"] and control
        else:
            graph.add_edge(src, dst, count=1, bytes=size, crosses=edge["crosses"], control=control)
    return graph
