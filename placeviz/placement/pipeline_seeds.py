"""Where the throughput search starts: the units cut, in pipeline order, into contiguous stages
on the first g accelerators for every g, some balanced by compute alone, some by compute and the
transfers each stage would send and receive; and cut into more runs than accelerators (every
count up to three per accelerator, under several caps on a run's compute) where the least
crosses the cuts, the runs dealt to the devices (a device may hold several), since an exact
solver's best placements of layered graphs give a device runs far apart.

Pipeline order is the order data flows through the graph: a unit goes at the depth of its
first node that reads something, and a unit of sources only (weights, inputs not colocated with
their reader) just before its first reader, so that a cut between stages crosses few edges.
"""

from __future__ import annotations

import math
from collections import deque

from placeviz.placement.pipeline_moves import Loads, Network

BISECTION_STEPS = 24  # at most: the bisection stops once the limit is known to a ten-thousandth
# Cheap cuts: the largest run's share of an accelerator's even share of the compute, and the
# runs per accelerator at most (plus one). Every count of runs above the accelerators' is a seed
# of its own: which count's cuts descend best is seen only by descending (a seed's loads before
# the descent do not tell).
CHEAP_SHARES = (0.6, 0.75, 0.9, 1.0, 1.1)
CHEAP_RUNS_PER_DEVICE = 3


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


def by_reach(net: Network, order: list[int], stages: list[int], limit: float) -> list[int] | None:
    """Each stage in turn takes the longest run of units in order whose load stays within
    ``limit`` (a run's load falls as well as rises as it grows: a value read by the next
    units stops being sent once they join): its compute, the largest edge of every outside
    value it reads, and of every value of its own read outside (the outside as one device)."""
    device = [-1] * len(order)
    start = 0
    for d in stages:
        if start == len(order):
            break
        end = _furthest(net, order, start, d, limit)
        for unit in order[start:end]:
            device[unit] = d
        start = end
    return device if start == len(order) else None


def _furthest(net: Network, order: list[int], start: int, d: int, limit: float) -> int:
    """The end of the longest run from ``start`` on device ``d`` within ``limit`` (``start``
    itself where none is)."""
    problem, unit_of = net.problem, net.unit_of
    inside: set[int] = set()
    reads: dict[int, float] = {}  # outside node -> its largest edge into the run
    sends: dict[int, float] = {}  # node of the run -> its largest edge to readers outside
    compute = used = received = sent = 0.0
    best = start
    for end in range(start, len(order)):
        unit = order[end]
        cost = net.times[unit][d]
        compute += cost
        used += net.memory[unit]
        if compute > limit or used > net.limit[d]:
            break
        inside.add(unit)
        for i in net.members[unit]:
            received -= reads.pop(i, 0.0)
        for i in net.members[unit]:
            for j, edge in problem.preds[i]:
                if unit_of[j] == unit:
                    continue
                if unit_of[j] in inside:
                    now = _largest_outside(net.reads[j], inside)
                    sent += now - sends.get(j, 0.0)
                    sends[j] = now
                elif edge > reads.get(j, 0.0):
                    received += edge - reads.get(j, 0.0)
                    reads[j] = edge
            sends[i] = _largest_outside(net.reads[i], inside)
            sent += sends[i]
        if compute + received + sent <= limit:
            best = end + 1
    return best


def _largest_outside(reads: list[tuple[int, float]], inside: set[int]) -> float:
    """The largest edge to a reader outside the run (``reads`` come largest first)."""
    return next((cost for reader, cost in reads if reader not in inside), 0.0)


def seeds(net: Network, order: list[int]) -> list[list[int]]:
    """Distinct starting placements, for every count of accelerators used, from the units in
    ``order`` (``pipeline_order``)."""
    kinds = [d.type for d in net.problem.devices]
    cpus = [d for d, kind in enumerate(kinds) if kind == "CPU"]
    accelerators = [d for d, kind in enumerate(kinds) if kind != "CPU"] or cpus[:1]
    fastest = sum(min(row) for row in net.times)
    slowest = sum(max(t for t in row if not math.isinf(t)) for row in net.times)
    found: list[list[int]] = []
    for count in range(1, len(accelerators) + 1):
        stages = accelerators[:count]
        tried = [by_compute(net, order, stages, fastest / count * f) for f in (1.0, 1.05)]
        # The bisection needs no limit above the slowest stage of those splits.
        known = [max(Loads(net, seed).load) for seed in tried if seed is not None]
        every = stages + [d for d in cpus if d not in stages]
        low = fastest / len(every)
        tried.append(_balanced(net, order, every, low, min(known, default=2 * slowest + 1)))
        found.extend(seed for seed in tried if seed is not None and seed not in found)
    crossing = _cut_costs(net, order)
    most = CHEAP_RUNS_PER_DEVICE * len(accelerators) + 1
    for share in CHEAP_SHARES:
        cuts = _cheap_runs(net, order, crossing, accelerators, most, share)
        for count, runs in cuts.items():
            if count <= len(accelerators):
                continue  # no more runs than accelerators: the contiguous seeds' ground
            seed = _dealt(net, runs, accelerators + cpus)
            if seed is not None and seed not in found:
                found.append(seed)
    return found


