"""Device memory inside while loops: the buffers a run's loops make, while they are held.

A loop's ops run inside one plan step (``frames.FrameRunner``), so the plan's lifetimes
(``memory.py``) cannot see them. ``LoopMemory`` counts them as the loops run: an op execution
makes a buffer for each output on its device, as it starts, except a forwarding op's (Identity,
Enter, Switch, Merge, NextIteration, Exit, Reshape and the like, a stack's push and pop), whose
outputs hold its input's buffer, as TensorFlow's do (the rule is the graph's, not NumPy's, so a
dry run, whose values are shapes, counts what a real run counts). A buffer is freed when its
last holder lets go: the last reader of each value holding it in its iteration, the next
iteration's Merge for a NextIteration's value, the pop for a value pushed on a stack (or the
run's end). A loop's outer values are the plan's (held by it until the loop's step ends), and
the values an outermost loop's Exits give back become the plan's, which frees them after their
last reader (``hand_over``). Each buffer is checked against its device's limit on top of what
the plan holds during the loop's step (``base``), so an op inside a loop fails with
TensorFlow's out-of-memory error.
"""

from __future__ import annotations

from typing import Any

from placeviz.errors import ResourceExhaustedError
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.shapes import format_dims


class Buffer:
    """One buffer allocated inside a loop: where and by which execution (its trace and row),
    its holders now, and the rows of the executions that let go of it."""

    __slots__ = (
        "device",
        "holders",
        "node",
        "releases",
        "row",
        "size",
        "state",
        "tensor",
        "trace",
    )

    def __init__(
        self,
        device: str,
        size: int,
        node: Operation,
        tensor: Tensor,
        trace: Any,
        row: int,
    ) -> None:
        self.device = device
        self.size = size
        self.node = node  # the op that made it (its events' node)
        self.tensor = tensor  # its value's, named by an out-of-memory error
        self.trace = trace
        self.row = row
        self.holders = 1
        self.releases: list[tuple[Any, int]] = []  # (trace, row) of each holder's last reader
        self.state = HELD


HELD, FREED, HANDED = 0, 1, 2


