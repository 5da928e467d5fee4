"""A plan's code: its steps, and the Python source of the function that runs them, compiled once.

Each step (an op or a transfer) is one line followed by one clock read, so every run records its
per-step timings at the price of a clock call; a fully traced variant also records the bytes each
step produced. Each line is mapped to its step, so the line an exception comes from names the
failing step. Tensors are deleted right after their last use, so memory is freed as soon as
TensorFlow would. A plan on several device streams becomes one function per stream; a plan on
real GPUs one function that launches each GPU step on its stream between two CUDA events.
``executor.CompiledPlan`` runs what this module builds.
"""

from __future__ import annotations

import functools
import itertools
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from placeviz.contract import EventKind, TimingSource
from placeviz.devices.context import Device
from placeviz.errors import InvalidArgumentError, OpError
from placeviz.graph.core import Operation, Tensor, tensor_bytes
from placeviz.graph.ops.control_flow_ops import DEAD, MERGE_TYPES, SWITCH_TYPES
from placeviz.runtime import backends
from placeviz.runtime.backends import cupy_backend
from placeviz.runtime.backends.cuda_runtime import CudaRuntime, StepClocks
from placeviz.runtime.dry_run import DryPlan
from placeviz.runtime.frames import Execution, FrameRunner, Move
from placeviz.runtime.loop_memory import LoopMemory
from placeviz.runtime.plan import Frame, Plan
from placeviz.runtime.simulation import op_timing, transfer_timing
from placeviz.runtime.state import KernelContext, SessionState, host_copy

_plan_ids = itertools.count()


@dataclass(frozen=True)
class Step:
    """One timed unit of a run: an op, or a transfer of ``tensor`` from ``peer`` to ``device``."""

    kind: EventKind
    op: Operation  # the op that runs (for a transfer: the consumer that needs the tensor)
    device: Device
    tensor: Tensor | None = None
    peer: Device | None = None
    deps: tuple[int, ...] = ()  # steps that must finish first (data, control, transfers)
    # False: the step runs no code, so it takes no time: a transfer between devices that share
    # memory, or an op whose value the plan took when it was compiled (a constant).
    runs_code: bool = True
    frame: FrameRunner | None = None  # a while loop's step (kind FRAME): its runner
    exits: tuple[tuple[Tensor, Device], ...] = ()  # a loop's step: its results and their devices


class Cancelled(Exception):
    """Raised inside a stream when another stream failed or the run was interrupted."""


_CHECK = "if CX[0]: raise _Cancelled"


def maybe_dead(plan: Plan) -> set[int]:
    """Ids of the plan's ops a Switch's dead output can reach, through data or control edges
    (the Switches themselves included)."""
    switches = [op for op in plan.ops if op.type in SWITCH_TYPES]
    if not switches:
        return set()
    consumers: dict[int, list[Operation]] = {}
    for op in plan.ops:
        for tensor in op.inputs:
            consumers.setdefault(tensor.op.id, []).append(op)
        for control in op.control_inputs:
            consumers.setdefault(control.id, []).append(op)
    reached: set[int] = set()
    stack = list(switches)
    while stack:
        op = stack.pop()
        if op.id in reached:
            continue
        reached.add(op.id)
        stack.extend(consumers.get(op.id, ()))
    return reached


def _alive(name: str, value: Any) -> Any:
    """A fetched value, which a branch not taken leaves without one (TF's error)."""
    if value is DEAD:
        raise InvalidArgumentError(
            f"Retval[0] does not have value: '{name}' is in a branch of a cond that did not run"
        )
    return value


def _deref(value: Any) -> Any:
    read = getattr(value, "read", None)
    return value if read is None else read()


def _with_known(runner: FrameRunner, known: Sequence[Any], *arguments: Any) -> tuple[Any, ...]:
    """A dry loop's run: the outer values the dry run knows in place of their shapes (a dead
    one, of a branch not taken, stays dead)."""
    return runner(*(a if k is None or a is DEAD else k for a, k in zip(arguments, known)))


def _no_memory_check(step: int, measured: Sequence[int]) -> None:
    return None


def _tuple(items: Any) -> str:
    items = list(items)
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


def _substitute(expression: str, name: str, replacement: str) -> str:
    return re.sub(rf"\b{re.escape(name)}\b", replacement, expression)


def real_deps(steps: Sequence[Step], index: int) -> list[int]:
    """Step ``index``'s dependencies, looking through steps that run no code."""
    result: list[int] = []
    for dep in steps[index].deps:
        if not steps[dep].runs_code:
            result.extend(real_deps(steps, dep))
        else:
            result.append(dep)
    return result


