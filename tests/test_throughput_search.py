"""The throughput search's cheap-cut seeds against brute force (what each cut of the pipeline
order sends, and the cuts of least crossing within a compute cap), and its trades."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placeviz.placement import pipeline, scheduling
from placeviz.placement.pipeline_moves import Loads, Network, descend, exchange
from placeviz.placement.pipeline_seeds import _cheap_runs, _cut_costs, pipeline_order
from placeviz.placement.problem import Work

DEVICES = [
    {"name": "GPU:0", "type": "GPU", "memory": 8.0},
    {"name": "GPU:1", "type": "GPU", "memory": 8.0},
    {"name": "CPU:0", "type": "CPU"},
]


@st.composite
def layered(draw) -> nx.DiGraph:
    """Layers with skip edges of any length, forward or (colocated, as a training graph's
    gradients are) reading a later layer's unit."""
    n = draw(st.integers(2, 9))
    graph = nx.DiGraph()
    for i in range(n):
        graph.add_node(
            i,
            time={"CPU": 4.0, "GPU": draw(st.integers(1, 8)) / 2},
            memory=1.0,
            colocation=f"c{i // 2}" if draw(st.integers(0, 3)) == 0 else None,
        )
    for j in range(1, n):
        for i in draw(st.sets(st.integers(0, j - 1), min_size=1, max_size=3)):
            graph.add_edge(i, j, time=draw(st.integers(0, 8)) / 4)
    return graph


def network(graph: nx.DiGraph) -> tuple[Network, list[int]]:
    net = pipeline.network(scheduling._problem(graph, scheduling._devices(DEVICES)))
    return net, pipeline_order(net)


def sent_across(net: Network, order: list[int], k: int) -> float:
    """What a cut before ``order[k]`` sends, from the definition: each value whose unit is on one
    side, its largest edge to the readers on the other."""
    left = set(order[:k])
    total = 0.0
    for i, reads in enumerate(net.reads):
        here = net.unit_of[i] in left
        across = [cost for reader, cost in reads if (reader in left) != here]
        total += max(across, default=0.0)
    return total


@settings(max_examples=200, deadline=None)
@given(layered())
def test_each_cut_sends_what_crosses_it(graph: nx.DiGraph) -> None:
    net, order = network(graph)
    costs = _cut_costs(net, order)
    for k in range(1, len(order)):
        assert costs[k] == pytest.approx(sent_across(net, order, k)), k


@settings(max_examples=200, deadline=None)
@given(layered(), st.integers(1, 5), st.sampled_from([0.5, 0.75, 1.0, 1.1]))
def test_the_cheap_cuts_are_the_least_crossing_within_the_cap(
    graph: nx.DiGraph, most: int, share: float
) -> None:
    net, order = network(graph)
    crossing = _cut_costs(net, order)
    found = _cheap_runs(net, order, crossing, [0, 1], most, share)
    compute = [net.times[unit][0] for unit in order]
    cap = share * sum(compute) / 2

    def allowed(cuts: tuple[int, ...]) -> bool:
        bounds = [0, *cuts, len(order)]
        return all(sum(compute[a:b]) <= cap + 1e-9 for a, b in itertools.pairwise(bounds))

    for count in range(1, most + 1):
        splits = [
            cuts
            for cuts in itertools.combinations(range(1, len(order)), count - 1)
            if allowed(cuts)
        ]
        if not splits:
            assert count not in found
            continue
        runs = found[count]
        assert [unit for run in runs for unit in run] == order
        assert len(runs) == count and all(runs)
        cuts = tuple(itertools.accumulate(len(run) for run in runs[:-1]))
        assert allowed(cuts)
        least = min(sum(crossing[k] for k in split) for split in splits)
        assert sum(crossing[k] for k in cuts) == pytest.approx(least), count


def test_a_trade_evens_devices_no_one_way_move_can() -> None:
    """Two full devices (memory): no unit can move alone, but a slow one for a fast one can."""
    graph = nx.DiGraph()
    for name, time in (("a", 3.0), ("b", 3.0), ("c", 1.0), ("d", 1.0)):
        graph.add_node(name, time={"GPU": time}, memory=1.0)
    full = [{"name": f"GPU:{i}", "type": "GPU", "memory": 2.0} for i in range(2)]
    net = pipeline.network(scheduling._problem(graph, scheduling._devices(full)))
    slow = [0 if net.problem.nodes[nodes[0]] in "ab" else 1 for nodes in net.members]
    state = Loads(net, slow)
    assert max(state.load) == 6.0
    assert descend(state, Work(10_000)) and max(state.load) == 6.0  # nothing fits alone
    assert exchange(state, Work(10_000))
    assert sorted(state.load) == [4.0, 4.0]
    assert not exchange(state, Work(10_000))  # even now: no trade lowers the slowest
