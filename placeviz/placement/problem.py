"""The scheduling problem as indices, shared by the makespan search (``scheduling.py``) and
the pipeline search (``pipeline.py``): nodes in a topological order, their times per device,
memory, colocation groups, edges, and PEFT's optimistic cost table."""

from __future__ import annotations

import functools
import math
import time as clock
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

DEFAULT_TYPE = "GPU"


class Work:
    """A search's budget: the steps it may take (``MAKESPAN_WORK`` says what a step is), and an
    optional wall-clock deadline (the default has none, so the same problem gives the same
    placement on any machine)."""

    def __init__(self, steps: float, deadline: float = math.inf) -> None:
        self.left = steps
        self.deadline = deadline
        self._of: Work | None = None

    def part(self, steps: float) -> Work:
        """At most ``steps`` of this budget for one part of a search: what the part spends, this
        budget spends too."""
        part = Work(min(steps, self.left), self.deadline)
        part._of = self
        return part

    def spend(self, steps: int) -> None:
        work: Work | None = self
        while work is not None:
            work.left -= steps
            work = work._of

    def done(self) -> bool:
        return self.left <= 0 or (
            self.deadline != math.inf and clock.perf_counter() >= self.deadline
        )


class InfeasibleScheduleError(ValueError):
    """No placement meets the constraints; the message names the node and the constraint."""


@dataclass(frozen=True)
class Device:
    name: str
    type: str = DEFAULT_TYPE
    memory: float = math.inf


@dataclass
class Problem:
    """The graph as indices (nodes in a topological order, their times per device), shared with
    ``pipeline.py``."""

    nodes: list[Hashable]
    devices: list[Device]
    times: list[list[float]]  # [node][device], inf where the node cannot run
    memory: list[float]
    group: list[int]  # colocation group per node, -1 for none
    group_devices: list[list[int]]  # per group, the devices every member can run on
    group_memory: list[float]  # per group, the bytes its members hold together
    preds: list[list[tuple[int, float]]]  # (predecessor, edge time)
    succs: list[list[tuple[int, float]]]
    # A device takes in one copy at a time, and a value crosses to a device once for all its
    # readers there (how placeviz's runtime moves tensors); else every edge is its own delay.
    copy_engines: bool = False
    # [node][device]: PEFT's optimistic cost table, the shortest time from the node's end on
    # that device to the end of its longest path of successors, each on its best device, an
    # edge's time paid where it crosses devices. Adding it to a finish time sees what the
    # earliest finish alone does not: a value made quickly on a device its consumers are not.
    ahead: list[list[float]] = field(default_factory=list)

    @functools.cached_property
    def members(self) -> list[list[int]]:
        """The nodes of each colocation group."""
        found: list[list[int]] = [[] for _ in self.group_devices]
        for node, group in enumerate(self.group):
            if group >= 0:
                found[group].append(node)
        return found

    @functools.cached_property
    def free_edges(self) -> bool:
        """Whether every value reaches every device when its node ends (no edge takes time and
        no copy engine is waited for): a node can then start at the same time on any device."""
        return not self.copy_engines and all(cost == 0 for edges in self.preds for _, cost in edges)

    @functools.cached_property
    def copy_time(self) -> list[float]:
        """With copy engines, moving a node's value takes its longest out-edge's time."""
        return [max((edge for _, edge in succs), default=0.0) for succs in self.succs]

    def __post_init__(self) -> None:
        if self.ahead:
            return
        p = len(self.devices)
        self.ahead = [[0.0] * p for _ in self.nodes]
        if all(min(row) == max(row) for row in self.times):
            return  # identical devices: the table would be the same for each, so it adds nothing
        order = topological(self.preds, self.succs)
        for node in reversed(order):
            row = self.ahead[node]
            for succ, edge in self.succs[node]:
                after = [self.ahead[succ][k] + self.times[succ][k] for k in range(p)]
                for d in range(p):
                    best = min(
                        (after[k] + (edge if k != d else 0.0) for k in range(p)),
                        default=0.0,
                    )
                    if best > row[d]:
                        row[d] = best


def topological(
    preds: Sequence[Sequence[tuple[int, float]]], succs: Sequence[Sequence[tuple[int, float]]]
) -> list[int]:
    waiting = [len(p) for p in preds]
    order = [i for i, w in enumerate(waiting) if w == 0]
    for node in order:
        for succ, _ in succs[node]:
            waiting[succ] -= 1
            if waiting[succ] == 0:
                order.append(succ)
    return order
