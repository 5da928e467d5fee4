"""Moving colocation units between devices under the throughput objective, each move priced by
the few loads it changes, and the searches built on such moves: steepest descent from a
placement and kicks that leave a local optimum.

A node's share of the loads is its time on its device plus, per other device reading it, the
largest such edge, on both ends. Moving a unit changes the shares of its own nodes and of the
nodes that feed them, nothing else, so a move is priced by recomputing those alone.
"""

from __future__ import annotations

import math
import operator
import random
from collections.abc import Sequence
from dataclasses import dataclass

from placeviz.placement.problem import Problem, Work

Share = tuple[tuple[int, float], ...]  # (device, load) pairs one node adds


@dataclass
class Network:
    """What every placement of one problem shares: units, edges between them, who a move
    touches."""

    problem: Problem
    members: list[list[int]]  # the nodes of each unit
    unit_of: list[int]
    times: list[list[float]]  # [unit][device]
    memory: list[float]  # per unit
    limit: list[float]  # per device
    reads: list[list[tuple[int, float]]]  # per node: (reader's unit, edge), largest edge first
    touched: list[list[int]]  # per unit: the nodes whose share a move of it changes
    neighbours: list[list[int]]  # per unit: the units it exchanges values with
    edges: list[float]  # per unit: its edges to other units, summed (the most a move can save)

    @classmethod
    def of(cls, problem: Problem, members: list[list[int]]) -> Network:
        unit_of = [0] * len(problem.nodes)
        for unit, nodes in enumerate(members):
            for i in nodes:
                unit_of[i] = unit
        devices = range(len(problem.devices))
        reads = [
            sorted(
                ((unit_of[j], cost) for j, cost in problem.succs[i] if unit_of[j] != unit_of[i]),
                key=lambda edge: -edge[1],
            )
            for i in range(len(problem.nodes))
        ]
        touched, neighbours = [], []
        edges = [0.0] * len(members)
        for i in range(len(problem.nodes)):
            for reader, cost in reads[i]:
                edges[unit_of[i]] += cost
                edges[reader] += cost
        for unit, nodes in enumerate(members):
            feeders = {j for i in nodes for j, _ in problem.preds[i]} - set(nodes)
            touched.append(sorted(nodes) + sorted(feeders))
            near = {unit_of[j] for j in feeders}
            near |= {reader for i in nodes for reader, _ in reads[i]}
            neighbours.append(sorted(near - {unit}))
        return cls(
            problem,
            members,
            unit_of,
            [[sum(problem.times[i][d] for i in nodes) for d in devices] for nodes in members],
            [sum(problem.memory[i] for i in nodes) for nodes in members],
            [d.memory for d in problem.devices],
            reads,
            touched,
            neighbours,
            edges,
        )

    def can_take(self, units: tuple[int, ...], device: int, used: list[float]) -> bool:
        return (
            all(not math.isinf(self.times[u][device]) for u in units)
            and used[device] + sum(self.memory[u] for u in units) <= self.limit[device]
        )


def score(load: list[float]) -> tuple[float, float]:
    """The slowest stage first; among equals, the more even loads (a step towards lowering
    the slowest stage when several tie)."""
    return max(load), sum(map(operator.mul, load, load))


