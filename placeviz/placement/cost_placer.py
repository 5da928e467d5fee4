"""The cost-model placer TensorFlow's whitepaper describes (``ConfigProto(placer="cost")``).

Pinned groups, groups an earlier run placed and colocation are TensorFlow's rules, as in the
simple placer; every group that asked for nothing (or whose request soft placement relaxed) goes
where the scheduling core (``scheduling.py``) finishes the whole graph earliest, given each op's
time on each device it may take, each tensor's time to cross devices and the bytes each device
can hold. The runtime supplies the costs (``CostModel``): this layer knows no hardware.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from placeviz.contract import ReasonKind
from placeviz.devices.context import Device
from placeviz.devices.spec import DeviceSpec
from placeviz.errors import InvalidArgumentError
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.variables import GLOBAL_VARIABLES
from placeviz.placement.placer import DeviceOf, SimplePlacer, _consumers, _Group, is_generator
from placeviz.placement.reason import Reason, short_name
from placeviz.placement.scheduling import InfeasibleScheduleError, Schedule, schedule
from placeviz.units import data_size

_FREE = (ReasonKind.DEFAULT, ReasonKind.SOFT)  # the groups the user left to the placer
LIVENESS_ROUNDS = 3  # schedules tried before the step's tensors are found not to fit
# The schedule's search stops after a number of passes, never after a time, so a session places
# the same graph the same way on any machine: 24, fewer for big graphs (a pass costs ~7 µs an op).
SEARCH_PASSES = 24
SEARCH_OPS = 25_000  # passes x ops


class CostModel(Protocol):
    def op_seconds(self, op: Operation, device: Device) -> float: ...

    def transfer_seconds(self, tensor: Tensor) -> float: ...

    def held_bytes(self, op: Operation) -> int: ...

    def nbytes(self, tensor: Tensor) -> int: ...


class CostPlacer(SimplePlacer):
    """The simple placer's rules for what the user asked; a schedule for the rest."""

    def __init__(
        self,
        devices: Sequence[Device],
        soft: bool,
        model: CostModel,
        local: DeviceSpec | None = None,
    ) -> None:
        super().__init__(devices, soft, local)
        self.model = model
        self.order: dict[int, float] = {}  # op id -> its start in the last schedule

    def _choose(
        self, ordered: Sequence[Operation], group_of: Mapping[int, _Group], device_of: DeviceOf
    ) -> list[tuple[_Group, InvalidArgumentError]]:
        self.order = {}
        free = {id(g) for g in group_of.values() if g.kind in _FREE}
        asked = {i: g for i, g in group_of.items() if id(g) not in free}
        super()._choose(ordered, asked, device_of)
        if not free:
            return []
        members: dict[int, list[Operation]] = {}  # each free group's ops, in creation order
        for op in ordered:
            group = group_of.get(op._id)
            if group is not None and id(group) in free:
                members.setdefault(id(group), []).append(op)
        setup = setup_ops(ordered)
        graph = self._problem(ordered, group_of, free, device_of, setup)
        simple = {  # TensorFlow's choice, which the schedule must beat to be taken
            op.name: short_name(group_of[op._id].candidates[0].name)
            for group_ops in members.values()
            for op in group_ops
        }
        try:
            found = self._schedule(graph, ordered, setup, simple)
        except InfeasibleScheduleError as error:
            # TensorFlow's rule for them instead, saying why: the run checks memory itself.
            for group_ops in members.values():
                group = group_of[group_ops[0]._id]
                group.text = f"the cost model found no placement ({error}); so {group.text}"
            return super()._choose(ordered, group_of, device_of)
        self.order = {op._id: found.start[op.name] for op in ordered if op.name in found.start}
        by_short = {short_name(d.name): d for d in self.devices}
        for group_ops in members.values():
            decider = min(group_ops, key=lambda op: (found.start[op.name], op._id))
            group = group_of[decider._id]
            device = by_short[found.device[decider.name]]
            text = f"cost model: {found.explain(decider.name)}"
            if group.kind is ReasonKind.SOFT:
                text = f"{group.text.split(', so ')[0]}; {text}"
            group.device, group.decider = device, decider
            group.reason = Reason(ReasonKind.COST, text, device.name, decider.device)
        # Ops the step does not time go where their values are used: setup ops from the last
        # (the initializer) back, so each follows the one it feeds; then generators.
        consumers = _consumers(ordered)
        lone = [ops[0] for ops in members.values() if len(ops) == 1]
        for op in sorted((op for op in lone if op._id in setup), key=lambda o: -o._id):
            _follow_most_consumers(op, group_of, consumers, device_of, SETUP_WHY)
        for op in lone:
            if op._id not in setup and is_generator(op):
                _follow_most_consumers(op, group_of, consumers, device_of, GENERATOR_WHY)
        return []

    def _schedule(
        self,
        graph: Any,
        ordered: Sequence[Operation],
        setup: set[int],
        simple: Mapping[str, str],
    ) -> Schedule:
        """A schedule whose variables fit each device's memory and whose step's tensors, by
        their static liveness under it, do too: a device they overflow has room for that much
        less of the variables it was given in the next round."""
        limits = {short_name(d.name): _limit(d) for d in self.devices}
        room = dict(limits)  # what the schedule may fill with variables
        passes = max(4, min(SEARCH_PASSES, SEARCH_OPS // max(len(graph), 1)))
        for _ in range(LIVENESS_ROUNDS):
            found = schedule(
                graph,
                [{"name": name, "type": name, "memory": room[name]} for name in room],
                time_limit=math.inf,
                max_passes=passes,
                copy_engines=True,
                start_from=simple,
            )
            peaks = self._peaks(found, ordered, setup)
            over = {
                name: peak - limits[name] for name, peak in peaks.items() if peak > limits[name]
            }
            if not over:
                return found
            charged = dict.fromkeys(room, 0.0)  # the variables' bytes the schedule put there
            for node, name in found.device.items():
                charged[name] += graph.nodes[node].get("memory", 0.0)
            for name, excess in over.items():  # fewer variables there, and their readers
                room[name] = max(0.0, min(room[name], charged[name] - excess))
        worst = ", ".join(f"{name} {data_size(peaks[name])}" for name in over)
        raise InfeasibleScheduleError(f"the step's live tensors would exceed {worst}")

    def _peaks(
        self, found: Schedule, ordered: Sequence[Operation], setup: set[int]
    ) -> dict[str, float]:
        """Each device's most bytes at once under the schedule (static liveness, counted as the
        run counts it): its variables throughout, each other output (a fed one too) from its
        op's start until its last reader there ends or it was copied, and a copy from when a
        reader elsewhere starts until its last reader there ends. An op that forwards its input
        (Identity, Reshape) holds nothing: its readers read its input's buffer."""
        by_name = {op.name: op for op in ordered if op.name in found.device}
        readers: dict[int, list[Operation]] = {}
        for op in by_name.values():
            for tensor in op.inputs:
                source = tensor.op
                while source.op_def.forwards_input and source.name in by_name:
                    source = source.inputs[0].op
                readers.setdefault(source._id, []).append(op)
        changes: dict[str, list[tuple[float, float]]] = {}
        for name, op in by_name.items():
            if op._id in setup or op.op_def.forwards_input:
                continue
            device = found.device[name]
            if op.op_def.ref_output:
                if not op.inputs:  # a variable, held for the session's life
                    value = float(self.model.nbytes(op.outputs[0]))
                    changes.setdefault(device, []).append((-math.inf, value))
                continue
            size = float(sum(self.model.nbytes(t) for t in op.outputs))
            ends: dict[str, float] = {device: found.finish[name]}
            begins: dict[str, float] = {device: found.start[name]}
            for reader in readers.get(op._id, []):
                there = found.device[reader.name]
                ends[there] = max(ends.get(there, -math.inf), found.finish[reader.name])
                begins[there] = min(begins.get(there, math.inf), found.start[reader.name])
            # The value stays where it was made until it has been copied to its readers.
            copied = [begin for there, begin in begins.items() if there != device]
            ends[device] = max([ends[device], *copied])
            for there, begin in begins.items():
                changes.setdefault(there, []).extend(((begin, size), (ends[there], -size)))
        peaks = {}
        for device, steps in changes.items():
            live = peak = 0.0
            for _, delta in sorted(steps, key=lambda c: (c[0], c[1])):
                live += delta
                peak = max(peak, live)
            peaks[device] = peak
        return peaks

    def _problem(
        self,
        ordered: Sequence[Operation],
        group_of: Mapping[int, _Group],
        free: set[int],
        device_of: DeviceOf,
        setup: set[int],
    ) -> Any:
        """The ops to place as a task graph: times on the devices each may take (an op the
        rules placed may take only its device), transfers on edges, colocation by group."""
        import networkx as nx

        graph = nx.DiGraph()
        model = self.model
        for op in ordered:
            group = group_of.get(op._id)
            if group is None:
                continue
            is_free = id(group) in free
            devices = group.candidates if is_free else [group.device]
            cost = (lambda op, d: 0.0) if op._id in setup else model.op_seconds
            graph.add_node(
                op.name,
                time={short_name(d.name): cost(op, d) for d in devices},
                memory=model.held_bytes(op),
                colocation=id(group) if is_free and len(group.new) > 1 else None,
            )
        for op in ordered:
            if op.name not in graph:
                continue
            for tensor in op.inputs:
                source = tensor.op
                if source.name not in graph:
                    placed = device_of(source)  # an earlier run's: its output is ready there
                    if placed is None:
                        continue
                    graph.add_node(source.name, time={short_name(placed.name): 0.0})
                seconds = model.transfer_seconds(tensor)  # a setup op goes near its variable
                if graph.has_edge(source.name, op.name):
                    graph[source.name][op.name]["time"] += seconds
                else:
                    graph.add_edge(source.name, op.name, time=seconds)
            for source in op.control_inputs:
                if source.name in graph and not graph.has_edge(source.name, op.name):
                    graph.add_edge(source.name, op.name, time=0.0)
        return graph


def setup_ops(ops: Sequence[Operation]) -> set[int]:
    """The ids of the ops of ``ops`` that only initialize variables (their initial values, the
    initializers and a ``global_variables_initializer`` NoOp): a separate run, which the step's
    schedule leaves out. Empty when nothing else is there yet."""
    if not ops:
        return set()
    graph = ops[0].graph
    initializers = {v.initializer._id for v in graph.get_collection(GLOBAL_VARIABLES)}
    consumed = {t.op._id for op in ops for t in op.inputs}
    consumed |= {c._id for op in ops for c in op.control_inputs}

    def initializes(op: Operation) -> bool:
        if op._id in initializers:
            return True
        return (
            op.type == "NoOp"
            and bool(op.control_inputs)
            and all(c._id in initializers for c in op.control_inputs)
        )

    stack = [op for op in ops if op._id not in consumed and not initializes(op)]
    step: set[int] = set()
    while stack:
        op = stack.pop()
        if op._id not in step:
            step.add(op._id)
            stack.extend(t.op for t in op.inputs)
            stack.extend(op.control_inputs)
    if not step:
        return set()
    return {op._id for op in ops if op._id not in step}


GENERATOR_WHY = (
    ReasonKind.GENERATOR,
    "it only generates a value (no inputs, one output), so it goes where its value crosses "
    "devices least",
)
SETUP_WHY = (
    ReasonKind.COST,
    "cost model: it only initializes variables, which a step does not wait for, so it goes "
    "where its value is used",
)


def _follow_most_consumers(
    op: Operation,
    group_of: Mapping[int, _Group],
    consumers: Mapping[int, list[Operation]],
    device_of: DeviceOf,
    why: tuple[ReasonKind, str],
) -> None:
    """An op whose time the schedule does not weigh (its value is made at once, or outside the
    step) goes where most of its consumers are, among its group's devices: the schedule's
    tie between devices says nothing, its consumers do."""
    group = group_of[op._id]
    counts: dict[Device, int] = {}
    for consumer in consumers.get(op._id, []):
        device = device_of(consumer)
        if device is not None and device in group.candidates:
            counts[device] = counts.get(device, 0) + 1
    if not counts:
        return
    most = max(counts.values())
    kind, because = why
    device = group.device
    if device is None or counts.get(device, 0) < most:
        device = next(d for d in group.candidates if counts.get(d) == most)
    elif kind is ReasonKind.GENERATOR:
        return  # the schedule's own choice, and its reason, stand
    outs = len(consumers[op._id])
    text = f"placed with {most} of its {outs} consumer(s) on {short_name(device.name)}: {because}"
    group.device = device
    group.reason = Reason(kind, text, device.name, op.device)


def _limit(device: Device) -> float:
    return float(device.memory_limit) if device.memory_limit > 0 else math.inf
