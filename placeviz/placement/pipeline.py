"""The throughput objective: the graph runs as a pipeline, one stage per device, and the slowest
stage sets the pace.

A device's load is the time of its nodes plus, for each (source node, other device) pair that an
edge crosses, the largest such edge time, counted on both devices (the source sends its output
once to each device that reads it). The search splits the nodes, in topological order and with
each colocation group as one unit, into contiguous stages balanced by a binary search on the
load, then moves units across stage boundaries while the largest load falls.
"""

from __future__ import annotations

import math
import time as clock
from dataclasses import dataclass

from placeviz.placement.problem import InfeasibleScheduleError, Problem


@dataclass
class _Units:
    """Colocation groups (and lone nodes) as units, in the order their first node comes."""

    members: list[list[int]]
    times: list[list[float]]  # [unit][device]
    memory: list[float]


def _units(problem: Problem) -> _Units:
    first: dict[int, int] = {}
    members: list[list[int]] = []
    for i, group in enumerate(problem.group):  # problem.nodes are in topological order
        if group >= 0 and group in first:
            members[first[group]].append(i)
            continue
        if group >= 0:
            first[group] = len(members)
        members.append([i])
    devices = range(len(problem.devices))
    times = [[sum(problem.times[i][d] for i in unit) for d in devices] for unit in members]
    memory = [sum(problem.memory[i] for i in unit) for unit in members]
    return _Units(members, times, memory)


def loads(problem: Problem, device: list[int]) -> list[float]:
    """Each device's load when node ``i`` runs on ``device[i]``."""
    load = [0.0] * len(problem.devices)
    for i, d in enumerate(device):
        load[d] += problem.times[i][d]
        largest: dict[int, float] = {}
        for j, cost in problem.succs[i]:
            other = device[j]
            if other != d and cost > largest.get(other, -1.0):
                largest[other] = cost
        for other, cost in largest.items():
            load[d] += cost
            load[other] += cost
    return load


def lower_bound(problem: Problem) -> float:
    """No device can carry less than an even share of the fastest times, nor less than the
    slowest unit on its fastest device (edges ignored: they may all stay on one device)."""
    units = _units(problem)
    fastest = [min(row) for row in units.times]
    return max(sum(fastest) / len(problem.devices), max(fastest, default=0.0))


def _assign(problem: Problem, units: _Units, unit_device: list[int]) -> list[int]:
    device = [0] * len(problem.nodes)
    for unit, d in zip(units.members, unit_device):
        for i in unit:
            device[i] = d
    return device


def _pack(units: _Units, order: list[int], limit: float, problem: Problem) -> list[int] | None:
    """Consecutive units onto the devices in ``order``, each filled up to ``limit`` of compute
    (and its memory); a unit the current stage's device cannot run goes to the device that can
    with the least compute so far, and the stage goes on. None when they do not all fit."""
    p = len(problem.devices)
    unit_device = [-1] * len(units.members)
    load, used = [0.0] * p, [0.0] * p

    def fits(u: int, d: int) -> bool:
        cost = units.times[u][d]
        return (
            not math.isinf(cost)
            and load[d] + cost <= limit
            and used[d] + units.memory[u] <= problem.devices[d].memory
        )

    k = 0
    for u in range(len(units.members)):
        if k < len(order) and math.isinf(units.times[u][order[k]]):
            elsewhere = [d for d in range(p) if fits(u, d)]
            if not elsewhere:
                return None
            d = min(elsewhere, key=lambda d: (load[d] + units.times[u][d], d))
        else:
            while k < len(order) and not fits(u, order[k]):
                k += 1
            if k == len(order):
                return None
            d = order[k]
        unit_device[u] = d
        load[d] += units.times[u][d]
        used[d] += units.memory[u]
    return unit_device


def _stage_order(problem: Problem) -> list[int]:
    """Stages go first to the devices that can run the most nodes, the fastest of those first
    (GPUs before the CPU where both can run everything)."""

    def key(d: int) -> tuple[int, float, int]:
        runs = [row[d] for row in problem.times if not math.isinf(row[d])]
        return (-len(runs), sum(runs), d)

    return sorted(range(len(problem.devices)), key=key)


def _memory_ok(problem: Problem, units: _Units, unit_device: list[int]) -> bool:
    used = [0.0] * len(problem.devices)
    for u, d in enumerate(unit_device):
        used[d] += units.memory[u]
    return all(used[d] <= dev.memory for d, dev in enumerate(problem.devices))


def search(problem: Problem, deadline: float) -> tuple[list[int], float, int]:
    """(device per node, its largest load, candidate placements tried)."""
    units = _units(problem)
    order = _stage_order(problem)
    bound = lower_bound(problem)
    # Everything on the slowest device that can run it: no stage needs more compute than that.
    most = sum(max(t for t in row if not math.isinf(t)) for row in units.times) + 1e-12
    best_units: list[int] | None = None
    best = math.inf
    tried = 0
    low, high = bound, most
    for step in range(41):  # the loosest limit, then a binary search on the compute per stage
        limit = most if step == 0 else (low + high) / 2
        packed = _pack(units, order, limit, problem)
        if packed is None:
            low = limit
            continue
        high = limit
        tried += 1
        score = max(loads(problem, _assign(problem, units, packed)))
        if score < best:
            best, best_units = score, packed
    if best_units is None:
        raise _no_packing(problem, units)
    best_units, best, moves = _improve(problem, units, best_units, best, deadline)
    return _assign(problem, units, best_units), best, tried + moves


def _improve(
    problem: Problem, units: _Units, unit_device: list[int], best: float, deadline: float
) -> tuple[list[int], float, int]:
    """Move units at stage boundaries to the neighbouring stage while the largest load falls
    (or stays and the sum of squared loads falls)."""
    tried = 0

    def key(placed: list[int]) -> tuple[float, float]:
        load = loads(problem, _assign(problem, units, placed))
        return max(load), sum(x * x for x in load)

    current = key(unit_device)
    improved = True
    while improved and clock.perf_counter() < deadline:
        improved = False
        for u in range(len(unit_device)):
            neighbours = {unit_device[v] for v in (u - 1, u + 1) if 0 <= v < len(unit_device)}
            for d in neighbours - {unit_device[u]}:
                if math.isinf(units.times[u][d]):
                    continue
                moved = [*unit_device]
                moved[u] = d
                if not _memory_ok(problem, units, moved):
                    continue
                tried += 1
                score = key(moved)
                if score < current:
                    unit_device, current, improved = moved, score, True
                    break
            if clock.perf_counter() >= deadline:
                break
    return unit_device, current[0], tried


def _no_packing(problem: Problem, units: _Units) -> Exception:
    biggest = max(range(len(units.members)), key=lambda u: units.memory[u])
    names = ", ".join(repr(problem.nodes[i]) for i in units.members[biggest][:3])
    limits = ", ".join(f"{d.name} {d.memory:.0f}" for d in problem.devices)
    return InfeasibleScheduleError(
        f"The graph's {sum(units.memory):.0f} bytes do not fit the devices in stages "
        f"(the largest unit, {names}, holds {units.memory[biggest]:.0f}; limits: {limits})"
    )