class Loads:
    """A placement of units and every device's load, kept current move by move."""

    def __init__(self, net: Network, device: list[int]) -> None:
        self.net = net
        self.device = list(device)
        nodes = range(len(net.unit_of))
        self.shares: list[Share] = [()] * len(nodes)  # nothing counted yet
        self.load = [0.0] * len(net.limit)
        self.load, self.shares = self._repriced(nodes, Work(math.inf))
        self.used = [0.0] * len(net.limit)
        for unit, d in enumerate(self.device):
            self.used[d] += net.memory[unit]

    def copy(self) -> Loads:
        new = object.__new__(Loads)
        new.net = self.net
        new.device, new.shares = list(self.device), list(self.shares)
        new.load, new.used = list(self.load), list(self.used)
        return new

    def price(
        self, units: tuple[int, ...], to: int, work: Work
    ) -> tuple[list[float], list[int], list[Share]]:
        """The loads after ``units`` move to ``to`` (the placement itself unchanged), with what
        ``apply`` needs."""
        device = self.device
        was = [device[u] for u in units]
        for u in units:
            device[u] = to
        nodes = self._touched(units)
        load, shares = self._repriced(nodes, work)
        for u, d in zip(units, was):
            device[u] = d
        return load, nodes, shares

    def price_trade(self, u: int, v: int, work: Work) -> list[float]:
        """The loads after units ``u`` and ``v`` trade devices (the placement itself
        unchanged)."""
        device = self.device
        here, there = device[u], device[v]
        device[u], device[v] = there, here
        load, _ = self._repriced(self._touched((u, v)), work)
        device[u], device[v] = here, there
        return load

    def _touched(self, units: tuple[int, ...]) -> list[int]:
        """The nodes whose shares moving ``units`` changes, in order."""
        touched = self.net.touched
        if len(units) == 1:
            return touched[units[0]]
        return sorted({i for u in units for i in touched[u]})

    def _repriced(self, nodes: Sequence[int], work: Work) -> tuple[list[float], list[Share]]:
        """The loads with ``nodes``' shares recomputed for the placement as it now stands. A node's
        share: its compute on its unit's device, plus the largest edge to each other device that
        reads it, sent (on its device) and received (on the reader's)."""
        load = list(self.load)
        shares = []
        old, device, net = self.shares, self.device, self.net
        unit_of, times, reads_of = net.unit_of, net.problem.times, net.reads
        for i in nodes:
            for d, amount in old[i]:
                load[d] -= amount
            here = device[unit_of[i]]
            own = times[i][here]
            reads = reads_of[i]
            if not reads:  # read in its own unit only
                load[here] += own
                shares.append(((here, own),))
                continue
            sent: list[tuple[int, float]] = []
            seen = 1 << here
            for reader, cost in reads:  # largest edge first: the first per device counts
                there = device[reader]
                if not seen >> there & 1:
                    seen |= 1 << there
                    own += cost
                    sent.append((there, cost))
                    load[there] += cost
            load[here] += own
            shares.append(((here, own), *sent))
        work.spend(len(nodes))
        return load, shares

    def apply(
        self,
        units: tuple[int, ...],
        to: int,
        load: list[float],
        nodes: list[int],
        shares: list[Share],
    ) -> None:
        for u in units:
            self.used[self.device[u]] -= self.net.memory[u]
            self.used[to] += self.net.memory[u]
            self.device[u] = to
        for i, share in zip(nodes, shares):
            self.shares[i] = share
        self.load = load

    def move(self, units: tuple[int, ...], to: int, work: Work) -> None:
        self.apply(units, to, *self.price(units, to, work))

    def slowest(self) -> int:
        return max(range(len(self.load)), key=self.load.__getitem__)

    def candidate_moves(self) -> list[tuple[int, ...]]:
        """Moves that can lower the slowest device: its units, alone or with a neighbour that
        shares it, and the units it exchanges values with (where they are changes what it
        sends and receives)."""
        net, device = self.net, self.device
        slowest = self.slowest()
        moves: list[tuple[int, ...]] = []
        near: set[int] = set()
        for unit, d in enumerate(device):
            if d != slowest:
                continue
            moves.append((unit,))
            for other in net.neighbours[unit]:
                if device[other] == slowest:
                    moves.append((unit, other))
                else:
                    near.add(other)
        moves.extend((unit,) for unit in sorted(near))
        return moves


def _improves(found: tuple[float, float], current: tuple[float, float]) -> bool:
    tolerance = 1e-12 * max(1.0, current[0])
    return found[0] < current[0] - tolerance or (
        found[0] <= current[0] + tolerance and found[1] < current[1] - tolerance
    )


def descend(state: Loads, work: Work, frozen: frozenset[int] = frozenset()) -> bool:
    """Descent on ``score`` until no candidate move improves it; False if the budget ran out
    first. Each scan prices every candidate move, applies the best, then the others that still
    improve in the order they scored (priced again: the loads have changed), none moving a unit
    twice. ``frozen`` units stay where they are (a kick's, which the descent would undo)."""
    net = state.net
    current = score(state.load)
    while not work.done():
        tolerance = 1e-12 * max(1.0, current[0])
        improving: list[tuple[tuple[float, float], tuple[int, ...], int]] = []
        work.spend(len(state.device))  # finding the candidates walks every unit
        ceiling = current[0] + tolerance
        load, used, limit = state.load, state.used, net.limit
        for units in state.candidate_moves():
            if frozen and frozen.intersection(units):
                continue
            here = state.device[units[0]]
            if len(units) == 1:
                times, shed, size = net.times[units[0]], net.edges[units[0]], net.memory[units[0]]
            else:
                times = [sum(column) for column in zip(*(net.times[u] for u in units))]
                shed = sum(net.edges[u] for u in units)
                size = sum(net.memory[u] for u in units)
            for to in range(len(load)):
                # The most ``to`` can shed is the units' edges: past the slowest, not priced
                # (nor where a unit cannot run: its time there is infinite).
                if to == here or load[to] + times[to] - shed > ceiling:
                    continue
                if used[to] + size > limit[to]:
                    continue
                found = score(state.price(units, to, work)[0])
                if _improves(found, current):
                    improving.append((found, units, to))
        if not improving:
            return True
        improving.sort()
        moved: set[int] = set()
        for _, units, to in improving:
            if moved.intersection(units) or not state.net.can_take(units, to, state.used):
                continue
            priced = state.price(units, to, work)
            found = score(priced[0])
            if _improves(found, current):
                state.apply(units, to, *priced)
                moved.update(units)
                current = found
    return False


