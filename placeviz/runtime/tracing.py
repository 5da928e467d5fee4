"""Turn a compiled plan's per-step timestamps into recorded events, and events into a Trace.

Everything that does not change between runs of a plan (which op each step runs, on which device,
what it allocates and when that is freed) is computed once per plan; a run then adds its events
with one ``extend`` per column.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from placeviz.contract import EventKind, TimingSource
from placeviz.devices.context import Device
from placeviz.events.recorder import DTYPES, Recorder
from placeviz.graph.core import Tensor, tensor_bytes
from placeviz.runtime.executor import CompiledPlan
from placeviz.runtime.loop_memory import FREED, HANDED, LoopMemory
from placeviz.runtime.memory import KEPT, Lifetime
from placeviz.runtime.simulation import TimelineModel

_CLOCK = int(TimingSource.CLOCK)
_MODELED = int(TimingSource.MODELED)
_RUN_KIND = int(EventKind.RUN)
_NO_FEEDS = np.zeros(0, dtype=np.int64)


class PlanColumns:
    """The run-invariant columns of one compiled plan's events."""

    def __init__(
        self, compiled: CompiledPlan, held: Sequence[Lifetime], device_ids: dict[str, int]
    ) -> None:
        steps = compiled.steps
        self.count = len(steps)
        # Each run's record names its fetches: formatted once, not per run.
        self.fetch_names = [fetch.name for fetch in compiled.plan.fetches]
        # The recorder keeps these arrays by reference in every run's chunk (views, no copies),
        # in its own dtypes, so reading events back converts nothing.
        self.kinds = np.array([int(s.kind) for s in steps], dtype=DTYPES["kind"])
        self.nodes = np.array(
            [
                (s.tensor.op.id if s.tensor is not None else s.op.id)
                if s.kind is EventKind.TRANSFER
                else s.op.id
                for s in steps
            ],
            dtype=DTYPES["node"],
        )
        self.devices = np.array([device_ids[s.device.name] for s in steps], dtype=DTYPES["device"])
        self.device_ids = device_ids  # for the events of ops run inside while loops
        self.peers = np.array(
            [device_ids[s.peer.name] if s.peer is not None else -1 for s in steps],
            dtype=DTYPES["peer"],
        )
        self.virtual = np.array([not s.runs_code for s in steps], dtype=bool)
        self.has_virtual = bool(self.virtual.any())
        self.virtual_steps: list[int] = np.flatnonzero(self.virtual).tolist()
        # Op steps that stamp their clocks: what a live view's progress snapshot reads.
        self.clocked_ops = (self.kinds == int(EventKind.OP)) & ~self.virtual
        # Where each step's bytes come from: (step, output index or -1 for all its outputs),
        # and the bytes known from static shapes, used when the run is not fully traced.
        producer: dict[int, tuple[int, int]] = {}  # tensor -> (step, index among its outputs)
        byte_sources: list[tuple[int, int]] = []
        static_bytes: list[int] = []
        fed = {id(tensor): index for index, tensor in enumerate(compiled.plan.feeds)}
        # Transfers of fed values: (step, feed index); their bytes are the fed values'.
        fed_transfers: list[tuple[int, int]] = []
        for i, step in enumerate(steps):
            if step.kind is EventKind.TRANSFER and step.tensor is not None:
                byte_sources.append(producer.get(id(step.tensor), (-1, 0)))
                static_bytes.append(_static_bytes([step.tensor]))
                if id(step.tensor) in fed and id(step.tensor) not in producer:
                    fed_transfers.append((i, fed[id(step.tensor)]))
            else:
                outputs = [t for t, _ in step.exits] if step.frame is not None else step.op.outputs
                for index, tensor in enumerate(outputs):
                    producer[id(tensor)] = (i, index)
                byte_sources.append((i, -1))
                refs = step.op.op_def.ref_output
                static_bytes.append(0 if refs else _static_bytes(step.op.outputs))
        self.static_bytes = np.array(static_bytes, dtype=DTYPES["bytes"])
        self.arrays = {
            "byte_step": np.asarray([b[0] for b in byte_sources], dtype=np.int64),
            "byte_index": np.asarray([b[1] for b in byte_sources], dtype=np.int64),
        }
        self.fed_transfers = np.asarray(fed_transfers, dtype=np.int64).reshape(-1, 2)
        self.model = TimelineModel(steps, compiled.plan.feeds, compiled.byte_offsets, compiled.dry)
        self.modeled = self.model.any_modeled
        # Steps of a sequential, host-clocked plan follow each other in plan order.
        self.sequential_clock = (
            not compiled.parallel and not compiled.timed_by_cuda_events and not self.modeled
        )
        self.memory_sorted: dict[str, np.ndarray] = {}
        self._memory_order: np.ndarray | None = None
        self.memory_arrays: dict[str, np.ndarray] | None = None
        self.memory_in_plan_order = self.sequential_clock
        # Where each step's output sizes lie in a fully traced run's flat list, and how many.
        self.byte_offsets = np.maximum(np.asarray(compiled.byte_offsets, dtype=np.int64), 0)
        self.byte_lengths = np.asarray(compiled.byte_counts, dtype=np.int64)
        if compiled.full_trace:
            rows = []
            for h in held:
                device, node = device_ids[h.device.name], h.tensor.op.id
                rows.append(
                    (h.alloc, h.free, device, node, h.bytes_step, h.output, h.feed, h.from_loop)
                )
            table = np.asarray(rows, dtype=np.int64).reshape(-1, 8)
            names = ("alloc", "free", "device", "node", "bytes_step", "index", "feed", "from_loop")
            self.memory_arrays = {name: table[:, i] for i, name in enumerate(names)}
            # values kept after the run are never freed, and a loop's results are allocated by
            # the loop, which the plan-order path cannot say
            self.memory_in_plan_order &= not bool((table[:, 1] == KEPT).any())
            self.memory_in_plan_order &= not bool(table[:, 7].any())
        # Whether a run's events need its fed values' sizes (not computed for a run otherwise).
        feed_rows = self.memory_arrays is not None and bool((self.memory_arrays["feed"] >= 0).any())
        self.reads_fed_sizes = bool(len(self.fed_transfers)) or feed_rows

    def memory_order(self) -> np.ndarray:
        """The plan-order permutation of this plan's memory events (computed once)."""
        if self._memory_order is None:
            memory = self.memory_arrays
            assert memory is not None
            order = _memory_order(memory, self.count)
            n = len(memory["alloc"])
            kinds = np.concatenate(
                (np.full(n, int(EventKind.ALLOC)), np.full(n, int(EventKind.FREE)))
            )
            self.memory_sorted = {
                "kind": kinds[order],
                "node": np.concatenate((memory["node"], memory["node"]))[order],
                "device": np.concatenate((memory["device"], memory["device"]))[order],
            }
            self._memory_order = order
        return self._memory_order


