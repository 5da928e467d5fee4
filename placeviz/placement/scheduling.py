"""A scheduling core: place a task graph on devices, for one step's makespan or a pipeline's
throughput (``pipeline.py``).

``schedule(graph, devices)`` takes a ``networkx.DiGraph`` whose nodes carry ``time`` (seconds, or
a dict by device type; a missing type means the node cannot run there), ``memory`` (bytes held on
its device) and ``colocation`` (equal values share a device), and whose edges carry ``time`` (to
move the source's output to another device). Each device runs one node at a time; a node starts
once its predecessors have finished and their outputs have arrived.

For the makespan: list scheduling by earliest finish time (ETF/HEFT) in order of upward rank,
each node into the earliest idle gap of a device that it fits; then forward-backward improvement
and perturbed ranks until the time limit or a proven lower bound is met. Memory limits and
colocation are constraints of every pass, never repaired afterwards. Each node keeps why it went
where it did (the finish time it would have had on every other device that could take it).
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
import time as clock
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from placeviz.placement import pipeline, tighten
from placeviz.placement.problem import (
    DEFAULT_TYPE,
    Device,
    InfeasibleScheduleError,
    Problem,
    Work,
)
from placeviz.units import data_size, duration

# The search's default budgets, in steps of about the same cost (a makespan pass tries every
# node on every device it may take; the exact search checks one node's time window; a pipeline
# move recomputes the loads of the nodes it touches): each under a second on this project's
# 2-core machines, and the same result on any machine under any load. The pipeline's gives
# every graph of benchmarks/bench_dnn.py the placement 400,000 gave (200,000 lost 1% on one).
MAKESPAN_WORK = 540_000
PIPELINE_WORK = 300_000
GAP_SEARCH = 64  # a node that could start before more of a device's busy spans goes after them


@dataclass
class Schedule:
    """Where (and, for a step, when) each node runs, the objective's value and a proven lower
    bound on any placement's."""

    device: dict[Hashable, str]
    start: dict[Hashable, float]  # empty for the throughput objective
    finish: dict[Hashable, float]
    makespan: float | None  # the makespan objective's
    max_load: float | None  # the throughput objective's: the slowest pipeline stage
    lower_bound: float
    work: int  # the search's steps (``max_work``)
    _why: dict[Hashable, str] = field(default_factory=dict, repr=False)

    def explain(self, node: Hashable) -> str:
        """Why ``node`` runs where it does, against the devices it did not take."""
        return self._why[node]


def _devices(devices: int | Sequence[Mapping[str, Any]]) -> list[Device]:
    if isinstance(devices, int):
        if devices < 1:
            raise ValueError(f"schedule needs at least one device, not {devices}")
        return [Device(f"{DEFAULT_TYPE}:{i}") for i in range(devices)]
    found = [
        Device(str(d["name"]), str(d.get("type", DEFAULT_TYPE)), float(d.get("memory", math.inf)))
        for d in devices
    ]
    if not found:
        raise ValueError("schedule needs at least one device")
    return found