def exchange(state: Loads, work: Work) -> bool:
    """The best trade of a unit of the slowest device for a unit of another device, applied if it
    improves ``score``; False if none does or the budget ran out. A descent moves units one way
    only, so it cannot trade a unit for a smaller one where the other device has no room (memory,
    or load) for the first alone."""
    net, device, load, used = state.net, state.device, state.load, state.used
    limit = net.limit
    current = score(load)
    slowest = state.slowest()
    best: tuple[tuple[float, float], int, int] | None = None
    for u in [u for u, d in enumerate(device) if d == slowest]:
        work.spend(len(device))  # the trades considered walk every unit
        if work.done():
            return False
        mine = net.times[u]
        for v, there in enumerate(device):
            theirs = net.times[v]
            if there == slowest or math.isinf(mine[there]) or math.isinf(theirs[slowest]):
                continue
            # The most either side can shed is both units' edges: past the slowest, not priced.
            shed = net.edges[u] + net.edges[v]
            if load[slowest] - mine[slowest] + theirs[slowest] - shed >= current[0]:
                continue
            if load[there] - theirs[there] + mine[there] - shed >= current[0]:
                continue
            size = net.memory[u] - net.memory[v]
            if used[there] + size > limit[there] or used[slowest] - size > limit[slowest]:
                continue
            found = score(state.price_trade(u, v, work))
            if _improves(found, current) and (best is None or found < best[0]):
                best = (found, u, v)
    if best is None:
        return False
    _, u, v = best
    there = device[v]
    state.move((u,), there, work)
    state.move((v,), slowest, work)
    return True


def polish(state: Loads, work: Work) -> None:
    """Descents with trades between them, until neither improves or the budget runs out."""
    while descend(state, work) and exchange(state, work):
        pass


SHIFT_MOST = 32  # units a kick moves across a stage boundary at most


def kick(state: Loads, order: list[int], rng: random.Random, work: Work) -> frozenset[int]:
    """A step out of a local optimum: a stage boundary (in pipeline ``order``) moved by a few
    units, or one to two units of the slowest device, some with a neighbour beside them, to
    random devices that can take them, or one of them or a unit it exchanges values with
    swapped with a unit of another device. Returns the units moved."""
    if rng.random() < 1 / 3:
        return frozenset(_shift(state, order, rng, work))
    net, device = state.net, state.device
    top = max(state.load) * (1 - 1e-12)
    slowest = rng.choice([d for d, load in enumerate(state.load) if load >= top])  # one of ties
    on_it = [u for u, d in enumerate(device) if d == slowest]
    moved: set[int] = set()
    for _ in range(rng.randint(1, 2)):
        unit = rng.choice(on_it)
        if device[unit] != slowest:
            continue
        if rng.random() < 0.5:  # it, or a unit it exchanges values with, trades places
            near = [unit, *net.neighbours[unit]]
            moved.update(_swap(state, rng.choice(near), rng, work))
            continue
        beside = [o for o in net.neighbours[unit] if device[o] == slowest and rng.random() < 0.5]
        group = (unit, *beside)
        options = [
            d for d in range(len(state.load)) if d != slowest and net.can_take(group, d, state.used)
        ]
        if options:
            state.move(group, rng.choice(options), work)
            moved.update(group)
    return frozenset(moved)


def _swap(state: Loads, unit: int, rng: random.Random, work: Work) -> tuple[int, ...]:
    """``unit`` and a random unit of another device trade places, where both can run and fit."""
    net, device, used = state.net, state.device, state.used
    here = device[unit]
    others = [
        v
        for v, there in enumerate(device)
        if there != here
        and not math.isinf(net.times[unit][there])
        and not math.isinf(net.times[v][here])
        and used[there] - net.memory[v] + net.memory[unit] <= net.limit[there]
        and used[here] - net.memory[unit] + net.memory[v] <= net.limit[here]
    ]
    if not others:
        return ()
    other = rng.choice(others)
    there = device[other]
    state.move((other,), here, work)
    state.move((unit,), there, work)
    return (unit, other)


def _shift(state: Loads, order: list[int], rng: random.Random, work: Work) -> tuple[int, ...]:
    """Up to ``SHIFT_MOST`` units on one side of a random stage boundary to the other side."""
    device = state.device
    cuts = [k for k in range(1, len(order)) if device[order[k]] != device[order[k - 1]]]
    if not cuts:
        return ()
    k = rng.choice(cuts)
    before, after = device[order[k - 1]], device[order[k]]
    width = rng.randint(1, SHIFT_MOST)
    if rng.random() < 0.5:
        run = tuple(u for u in order[max(0, k - width) : k] if device[u] == before)
        to = after
    else:
        run = tuple(u for u in order[k : k + width] if device[u] == after)
        to = before
    if not state.net.can_take(run, to, state.used):
        return ()
    state.move(run, to, work)
    return run
