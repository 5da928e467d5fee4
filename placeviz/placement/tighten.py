"""A depth-first search for a shorter step on identical devices, where a list schedule's
makespan is often one or two time units above the optimum and no priority reaches it.

It applies where every node takes the same whole number of time units on every device and
nothing else constrains the order: no edge times, memory limits or colocation. It asks for a
schedule of makespan ``target`` by starting the nodes one by one, each on the device that frees
first, at the earliest time its predecessors allow and never before the node started last (some
optimal schedule is made so: list-scheduling an optimal one in order of its starts starts no
node later), and cuts a branch where a node could no longer end in time for its longest path
of successors, or where the work left would not fit the time left on the devices.
"""

from __future__ import annotations

import bisect
import math

from placeviz.placement.problem import Problem, Work

MOST_NODES = 500  # the search recurses once per node


def applies(problem: Problem) -> bool:
    return (
        len(problem.nodes) <= MOST_NODES
        and problem.free_edges
        and all(group < 0 for group in problem.group)
        and all(math.isinf(d.memory) for d in problem.devices)
        and all(min(row) == max(row) and float(row[0]).is_integer() for row in problem.times)
    )


def shorter(problem: Problem, makespan: float, bound: float, work: Work) -> list[float] | None:
    """Start times of the shortest schedule found below ``makespan``, or None if none was found
    within ``work``. The lower bound is asked for first, with half the work: its time windows
    are the tightest, so its search is the shortest, and found it ends the search; then one
    unit below the best found at a time."""
    graph = _Both(problem)
    lowest = math.ceil(bound - 1e-9)
    target = makespan - 1
    if target > lowest:
        found = graph.either_way(lowest, work.part(work.left // 2))
        if found is not None:
            return found
        lowest += 1  # asked for already
    found = None
    while target >= lowest and not work.done():
        starts = graph.either_way(target, work)
        if starts is None:
            break
        found, target = starts, target - 1
    return found


class _Both:
    """The graph and the graph reversed (a schedule of it read backwards is one of the graph),
    as lists the search reads; reversed, node i is n - 1 - i, so that the order is topological
    again."""

    def __init__(self, problem: Problem) -> None:
        n = len(problem.nodes)
        self.devices = len(problem.devices)
        self.time = [row[0] for row in problem.times]
        self.preds = [[j for j, _ in edges] for edges in problem.preds]
        self.succs = [[j for j, _ in edges] for edges in problem.succs]
        self.mirrored = (
            self.time[::-1],
            [[n - 1 - j for j in self.succs[i]] for i in reversed(range(n))],
            [[n - 1 - j for j in self.preds[i]] for i in reversed(range(n))],
        )

    def either_way(self, target: float, work: Work) -> list[float] | None:
        """Half the work on the graph, half on the graph reversed: some instances are far
        easier one way than the other."""
        half = work.part(work.left // 2)
        found = _search(self.time, self.preds, self.succs, self.devices, target, half)
        if found is not None or work.done():
            return found
        backwards = _search(*self.mirrored, self.devices, target, work)
        if backwards is None:
            return None
        n = len(self.time)
        return [target - backwards[n - 1 - i] - self.time[i] for i in range(n)]


def _search(
    time: list[float],
    preds: list[list[int]],
    succs: list[list[int]],
    devices: int,
    target: float,
    work: Work,
) -> list[float] | None:
    """Start times of a schedule of makespan ``target`` or less; nodes in a topological order."""
    n = len(time)
    tail = [0.0] * n  # the longest path of successors after the node ends
    for i in reversed(range(n)):
        tail[i] = max((tail[j] + time[j] for j in succs[i]), default=0.0)
    latest = [target - tail[i] - time[i] for i in range(n)]  # the latest start in time
    waiting = [len(p) for p in preds]
    ready_at = [0.0] * n  # when the predecessors started so far have all ended
    start: list[float | None] = [None] * n
    free = [0.0] * devices  # when each device ends its last node
    left = [sum(time)]

    earliest_end = [0.0] * n  # per node not started: the earliest it could end
    waiting_to_start = list(range(n))  # the nodes not started, in order
    ready = {i for i in range(n) if not waiting[i]}  # not started, predecessors all started

    def hopeful(last: float) -> bool:
        """The work left fits the time left, and every node not started can still end in time."""
        capacity = 0.0
        for f in free:
            capacity += target - (f if f > last else last)
        if left[0] > capacity:
            return False
        checked = 0
        for i in waiting_to_start:
            checked += 1
            at = ready_at[i]
            if at < last:
                at = last
            for j in preds[i]:
                if start[j] is None and earliest_end[j] > at:
                    at = earliest_end[j]
            if at > latest[i]:
                work.spend(checked)
                return False
            earliest_end[i] = at + time[i]
        work.spend(checked)
        return True

    def place(depth: int, last: float, last_node: int) -> bool:
        if depth == n:
            return True
        if work.done():
            return False
        device = min(range(devices), key=free.__getitem__)
        floor = free[device] if free[device] > last else last
        options = []
        for i in ready:
            at = ready_at[i] if ready_at[i] > floor else floor
            if at == last and i < last_node:
                continue  # the same schedule as starting it before the last node
            if at > latest[i]:
                return False
            options.append((latest[i] - at, i, at))
        options.sort()
        was = free[device]
        for _, i, at in options:
            end = at + time[i]
            if end > target:
                continue
            free[device], start[i] = end, at
            left[0] -= time[i]
            k = bisect.bisect_left(waiting_to_start, i)
            del waiting_to_start[k]
            ready.remove(i)
            after = succs[i]
            before = [ready_at[j] for j in after]
            for j in after:
                waiting[j] -= 1
                if not waiting[j]:
                    ready.add(j)
                if ready_at[j] < end:
                    ready_at[j] = end
            if hopeful(at) and place(depth + 1, at, i):
                return True
            for j, old in zip(after, before):
                if not waiting[j]:
                    ready.remove(j)
                waiting[j] += 1
                ready_at[j] = old
            left[0] += time[i]
            free[device], start[i] = was, None
            waiting_to_start.insert(k, i)
            ready.add(i)
            if work.done():
                return False
        return False

    if not hopeful(0.0) or not place(0, 0.0, -1):
        return None
    return [float(s) for s in start]  # type: ignore[arg-type]
