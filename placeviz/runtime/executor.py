"""Run a plan: compile it once into a straight-line Python function, then call that per run.

Interpreting a list of steps costs about twice a plain NumPy loop on small tensors; a generated
function that calls each kernel directly costs what the loop costs. Each step (an op or a
transfer) is one line followed by one clock read, so every run records its per-step timings at
the price of a clock call; a fully traced variant also records the bytes each step produced. The
line an exception comes from names the failing step. Tensors are deleted right after their last
use, so memory is freed as soon as TensorFlow would.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from placeviz.devices.context import Device
from placeviz.errors import InternalError, InvalidArgumentError, OpError
from placeviz.events.kinds import EventKind
from placeviz.graph.core import Operation, Tensor
from placeviz.runtime import backends
from placeviz.runtime.backends import cupy_backend
from placeviz.runtime.plan import Plan
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
    moves_data: bool = True  # False: both devices hold host memory, so nothing is copied
    deps: tuple[int, ...] = ()  # steps that must finish first (data, control, transfers)


class RunFailure(Exception):
    """A step raised; carries the placeviz error and how far the run got (for the trace)."""

    def __init__(self, error: Exception, failed_step: int | None) -> None:
        super().__init__(str(error))
        self.error = error
        self.failed_step = failed_step


class _Line:
    __slots__ = ("defs", "step", "text", "uses")

    def __init__(self, text: str, uses: Sequence[str], defs: Sequence[str], step: int | None):
        self.text = text
        self.uses = uses
        self.defs = defs
        self.step = step


class CompiledPlan:
    """A plan turned into one Python function; ``run(feed_values)`` returns the fetched values.

    After a run, ``ends[i]`` is the clock (ns) at which step ``i`` finished, and with
    ``full_trace`` ``out_bytes[i]`` the bytes of each output it produced.
    """

    def __init__(self, plan: Plan, state: SessionState, full_trace: bool = False) -> None:
        self.plan = plan
        self.full_trace = full_trace
        self.steps: list[Step] = []
        self._namespace: dict[str, Any] = {"_host": host_copy}
        self._line_steps: dict[int, int] = {}
        self._filename = f"<placeviz plan {next(_plan_ids)}>"
        self._feed_converters = [backends.from_host(plan.devices[t.op._id]) for t in plan.feeds]
        self.source = self._generate(plan, state)
        self.ends: list[int] = [0] * len(self.steps)
        self.out_bytes: list[tuple[int, ...]] = [()] * len(self.steps)
        exec(compile(self.source, self._filename, "exec"), self._namespace)
        self._fn = self._namespace["_run"]

    # -- code generation -----------------------------------------------------------------------
    def _bind(self, prefix: str, value: Any) -> str:
        name = f"{prefix}{len(self._namespace)}"
        self._namespace[name] = value
        return name

    def _add_step(self, step: Step) -> int:
        self.steps.append(step)
        return len(self.steps) - 1

    def _generate(self, plan: Plan, state: SessionState) -> str:
        slots: dict[tuple[int, str], str] = {}  # (tensor id, device name) -> variable holding it
        ready: dict[tuple[int, str], int] = {}  # (tensor id, device name) -> step that made it
        op_steps: dict[int, tuple[int, ...]] = {}  # op id -> steps a control edge waits for
        args = []
        for i, tensor in enumerate(plan.feeds):
            args.append(f"f{i}")
            slots[(id(tensor), plan.devices[tensor.op._id].name)] = f"f{i}"
        contexts: dict[str, KernelContext] = {}
        lines: list[_Line] = []
        for op in plan.ops:
            device = plan.devices[op._id]
            for transfer in plan.transfers.get(op._id, ()):
                src_key = (id(transfer.tensor), transfer.src.name)
                dst_key = (id(transfer.tensor), transfer.dst.name)
                copy = backends.transfer(transfer.src, transfer.dst)
                deps = (ready[src_key],) if src_key in ready else ()
                index = self._add_step(
                    Step(EventKind.TRANSFER, op, device, transfer.tensor, transfer.src,
                         moves_data=copy is not None, deps=deps)
                )  # fmt: skip
                ready[dst_key] = index
                if copy is None:
                    slots[dst_key] = slots[src_key]
                    continue
                dst_slot = f"x{index}"
                fn = self._bind("copy", copy)
                lines.append(_Line(f"{dst_slot} = {fn}({slots[src_key]})", [slots[src_key]],
                                   [dst_slot], index))  # fmt: skip
                slots[dst_key] = dst_slot
            deps = {ready[(id(t), device.name)] for t in op.inputs if (id(t), device.name) in ready}
            for control in op.control_inputs:
                deps.update(op_steps.get(control._id, ()))
            if op.type == "NoOp":
                op_steps[op._id] = tuple(sorted(deps))  # waits for its inputs; nothing to run
                continue
            index = self._add_step(Step(EventKind.OP, op, device, deps=tuple(sorted(deps))))
            op_steps[op._id] = (index,)
            xp = backends.array_module(device)
            context = contexts.get(xp.__name__)
            if context is None:
                context = contexts[xp.__name__] = KernelContext(state, xp)
            kernel = op.op_def.kernel_for("cupy" if device.backend == "cupy" else "numpy")
            with backends.device_scope(device):
                fn = self._bind("k", kernel(xp, op, context))
            inputs = [slots[(id(t), device.name)] for t in op.inputs]
            outputs = [f"t{op._id}_{i}" for i in range(len(op.outputs))]
            for tensor, name in zip(op.outputs, outputs):
                slots[(id(tensor), device.name)] = name
                ready[(id(tensor), device.name)] = index
            call = f"{fn}({', '.join(inputs)})"
            text = f"{', '.join(outputs)} = {call}" if outputs else call
            lines.append(_Line(text, inputs, outputs, index))
        results = [self._fetch_expression(f, plan, slots) for f in plan.fetches]
        kept = {name for _, name in results if name} | set(args)  # the caller owns the feeds
        body = self._with_frees(self._with_device_switches(lines), kept)
        source = [f"def _run({''.join(a + ', ' for a in args)}T=T, B=B, clk=clk):"]
        self._namespace.update(T=None, B=None, clk=time.perf_counter_ns)
        for line in body:
            source.append(f"    {line.text}")
            if line.step is not None:
                self._line_steps[len(source)] = line.step
                source.append(f"    T[{line.step}] = clk()")
                if self.full_trace and line.defs and not self.steps[line.step].op.op_def.ref_output:
                    sizes = "".join(f"{name}.nbytes, " for name in line.defs)
                    source.append(f"    B[{line.step}] = ({sizes})")
        result_text = ", ".join(expr for expr, _ in results)
        source.append(f"    return ({result_text}{',' if len(results) == 1 else ''})")
        return "\n".join(source) + "\n"

    def _fetch_expression(
        self, fetch: Tensor | Operation, plan: Plan, slots: dict[tuple[int, str], str]
    ) -> tuple[str, str | None]:
        if isinstance(fetch, Operation):
            return "None", None
        device = plan.devices[fetch.op._id]
        name = slots[(id(fetch), device.name)]
        value = name
        if fetch.op.op_def.ref_output:
            value = f"{name}.read()"
        to_host = backends.to_host(device)
        if to_host is not None:
            value = f"{self._bind('host', to_host)}({value})"
        return f"_host({value})", name

    def _with_device_switches(self, lines: list[_Line]) -> list[_Line]:
        """Real GPUs: make each op's GPU current before it runs, only when it changes."""
        result: list[_Line] = []
        current: int | None = None
        for line in lines:
            device = self.steps[line.step].device if line.step is not None else None
            if device is not None and device.backend == "cupy":
                ordinal = device.physical.cuda_ordinal or 0
                if ordinal != current:
                    use = self._bind("use", cupy_backend.use_device(ordinal))
                    result.append(_Line(f"{use}()", [], [], None))
                    current = ordinal
            result.append(line)
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
                if last_use.get(n) == index and n not in kept
            ]
            if dead:
                result.append(_Line(f"del {', '.join(dead)}", [], [], None))
        return result

    # -- running -------------------------------------------------------------------------------
    def run(self, feed_values: Sequence[Any]) -> tuple[Any, ...]:
        """Run once; on failure raise RunFailure with the placeviz error and the failed step."""
        converters = self._feed_converters
        if any(converters):
            feed_values = [c(v) if c else v for c, v in zip(converters, feed_values)]
        try:
            return self._fn(*feed_values, T=self.ends, B=self.out_bytes)
        except Exception as exc:
            step = self._failed_step(exc)
            raise RunFailure(self._error_for(exc, step), step) from exc

    def _failed_step(self, exc: Exception) -> int | None:
        tb = exc.__traceback__
        found = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self._filename:
                found = self._line_steps.get(tb.tb_lineno)
            tb = tb.tb_next
        return found

    def _error_for(self, exc: Exception, step_index: int | None) -> Exception:
        """Name the op whose line raised: its type, source line and device."""
        if step_index is None:
            return InternalError(f"placeviz failed to run a plan: {exc!r}")
        step = self.steps[step_index]
        op = step.op
        where = (
            f"[[node '{op.name}' ({op.type}) created at {op.source}, "
            f"running on {step.device.name}]]"
        )
        if step.kind is EventKind.TRANSFER and step.tensor is not None and step.peer is not None:
            where = (
                f"[[transfer of {step.tensor.name} from {step.peer.name} to {step.device.name} "
                f"for '{op.name}' ({op.type}) created at {op.source}]]"
            )
        if isinstance(exc, OpError):
            return type(exc)(f"{exc.message}\n\t{where}", op=exc.op or op)
        return InvalidArgumentError(f"{type(exc).__name__}: {exc}\n\t{where}", op=op)