def _memory_order(memory: dict[str, np.ndarray], count: int) -> np.ndarray:
    """Allocations and frees in time order for a run whose steps follow one another.

    Step ``a`` allocates as it starts (key 2a+1); a free after step ``f`` happens when ``f``
    ends, which is when ``f + 1`` starts, and frees come first at one instant (key 2f+2);
    frees at the run's end come last.
    """
    alloc_keys = 2 * memory["alloc"] + 1
    free_keys = np.where(memory["free"] >= 0, 2 * memory["free"] + 2, 2 * count + 2)
    return np.argsort(np.concatenate((alloc_keys, free_keys)), kind="stable")


class _OutputBytes:
    """The sizes a fully traced run measured, indexed by (step, output)."""

    def __init__(self, compiled: CompiledPlan, columns: PlanColumns) -> None:
        self.flat = np.asarray(compiled.out_bytes, dtype=np.int64)
        self.offsets = columns.byte_offsets
        self.lengths = columns.byte_lengths
        self.sums = np.concatenate(([0], np.cumsum(self.flat)))

    def of_steps(self, steps: np.ndarray, outputs: np.ndarray) -> np.ndarray:
        """Bytes of output ``outputs[i]`` of step ``steps[i]`` (-1: all its outputs; 0 if none)."""
        valid = steps >= 0
        step = np.where(valid, steps, 0)
        start = self.offsets[step]
        length = self.lengths[step]
        whole = self.sums[start + length] - self.sums[start]
        if len(self.flat):
            picked = self.flat[np.minimum(start + np.maximum(outputs, 0), len(self.flat) - 1)]
        else:
            picked = np.zeros(len(steps), dtype=np.int64)
        one = np.where((outputs >= 0) & (outputs < length), picked, 0)
        return np.where(valid, np.where(outputs < 0, whole, one), 0)