def _skip(not_run: list[int], step: int, value: Any) -> Any:
    """An op that did not run (a branch not taken): its outputs are dead."""
    not_run.append(step)
    return value


class _Line:
    __slots__ = ("defs", "step", "text", "uses")

    def __init__(self, text: str, uses: Sequence[str], defs: Sequence[str], step: int | None):
        self.text = text
        self.uses = uses
        self.defs = defs
        self.step = step


class PlanCode:
    """A plan's steps and the function(s) that run them: ``run`` (one stream), or ``streams``
    and ``collect`` (``parallel``: one function per device stream, values shared through ``V``).

    What a run records lands in lists built here and bound into the code: ``not_run`` (steps of
    ops in branches not taken), ``executions`` (each op run inside a loop's frame); the executor
    clears them before each run.
    """

    def __init__(
        self,
        plan: Plan,
        state: SessionState,
        full_trace: bool,
        check_dynamic_memory: bool,
        threaded: bool,
        gpus: CudaRuntime | None,
        dry: DryPlan | None,
        overflow: Callable[[Sequence[Step]], tuple[int, OpError] | None] | None,
    ) -> None:
        """``threaded``: the session has a worker per device stream; ``gpus``: the session's
        real GPUs (None when it has none); ``dry``: a dry run's shapes, whose kernels then
        replace the ops' own; ``overflow``: given the steps, the one whose allocation overflows
        its device (memory.py's ``fit``), where every run then fails after the steps before it."""
        self.dry = dry
        self._gpus = gpus
        self.clocks: StepClocks | None = None  # real GPUs: each GPU step's CUDA events
        # Per-step TimingSource codes where they differ (CUDA events on GPUs), else None.
        self.sources: np.ndarray | None = None
        self.gpu_deps_of_host_steps: dict[int, list[int]] = {}  # what a host step's time waits for
        self.full_trace = full_trace
        # Measure outputs whose sizes static shapes do not give, on GPUs, and call ``MEM``.
        self.check_dynamic_memory = check_dynamic_memory
        self.steps: list[Step] = []
        self.not_run: list[int] = []
        self.folded: list[int] = []  # ops folded into constants (``_folded``)
        self.executions: list[Execution] = []
        self._frame_outputs: dict[int, list[Tensor]] = {}  # a loop's step -> its results
        self.frame_devices: dict[int, str] = {}  # op id in a loop -> its device's name
        # The buffers made inside loops, counted where they are traced or where a GPU's limit
        # must be checked (None: no loop, or neither)
        self.loop_memory: LoopMemory | None = None
        if plan.frames and (
            full_trace or any(d.device_type != "CPU" for d in plan.devices.values())
        ):
            limits = {d.name: d.memory_limit for d in plan.devices.values()}
            self.loop_memory = LoopMemory(limits, full_trace)
        self._maybe_dead: set[int] = set()
        self.namespace: dict[str, Any] = {
            "_host": host_copy,
            "_Cancelled": Cancelled,
            "MEM": _no_memory_check,
        }
        self.line_steps: dict[int, int] = {}  # line of the source -> the step it runs
        self.filename = f"<placeviz plan {next(_plan_ids)}>"
        lines, results, args, constants = self._generate(plan, state)
        found = overflow(self.steps) if overflow is not None else None
        if found is not None:
            self._fail_at(lines, *found)
        if self._gpus is not None:
            # Values built now (constants) were made on CuPy's default stream, which the GPUs'
            # own streams do not wait for: they must be on the card before any run reads them.
            ordinals = {
                d.physical.cuda_ordinal or 0 for d in plan.devices.values() if d in self._gpus
            }
            for ordinal in ordinals:
                cupy_backend.cupy().cuda.Device(ordinal).synchronize()
        self.byte_offsets = [-1] * len(self.steps)  # FULL_TRACE: where each step's sizes go
        self.byte_counts = [0] * len(self.steps)
        self.byte_slots = 0
        self.static_sizes: dict[int, int] = {}  # slot of B -> the size static shapes give
        for line in constants:
            self._bytes_lines(line)  # static sizes only: a constant measures nothing
        stepped = [self.steps[line.step] for line in lines if line.step is not None]
        streams = list(dict.fromkeys(step.device.name for step in stepped))
        # Real GPUs overlap through their CUDA streams, launched from this one thread.
        self.parallel = threaded and len(streams) > 1 and self._gpus is None
        # A parallel run's shared values: the feeds' slots of V, its length, the steps waited on
        self.feed_slots: list[int] = []
        self.value_slots = 0
        self.event_steps: list[int] = []
        if self.parallel:
            self.source = self._parallel_source(lines, results, args, streams)
        else:
            self.source = self._sequential_source(lines, results, args)
        exec(compile(self.source, self.filename, "exec"), self.namespace)
        self.run: Callable[..., tuple[Any, ...]] | None = None
        self.streams: list[tuple[str, Callable[..., None]]] = []
        self.collect: Callable[[list[Any]], tuple[Any, ...]] | None = None
        if self.parallel:
            functions = [self.namespace[f"_stream_{i}"] for i in range(len(streams))]
            self.streams = list(zip(streams, functions))
            self.collect = self.namespace["_collect"]
        else:
            self.run = self.namespace["_run"]

    def _fail_at(self, lines: list[_Line], step: int, error: OpError) -> None:
        """Step ``step`` raises ``error`` (a fresh one each run) instead of running its op; a
        step without code (a constant, made when the plan was) raises before the next one."""
        self.namespace["_overflow"] = lambda: type(error)(error.message, op=error.op)
        at = next(
            (i for i, line in enumerate(lines) if line.step is not None and line.step >= step),
            len(lines),
        )
        if at < len(lines) and lines[at].step == step:
            line = lines.pop(at)
            lines.insert(at, _Line("raise _overflow()", line.uses, line.defs, step))
        else:
            lines.insert(at, _Line("raise _overflow()", (), (), step))

    def _bind(self, prefix: str, value: Any) -> str:
        name = f"{prefix}{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def _add_step(self, step: Step) -> int:
        self.steps.append(step)
        return len(self.steps) - 1

    def _generate(
        self, plan: Plan, state: SessionState
    ) -> tuple[list[_Line], list[tuple[str, str | None]], list[str], list[_Line]]:
        slots: dict[tuple[int, str], str] = {}  # (tensor id, device name) -> variable holding it
        ready: dict[tuple[int, str], int] = {}  # (tensor id, device name) -> step that made it
        op_steps: dict[int, tuple[int, ...]] = {}  # op id -> steps a control edge waits for
        args = []
        fed = {id(t) for t in plan.feeds}
        for i, tensor in enumerate(plan.feeds):
            args.append(f"f{i}")
            slots[(id(tensor), plan.devices[tensor.op.id].name)] = f"f{i}"
        contexts: dict[str, KernelContext] = {}
        lines: list[_Line] = []
        constants: list[_Line] = []  # steps of fixed-output ops: no code, only their sizes
        buffers = self._reused_buffers(plan) if self.dry is None else {}
        # Ops a Switch's dead output can reach check their inputs (control flow only: graphs
        # without a Switch keep the plain lines); op id -> (expression true when it was dead,
        # the names it reads), for the ops that wait on it through a control edge.
        self._maybe_dead = maybe_dead(plan)
        dead_of: dict[int, tuple[str, list[str]]] = {}
        if self._maybe_dead:
            self.namespace["DEAD"] = DEAD
        for op in plan.ops:
            device = plan.devices[op.id]
            for transfer in plan.transfers.get(op.id, ()):
                src_key = (id(transfer.tensor), transfer.src.name)
                dst_key = (id(transfer.tensor), transfer.dst.name)
                copy = self._transfer(transfer.src, transfer.dst)
                # A value a branch not taken may leave dead: its transfer runs a line even
                # between devices that share memory, to say that it moved nothing.
                dead_maybe = transfer.tensor.op.id in self._maybe_dead
                deps = (ready[src_key],) if src_key in ready else ()
                step = Step(
                    EventKind.TRANSFER,
                    op,
                    device,
                    transfer.tensor,
                    transfer.src,
                    deps,
                    runs_code=copy is not None or dead_maybe,
                )
                index = self._add_step(step)
                ready[dst_key] = index
                if copy is None and not dead_maybe:
                    slots[dst_key] = slots[src_key]
                    continue
                dst_slot = f"x{index}"
                source_slot = slots[src_key]
                moved = source_slot
                if copy is not None:
                    moved = f"{self._bind('copy', copy)}({source_slot})"
                text = f"{dst_slot} = {moved}"
                if dead_maybe:
                    skip = self._bind("skip", functools.partial(_skip, self.not_run, index, DEAD))
                    text = f"{dst_slot} = {skip}() if {source_slot} is DEAD else {moved}"
                lines.append(_Line(text, [source_slot], [dst_slot], index))
                slots[dst_key] = dst_slot
            frame = plan.frames.get(op.id)
            if frame is not None:
                self._frame_step(plan, op, frame, slots, ready, op_steps, lines, contexts, state)
                continue
            if op.id in plan.unread:  # a NoOp: waits for what made its inputs, where it was made
                op_steps[op.id] = self._unread_waits(plan, op, ready, op_steps)
                continue
            deps = {ready[(id(t), device.name)] for t in op.inputs if (id(t), device.name) in ready}
            for control in op.control_inputs:
                deps.update(op_steps.get(control.id, ()))
            inputs = [slots[(id(t), device.name)] for t in op.inputs]
            dead, dead_uses = self._dead_condition(op, inputs, fed, dead_of)
            if op.op_def.control_only:
                op_steps[op.id] = tuple(sorted(deps))  # waits for its inputs; nothing to run
                if dead:
                    dead_of[op.id] = (dead, dead_uses)
                continue
            built = self._kernel(op, device, contexts, state)
            folded = self._folded(plan, op, built, inputs)
            fixed = (op.op_def.fixed_output or folded is not None) and not dead
            step = Step(EventKind.OP, op, device, deps=tuple(sorted(deps)), runs_code=not fixed)
            index = self._add_step(step)
            op_steps[op.id] = (index,)
            if folded is not None:  # computed now from constants: every run reads these values
                outputs = [self._bind("c", value) for value in folded]
            elif fixed:  # its one value, computed now, is what every run's consumers read
                outputs = [self._bind("c", built())]
            elif dead and not op.outputs:
                outputs = [f"t{op.id}_d"]  # None when it ran, DEAD when it did not
            else:
                outputs = [f"t{op.id}_{i}" for i in range(len(op.outputs))]
            for tensor, name in zip(op.outputs, outputs):
                if id(tensor) in fed:
                    continue  # consumers see the fed value, not the one computed here
                slots[(id(tensor), device.name)] = name
                ready[(id(tensor), device.name)] = index
            if fixed:
                constants.append(_Line("", [], outputs, index))
                continue
            if op.op_def.fixed_output:
                call = self._bind("c", built())
            else:
                fn = self._bind("k", built)
                arguments = [*inputs, f"out={buffers[op.id]}"] if op.id in buffers else inputs
                call = f"{fn}({', '.join(arguments)})"
            unpack = "," if op.op_def.multi_output and len(outputs) == 1 else ""
            uses = list(inputs)
            if dead:
                skipped: Any = DEAD
                if op.op_def.multi_output:
                    skipped = (DEAD,) * len(outputs)
                skip = self._bind("skip", functools.partial(_skip, self.not_run, index, skipped))
                call = f"{skip}() if {dead} else {call}"
                uses.extend(dead_uses)
                unpack = ""
            if op.id in self._maybe_dead:
                if op.type in SWITCH_TYPES:
                    both = " and ".join(f"{o} is DEAD" for o in outputs)
                    dead_of[op.id] = (f"({both})", list(outputs))
                elif outputs:
                    dead_of[op.id] = (f"{outputs[0]} is DEAD", [outputs[0]])
            text = f"{', '.join(outputs)}{unpack} = {call}" if outputs else call
            lines.append(_Line(text, uses, outputs, index))
        results = [self._fetch_expression(f, plan, slots) for f in plan.fetches]
        return lines, results, args, constants

    def _folded(
        self, plan: Plan, op: Operation, built: Callable[..., Any], inputs: Sequence[str]
    ) -> tuple[Any, ...] | None:
        """The values of an op the plan folds (``plan.folded``), computed now from its constant
        inputs (a dry run's: what its dry kernel makes of them); None for any other op, and
        where computing it fails or an input was not folded: such an op runs in the step, which
        raises its error there, as TensorFlow's executor does for what grappler could not fold."""
        if op.id not in plan.folded:
            return None
        if not all(name in self.namespace for name in inputs):  # a constant is bound by name
            return None
        try:
            value = built(*(self.namespace[name] for name in inputs))
        except Exception:
            return None
        self.folded.append(op.id)
        values = tuple(value) if op.op_def.multi_output else (value,)
        for array in values:
            if isinstance(array, np.ndarray):
                array.flags.writeable = False  # as a constant's: a fetch of it gets a copy
        return values

    @staticmethod
    def _unread_waits(
        plan: Plan,
        op: Operation,
        ready: dict[tuple[int, str], int],
        op_steps: dict[int, tuple[int, ...]],
    ) -> tuple[int, ...]:
        """The steps a control edge on an unread op waits for: those that made its inputs (on
        their own devices: nothing moves to it) and those its control inputs wait for."""
        deps: set[int] = set()
        for tensor in op.inputs:
            if tensor.op.id in plan.unread:
                deps.update(op_steps[tensor.op.id])
                continue
            made = ready.get((id(tensor), plan.devices[tensor.op.id].name))
            if made is not None:  # a fed value is there from the start
                deps.add(made)
        for control in op.control_inputs:
            deps.update(op_steps.get(control.id, ()))
        return tuple(sorted(deps))

    def _kernel(
        self, op: Operation, device: Device, contexts: dict[str, KernelContext], state: SessionState
    ) -> Callable[..., Any]:
        """The op's kernel on its device's backend (a dry run's: its outputs' shapes)."""
        if self.dry is not None:
            return self.dry.kernel(op)
        xp = backends.array_module(device)
        context = contexts.get(xp.__name__)
        if context is None:
            context = contexts[xp.__name__] = KernelContext(state, xp)
        kernel = op.op_def.kernel_for("cupy" if device.backend == "cupy" else "numpy")
        with backends.device_scope(device):
            return kernel(xp, op, context)

    def _frame_step(
        self,
        plan: Plan,
        rep: Operation,
        frame: Frame,
        slots: dict[tuple[int, str], str],
        ready: dict[tuple[int, str], int],
        op_steps: dict[int, tuple[int, ...]],
        lines: list[_Line],
        contexts: dict[str, KernelContext],
        state: SessionState,
    ) -> None:
        """A while loop as one step (its LoopCond's): a line that calls its FrameRunner with
        the outer values its ops read, each from the device of the op that reads it."""

        def kernel(op: Operation) -> Callable[..., Any]:
            place = plan.devices[op.id]
            built = self._kernel(op, place, contexts, state)
            return built if self._gpus is None else self._gpus.in_frame(place, built)

        def timing(op: Operation) -> Callable[[Sequence[Any], Any], int] | None:
            return op_timing(op, plan.devices[op.id], self.dry is not None)

        places = {plan.devices[m.id].name: plan.devices[m.id] for m in frame.ops}

        def transfer(src: str, dst: str) -> Move:
            source, target = places[src], places[dst]
            copy = None if self._gpus is None else self._gpus.frame_copy(source, target)
            return copy, transfer_timing(target, source, self.dry is not None)

        device_of = {m.id: plan.devices[m.id].name for m in frame.ops}
        index = len(self.steps)  # the step this loop is
        runner = FrameRunner(
            frame.context,
            frame.ops,
            device_of,
            kernel,
            self.executions,
            index,
            timing,
            transfer,
            self.loop_memory,
        )
        self.frame_devices.update(device_of)
        keys = runner.argument_keys
        deps = {ready[k] for k in keys if k in ready}
        members = {m.id for m in frame.ops}
        for member in frame.ops:
            for control in member.control_inputs:
                if control.id not in members:
                    deps.update(op_steps.get(control.id, ()))
        device = plan.devices[rep.id]
        exits = tuple((t, plan.devices[t.op.id]) for t in frame.exits)
        self._add_step(
            Step(EventKind.FRAME, rep, device, deps=tuple(sorted(deps)), frame=runner, exits=exits)
        )
        for member in frame.ops:
            op_steps[member.id] = (index,)
        inputs = [slots[k] for k in keys]
        outputs = [f"t{t.op.id}_{t.value_index}" for t in frame.exits]
        for tensor, name in zip(frame.exits, outputs):
            key = (id(tensor), plan.devices[tensor.op.id].name)
            slots[key] = name
            ready[key] = index
        self._frame_outputs[index] = list(frame.exits)
        target: Callable[..., Any] = runner
        if self.dry is not None:  # a dry loop computes with the outer values it knows
            tensors = {id(t): t for t in frame.arguments}
            known = [self.dry.loop_argument(tensors[k[0]]) for k in keys]
            if any(v is not None for v in known):
                target = functools.partial(_with_known, runner, known)
        call = f"{self._bind('frame', target)}({', '.join(inputs)})"
        text = f"{_tuple(outputs)} = {call}" if outputs else call
        lines.append(_Line(text, inputs, outputs, index))

    def _dead_condition(
        self,
        op: Operation,
        inputs: list[str],
        fed: set[int],
        dead_of: dict[int, tuple[str, list[str]]],
    ) -> tuple[str, list[str]]:
        """The expression that is true in a run where ``op`` must not run, and the names it
        reads; ``""`` for an op no dead value reaches. TensorFlow's rule: an op is dead when any
        input (data or control) is; a Merge only when all its inputs are."""
        if op.id not in self._maybe_dead:
            return "", []
        reached = [
            name
            for name, tensor in zip(inputs, op.inputs)
            if tensor.op.id in self._maybe_dead and id(tensor) not in fed
        ]
        if op.type in MERGE_TYPES:
            if len(reached) < len(inputs):
                return "", []
            return " and ".join(f"{n} is DEAD" for n in reached), reached
        terms = [f"{n} is DEAD" for n in reached]
        uses = list(reached)
        for control in op.control_inputs:
            if control.id in dead_of:
                expression, names = dead_of[control.id]
                terms.append(expression)
                uses.extend(names)
        return " or ".join(terms), uses

    def _reused_buffers(self, plan: Plan) -> dict[int, str]:
        """Ops that write their output into a buffer the plan owns (``out=``), by op id.

        TensorFlow's executor reuses a dead input's buffer for an elementwise op's output; here
        the plan knows every lifetime in advance. A ufunc's output with a static shape on a
        NumPy device qualifies when nothing but ufuncs on that device reads it (no fetch,
        transfer or op that could keep a reference): after its last reader ran, its buffer
        serves the next output of that device, shape and dtype. Values stay bit-identical.
        """
        fetched = {id(f) for f in plan.fetches if isinstance(f, Tensor)}
        seen_elsewhere = fetched | {id(t.tensor) for t in plan.all_transfers()}
        seen_elsewhere.update(id(t) for t in plan.feeds)
        readers: dict[int, list[int]] = {}  # tensor id -> positions in plan.ops
        for position, op in enumerate(plan.ops):
            for tensor in op.inputs:
                readers.setdefault(id(tensor), []).append(position)
        free: dict[tuple[str, tuple[int, ...], str], list[str]] = {}
        released: dict[int, list[tuple[tuple[str, tuple[int, ...], str], str]]] = {}
        chosen: dict[int, str] = {}
        for position, op in enumerate(plan.ops):
            device = plan.devices[op.id]
            tensor = op.outputs[0] if len(op.outputs) == 1 else None
            users = readers.get(id(tensor), []) if tensor is not None else []
            if (
                tensor is not None
                and users
                and op.op_def.ufunc
                and op.id not in plan.folded
                and device.backend == "numpy"
                and tensor.shape.is_fully_defined
                and tensor.shape.ndims
                and id(tensor) not in seen_elsewhere
                and all(
                    plan.ops[u].op_def.ufunc and plan.devices[plan.ops[u].id].name == device.name
                    for u in users
                )
            ):
                dims = tuple(tensor.shape.dims)
                key = (device.name, dims, tensor.dtype.name)
                pool = free.get(key)
                name = pool.pop() if pool else self._bind("O", np.empty(dims, tensor.dtype.np))
                chosen[op.id] = name
                released.setdefault(max(users), []).append((key, name))
            for key, name in released.pop(position, ()):
                free.setdefault(key, []).append(name)
        return chosen

    def _sequential_source(
        self, lines: list[_Line], results: list[tuple[str, str | None]], args: list[str]
    ) -> str:
        kept = {name for _, name in results if name} | set(args)  # the caller owns the feeds
        switched = self._with_gpu_streams(lines) if self._gpus is not None else lines
        body = self._with_frees(switched, kept)
        source = [f"def _run({''.join(a + ', ' for a in args)}T=T, B=B, clk=clk):"]
        self.namespace.update(T=None, B=None, clk=time.perf_counter_ns)
        for line in body:
            source.append(f"    {line.text}")
            if line.step is not None:
                self.line_steps[len(source)] = line.step
                source.append(f"    T[{line.step}] = clk()")
                for text in self._bytes_lines(line):
                    source.append(f"    {text}")
                    self.line_steps[len(source)] = line.step
        source.append(f"    return {_tuple(expr for expr, _ in results)}")
        return "\n".join(source) + "\n"

    def _bytes_lines(self, line: _Line) -> list[str]:
        """FULL_TRACE: each output's size at the step's slots of the flat list ``B``.

        Sizes that static shapes give are written once, here; only outputs whose shapes are
        unknown until run time are measured, by one ``.nbytes`` each, and a Switch's outputs,
        one of which is dead in each run: it holds nothing (0 bytes). A plan that checks dynamic
        memory measures them too, and on a GPU then calls ``MEM(step, B)``.
        """
        step_index = line.step
        if not (self.full_trace or self.check_dynamic_memory) or step_index is None:
            return []
        if not line.defs:
            return []
        step = self.steps[step_index]
        if step.op.op_def.ref_output:
            return []
        tensors = [step.tensor] if step.kind is EventKind.TRANSFER else list(step.op.outputs)
        tensors = self._frame_outputs.get(step_index, tensors)
        offset = self.byte_slots
        self.byte_offsets[step_index] = offset
        self.byte_counts[step_index] = len(line.defs)
        self.byte_slots += len(line.defs)
        measured = []
        dynamic = False
        switch = self.full_trace and step.kind is EventKind.OP and step.op.type in SWITCH_TYPES
        for k, (name, tensor) in enumerate(zip(line.defs, tensors)):
            size = tensor_bytes(tensor) if tensor is not None else None
            dynamic |= size is None
            if size is None or switch:  # DEAD's nbytes is 0
                measured.append(f"B[{offset + k}] = {name}.nbytes")
            else:
                self.static_sizes[offset + k] = size
        if dynamic and self.check_dynamic_memory and step.device.device_type != "CPU":
            measured.append(f"MEM({step_index}, B)")
        return measured

    def _parallel_source(
        self,
        lines: list[_Line],
        results: list[tuple[str, str | None]],
        args: list[str],
        streams: list[str],
    ) -> str:
        """One function per device stream; values cross streams through ``V`` after a wait.

        A stream waits on ``E[step]`` before its first use of anything ``step`` (on another
        stream) made or ordered; waiting on a later step of the same stream covers earlier ones,
        since a stream runs its steps in order. Every wait and every step checks ``CX[0]``, so
        a failure anywhere stops the other streams at their next step.
        """
        stream_of = [step.device.name for step in self.steps]
        defined: dict[str, tuple[str, int | None]] = {a: ("", None) for a in args}
        for line in lines:
            for name in line.defs:
                defined[name] = (stream_of[line.step], line.step)  # type: ignore[index]
        # The plan's own values (constants) are globals: every stream reads them directly.
        fetched = {name for _, name in results if name and name not in self.namespace}
        slots: dict[str, int] = {}

        def slot(name: str) -> int:
            return slots.setdefault(name, len(slots))

        for name in (*args, *sorted(fetched)):
            slot(name)
        plans: dict[str, list[tuple[list[int], list[str], _Line]]] = {s: [] for s in streams}
        waited_on: set[int] = set()
        exported: set[str] = set(fetched) - set(args)
        for stream in streams:
            waited: dict[str, int] = {}
            imported: set[str] = set()
            for line in lines:
                if line.step is None or stream_of[line.step] != stream:
                    continue
                producers = set(real_deps(self.steps, line.step))
                producers.update(
                    defined[u][1]
                    for u in line.uses
                    if u in defined and defined[u][0] != stream  # type: ignore[misc]
                )
                waits = []
                for dep in sorted(p for p in producers if p is not None):
                    other = stream_of[dep]
                    if other == stream or waited.get(other, -1) >= dep:
                        continue
                    waited[other] = dep
                    waits.append(dep)
                    waited_on.add(dep)
                foreign = [
                    u for u in dict.fromkeys(line.uses) if u in defined and defined[u][0] != stream
                ]
                loads = [u for u in foreign if u not in imported]
                imported.update(loads)
                exported.update(u for u in loads if defined[u][1] is not None)
                plans[stream].append((waits, loads, line))
        source: list[str] = []
        self.namespace.update(clk=time.perf_counter_ns)
        for index, stream in enumerate(streams):
            body: list[_Line] = []
            for waits, loads, line in plans[stream]:
                for dep in waits:
                    body.append(_Line(f"E[{dep}].wait()", [], [], None))
                    body.append(_Line(_CHECK, [], [], None))
                body.extend(_Line(f"{u} = V[{slot(u)}]", [], [u], None) for u in loads)
                body.append(_Line(_CHECK, [], [], None))
                body.append(_Line(f"S[{line.step}] = clk()", [], [], None))
                body.append(line)
                body.append(_Line(f"T[{line.step}] = clk()", [], [], None))
                body.extend(
                    _Line(text, list(line.defs), [], line.step) for text in self._bytes_lines(line)
                )
                shared = [d for d in line.defs if d in exported]
                body.extend(_Line(f"V[{slot(d)}] = {d}", [d], [], None) for d in shared)
                if line.step in waited_on:
                    body.append(_Line(f"E[{line.step}].set()", [], [], None))
            body = self._with_frees(body, set())
            source.append(f"def _stream_{index}(V, E, CX, S, T, B, clk=clk):")
            for line in body:
                source.append(f"    {line.text}")
                if line.step is not None:
                    self.line_steps[len(source)] = line.step
            source.append("    return None")
        texts = [
            _substitute(expr, name, f"V[{slots[name]}]") if name in fetched else expr
            for expr, name in results
        ]
        source.append(f"def _collect(V):\n    return {_tuple(texts)}")
        self.feed_slots = [slots[a] for a in args]
        self.value_slots = len(slots)
        self.event_steps = sorted(waited_on)
        return "\n".join(source) + "\n"

    def _fetch_expression(
        self, fetch: Tensor | Operation, plan: Plan, slots: dict[tuple[int, str], str]
    ) -> tuple[str, str | None]:
        if isinstance(fetch, Operation):
            return "None", None
        device = plan.devices[fetch.op.id]
        name = slots[(id(fetch), device.name)]
        value = name
        if fetch.op.id in self._maybe_dead:
            value = f"{self._bind('alive', functools.partial(_alive, fetch.name))}({name})"
        if fetch.op.op_def.ref_output and not fetch.op.inputs:
            value = f"{name}.read()"
        elif fetch.op.op_def.ref_output:  # a RefMerge: a variable, or what an assign returned
            value = f"{self._bind('deref', _deref)}({value})"
        if self._gpus is not None and device in self._gpus:
            to_host = self._gpus.gpu(device).to_host
            value = f"{self._bind('host', to_host)}({value})"
        return f"_host({value})", name

    def _transfer(self, src: Device, dst: Device) -> Callable[[Any], Any] | None:
        """The copy an edge needs; None between devices that share host memory."""
        if self._gpus is not None and (src in self._gpus or dst in self._gpus):
            return self._gpus.transfer(src, dst)
        return None

    def _with_gpu_streams(self, lines: list[_Line]) -> list[_Line]:
        """Real GPUs: each step on its logical GPU's stream and pool, between two timing events.

        A step waits (on its stream, not the host) for the end event of each step on another
        GPU it depends on; waiting on a later step of a stream covers its earlier ones. A host
        step waits for a GPU step only through a control edge: data reaches the host through a
        copy that waits for its own stream.
        """
        assert self._gpus is not None
        gpu_steps = {
            line.step: self._gpus.gpu(self.steps[line.step].device)
            for line in lines
            if line.step is not None and self.steps[line.step].device in self._gpus
        }
        clocks = self.clocks = StepClocks(self._gpus, gpu_steps)
        # A GPU's steps are on its events' clock, also those that run no code (their times are
        # their dependencies'); the host's are on the host's.
        on_gpus = [step.device in self._gpus for step in self.steps]
        codes = np.where(on_gpus, int(TimingSource.CUDA_EVENT), int(TimingSource.CLOCK))
        self.sources = codes.astype(np.int8)
        result: list[_Line] = []
        current: str | None = None
        waited: dict[str, dict[str, int]] = {}  # stream -> other stream -> latest step waited on
        for line in lines:
            if line.step is None:
                result.append(line)
                continue
            step = self.steps[line.step]
            gpu = gpu_steps.get(line.step)
            deps = [d for d in real_deps(self.steps, line.step) if d in gpu_steps]
            if gpu is None:
                if deps:
                    self.gpu_deps_of_host_steps[line.step] = deps
                for dep in deps:
                    if step.kind is EventKind.TRANSFER and self.steps[dep].device == step.peer:
                        continue  # the copy to the host waits for that stream itself
                    wait = self._bind("hw", clocks.host_waits_for(dep))
                    result.append(_Line(f"{wait}()", [], [], None))
                result.append(line)
                continue
            name = step.device.name
            if name != current:
                result.append(_Line(f"{self._bind('on', gpu.activate)}()", [], [], None))
                current = name
            seen = waited.setdefault(name, {})
            for dep in sorted(deps):
                other = self.steps[dep].device.name
                if other == name or seen.get(other, -1) >= dep:
                    continue
                seen[other] = dep
                wait = self._bind("w", clocks.wait_for(gpu, dep))
                result.append(_Line(f"{wait}()", [], [], None))
            start = self._bind("es", clocks.record_start(line.step))
            end = self._bind("ee", clocks.record_end(line.step))
            result.append(_Line(f"{start}()", [], [], None))
            result.append(line)
            result.append(_Line(f"{end}()", [], [], None))
        return result

    def _with_frees(self, lines: list[_Line], kept: set[str]) -> list[_Line]:
        last_use: dict[str, int] = {}
        for index, line in enumerate(lines):
            for name in line.defs:
                last_use.setdefault(name, index)
            for name in line.uses:
                last_use[name] = index
        result: list[_Line] = []
        for index, line in enumerate(lines):
            result.append(line)
            dead = [
                n
                for n in dict.fromkeys((*line.uses, *line.defs))
                if last_use.get(n) == index and n not in kept and n not in self.namespace
            ]  # the plan's own values (constants, buffers) are globals that live with it
            if dead:
                result.append(_Line(f"del {', '.join(dead)}", [], [], None))
        return result
