"""What one ``Session.run`` executes: the ops its fetches need, in order, with transfers.

Pruning walks back from the fetches and stops at fed tensors; an op whose outputs are all fed
does not run (a control edge on it waits for nothing, as in TensorFlow). Ops run in creation
order where that is a topological order (almost always: an op is made after its inputs), else in
the topological order closest to it, since a control input can be added to an op after a later
one was made (``op._add_control_input``, a strategy's merge). Every edge between ops on
different devices gets an explicit transfer to the consumer's device, made once per
(tensor, device) and shared by every consumer there.
"""

from __future__ import annotations

import heapq
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from placeviz.devices.context import Device
from placeviz.errors import InvalidArgumentError
from placeviz.graph.core import Operation, Tensor, tensor_bytes
from placeviz.graph.ops.control_flow_ops import MERGE_TYPES, SWITCH_TYPES
from placeviz.graph.ops.state_ops import missing_feed_message
from placeviz.graph.validate import dependencies, validate
from placeviz.graph.while_loop import WhileContext
from placeviz.placement.placer import Placement, PlacementFailure


@dataclass(frozen=True)
class Transfer:
    """A copy of ``tensor`` from the device that made it to the device of its consumers."""

    tensor: Tensor
    src: Device
    dst: Device


@dataclass
class Frame:
    """A while loop's ops in one plan: they run iteration by iteration (``runtime.frames``),
    as one step of the plan, which its LoopCond stands for."""

    context: Any  # the loop's WhileContext
    ops: list[Operation]  # its ops, nested loops' included, in creation order
    arguments: list[Tensor]  # the outer values its ops read
    exits: list[Tensor]  # the loop's results (its Exits' outputs)


@dataclass
class Plan:
    ops: list[Operation]  # to execute, in order (fed placeholders are not among them)
    devices: dict[int, Device]  # op id -> where it runs
    feeds: list[Tensor]  # fed tensors, in the order the compiled function takes them
    fetches: list[Tensor | Operation]
    # before op id: the transfers its inputs need first
    transfers: dict[int, list[Transfer]] = field(default_factory=dict)
    # op id of a loop's LoopCond -> the loop, which runs as one step in its place
    frames: dict[int, Frame] = field(default_factory=dict)
    # ids of ops whose outputs nothing in the run reads (``unread_ops``): they run as a NoOp
    unread: frozenset[int] = frozenset()
    # ids of ops computed from constants alone (``folded_ops``): their values are taken when
    # the plan is compiled, as constants' are
    folded: frozenset[int] = frozenset()

    def all_transfers(self) -> list[Transfer]:
        return [t for ts in self.transfers.values() for t in ts]

    def inputs_of(self, op: Operation) -> list[Tensor]:
        """What a step reads: an op's inputs; a loop's, the outer values its ops read."""
        frame = self.frames.get(op.id)
        if frame is None:
            return list(op.inputs)
        return list(frame.arguments)

    def readers(self, op: Operation) -> list[tuple[Tensor, Operation]]:
        """(tensor, reading op) per input edge of a step (a loop's: of its ops)."""
        frame = self.frames.get(op.id)
        if frame is None:
            return [(t, op) for t in op.inputs]
        members = {m.id for m in frame.ops}
        return [(t, m) for m in frame.ops for t in m.inputs if t.op.id not in members]