def _static_bytes(tensors: Sequence[Tensor]) -> int:
    return sum(tensor_bytes(t) or 0 for t in tensors)


def _sequential_times(
    compiled: CompiledPlan,
    columns: PlanColumns,
    t_start: int,
    t_end: int,
    count: int,
    failed_step: int | None,
) -> tuple[list[int], list[int]]:
    """One stream: each step starts when the previous one ended; a step that runs no code (a
    constant, a copy between host-memory devices) ends when the previous one did."""
    if failed_step is None:
        ends = compiled.ends[:count]
        for i in columns.virtual_steps:  # few, ascending: cheaper than converting every clock
            ends[i] = ends[i - 1] if i else t_start
    else:
        ends_array = np.asarray(compiled.ends[:count], dtype=np.int64)
        ends_array[-1] = t_end
        ends_array[columns.virtual[:count]] = t_start
        ends = np.maximum.accumulate(np.maximum(ends_array, t_start)).tolist()
    return [t_start, *ends[:-1]], ends


def _parallel_times(
    compiled: CompiledPlan, columns: PlanColumns, t_start: int, t_end: int
) -> tuple[list[int], list[int], list[int]]:
    """Streams stamp each step's start and end; a step that started but did not end failed
    (or was cancelled) at the end of the run; steps that run no code take no time."""
    starts, ends = list(compiled.starts or ()), list(compiled.ends)
    ran = []
    for i, step in enumerate(compiled.steps):
        if columns.virtual[i]:
            deps = [ends[d] for d in step.deps if ends[d]]
            if len(deps) == len(step.deps):
                starts[i] = ends[i] = max(deps, default=t_start)
                ran.append(i)
        elif starts[i]:
            ends[i] = ends[i] or t_end
            ran.append(i)
    return ran, starts, ends


