"""Run a while loop's frame: iteration after iteration, each op on the device it was placed on.

A plan's straight-line code cannot unroll a loop whose trip count is known only at run time, so
a frame is one step of its plan, which calls a ``FrameRunner``. Within an iteration the runner
runs the frame's ops in an order that ignores the back edges (NextIteration into Merge), with
TensorFlow's dead tensors: the Switch on LoopCond sends the loop variables into the body or to
the Exits, so the last iteration runs only the condition and the exits. A loop inside the body
is a runner of its own, run once per outer iteration. Each op execution is kept with its frame
and iteration (``executions``).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops.control_flow_ops import DEAD
from placeviz.graph.validate import dependencies
from placeviz.graph.while_loop import WhileContext


class Execution(NamedTuple):
    """One op's run inside a frame: which op, in which frame (its name, and its LoopCond's node
    id) and iteration, when, whether it ran (False: a dead input, as in the iteration that
    leaves the loop), and the plan step of the outermost loop it is part of."""

    op: Operation
    frame: str
    loop: int
    iteration: int
    t0: int
    t1: int
    ran: bool
    step: int


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
        history: Callable[[Any], Any] | None = None,
        step: int = -1,
    ) -> None:
        """``history(context)``: where a loop whose gradient was built keeps its values."""
        self.context = context
        self.name = context.name
        self._loop = context.pivot.op._id
        self._step = step
        self.exits = [t for t in context.exits if t.op in set(ops)]
        self._device_of = device_of
        members = {op._id for op in ops}
        # (outer tensor id, device of the member reading it): what each argument is
        self.argument_keys = list(
            dict.fromkeys(
                (id(t), device_of[op._id])
                for op in ops
                for t in op.inputs
                if t.op._id not in members
            )
        )
        self._argument_index = {key: i for i, key in enumerate(self.argument_keys)}
        self._executions = executions
        # Units of one iteration: this loop's own ops, and each inner loop as one unit.
        inner: dict[int, list[Operation]] = {}
        units: dict[int, Any] = {}
        unit_of: dict[int, int] = {}
        for op in ops:
            child = _direct_child(op, context)
            if child is None:
                units[op._id] = op
                unit_of[op._id] = op._id
            else:
                inner.setdefault(id(child), []).append(op)
        for group in inner.values():
            child = _direct_child(group[0], context)
            runner = FrameRunner(child, group, device_of, kernel, executions, history, step)
            key = group[0]._id
            units[key] = (runner, [tensor_id for tensor_id, _ in runner.argument_keys])
            for op in group:
                unit_of[op._id] = key
        self._order = self._iteration_order(units, unit_of, members)
        # NextIteration op id -> the Merge it feeds in the next iteration
        self._next_to_merge = {
            op.inputs[1].op._id: op._id
            for op in ops
            if op.type == "Merge"
            and len(op.inputs) == 2
            and op.inputs[1].op.type == "NextIteration"
        }
        self._kernels = {op._id: kernel(op) for op in ops if _direct_child(op, context) is None}
        self._units = units
        kept = getattr(context, "history_tensors", {})
        self._history = history(context) if history is not None and kept else None
        self._kept = {key: tensor for key, tensor in kept.items()}

    @staticmethod
    def _iteration_order(
        units: dict[int, Any], unit_of: dict[int, int], members: set[int]
    ) -> list[int]:
        waiting: dict[int, set[int]] = {u: set() for u in units}
        for u, unit in units.items():
            ops = [unit] if isinstance(unit, Operation) else unit[0]._all_ops
            for op in ops:
                for dep in dependencies(op):
                    if dep._id in members and unit_of[dep._id] != u:
                        waiting[u].add(unit_of[dep._id])
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
            ops.extend([unit] if isinstance(unit, Operation) else unit[0]._all_ops)
        return ops

    def __call__(self, *arguments: Any) -> tuple[Any, ...]:
        """The loop's exit values, in the order of ``self.exits``."""
        if any(a is DEAD for a in arguments):  # the loop is in a branch not taken
            return tuple(DEAD for _ in self.exits)
        index = self._argument_index
        history = self._history
        if history is not None:
            history.clear()
            for key in self._kept:
                history.values.setdefault(key, [])
        following: dict[int, Any] = {}  # Merge op id -> the value NextIteration sent it
        results: dict[int, Any] = {}
        iteration = 0
        clock = time.perf_counter_ns
        while True:
            values: dict[int, Any] = {}  # tensor id -> value in this iteration

            def read(tensor: Tensor, reader: Operation, values: dict[int, Any] = values) -> Any:
                position = index.get((id(tensor), self._device_of[reader._id]))
                return arguments[position] if position is not None else values[id(tensor)]

            sent: dict[int, Any] = {}
            go_on = False
            for key in self._order:
                unit = self._units[key]
                t0 = clock()
                if not isinstance(unit, Operation):
                    runner, _ = unit
                    outputs = runner(
                        *[_lookup(values, arguments, index, k) for k in runner.argument_keys]
                    )
                    for tensor, value in zip(runner.exits, outputs):
                        values[id(tensor)] = value
                    continue
                op = unit
                if op.type == "Merge" and op.inputs[-1].op.type == "NextIteration":
                    value = (
                        read(op.inputs[0], op) if iteration == 0 else following.get(op._id, DEAD)
                    )
                    values[id(op.outputs[0])] = value
                    values[id(op.outputs[1])] = DEAD if value is DEAD else 0
                    self._record(op, iteration, t0, value is not DEAD)
                    continue
                inputs = [read(t, op) for t in op.inputs]
                dead = any(v is DEAD for v in inputs) or any(
                    values.get(id(c.outputs[0])) is DEAD for c in op.control_inputs if c.outputs
                )
                if op.type in ("Merge", "RefMerge"):
                    dead = all(v is DEAD for v in inputs)
                if dead:
                    for tensor in op.outputs:
                        values[id(tensor)] = DEAD
                    self._record(op, iteration, t0, False)
                    continue
                result = self._kernels[op._id](*inputs)
                if op.op_def.multi_output:
                    for tensor, value in zip(op.outputs, result):
                        values[id(tensor)] = value
                elif op.outputs:
                    values[id(op.outputs[0])] = result
                self._record(op, iteration, t0, True)
                if op.type == "NextIteration":
                    sent[self._next_to_merge[op._id]] = result
                elif op.type == "Exit":
                    results[id(op.outputs[0])] = result
                elif op.type == "LoopCond" and op._control_flow_context is self.context:
                    go_on = bool(result)
            if not go_on:
                break
            if history is not None:  # the body ran: keep what the gradient reads of it
                for key in self._kept:
                    history.values[key].append(values.get(key, DEAD))
                history.iterations = iteration + 1
            following = sent
            iteration += 1
        return tuple(results.get(id(t), DEAD) for t in self.exits)

    def _record(self, op: Operation, iteration: int, t0: int, ran: bool) -> None:
        self._executions.append(
            Execution(
                op, self.name, self._loop, iteration, t0, time.perf_counter_ns(), ran, self._step
            )
        )


def _lookup(
    values: dict[int, Any], arguments: Sequence[Any], index: dict[Any, int], key: tuple[int, str]
) -> Any:
    """An inner loop's argument: a value of this iteration, or one of this loop's own."""
    if key[0] in values:
        return values[key[0]]
    position = index.get(key)
    if position is None:  # read on another device than this loop's ops read it
        position = next(i for k, i in index.items() if k[0] == key[0])
    return arguments[position]