def _cut_costs(net: Network, order: list[int]) -> list[float]:
    """Per position k in ``order``, what a cut before its k-th unit sends: every value whose
    unit and some reader's lie on either side of it, its largest edge to that side."""
    where = [0] * len(order)
    for k, unit in enumerate(order):
        where[unit] = k
    change = [0.0] * (len(order) + 2)
    for i, reads in enumerate(net.reads):
        made = where[net.unit_of[i]]
        later = sorted(((where[r], cost) for r, cost in reads if where[r] > made), reverse=True)
        earlier = sorted((where[r], cost) for r, cost in reads if where[r] < made)
        # Readers from the furthest away towards the maker: a cut between a reader and the next
        # nearer one pays the largest edge to the readers beyond it.
        for readers in (later, earlier):
            largest = 0.0
            for (at, cost), (nearer, _) in zip(readers, [*readers[1:], (made, 0.0)]):
                largest = max(largest, cost)
                low, high = sorted((at, nearer))
                if low < high:
                    change[low + 1] += largest
                    change[high + 1] -= largest
    costs, running = [], 0.0
    for k in range(len(order) + 1):
        running += change[k]
        costs.append(running)
    return costs


def _cheap_runs(
    net: Network,
    order: list[int],
    crossing: list[float],
    accelerators: list[int],
    most: int,
    share: float,
) -> dict[int, list[list[int]]]:
    """``order`` cut into each count of runs up to ``most``, each run at most ``share`` of an
    accelerator's even share of the compute, where the least crosses the cuts (counts with no
    such cut left out). A dynamic program over run counts; each count's best start for every
    end is a sliding minimum."""
    n = len(order)
    prefix = [0.0]
    for unit in order:
        cost = net.times[unit][accelerators[0]]
        prefix.append(prefix[-1] + (0.0 if math.isinf(cost) else cost))
    cap = share * prefix[-1] / len(accelerators)
    best = [0.0] + [math.inf] * n  # order[:j] in c runs: the least crossing its cuts
    starts: list[list[int]] = []  # per count, per end: where its last run starts
    found: dict[int, list[list[int]]] = {}
    for count in range(1, most + 1):
        entry = [best[i] + (crossing[i] if i else 0.0) for i in range(n)]
        now, start = [math.inf] * (n + 1), [0] * (n + 1)
        window: deque[int] = deque()  # candidate starts in [low, j), cheapest first
        low = 0
        for j in range(1, n + 1):
            while window and entry[window[-1]] >= entry[j - 1]:
                window.pop()
            window.append(j - 1)
            while prefix[j] - prefix[low] > cap and low < j:
                low += 1
            while window and window[0] < low:
                window.popleft()
            if window:
                start[j], now[j] = window[0], entry[window[0]]
        starts.append(start)
        best = now
        if best[n] < math.inf:
            runs, j = [], n
            for last in reversed(starts):
                runs.append(order[last[j] : j])
                j = last[j]
            found[count] = runs[::-1]
    return found


def _dealt(net: Network, runs: list[list[int]], devices: list[int]) -> list[int] | None:
    """The runs, the most compute first, each onto the device it leaves least loaded among
    those with room (the descent then trims what the cuts did not balance)."""
    device = [-1] * len(net.members)
    load = [0.0] * len(net.limit)
    used = [0.0] * len(net.limit)
    for run in sorted(runs, key=lambda run: -sum(min(net.times[u]) for u in run)):
        computes = [sum(times) for times in zip(*(net.times[u] for u in run))]  # per device
        size = sum(net.memory[u] for u in run)
        options = [
            (load[d] + computes[d], d)
            for d in devices
            if not math.isinf(computes[d]) and used[d] + size <= net.limit[d]
        ]
        if not options:
            return None
        total, d = min(options)
        load[d], used[d] = total, used[d] + size
        for u in run:
            device[u] = d
    return device


def _balanced(
    net: Network, order: list[int], stages: list[int], low: float, high: float
) -> list[int] | None:
    """``by_reach`` at the smallest limit it meets (a bisection between ``low`` and ``high``,
    to a ten-thousandth)."""
    best = None
    for _ in range(BISECTION_STEPS):
        if high - low <= 1e-4 * high:
            break
        middle = (low + high) / 2
        packed = by_reach(net, order, stages, middle)
        if packed is None:
            low = middle
        else:
            high, best = middle, packed
    return best or by_reach(net, order, stages, high) or by_reach(net, order, stages, math.inf)