def record_run(
    recorder: Recorder,
    compiled: CompiledPlan,
    columns: PlanColumns,
    run_id: int,
    t_start: int,
    t_end: int,
    failed_step: int | None,
    feeds: Sequence[Any],
) -> None:
    """Add one run's events: the run, its steps and, when fully traced, its allocations.

    ``feeds`` are the run's fed values: their shapes time the modeled steps that use them.
    """
    if compiled.starts is not None:
        ran, starts, ends = _parallel_times(compiled, columns, t_start, t_end)
    else:
        count = columns.count if failed_step is None else failed_step + 1
        ran = range(count)
        starts, ends = _sequential_times(compiled, columns, t_start, t_end, count, failed_step)
    count = len(ran)
    if count == 0:
        run_event(recorder, t_start, t_end, run_id, _CLOCK)
        return
    prefix = isinstance(ran, range)
    if columns.modeled:
        measured = [end - start for start, end in zip(starts, ends)]
        model_starts, model_ends, model_sources = columns.model.lay_out(
            measured, len(starts), compiled.out_bytes, feeds
        )
        t0 = [t_start + model_starts[i] for i in ran]
        t1 = [t_start + model_ends[i] for i in ran]
        sources = [model_sources[i] for i in ran]
        # The run lasts as long as its modeled timeline, on which its steps are laid out (and
        # what it holds to its end is freed then).
        t_end = max(t1)
        run_event(recorder, t_start, t_end, run_id, _MODELED)
    elif prefix:
        t0, t1 = starts, ends
        sources = _CLOCK
        run_event(recorder, t_start, t_end, run_id, _CLOCK)
    else:
        t0, t1 = [starts[i] for i in ran], [ends[i] for i in ran]
        sources = _CLOCK if compiled.sources is None else compiled.sources[np.asarray(ran)]
        run_event(recorder, t_start, t_end, run_id, _CLOCK)
    index = None if prefix else np.asarray(ran, dtype=np.int64)

    def take(array: np.ndarray) -> np.ndarray:
        if index is None:
            return array if count == len(array) else array[:count]
        return array[index]

    measured = _OutputBytes(compiled, columns) if compiled.full_trace else None
    if measured is not None:
        steps = np.arange(count) if index is None else index
        step_bytes: Sequence[int] | np.ndarray = measured.of_steps(
            columns.arrays["byte_step"][steps], columns.arrays["byte_index"][steps]
        )
    else:
        step_bytes = take(columns.static_bytes)
    fed_bytes = _fed_bytes(feeds) if columns.reads_fed_sizes else _NO_FEEDS
    if len(columns.fed_transfers):
        step_bytes = _with_fed_transfers(step_bytes, columns.fed_transfers, fed_bytes, index, count)
    devices = take(columns.devices)
    kinds = take(columns.kinds)
    if compiled.not_run:
        kinds = _with_not_run(kinds, compiled.not_run, index, count)
    recorder.extend(
        count,
        {
            "kind": kinds,
            "t0": t0,
            "t1": t1,
            "node": take(columns.nodes),
            "device": devices,
            "stream": devices,
            "bytes": step_bytes,
            "source": sources,
            "run": run_id,
            "peer": take(columns.peers),
        },
    )
    if measured is not None:
        loops = compiled.loop_memory
        made_nothing = compiled.not_run if failed_step is None else [*compiled.not_run, failed_step]
        _record_memory(
            recorder,
            columns,
            measured,
            fed_bytes,
            steps,
            t0,
            t1,
            t_end,
            run_id,
            made_nothing,
            () if loops is None else loops.completed,
        )
    if compiled.executions:
        spans = {}
        for position, step in enumerate(ran):
            if compiled.steps[step].kind is EventKind.FRAME:
                spans[step] = (t0[position], t1[position], _source_at(sources, position))
        _record_executions(recorder, compiled, columns, spans, run_id, measured is not None, t_end)


def _source_at(sources: Any, position: int) -> int:
    return int(sources) if isinstance(sources, int) else int(sources[position])


def _record_executions(
    recorder: Recorder,
    compiled: CompiledPlan,
    columns: PlanColumns,
    spans: dict[int, tuple[int, int, int]],
    run_id: int,
    traced: bool,
    t_end: int,
) -> None:
    """One event per op execution inside a while loop (OP, or NOT_RUN where its inputs were
    dead) and per copy of a value between its devices (TRANSFER, NOT_RUN for a dead value's,
    node = producer, device = destination, peer = source), at its loop step's start plus the
    offset the loop's runner laid it out at (not stretched over the step: a measured step's span
    also holds the runner's own overhead), with its frame (the loop's LoopCond node) and
    iteration (``CompiledPlan.executions``). Events of ops outside loops leave those columns to
    their defaults (-1). A ``traced`` run also gets the loops' memory events."""
    rows = [e for e in compiled.executions if e.step in spans]
    if not rows:
        return
    first: dict[int, int] = {}
    for e in rows:
        first[e.step] = min(first.get(e.step, e.t0), e.t0)
    if traced and compiled.loop_memory is not None:
        _record_loop_memory(recorder, compiled.loop_memory, columns, spans, first, run_id, t_end)
    t0 = [spans[e.step][0] + e.t0 - first[e.step] for e in rows]
    t1 = [spans[e.step][0] + e.t1 - first[e.step] for e in rows]
    ids, places = columns.device_ids, compiled.frame_devices
    kinds = [int(EventKind.OP if e.ran else EventKind.NOT_RUN) for e in rows]
    peers: Any = -1
    sizes: Any = 0
    if any(e.copied is not None for e in rows):
        devices = [ids[places[e.op.id] if e.copied is None else e.copied[1]] for e in rows]
        peers = np.full(len(rows), -1, dtype=DTYPES["peer"])
        sizes = np.zeros(len(rows), dtype=DTYPES["bytes"])
        for i, e in enumerate(rows):
            if e.copied is not None:
                peers[i] = ids[places[e.op.id]]  # where its producer ran
                sizes[i] = e.copied[2]
                if e.ran:
                    kinds[i] = int(EventKind.TRANSFER)
    else:
        devices = [ids[places[e.op.id]] for e in rows]
    recorder.extend(
        len(rows),
        {
            "kind": np.array(kinds, dtype=DTYPES["kind"]),
            "t0": np.array(t0, dtype=DTYPES["t0"]),
            "t1": np.array(t1, dtype=DTYPES["t1"]),
            "node": np.array([e.op.id for e in rows], dtype=DTYPES["node"]),
            "device": np.array(devices, dtype=DTYPES["device"]),
            "stream": np.array(devices, dtype=DTYPES["stream"]),
            "bytes": sizes,
            "source": np.array([spans[e.step][2] for e in rows], dtype=DTYPES["source"]),
            "run": run_id,
            "peer": peers,
            "frame": np.array([e.loop for e in rows], dtype=DTYPES["frame"]),
            "iteration": np.array([e.iteration for e in rows], dtype=DTYPES["iteration"]),
        },
    )


