"""A plan cut into partitions: the ops one task runs between two waits for other tasks.

An op's stage is the largest of its inputs' stages, plus one where an input (data or control)
comes from another task; a constant, an op folded into one or one run as a NoOp goes where it
is first read (``_sink_constants``); a partition is the ops of one task and one stage. A
partition waits only for partitions of lower stages, or of its own task and stage, so the
partitions form a DAG, and a task running its partitions in stage order never waits on one that
waits on it (``program.py``). A variable is not a value that moves: a later partition of its
task that updates it by reference takes the variable again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from placeviz.graph.core import Operation, Tensor
from placeviz.runtime.plan import Plan


@dataclass
class Partition:
    task: str  # '/job:ps/task:0'
    stage: int
    ops: list[Operation] = field(default_factory=list)
    inputs: list[Tensor] = field(default_factory=list)  # made by other partitions, fed here
    feeds: list[Tensor] = field(default_factory=list)  # the client's feeds it reads
    outputs: list[Tensor] = field(default_factory=list)  # read by other partitions or fetched
    waits_for: set[int] = field(default_factory=set)  # partitions a control edge waits on
    targets: list[Operation] = field(default_factory=list)  # ops run for their effect


def partition_plan(plan: Plan, task_of: Callable[[Operation], str]) -> list[Partition]:
    """The plan's partitions in an order where each comes after those it needs."""
    fed = {id(t) for t in plan.feeds}
    stage: dict[int, int] = {}
    for op in plan.ops:
        task = task_of(op)
        level = 0
        producers = [t.op for t in op.inputs if id(t) not in fed and t.op.id in stage]
        for other in (*producers, *(c for c in op.control_inputs if c.id in stage)):
            level = max(level, stage[other.id] + (task_of(other) != task))
        stage[op.id] = level
    _sink_constants(plan, stage, task_of)
    parts: dict[tuple[str, int], Partition] = {}
    where: dict[int, Partition] = {}  # op id -> its partition
    for op in plan.ops:
        task, level = task_of(op), stage[op.id]
        part = parts.get((task, level))
        if part is None:
            part = parts[(task, level)] = Partition(task, level)
        part.ops.append(op)
        where[op.id] = part
    ordered = sorted(parts.values(), key=lambda p: (p.stage, p.task))
    index = {id(p): i for i, p in enumerate(ordered)}
    fetched = {id(f) for f in plan.fetches if isinstance(f, Tensor)}
    needed_elsewhere: set[int] = set()
    for part in ordered:
        local = {op.id for op in part.ops}
        seen: set[int] = set()
        for op in part.ops:
            for tensor in op.inputs:
                if tensor.op.id in local or id(tensor) in seen:
                    continue
                if tensor.op.op_def.ref_output and task_of(tensor.op) == part.task:
                    continue  # a variable itself, not a value: the task's run takes it again
                seen.add(id(tensor))
                if id(tensor) in fed:
                    part.feeds.append(tensor)
                else:
                    part.inputs.append(tensor)
                    needed_elsewhere.add(id(tensor))
            for control in op.control_inputs:
                if control.id in where and control.id not in local:
                    part.waits_for.add(index[id(where[control.id])])
    exported = needed_elsewhere | fetched
    for part in ordered:
        consumed = {t.op.id for op in part.ops for t in op.inputs}
        consumed.update(c.id for op in part.ops for c in op.control_inputs)
        for op in part.ops:
            part.outputs += [t for t in op.outputs if id(t) in exported]
            if op.id not in consumed:
                part.targets.append(op)
    return ordered


def _sink_constants(plan: Plan, stage: dict[int, int], task_of: Callable[[Operation], str]) -> None:
    """Constants, the ops the plan folds into constants (``plan.folded``) and those it runs as
    NoOps (``plan.unread``) move to the stage of their first reader when every reader is on
    their task. A stage's plan then folds them as one process's plan does, rather than an
    earlier stage running them each step to hand their values on (a loss's shape arithmetic:
    worker 0's first stage in the 2 + 2 MLP step held 41 ops, now 15). TensorFlow folds them
    too: its partitions have no stages. Moving an op to a later stage of its task keeps it
    after its inputs; the earliest reader keeps it before every reader."""
    fetched = {f.id if isinstance(f, Operation) else f.op.id for f in plan.fetches}
    readers: dict[int, list[Operation]] = {}
    for op in plan.ops:
        for producer in {*(t.op for t in op.inputs), *op.control_inputs}:
            readers.setdefault(producer.id, []).append(op)
    for op in reversed(plan.ops):  # readers first: a folded op's constants follow it
        if op.id in fetched or not (
            op.type == "Const" or op.id in plan.folded or op.id in plan.unread
        ):
            continue
        read_by = readers.get(op.id, [])
        task = task_of(op)
        if read_by and all(task_of(reader) == task for reader in read_by):
            stage[op.id] = min(stage[reader.id] for reader in read_by)
