"""The throughput objective: the graph runs as a pipeline, one stage per device, and the slowest
stage sets the pace.

A device's load is the time of its nodes plus, for each (source node, other device) pair that an
edge crosses, the largest such edge time, counted on both devices (the source sends its output
once to each device that reads it). The search cuts the colocation units, in pipeline order,
into contiguous stages for every count of accelerators, and into more runs than devices where
little crosses the cuts (``pipeline_seeds.py``); on a graph with few branches it also takes the
best chain of stages over its downsets (``pipeline_downsets.py``), no slower than the best of
those cuts. From each it runs a steepest descent over unit moves (``pipeline_moves.py``) in
rounds that keep the better half, then kicks the best out of its local optimum and descends
again while the work budget lasts (and kicks still find better placements now and then),
keeping a tenth of it for trades of a unit of the slowest device for a unit of another, which
no one-way move can make where the other device has no room; a problem with few enough
placements is then searched in full, so its answer is its optimum. The budget counts node
loads computed, never seconds, so a placement is the same on any machine and under any load.
"""

from __future__ import annotations

import math
import random

from placeviz.placement.pipeline_downsets import downset_stages
from placeviz.placement.pipeline_moves import Loads, Network, descend, kick, polish, score
from placeviz.placement.pipeline_seeds import pipeline_order, seeds
from placeviz.placement.problem import InfeasibleScheduleError, Problem, Work
from placeviz.units import duration

FIRST_ROUND = 10_000  # node loads each starting placement's descent gets before the first cut
WANDER = 0.01  # a kicked placement this much slower than the current one is still walked from
RETURN_AFTER = 50  # kicks without a better placement before the walk goes back to the best
EXHAUSTIVE = 20_000  # placements of a problem small enough to search them all
POLISH_SHARE = 0.1  # of the budget, kept for trading units between the best placement's devices
DOWNSETS_SHARE = 0.25  # of the search's budget, the most the program over downsets may spend
STALE_KICKS = 300  # kicks in a row that lower no slowest stage: a small graph's search is over


def network(problem: Problem) -> Network:
    """The problem's colocation groups (and lone nodes) as units, in the order their first node
    comes."""
    first: dict[int, int] = {}
    members: list[list[int]] = []
    for i, group in enumerate(problem.group):  # problem.nodes are in topological order
        if group >= 0 and group in first:
            members[first[group]].append(i)
            continue
        if group >= 0:
            first[group] = len(members)
        members.append([i])
    return Network.of(problem, members)


def loads(problem: Problem, device: list[int]) -> list[float]:
    """Each device's load when node ``i`` runs on ``device[i]`` (-1: not placed yet, nothing
    counted for it). ``pipeline_moves.Loads`` keeps the same sums current move by move."""
    load = [0.0] * len(problem.devices)
    for i, d in enumerate(device):
        if d < 0:
            continue
        load[d] += problem.times[i][d]
        largest: dict[int, float] = {}
        for j, cost in problem.succs[i]:
            other = device[j]
            if other >= 0 and other != d and cost > largest.get(other, -1.0):
                largest[other] = cost
        for other, cost in largest.items():
            load[d] += cost
            load[other] += cost
    return load


def lower_bound(net: Network) -> float:
    """No device can carry less than an even share of the fastest times, nor less than the
    slowest unit on its fastest device (edges ignored: they may all stay on one device)."""
    fastest = [min(row) for row in net.times]
    return max(sum(fastest) / len(net.limit), max(fastest, default=0.0))


def _assign(problem: Problem, members: list[list[int]], unit_device: list[int]) -> list[int]:
    device = [0] * len(problem.nodes)
    for unit, d in zip(members, unit_device):
        for i in unit:
            device[i] = d
    return device