def _record_loop_memory(
    recorder: Recorder,
    loops: LoopMemory,
    columns: PlanColumns,
    spans: dict[int, tuple[int, int, int]],
    first: dict[int, int],
    run_id: int,
    t_end: int,
) -> None:
    """The buffers made inside loops: each allocated as the execution that made it starts and
    freed when the last of its holders' readers ends (never before it was allocated); one
    still held when the run ended (on a stack) is freed then, and one a loop gave back is the
    plan's to free (``_record_memory``)."""

    def at(trace: Any, row: int, end: bool) -> int | None:
        e = trace.laid[row] if 0 <= row < len(trace.laid) else None
        if e is None or e.step not in spans:
            return None
        return spans[e.step][0] + (e.t1 if end else e.t0) - first[e.step]

    kinds, times, nodes, devices, sizes = [], [], [], [], []
    ids = columns.device_ids
    for buffer in loops.buffers:
        start = at(buffer.trace, buffer.row, False)
        if start is None:
            continue
        node, device = buffer.node.id, ids[buffer.device]
        kinds.append(int(EventKind.ALLOC))
        times.append(start)
        nodes.append(node)
        devices.append(device)
        sizes.append(buffer.size)
        if buffer.state == HANDED:
            continue
        end = t_end
        if buffer.state == FREED:
            ends = [at(trace, row, True) for trace, row in buffer.releases if trace is not None]
            end = max([start, *(t for t in ends if t is not None)])
        kinds.append(int(EventKind.FREE))
        times.append(end)
        nodes.append(node)
        devices.append(device)
        sizes.append(buffer.size)
    if not kinds:
        return
    _extend_memory(
        recorder,
        run_id,
        kinds=np.asarray(kinds, dtype=DTYPES["kind"]),
        times=np.asarray(times, dtype=np.int64),
        nodes=np.asarray(nodes, dtype=DTYPES["node"]),
        devices=np.asarray(devices, dtype=DTYPES["device"]),
        sizes=np.asarray(sizes, dtype=DTYPES["bytes"]),
    )


def _with_not_run(
    kinds: np.ndarray, not_run: Sequence[int], index: np.ndarray | None, count: int
) -> np.ndarray:
    """The steps' kinds, NOT_RUN for the ops a branch not taken left dead (a copy: the static
    column is shared by every run's events)."""
    result = np.array(kinds)
    ran = np.arange(count) if index is None else index  # ascending
    steps = np.asarray(sorted(not_run), dtype=np.int64)
    where = np.searchsorted(ran, steps)
    hit = (where < count) & (ran[np.minimum(where, count - 1)] == steps)
    result[where[hit]] = int(EventKind.NOT_RUN)
    return result


def _fed_bytes(feeds: Sequence[Any]) -> np.ndarray:
    return np.asarray([getattr(value, "nbytes", 0) for value in feeds], dtype=np.int64)


