"""Real GPUs at run time: one CUDA stream and one CuPy memory pool per logical GPU.

Logical GPUs carved from one card behave as TensorFlow's do: each runs its ops on its own stream,
so their work overlaps on the card; each allocates from its own pool, capped at its memory limit,
so it runs out at its own limit and not the card's; work crosses between them through CUDA
events recorded on one stream and waited on by another, never a host synchronisation. The host
waits only where it needs a value (a fetch, or a CPU op's input). Each GPU step is timed by a
pair of CUDA events on its stream, read once the run is over. Imported only when a session has
a real GPU: placeviz works where CUDA does not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from placeviz.devices.context import Device
from placeviz.runtime.backends import cupy_backend

_MIB = 1 << 20
# What a reservation leaves free on the card: CUDA's own context and libraries (cuBLAS's
# workspace) allocate outside the pools, as TensorFlow leaves room for them.
_RESERVE_MARGIN = 512 * _MIB


class LogicalGpu:
    """One logical GPU's stream and memory pool (its limit is the device's memory limit)."""

    def __init__(self, device: Device, reserve: bool) -> None:
        import cupyx

        cupy = cupy_backend.cupy()
        self._empty_pinned = cupyx.empty_pinned
        self.device = device
        self.ordinal = device.physical.cuda_ordinal or 0
        self._cupy = cupy
        with cupy.cuda.Device(self.ordinal):
            self.stream = cupy.cuda.Stream(non_blocking=True)
            self.pool = cupy.cuda.MemoryPool()
            self.pool.set_limit(size=device.memory_limit)
            if reserve:
                self._reserve(device.memory_limit)
        # Values other streams read (copies in flight, pinned staging buffers) stay alive until
        # the run is over: a pool may hand a freed block to its own stream's next op at once.
        self.keep: list[Any] = []
        set_allocator = cupy.cuda.memory._set_thread_local_allocator
        use_device = cupy.cuda.Device(self.ordinal).use
        use_stream = self.stream.use
        malloc = self.pool.malloc

        def activate() -> None:
            use_device()
            use_stream()
            set_allocator(malloc)

        self.activate: Callable[[], None] = activate

    def _reserve(self, limit: int) -> None:
        """Map the device's memory up front, as TensorFlow does without ``allow_growth``: one
        block as large as the limit (or what the card has free), returned to the pool, which
        then splits it for every tensor. Best effort: a card another process holds grows."""
        free, _ = self._cupy.cuda.runtime.memGetInfo()
        size = min(limit, free - _RESERVE_MARGIN) // _MIB * _MIB  # the pool rounds sizes up
        if size <= 0:
            return
        with self.stream:
            try:
                block = self.pool.malloc(size)
            except self._cupy.cuda.memory.OutOfMemoryError:
                return
            del block

    # -- copies --------------------------------------------------------------------------------
    def from_host(self, value: Any) -> Any:
        """A host array onto this GPU through a pinned staging buffer, on this GPU's stream."""
        cupy = self._cupy
        host = np.asarray(value)  # (ascontiguousarray would make a scalar 1-d)
        if host.dtype.kind not in "biufc":  # strings stay in host memory, as TF's do
            return host
        staged = self._empty_pinned(host.shape, host.dtype)
        staged[...] = host
        self.activate()
        out = cupy.empty(host.shape, host.dtype)
        out.set(staged, stream=self.stream)
        self.keep.append(staged)
        return out

    def to_host(self, value: Any) -> Any:
        """A value of this GPU in host memory: copied on its stream into a pinned buffer (the
        host waits for this stream only)."""
        cupy = self._cupy
        if not isinstance(value, cupy.ndarray):
            return value
        if not value.flags.c_contiguous:
            with self.stream:
                value = cupy.ascontiguousarray(value)
        out = self._empty_pinned(value.shape, value.dtype)
        value.get(stream=self.stream, out=out)
        return out

    def copy_from(self, value: Any) -> Any:
        """A value of another logical GPU copied into this one's pool, on this one's stream (the
        caller made this stream wait for the value's producer)."""
        self.keep.append(value)
        return value.copy()

    def release(self) -> None:
        """Give the pool's memory back to the card (a closed session holds none)."""
        self.keep.clear()
        with self._cupy.cuda.Device(self.ordinal):
            self.stream.synchronize()
            self.pool.free_all_blocks()