def _problem(graph: Any, devices: list[Device], copy_engines: bool = False) -> Problem:
    import networkx as nx

    try:
        nodes = list(nx.lexicographical_topological_sort(graph, key=_natural))
    except nx.NetworkXUnfeasible:
        cycle = nx.find_cycle(graph)
        raise InfeasibleScheduleError(f"The graph has a cycle: {cycle}") from None
    index = {node: i for i, node in enumerate(nodes)}
    times, memory, group_of = [], [], []
    groups: dict[Hashable, int] = {}
    for node in nodes:
        attrs = graph.nodes[node]
        given = attrs.get("time", 0.0)
        row = [
            float(given.get(d.type, math.inf)) if isinstance(given, Mapping) else float(given)
            for d in devices
        ]
        if all(math.isinf(t) for t in row):
            kinds = ", ".join(sorted({d.type for d in devices}))
            raise InfeasibleScheduleError(
                f"Node {node!r} cannot run on any device: its times name "
                f"{sorted(given) if isinstance(given, Mapping) else given}, the devices are {kinds}"
            )
        times.append(row)
        memory.append(float(attrs.get("memory", 0.0)))
        key = attrs.get("colocation")
        group_of.append(-1 if key is None else groups.setdefault(key, len(groups)))
    group_devices: list[list[int]] = [list(range(len(devices))) for _ in groups]
    group_memory = [0.0] * len(groups)
    for i, group in enumerate(group_of):
        if group >= 0:
            group_memory[group] += memory[i]
            group_devices[group] = [d for d in group_devices[group] if not math.isinf(times[i][d])]
    for key, group in groups.items():
        if not group_devices[group]:
            members = [nodes[i] for i, g in enumerate(group_of) if g == group]
            raise InfeasibleScheduleError(
                f"Colocation group {key!r} ({', '.join(map(repr, members))}) has no device that "
                "every member can run on"
            )
    preds: list[list[tuple[int, float]]] = [[] for _ in nodes]
    succs: list[list[tuple[int, float]]] = [[] for _ in nodes]
    for src, dst, attrs in graph.edges(data=True):
        cost = float(attrs.get("time", 0.0))
        preds[index[dst]].append((index[src], cost))
        succs[index[src]].append((index[dst], cost))
    return Problem(
        nodes,
        devices,
        times,
        memory,
        group_of,
        group_devices,
        group_memory,
        preds,
        succs,
        copy_engines,
    )


def _reversed(problem: Problem) -> Problem:
    """The same problem with every edge turned around (a schedule of it, read backwards in
    time, is a schedule of the original)."""
    return Problem(
        problem.nodes,
        problem.devices,
        problem.times,
        problem.memory,
        problem.group,
        problem.group_devices,
        problem.group_memory,
        problem.succs,
        problem.preds,
        problem.copy_engines,
    )


def _natural(node: Hashable) -> tuple[int, float, str]:
    """Ties in the topological order go by number, then by name (node 9 before node 10)."""
    if isinstance(node, int | float) and not isinstance(node, bool):
        return (0, float(node), "")
    return (1, 0.0, str(node))


def _upward_ranks(problem: Problem) -> list[float]:
    """Each node's longest path to an exit, with its fastest time and every edge's time."""
    rank = [0.0] * len(problem.nodes)
    for i in reversed(range(len(problem.nodes))):
        fastest = min(problem.times[i])
        rank[i] = fastest + max((cost + rank[j] for j, cost in problem.succs[i]), default=0.0)
    return rank


def _lower_bound(problem: Problem, ranks: list[float]) -> float:
    """The critical path (fastest times, no edge costs: they may be avoided), and the total work
    over the devices (fastest times)."""
    longest = [0.0] * len(problem.nodes)
    for i in range(len(problem.nodes)):
        ready = max((longest[p] for p, _ in problem.preds[i]), default=0.0)
        longest[i] = ready + min(problem.times[i])
    path = max(longest, default=0.0)
    work = sum(min(row) for row in problem.times) / len(problem.devices)
    whole = all(float(t).is_integer() for row in problem.times for t in row if not math.isinf(t))
    if whole and all(cost == 0 for edges in problem.preds for _, cost in edges):
        work = math.ceil(work - 1e-9)  # integer times: so is every makespan
    return max(path, work)


@dataclass
class _Pass:
    device: list[int]
    start: list[float]
    finish: list[float]
    makespan: float
    # per node: (device, candidates, waited on, whether ``fixed`` chose the device, and the
    # devices its memory did not fit: (device, bytes held, bytes needed))
    why: list[tuple[int, list[tuple[float, int]], int, bool, list[tuple[int, float, float]]]]