def _with_fed_transfers(
    step_bytes: Sequence[int] | np.ndarray,
    fed_transfers: np.ndarray,
    fed_bytes: np.ndarray,
    index: np.ndarray | None,
    count: int,
) -> np.ndarray:
    """The steps' bytes, each transfer of a fed value given that value's size (no step made it,
    so nothing measured it). A copy: the static column is shared by every run's events."""
    result = np.array(step_bytes, dtype=DTYPES["bytes"])
    ran = np.arange(count) if index is None else index  # ascending
    steps, fed = fed_transfers[:, 0], fed_transfers[:, 1]
    where = np.searchsorted(ran, steps)
    hit = (where < count) & (ran[np.minimum(where, count - 1)] == steps)
    result[where[hit]] = fed_bytes[fed[hit]]
    return result


def _lifetime_sizes(
    memory: dict[str, np.ndarray], measured: _OutputBytes, fed_bytes: np.ndarray, rows: Any
) -> np.ndarray:
    """Each lifetime's bytes: as its step measured them, or a fed value's own size."""
    sizes = measured.of_steps(memory["bytes_step"][rows], memory["index"][rows])
    feed = memory["feed"][rows]
    return np.where(feed >= 0, fed_bytes[np.maximum(feed, 0)] if len(fed_bytes) else 0, sizes)


def _record_memory(
    recorder: Recorder,
    columns: PlanColumns,
    measured: _OutputBytes,
    fed_bytes: np.ndarray,
    steps: np.ndarray,
    t0: Sequence[int],
    t1: Sequence[int],
    t_end: int,
    run_id: int,
    not_run: Sequence[int],
    loops_done: Collection[int],
) -> None:
    """An output is allocated when its step starts and freed when its last user there ends;
    a step of a branch not taken (``not_run``: an op, or a transfer of a dead value) made
    nothing, so nothing of it is allocated, nor did the step a run failed at; nor is anything
    for an output of 0 bytes (a Switch's dead one; TensorFlow allocates no buffer for an empty
    tensor). A loop's results were allocated inside it (``_record_loop_memory``): the plan frees
    those of the loops that gave them back (``loops_done``)."""
    memory = columns.memory_arrays
    if memory is None or not len(memory["alloc"]):
        return
    if len(steps) == columns.count and columns.memory_in_plan_order and not not_run:
        _record_memory_in_plan_order(recorder, columns, measured, fed_bytes, t0, t1, t_end, run_id)
        return
    start_of = np.full(columns.count + 1, -1, dtype=np.int64)
    end_of = np.full(columns.count + 1, -1, dtype=np.int64)
    start_of[steps] = t0
    end_of[steps] = t1
    start_of[np.asarray(not_run, dtype=np.int64)] = -1  # a step that did not run made nothing
    alloc_at = start_of[memory["alloc"]]
    # a step's output exists once the step ended; a fed value is there from the start
    produced = (end_of[memory["bytes_step"]] >= 0) | (memory["bytes_step"] < 0)
    made = (alloc_at >= 0) & produced
    from_loop = memory["from_loop"] != 0
    if from_loop.any():  # a loop's results exist once it gave them back (it allocated them)
        completed = np.asarray(sorted(loops_done), dtype=np.int64)
        made &= ~from_loop | np.isin(memory["bytes_step"], completed)
    sizes = _lifetime_sizes(memory, measured, fed_bytes, made)
    held = sizes > 0
    made[made] = held
    if not made.any():
        return
    sizes = sizes[held]
    free_at = np.where(memory["free"] >= 0, end_of[memory["free"]], -1)
    free_at = np.where(free_at >= 0, free_at, t_end)[made]
    alloc_at = alloc_at[made]
    freed = memory["free"][made] != KEPT
    allocated = ~from_loop[made]  # a loop's result was allocated by the loop
    n = int(allocated.sum())
    times = np.concatenate((alloc_at[allocated], free_at[freed]))
    is_alloc = np.concatenate((np.ones(n, dtype=bool), np.zeros(int(freed.sum()), dtype=bool)))
    # By time; at one instant frees of what was allocated before, then allocations, then frees
    # of what was allocated at that instant.
    rank = np.concatenate((np.ones(n), np.where(alloc_at[freed] < free_at[freed], 0, 2)))
    order = np.lexsort((rank, times))

    def both(column: np.ndarray) -> np.ndarray:
        return np.concatenate((column[allocated], column[freed]))[order]

    _extend_memory(
        recorder,
        run_id,
        kinds=np.where(is_alloc, int(EventKind.ALLOC), int(EventKind.FREE))[order],
        times=times[order],
        nodes=both(memory["node"][made]),
        devices=both(memory["device"][made]),
        sizes=both(sizes),
    )


