"""The cost-model placer TensorFlow's whitepaper describes (``ConfigProto(placer="cost")``).

Pinned groups, groups an earlier run placed and colocation are TensorFlow's rules, as in the
simple placer; every group that asked for nothing (or whose request soft placement relaxed) goes
where the scheduling core (``scheduling.py``) finishes the whole graph earliest, given each op's
time on each device it may take, each tensor's time to cross devices and the bytes each device
can hold. The runtime supplies the costs (``CostModel``): this layer knows no hardware.

The schedule is of a step: the ops a run of the graph's training (or inference) step runs.
TensorFlow places the whole graph a session holds at its first run, and a graph extended after
a run is placed again with the earlier placements of its stateful ops (its variables) kept; a
session here keeps every earlier placement and places only the new ops, with the placed ones
fixed where they are. So the step is known from the runs where it can be: the run that places
the ops says what it fetches. A first run that only initializes variables fetches no step; the
step is then what the graph's structure shows, the ops nothing consumes that compute from the
step's data (a placeholder, a constant, a random op outside the initializers), not those that
only read variables (``initialized_value()``'s cond) or only initialize them. With no step in
view at all (the variables are made and initialized before any op reads them) the free ops get
TensorFlow's rule, and the step made later is planned around where they went.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Container, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from placeviz.contract import ReasonKind
from placeviz.devices.context import Device
from placeviz.devices.spec import DeviceSpec
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.graph_keys import GraphKeys
from placeviz.graph.registry import ANY_INPUT
from placeviz.placement.placer import (
    DeviceOf,
    PlacementGroup,
    SimplePlacer,
    consumers_by_producer,
    is_generator,
)
from placeviz.placement.reason import Reason, short_name
from placeviz.placement.scheduling import (
    InfeasibleScheduleError,
    Schedule,
    fixed_schedule,
    schedule,
)
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
        self.fetched: Sequence[Operation] = ()  # what the run that places the ops fetches
        self._steps = StepFinder()

    def _choose(
        self,
        ordered: Sequence[Operation],
        group_of: Mapping[int, PlacementGroup],
        device_of: DeviceOf,
    ) -> None:
        self.order = {}
        free = {id(g) for g in group_of.values() if g.kind in _FREE}
        asked = {i: g for i, g in group_of.items() if id(g) not in free}
        super()._choose(ordered, asked, device_of)
        if not free:
            return
        members: dict[int, list[Operation]] = {}  # each free group's ops, in creation order
        for op in ordered:
            group = group_of.get(op.id)
            if group is not None and id(group) in free:
                members.setdefault(id(group), []).append(op)
        step = self._steps.plan(ordered, self.fetched)
        if not step.targets:
            for group_ops in members.values():
                group = group_of[group_ops[0].id]
                group.text = f"{NO_STEP}; so {group.text}"
            super()._choose(ordered, group_of, device_of)
            return
        # Only the step is scheduled: an op it does not run costs it nothing (it runs before,
        # as an initializer, or never), and would only make the search's passes fewer.
        graph = self._problem(ordered, group_of, free, device_of, step.ops)
        simple = {  # TensorFlow's choice, which the schedule must beat to be taken
            op.name: short_name(group_of[op.id].candidates[0].name)
            for group_ops in members.values()
            for op in group_ops
            if op.id in step.ops
        }
        try:
            found = self._schedule(graph, ordered, simple)
        except InfeasibleScheduleError as error:
            # TensorFlow's rule for them instead, saying why: the run checks memory itself.
            for group_ops in members.values():
                group = group_of[group_ops[0].id]
                group.text = f"the cost model found no placement ({error}); so {group.text}"
            super()._choose(ordered, group_of, device_of)
            return
        self.order = {op.id: found.start[op.name] for op in ordered if op.name in found.start}
        by_short = {short_name(d.name): d for d in self.devices}
        for group_ops in members.values():
            timed = [op for op in group_ops if op.name in found.start]
            if not timed:
                continue  # off the step: placed below, by where its value is used
            decider = min(timed, key=lambda op: (found.start[op.name], op.id))
            group = group_of[decider.id]
            device = by_short[found.device[decider.name]]
            text = f"cost model: {found.explain(decider.name)}; {step.description}"
            if group.kind is ReasonKind.SOFT:
                text = f"{group.text.split(', so ')[0]}; {text}"
            group.device, group.decider = device, decider
            group.reason = Reason(ReasonKind.COST, text, device.name, decider.device)
        # Ops the step does not time go where their values are used: those off the step from
        # the last (the initializer) back, so each follows the one it feeds; then generators.
        consumers = consumers_by_producer(ordered)
        lone = [ops[0] for ops in members.values() if len(ops) == 1]
        for op in sorted((op for op in lone if op.id not in step.ops), key=lambda o: -o.id):
            why = SETUP_WHY if op.id in step.initializing else OFF_STEP_WHY
            _follow_most_consumers(op, group_of, consumers, device_of, why)
        for op in lone:
            if op.id in step.ops and is_generator(op):
                _follow_most_consumers(op, group_of, consumers, device_of, GENERATOR_WHY)
        for group_ops in members.values():  # off the step, and no placed op uses their values
            group = group_of[group_ops[0].id]
            if group.device is None:
                group.text = f"{UNUSED}; so {group.text}"
        super()._choose(ordered, group_of, device_of)

    def _schedule(
        self,
        graph: Any,
        ordered: Sequence[Operation],
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
            peaks = self._peaks(found, ordered)
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
        split = self._pipeline_split(graph, ordered, limits, worst)
        if split is None:
            raise InfeasibleScheduleError(f"the step's live tensors would exceed {worst}")
        return split

    def _pipeline_split(
        self, graph: Any, ordered: Sequence[Operation], limits: Mapping[str, float], worst: str
    ) -> Schedule | None:
        """A deep model whose activations no earliest-finish schedule fits (it runs fastest all
        on one GPU, where they overflow): the GPUs take consecutive parts of equal compute, as
        a model split layer by layer over them, timed as one step; None when its tensors do
        not fit either."""
        gpus = [short_name(d.name) for d in self.devices if d.device_type == "GPU"]
        if len(gpus) < 2:
            return None
        devices = [{"name": name, "type": name, "memory": limits[name]} for name in limits]
        found = fixed_schedule(graph, devices, _consecutive_parts(graph, gpus), copy_engines=True)
        if any(peak > limits[name] for name, peak in self._peaks(found, ordered).items()):
            return None
        why = (
            f"the {len(gpus)} GPUs take consecutive parts of the step's ops, of equal compute, "
            f"in the order the model made them (the fastest schedule found would hold {worst}, "
            "over the limit): its part is on "
        )
        return dataclasses.replace(found, _why={n: why + d for n, d in found.device.items()})

    def _peaks(self, found: Schedule, ordered: Sequence[Operation]) -> dict[str, float]:
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
                while (forwarded := _forwarded(source)) is not None and source.name in by_name:
                    source = source.inputs[forwarded].op
                readers.setdefault(source.id, []).append(op)
        changes: dict[str, list[tuple[float, float]]] = {}
        for name, op in by_name.items():
            if _forwarded(op) is not None:
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
            for reader in readers.get(op.id, []):
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
        group_of: Mapping[int, PlacementGroup],
        free: set[int],
        device_of: DeviceOf,
        step: frozenset[int],
    ) -> Any:
        """The step's ops as a task graph: times on the devices each may take (an op the
        rules placed may take only its device), transfers on edges, colocation by group."""
        import networkx as nx

        graph = nx.DiGraph()
        model = self.model
        for op in ordered:
            group = group_of.get(op.id)
            if group is None or op.id not in step:
                continue
            is_free = id(group) in free
            devices = group.candidates if is_free else [group.device]
            graph.add_node(
                op.name,
                time={short_name(d.name): model.op_seconds(op, d) for d in devices},
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
                seconds = model.transfer_seconds(tensor)
                if graph.has_edge(source.name, op.name):
                    graph[source.name][op.name]["time"] += seconds
                else:
                    graph.add_edge(source.name, op.name, time=seconds)
            for source in op.control_inputs:
                if source.name in graph and not graph.has_edge(source.name, op.name):
                    graph.add_edge(source.name, op.name, time=0.0)
        return graph


@dataclass(frozen=True)
class Step:
    """What a placement plans for: the ops a run of the graph's step runs, and which."""

    targets: tuple[Operation, ...]  # what the run fetches (when a step), then other ends
    ops: frozenset[int]  # the ids of the ops the step runs: its targets and what they need
    initializing: Container[int]  # the ids of the ops that only initialize variables
    description: str  # which step, in the words ``explain`` ends with


