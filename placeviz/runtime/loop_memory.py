"""Device memory inside while loops: the buffers a run's loops make, while they are held.

A loop's ops run inside one plan step (``frames.FrameRunner``), so the plan's lifetimes
(``memory.py``) cannot see them. ``LoopMemory`` counts them as the loops run, by buffer: a
value whose array (or whose base, for a view) is already held on its device adds a holder to
it, as TensorFlow's forwarding ops (Identity, Enter, Switch, Merge, NextIteration, Exit,
Reshape) pass their input's buffer on; a new one is allocated on the device of the execution
that made it, when that execution starts, and freed when its last holder lets go: the last
reader of each value in its iteration, the next iteration's Merge for a NextIteration's value,
the pop for a value pushed on a stack (or the run's end). The outer values a loop reads are the
plan's (held by it until the loop's step ends), and the value an outermost loop's Exit gives
back becomes the plan's: the plan frees it after its last reader (``hand_over``). Each
allocation is checked against its device's limit on top of what the plan holds during the
loop's step (``base``), so an op inside a loop fails with TensorFlow's out-of-memory error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from placeviz.errors import ResourceExhaustedError
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.shapes import format_dims

# (device name, id of the buffer's owner): one held buffer
Key = tuple[str, int]


class Buffer:
    """One buffer allocated inside a loop: where and by which execution (its trace and row),
    its holders now, and the rows of the executions that let go of it."""

    __slots__ = (
        "device",
        "holders",
        "name",
        "node",
        "releases",
        "row",
        "size",
        "state",
        "trace",
        "value",
    )

    def __init__(
        self, value: Any, device: str, size: int, node: Operation, name: str, trace: Any, row: int
    ) -> None:
        self.value = value  # kept so that its id is not reused while it is held
        self.device = device
        self.size = size
        self.node = node  # the op that made it (its events' node)
        self.name = name  # the tensor, for an out-of-memory error
        self.trace = trace
        self.row = row
        self.holders = 1
        self.releases: list[tuple[Any, int]] = []  # (trace, row) of each holder's last reader
        self.state = HELD


HELD, FREED, HANDED = 0, 1, 2


def owner(value: Any) -> Any:
    """The array that owns ``value``'s memory: a view's base, else the value itself."""
    base = getattr(value, "base", None)
    return value if base is None else base


class LoopMemory:
    """The buffers one run's loops hold (``buffers``, in allocation order) and each device's
    bytes held by them now; ``base`` (per loop step, per device) is what the plan holds while
    the step runs, ``limits`` each device's memory limit."""

    def __init__(self, limits: dict[str, int]) -> None:
        self.limits = limits
        self.base: dict[int, dict[str, int]] = {}
        # per loop step and device: the plan's largest live tensors then (name, op, type, bytes)
        self.base_largest: dict[int, dict[str, list[tuple[str, str, str, int]]]] = {}
        self.live: dict[Key, Buffer] = {}
        self.in_use: dict[str, int] = {}
        self.buffers: list[Buffer] = []
        self.completed: set[int] = set()  # loop steps that gave back their exits in this run
        # a pushed buffer's id -> the keys its stack holds it by (one per push not popped yet)
        self.stacked: dict[int, list[Key]] = {}

    def reset(self) -> None:
        """Before a run: nothing held."""
        self.live.clear()
        self.in_use.clear()
        self.buffers.clear()
        self.completed.clear()
        self.stacked.clear()

    def acquire(
        self,
        value: Any,
        device: str,
        op: Operation,
        tensor: Tensor | None,
        trace: Any,
        row: int,
        outer: set[int],
    ) -> Key | None:
        """A holder of ``value`` on ``device`` (made or forwarded by row ``row``): its buffer's
        key, or None when nothing is counted for it (no bytes, or a buffer of the plan's:
        ``outer``, the ids of the loop's outer values). A new buffer must fit its device."""
        base = owner(value)
        key = (device, id(base))
        found = self.live.get(key)
        if found is not None:
            found.holders += 1
            return key
        if key[1] in outer:
            return None
        size = getattr(value, "nbytes", 0)
        if not size:
            return None
        in_use = self.in_use.get(device, 0)
        step = trace.step
        held = self.base.get(step, {}).get(device, 0) + in_use
        if held + size > self.limits.get(device, held + size):
            raise self._out_of_memory(op, tensor, value, size, device, held, step)
        self.in_use[device] = in_use + size
        name = tensor.name if tensor is not None else op.name
        buffer = Buffer(base, device, size, op, name, trace, row)
        self.live[key] = buffer
        self.buffers.append(buffer)
        return key

    def release(self, key: Key, trace: Any, row: int) -> None:
        """One holder of ``key`` is done (its last reader is row ``row``)."""
        buffer = self.live[key]
        buffer.releases.append((trace, row))
        buffer.holders -= 1
        if buffer.holders == 0:
            del self.live[key]
            buffer.state = FREED
            self.in_use[buffer.device] -= buffer.size

    def push(self, key: Key | None, value: Any, op: Operation, trace: Any, row: int) -> None:
        """A stack holds the buffer ``key`` of ``value`` until it is popped."""
        if key is not None:
            self.acquire(value, key[0], op, None, trace, row, set())
            self.stacked.setdefault(key[1], []).append(key)

    def pop(self, value: Any, trace: Any, row: int) -> None:
        """The stack let go of ``value`` (popped by row ``row``, whose output holds it now)."""
        keys = self.stacked.get(id(owner(value)))
        if keys:
            self.release(keys.pop(), trace, row)

    def hand_over(
        self, key: Key | None, value: Any, device: str, exit_op: Operation, trace: Any, row: int
    ) -> None:
        """An outermost loop's exit value (held by ``key``, made by row ``row``) becomes the
        plan's, which frees it after its last reader: its buffer, when the exit is its only
        holder, moves to the plan as it is; otherwise (held elsewhere too, or a buffer the loop
        did not make) the exit's value is allocated once more, by the Exit, for the plan."""
        buffer = self.live.get(key) if key is not None else None
        if buffer is not None and buffer.holders == 1 and buffer.size == value.nbytes:
            del self.live[key]  # type: ignore[arg-type]
            buffer.state = HANDED
            self.in_use[device] -= buffer.size
            return
        if key is not None:
            self.release(key, trace, row)
        size = getattr(value, "nbytes", 0)
        if size:
            given = Buffer(value, device, size, exit_op, exit_op.outputs[0].name, trace, row)
            given.state = HANDED
            self.buffers.append(given)

    def _out_of_memory(
        self,
        op: Operation,
        tensor: Tensor | None,
        value: Any,
        size: int,
        device: str,
        in_use: int,
        step: int,
    ) -> ResourceExhaustedError:
        limit = self.limits[device]
        name = tensor.name if tensor is not None else op.name
        dtype = getattr(getattr(value, "dtype", None), "name", "unknown")
        dtype = tensor.dtype.name if tensor is not None else dtype
        shape = format_dims(tuple(getattr(value, "shape", ())))
        return ResourceExhaustedError(
            f"OOM when allocating tensor {name} with shape {shape} and type {dtype} ({size} "
            f"bytes) for '{op.name}' ({op.type}, created at {op.source}) on {device}: "
            f"{in_use} bytes already in use, limit {limit} bytes ({limit / (1 << 20):.0f} MiB). "
            f"Largest live tensors: {self._largest(device, step)}",
            op=op,
        )

    def _largest(self, device: str, step: int) -> str:
        """The five largest tensors held on ``device``: the loops' buffers and the plan's."""
        held: list[tuple[str, str, str, int]] = list(
            self.base_largest.get(step, {}).get(device, ())
        )
        for (where, _), buffer in self.live.items():
            if where == device:
                node = buffer.node
                held.append((buffer.name, node.name, node.type, buffer.size))
        held.sort(key=lambda item: -item[3])
        return (
            "; ".join(f"{name} from '{op}' ({kind}): {n} bytes" for name, op, kind, n in held[:5])
            or "none"
        )


def outer_ids(values: Iterable[Any]) -> set[int]:
    """The buffers of a loop's outer values (the plan holds them)."""
    return {id(owner(v)) for v in values if getattr(v, "nbytes", 0)}
