"""``graph_to_networkx`` and ``Trace.to_networkx``: the graph as networkx sees it, checked against
the trace's own tables and events."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.examples.towers import build_towers
from placeviz.runtime.document_tables import graph_to_networkx

FULL = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)


@pytest.fixture
def towers_trace() -> pv.Trace:
    pv.config.simulate_gpus(4)
    total = build_towers()
    sess = pv.Session()
    for _ in range(2):
        sess.run(total, options=FULL)
    return sess.trace(runs=None)


def test_trace_nodes_carry_the_documents_facts_and_their_time(towers_trace: pv.Trace) -> None:
    graph = towers_trace.to_networkx()
    assert graph.number_of_nodes() == len(towers_trace.nodes)
    names = [d["name"] for d in towers_trace.devices]
    events = towers_trace.events
    ops = events["kind"] == int(EventKind.OP)
    for node in towers_trace.nodes:
        attrs = graph.nodes[node["name"]]
        assert attrs["type"] == node["type"] and attrs["scope"] == node["scope"]
        assert attrs["device"] == names[node["device"]]
        assert attrs["reason"] == node["reason"]["kind"] and type(attrs["reason"]) is str
        mine = ops & (events["node"] == node["id"])
        assert attrs["time_ns"] == int((events["t1"][mine] - events["t0"][mine]).sum())
        assert attrs["bytes_out"] == node["bytes_out"]


def test_trace_edges_merge_parallel_edges_and_keep_bytes(towers_trace: pv.Trace) -> None:
    graph = towers_trace.to_networkx()
    assert sum(e["count"] for _, _, e in graph.edges(data=True)) == len(towers_trace.edges)
    crossing = sum(e["bytes"] or 0 for e in towers_trace.edges if e["crosses"])
    assert crossing > 0
    assert sum(e["bytes"] for _, _, e in graph.edges(data=True) if e["crosses"]) == crossing
    # The cut between the GPUs and the CPU, as a student would ask networkx for it.
    on_cpu = {n for n, d in graph.nodes(data=True) if d["device"].endswith("CPU:0")}
    assert nx.cut_size(graph, graph.nodes - on_cpu, on_cpu, weight="bytes") == crossing
    assert nx.is_directed_acyclic_graph(graph)
    longest = nx.dag_longest_path(graph, weight="bytes")
    assert graph.nodes[longest[-1]]["type"] == "AddN"


def test_an_unplaced_graph_has_requests_but_no_devices() -> None:
    with pv.device("/gpu:1"):
        a = pv.constant(np.ones((2, 2), np.float32), name="a")
        b = pv.matmul(a, a, name="b")
    graph = graph_to_networkx(pv.get_default_graph())
    assert set(graph.nodes) == {"a", "b"}
    assert graph.nodes["b"]["requested"] == "/device:GPU:1"
    assert graph.nodes["b"]["device"] is None and graph.nodes["b"]["time_ns"] is None
    assert graph.edges["a", "b"] == {"count": 2, "bytes": 32, "crosses": False, "control": False}
    assert graph.in_degree("b") == 1 and b.op.type == "MatMul"
