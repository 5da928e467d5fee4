"""The throughput objective from its definition, for tests to check the scheduling core against
(written apart from placeviz's own code)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import networkx as nx


def device_loads(
    graph: nx.DiGraph, device: Mapping[Hashable, str], devices: list[dict]
) -> dict[str, float]:
    """Each device's load: its nodes' times plus, for each (node, other device reading it) pair,
    the largest such edge time, on both devices."""
    kinds = {d["name"]: d.get("type", "GPU") for d in devices}
    load = dict.fromkeys(kinds, 0.0)
    for node, attrs in graph.nodes(data=True):
        here = device[node]
        given = attrs.get("time", 0.0)
        load[here] += given[kinds[here]] if isinstance(given, dict) else given
        largest: dict[str, float] = {}
        for succ in graph.successors(node):
            there = device[succ]
            if there != here:
                largest[there] = max(largest.get(there, 0.0), graph.edges[node, succ]["time"])
        for there, cost in largest.items():
            load[here] += cost
            load[there] += cost
    return load