class StepFinder:
    """Finds each placement's step. Which ops compute from the step's data is remembered
    across placements (ops only gain consumers), so a placement costs what it places."""

    def __init__(self) -> None:
        self._data: set[int] = set()  # ids of ops that compute from a step's data
        self._initializing: set[int] = set()  # ids of ops that only initialize variables

    def plan(self, ops: Sequence[Operation], fetched: Sequence[Operation]) -> Step:
        """The step of ``ops`` (in creation order): what the run fetches, unless it only
        initializes, and the ops nothing consumes that compute from data (its ends)."""
        if not ops:
            return Step((), frozenset(), frozenset(), "")
        placing = {op.id for op in ops}
        initializing = self._initializing_of(ops, placing)
        data = self._data
        for op in ops:
            if op.id in initializing:
                continue
            sources = [t.op for t in op.inputs] + list(op.control_inputs)
            if sources:
                if any(source.id in data for source in sources):
                    data.add(op.id)
            elif not op.op_def.ref_output and not op.op_def.control_only:
                data.add(op.id)  # a placeholder, a constant: the step's own values
        consumed = {t.op.id for op in ops for t in op.inputs}
        consumed |= {c.id for op in ops for c in op.control_inputs}
        runs = list({op.id: op for op in fetched if op.id in placing}.values())
        runs = [op for op in runs if op.id not in initializing]
        chosen = {op.id for op in runs}
        ends = [
            op
            for op in reversed(ops)  # the last made first: a training step's train op
            if op.id not in consumed
            and op.id in data
            and op.id not in chosen
            and not op.op_def.needs_feed  # a placeholder nothing reads yet is no step
        ]
        if not any(op.inputs or op.control_inputs for op in runs + ends):
            return Step((), frozenset(), initializing, "")  # nothing computes yet
        # Each op counts for the first target that needs it (the fetches first), so the
        # description names the ends that need the most ops of their own.
        step: set[int] = set()
        needs: dict[str, int] = {}
        for target in runs + ends:
            before = len(step)
            stack = [target]
            while stack:
                op = stack.pop()
                if op.id not in step and op.id in placing:
                    step.add(op.id)
                    stack.extend(t.op for t in op.inputs)
                    stack.extend(op.control_inputs)
            needs[target.name] = len(step) - before
        return Step(
            tuple(runs + ends),
            frozenset(step),
            initializing,
            _describe(runs, ends, needs),
        )

    def _initializing_of(self, ops: Sequence[Operation], placing: set[int]) -> set[int]:
        """The ids of the ops that only initialize variables, with those of ``ops`` added:
        the initializers, what their values are made from (the variables aside), and NoOps
        that group initializers (``global_variables_initializer()``)."""
        found = self._initializing
        graph = ops[0].graph
        variables = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
        variables += graph.get_collection(GraphKeys.LOCAL_VARIABLES)
        stack = [v.initializer for v in variables if v.initializer.id in placing]
        while stack:
            op = stack.pop()
            if op.id in found or (op.op_def.ref_output and not op.inputs):
                continue
            found.add(op.id)
            stack.extend(t.op for t in op.inputs)
            stack.extend(op.control_inputs)
        for op in ops:  # creation order: a group's NoOps before the NoOp that groups them
            if (
                op.op_def.control_only
                and op.control_inputs
                and not op.inputs
                and all(c.id in found for c in op.control_inputs)
            ):
                found.add(op.id)
        return found