def build_plan(
    fetches: Sequence[Tensor | Operation],
    feeds: Sequence[Tensor],
    placement: Placement,
    failures: Mapping[int, PlacementFailure],
    done: Container[int] = frozenset(),
) -> Plan:
    """``done``: ids of ops that already ran (eager mode); control edges on them are met."""
    fed = {id(t) for t in feeds}

    def replaced_by_feeds(op: Operation) -> bool:
        """TensorFlow replaces an op whose every output is fed: it does not run at all."""
        return bool(op.outputs) and all(id(t) in fed for t in op.outputs)

    needed: dict[int, Operation] = {}
    stack = [f.op if isinstance(f, Tensor) else f for f in fetches if id(f) not in fed]
    while stack:
        op = stack.pop()
        if op.id in needed or replaced_by_feeds(op):
            continue
        needed[op.id] = op
        for tensor in op.inputs:
            if id(tensor) not in fed and tensor.op.id not in needed:
                stack.append(tensor.op)
        stack.extend(c for c in op.control_inputs if c.id not in needed and c.id not in done)
    in_creation_order = validate(list(needed.values()))
    frames = find_frames(needed)
    if frames:
        ops = _order_with_frames(needed, frames)
    else:
        ops = execution_order(needed, in_creation_order, placement.schedule_order)
    for op in needed.values() if frames else ops:
        failure = failures.get(op.id)
        if failure is not None:
            raise failure.error
        if op.op_def.needs_feed:
            raise InvalidArgumentError(missing_feed_message(op), op=op)
    devices = {op.id: placement.device(op.name) for op in (needed.values() if frames else ops)}
    for tensor in feeds:
        if tensor.op.name in placement:
            devices.setdefault(tensor.op.id, placement.device(tensor.op.name))
            continue
        # Made where this session has no device (a cluster task feeds what another task made):
        # the value arrives where it is read.
        reader = next((op for op in ops if tensor in op.inputs), None)
        if reader is not None:
            devices.setdefault(tensor.op.id, devices[reader.id])
    plan = Plan(ops=ops, devices=devices, feeds=list(feeds), fetches=list(fetches), frames=frames)
    plan.unread = unread_ops(plan)
    plan.folded = folded_ops(plan)
    made: set[tuple[int, str]] = set()
    for op in ops:
        if op.id in plan.unread or op.id in plan.folded:
            continue  # reads nothing when the plan runs, so nothing moves to its device
        for tensor, reader in plan.readers(op):
            dst = devices[reader.id]
            src = devices[tensor.op.id]
            key = (id(tensor), dst.name)
            if src is dst or src.name == dst.name or key in made:
                continue
            made.add(key)
            plan.transfers.setdefault(op.id, []).append(Transfer(tensor, src, dst))
    return plan


def unread_ops(plan: Plan) -> frozenset[int]:
    """The ops of ``plan`` whose outputs nothing in the run reads (no op, no fetch), that are
    there only because a control edge waits on them: they compute nothing, and a control edge
    on one waits for what it would have read. TensorFlow's grappler turns such an op into a
    NoOp (its dependency optimizer), so its kernel never runs: the input gradient of a first
    layer that ``tf.gradients`` groups with the weights' gradient, say. An op fetched as a
    target, one with side effects or a reference input, a loop, a constant and a placeholder
    keep running, as there; so does every op of a plan with a cond (not done here). One pass
    from the last op: an op turned into a NoOp reads nothing, which may leave its own inputs'
    makers unread."""
    if _holds_cond(plan):
        return frozenset()
    targets = {f.id for f in plan.fetches if isinstance(f, Operation)}
    read = {id(f) for f in plan.fetches if isinstance(f, Tensor)}
    unread: set[int] = set()
    for op in reversed(plan.ops):
        if (
            op.id not in targets
            and op.id not in plan.frames
            and _computes_only_outputs(op)
            and not any(id(t) in read for t in op.outputs)
        ):
            unread.add(op.id)
            continue
        read.update(id(tensor) for tensor, _reader in plan.readers(op))
    return frozenset(unread)


# TensorFlow's grappler folds no value larger than this (``kMaxConstantSize``).
MAX_FOLDED_BYTES = 10 * 1024 * 1024


def folded_ops(plan: Plan) -> frozenset[int]:
    """The ops of ``plan`` whose inputs are all constants (or folded), on their own device:
    TensorFlow's grappler folds each into a constant before the graph runs (its constant
    folding), so their kernels never run in a step; a training step's shape arithmetic around
    a loss (Slice, Pack, ConcatV2 of constant shapes) and a mean's gradient scale (Fill, Tile,
    RealDiv of constants), say. Placement is unchanged: TensorFlow places before it optimizes.
    Control edges stay: a folded op still waits for its control inputs before its consumers
    run, as grappler's constant keeps them. As there, an op fetched or made a target keeps
    running, as does one with side effects or a reference input, one whose value would pass
    ``MAX_FOLDED_BYTES`` or whose shape is unknown, and every op of a plan with a cond."""
    if _holds_cond(plan):
        return frozenset()
    fed = {id(t) for t in plan.feeds}
    kept = {f.id if isinstance(f, Operation) else f.op.id for f in plan.fetches}
    constant: set[int] = set()  # ops whose every output is known before the run
    folded: set[int] = set()
    for op in plan.ops:
        if op.type == "Const":
            constant.add(op.id)
            continue
        if op.id in plan.frames or op.id in plan.unread or op.id in kept:
            continue
        device = plan.devices[op.id].name
        sizes = [tensor_bytes(t) for t in op.outputs]
        if (
            op.inputs
            and _computes_only_outputs(op)
            and all(
                t.op.id in constant and id(t) not in fed and plan.devices[t.op.id].name == device
                for t in op.inputs
            )
            and all(size is not None and size <= MAX_FOLDED_BYTES for size in sizes)
        ):
            constant.add(op.id)
            folded.add(op.id)
    return frozenset(folded)