class LoopMemory:
    """The buffers one run's loops hold (``buffers``, in allocation order) and each device's
    bytes held by them now; ``base`` (per loop step, per device) is what the plan holds while
    the step runs, ``limits`` each device's memory limit."""

    def __init__(self, limits: dict[str, int], traced: bool) -> None:
        """``traced``: the runs record their memory events (which need when each buffer's
        holders let go of it); otherwise the buffers are counted only to check the limits."""
        self.limits = limits
        self.traced = traced
        # (loop step, device) -> bytes the plan holds there while the step runs
        self.base: dict[tuple[int, str], int] = {}
        # per loop step and device: the plan's largest live tensors then (name, op, type, bytes)
        self.base_largest: dict[int, dict[str, list[tuple[str, str, str, int]]]] = {}
        self.in_use: dict[str, int] = dict.fromkeys(limits, 0)
        self._rooms: dict[int, dict[str, int]] = {}
        self.buffers: list[Buffer] = []
        self.completed: set[int] = set()  # loop steps that gave back their exits in this run
        # a pushed value's id -> the buffers its stack holds for it (one per push not popped; the
        # stack keeps the value, so its id stays its own until then)
        self.stacked: dict[int, list[Buffer]] = {}

    def room(self, step: int) -> dict[str, int]:
        """Per device, the bytes loop ``step``'s buffers may take: its limit less what the plan
        holds during the step (worked out once)."""
        found = self._rooms.get(step)
        if found is None:
            found = self._rooms[step] = {
                device: limit - self.base.get((step, device), 0)
                for device, limit in self.limits.items()
            }
        return found

    def reset(self) -> None:
        """Before a run: nothing held."""
        self.in_use = dict.fromkeys(self.limits, 0)
        self.buffers.clear()
        self.completed.clear()
        self.stacked.clear()

    def make(
        self, value: Any, device: str, op: Operation, tensor: Tensor, trace: Any, row: int
    ) -> Buffer | None:
        """The buffer of ``value``, made on ``device`` by row ``row`` (None: it has no bytes),
        held once; it must fit the device."""
        size = getattr(value, "nbytes", 0)
        if not size:
            return None
        in_use = self.in_use[device] + size
        if in_use > trace.room[device]:
            held = self.base.get((trace.step, device), 0) + in_use - size
            raise self._out_of_memory(op, tensor, value, size, device, held, trace.step)
        self.in_use[device] = in_use
        buffer = Buffer(device, size, op, tensor, trace, row)
        self.buffers.append(buffer)
        return buffer

    @staticmethod
    def hold(buffer: Buffer | None) -> Buffer | None:
        """One more holder of ``buffer`` (a forwarded value)."""
        if buffer is not None:
            buffer.holders += 1
        return buffer

    def release(self, buffer: Buffer, trace: Any, row: int) -> None:
        """One holder of ``buffer`` is done (its last reader is row ``row``)."""
        if self.traced:
            buffer.releases.append((trace, row))
        buffer.holders -= 1
        if buffer.holders == 0:
            buffer.state = FREED
            self.in_use[buffer.device] -= buffer.size

    def push(self, buffer: Buffer | None, value: Any) -> None:
        """A stack holds ``buffer`` (of the pushed ``value``) until it is popped."""
        if buffer is not None:
            buffer.holders += 1
            self.stacked.setdefault(id(value), []).append(buffer)

    def pop(self, value: Any) -> Buffer | None:
        """The buffer of a popped ``value``: the stack's holder becomes the pop's output's."""
        buffers = self.stacked.get(id(value))
        return buffers.pop() if buffers else None

    def hand_over(
        self,
        buffer: Buffer | None,
        value: Any,
        device: str,
        exit_op: Operation,
        trace: Any,
        row: int,
    ) -> None:
        """An outermost loop's exit value (held by ``buffer``, given by row ``row``) becomes
        the plan's, which frees it after its last reader: its buffer, when the exit is its only
        holder, moves to the plan as it is; otherwise (held elsewhere too, or the plan's own)
        the exit's value is allocated once more, by the Exit, for the plan."""
        if buffer is not None and buffer.holders == 1 and buffer.size == value.nbytes:
            buffer.state = HANDED
            self.in_use[device] -= buffer.size
            return
        if buffer is not None:
            self.release(buffer, trace, row)
        size = getattr(value, "nbytes", 0)
        if size:
            given = Buffer(device, size, exit_op, exit_op.outputs[0], trace, row)
            given.state = HANDED
            self.buffers.append(given)

    def _out_of_memory(
        self,
        op: Operation,
        tensor: Tensor,
        value: Any,
        size: int,
        device: str,
        in_use: int,
        step: int,
    ) -> ResourceExhaustedError:
        limit = self.limits[device]
        shape = format_dims(tuple(getattr(value, "shape", ())))
        return ResourceExhaustedError(
            f"OOM when allocating tensor {tensor.name} with shape {shape} and type "
            f"{tensor.dtype.base_dtype.name} ({size} bytes) for '{op.name}' ({op.type}, created "
            f"at {op.source}) on {device}: {in_use} bytes already in use, limit {limit} bytes "
            f"({limit / (1 << 20):.0f} MiB). Largest live tensors: {self._largest(device, step)}",
            op=op,
        )

    def _largest(self, device: str, step: int) -> str:
        """The five largest tensors held on ``device``: the loops' buffers and the plan's."""
        held: list[tuple[str, str, str, int]] = list(
            self.base_largest.get(step, {}).get(device, ())
        )
        for buffer in self.buffers:
            if buffer.device == device and buffer.state == HELD:
                node = buffer.node
                held.append((buffer.tensor.name, node.name, node.type, buffer.size))
        held.sort(key=lambda item: -item[3])
        return (
            "; ".join(f"{name} from '{op}' ({kind}): {n} bytes" for name, op, kind, n in held[:5])
            or "none"
        )