def _describe(
    runs: Sequence[Operation], ends: Sequence[Operation], needs: Mapping[str, int]
) -> str:
    """Names the fetches, then the ends that need the most ops of their own; an end that
    needs no op but itself (a gradient's unused Identity) is not worth a name."""
    fetched = ", ".join(op.name for op in runs)
    ends = [op for op in ends if needs[op.name] > 1 or not runs]
    if not ends:
        return f"planned for the step this run fetches ({fetched})"
    names = sorted((op.name for op in ends), key=lambda name: -needs[name])[:2]
    more = len(ends) - len(names)
    named = ", ".join(names) + (f" and {more} more" if more else "")
    if not runs:
        return f"planned for the step that runs {named} (what nothing consumes)"
    return f"planned for the step this run fetches ({fetched}) and {named} (what nothing consumes)"


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
OFF_STEP_WHY = (
    ReasonKind.COST,
    "cost model: the step planned for does not run it, so it goes where its value is used",
)
UNUSED = "cost model: the step planned for does not run it, and no op placed so far uses its value"
NO_STEP = (
    "the cost model has no step to plan for (this run fetches no step, and no op computes "
    "from a placeholder or a constant: the ops that will read the variables are not made yet)"
)


def _follow_most_consumers(
    op: Operation,
    group_of: Mapping[int, PlacementGroup],
    consumers: Mapping[int, list[Operation]],
    device_of: DeviceOf,
    why: tuple[ReasonKind, str],
) -> None:
    """An op whose time the schedule does not weigh (its value is made at once, or outside the
    step) goes where most of its consumers are, among its group's devices: the schedule's
    tie between devices says nothing, its consumers do."""
    group = group_of[op.id]
    counts: dict[Device, int] = {}
    for consumer in consumers.get(op.id, []):
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
    outs = len(consumers[op.id])
    text = f"placed with {most} of its {outs} consumer(s) on {short_name(device.name)}: {because}"
    group.device, group.decider = device, op
    group.reason = Reason(kind, text, device.name, op.device)