def search(net: Network, work: Work, seed: int = 0) -> tuple[list[int], float, int]:
    """(device per node, its largest load, steps taken)."""
    problem = net.problem
    budget, whole = work.left, work
    work = whole.part(budget * (1 - POLISH_SHARE))  # the search's; the rest is the polish's
    order = pipeline_order(net)
    alive = [Loads(net, start) for start in seeds(net, order)]
    if not alive:
        raise _no_packing(net)
    ceiling = min(max(state.load) for state in alive)
    staged = downset_stages(net, ceiling, work.part(work.left * DOWNSETS_SHARE))
    if staged is not None and all(staged != state.device for state in alive):
        alive.append(Loads(net, staged))
    settled = [False] * len(alive)
    share = FIRST_ROUND
    while len(alive) > 1 and not work.done():  # successive halving: the better half goes on
        for k, state in enumerate(alive):
            if not settled[k]:
                settled[k] = descend(state, work.part(share))
        ranked = sorted(range(len(alive)), key=lambda k: score(alive[k].load))[: len(alive) // 2]
        alive, settled = [alive[k] for k in ranked], [settled[k] for k in ranked]
        share *= 2
    best = min(alive, key=lambda state: score(state.load))
    descend(best, work)
    rng = random.Random(seed)
    stale = 0
    bound = lower_bound(net) * (1 + 1e-12)
    current = best
    while not work.done() and stale < STALE_KICKS and max(best.load) > bound:
        trial = current.copy()
        work.spend(len(trial.device))
        descend(trial, work, kick(trial, order, rng, work))
        stale += 1
        if max(trial.load) <= max(current.load) * (1 + WANDER):
            current = trial
        if score(trial.load) < score(best.load):
            if max(trial.load) < max(best.load) * (1 - 1e-12):
                stale = 0  # evener loads alone keep the best, not the search going
            best = trial
        elif stale % RETURN_AFTER == 0:
            current = best
    polish(best, whole)
    placed = _exhaustive(net, best.device, max(best.load), whole)
    device = _assign(problem, net.members, _in_stage_order(net, order, placed))
    return device, max(loads(problem, device)), budget - whole.left


def _exhaustive(net: Network, found: list[int], value: float, work: Work) -> list[int]:
    """On a problem with at most ``EXHAUSTIVE`` placements, every placement better than
    ``found`` is looked for (branch and bound: a partial placement's largest load only grows
    as units are added), so a small problem's answer is its optimum."""
    options = [
        [d for d in range(len(net.limit)) if not math.isinf(net.times[u][d])]
        for u in range(len(net.members))
    ]
    if math.prod(len(o) for o in options) > EXHAUSTIVE:
        return found
    best, best_value = list(found), value * (1 - 1e-12)
    device = [-1] * len(net.members)
    used = [0.0] * len(net.limit)

    def largest_load() -> float:
        work.spend(len(net.unit_of))
        return max(loads(net.problem, _assign(net.problem, net.members, device)))

    def place(unit: int) -> None:
        nonlocal best, best_value
        if unit == len(device):
            best, best_value = list(device), largest_load()
            return
        for d in options[unit]:
            if used[d] + net.memory[unit] > net.limit[d] or work.done():
                continue
            device[unit], used[d] = d, used[d] + net.memory[unit]
            if largest_load() < best_value:
                place(unit + 1)
            device[unit], used[d] = -1, used[d] - net.memory[unit]

    place(0)
    return best


def _in_stage_order(net: Network, order: list[int], unit_device: list[int]) -> list[int]:
    """Interchangeable devices (one type, one memory limit) renamed so that the pipeline's
    earlier stages take the lower numbers: stage 1 on GPU:0, not wherever the search left it."""
    devices = net.problem.devices
    kinds: dict[tuple[str, float], list[int]] = {}
    for d, spec in enumerate(devices):
        kinds.setdefault((spec.type, spec.memory), []).append(d)
    rename: dict[int, int] = {}
    taken: dict[tuple[str, float], int] = {}
    for unit in order:
        d = unit_device[unit]
        if d not in rename:
            kind = (devices[d].type, devices[d].memory)
            rename[d] = kinds[kind][taken.get(kind, 0)]
            taken[kind] = taken.get(kind, 0) + 1
    return [rename[d] for d in unit_device]


def explain(net: Network, device: list[int]) -> dict[int, str]:
    """Per node: its device's load with it and without it, and the slowest stage were its unit
    on the best other device that can take it."""
    problem = net.problem
    unit_device = [device[nodes[0]] for nodes in net.members]
    state = Loads(net, unit_device)
    names = [d.name for d in problem.devices]
    slowest = max(state.load)
    unlimited = Work(math.inf)
    why: dict[int, str] = {}
    for unit, nodes in enumerate(net.members):
        here = unit_device[unit]
        text = f"pipeline stage on {names[here]}, which carries {duration(state.load[here])}"
        best: tuple[tuple[float, float], int, list[float]] | None = None
        for to in range(len(names)):
            if to != here and net.can_take((unit,), to, state.used):
                after = state.price((unit,), to, unlimited)[0]
                if best is None or (score(after), to) < best[:2]:
                    best = (score(after), to, after)
        if best is not None:
            (elsewhere, _), to, after = best
            text += (
                f" with it, {duration(after[here])} without it; on {names[to]}, the best other "
                f"device, it would take {names[to]} from {duration(state.load[to])} to "
                f"{duration(after[to])} and the slowest stage from {duration(slowest)} to "
                f"{duration(elsewhere)}"
            )
        else:
            text += f" (slowest stage {duration(slowest)}); no other device can take it"
        for i in nodes:
            mates = [problem.nodes[j] for j in nodes if j != i]
            why[i] = text + (f"; colocated with {mates[0]!r}" if mates else "")
    return why


def _no_packing(net: Network) -> Exception:
    biggest = max(range(len(net.members)), key=net.memory.__getitem__)
    names = ", ".join(repr(net.problem.nodes[i]) for i in net.members[biggest][:3])
    limits = ", ".join(f"{d.name} {d.memory:.0f}" for d in net.problem.devices)
    return InfeasibleScheduleError(
        f"The graph's {sum(net.memory):.0f} bytes do not fit the devices in stages "
        f"(the largest unit, {names}, holds {net.memory[biggest]:.0f}; limits: {limits})"
    )
