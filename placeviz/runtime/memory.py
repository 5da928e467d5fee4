"""Device memory: which tensors a compiled plan holds where, and whether they fit.

A tensor occupies its device from the step that makes it (or the transfer that brings it) until
its last user there has run; fetched tensors stay until the run ends; variables stay for the
session. The same lifetimes drive the check before a run (an op that would not fit fails with
nothing computed), the check during a run for tensors on GPUs whose sizes are known only then
(``RunTimeCheck``: the op that overflows fails as its output is made) and the allocation and free
events of a fully traced run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from placeviz.contract import EventKind
from placeviz.devices.context import Device
from placeviz.errors import ResourceExhaustedError
from placeviz.graph.core import Operation, Tensor, tensor_bytes
from placeviz.graph.registry import ANY_INPUT
from placeviz.graph.shapes import format_dims
from placeviz.runtime.plan_codegen import Step


class Resident(NamedTuple):
    """Memory held on a device between runs (a variable's value)."""

    device: Device
    bytes: int
    op: Operation


# Lifetime.free of a fetched value that stays on its device after the run: eager execution
# keeps every op's outputs for the ops after it, as TensorFlow 2 keeps an EagerTensor's buffer.
KEPT = -2


class Lifetime(NamedTuple):
    """One tensor held on one device during a run."""

    alloc: int  # the step that produces or receives it (it is allocated as that step starts)
    # the last step that uses it there, or -1: it is fetched, so held to the run's end (KEPT:
    # and after it)
    free: int
    device: Device
    tensor: Tensor
    # the step whose output it is (where a traced run measured its size), or -1 for a fed value
    bytes_step: int
    feed: int = -1  # a fed value's index among the run's feeds (its size is the value's)
    output: int = 0  # its index among its step's outputs (a loop's: among its exits)
    # a loop's result: allocated inside the loop (``loop_memory``), so only its free is the plan's
    from_loop: bool = False


Key = tuple[int, str]  # a tensor (its id) on a device (its name)


def lifetimes(
    steps: Sequence[Step],
    fetches: Iterable[Tensor | Operation],
    feeds: Sequence[Tensor] = (),
    keep_fetched: bool = False,
) -> list[Lifetime]:
    """Every buffer a run holds, on each device that holds it: what its ops make, and what
    transfers bring (fed values too: a feed is held where it is used without a transfer by its
    caller, not by the run). Variables are not per-run memory. An op that forwards an input
    (``OpDef.forwards_input``: Identity, Reshape, a Switch) makes no buffer: its outputs are
    that input's, held until the last reader of any (a variable's read holds nothing of the
    run's); a Merge's output, whichever input ran, is a buffer of its own here."""
    held: dict[Key, list[int]] = {}  # (tensor, device) -> [alloc step, last use]
    made: dict[Key, tuple[Device, Tensor, int, int, int, bool]] = {}  # the rest of its Lifetime
    shares: dict[Key, Key | None] = {}  # a forwarded output -> the buffer it is (None: none)
    producer: dict[int, tuple[int, int]] = {}  # tensor -> (its step, its index among its outputs)
    fed = {id(tensor): index for index, tensor in enumerate(feeds)}

    def buffer(key: Key) -> Key | None:
        return shares.get(key, key)

    for i, step in enumerate(steps):
        if step.frame is not None:  # a loop reads its outer values until it ends
            for argument in step.frame.argument_keys:
                key = buffer(argument)
                if key in held:
                    held[key][1] = i
            for position, (tensor, device) in enumerate(step.exits):
                key = (id(tensor), device.name)
                held[key] = [i, i]
                made[key] = (device, tensor, i, -1, position, True)
                producer[id(tensor)] = (i, position)
        elif step.kind is EventKind.OP:
            for tensor in step.op.inputs:
                key = buffer((id(tensor), step.device.name))
                if key in held:
                    held[key][1] = i
            if step.op.op_def.ref_output:
                continue
            forwarded = step.op.op_def.forwards_input
            if forwarded is not None and forwarded != ANY_INPUT:
                source = buffer((id(step.op.inputs[forwarded]), step.device.name))
                for output in step.op.outputs:
                    shares[(id(output), step.device.name)] = source if source in held else None
                    producer[id(output)] = (i, output.value_index)
                continue
            for tensor in step.op.outputs:
                key = (id(tensor), step.device.name)
                held[key] = [i, i]
                made[key] = (step.device, tensor, i, -1, tensor.value_index, False)
                producer[id(tensor)] = (i, tensor.value_index)
        elif step.tensor is not None and step.peer is not None:
            source = buffer((id(step.tensor), step.peer.name))
            if source in held:
                held[source][1] = i
            key = (id(step.tensor), step.device.name)
            if id(step.tensor) in producer:
                at, output = producer[id(step.tensor)]
                held[key] = [i, i]
                made[key] = (step.device, step.tensor, at, -1, output, False)
            elif id(step.tensor) in fed:
                held[key] = [i, i]
                made[key] = (step.device, step.tensor, -1, fed[id(step.tensor)], 0, False)
    fetched = {id(f) for f in fetches if isinstance(f, Tensor)}
    fetched_buffers = {key for key in held if key[0] in fetched}
    fetched_buffers |= {shared for key, shared in shares.items() if key[0] in fetched}
    at_end = KEPT if keep_fetched else -1
    return [
        Lifetime(alloc, at_end if key in fetched_buffers else last, *made[key])
        for key, (alloc, last) in held.items()
    ]


def _resident_bytes(resident: Iterable[Resident]) -> dict[str, int]:
    """Bytes held between runs, per device name: where every run's accounting starts."""
    used: dict[str, int] = {}
    for item in resident:
        used[item.device.name] = used.get(item.device.name, 0) + item.bytes
    return used


Overflow = tuple[int, ResourceExhaustedError]  # the step that runs out of memory, and its error


def fit(
    steps: Sequence[Step], held: Sequence[Lifetime], resident: Iterable[Resident]
) -> tuple[dict[str, int], Overflow | None]:
    """Peak bytes per device name up to the first step that overflows its device, if any (a
    run fails there, as TensorFlow's does when that op allocates)."""
    used = _resident_bytes(resident)
    peak = dict(used)
    allocated: dict[int, list[tuple[Lifetime, int]]] = {}
    freed: dict[int, list[tuple[Lifetime, int]]] = {}
    for lifetime in held:
        size = tensor_bytes(lifetime.tensor)
        if size is not None:
            allocated.setdefault(lifetime.alloc, []).append((lifetime, size))
            if lifetime.free >= 0:
                freed.setdefault(lifetime.free, []).append((lifetime, size))
    live: dict[str, dict[Lifetime, int]] = {}
    for i, step in enumerate(steps):
        for lifetime, size in allocated.get(i, ()):
            device = lifetime.device
            now = used.get(device.name, 0) + size
            on_device = live.setdefault(device.name, {})
            if now > device.memory_limit:
                in_use = used.get(device.name, 0)
                return peak, (i, _out_of_memory(step, lifetime, size, in_use, on_device))
            on_device[lifetime] = size
            used[device.name] = now
            peak[device.name] = max(peak.get(device.name, 0), now)
        for lifetime, size in freed.get(i, ()):
            used[lifetime.device.name] -= size
            del live[lifetime.device.name][lifetime]
    return peak, None


def held_during_loops(
    steps: Sequence[Step], held: Sequence[Lifetime], resident: Iterable[Resident]
) -> tuple[dict[int, dict[str, int]], dict[int, dict[str, list[tuple[str, str, str, int]]]]]:
    """What the plan holds on each device while each loop's step runs (its arguments among
    them; not its results, which the loop allocates), by static sizes: the bytes, and the five
    largest tensors (name, op, type, bytes) for an out-of-memory error inside the loop."""
    loops = [i for i, step in enumerate(steps) if step.frame is not None]
    bytes_held: dict[int, dict[str, int]] = {}
    largest: dict[int, dict[str, list[tuple[str, str, str, int]]]] = {}
    for i in loops:
        used = _resident_bytes(resident)
        tensors: dict[str, list[tuple[str, str, str, int]]] = {}
        for h in held:
            if h.alloc < i and (h.free < 0 or h.free >= i):
                size = tensor_bytes(h.tensor) or 0
                used[h.device.name] = used.get(h.device.name, 0) + size
                op = h.tensor.op
                tensors.setdefault(h.device.name, []).append(
                    (h.tensor.name, op.name, op.type, size)
                )
        bytes_held[i] = used
        largest[i] = {
            name: sorted(items, key=lambda item: -item[3])[:5] for name, items in tensors.items()
        }
    return bytes_held, largest


def _out_of_memory(
    step: Step, lifetime: Lifetime, size: int, in_use: int, live: dict[Lifetime, int]
) -> ResourceExhaustedError:
    op, tensor, device = step.op, lifetime.tensor, lifetime.device
    held = _largest(live)
    what = "receiving" if tensor.op is not op else "allocating"
    return ResourceExhaustedError(
        f"OOM when {what} tensor {tensor.name} with shape {format_dims(tensor.shape.dims or ())} "
        f"and type {tensor.dtype.name} ({size} bytes) for '{op.name}' ({op.type}, created at "
        f"{op.source}) on {device.name}: {in_use} bytes already in use, "
        f"limit {device.memory_limit} bytes ({device.memory_limit / (1 << 20):.0f} MiB). "
        f"Largest live tensors: {held}",
        op=op,
    )


def _largest(live: dict[Lifetime, int]) -> str:
    largest = sorted(live.items(), key=lambda item: -item[1])[:5]
    return (
        "; ".join(
            f"{h.tensor.name} from '{h.tensor.op.name}' ({h.tensor.op.type}): {n} bytes"
            for h, n in largest
        )
        or "none"
    )


def live_tensors(steps: Sequence[Step], held: Sequence[Lifetime]) -> Callable[[int], str]:
    """What an out-of-memory error a device raised itself (a real GPU's pool) names: the largest
    tensors live on the failing step's device as it ran, by their static sizes."""

    def describe(step: int) -> str:
        device = steps[step].device.name
        live = {
            h: tensor_bytes(h.tensor) or 0
            for h in held
            if h.device.name == device and h.alloc < step and (h.free < 0 or h.free >= step)
        }
        return _largest(live)

    return describe


class RunTimeCheck:
    """The memory check for tensors whose sizes are known only at run time, on GPUs.

    The check before a run counts what static shapes give. A plan with other outputs measures
    them as they are made (``B``, the flat list of output sizes) and calls this after each such
    step: the static bytes in use at that step plus the measured live ones must fit the device.
    """

    def __init__(
        self,
        steps: Sequence[Step],
        held: Sequence[Lifetime],
        resident: Iterable[Resident],
        byte_offsets: Sequence[int],
    ) -> None:
        self._steps = steps
        static_used = _resident_bytes(resident)
        # step -> [(lifetime, static size or None for measured, B slot)]
        allocated: dict[int, list[tuple[Lifetime, int | None, int]]] = {}
        freed: dict[int, list[Lifetime]] = {}
        for lifetime in held:
            size = tensor_bytes(lifetime.tensor)
            slot = -1
            if size is None:
                if (
                    lifetime.device.device_type == "CPU"  # host memory is not what it is for
                    or lifetime.bytes_step < 0  # a fed value's size is not measured
                    or byte_offsets[lifetime.bytes_step] < 0
                ):
                    continue
                slot = byte_offsets[lifetime.bytes_step] + lifetime.output
            allocated.setdefault(lifetime.alloc, []).append((lifetime, size, slot))
            if lifetime.free >= 0:
                freed.setdefault(lifetime.free, []).append(lifetime)
        live: dict[str, dict[Lifetime, tuple[int | None, int]]] = {}
        # step -> [(device, static bytes in use, live tensors, tensors made by the step)]
        self._checks: dict[int, list[tuple[Device, int, dict[Lifetime, Any], list[Lifetime]]]] = {}
        for i in range(len(steps)):
            made: dict[str, list[Lifetime]] = {}
            for lifetime, size, slot in allocated.get(i, ()):
                name = lifetime.device.name
                live.setdefault(name, {})[lifetime] = (size, slot)
                if size is None:
                    made.setdefault(name, []).append(lifetime)
                else:
                    static_used[name] = static_used.get(name, 0) + size
            for name, lifetimes_made in made.items():
                device = lifetimes_made[0].device
                snapshot = dict(live[name])
                self._checks.setdefault(i, []).append(
                    (device, static_used.get(name, 0), snapshot, lifetimes_made)
                )
            for lifetime in freed.get(i, ()):
                size, _ = live[lifetime.device.name].pop(lifetime)
                if size is not None:
                    static_used[lifetime.device.name] -= size

    def __call__(self, step: int, measured: Sequence[int]) -> None:
        for device, static_in_use, live, made in self._checks.get(step, ()):
            sizes = {
                lifetime: measured[slot] if size is None else size
                for lifetime, (size, slot) in live.items()
            }
            total = static_in_use + sum(
                measured[slot] for size, slot in live.values() if size is None
            )
            if total > device.memory_limit:
                culprit = max(made, key=sizes.__getitem__)
                size = sizes.pop(culprit)
                raise _out_of_memory(self._steps[step], culprit, size, total - size, sizes)
