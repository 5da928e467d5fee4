"""Run a while loop's frame: its op executions, and when each would run on its device's stream.

A plan's straight-line code cannot unroll a loop whose trip count is known only at run time, so
a frame is one step of its plan, which calls a ``FrameRunner``. The runner computes iteration
after iteration, within an iteration in an order that ignores the back edges (NextIteration
into Merge), with TensorFlow's dead tensors: the Switch on LoopCond sends the loop variables
into the body or to the Exits, so the last iteration runs only the condition and the exits. A
loop inside the body is a runner of its own, run once per outer iteration.

Values do not depend on when an op runs, so they are computed in that order on one thread; the
times are TensorFlow's executor's (``frame_layout.py``): each execution starts once the executions
that made its inputs ended and its device's stream is free, and iteration ``k`` of a frame
starts only after iteration ``k - parallel_iterations`` finished. With ``parallel_iterations``
above 1, a layer on GPU:0 works on step ``t + 1`` while the next layer on GPU:1 works on step
``t``. A value read on another device than the one that made it is copied there once per
iteration, as TensorFlow's Send/Recv pair: a row of its own on that device's copy engine, after
its producer and before its readers. Each execution (and copy) takes its modeled time on a
simulated GPU (``simulation``) and its measured time elsewhere. Each op execution is kept
with its frame and iteration (``executions``), its times laid out from the frame's start.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from placeviz import dtypes
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops.control_flow_ops import DEAD, ENTER_TYPES
from placeviz.graph.registry import ANY_INPUT
from placeviz.graph.validate import dependencies
from placeviz.graph.while_loop import WhileContext
from placeviz.runtime.frame_layout import Row, lay_out_rows
from placeviz.runtime.loop_memory import Buffer, LoopMemory

# (op, inputs, result) -> nanoseconds: an op's modeled duration, for ops on simulated GPUs
Timing = Callable[[Sequence[Any], Any], int]
# (source device, destination device) -> how a value crosses between them: the copy (None: the
# value stays as it is) and its modeled duration from its bytes (None: measured)
Move = tuple[Callable[[Any], Any] | None, Callable[[int], int] | None]
# What holds an iteration's value (memory): its tensor id, or (tensor id, device) for its copy
Use = int | tuple[int, str]
# How an op's outputs are held (memory): not at all (an Enter: the outer value's holder does),
# in their iteration, by the next iteration's Merge (a NextIteration), by the loop's caller
HOLD_NONE, HOLD_ITERATION, HOLD_NEXT, HOLD_EXIT = 0, 1, 2, 3
_HANDLES = (dtypes.resource,)


class Execution(NamedTuple):
    """One op's run inside a frame: which op, in which frame (its name, and its LoopCond's node
    id) and iteration, when (laid out on its device's stream), whether it ran (False: a dead
    input, as in the iteration that leaves the loop), and the plan step of the outermost loop
    it is part of."""

    op: Operation
    frame: str
    loop: int
    iteration: int
    t0: int
    t1: int
    ran: bool
    step: int
    # A copy of an output of ``op`` to another device (made once per iteration for every reader
    # there, as TensorFlow's Recv): the tensor, the device it went to, its bytes; None for an
    # op's run.
    copied: tuple[Tensor, str, int] | None = None


class _OpStep(NamedTuple):
    """One of a loop's own ops with what running it needs, worked out once per runner: the
    loop runs it every iteration."""

    op: Operation
    device: str
    # per input: its tensor id, its argument position (-1: made in the loop), and the tensor
    # when it is made on another device than this op's (copied there), else None
    reads: tuple[tuple[int, int, Tensor | None], ...]
    controls: tuple[int, ...]  # control inputs' op ids
    control_values: tuple[int, ...]  # their first outputs' tensor ids (dead: this op is too)
    outputs: tuple[int, ...]  # output tensor ids
    kernel: Callable[..., Any]
    timing: Timing | None
    multi_output: bool
    enter: bool  # an Enter: its value enters once, at iteration 0
    loop_merge: bool  # a Merge of a loop variable: iteration 0's value, then NextIteration's
    merge: bool  # any Merge: dead only when every input is
    next_merge: int  # a NextIteration: the Merge it feeds (-1: not one)
    exit: bool
    own_cond: bool  # this loop's LoopCond: whether another iteration runs
    hold: int  # HOLD_*: what holds its outputs (memory)
    # a forwarding op's inputs whose buffer its outputs hold (a Merge: the one that is not
    # dead), as its reads find them in the iteration; None: its outputs are new buffers
    forwards: tuple[Use, ...] | None
    # per output, whether it is memory (not a handle: a TensorArray's, a stack's)
    counted: tuple[bool, ...]
    push: bool  # a StackPushV2: the stack holds its value until popped
    # memory: one output, a new buffer held in its iteration (most ops): its tensor, else None
    plain: Tensor | None
    pop: bool  # a StackPopV2: its output holds what the stack held
    releases: tuple[Use, ...]  # the values whose last reader in the iteration it is


class _Trace:
    """The rows of one outermost frame's run, and a number for each frame instance. A frame
    that is not laid out (``lays_out`` False) records its executions as they are."""

    def __init__(self, lays_out: bool, step: int, room: dict[str, int]) -> None:
        self.rows: list[Any] = []  # Row, or Execution where nothing is laid out
        self.instances = 0
        self.lays_out = lays_out
        self.step = step
        self.room = room  # memory: per device, the bytes the loop's buffers may take
        self.laid: list[Execution] = []  # once kept: each row's execution, laid out

    def instance(self) -> int:
        self.instances += 1
        return self.instances - 1


class _Iteration:
    """One iteration of one frame instance while it runs: its values, the rows that made them,
    and how its rows are recorded."""

    def __init__(
        self,
        runner: FrameRunner,
        iteration: int,
        groups: tuple[tuple[int, int], ...],
        gate: tuple[int, int] | None,
        trace: _Trace,
    ) -> None:
        self.runner = runner
        self.iteration = iteration
        self.groups = groups
        self.gate = gate
        self.trace = trace
        self.values: dict[int, Any] = {}  # tensor id -> value in this iteration
        self.made: dict[int, int] = {}  # tensor id -> the row that made it
        self.done: dict[int, int] = {}  # op id -> its row
        # (tensor id, device) -> its copy there and the copy's row (made at the first read)
        self.copies: dict[tuple[int, str], tuple[Any, int]] | None = None
        # memory: each value's holder on its buffer, by what holds it (None: not counted)
        self.held: dict[Use, Buffer] | None = None if runner._memory is None else {}

    def record(
        self, op: Operation, ran: bool, start: int, duration: int, deps: Sequence[int]
    ) -> None:
        runner = self.runner
        rows = self.trace.rows
        row = self.done[op.id] = len(rows)
        if not self.trace.lays_out:
            end = start + duration
            rows.append(
                Execution(
                    op, runner.name, runner._loop, self.iteration, start, end, ran, self.trace.step
                )
            )
            return
        rows.append(
            Row(
                op,
                runner.name,
                runner._loop,
                self.iteration,
                ran,
                start,
                duration,
                runner._device_of[op.id],
                deps,
                self.groups,
                self.gate,
                None,
            )
        )
        for tensor in op.outputs:
            self.made[id(tensor)] = row

    def copy(self, tensor: Tensor, device: str) -> tuple[Any, int]:
        """This iteration's value of ``tensor``, made on another device, on ``device`` and the
        row of its copy: one copy per device and iteration, as TensorFlow's Recv, which starts
        when its producer ended and which the readers there wait for. A dead value's copy moves
        nothing (it does not run)."""
        key = (id(tensor), device)
        if self.copies is None:
            self.copies = {}
        found = self.copies.get(key)
        if found is not None:
            return found
        runner = self.runner
        source = runner._device_of[tensor.op.id]
        move, timing = runner._moves[(source, device)]
        value = self.values[id(tensor)]
        ran = value is not DEAD
        size = getattr(value, "nbytes", 0) if ran else 0
        start = time.perf_counter_ns()
        duration = 0
        if ran and move is not None:
            value = move(value)
            duration = time.perf_counter_ns() - start
        if ran and timing is not None:
            duration = timing(size)
        rows = self.trace.rows
        found = self.copies[key] = (value, len(rows))
        memory = runner._memory
        if ran and memory is not None:
            held = memory.make(value, device, tensor.op, tensor, self.trace, len(rows))
            if held is not None:
                self.held[key] = held  # type: ignore[index]
        rows.append(
            Row(
                tensor.op,
                runner.name,
                runner._loop,
                self.iteration,
                ran,
                start,
                duration,
                device,
                (self.made.get(id(tensor), -1),),
                self.groups,
                self.gate,
                (tensor, device, size),
            )
        )
        return found


def _direct_child(op: Operation, context: Any) -> Any:
    """The loop right inside ``context`` that ``op`` belongs to, or None for a direct member."""
    child = None
    inner = op._control_flow_context
    while inner is not None and inner is not context:
        if isinstance(inner, WhileContext):
            child = inner
        inner = inner.outer
    return child


class FrameRunner:
    """Runs the ops of one loop (``ops``, nested loops' included) given its outer values."""

    def __init__(
        self,
        context: Any,
        ops: Sequence[Operation],
        device_of: dict[int, str],
        kernel: Callable[[Operation], Callable[..., Any]],
        executions: list[Execution],
        step: int = -1,
        timing: Callable[[Operation], Timing | None] | None = None,
        transfer: Callable[[str, str], Move] | None = None,
        memory: LoopMemory | None = None,
    ) -> None:
        """``timing(op)``: the modeled duration of an op on a simulated GPU (None elsewhere);
        ``transfer(source, destination)``: how a value crosses between two devices;
        ``memory``: where the run's buffers are counted (None: not counted)."""
        self.context = context
        self._memory = memory
        self.name = context.name
        self._loop = context.pivot.op.id
        self._step = step
        self._parallel = max(int(context.parallel_iterations), 1)
        self.exits = [t for t in context.exits if t.op in set(ops)]
        self._device_of = device_of
        members = {op.id for op in ops}
        # tensor id -> the device of the member that makes it
        self._producer_device = {id(t): device_of[op.id] for op in ops for t in op.outputs}
        # (outer tensor id, device of the member reading it): what each argument is
        self.argument_keys = list(
            dict.fromkeys(
                (id(t), device_of[op.id]) for op in ops for t in op.inputs if t.op.id not in members
            )
        )
        self._argument_index = {key: i for i, key in enumerate(self.argument_keys)}
        # Values of an iteration read on another device than theirs, by tensor id, and how they
        # cross (empty for a loop on one device: its reads check nothing more)
        self._crossing: dict[int, Tensor] = {}
        self._moves: dict[tuple[str, str], Move] = {}
        for op in ops:
            for t in op.inputs:
                if t.op.id not in members:
                    continue
                pair = (device_of[t.op.id], device_of[op.id])
                if pair[0] != pair[1]:
                    self._crossing[id(t)] = t
                    if pair not in self._moves:
                        self._moves[pair] = (None, None) if transfer is None else transfer(*pair)
        self._executions = executions
        # Units of one iteration: this loop's own ops, and each inner loop as one unit.
        inner: dict[int, list[Operation]] = {}
        units: dict[int, Any] = {}
        unit_of: dict[int, int] = {}
        for op in ops:
            child = _direct_child(op, context)
            if child is None:
                units[op.id] = op
                unit_of[op.id] = op.id
            else:
                inner.setdefault(id(child), []).append(op)
        for group in inner.values():
            child = _direct_child(group[0], context)
            runner = FrameRunner(
                child, group, device_of, kernel, executions, step, timing, transfer, memory
            )
            key = group[0].id
            units[key] = runner
            for op in group:
                unit_of[op.id] = key
        self._order = self._iteration_order(units, unit_of, members)
        # NextIteration op id -> the Merge it feeds in the next iteration
        self._next_to_merge = {
            op.inputs[1].op.id: op.id
            for op in ops
            if op.type == "Merge"
            and len(op.inputs) == 2
            and op.inputs[1].op.type == "NextIteration"
        }
        own = [op for op in ops if _direct_child(op, context) is None]
        self._kernels = {op.id: kernel(op) for op in own}
        self._timings = {}
        if timing is not None:
            self._timings = {op.id: t for op in own if (t := timing(op)) is not None}
        self._units = units
        self._releases = self._last_reads(units, members) if memory is not None else {}
        self._steps = {op.id: self._op_step(op, members) for op in own}
        # Whether the frame's time is modeled: some op of it (or of an inner loop) is.
        self.modeled = bool(self._timings) or any(
            isinstance(u, FrameRunner) and u.modeled for u in units.values()
        )
        self.makespan = 0  # ns, the last run's laid-out length
        # A frame on one device whose ops take their measured time runs as laid out already:
        # its executions keep their clocks (nothing to lay out).
        self._lays_out = self.modeled or len(set(device_of[op.id] for op in ops)) > 1

    def _op_step(self, op: Operation, members: set[int]) -> _OpStep:
        device = self._device_of[op.id]
        reads = []
        for t in op.inputs:
            position = self._argument_index.get((id(t), device), -1)
            crossing = t.op.id in members and self._device_of[t.op.id] != device
            reads.append((id(t), position, t if crossing else None))
        loop_merge = (
            op.type == "Merge" and len(op.inputs) == 2 and op.inputs[1].op.type == "NextIteration"
        )
        next_merge = self._next_to_merge.get(op.id, -1)
        uses: tuple[Use, ...] = tuple(
            tid if crossing is None else (tid, device) for tid, _, crossing in reads
        )
        forwarded = op.op_def.forwards_input  # the input whose buffer its outputs hold
        forwards = None
        if forwarded is not None:
            forwards = uses if forwarded == ANY_INPUT else uses[forwarded : forwarded + 1]
        if op.type in ENTER_TYPES:
            hold = HOLD_NONE
        elif next_merge >= 0:
            hold = HOLD_NEXT
        elif op.type == "Exit":
            hold = HOLD_EXIT
        else:
            hold = HOLD_ITERATION
        return _OpStep(
            op=op,
            device=device,
            reads=tuple(reads),
            controls=tuple(c.id for c in op.control_inputs),
            control_values=tuple(id(c.outputs[0]) for c in op.control_inputs if c.outputs),
            outputs=tuple(id(t) for t in op.outputs),
            kernel=self._kernels[op.id],
            timing=self._timings.get(op.id),
            multi_output=op.op_def.multi_output,
            enter=op.type in ENTER_TYPES,
            loop_merge=loop_merge,
            merge=op.type in ("Merge", "RefMerge"),
            next_merge=next_merge,
            exit=op.type == "Exit",
            own_cond=op.type == "LoopCond" and op._control_flow_context is self.context,
            hold=hold,
            forwards=forwards,
            counted=tuple(t.dtype.base_dtype not in _HANDLES for t in op.outputs),
            push=op.type == "StackPushV2",
            plain=op.outputs[0]
            if forwards is None
            and op.type != "StackPopV2"
            and hold == HOLD_ITERATION
            and len(op.outputs) == 1
            and not op.op_def.multi_output
            and op.outputs[0].dtype.base_dtype not in _HANDLES
            else None,
            pop=op.type == "StackPopV2",
            releases=self._releases.get(op.id, ()),
        )

    def _last_reads(self, units: dict[int, Any], members: set[int]) -> dict[int, tuple[Use, ...]]:
        """Per unit of an iteration (memory), the values it is the last reader of in the
        iteration's order: a value of the iteration (made by an op of this loop held in its
        iteration, or given by an inner loop) and its copy on another device, read by the ops
        there. A value no one reads is let go by the unit that made it."""
        device_of = self._device_of
        last: dict[Use, int] = {}
        for position, key in enumerate(self._order):
            unit = units[key]
            if isinstance(unit, FrameRunner):
                reads = [(t, d) for t, d in unit.argument_keys]
                made = [id(t) for t in unit.exits]
            else:
                loop_merge = unit.type == "Merge" and any(
                    t.op.type == "NextIteration" for t in unit.inputs
                )  # reads what entered or what the last iteration sent: held elsewhere
                device = device_of[unit.id]
                reads = (
                    []
                    if loop_merge
                    else [(id(t), device) for t in unit.inputs if t.op.id in members]
                )
                held = not (
                    unit.type in ENTER_TYPES
                    or unit.type == "Exit"
                    or (unit.type == "NextIteration" and unit.id in self._next_to_merge)
                )
                made = [id(t) for t in unit.outputs] if held else []
            for tensor_id in made:
                last[tensor_id] = position
            for tensor_id, device in reads:
                last[tensor_id] = position
                producer = self._producer_device.get(tensor_id)
                if producer is not None and producer != device:
                    last[(tensor_id, device)] = position
        releases: dict[int, list[Use]] = {}
        for use, position in last.items():
            releases.setdefault(self._order[position], []).append(use)
        return {key: tuple(uses) for key, uses in releases.items()}

    @staticmethod
    def _iteration_order(
        units: dict[int, Any], unit_of: dict[int, int], members: set[int]
    ) -> list[int]:
        waiting: dict[int, set[int]] = {u: set() for u in units}
        for u, unit in units.items():
            ops = [unit] if isinstance(unit, Operation) else unit._all_ops
            for op in ops:
                for dep in dependencies(op):
                    if dep.id in members and unit_of[dep.id] != u:
                        waiting[u].add(unit_of[dep.id])
        users: dict[int, list[int]] = {}
        for u, deps in waiting.items():
            for d in deps:
                users.setdefault(d, []).append(u)
        counts = {u: len(d) for u, d in waiting.items()}
        ready = [u for u, c in counts.items() if c == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            u = heapq.heappop(ready)
            order.append(u)
            for user in users.get(u, ()):
                counts[user] -= 1
                if counts[user] == 0:
                    heapq.heappush(ready, user)
        return order

    @property
    def _all_ops(self) -> list[Operation]:
        ops: list[Operation] = []
        for unit in self._units.values():
            ops.extend([unit] if isinstance(unit, Operation) else unit._all_ops)
        return ops

    def __call__(self, *arguments: Any) -> tuple[Any, ...]:
        """The loop's exit values, in the order of ``self.exits``; its executions, laid out
        from the clock at the call, go to ``executions``."""
        self.makespan = 0
        if any(a is DEAD for a in arguments):  # the loop is in a branch not taken
            return tuple(DEAD for _ in self.exits)
        memory = self._memory
        trace = _Trace(
            self._lays_out, self._step, {} if memory is None else memory.room(self._step)
        )
        try:
            results, rows, held = self._run(arguments, [-1] * len(arguments), (), trace)
            if memory is not None:
                for tensor, value, row in zip(self.exits, results, rows):
                    if value is not DEAD:
                        device = self._device_of[tensor.op.id]
                        memory.hand_over(held.get(id(tensor)), value, device, tensor.op, trace, row)
                memory.completed.add(self._step)
        finally:  # a failed run's trace holds what ran before the error
            self._keep(trace)
        return results

    def _keep(self, trace: _Trace) -> None:
        """The run's executions, laid out when the frame spans devices or is modeled."""
        rows = trace.rows
        if not trace.lays_out:
            trace.laid = rows
            self._executions.extend(rows)
            return
        begin = rows[0].start if rows else 0
        starts, ends = lay_out_rows(rows)
        self.makespan = max(ends, default=0)
        trace.laid = [
            Execution(
                r.op,
                r.frame,
                r.loop,
                r.iteration,
                begin + t0,
                begin + t1,
                r.ran,
                trace.step,
                r.copied,
            )
            for r, t0, t1 in zip(rows, starts, ends)
        ]
        self._executions.extend(trace.laid)

    def _run(
        self,
        arguments: Sequence[Any],
        producers: Sequence[int],
        outer: tuple[tuple[int, int], ...],
        trace: _Trace,
    ) -> tuple[tuple[Any, ...], list[int], dict[int, Buffer]]:
        """One run of the frame inside its outer iterations ``outer``: its exit values, the
        rows that made them and (memory) their holders by tensor id. ``producers``: the row
        that made each argument (-1: none)."""
        steps = self._steps
        memory = self._memory
        exit_held: dict[int, Buffer] = {}
        carried: dict[int, Buffer] = {}  # memory: Merge id -> the holder of what was sent to it
        instance = trace.instance()
        lays_out = trace.lays_out
        following: dict[int, tuple[Any, int]] = {}  # Merge id -> (value NextIteration sent, row)
        entered: dict[int, tuple[Any, int]] = {}  # Enter's output id -> (value, its row)
        results: dict[int, tuple[Any, int]] = {}
        iteration = 0
        clock = time.perf_counter_ns
        while True:
            gate = (instance, iteration - self._parallel) if iteration >= self._parallel else None
            it = _Iteration(self, iteration, ((instance, iteration), *outer), gate, trace)
            values, made, done = it.values, it.made, it.done
            record = it.record
            sent: dict[int, tuple[Any, int]] = {}
            sending: dict[int, Buffer] = {}  # memory: what ``sent`` holds
            go_on = False
            pending: _OpStep | None = None  # memory: the last op, whose reads end with it
            for key in self._order:
                if pending is not None:
                    self._let_go(pending.releases, it, done[pending.op.id])
                    pending = None
                step = steps.get(key)
                if step is None:  # an inner loop, run whole in this iteration
                    self._run_inner(key, it, arguments, producers, trace)
                    continue
                if memory is not None and step.releases:
                    pending = step
                op = step.op
                t0 = clock()  # measured: the op's dispatch as well as its kernel
                if iteration and step.enter:  # a frame's value enters once, as in TF
                    out = step.outputs[0]
                    values[out], made[out] = entered[out]
                    done[op.id] = made[out]
                    continue
                if step.loop_merge:
                    if iteration == 0:
                        value, row = self._read(step.reads[0], step, it, arguments, producers)
                    else:
                        value, row = following.get(op.id, (DEAD, -1))
                    values[step.outputs[0]] = value
                    values[step.outputs[1]] = DEAD if value is DEAD else 0
                    if value is DEAD:
                        duration = 0
                    elif step.timing is not None:
                        duration = step.timing([value], (value, 0))
                    else:
                        duration = clock() - t0
                    record(op, value is not DEAD, t0, duration, (row,))
                    if memory is not None and value is not DEAD:
                        self._merged(step, it, carried.pop(op.id, None))
                    continue
                inputs = []
                deps = []
                some_dead = False
                for read in step.reads:
                    tid, position, crossing = read
                    if position >= 0:
                        value, row = arguments[position], producers[position]
                    elif crossing is not None:
                        value, row = it.copy(crossing, step.device)
                    else:
                        value, row = values[tid], made.get(tid, -1)
                    if value is DEAD:
                        some_dead = True
                    inputs.append(value)
                    deps.append(row)
                if lays_out and step.controls:
                    deps.extend(done.get(c, -1) for c in step.controls)
                if step.merge:
                    dead = all(v is DEAD for v in inputs)
                elif some_dead:
                    dead = True
                else:
                    dead = False
                    for c in step.control_values:
                        if values.get(c) is DEAD:
                            dead = True
                            break
                if dead:
                    for out in step.outputs:
                        values[out] = DEAD
                    record(op, False, t0, 0, deps)
                    if step.enter:
                        entered[step.outputs[0]] = (DEAD, done[op.id])
                    continue
                result = step.kernel(*inputs)
                duration = clock() - t0
                if step.timing is not None:
                    duration = step.timing(inputs, result)
                if step.multi_output:
                    for out, value in zip(step.outputs, result):
                        values[out] = value
                elif step.outputs:
                    values[step.outputs[0]] = result
                record(op, True, t0, duration, deps)
                if memory is not None and step.hold:
                    if step.plain is not None:
                        buffer = memory.make(
                            result, step.device, op, step.plain, trace, done[op.id]
                        )
                        if buffer is not None:
                            it.held[step.outputs[0]] = buffer  # type: ignore[index]
                    else:
                        self._hold(step, inputs, result, it, done[op.id], sending, exit_held)
                if step.enter:
                    entered[step.outputs[0]] = (result, done[op.id])
                elif step.next_merge >= 0:
                    sent[step.next_merge] = (result, done[op.id])
                elif step.exit:
                    results[step.outputs[0]] = (result, done[op.id])
                elif step.own_cond:
                    go_on = bool(result)
            if pending is not None:
                self._let_go(pending.releases, it, done[pending.op.id])
            if memory is not None:
                for held in carried.values():  # sent to a Merge that did not run
                    memory.release(held, trace, len(trace.rows) - 1)
                carried = sending
            if not go_on:
                break
            following = sent
            iteration += 1
        if memory is not None:
            for held in carried.values():
                memory.release(held, trace, len(trace.rows) - 1)
        found = [results.get(id(t), (DEAD, -1)) for t in self.exits]
        return tuple(v for v, _ in found), [r for _, r in found], exit_held

    def _hold(
        self,
        step: _OpStep,
        inputs: Sequence[Any],
        result: Any,
        it: _Iteration,
        row: int,
        sending: dict[int, Buffer],
        exit_held: dict[int, Buffer],
    ) -> None:
        """Memory: the buffers what ``step`` (row ``row`` of iteration ``it``) made hold (new
        ones, or a forwarded input's), and a stack's hold on a pushed value."""
        memory: Any = self._memory
        held: Any = it.held
        source = None
        if step.pop:
            source = memory.pop(result)  # the stack's hold becomes the output's
        elif step.forwards is not None:
            use = step.forwards[0]
            if len(step.forwards) > 1:  # a Merge: the input that is not dead
                use = next(u for u, v in zip(step.forwards, inputs) if v is not DEAD)
            source = held.get(use)
        outputs = result if step.multi_output else (result,)
        for tensor, value, counted in zip(step.op.outputs, outputs, step.counted):
            if value is DEAD or not counted:
                continue
            if step.pop:
                buffer = source
            elif step.forwards is not None:
                buffer = memory.hold(source)
            else:
                buffer = memory.make(value, step.device, step.op, tensor, it.trace, row)
            if buffer is None:
                continue
            if step.hold == HOLD_ITERATION:
                held[id(tensor)] = buffer
            elif step.hold == HOLD_NEXT:
                sending[step.next_merge] = buffer
            else:
                exit_held[id(tensor)] = buffer
        if step.push:
            memory.push(source, result)

    def _merged(self, step: _OpStep, it: _Iteration, sent: Buffer | None) -> None:
        """Memory: a loop variable's Merge holds what the last iteration sent it (the holder
        moves to it), or in the first iteration what entered (the outer value's: nothing)."""
        held = it.held
        assert held is not None
        buffer = sent
        if buffer is None and step.forwards:
            buffer = LoopMemory.hold(held.get(step.forwards[0]))
        if buffer is not None:
            held[id(step.op.outputs[0])] = buffer

    def _let_go(self, uses: Sequence[Use], it: _Iteration, row: int) -> None:
        """Memory: the values whose last reader in iteration ``it`` was row ``row``."""
        held = it.held
        assert held is not None and self._memory is not None
        for use in uses:
            key = held.pop(use, None)
            if key is not None:
                self._memory.release(key, it.trace, row)

    @staticmethod
    def _read(
        read: tuple[int, int, Tensor | None],
        step: _OpStep,
        it: _Iteration,
        arguments: Sequence[Any],
        producers: Sequence[int],
    ) -> tuple[Any, int]:
        """One input of ``step`` in iteration ``it`` and the row that made (or copied) it."""
        tid, position, crossing = read
        if position >= 0:
            return arguments[position], producers[position]
        if crossing is not None:
            return it.copy(crossing, step.device)
        return it.values[tid], it.made.get(tid, -1)

    def _run_inner(
        self,
        key: int,
        it: _Iteration,
        arguments: Sequence[Any],
        producers: Sequence[int],
        trace: _Trace,
    ) -> None:
        """The loop inside this one that is unit ``key``, run whole in iteration ``it``: its
        exits join its values (memory: held in this iteration)."""
        unit = self._units[key]
        inner = [self._inner_argument(it, arguments, producers, k) for k in unit.argument_keys]
        held: dict[int, Buffer] = {}
        if any(v is DEAD for v, _ in inner):
            outputs, exit_rows = tuple(DEAD for _ in unit.exits), [-1] * len(unit.exits)
        else:
            outputs, exit_rows, held = unit._run(
                [v for v, _ in inner], [r for _, r in inner], it.groups, trace
            )
        for tensor, value, row in zip(unit.exits, outputs, exit_rows):
            it.values[id(tensor)] = value
            it.made[id(tensor)] = row
        if it.held is not None:
            it.held.update(held)
            self._let_go(self._releases.get(key, ()), it, len(trace.rows) - 1)

    def _inner_argument(
        self,
        it: _Iteration,
        arguments: Sequence[Any],
        producers: Sequence[int],
        key: tuple[int, str],
    ) -> tuple[Any, int]:
        """An inner loop's argument and the row that made it (or copied it to the device of
        the inner ops that read it): a value of this iteration, or one of this loop's own
        arguments."""
        if key[0] in it.values:
            tensor = self._crossing.get(key[0])
            if tensor is not None and self._device_of[tensor.op.id] != key[1]:
                return it.copy(tensor, key[1])
            return it.values[key[0]], it.made.get(key[0], -1)
        index = self._argument_index
        position = index.get(key)
        if position is None:  # read on another device than this loop's ops read it
            position = next(i for k, i in index.items() if k[0] == key[0])
        return arguments[position], producers[position]