def _record_memory_in_plan_order(
    recorder: Recorder,
    columns: PlanColumns,
    measured: _OutputBytes,
    fed_bytes: np.ndarray,
    t0: Sequence[int],
    t1: Sequence[int],
    t_end: int,
    run_id: int,
) -> None:
    """A whole run on one clocked stream: steps follow each other, so the order of its memory
    events is the plan's and only their times and measured sizes change between runs (an
    output of 0 bytes holds nothing: its events are left out)."""
    memory = columns.memory_arrays
    assert memory is not None
    order = columns.memory_order()
    starts = np.asarray(t0, dtype=np.int64)
    ends = np.append(np.asarray(t1, dtype=np.int64), t_end)  # index -1: freed when the run ends
    times = np.concatenate((starts[memory["alloc"]], ends[memory["free"]]))[order]
    sizes = _lifetime_sizes(memory, measured, fed_bytes, slice(None))
    sizes = np.concatenate((sizes, sizes))[order]
    kinds, nodes = columns.memory_sorted["kind"], columns.memory_sorted["node"]
    devices = columns.memory_sorted["device"]
    held = sizes > 0
    if not held.all():
        times, sizes, kinds, nodes, devices = (
            a[held] for a in (times, sizes, kinds, nodes, devices)
        )
    _extend_memory(
        recorder, run_id, kinds=kinds, times=times, nodes=nodes, devices=devices, sizes=sizes
    )


def _extend_memory(
    recorder: Recorder,
    run_id: int,
    kinds: np.ndarray,
    times: np.ndarray,
    nodes: np.ndarray,
    devices: np.ndarray,
    sizes: np.ndarray,
) -> None:
    recorder.extend(
        len(kinds),
        {
            "kind": kinds,
            "t0": times,
            "t1": times,
            "node": nodes,
            "device": devices,
            "stream": devices,
            "bytes": sizes,
            "source": int(TimingSource.NONE),
            "run": run_id,
            "peer": -1,
        },
    )


def record_card_memory(
    recorder: Recorder, readings: Sequence[tuple[int, int, int]], run_id: int
) -> None:
    """A run's card readings (host clock ns, device id, used bytes) as CARD_MEMORY events."""
    if not readings:
        return
    times, devices, used = zip(*readings)
    recorder.extend(
        len(readings),
        {
            "kind": int(EventKind.CARD_MEMORY),
            "t0": times,
            "t1": times,
            "node": -1,
            "device": devices,
            "stream": devices,
            "bytes": used,
            "source": _CLOCK,
            "run": run_id,
            "peer": -1,
        },
    )


def run_event(recorder: Recorder, t0: int, t1: int, run_id: int, source: int) -> None:
    """The run's own event, as a chunk of scalars (no row buffer to flush on the hot path)."""
    recorder.extend(
        1,
        {
            "kind": _RUN_KIND,
            "t0": t0,
            "t1": t1,
            "node": -1,
            "device": -1,
            "stream": -1,
            "bytes": 0,
            "source": source,
            "run": run_id,
            "peer": -1,
        },
    )


def device_record(device: Device, index: int) -> dict[str, Any]:
    physical = device.physical
    return {
        "id": index,
        "name": device.name,
        "type": device.device_type,
        "index": device.index,
        "parent": physical.name,
        "kind": device.kind,
        "profile": physical.profile.name if physical.profile else None,
        "description": physical.description,
        "memory_limit": device.memory_limit,
    }