def _limit(device: Device) -> float:
    return float(device.memory_limit) if device.memory_limit > 0 else math.inf


def _forwarded(op: Operation) -> int | None:
    """The input whose buffer the op's outputs are, when one is known before the run."""
    forwarded = op.op_def.forwards_input
    return None if forwarded == ANY_INPUT else forwarded


def _consecutive_parts(graph: Any, gpus: Sequence[str]) -> dict[str, str]:
    """Each node's device when ``gpus`` take consecutive parts of equal GPU time: the nodes'
    colocation classes (a layer's op with its gradient, a variable with its update) in the
    order their first node was made, cut where the time so far passes each GPU's share. A node
    that may not run on every GPU keeps the first device it may."""
    classes: dict[Hashable, list[str]] = {}
    for node, attrs in graph.nodes(data=True):
        if all(gpu in attrs["time"] for gpu in gpus):
            key = attrs.get("colocation")
            classes.setdefault(node if key is None else key, []).append(node)
    seconds = {
        key: sum(min(graph.nodes[n]["time"][gpu] for gpu in gpus) for n in members)
        for key, members in classes.items()
    }
    total = sum(seconds.values()) or 1.0
    device = {node: next(iter(attrs["time"])) for node, attrs in graph.nodes(data=True)}
    done = 0.0
    for key, members in classes.items():
        part = gpus[min(len(gpus) - 1, int(len(gpus) * done / total))]
        for node in members:
            device[node] = part
        done += seconds[key]
    return device
