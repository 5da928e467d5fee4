"""Run a plan: its code (``plan_codegen.PlanCode``, a straight-line Python function built once),
called per run, and what a run leaves: per-step clocks, the steps a failure or an interrupt
stopped at, the error that names the failing op, a loop's executions.

Interpreting a list of steps costs about twice a plain NumPy loop on small tensors; a generated
function that calls each kernel directly costs what the loop costs.
"""

from __future__ import annotations

import functools
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from placeviz.contract import EventKind
from placeviz.devices.context import Device
from placeviz.errors import InternalError, InvalidArgumentError, OpError, ResourceExhaustedError
from placeviz.runtime.backends.cuda_runtime import CudaRuntime, restore_defaults
from placeviz.runtime.denormals import Flushed
from placeviz.runtime.dry_run import DryPlan
from placeviz.runtime.plan import Plan
from placeviz.runtime.plan_codegen import Cancelled, PlanCode, Step, real_deps
from placeviz.runtime.state import SessionState
from placeviz.runtime.workers import StreamWorkers


class _Outcome:
    """How a parallel run is going: the first failure, and when every stream is done (a failed
    run too waits for all: streams stop at their next step, and the trace must hold what they
    did before the error reaches the caller)."""

    def __init__(self, streams: int, events: list[Any], cancel: list[bool]) -> None:
        self.remaining = streams
        self.error: BaseException | None = None
        self.all_done = threading.Event()
        self._events = events
        self._cancel = cancel
        self._lock = threading.Lock()

    def run(self, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Cancelled:
            pass
        except BaseException as exc:  # a kernel's error, or an interrupt inside a worker
            with self._lock:
                if self.error is None:
                    self.error = exc
            self.cancel()
        finally:
            with self._lock:
                self.remaining -= 1
                last = self.remaining == 0
            if last:
                self.all_done.set()

    def cancel(self) -> None:
        """Stop every stream at its next step and wake the ones waiting on another."""
        self._cancel[0] = True
        for event in self._events:
            if event is not None:
                event.set()


class RunFailure(Exception):
    """A step raised; carries the placeviz error and how far the run got (for the trace)."""

    def __init__(self, error: Exception, failed_step: int | None) -> None:
        super().__init__(str(error))
        self.error = error
        self.failed_step = failed_step


class CompiledPlan:
    """A plan turned into one Python function; ``run(feed_values)`` returns the fetched values.

    After a run, ``ends[i]`` is the clock (ns) at which step ``i`` finished, and with
    ``full_trace`` ``out_bytes[i]`` the bytes of each output it produced.
    """

    def __init__(
        self,
        plan: Plan,
        state: SessionState,
        full_trace: bool = False,
        workers: StreamWorkers | None = None,
        check_dynamic_memory: bool = False,
        gpus: CudaRuntime | None = None,
        dry: DryPlan | None = None,
        overflow: Callable[[Sequence[Step]], tuple[int, OpError] | None] | None = None,
    ) -> None:
        """``gpus``: the session's real GPUs (streams, pools), which every real GPU of the plan
        must be among; ``dry``: a dry run's shapes, whose kernels then replace the ops' own;
        ``overflow``: given the steps, the one whose allocation overflows its device (memory.py's
        ``fit``), where every run then fails after running the steps before it."""
        self.plan = plan
        self.dry = dry
        self.full_trace = full_trace
        self._gpus = gpus if gpus is not None and gpus.gpus else None
        converters = [self._from_host(plan.devices[t.op.id]) for t in plan.feeds]
        # None when every feed goes to the host as it is (no check per run).
        self._feed_converters = converters if any(converters) else None
        fed = [plan.devices[t.op.id] for t in plan.feeds]
        self._fed_gpus = [] if gpus is None else list({gpus.gpu(d) for d in fed if d in gpus})
        code = self._code = PlanCode(
            plan,
            state,
            full_trace,
            check_dynamic_memory,
            workers is not None,
            self._gpus,
            dry,
            overflow,
        )
        self.steps = code.steps
        self.source = code.source
        self._namespace = code.namespace
        self.parallel = code.parallel
        self._workers = workers
        self._clocks = code.clocks
        self.sources = code.sources  # per-step TimingSource codes where they differ, else None
        self.byte_offsets = code.byte_offsets  # FULL_TRACE: where each step's sizes go
        self.byte_counts = code.byte_counts
        self.not_run = code.not_run  # after a run: steps of ops in branches not taken
        # ops run as NoOps: one list, shared by every run's record (a document's array)
        self.unread = sorted(plan.unread)
        self.folded = sorted(code.folded)  # ops folded into constants: likewise
        self.executions = code.executions  # after a run: each op run inside a loop's frame
        self.frame_devices = code.frame_devices  # op id in a loop -> its device's name
        self.loop_memory = code.loop_memory  # buffers made inside loops, where counted
        # Per-step start clocks: parallel runs, and runs timed by CUDA events.
        self.starts: list[int] | None = None
        # Describes the largest tensors live at a step, for an out-of-memory error (memory.py).
        self.live_tensors: Callable[[int], str] | None = None
        self.interrupted_step: int | None = None  # where a KeyboardInterrupt stopped the run
        self.ends: list[int] = [0] * len(self.steps)
        self.out_bytes: list[int] = [0] * code.byte_slots
        for slot, size in code.static_sizes.items():
            self.out_bytes[slot] = size
        if self.parallel:
            self._streams = code.streams
            self._collect = code.collect
        else:
            self._fn = code.run

    @property
    def timed_by_cuda_events(self) -> bool:
        """Whether a run's GPU steps are timed on their streams (they may overlap)."""
        return self._clocks is not None

    def set_memory_check(self, check: Callable[[int, Sequence[int]], None]) -> None:
        """What the plan calls after each step that measured sizes on a GPU (memory.py's check)."""
        self._namespace["MEM"] = check

    def _from_host(self, device: Device) -> Callable[[Any], Any] | None:
        if self._gpus is not None and device in self._gpus:
            return self._gpus.gpu(device).from_host
        return None

    def run(self, feed_values: Sequence[Any]) -> tuple[Any, ...]:
        """Run once; on failure raise RunFailure with the placeviz error and the failed step.

        On real GPUs one host thread launches every step and the streams overlap; once they are
        done, each GPU step's times come from its CUDA events (also when the run failed)."""
        self.interrupted_step = None
        self.not_run.clear()
        self.executions.clear()
        if self.loop_memory is not None:
            self.loop_memory.reset()
        clocks = self._clocks
        failed: int | None = None
        began = 0
        try:
            if clocks is not None:
                self.ends = [0] * len(self.steps)
                clocks.begin(time.perf_counter_ns)
                began = time.perf_counter_ns()
            converters = self._feed_converters
            if converters is not None:
                feed_values = [c(v) if c else v for c, v in zip(converters, feed_values)]
                if clocks is not None:
                    clocks.feeds_ready(self._fed_gpus)
            if self.parallel:
                return self._run_parallel(feed_values)
            with Flushed():
                return self._fn(*feed_values, T=self.ends, B=self.out_bytes)
        except KeyboardInterrupt as exc:
            failed = self.interrupted_step = self._failed_step(exc)
            traceback.clear_frames(exc.__traceback__)
            raise
        except RunFailure as caught:
            failed = caught.failed_step
            raise
        except Exception as exc:
            failure = self._failure(exc)
            failed = failure.failed_step
            raise failure from exc
        finally:
            if clocks is not None:
                self._gpu_times(began, failed)

    def _gpu_times(self, began: int, failed: int | None) -> None:
        """``starts``, ``ends`` and ``sources`` of a run on GPUs: CUDA events for GPU steps, the
        host clock for the others (each starts when the step before it in the plan ended)."""
        assert self._clocks is not None
        clocks = self._clocks
        try:
            clocks.finish()
        finally:
            restore_defaults()
        host_ends = self.ends  # when the host was done with each step (a GPU step: launched)
        starts, ends = [0] * len(host_ends), [0] * len(host_ends)
        timed = clocks.times([i for i in clocks.gpu_steps if host_ends[i]])
        previous = began
        for i, end in enumerate(host_ends):
            if not end:
                continue
            if i in timed:
                starts[i], ends[i] = timed[i]
            else:  # a host step starts once the host got to it and its GPU inputs were done
                waited = self._code.gpu_deps_of_host_steps.get(i, ())
                starts[i] = max([previous, *(ends[d] for d in waited)])
                ends[i] = max(end, starts[i])
            previous = end
        if failed is not None and not host_ends[failed]:
            starts[failed] = max([previous, *(ends[d] for d in real_deps(self.steps, failed))])
        self.ends = ends
        self.starts = starts

    def _run_parallel(self, feed_values: Sequence[Any]) -> tuple[Any, ...]:
        assert self._workers is not None
        values: list[Any] = [None] * self._code.value_slots
        for index, value in zip(self._code.feed_slots, feed_values):
            values[index] = value
        events: list[Any] = [None] * len(self.steps)
        for index in self._code.event_steps:
            events[index] = threading.Event()
        cancel = [False]
        count = len(self.steps)
        starts, ends = [0] * count, [0] * count
        self.starts, self.ends = starts, ends
        outcome = _Outcome(len(self._streams), events, cancel)
        for name, fn in self._streams:
            self._workers.submit(
                name,
                functools.partial(
                    outcome.run, fn, values, events, cancel, starts, ends, self.out_bytes
                ),
            )
        try:
            while not outcome.all_done.wait(0.05):
                pass
        except KeyboardInterrupt:
            outcome.cancel()
            outcome.all_done.wait(10.0)  # each worker stops at its next step
            raise
        if outcome.error is not None:
            raise self._failure(outcome.error) from outcome.error
        return self._collect(values)

    def _failure(self, exc: BaseException) -> RunFailure:
        """The error to raise, with the run's frames cleared so no tensor outlives the run."""
        step = self._failed_step(exc)
        failure = RunFailure(self._error_for(exc, step), step)
        traceback.clear_frames(exc.__traceback__)
        return failure

    def _failed_step(self, exc: BaseException) -> int | None:
        tb = exc.__traceback__
        found = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self._code.filename:
                found = self._code.line_steps.get(tb.tb_lineno)
            tb = tb.tb_next
        return found

    def _error_for(self, exc: BaseException, step_index: int | None) -> Exception:
        """Name the op whose line raised: its type, source line and device."""
        if step_index is None:
            if isinstance(exc, OpError):  # names its own op: a fetched variable read uninitialized
                return exc
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
        if isinstance(exc, MemoryError):  # NumPy's and CuPy's failed allocations
            shape, dtype = getattr(exc, "shape", None), getattr(exc, "dtype", None)
            size = getattr(exc, "_total_size", None) or getattr(exc, "size", None)
            tensor = (
                f"tensor with shape[{','.join(map(str, shape))}] and type {dtype}"
                if shape is not None and dtype is not None
                else "a tensor"
            )
            amount = f" ({size} bytes)" if size else ""
            limit = getattr(exc, "_limit", None)  # CuPy's pool: the logical GPU's limit
            held = (
                f" Limit {limit} bytes ({limit / (1 << 20):.0f} MiB) on {step.device.name}."
                if limit
                else ""
            )
            if self.live_tensors is not None:
                held += f" Largest live tensors: {self.live_tensors(step_index)}."
            return ResourceExhaustedError(
                f"OOM when allocating {tensor} on {step.device.name}{amount}: {exc}{held}"
                f"\n\t{where}",
                op=op,
            )
        return InvalidArgumentError(f"{type(exc).__name__}: {exc}\n\t{where}", op=op)
