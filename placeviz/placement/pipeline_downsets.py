"""The best chain of stages over downsets: each stage the units between one downset (a set of
units that holds every predecessor of its units) and a larger one, on a device of its own, the
slowest stage as fast as it can be (a dynamic program over the downsets, as Tarnawski et al.,
NeurIPS 2020, place DNN pipelines).

A stage need not be contiguous in pipeline order: one branch of a residual block may go with the
stage after the other. On a graph with few branches (its downsets are not many more than its
units) the program is cheap and finds what no contiguous cut can, e.g. a stage of one unit that
relays a value read by two stages, so that neither pays both its receiving and its sending. A
stage's load counts the rest of the graph as one device: exact but where a value of the stage is
read by two later stages (it is sent twice), which the descent from the chain then sees.
"""

from __future__ import annotations

import bisect
import itertools
import math

from placeviz.placement.pipeline_moves import Network
from placeviz.placement.problem import Work

DOWNSETS_PER_UNIT = 2  # at most, on average: wider graphs have too many for the program
PLANS_MOST = 64  # combinations of devices used per downset, at most
WORK_PER_STAGE = 3  # work a stage costs to price, about (2.2-2.8 measured on bench_dnn's graphs)


# Per downset: per count of devices used from each class, the slowest stage of the best chain
# that reaches it, and the step there (the downset before, the counts there, the device class).
Plans = dict[tuple[int, ...], tuple[float, tuple[int, tuple[int, ...], int] | None]]


def downset_stages(net: Network, ceiling: float, work: Work) -> list[int] | None:
    """A device per unit, each device's units the difference of two nested downsets, with no
    stage's load above ``ceiling``; None where the units' graph has a cycle (colocated forward
    and backward ops), too many downsets or stages to price for ``work``, or no such chain."""
    n = len(net.members)
    classes = _device_classes(net)
    if math.prod(len(devices) + 1 for devices in classes) > PLANS_MOST:
        return None
    lattice = _Lattice.of(net, classes, DOWNSETS_PER_UNIT * n + 1, work)
    if lattice is None:
        return None
    full = lattice.index.get((1 << n) - 1)
    if full is None or WORK_PER_STAGE * _stages_at_most(lattice, ceiling) > work.left:
        return None  # a cycle; or a long chain, whose stages would cost more than the budget
    best = _best_chains(net, lattice, classes, ceiling, work)
    if best is None or not best[full]:
        return None
    return _placement(lattice, classes, best, full, n)


def _best_chains(
    net: Network, lattice: _Lattice, classes: list[list[int]], ceiling: float, work: Work
) -> list[Plans] | None:
    """Every downset's plans, each downset's stages priced up from it once its own plans are
    final (its subsets come first); None if the budget ran out."""
    counts = [len(devices) for devices in classes]
    best: list[Plans] = [{} for _ in lattice.sets]
    best[0][(0,) * len(classes)] = (0.0, None)
    seen = [-1] * len(lattice.sets)
    devices_in_all = sum(counts)
    total = lattice.fastest[-1]  # the whole graph's (the last downset) on its fastest classes
    for x in range(len(lattice.sets)):
        plans = _undominated(best[x])
        if not plans:
            continue
        below, frontier = lattice.sets[x], lattice.frontier[x]
        compute_x, blocked_x, fastest_x = lattice.compute[x], lattice.blocked[x], lattice.fastest[x]
        stack = list(lattice.children[x])
        for y in stack:
            seen[y] = x
        while stack:
            y = stack.pop()
            if lattice.fastest[y] - fastest_x > ceiling:
                continue  # nor can any larger downset's stage be within the ceiling
            for z in lattice.children[y]:
                if seen[z] != x:
                    seen[z] = x
                    stack.append(z)
            work.spend(len(frontier) + 1)
            if work.done():
                return None
            transfer = _transfers(net, below, lattice.sets[y], frontier, lattice.sends[y])
            size = lattice.memory[y] - lattice.memory[x]
            # devices the rest needs at least, were each as loaded as the ceiling allows
            rest = (total - lattice.fastest[y]) / ceiling if ceiling > 0 else 0.0
            reached = best[y]
            for c, devices in enumerate(classes):
                if lattice.blocked[y][c] != blocked_x[c]:
                    continue  # a unit of the stage cannot run on this class of device
                load = lattice.compute[y][c] - compute_x[c] + transfer
                if load > ceiling or size > net.limit[devices[0]]:
                    continue
                for used, slowest in plans:
                    if used[c] == counts[c] or devices_in_all - sum(used) - 1 < rest - 1e-9:
                        continue
                    more = (*used[:c], used[c] + 1, *used[c + 1 :])
                    value = slowest if slowest > load else load
                    known = reached.get(more)
                    if known is None or value < known[0]:
                        reached[more] = (value, (x, used, c))
    return best


def _placement(
    lattice: _Lattice, classes: list[list[int]], best: list[Plans], full: int, units: int
) -> list[int]:
    """The best chain's stages, walked back from the whole graph, each on the next device of
    its class."""
    used = min(best[full], key=lambda plan: best[full][plan][0])
    device = [-1] * units
    taken = [0] * len(classes)
    y = full
    while (step := best[y][used][1]) is not None:
        x, used, c = step
        stage = lattice.sets[y] & ~lattice.sets[x]
        d = classes[c][taken[c]]
        taken[c] += 1
        for unit in range(len(device)):
            if stage >> unit & 1:
                device[unit] = d
        y = x
    return device


