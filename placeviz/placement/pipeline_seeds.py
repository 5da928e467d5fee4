"""Where the throughput search starts: the units cut, in pipeline order, into contiguous stages
on the first g accelerators for every g, some balanced by compute alone, some by compute and the
transfers each stage would send and receive.

Pipeline order is the order data flows through the graph: a unit goes at the depth of its
first node that reads something, and a unit of sources only (weights, inputs not colocated with
their reader) just before its first reader, so that a cut between stages crosses few edges.
"""

from __future__ import annotations

import math

from placeviz.placement.pipeline_moves import Network

BISECTION_STEPS = 24  # the balanced limit found to 2**-24 of the range: finer changes nothing


def pipeline_order(net: Network) -> list[int]:
    problem = net.problem
    depth = [0.0] * len(problem.nodes)
    for i in range(len(problem.nodes)):  # problem.nodes are in a topological order
        depth[i] = max((depth[j] + 1 for j, _ in problem.preds[i]), default=0.0)
    for i in reversed(range(len(problem.nodes))):
        if not problem.preds[i] and problem.succs[i]:
            depth[i] = min(depth[j] for j, _ in problem.succs[i]) - 0.5
    first = [min((depth[i], i) for i in nodes) for nodes in net.members]
    return sorted(range(len(net.members)), key=first.__getitem__)


def by_compute(net: Network, order: list[int], stages: list[int], limit: float) -> list[int] | None:
    """Units in order onto ``stages``, each up to ``limit`` of compute (the last takes what is
    left) and its memory; None if a unit fits nowhere it may go."""
    device = [-1] * len(order)
    stage, compute, used = 0, 0.0, 0.0
    for unit in order:
        while True:
            d = stages[stage]
            cost = net.times[unit][d]
            fits = not math.isinf(cost) and used + net.memory[unit] <= net.limit[d]
            if fits and (compute + cost <= limit or compute == 0.0 or stage + 1 == len(stages)):
                break
            if stage + 1 == len(stages):
                return None
            stage, compute, used = stage + 1, 0.0, 0.0
        device[unit] = d
        compute += cost
        used += net.memory[unit]
    return device


def by_load(net: Network, order: list[int], stages: list[int], limit: float) -> list[int] | None:
    """Units in order onto ``stages``, each while its load stays within ``limit``: its compute,
    the largest edge of every outside value it reads, and of every value of its own still read
    by units not yet placed (all later stages counted as one device)."""
    problem = net.problem
    device = [-1] * len(order)
    stage = 0
    compute = used = received = sent = 0.0
    reads: dict[int, float] = {}  # outside node -> its largest edge into this stage
    pending: dict[int, float] = {}  # node of this stage -> its largest edge to later units

    def later_edge(i: int) -> float:
        return max((c for reader, c in net.reads[i] if device[reader] < 0), default=0.0)

    for unit in order:
        while True:
            d = stages[stage]
            cost = net.times[unit][d]
            if not math.isinf(cost) and used + net.memory[unit] <= net.limit[d]:
                device[unit] = d
                more_reads: dict[int, float] = {}
                leaving: dict[int, float] = {}
                for i in net.members[unit]:
                    for j, edge in problem.preds[i]:
                        other = net.unit_of[j]
                        if other == unit:
                            continue
                        if device[other] == d and j in pending:
                            leaving[j] = later_edge(j)
                        elif edge > more_reads.get(j, reads.get(j, 0.0)):
                            more_reads[j] = edge
                    leaving[i] = later_edge(i)
                more_received = sum(edge - reads.get(j, 0.0) for j, edge in more_reads.items())
                more_sent = sum(edge - pending.get(j, 0.0) for j, edge in leaving.items())
                load = compute + cost + received + more_received + sent + more_sent
                if load <= limit or compute == 0.0:
                    compute += cost
                    used += net.memory[unit]
                    received += more_received
                    sent += more_sent
                    reads.update(more_reads)
                    pending.update(leaving)
                    break
                device[unit] = -1
            if stage + 1 == len(stages):
                return None
            stage += 1
            compute = used = received = sent = 0.0
            reads, pending = {}, {}
    return device


def seeds(net: Network) -> list[list[int]]:
    """Distinct starting placements, for every count of accelerators used."""
    kinds = [d.type for d in net.problem.devices]
    cpus = [d for d, kind in enumerate(kinds) if kind == "CPU"]
    accelerators = [d for d, kind in enumerate(kinds) if kind != "CPU"] or cpus[:1]
    order = pipeline_order(net)
    fastest = sum(min(row) for row in net.times)
    slowest = sum(max(t for t in row if not math.isinf(t)) for row in net.times)
    found: list[list[int]] = []
    for count in range(1, len(accelerators) + 1):
        stages = accelerators[:count]
        tried = [by_compute(net, order, stages, fastest / count * f) for f in (1.0, 1.05)]
        tried.append(_balanced(net, order, stages + [d for d in cpus if d not in stages], slowest))
        found.extend(seed for seed in tried if seed is not None and seed not in found)
    return found


def _balanced(net: Network, order: list[int], stages: list[int], most: float) -> list[int] | None:
    """``by_load`` at the smallest limit it meets (a bisection)."""
    low, high, best = 0.0, 2 * most + 1.0, None
    for _ in range(BISECTION_STEPS):
        middle = (low + high) / 2
        packed = by_load(net, order, stages, middle)
        if packed is None:
            low = middle
        else:
            high, best = middle, packed
    return best if best is not None else by_load(net, order, stages, high)