class CudaRuntime:
    """A session's logical GPUs, by device name."""

    def __init__(self, devices: Iterable[Device], reserve: Callable[[Device], bool]) -> None:
        self.gpus = {d.name: LogicalGpu(d, reserve(d)) for d in devices if d.backend == "cupy"}
        self._cupy = cupy_backend.cupy()

    def __contains__(self, device: Device) -> bool:
        return device.name in self.gpus

    def gpu(self, device: Device) -> LogicalGpu:
        return self.gpus[device.name]

    def transfer(self, src: Device, dst: Device) -> Callable[[Any], Any]:
        """The copy an edge from ``src`` to ``dst`` needs when either is a real GPU: each
        logical GPU owns its memory, so logical GPUs of one card copy too, as TensorFlow's do."""
        if dst.name in self.gpus:
            target = self.gpus[dst.name]
            return target.copy_from if src.name in self.gpus else target.from_host
        return self.gpus[src.name].to_host

    def _onto_card(self, x: Any) -> Any:
        """A loop's host value on the card (on the current stream); others as they are."""
        if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "biufc":
            return self._cupy.asarray(x)
        return x

    def _onto_host(self, x: Any) -> Any:
        """A loop's card value in host memory (waits for the current stream); others as they are."""
        return x.get() if isinstance(x, self._cupy.ndarray) else x

    def in_frame(self, device: Device, kernel: Callable[..., Any]) -> Callable[..., Any]:
        """``kernel`` of an op inside a while loop, reading its inputs where it runs. A loop
        runs on its own stream in one host thread, so its values are made in order on that
        stream: a host value a GPU op reads goes onto the card, and a GPU value a host op
        reads comes back, each copy ordered on that stream like the loop's kernels."""
        move = self._onto_card if device.name in self.gpus else self._onto_host
        return lambda *inputs: kernel(*[move(x) for x in inputs])

    def frame_copy(self, src: Device, dst: Device) -> Callable[[Any], Any] | None:
        """The copy a value of a while loop needs from ``src`` to ``dst`` (None where neither is
        a real GPU), on the loop's stream like its kernels (``in_frame``): each logical GPU
        owns its memory, so logical GPUs of one card copy too, as TensorFlow's do."""
        if src.name not in self.gpus and dst.name not in self.gpus:
            return None
        if dst.name not in self.gpus:
            return self._onto_host
        cupy = self._cupy

        def onto_gpu(x: Any) -> Any:
            return x.copy() if isinstance(x, cupy.ndarray) else self._onto_card(x)

        return onto_gpu

    def release(self) -> None:
        for gpu in self.gpus.values():
            gpu.release()


def restore_defaults() -> None:
    """The calling thread back on CuPy's default stream and allocator (user code after a run)."""
    cupy = cupy_backend.cupy()
    cupy.cuda.memory._set_thread_local_allocator(None)
    cupy.cuda.Stream.null.use()


class StepClocks:
    """CUDA events around each GPU step of one compiled plan, made once and recorded every run.

    A run records an origin event on each stream it uses as it starts (the streams are idle then,
    so the event marks the host clock read beside it); each GPU step's start and end events give
    its times on that clock. The end events double as what other streams wait on.
    """

    def __init__(self, runtime: CudaRuntime, gpu_steps: dict[int, LogicalGpu]) -> None:
        cupy = cupy_backend.cupy()
        self._elapsed = cupy.cuda.get_elapsed_time
        self.gpu_steps = gpu_steps
        self.starts = {i: cupy.cuda.Event() for i in gpu_steps}
        self.ends = {i: cupy.cuda.Event() for i in gpu_steps}
        self.gpus = list({id(g): g for g in gpu_steps.values()}.values())
        self._origins = [(gpu, cupy.cuda.Event()) for gpu in self.gpus]
        self._origin_ns: dict[int, tuple[Any, int]] = {}
        self._new_event = cupy.cuda.Event
        self._fed: dict[int, Any] = {}  # by fed GPU (which may run no step of the plan)

    def record_start(self, step: int) -> Callable[[], None]:
        return functools.partial(self.starts[step].record, self.gpu_steps[step].stream)

    def record_end(self, step: int) -> Callable[[], None]:
        return functools.partial(self.ends[step].record, self.gpu_steps[step].stream)

    def wait_for(self, consumer: LogicalGpu, step: int) -> Callable[[], None]:
        return functools.partial(consumer.stream.wait_event, self.ends[step])

    def host_waits_for(self, step: int) -> Callable[[], None]:
        return self.ends[step].synchronize

    def begin(self, clock: Callable[[], int]) -> None:
        for gpu, origin in self._origins:
            origin.record(gpu.stream)
            self._origin_ns[id(gpu)] = (origin, clock())

    def feeds_ready(self, fed: Sequence[LogicalGpu]) -> None:
        """Fed values copied onto ``fed`` GPUs' streams are read by the others only after those
        copies (a plan step waits only for the steps that made its inputs, and no step makes a
        feed)."""
        for gpu in fed:
            event = self._fed.get(id(gpu))
            if event is None:
                event = self._fed[id(gpu)] = self._new_event(disable_timing=True)
            event.record(gpu.stream)
            for other in self.gpus:
                if other is not gpu:
                    other.stream.wait_event(event)

    def finish(self) -> None:
        """Wait for every stream the plan used, and drop what the run kept alive for them."""
        for gpu in self.gpus:
            gpu.stream.synchronize()
            gpu.keep.clear()

    def times(self, launched: Sequence[int]) -> dict[int, tuple[int, int]]:
        """Start and end (host clock, ns) of each launched GPU step."""
        result = {}
        for step in launched:
            gpu = self.gpu_steps[step]
            origin, origin_ns = self._origin_ns[id(gpu)]
            start = origin_ns + int(self._elapsed(origin, self.starts[step]) * 1e6)
            end = origin_ns + int(self._elapsed(origin, self.ends[step]) * 1e6)
            result[step] = (start, max(start, end))
        return result