def _stages_at_most(lattice: _Lattice, ceiling: float) -> int:
    """How many stages the program may price: per downset, the downsets whose compute (each
    unit at its fastest) is at most ``ceiling`` above its own, its supersets among them."""
    fastest = sorted(lattice.fastest)
    return sum(
        bisect.bisect_right(fastest, own + ceiling) - bisect.bisect_left(fastest, own)
        for own in lattice.fastest
    )


def _undominated(plans: Plans) -> list[tuple[tuple[int, ...], float]]:
    """The plans no other beats with no more devices of any class and no slower stage."""
    kept: list[tuple[tuple[int, ...], float]] = []
    for used, (slowest, _) in sorted(plans.items(), key=lambda plan: (plan[1][0], sum(plan[0]))):
        if not any(v <= slowest and all(a <= b for a, b in zip(u, used)) for u, v in kept):
            kept.append((used, slowest))
    return kept


def _transfers(net: Network, below: int, upto: int, frontier: list[int], sends: float) -> float:
    """What the stage ``upto`` minus ``below`` receives from ``below``'s frontier nodes and
    sends past ``upto``: ``sends`` (the frontier of ``upto``) less what ``below``'s nodes send
    past it."""
    received = 0.0
    for node in frontier:
        into = past = 0.0
        for reader, cost in net.reads[node]:  # largest first
            if upto >> reader & 1:
                if not below >> reader & 1 and cost > into:
                    into = cost
            elif cost > past:
                past = cost
        received += into
        sends -= past
    return received + sends


class _Lattice:
    """The downsets of the units' graph, each after its subsets (as bit sets of units), with
    what a stage between two of them needs: compute per device class, memory, the frontier
    (nodes with readers outside) and what it sends past itself."""

    def __init__(self) -> None:
        self.sets: list[int] = [0]
        self.index: dict[int, int] = {0: 0}
        self.children: list[list[int]] = []
        self.compute: list[list[float]] = []
        self.blocked: list[list[int]] = []  # units that cannot run on each class
        self.fastest: list[float] = [0.0]  # each unit on its fastest class
        self.memory: list[float] = [0.0]
        self.frontier: list[list[int]] = [[]]  # nodes read outside the downset
        self.sends: list[float] = [0.0]  # their largest edges outside, summed

    @classmethod
    def of(cls, net: Network, classes: list[list[int]], most: int, work: Work) -> _Lattice | None:
        n = len(net.members)
        problem, unit_of = net.problem, net.unit_of
        needs = [0] * n  # per unit, its predecessors' units
        needed_by: list[set[int]] = [set() for _ in range(n)]
        for i in range(len(problem.nodes)):
            for j, _ in problem.preds[i]:
                if unit_of[j] != unit_of[i]:
                    needs[unit_of[i]] |= 1 << unit_of[j]
                    needed_by[unit_of[j]].add(unit_of[i])
        times = [[net.times[u][devices[0]] for devices in classes] for u in range(n)]
        lattice = cls()
        lattice.compute.append([0.0] * len(classes))
        lattice.blocked.append([0] * len(classes))
        ready = [[u for u in range(n) if not needs[u]]]  # per downset, the units it may take next
        x = 0
        while x < len(lattice.sets):
            below = lattice.sets[x]
            kids = []
            for unit in ready[x]:
                upto = below | 1 << unit
                y = lattice.index.get(upto)
                if y is None:
                    if len(lattice.sets) == most:
                        return None
                    work.spend(1)
                    y = lattice._add(net, x, unit, upto, times[unit])
                    freed = sorted(v for v in needed_by[unit] if not needs[v] & ~upto)
                    ready.append([u for u in ready[x] if u != unit] + freed)
                kids.append(y)
            lattice.children.append(kids)
            x += 1
        return lattice

    def _add(self, net: Network, x: int, unit: int, upto: int, times: list[float]) -> int:
        y = len(self.sets)
        self.index[upto] = y
        self.sets.append(upto)
        self.compute.append(
            [was + (0.0 if math.isinf(t) else t) for was, t in zip(self.compute[x], times)]
        )
        self.blocked.append([was + math.isinf(t) for was, t in zip(self.blocked[x], times)])
        self.fastest.append(self.fastest[x] + min(times))
        self.memory.append(self.memory[x] + net.memory[unit])
        frontier, sends = [], 0.0
        for node in itertools.chain(self.frontier[x], net.members[unit]):
            past = next((cost for reader, cost in net.reads[node] if not upto >> reader & 1), 0.0)
            if past:
                frontier.append(node)
                sends += past
        self.frontier.append(frontier)
        self.sends.append(sends)
        return y


def _device_classes(net: Network) -> list[list[int]]:
    """Devices that are interchangeable (the same time for every unit, the same memory)."""
    classes: dict[tuple[tuple[float, ...], float], list[int]] = {}
    for d, limit in enumerate(net.limit):
        key = (tuple(times[d] for times in net.times), limit)
        classes.setdefault(key, []).append(d)
    return list(classes.values())
