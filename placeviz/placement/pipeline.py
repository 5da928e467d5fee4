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

from placeviz.placement.scheduling import _Problem


@dataclass
class _Units:
    """Colocation groups (and lone nodes) as units, in the order their first node comes."""

    members: list[list[int]]
    times: list[list[float]]  # [unit][device]
    memory: list[float]


def _units(problem: _Problem) -> _Units:
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


def loads(problem: _Problem, device: list[int]) -> list[float]:
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


def lower_bound(problem: _Problem) -> float:
    """No device can carry less than an even share of the fastest times, nor less than the
    slowest unit on its fastest device (edges ignored: they may all stay on one device)."""
    units = _units(problem)
    fastest = [min(row) for row in units.times]
    return max(sum(fastest) / len(problem.devices), max(fastest, default=0.0))


def _assign(problem: _Problem, units: _Units, unit_device: list[int]) -> list[int]:
    device = [0] * len(problem.nodes)
    for unit, d in zip(units.members, unit_device):
        for i in unit:
            device[i] = d
    return device


def _pack(units: _Units, order: list[int], limit: float, problem: _Problem) -> list[int] | None:
    """Consecutive units onto the devices in ``order``, each filled up to ``limit`` of compute
    (and its memory); None when they do not all fit."""
    unit_device = [-1] * len(units.members)
    k, load, used = 0, 0.0, 0.0
    for u in range(len(units.members)):
        while k < len(order):
            d = order[k]
            cost = units.times[u][d]
            if (
                not math.isinf(cost)
                and load + cost <= limit
                and used + units.memory[u] <= problem.devices[d].memory
            ):
                break
            k, load, used = k + 1, 0.0, 0.0
        if k == len(order):
            return None
        unit_device[u] = order[k]
        load += units.times[u][order[k]]
        used += units.memory[u]
    return unit_device


def _stage_order(problem: _Problem) -> list[int]:
    """Stages go to the fastest kind of device first (the CPU last, where there are GPUs)."""
    speed = [
        sum(row[d] for row in problem.times if not math.isinf(row[d]))
        for d in range(len(problem.devices))
    ]
    return sorted(range(len(problem.devices)), key=lambda d: (speed[d], d))


def _memory_ok(problem: _Problem, units: _Units, unit_device: list[int]) -> bool:
    used = [0.0] * len(problem.devices)
    for u, d in enumerate(unit_device):
        used[d] += units.memory[u]
    return all(used[d] <= dev.memory for d, dev in enumerate(problem.devices))


def search(problem: _Problem, deadline: float) -> tuple[list[int], float, int]:
    """(device per node, its largest load, candidate placements tried)."""
    units = _units(problem)
    order = _stage_order(problem)
    bound = lower_bound(problem)
    total = sum(min(row) for row in units.times) + 1e-12
    best_units: list[int] | None = None
    best = math.inf
    tried = 0
    low, high = bound, total * 2
    for _ in range(40):  # a binary search on the compute each stage may carry
        limit = (low + high) / 2
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
    problem: _Problem, units: _Units, unit_device: list[int], best: float, deadline: float
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


def _no_packing(problem: _Problem, units: _Units) -> Exception:
    from placeviz.placement.scheduling import InfeasibleScheduleError

    biggest = max(range(len(units.members)), key=lambda u: units.memory[u])
    names = ", ".join(repr(problem.nodes[i]) for i in units.members[biggest][:3])
    limits = ", ".join(f"{d.name} {d.memory:.0f}" for d in problem.devices)
    return InfeasibleScheduleError(
        f"The graph's {sum(units.memory):.0f} bytes do not fit the devices in stages "
        f"(the largest unit, {names}, holds {units.memory[biggest]:.0f}; limits: {limits})"
    )