def _list_schedule(
    problem: Problem,
    priority: list[float],
    keep_why: bool,
    fixed: Sequence[int] | None = None,
) -> _Pass:
    """One pass: the ready node of highest priority goes where it finishes first, into the
    earliest idle gap of a device's timeline that it fits (so a later pass can leave a device
    idle for a node that matters more, as optimal schedules may). ``fixed``: a device per node
    (-1: free) it takes where its group, its kernels and memory allow."""
    n, p = len(problem.nodes), len(problem.devices)
    waiting = [len(preds) for preds in problem.preds]
    ready = [(-priority[i], i) for i in range(n) if waiting[i] == 0]  # a heap: highest first
    heapq.heapify(ready)
    busy: list[list[tuple[float, float, int]]] = [[] for _ in range(p)]  # (start, end, node)
    ends: list[list[float]] = [[] for _ in range(p)]  # busy's ends, sorted as its starts are
    copy_free = [0.0] * p  # with copy engines: when each device's last copy in ends
    arrived: dict[tuple[int, int], float] = {}  # (node, device): when its value got there
    used = [0.0] * p
    group_device: dict[int, int] = {}
    device, start, finish = [-1] * n, [0.0] * n, [0.0] * n
    why: list[Any] = [None] * n
    free_edges = problem.free_edges
    for _ in range(n):
        node = heapq.heappop(ready)[1]
        group = problem.group[node]
        if group in group_device:  # the group's room was taken with its first node
            allowed: Sequence[int] = [group_device[group]]
            need = 0.0
        elif group >= 0:  # the group's first node: its device must take the whole group
            allowed, need = problem.group_devices[group], problem.group_memory[group]
        else:
            allowed, need = range(p), problem.memory[node]
        best, best_finish, best_key, candidates, waited = -1, math.inf, math.inf, [], -1
        wanted = fixed[node] if fixed is not None else -1
        refused: list[tuple[int, float, float]] = []  # (device, bytes held, bytes needed)
        forced: tuple[int, float, int] | None = None
        if free_edges:  # the same on every device: once per node
            ready_at, ready_blocker = _ready(problem.preds[node], finish)
        for d in allowed:
            cost = problem.times[node][d]
            if math.isinf(cost):
                continue
            if used[d] + need > problem.devices[d].memory:
                if keep_why:
                    refused.append((d, used[d], need))
                continue
            if free_edges:
                begin, blocker = ready_at, ready_blocker
            else:  # inline: this runs once per node and device
                begin, blocker = 0.0, -1
                copy_at = copy_free[d]
                for pred, edge in problem.preds[node]:
                    if device[pred] == d:
                        arrives = finish[pred]
                    elif not problem.copy_engines:
                        arrives = finish[pred] + edge
                    elif (pred, d) in arrived:
                        arrives = arrived[(pred, d)]
                    else:  # a copy after the device's earlier ones, of the value all readers get
                        arrives = copy_at = max(finish[pred], copy_at) + problem.copy_time[pred]
                    if arrives > begin:
                        begin, blocker = arrives, pred
            timeline = busy[d]
            # The first gap it fits, from the first busy span that ends after it could start,
            # looking at GAP_SEARCH spans at most (then after the last: many nodes ready at
            # once, constants and variables, would otherwise each walk the whole timeline).
            first = bisect.bisect_right(ends[d], begin)
            if len(timeline) - first > GAP_SEARCH:
                last = timeline[-1]
                if last[1] > begin:
                    begin, blocker = last[1], last[2]
            else:
                for k in range(first, len(timeline)):
                    taken_start, taken_end, taken = timeline[k]
                    if begin + cost <= taken_start:
                        break
                    if taken_end > begin:
                        begin, blocker = taken_end, taken
            end = begin + cost
            if keep_why:
                candidates.append((end, d))
            if end + problem.ahead[node][d] < best_key:
                best, best_finish, best_key, waited = d, end, end + problem.ahead[node][d], blocker
            if d == wanted:
                forced = (d, end, blocker)
        if forced is not None:
            best, best_finish, waited = forced
        if best < 0:
            raise _infeasible(problem, node, group, used)
        device[node], start[node], finish[node] = (
            best,
            best_finish - problem.times[node][best],
            best_finish,
        )
        if problem.copy_engines:
            for pred, _ in problem.preds[node]:
                if device[pred] != best and (pred, best) not in arrived:
                    copy_free[best] = max(finish[pred], copy_free[best]) + problem.copy_time[pred]
                    arrived[(pred, best)] = copy_free[best]
        at = bisect.bisect(busy[best], (start[node], best_finish, node))
        busy[best].insert(at, (start[node], best_finish, node))
        ends[best].insert(at, best_finish)
        used[best] += need
        if group >= 0:
            group_device[group] = best
        if keep_why:
            why[node] = (best, candidates, waited, forced is not None, refused)
        for succ, _ in problem.succs[node]:
            waiting[succ] -= 1
            if waiting[succ] == 0:
                heapq.heappush(ready, (-priority[succ], succ))
    return _Pass(device, start, finish, max(finish, default=0.0), why)


