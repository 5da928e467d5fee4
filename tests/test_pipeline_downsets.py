"""The dynamic program over downsets against brute force: every chain of downsets, each stage on
a device of its own, priced from the definition (a stage's compute, the largest edge of each value
it reads from outside, and of each of its values read outside)."""

from __future__ import annotations

import math

import networkx as nx
from hypothesis import given, settings
from test_placement_search import DEVICES, pipelines

from placeviz.placement import pipeline, scheduling
from placeviz.placement.pipeline_downsets import DOWNSETS_PER_UNIT, downset_stages
from placeviz.placement.pipeline_moves import Network
from placeviz.placement.problem import Work


def stage_load(net: Network, stage: set[int], d: int) -> float:
    problem, unit_of = net.problem, net.unit_of
    load = sum(net.times[u][d] for u in stage)
    for i in range(len(problem.nodes)):
        inside = unit_of[i] in stage
        other = [cost for j, cost in problem.succs[i] if (unit_of[j] in stage) != inside]
        load += max(other, default=0.0)
    return load


def downsets(net: Network) -> list[frozenset[int]]:
    needs = [set() for _ in net.members]
    for i, preds in enumerate(net.problem.preds):
        for j, _ in preds:
            if net.unit_of[j] != net.unit_of[i]:
                needs[net.unit_of[i]].add(net.unit_of[j])
    found, todo = {frozenset()}, [frozenset()]
    while todo:
        below = todo.pop()
        for u in range(len(net.members)):
            if u not in below and needs[u] <= below and below | {u} not in found:
                found.add(below | {u})
                todo.append(below | {u})
    return sorted(found, key=len)


def best_chain(net: Network) -> float:
    """The least slowest stage over every chain of downsets and devices, each device once."""
    sets = downsets(net)
    everything = frozenset(range(len(net.members)))
    if everything not in sets:
        return math.inf  # the units' graph has a cycle: no chain reaches every unit

    def walk(below: frozenset[int], free: tuple[int, ...]) -> float:
        if below == everything:
            return 0.0
        best = math.inf
        for upto in sets:
            if len(upto) <= len(below) or not below < upto:
                continue
            stage = set(upto - below)
            for d in free:
                size = sum(net.memory[u] for u in stage)
                load = stage_load(net, stage, d)
                if size <= net.limit[d] and load < best:
                    rest = walk(upto, tuple(f for f in free if f != d))
                    best = min(best, max(load, rest))
        return best

    return walk(frozenset(), tuple(range(len(net.limit))))


@settings(max_examples=300, deadline=None)
@given(pipelines())
def test_the_program_finds_the_best_chain_of_downsets(graph: nx.DiGraph) -> None:
    net = pipeline.network(scheduling._problem(graph, scheduling._devices(DEVICES)))
    least = best_chain(net)
    device = downset_stages(net, math.inf, Work(math.inf))
    if math.isinf(least) or len(downsets(net)) > DOWNSETS_PER_UNIT * len(net.members) + 1:
        assert device is None
        return
    assert device is not None
    stages = {d: {u for u, e in enumerate(device) if e == d} for d in set(device)}
    assert max(stage_load(net, s, d) for d, s in stages.items()) == least
    for d, stage in stages.items():
        assert sum(net.memory[u] for u in stage) <= net.limit[d]
    # the stages in some order are the steps of a chain of downsets
    sets, below = downsets(net), frozenset()
    for _ in stages:
        below = next(
            below | s for s in stages.values() if s.isdisjoint(below) and below | s in sets
        )


def test_a_ceiling_below_every_chain_finds_none() -> None:
    graph = nx.DiGraph()
    graph.add_node("a", time={"GPU": 2.0, "CPU": 9.0}, memory=0.0)
    graph.add_node("b", time={"GPU": 2.0, "CPU": 9.0}, memory=0.0)
    graph.add_edge("a", "b", time=1.0)
    net = pipeline.network(scheduling._problem(graph, scheduling._devices(DEVICES)))
    assert downset_stages(net, 3.0, Work(math.inf)) is not None  # a | b: 3 and 3
    assert downset_stages(net, 2.9, Work(math.inf)) is None


def test_a_chain_too_long_for_the_budget_is_not_priced() -> None:
    """The stages the program would price are counted first: a budget short of them is spent
    only on the downsets (one each), not lost in a walk that could not finish."""
    graph = nx.DiGraph()
    for i in range(60):
        graph.add_node(i, time={"GPU": 1.0, "CPU": 8.0}, memory=0.0)
        if i:
            graph.add_edge(i - 1, i, time=0.5)
    net = pipeline.network(scheduling._problem(graph, scheduling._devices(DEVICES)))
    short = Work(1_000)
    assert downset_stages(net, 60.0, short) is None
    assert 1_000 - short.left == 60  # the downsets of a chain of 60, beside the empty one
    assert downset_stages(net, 60.0, Work(100_000)) is not None
