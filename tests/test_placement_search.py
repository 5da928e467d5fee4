"""The scheduling core's searches: bounded by work, not a clock (the same placement under any load),
optimal on problems small enough to solve by enumeration (both objectives), proven STG optima
reached, and the throughput objective's explanations true to its definition."""

from __future__ import annotations

import itertools
import math
import re
import threading
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from throughput import device_loads

import placeviz as pv
from placeviz.units import duration

STG = Path(__file__).resolve().parents[2] / "shared" / "data" / "stg"
DEVICES = [
    {"name": "GPU:0", "type": "GPU", "memory": 4.0},
    {"name": "GPU:1", "type": "GPU", "memory": 4.0},
    {"name": "CPU:0", "type": "CPU"},
]


def feasible(graph: nx.DiGraph, device: dict, devices: list[dict]) -> bool:
    kinds = {d["name"]: d["type"] for d in devices}
    used = dict.fromkeys(kinds, 0.0)
    classes: dict = {}
    for node, attrs in graph.nodes(data=True):
        if kinds[device[node]] not in attrs["time"]:
            return False
        used[device[node]] += attrs["memory"]
        if attrs.get("colocation") is not None:
            classes.setdefault(attrs["colocation"], set()).add(device[node])
    return all(used[d["name"]] <= d.get("memory", math.inf) for d in devices) and all(
        len(placed) == 1 for placed in classes.values()
    )


@st.composite
def pipelines(draw):
    n = draw(st.integers(2, 7))
    graph = nx.DiGraph()
    for i in range(n):
        times = {"CPU": draw(st.integers(2, 20)) / 2}
        if draw(st.integers(0, 5)):
            times["GPU"] = draw(st.integers(1, 8)) / 2
        graph.add_node(i, time=times, memory=float(draw(st.integers(0, 3))))
        if i % 3 == 1 and draw(st.booleans()):
            graph.nodes[i]["colocation"] = "pair"
            graph.nodes[i - 1]["colocation"] = "pair"
    for j in range(1, n):
        for i in draw(st.sets(st.integers(0, j - 1), min_size=1, max_size=2)):
            graph.add_edge(i, j, time=draw(st.integers(0, 6)) / 4)
    return graph


@settings(max_examples=150, deadline=None)
@given(pipelines())
def test_the_throughput_search_finds_the_optimum_of_problems_small_enough_to_enumerate(
    graph: nx.DiGraph,
) -> None:
    names = [d["name"] for d in DEVICES]
    best = min(
        (
            max(device_loads(graph, dict(zip(graph, placed)), DEVICES).values())
            for placed in itertools.product(names, repeat=len(graph))
            if feasible(graph, dict(zip(graph, placed)), DEVICES)
        ),
        default=None,
    )
    assume_feasible = best is not None
    if not assume_feasible:
        with pytest.raises(pv.placement.InfeasibleScheduleError):
            pv.placement.schedule(graph, DEVICES, objective="throughput")
        return
    note(f"{dict(graph.nodes(data=True))} {list(graph.edges(data='time'))}")
    found = pv.placement.schedule(graph, DEVICES, objective="throughput")
    assert feasible(graph, found.device, DEVICES)
    assert max(device_loads(graph, found.device, DEVICES).values()) == pytest.approx(found.max_load)
    assert found.max_load == pytest.approx(best)


def optimum_by_enumeration(graph: nx.DiGraph, processors: int) -> int:
    """The shortest makespan over every schedule with whole start times: at each time step, every
    subset of the ready nodes that fits the idle processors starts (idling included)."""
    time = {n: int(graph.nodes[n]["time"]) for n in graph}
    best = [sum(time.values())]

    def step(now: int, done: dict, running: dict) -> None:
        if len(done) + len(running) == len(graph) and not running:
            best[0] = min(best[0], now)
            return
        if now >= best[0]:
            return
        finished = {n: end for n, end in running.items() if end <= now}
        done = done | finished
        running = {n: end for n, end in running.items() if end > now}
        if len(done) == len(graph):
            best[0] = min(best[0], max(done.values(), default=0))
            return
        ready = [
            n
            for n in graph
            if n not in done and n not in running and all(p in done for p in graph.predecessors(n))
        ]
        for count in range(min(len(ready), processors - len(running)), -1, -1):
            for starting in itertools.combinations(ready, count):
                started = dict(running) | {n: now + time[n] for n in starting}
                if not started:
                    continue  # nothing runs and nothing starts: a later step is the same
                if any(end == now for end in started.values()):  # zero-time nodes end at once
                    step(now, done, started)
                else:
                    step(min(started.values()), done, started)

    step(0, {}, {})
    return best[0]