def _ready(preds: list[tuple[int, float]], finish: list[float]) -> tuple[float, int]:
    """When the last of a node's predecessors ends, and which one it is (the first such): where
    edges are free, when its inputs are on every device."""
    begin, blocker = 0.0, -1
    for pred, _ in preds:
        if finish[pred] > begin:
            begin, blocker = finish[pred], pred
    return begin, blocker


def _infeasible(problem: Problem, node: int, group: int, used: list[float]) -> Exception:
    name = problem.nodes[node]
    state = ", ".join(
        f"{d.name} {used[k]:.0f}/{d.memory:.0f}" for k, d in enumerate(problem.devices)
    )
    if group >= 0:
        return InfeasibleScheduleError(
            f"Node {name!r} and its colocation group ({problem.group_memory[group]:.0f} bytes "
            f"together) fit on no device they can all run on (bytes used/limit: {state})"
        )
    return InfeasibleScheduleError(
        f"Node {name!r} ({problem.memory[node]:.0f} bytes) fits on no device it can run on "
        f"(bytes used/limit: {state})"
    )


def schedule(
    graph: Any,
    devices: int | Sequence[Mapping[str, Any]],
    *,
    objective: str = "makespan",
    time_limit: float | None = None,
    seed: int = 0,
    max_passes: int | None = None,
    max_work: int | None = None,
    copy_engines: bool = False,
    start_from: Mapping[Hashable, str] | None = None,
) -> Schedule:
    """Place ``graph``'s nodes on ``devices`` (a count of identical GPUs, or dicts with ``name``,
    ``type`` and ``memory``) for one step's makespan (and order them), or for a pipeline's
    throughput (``objective="throughput"``: the largest device load). The search is bounded by
    work, ``max_work`` steps (by default ``MAKESPAN_WORK`` or ``PIPELINE_WORK``), and
    stops early at the lower bound, so the result is the same on any machine; ``time_limit``
    (seconds) adds a wall-clock limit, and ``max_passes`` a count of the makespan's passes.
    ``copy_engines``: a device takes in one copy at a time and a value crosses to a device once
    (placeviz's runtime), rather than every edge a delay of its own. ``start_from``: a
    placement (node -> device name) the makespan's result is never worse than."""
    if objective not in ("makespan", "throughput"):
        raise ValueError(f"objective must be 'makespan' or 'throughput' (got {objective!r})")
    problem = _problem(graph, _devices(devices), copy_engines)
    deadline = math.inf if time_limit is None else clock.perf_counter() + time_limit
    if objective == "throughput":
        return _pipeline(
            problem, Work(PIPELINE_WORK if max_work is None else max_work, deadline), seed
        )
    per_pass = max(1, len(problem.nodes) * len(problem.devices))
    most = MAKESPAN_WORK if max_work is None else max_work
    if max_passes is not None:
        most = min(most, max_passes * per_pass)
    most = max(per_pass, most)  # the first pass at least
    work = Work(most, deadline)
    ranks = _upward_ranks(problem)
    bound = _lower_bound(problem, ranks)
    first = _list_schedule(problem, ranks, keep_why=False)
    work.spend(per_pass)
    best, best_priority, best_fixed = first.makespan, ranks, None
    # Placements the greedy passes may never reach, however long they search: all on one device
    # (communication can make spreading out a loss), and the caller's own (``start_from``).
    index = {node: i for i, node in enumerate(problem.nodes)}
    names = [d.name for d in problem.devices]
    seeds = [[d] * len(problem.nodes) for d in range(len(problem.devices))]
    if start_from:
        seeds.append([-1] * len(problem.nodes))
        for node, name in start_from.items():
            if node in index and name in names:
                seeds[-1][index[node]] = names.index(name)
    for fixed in seeds:
        if work.done():
            break
        try:
            tried = _list_schedule(problem, ranks, keep_why=False, fixed=fixed)
        except InfeasibleScheduleError:
            continue
        work.spend(per_pass)
        if tried.makespan < best:
            best, best_fixed = tried.makespan, fixed
    exact = tighten.applies(problem)
    if best > bound * (1 + 1e-12):
        # Where the exact search applies, it gets four fifths of the budget and what the
        # evolution leaves of its fifth.
        evolving = work.part(work.left // 5 if exact else work.left)
        found = _evolve(problem, ranks, first, bound, evolving, random.Random(seed))
        if found[0] < best:
            best, best_priority, best_fixed = found[0], found[1], None
    if exact and best > bound * (1 + 1e-12):
        starts = tighten.shorter(problem, best, bound, work)
        if starts is not None:  # earlier starts first: a list schedule no longer than it
            shorter = [-at for at in starts]
            if _list_schedule(problem, shorter, keep_why=False).makespan < best:
                best_priority, best_fixed = shorter, None
    # The best pass again, with reasons.
    found = _list_schedule(problem, best_priority, keep_why=True, fixed=best_fixed)
    return _step_schedule(problem, found, bound, most - work.left)


# The evolution of priorities: a population of priority lists, each scheduled and then justified
# (forward-backward improvement); the best few carried over, a few mutated from them, the rest
# crossed from one of them and one of the others, taking most of their places from the better.
POPULATION, ELITE, MUTANTS, INHERIT = 30, 6, 4, 0.7


def _evolve(
    problem: Problem,
    ranks: list[float],
    first: _Pass,
    bound: float,
    work: Work,
    rng: random.Random,
) -> tuple[float, list[float]]:
    """The shortest makespan found and its priorities. The first population is the chain of
    forward-backward improvement from the first pass (a pass that gains nothing followed by a
    perturbed one): a small budget spends all it has there."""
    backward = _reversed(problem)
    per_pass = len(problem.nodes) * len(problem.devices)
    target = bound * (1 + 1e-12)

    def forward_backward(found: _Pass) -> tuple[_Pass, list[float]]:
        """The reversed graph with the nodes that finished last going first, then the graph
        again in the order the reversed pass ended them: the pass and its priorities."""
        back = _list_schedule(backward, found.finish, keep_why=False)
        work.spend(2 * per_pass)
        return _list_schedule(problem, back.finish, keep_why=False), back.finish

    def justified(priority: list[float]) -> tuple[_Pass, list[float]]:
        """Schedule, then improve it forward and backward once."""
        ahead = _list_schedule(problem, priority, keep_why=False)
        work.spend(per_pass)
        again, improved = forward_backward(ahead)
        return (again, improved) if again.makespan <= ahead.makespan else (ahead, priority)

    def noisy(priority: list[float], noises: tuple[float, ...]) -> list[float]:
        noise = rng.choice(noises)
        return [r * (1.0 + noise * rng.random()) for r in priority]

    population: list[tuple[float, list[float]]] = []
    found, best = first, (first.makespan, ranks)
    while len(population) < POPULATION and best[0] > target and not work.done():
        tried, priority = forward_backward(found)
        if tried.makespan >= found.makespan:
            priority = noisy(ranks if rng.random() < 0.5 else best[1], (0.02, 0.05, 0.1, 0.2))
            tried = _list_schedule(problem, priority, keep_why=False)
            work.spend(per_pass)
        found = tried
        population.append((tried.makespan, _as_ranks(priority)))
        best = min(best, population[-1])
    while best[0] > target and not work.done():
        population.sort()
        elite, rest = population[:ELITE], population[ELITE:] or population[:ELITE]
        population = list(elite)
        bred: list[tuple[_Pass, list[float]]] = []
        while len(population) + len(bred) < ELITE + MUTANTS and not work.done():
            bred.append(justified(noisy(rng.choice(elite)[1], (0.02, 0.05, 0.1, 0.2, 0.5))))
        while len(population) + len(bred) < POPULATION and not work.done():
            better, other = rng.choice(elite)[1], rng.choice(rest)[1]
            bred.append(
                justified([b if rng.random() < INHERIT else o for b, o in zip(better, other)])
            )
        population += [(made.makespan, _as_ranks(priority)) for made, priority in bred]
        best = min(best, *population)
    return best


def _as_ranks(priority: list[float]) -> list[float]:
    """Priorities as their places in order (0 to 1), so that two lists can be crossed; of equal
    priorities the lower node goes first, as in ``_list_schedule``, so the order is kept."""
    order = sorted(range(len(priority)), key=lambda i: (priority[i], -i))
    places = [0.0] * len(priority)
    for place, i in enumerate(order):
        places[i] = place / len(priority)
    return places


def fixed_schedule(
    graph: Any,
    devices: int | Sequence[Mapping[str, Any]],
    placement: Mapping[Hashable, str],
    *,
    copy_engines: bool = False,
) -> Schedule:
    """``placement`` (every node -> a device name) timed as one step: when each node starts
    and ends on its device (for another objective's placement, as a pipeline split)."""
    problem = _problem(graph, _devices(devices), copy_engines)
    names = [d.name for d in problem.devices]
    fixed = [names.index(placement[node]) for node in problem.nodes]
    ranks = _upward_ranks(problem)
    found = _list_schedule(problem, ranks, keep_why=True, fixed=fixed)
    return _step_schedule(
        problem, found, _lower_bound(problem, ranks), len(problem.nodes) * len(problem.devices)
    )


def _step_schedule(problem: Problem, found: _Pass, bound: float, work: int) -> Schedule:
    names = [d.name for d in problem.devices]
    nodes = problem.nodes
    return Schedule(
        device={nodes[i]: names[found.device[i]] for i in range(len(nodes))},
        start={nodes[i]: found.start[i] for i in range(len(nodes))},
        finish={nodes[i]: found.finish[i] for i in range(len(nodes))},
        makespan=found.makespan,
        max_load=None,
        lower_bound=bound,
        work=work,
        _why={nodes[i]: _why(problem, names, found, i) for i in range(len(nodes))},
    )


def _pipeline(problem: Problem, work: Work, seed: int) -> Schedule:
    net = pipeline.network(problem)
    device, max_load, tried = pipeline.search(net, work, seed)
    names = [d.name for d in problem.devices]
    nodes = problem.nodes
    why = pipeline.explain(net, device)
    return Schedule(
        device={nodes[i]: names[d] for i, d in enumerate(device)},
        start={},
        finish={},
        makespan=None,
        max_load=max_load,
        lower_bound=pipeline.lower_bound(net),
        work=tried,
        _why={nodes[i]: text for i, text in why.items()},
    )


def _why(problem: Problem, names: list[str], found: _Pass, node: int) -> str:
    chosen, candidates, waited, forced, refused = found.why[node]
    group = problem.group[node]
    if group >= 0 and len(candidates) == 1:
        mates = [problem.nodes[i] for i in problem.members[group] if i != node]
        if mates:
            return f"colocated with {mates[0]!r}: its group is on {names[chosen]}"
    at = found.finish[node]
    others = sorted((end, d) for end, d in candidates if d != chosen)
    sooner = [(end, d) for end, d in others if end < at]
    if sooner and forced:
        end, d = sooner[0]
        text = (
            f"{names[chosen]} at {duration(at)}, where the best whole placement found puts it: "
            f"{names[d]} would finish this op sooner ({duration(end)}), but the placements that "
            f"spread the graph out so found a longer step"
        )
    elif sooner:
        end, d = sooner[0]
        later = end + problem.ahead[node][d] - at - problem.ahead[node][chosen]
        text = (
            f"{names[chosen]} at {duration(at)}: {names[d]} would finish it sooner "
            f"({duration(end)}), but what follows it would end {duration(later)} later (its "
            "output would cross devices)"
        )
    else:
        text = f"earliest finish: {names[chosen]} at {duration(at)}"
        if others:
            text += " vs " + ", ".join(f"{names[d]} at {duration(end)}" for end, d in others[:3])
    if waited >= 0 and any(pred == waited for pred, _ in problem.preds[node]):
        text += f" (waits for {problem.nodes[waited]!r})"
    elif waited >= 0:
        text += f" (after {problem.nodes[waited]!r} on {names[chosen]})"
    for d, held, need in refused:
        limit = problem.devices[d].memory
        held_of = f"{data_size(held)} of {data_size(limit)}"
        text += f"; {names[d]} full: {held_of} held, {data_size(need)} more"
    return text