def _holds_cond(plan: Plan) -> bool:
    """Whether a Switch is among the plan's ops: a branch's dead values reach ops through
    control edges too, which neither rewrite above follows."""
    return any(op.type in SWITCH_TYPES for op in plan.ops)


def _computes_only_outputs(op: Operation) -> bool:
    """Whether running ``op`` does nothing but make its outputs (TF's ``IsFreeOfSideEffect``,
    and not one of the ops grappler leaves alone)."""
    kind = op.op_def
    return (
        bool(op.outputs)
        and not (kind.stateful or kind.control_only or kind.fixed_output or kind.needs_feed)
        and not (kind.ref_output or kind.waits)
        and op.type not in MERGE_TYPES
        and not any(t.dtype.is_ref_dtype for t in op.inputs)
    )


def outermost_loop(op: Operation) -> Any:
    """The outermost while loop the op was built in, else None."""
    found = None
    context = op._control_flow_context
    while context is not None:
        if isinstance(context, WhileContext):
            found = context
        context = context.outer
    return found


def find_frames(needed: Mapping[int, Operation]) -> dict[int, Frame]:
    """The needed ops of each outermost loop, by the id of its LoopCond."""
    members: dict[int, list[Operation]] = {}
    contexts: dict[int, Any] = {}
    for index in sorted(needed):
        op = needed[index]
        context = outermost_loop(op)
        if context is not None:
            members.setdefault(id(context), []).append(op)
            contexts[id(context)] = context
    frames: dict[int, Frame] = {}
    for key, ops in members.items():
        context = contexts[key]
        inside = {op.id for op in ops}
        arguments = list(dict.fromkeys(t for op in ops for t in op.inputs if t.op.id not in inside))
        exits = [t for t in context.exits if t.op.id in inside]
        frames[context.pivot.op.id] = Frame(context, ops, arguments, exits)
    return frames


def _order_with_frames(
    needed: Mapping[int, Operation], frames: Mapping[int, Frame]
) -> list[Operation]:
    """Creation order as far as edges allow, each loop one unit (its LoopCond) placed once all
    it reads is ready."""
    unit: dict[int, int] = {op_id: op_id for op_id in needed}
    for rep, frame in frames.items():
        for op in frame.ops:
            unit[op.id] = rep
    waiting: dict[int, set[int]] = {u: set() for u in set(unit.values())}
    for op_id, op in needed.items():
        for dep in dependencies(op):
            if dep.id in needed and unit[dep.id] != unit[op_id]:
                waiting[unit[op_id]].add(unit[dep.id])
    users: dict[int, list[int]] = {}
    for u, deps in waiting.items():
        for d in deps:
            users.setdefault(d, []).append(u)
    counts = {u: len(deps) for u, deps in waiting.items()}
    ready = [u for u, c in counts.items() if c == 0]
    heapq.heapify(ready)
    result = []
    while ready:
        u = heapq.heappop(ready)
        result.append(needed[u])
        for user in users.get(u, ()):
            counts[user] -= 1
            if counts[user] == 0:
                heapq.heappush(ready, user)
    return result


def execution_order(
    ops: Mapping[int, Operation],
    in_creation_order: bool,
    schedule: Mapping[int, float] | None = None,
) -> list[Operation]:
    """``ops`` (by id) in creation order, moved only as far as edges to later ops require
    (``in_creation_order``: the validator found none); with a ``schedule`` (op id -> start, the
    cost placer's), in the order of the starts it gives, as far as edges allow."""
    ordered = [ops[i] for i in sorted(ops)]
    if in_creation_order and not schedule:
        return ordered

    def key(index: int) -> tuple[float, int]:
        return ((schedule or {}).get(index, 0.0), index)

    waiting_on = {op.id: 0 for op in ordered}
    users: dict[int, list[int]] = {}
    for op in ordered:
        for dep in {d.id for d in dependencies(op)}:
            if dep in ops:
                waiting_on[op.id] += 1
                users.setdefault(dep, []).append(op.id)
    ready = [key(i) for i, count in waiting_on.items() if count == 0]
    heapq.heapify(ready)
    result = []
    while ready:
        _, index = heapq.heappop(ready)
        result.append(ops[index])
        for user in users.get(index, ()):
            waiting_on[user] -= 1
            if waiting_on[user] == 0:
                heapq.heappush(ready, key(user))
    return result  # complete: validate() has ruled out cycles