@st.composite
def task_graphs(draw):
    n = draw(st.integers(2, 7))
    graph = nx.DiGraph()
    for i in range(n):
        graph.add_node(i, time=float(draw(st.integers(1, 5))))
    for j in range(1, n):
        for i in draw(st.sets(st.integers(0, j - 1), max_size=2)):
            graph.add_edge(i, j)
    return graph


@settings(max_examples=150, deadline=None)
@given(task_graphs(), st.integers(2, 3))
def test_the_makespan_search_finds_the_optimum_on_identical_devices(
    graph: nx.DiGraph, processors: int
) -> None:
    found = pv.placement.schedule(graph, processors)
    assert found.makespan == optimum_by_enumeration(graph, processors)


def read_stg(path: Path) -> nx.DiGraph:
    graph = nx.DiGraph()
    for line in path.read_text().splitlines()[1:]:
        if line.lstrip().startswith("#"):
            break
        fields = [int(v) for v in line.split()]
        if fields:
            graph.add_node(fields[0], time=float(fields[1]))
            graph.add_edges_from((pred, fields[0]) for pred in fields[3:])
    return graph


@pytest.mark.parametrize(
    ("name", "processors"),
    # Proven optima that neither list scheduling nor the evolution of priorities reaches alone
    [("rand0093", 2), ("rand0018", 2), ("rand0108", 4), ("rand0168", 4)],
)
def test_proven_stg_optima_are_reached(name: str, processors: int) -> None:
    optima = STG / "optima" / f"Case50_{processors}_OPT.csv"
    if not optima.exists():
        pytest.skip("../shared/data/stg is not beside this checkout")
    rows = dict(line.split(",", 1) for line in optima.read_text().split())
    optimum = float(rows[f"50/{name}.stg"].split(",")[1])
    graph = read_stg(STG / "50" / f"{name}.stg")
    assert pv.placement.schedule(graph, processors).makespan == optimum


def busy(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(range(1000))


@pytest.mark.parametrize("objective", ["makespan", "throughput"])
def test_the_same_placement_however_busy_the_machine(objective: str) -> None:
    graph = nx.gnp_random_graph(60, 0.06, seed=3, directed=True)
    graph = nx.DiGraph((u, v) for u, v in graph.edges if u < v)
    for node in graph:
        graph.nodes[node]["time"] = {"GPU": 1.0 + node % 7, "CPU": 9.0 + node % 5}
    for u, v in graph.edges:
        graph.edges[u, v]["time"] = 0.5 + (u * v) % 3
    quiet = pv.placement.schedule(graph, DEVICES, objective=objective)
    stop = threading.Event()
    beside = [threading.Thread(target=busy, args=(stop,)) for _ in range(2)]
    for thread in beside:
        thread.start()
    try:
        loaded = pv.placement.schedule(graph, DEVICES, objective=objective)
    finally:
        stop.set()
        for thread in beside:
            thread.join()
    assert loaded.device == quiet.device
    assert loaded.work == quiet.work


def test_a_throughput_explanation_gives_the_load_with_and_without_the_node() -> None:
    graph = nx.DiGraph()
    for i, t in enumerate([3.0, 1.0, 2.0, 2.0, 1.0, 3.0]):
        graph.add_node(i, time={"GPU": t, "CPU": 4 * t}, memory=1.0)
        if i:
            graph.add_edge(i - 1, i, time=0.25 * i)
    found = pv.placement.schedule(graph, DEVICES, objective="throughput")
    before = device_loads(graph, found.device, DEVICES)
    for node in graph:
        text = found.explain(node)
        here = found.device[node]
        elsewhere = re.search(r"on (\S+), the best other device", text).group(1)
        moved = found.device | {node: elsewhere}
        after = device_loads(graph, moved, DEVICES)
        assert text.startswith(
            f"pipeline stage on {here}, which carries {duration(before[here])} with it, "
            f"{duration(after[here])} without it; on {elsewhere}, the best other device, it "
            f"would take {elsewhere} from {duration(before[elsewhere])} to "
            f"{duration(after[elsewhere])} and the slowest stage from "
            f"{duration(max(before.values()))} to {duration(max(after.values()))}"
        ), text
        # the best other device: no device that can take it gives a lower slowest stage
        for other in {d["name"] for d in DEVICES} - {here}:
            tried = found.device | {node: other}
            if feasible(graph, tried, DEVICES):
                assert (
                    max(device_loads(graph, tried, DEVICES).values()) >= max(after.values()) - 1e-9
                )
