"""When each op execution of a while loop ran: a discrete-event simulation of TensorFlow's
executor over the executions a frame recorded (``frames.py`` records them)."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any, NamedTuple

from placeviz.graph.core import Operation, Tensor


class Row(NamedTuple):
    """An execution while its frame runs: what it waited for and how long it took."""

    op: Operation
    frame: str
    loop: int
    iteration: int
    ran: bool
    start: int  # the clock when the runner took it up
    duration: int
    device: str
    deps: Sequence[int]  # rows that made its inputs (data and control; -1: none)
    groups: tuple[tuple[int, int], ...]  # (frame instance, iteration), innermost first
    gate: tuple[int, int] | None  # the iteration that must finish before it starts
    copied: tuple[Tensor, str, int] | None  # a copy's (as in Execution)


def lay_out_rows(rows: Sequence[Row]) -> tuple[list[int], list[int]]:
    """Start and end (ns from the frame's start) of each row: a discrete-event simulation of
    TensorFlow's executor. A row is ready when its inputs' rows ended and the iteration that
    gates it finished; each device's stream runs the rows that ran, one at a time, in the order
    they became ready (copies into a device on its copy engine, beside its compute); a dead
    row takes no time."""
    count = len(rows)
    waiting = [int(r.gate is not None) for r in rows]
    ready_at = [0] * count
    users: list[list[int]] = [[] for _ in rows]
    members: dict[tuple[int, int], int] = {}
    gated: dict[tuple[int, int], list[int]] = {}
    for i, row in enumerate(rows):
        for d in set(row.deps):
            if d >= 0:
                users[d].append(i)
                waiting[i] += 1
        for group in row.groups:
            members[group] = members.get(group, 0) + 1
        if row.gate is not None:
            gated.setdefault(row.gate, []).append(i)
    finished: dict[tuple[int, int], int] = {}
    heap = [(0, i) for i in range(count) if waiting[i] == 0]
    heapq.heapify(heap)
    lane_free: dict[Any, int] = {}
    starts, ends = [0] * count, [0] * count

    def release(i: int, at: int) -> None:
        ready_at[i] = max(ready_at[i], at)
        waiting[i] -= 1
        if waiting[i] == 0:
            heapq.heappush(heap, (ready_at[i], i))

    while heap:
        ready, i = heapq.heappop(heap)
        row = rows[i]
        lane = row.device if row.copied is None else (row.device, "copy")
        start = max(ready, lane_free.get(lane, 0)) if row.ran else ready
        end = start + (row.duration if row.ran else 0)
        if row.ran:
            lane_free[lane] = end
        starts[i], ends[i] = start, end
        for user in users[i]:
            release(user, end)
        for group in row.groups:
            finished[group] = max(finished.get(group, 0), end)
            members[group] -= 1
            if members[group] == 0:
                for user in gated.pop(group, ()):
                    release(user, finished[group])
    for users_left in gated.values():  # gated on an iteration without rows: none to wait for
        for user in users_left:
            release(user, 0)
    while heap:  # only reached through the release above
        ready, i = heapq.heappop(heap)
        starts[i] = ends[i] = ready
    return starts, ends
