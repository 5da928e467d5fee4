"""A run's share for each task, sent to it once: its stages in order and where their outputs go.

A step is then one message to each task: the task runs its stages one after another, waits
before a stage for the tensors (and control tokens) other tasks send it, and sends each stage's
outputs straight to the tasks that read them. Stages are the partitions of ``partition.py``: a
stage reads another task's tensors only from that task's lower stages, so every task running its
stages in order never waits on a stage that waits on it.

Programs are plain lists and dicts of strings: Dask's messages carry them as they are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from placeviz.cluster.partition import Partition
from placeviz.devices.context import Device
from placeviz.graph.core import Operation, Tensor, tensor_bytes

REPLICATED_CONSTANT_ELEMENTS = 16  # TF's ReplicateConstantsPass's kMaxSize


@dataclass(frozen=True)
class StageHead:
    """A stage's first op, which a task names when it reports how long the stage waited for
    other tasks: the wait is drawn on its device, and ``receives`` tells which arrival ended it."""

    op: Operation
    device: Device
    receives: frozenset[str]  # the tensors other tasks send the stage
    signalled_by: frozenset[str]  # the tasks whose control tokens it waits for


@dataclass
class RunProgram:
    """What the master keeps of a run's programs: each task's, and what moves between tasks."""

    programs: dict[str, list[dict[str, Any]]]  # task address -> its stages, in order
    # (tensor name, receiving task) -> tensor, from, to (one tensor may go to several tasks)
    transfers: dict[tuple[str, str], tuple[Tensor, Device, Device]]
    heads: dict[str, StageHead] = field(default_factory=dict)  # by the first op's name

    @functools.cached_property
    def messages(self) -> list[tuple[str, list[dict[str, Any]], list[str]]]:
        """Each task's address, stages and the client feeds they read, in the order a step's
        messages go out: tasks whose first stage sends what others wait for first (a ps
        task's variables start the step; a worker only needs them)."""
        order = sorted(self.programs.items(), key=lambda item: not item[1][0]["sends"])
        return [
            (address, stages, sorted({n for stage in stages for n in stage["feeds"]}))
            for address, stages in order
        ]


def token(part: Partition) -> str:
    """The name of the control token ``part`` sends to stages of other tasks that wait on it."""
    return f"^{part.task}#{part.stage}"


def build_programs(
    parts: Sequence[Partition],
    address_of: Callable[[str], str],
    device_of: Callable[[Operation], Device],
    fetched: Sequence[Tensor],
) -> RunProgram:
    """Each task's stages (``address_of(task name)`` is its address) from the plan's partitions."""
    owner = {op.id: part for part in parts for op in part.ops}
    wanted = {id(t) for t in fetched}
    replicated = _replicated_constants([op for part in parts for op in part.ops], device_of)
    implied = _implied_waits(parts, owner)
    programs: dict[str, list[dict[str, Any]]] = {}
    stages: dict[int, dict[str, Any]] = {}
    transfers: dict[tuple[str, str], tuple[Tensor, Device, Device]] = {}
    heads: dict[str, StageHead] = {}
    for position, part in enumerate(parts):
        address = address_of(part.task)
        stage = stages[id(part)] = {
            "ops": [op.name for op in part.ops],
            "feeds": [t.name for t in part.feeds],
            "inputs": [],  # made by this task's earlier stages
            "receives": [],  # sent by other tasks
            "fetches": [t.name for t in part.outputs],
            "targets": [op.name for op in part.targets],
            "sends": {},  # task address -> tensor names, most bytes first (``_largest_first``)
            "waits": [],  # tokens of other tasks' stages
            "signals": {},  # task address -> tokens
            "returns": [t.name for t in part.outputs if id(t) in wanted],
            "constants": {},  # tensor name -> the value of a small constant of another task
        }
        for tensor in part.inputs:
            source = owner[tensor.op.id]
            if source.task == part.task:
                stage["inputs"].append(tensor.name)
                continue
            if tensor.op.id in replicated:
                stage["constants"][tensor.name] = replicated[tensor.op.id]
                continue
            stage["receives"].append(tensor.name)
            key = (tensor.name, part.task)
            if key not in transfers:
                reader = next(op for op in part.ops if tensor in op.inputs)
                transfers[key] = (tensor, device_of(tensor.op), device_of(reader))
                sends = stages[id(source)]["sends"].setdefault(address, [])
                sends.append(tensor.name)
        for index in sorted(part.waits_for - implied[position]):
            other = parts[index]
            if other.task != part.task:
                stage["waits"].append(token(other))
                stages[id(other)]["signals"].setdefault(address, []).append(token(other))
        head = part.ops[0]
        signalled_by = frozenset(parts[index].task for index in part.waits_for) - {part.task}
        heads[head.name] = StageHead(
            head, device_of(head), frozenset(stage["receives"]), signalled_by
        )
        programs.setdefault(address, []).append(stage)
    by_name = {tensor.name: tensor for tensor, _src, _dst in transfers.values()}
    for stage in stages.values():
        stage["sends"] = _largest_first(stage["sends"], by_name)
    return RunProgram(programs, transfers, heads)


def destinations(stage: dict[str, Any]) -> list[str]:
    """The tasks a stage's messages go to, in the order they leave: those sent tensors, most
    bytes first, then those sent only control tokens. The same in every step and process (a
    set of addresses was iterated in an order that changed with each process's string hashing;
    measured side by side, the fixed order made the MLP step neither faster nor slower)."""
    return list(dict.fromkeys([*stage["sends"], *stage["signals"]]))


def _largest_first(sends: dict[str, list[str]], tensors: dict[str, Tensor]) -> dict[str, list[str]]:
    """``sends`` (task address -> tensor names) with the task sent the most bytes first: as a
    rule the one with the most to do with them (the update of the largest variable). A tensor of
    unknown size counts as none; ties keep their order."""
    size = {a: sum(tensor_bytes(tensors[n]) or 0 for n in names) for a, names in sends.items()}
    return {address: sends[address] for address in sorted(sends, key=lambda a: -size[a])}


def _replicated_constants(
    ops: Sequence[Operation], device_of: Callable[[Operation], Device]
) -> dict[int, Any]:
    """The small constants TF replicates onto the hosts of their readers, by op id, with their
    values, as its ReplicateConstantsPass does: a CPU ``Const`` of at most 16 elements with more
    than one reader and no control edge out. A task reading one gets its value with its
    program rather than in a message each step."""
    from distributed.protocol import to_serialize

    readers: dict[int, int] = {}
    controlling: set[int] = set()
    for op in ops:
        for tensor in op.inputs:
            readers[tensor.op.id] = readers.get(tensor.op.id, 0) + 1
        controlling.update(c.id for c in op.control_inputs)
    return {
        op.id: to_serialize(op.attrs["value"])
        for op in ops
        if op.type == "Const"
        and np.size(op.attrs["value"]) <= REPLICATED_CONSTANT_ELEMENTS
        and readers.get(op.id, 0) > 1
        and op.id not in controlling
        and device_of(op).device_type == "CPU"
    }


def _implied_waits(parts: Sequence[Partition], owner: dict[int, Partition]) -> list[set[int]]:
    """Per partition, the control waits another of its dependencies already implies (a stage
    that waits for tensors or a token of a partition that itself waited for this one): those
    tokens need not be sent. Partitions come in an order where each follows its dependencies."""
    index = {id(part): i for i, part in enumerate(parts)}
    before: list[set[int]] = []  # every partition that finishes before each one starts
    implied: list[set[int]] = []
    last_of_task: dict[str, int] = {}
    for i, part in enumerate(parts):
        direct = {index[id(owner[t.op.id])] for t in part.inputs} | set(part.waits_for)
        if part.task in last_of_task:  # a task runs its stages in order
            direct.add(last_of_task[part.task])
        last_of_task[part.task] = i
        before.append(set(direct).union(*(before[d] for d in direct)))
        implied.append({w for w in part.waits_for if any(w in before[d] for d in direct - {w})})
    return implied
