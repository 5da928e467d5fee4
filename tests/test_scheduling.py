"""``pv.placement.schedule``: valid schedules (checked independently of the scheduler), memory and
colocation never broken, infeasible problems named, explanations with real alternatives."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from throughput import device_loads

import placeviz as pv


def check(graph: nx.DiGraph, found: pv.placement.Schedule, devices: list[dict]) -> None:
    """Recompute what a schedule must satisfy from its placements and start times alone."""
    kinds = {d["name"]: d.get("type", "GPU") for d in devices}
    limits = {d["name"]: d.get("memory", math.inf) for d in devices}
    used = dict.fromkeys(kinds, 0.0)
    for node, attrs in graph.nodes(data=True):
        device = found.device[node]
        given_time = attrs.get("time", 0.0)
        cost = given_time[kinds[device]] if isinstance(given_time, dict) else given_time
        assert found.finish[node] == pytest.approx(found.start[node] + cost)
        for pred in graph.predecessors(node):
            moved = graph.edges[pred, node].get("time", 0.0) if found.device[pred] != device else 0
            assert found.start[node] >= found.finish[pred] + moved - 1e-9, (pred, node)
        used[device] += attrs.get("memory", 0.0)
    for name in kinds:
        spans = sorted((found.start[n], found.finish[n]) for n in graph if found.device[n] == name)
        for (_, end), (begin, _) in itertools.pairwise(spans):
            assert begin >= end - 1e-9, name  # one node at a time
        assert used[name] <= limits[name]
    groups: dict = {}
    for node, attrs in graph.nodes(data=True):
        if attrs.get("colocation") is not None:
            groups.setdefault(attrs["colocation"], set()).add(found.device[node])
    assert all(len(placed) == 1 for placed in groups.values())
    assert found.makespan == pytest.approx(max(found.finish.values()))
    assert found.lower_bound <= found.makespan + 1e-9


@st.composite
def problems(draw):
    n = draw(st.integers(2, 18))
    graph = nx.DiGraph()
    for i in range(n):
        cpu = draw(st.floats(0.5, 10))
        gpu = draw(st.one_of(st.none(), st.floats(0.1, 5)))
        graph.add_node(i, time={"CPU": cpu} | ({"GPU": gpu} if gpu else {}), memory=1.0)
        if draw(st.booleans()) and i % 3 == 0:
            graph.nodes[i]["colocation"] = "g"
    for j in range(1, n):
        for i in draw(st.sets(st.integers(0, j - 1), max_size=3)):
            graph.add_edge(i, j, time=draw(st.floats(0, 2)))
    return graph


DEVICES = [
    {"name": "CPU:0", "type": "CPU"},
    {"name": "GPU:0", "type": "GPU", "memory": 40},
    {"name": "GPU:1", "type": "GPU", "memory": 40},
]


@settings(max_examples=60, deadline=None)
@given(problems())
def test_every_schedule_is_valid(graph: nx.DiGraph) -> None:
    found = pv.placement.schedule(graph, DEVICES, max_work=5_000)
    check(graph, found, DEVICES)


def test_two_independent_chains_run_side_by_side_and_say_why() -> None:
    graph = nx.DiGraph()
    for chain in "ab":
        graph.add_node(f"{chain}1", time=1e-3)
        graph.add_node(f"{chain}2", time=1e-3)
        graph.add_edge(f"{chain}1", f"{chain}2", time=5e-3)
    found = pv.placement.schedule(graph, 2)
    assert found.makespan == pytest.approx(2e-3) == pytest.approx(found.lower_bound)
    assert found.device["a1"] == found.device["a2"] != found.device["b1"] == found.device["b2"]
    why = found.explain("a2")
    other = next(d for d in ("GPU:0", "GPU:1") if d != found.device["a2"])
    assert why.startswith(f"earliest finish: {found.device['a2']} at 2 ms vs {other} at")
    assert "(waits for 'a1')" in why


def test_memory_limits_and_colocation_hold_and_say_so() -> None:
    graph = nx.DiGraph()
    graph.add_node("big", time=1.0, memory=6)
    graph.add_node("also_big", time=1.0, memory=6)
    graph.add_node("x", time=1.0, colocation="v")
    graph.add_node("y", time=1.0, colocation="v")
    devices = [{"name": "GPU:0", "memory": 8}, {"name": "GPU:1", "memory": 8}]
    found = pv.placement.schedule(graph, devices)
    check(graph, found, devices)
    assert found.device["big"] != found.device["also_big"]
    assert found.device["x"] == found.device["y"]
    assert found.explain("y").startswith(f"colocated with 'x': its group is on {found.device['y']}")
    assert "colocated with 'x'" not in found.explain("x")  # never with itself


def test_infeasible_problems_name_the_node_and_the_constraint() -> None:
    graph = nx.DiGraph()
    graph.add_node("huge", time=1.0, memory=10)
    with pytest.raises(pv.placement.InfeasibleScheduleError, match=r"'huge' .*fits on no device"):
        pv.placement.schedule(graph, [{"name": "GPU:0", "memory": 8}])
    graph = nx.DiGraph()
    graph.add_node("cpu_only", time={"CPU": 1.0})
    with pytest.raises(pv.placement.InfeasibleScheduleError, match="'cpu_only' cannot run"):
        pv.placement.schedule(graph, 2)
    graph = nx.DiGraph([("a", "b"), ("b", "a")])
    with pytest.raises(pv.placement.InfeasibleScheduleError, match="cycle"):
        pv.placement.schedule(graph, 2)


@settings(max_examples=40, deadline=None)
@given(problems())
def test_a_pipeline_placement_is_valid_and_its_load_is_the_definitions(graph: nx.DiGraph) -> None:
    found = pv.placement.schedule(graph, DEVICES, objective="throughput", max_work=20_000)
    assert found.makespan is None and found.start == {}
    assert found.max_load == pytest.approx(max(device_loads(graph, found.device, DEVICES).values()))
    assert found.lower_bound <= found.max_load + 1e-9
    used = dict.fromkeys((d["name"] for d in DEVICES), 0.0)
    for node, attrs in graph.nodes(data=True):
        used[found.device[node]] += attrs["memory"]
        assert "CPU" in found.device[node] or "GPU" in attrs["time"]  # a kernel where it runs
    assert all(used[d["name"]] <= d.get("memory", math.inf) for d in DEVICES)
    placed = {found.device[n] for n, a in graph.nodes(data=True) if a.get("colocation") == "g"}
    assert len(placed) <= 1


def test_a_chain_of_equal_stages_splits_evenly_over_the_devices() -> None:
    graph = nx.DiGraph()
    for i in range(8):
        graph.add_node(i, time=1.0)
        if i:
            graph.add_edge(i - 1, i, time=0.1)
    found = pv.placement.schedule(graph, 4, objective="throughput")
    assert found.max_load == pytest.approx(2.2)  # two nodes and the two edges at its ends
    assert [found.device[i] for i in range(8)] == [f"GPU:{i // 2}" for i in range(8)]
    assert found.explain(3).startswith("pipeline stage on GPU:1, which carries 2.2 s")


@settings(max_examples=40, deadline=None)
@given(problems())
def test_copy_engines_and_a_placement_to_beat_keep_schedules_valid(graph: nx.DiGraph) -> None:
    simple = {node: "GPU:0" if "GPU" in graph.nodes[node]["time"] else "CPU:0" for node in graph}
    found = pv.placement.schedule(
        graph, DEVICES, time_limit=math.inf, max_passes=8, copy_engines=True, start_from=simple
    )
    check(graph, found, DEVICES)
    again = pv.placement.schedule(
        graph, DEVICES, time_limit=math.inf, max_passes=8, copy_engines=True, start_from=simple
    )
    assert again.device == found.device  # no clock in the search: the same answer every time


def fan(sources: int, readers: int) -> nx.DiGraph:
    """CPU-only sources feeding GPU-only readers, every value 5 s to move."""
    graph = nx.DiGraph()
    for s in range(sources):
        graph.add_node(f"s{s}", time={"CPU": 1.0})
        for r in range(readers):
            graph.add_node(f"r{s}_{r}", time={"GPU": 1.0})
            graph.add_edge(f"s{s}", f"r{s}_{r}", time=5.0)
    return graph


def test_with_copy_engines_a_value_crosses_once_and_copies_into_a_device_queue() -> None:
    one_gpu = [{"name": "CPU:0", "type": "CPU"}, {"name": "GPU:0", "type": "GPU"}]
    shared = pv.placement.schedule(fan(1, 2), one_gpu, copy_engines=True)
    # One copy for both readers: they run back to back right after it.
    assert shared.makespan == pytest.approx(1 + 5 + 1 + 1)
    queued = pv.placement.schedule(fan(2, 1), one_gpu, copy_engines=True)
    # Two values into one GPU: the second copy (from 2 s) waits for the first (1 s to 6 s).
    assert queued.makespan == pytest.approx(1 + 5 + 5 + 1)
    free = pv.placement.schedule(fan(2, 1), one_gpu)
    assert free.makespan == pytest.approx(2 + 5 + 1)  # every edge its own delay


def test_a_placement_to_beat_is_kept_when_spreading_out_costs_more() -> None:
    # A chain whose values cost 10x its work to move: on one device it takes 4 s; the greedy
    # passes may not find that, the all-on-one-device seeds (and the placement to beat) do.
    graph = nx.DiGraph()
    for i in range(4):
        graph.add_node(i, time=1.0)
        if i:
            graph.add_edge(i - 1, i, time=10.0)
    graph.add_node("side", time=3.0)
    graph.add_edge(0, "side", time=10.0)
    graph.add_edge("side", 3, time=10.0)
    together = dict.fromkeys(graph, "GPU:0")
    found = pv.placement.schedule(graph, 2, time_limit=math.inf, max_passes=4, start_from=together)
    assert found.makespan <= 7.0 + 1e-9
    assert len(set(found.device.values())) == 1


def test_a_placement_to_beat_wins_where_the_greedy_pass_and_one_device_lose() -> None:
    # Found by search: the first pass and all-on-one-device placements take 9 s, this split 8 s.
    graph = nx.DiGraph()
    for node, time in enumerate((1.0, 3.0, 1.0, 4.0, 4.0)):
        graph.add_node(node, time=time)
    for src, dst, time in ((0, 1, 1.0), (0, 3, 3.0), (0, 4, 5.0)):
        graph.add_edge(src, dst, time=time)
    split = {0: "GPU:0", 1: "GPU:0", 2: "GPU:1", 3: "GPU:1", 4: "GPU:0"}
    # Three passes: the first and the two one-device seeds; a fourth is the placement to beat.
    without = pv.placement.schedule(graph, 2, time_limit=math.inf, max_passes=3)
    assert without.makespan == pytest.approx(9.0)
    found = pv.placement.schedule(graph, 2, time_limit=math.inf, max_passes=4, start_from=split)
    assert found.makespan == pytest.approx(8.0)
    check(graph, found, [{"name": "GPU:0"}, {"name": "GPU:1"}])
