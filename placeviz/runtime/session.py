"""``Session``: places the graph on this session's devices, compiles plans and runs them."""

from __future__ import annotations

import bisect
import contextlib
import itertools
import threading
import time
import traceback
import weakref
from collections import deque
from collections.abc import Callable, Container, Mapping
from typing import Any, NamedTuple

import numpy as np

from placeviz.devices import context as device_context
from placeviz.devices.context import Device
from placeviz.errors import InvalidArgumentError, NotFoundError
from placeviz.events.kinds import EventKind
from placeviz.events.recorder import COLUMNS, DTYPES, Recorder
from placeviz.events.trace import Trace
from placeviz.graph.core import (
    Graph,
    Operation,
    Tensor,
    get_default_graph,
    session_stack,
    tensor_bytes,
)
from placeviz.placement.placer import Placement, PlacementFailure, SimplePlacer
from placeviz.runtime import placement_log
from placeviz.runtime.config import ConfigProto, RunMetadata, RunOptions
from placeviz.runtime.executor import CompiledPlan, RunFailure
from placeviz.runtime.memory import Resident, RunTimeCheck, check_fits, lifetimes
from placeviz.runtime.plan import build_plan
from placeviz.runtime.state import SessionState
from placeviz.runtime.tracing import PlanColumns, device_record, record_run
from placeviz.runtime.workers import StreamWorkers

_MAX_CACHED_PLANS = 128
_MAX_RUNS_KEPT = 100_000
_GROWTH_CHUNK = 2 << 20  # allow_growth grows the reservation in chunks of this size
_clock = time.perf_counter_ns


# Called with every new session (the %%placement magic collects a cell's sessions).
observers: list[Callable[[Session], None]] = []


class Session:
    """A TensorFlow 1 session: ``with pv.Session(config=...) as sess: sess.run(fetches)``.

    Placements stick: each op is placed the first time a run happens after it was created (the
    whole graph at once, as TensorFlow's placer does) and keeps its device for the session's life.
    """

    def __init__(
        self, target: str = "", graph: Graph | None = None, config: ConfigProto | None = None
    ) -> None:
        if target not in ("", "local"):
            raise ValueError(
                f"Session target {target!r} names a server; placeviz runs sessions in this "
                "process only (clusters are not supported yet). Use pv.Session()."
            )
        self.graph = graph if graph is not None else get_default_graph()
        self.config = config or ConfigProto()
        # The devices a session runs on are those of the context it was made in (a magic's cell
        # may have its own), also when it is used or traced after that context has ended.
        ctx = self._context = device_context.context()
        self._devices = _session_devices(ctx.devices(), self.config)
        self._soft = self.config.allow_soft_placement or ctx.soft_placement
        self._log = self._logs_placement(ctx)
        self._placer = SimplePlacer(self._devices, soft=self._soft)
        self._done_ops: Container[int] = frozenset()  # eager mode: ops that already ran
        self._placement = Placement()
        self._failures: dict[int, PlacementFailure] = {}
        self._placed_version = -1
        self._state = SessionState()
        # inter_op_parallelism_threads=1 runs every device's ops on the calling thread.
        parallel = self.config.inter_op_parallelism_threads != 1
        self._workers = StreamWorkers() if parallel else None
        if self._workers is not None:
            # A session dropped without close() still stops its threads.
            weakref.finalize(self, self._workers.close)
        self._plans: dict[Any, tuple[CompiledPlan, PlanColumns]] = {}
        self._device_ids = {device.name: i for i, device in enumerate(self._devices)}
        self._recorder = Recorder()
        self._runs: deque[dict[str, Any]] = deque(maxlen=_MAX_RUNS_KEPT)
        self._run_cursors: deque[int] = deque(maxlen=_MAX_RUNS_KEPT)  # recorder cursor per run
        # Every placement event, kept here too: a trace shows all placements even after the
        # recorder rolled their events over. Per placement: its cursor and the count so far.
        self._placement_columns = {name: np.zeros(0, DTYPES[name]) for name in COLUMNS}
        self._placement_cursors: list[int] = []
        self._placement_counts: list[int] = []
        self._run_count = 0
        self._peak_bytes: dict[str, int] = {}  # per device, the largest plan's peak so far
        self._threadpools: Any = None  # threadpoolctl's controller, made when first needed
        self._closed = False
        # One run at a time: a plan's clocks, the recorder and the run records are the session's
        # own, and a trace whose runs interleave could not say which step belongs to which run.
        self._turn = threading.RLock()
        self._in_flight: tuple[_RunStart, tuple[CompiledPlan, PlanColumns]] | None = None
        # The trace level of runs given no RunOptions (the %%placement magic traces fully, so
        # its inspector has memory to show).
        self.trace_level: int = RunOptions.NO_TRACE
        self._default_contexts: list[Any] = []
        if self._log:
            placement_log.write(placement_log.device_mapping(self._devices))
        for observe in observers:
            observe(self)

    def _logs_placement(self, ctx: device_context.DeviceContext) -> bool:
        return self.config.log_device_placement or ctx.log_device_placement

    # -- what the session knows ----------------------------------------------------------------
    @property
    def placement(self) -> Placement:
        """Op name -> assigned device; ``sess.placement.explain(name)`` says why."""
        return self._placement

    @property
    def last_run(self) -> dict[str, Any] | None:
        """The record of the latest run (id, t0, t1, status, error, fetches), or None."""
        return self._runs[-1] if self._runs else None

    @property
    def run_in_flight(self) -> int | None:
        """The id of the run going on now, if any (cheap: ``progress`` says how far it got)."""
        flight = self._in_flight
        return None if flight is None else flight[0].id

    def progress(self) -> dict[str, Any] | None:
        """The run in flight, if any: its id and the node ids of its ops waiting, running and
        done, read from the plan's step clocks (for a live view, from another thread; the run
        itself does nothing for it). Steps stamp their end; a parallel run also their start."""
        flight = self._in_flight
        if flight is None:
            return None
        run, (compiled, columns) = flight
        ops = columns.clocked_ops
        done = np.asarray(compiled.ends) >= run.t0
        starts = compiled.starts
        if starts is not None and compiled.parallel:
            running = (np.asarray(starts) >= run.t0) & ~done & ops
        else:  # one stream: the first op step not done yet is the one running
            running = np.zeros_like(done)
            left = np.flatnonzero(ops & ~done)
            if len(left):
                running[left[0]] = True
        nodes = columns.nodes
        return {
            "run": run.id,
            "waiting": nodes[ops & ~done & ~running].tolist(),
            "running": nodes[running].tolist(),
            "done": nodes[ops & done].tolist(),
        }

    def latest_runs(self, count: int) -> list[dict[str, Any]]:
        """Records of the newest ``count`` finished runs, oldest first."""
        return list(itertools.islice(reversed(self._runs), count))[::-1]

    def runs_since(self, run_id: int) -> list[dict[str, Any]]:
        """Records of the finished runs with ids from ``run_id`` on (read from the newest end)."""
        newer = []
        for record in reversed(self._runs):
            if record["id"] < run_id:
                break
            newer.append(record)
        return newer[::-1]

    @property
    def devices(self) -> list[Device]:
        return list(self._devices)

    def list_devices(self) -> list[Device]:
        return list(self._devices)

    # -- running -------------------------------------------------------------------------------
    @property
    def recorder(self) -> Recorder:
        """Every event of this session's runs (subscribe to stream them)."""
        return self._recorder

    def run(
        self,
        fetches: Any,
        feed_dict: Mapping[Any, Any] | None = None,
        options: RunOptions | None = None,
        run_metadata: RunMetadata | None = None,
    ) -> Any:
        """Compute ``fetches`` (a tensor, op, name, or a list/tuple/dict nesting of them).

        With ``options=pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)`` and ``run_metadata``,
        ``run_metadata.trace`` receives the run's Trace (any run's can be had from ``trace()``).
        Runs called from several threads take turns (a run's devices still work in parallel).
        """
        with self._turn:
            return self._run(fetches, feed_dict, options, run_metadata)

    def _run(
        self,
        fetches: Any,
        feed_dict: Mapping[Any, Any] | None,
        options: RunOptions | None,
        run_metadata: RunMetadata | None,
    ) -> Any:
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        level = self.trace_level if options is None else options.trace_level
        full = level >= RunOptions.FULL_TRACE
        if (
            not feed_dict
            and not full
            and type(fetches) is Tensor
            and self._placed_version == self.graph.version
        ):
            prepared = self._plans.get(fetches)
            if prepared is not None:
                return self._execute(prepared, (), run_metadata)[0]
        elements, rebuild = _flatten_fetches(fetches, self.graph)
        unique = list(dict.fromkeys(elements))
        feeds, values = self._feeds(feed_dict or {})
        key: Any = unique[0] if len(unique) == 1 and not feeds else (tuple(unique), tuple(feeds))
        if full:
            key = ("full trace", key)
        if self._placed_version != self.graph.version:
            self._place()
        prepared = self._plans.get(key)
        if prepared is None:
            prepared = self._compile(unique, feeds, key, full)
        results = self._execute(prepared, values, run_metadata)
        by_element = dict(zip(unique, results))
        return rebuild([by_element[e] for e in elements])

    def _execute(
        self,
        prepared: tuple[CompiledPlan, PlanColumns],
        values: Any,
        run_metadata: RunMetadata | None,
    ) -> tuple[Any, ...]:
        """Run a compiled plan and record it, also when it fails (traces are always complete)."""
        compiled = prepared[0]
        run = _RunStart(self._run_count, self._recorder.total, _clock())
        self._run_count += 1
        failure: RunFailure | None = None
        self._in_flight = (run, prepared)
        try:
            with self._intra_op_limit():
                results = compiled.run(values)
        except RunFailure as caught:
            failure = caught
        except KeyboardInterrupt:
            self._finish_run(prepared, run, compiled.interrupted_step, "KeyboardInterrupt")
            raise
        finally:
            self._in_flight = None
        if failure is None:
            self._finish_run(prepared, run, None, None)
        else:
            self._finish_run(prepared, run, failure.failed_step, str(failure.error))
        if run_metadata is not None:
            run_metadata.trace = self.trace(runs=1)
        if failure is not None:
            # Raised outside the handler, so the error keeps no frame of the run (and no
            # tensor) alive through its __context__.
            traceback.clear_frames(failure.__traceback__)
            raise failure.error from failure.__cause__
        return results

    def _intra_op_limit(self) -> contextlib.AbstractContextManager[Any]:
        """``intra_op_parallelism_threads``: the threads a multi-threaded kernel (BLAS) may use."""
        threads = self.config.intra_op_parallelism_threads
        if threads <= 0:
            return contextlib.nullcontext()
        if self._threadpools is None:
            from threadpoolctl import ThreadpoolController

            self._threadpools = ThreadpoolController()
        return self._threadpools.limit(limits=threads)

    def _finish_run(
        self,
        prepared: tuple[CompiledPlan, PlanColumns],
        run: _RunStart,
        failed_step: int | None,
        error: str | None,
    ) -> None:
        t_end = _clock()
        compiled, columns = prepared
        record_run(self._recorder, compiled, columns, run.id, run.t0, t_end, failed_step)
        self._run_cursors.append(run.since)
        self._runs.append(
            {
                "id": run.id,
                "t0": run.t0,
                "t1": t_end,
                "status": "ok" if error is None else "error",
                "error": error,
                "fetches": list(columns.fetch_names),
            }
        )
        self._recorder.publish(run.since, run.id)

    def _compile(
        self, fetches: list[Any], feeds: list[Tensor], key: Any, full: bool
    ) -> tuple[CompiledPlan, PlanColumns]:
        plan = build_plan(fetches, feeds, self._placement, self._failures, self._done_ops)
        dynamic = _sizes_known_only_at_run_time_on_gpus(plan)
        compiled = CompiledPlan(
            plan,
            self._state,
            full_trace=full,
            workers=self._workers,
            check_dynamic_memory=dynamic,
        )
        held = lifetimes(compiled.steps, plan.fetches)
        resident = self._variables_resident()
        for device, peak in check_fits(compiled.steps, held, resident).items():
            self._peak_bytes[device] = max(self._peak_bytes.get(device, 0), peak)
        if dynamic:
            compiled.set_memory_check(
                RunTimeCheck(compiled.steps, held, resident, compiled.byte_offsets)
            )
        prepared = (compiled, PlanColumns(compiled, held, self._device_ids))
        if len(self._plans) >= _MAX_CACHED_PLANS:
            self._plans.pop(next(iter(self._plans)))
        self._plans[key] = prepared
        return prepared

    def trace(self, runs: int | None = 1) -> Trace:
        """A Trace of the last ``runs`` runs (None: every event still recorded)."""
        count = len(self._runs)
        # Indexing from the end: a deque reaches its last items in constant time.
        kept = (
            [self._runs[i] for i in range(max(count - runs, 0), count)] if runs else [*self._runs]
        )
        # The kept runs' events (all still held when runs is None), and every placement made
        # before them (at whichever run placed the op).
        batch = self._recorder.batch(self._run_cursors[-len(kept)] if kept and runs else 0)
        earlier = self._placements_before(batch.start)
        recent = batch.columns
        columns = {name: np.concatenate((earlier[name], recent[name])) for name in COLUMNS}
        return Trace(**self.tables(runs=kept), events=columns)

    def tables(self, runs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The document's tables (devices, nodes, edges, runs) as they stand now, without events:
        what a live view needs whenever the graph, its placement or the run list changed."""
        return {
            "devices": [
                {**device_record(d, i), "reserved": self.reserved_bytes(d)}
                for i, d in enumerate(self._devices)
            ],
            "nodes": self._node_records(),
            "edges": self._edge_records(),
            "runs": [*self._runs] if runs is None else runs,
        }

    def reserved_bytes(self, device: Device) -> int:
        """Memory the runtime holds on ``device``, as TensorFlow's allocator would.

        By default nearly all of a GPU is mapped up front (its limit: the card, its logical
        share, or ``per_process_gpu_memory_fraction`` of it). With ``allow_growth`` (or
        ``set_memory_growth``) it grows to the largest peak so far in 2 MiB chunks and is
        never given back. The host's memory is not reserved.
        """
        if device.device_type != "GPU":
            return self._peak_bytes.get(device.name, 0)
        growth = self.config.gpu_options.allow_growth or (
            not device.logical and self._context.get_memory_growth(device.physical)
        )
        if not growth:
            return device.memory_limit
        peak = self._peak_bytes.get(device.name, 0)
        return min(-(-peak // _GROWTH_CHUNK) * _GROWTH_CHUNK, device.memory_limit)

    def _placements_before(self, cursor: int) -> dict[str, np.ndarray]:
        """The placement events recorded before ``cursor``."""
        taken = bisect.bisect_left(self._placement_cursors, cursor)
        count = self._placement_counts[taken - 1] if taken else 0
        return {name: column[:count] for name, column in self._placement_columns.items()}

    def _node_records(self) -> list[dict[str, Any]]:
        records = []
        entries = self._placement._entries
        for op in self.graph._ops:
            entry = entries.get(op.name)
            reason = None
            if entry is not None:
                r = entry[1]
                reason = {"kind": r.kind, "text": r.text, "anchor": r.anchor}
            sizes = [tensor_bytes(t) for t in op.outputs]
            records.append(
                {
                    "id": op._id,
                    "name": op.name,
                    "type": op.type,
                    "scope": op.name.rpartition("/")[0],
                    "requested": op.device,
                    "device": self._device_ids[entry[0].name] if entry is not None else None,
                    "reason": reason,
                    "shapes": [
                        None if t.shape.dims is None else list(t.shape.dims) for t in op.outputs
                    ],
                    "dtype": op.dtype.name if op.dtype is not None else None,
                    "bytes_out": None if None in sizes else sum(s or 0 for s in sizes),
                    "source": op.source,
                }
            )
        return records

    def _edge_records(self) -> list[dict[str, Any]]:
        entries = self._placement._entries
        edges = []
        for op in self.graph._ops:
            mine = entries.get(op.name)
            for tensor in op.inputs:
                theirs = entries.get(tensor.op.name)
                crosses = mine is not None and theirs is not None and mine[0].name != theirs[0].name
                edges.append(
                    {
                        "src": tensor.op._id,
                        "dst": op._id,
                        "kind": "data",
                        "bytes": tensor_bytes(tensor),
                        "crosses": crosses,
                    }
                )
            edges.extend(
                {"src": c._id, "dst": op._id, "kind": "control", "bytes": None, "crosses": False}
                for c in op.control_inputs
            )
        return edges

    def _variables_resident(self) -> list[Resident]:
        """Every placed variable holds its value on its device for the session's life."""
        resident = []
        for op in self.graph._ops:
            if op.op_def.ref_output and op.name in self._placement:
                size = tensor_bytes(op.outputs[0])
                if size:
                    resident.append(Resident(self._placement.device(op.name), size, op))
        return resident

    def _place(self) -> None:
        self._context.initialize()
        decisions, self._failures = self._placer.place(self.graph._ops, self._placement)
        now = _clock()
        since = self._recorder.total
        for op, device, reason in decisions:
            self._placement._entries[op.name] = (device, reason)
        count = len(decisions)
        devices = [self._device_ids[device.name] for _, device, _ in decisions]
        placed = {
            "kind": np.full(count, int(EventKind.PLACEMENT), DTYPES["kind"]),
            "t0": np.full(count, now, DTYPES["t0"]),
            "t1": np.full(count, now, DTYPES["t1"]),
            "node": np.array([op._id for op, _, _ in decisions], DTYPES["node"]),
            "device": np.array(devices, DTYPES["device"]),
            "stream": np.full(count, -1, DTYPES["stream"]),
            "bytes": np.zeros(count, DTYPES["bytes"]),
            "source": np.zeros(count, DTYPES["source"]),
            "run": np.full(count, -1, DTYPES["run"]),
            "peer": np.full(count, -1, DTYPES["peer"]),
        }
        if count:
            self._placement_columns = {
                name: np.concatenate((self._placement_columns[name], placed[name]))
                for name in COLUMNS
            }
            self._placement_cursors.append(since)
            self._placement_counts.append(len(self._placement_columns["kind"]))
        self._recorder.extend(count, placed)
        self._recorder.publish(since)
        self._placed_version = self.graph.version
        if self._log and decisions:
            lines = placement_log.ignored_requests(decisions)
            lines += placement_log.placement_lines((op, device) for op, device, _ in decisions)
            placement_log.write("\n".join(lines))

    def _feeds(self, feed_dict: Mapping[Any, Any]) -> tuple[list[Tensor], list[Any]]:
        pairs = []
        for key, value in feed_dict.items():
            tensor = _resolve(key, self.graph, "feed")
            if not isinstance(tensor, Tensor):
                raise TypeError(f"Cannot feed Operation '{tensor.name}'; feed one of its tensors.")
            pairs.append((tensor, _feed_value(tensor, value)))
        pairs.sort(key=lambda p: id(p[0]))
        return [t for t, _ in pairs], [v for _, v in pairs]

    # -- lifetime ------------------------------------------------------------------------------
    def close(self) -> None:
        self._closed = True
        self._plans.clear()
        if self._workers is not None:
            self._workers.close()

    def as_default(self) -> _DefaultSession:
        return _DefaultSession(self)

    def __enter__(self) -> Session:
        context = self.as_default()
        context.__enter__()
        self._default_contexts.append(context)
        return self

    def __exit__(self, *exc: object) -> None:
        self._default_contexts.pop().__exit__(*exc)
        self.close()

    def __repr__(self) -> str:
        return f"<pv.Session devices={[d.name for d in self._devices]}>"


class _RunStart(NamedTuple):
    id: int
    since: int  # the recorder's cursor when the run began
    t0: int


class _DefaultSession:
    """``with sess.as_default():`` makes ``sess`` and its graph the defaults."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._graph_context: Any = None

    def __enter__(self) -> Session:
        session_stack().append(self._session)
        self._graph_context = self._session.graph.as_default()
        self._graph_context.__enter__()
        return self._session

    def __exit__(self, *exc: object) -> None:
        self._graph_context.__exit__(*exc)
        session_stack().pop()


def _session_devices(devices: list[Device], config: ConfigProto) -> list[Device]:
    """Apply ``device_count``, ``visible_device_list`` and the GPU memory fraction."""
    options = config.gpu_options
    gpus = [d for d in devices if d.device_type == "GPU"]
    others = [d for d in devices if d.device_type != "GPU"]
    if options.visible_device_list:
        order = []
        for item in options.visible_device_list.split(","):
            item = item.strip()
            if not item.isdigit():
                raise ValueError(f"Invalid visible_device_list entry {item!r}")
            if int(item) in order:
                raise ValueError(
                    f"visible_device_list contained a duplicate entry: "
                    f"{options.visible_device_list}"
                )
            order.append(int(item))
        physical = list(dict.fromkeys(d.physical.index for d in gpus))
        for index in order:
            if index >= len(physical):
                raise ValueError(
                    f"visible_device_list names GPU {index}, but this process sees "
                    f"{len(physical)} GPU(s)"
                )
        gpus = [d for index in order for d in gpus if d.physical.index == physical[index]]
    renumbered = []
    for i, device in enumerate(gpus):
        limit = device.memory_limit
        # As in TensorFlow, a memory limit set by a logical device configuration wins over the
        # fraction; only devices without one (limit = the whole card) take the fraction.
        if (
            options.per_process_gpu_memory_fraction
            and device.memory_limit == device.physical.memory_bytes
        ):
            limit = int(device.physical.memory_bytes * options.per_process_gpu_memory_fraction)
        renumbered.append(device.with_spec(device.spec.replace(device_index=i), limit))
    result = others + renumbered
    # As TensorFlow, keys are exact device types ('cpu' counts nothing), and device_count CPU: N
    # makes N CPU devices, CPU:0..N-1, all on the host.
    for device_type, count in config.device_count.items():
        of_type = [d for d in result if d.device_type == device_type]
        if device_type == "CPU" and of_type:
            if count < 1:
                raise NotFoundError("No CPU devices are available in this process")
            host = of_type[0]
            of_type = [host.with_spec(host.spec.replace(device_index=i)) for i in range(count)]
        kept = of_type[: max(count, 0)]
        rest = [d for d in result if d.device_type != device_type]
        at = next((i for i, d in enumerate(result) if d.device_type == device_type), len(rest))
        result = rest[:at] + kept + rest[at:]
    return result


def _sizes_known_only_at_run_time_on_gpus(plan: Any) -> bool:
    """Whether a GPU in the plan makes a tensor whose size static shapes do not give."""
    return any(
        plan.devices[op._id].device_type != "CPU"
        and not op.op_def.ref_output
        and any(tensor_bytes(t) is None for t in op.outputs)
        for op in plan.ops
    )


def _resolve(item: Any, graph: Graph, what: str) -> Tensor | Operation:
    if isinstance(item, str):
        try:
            element = graph.as_graph_element(item)
        except (KeyError, ValueError) as exc:
            raise InvalidArgumentError(f"Cannot interpret {what} {item!r}: {exc}") from None
        return element
    if isinstance(item, Tensor | Operation):
        element = item
    elif hasattr(item, "_as_graph_element"):
        element = item._as_graph_element()
    else:
        raise TypeError(
            f"{what.capitalize()} argument {item!r} has invalid type {type(item).__name__}; "
            "it must be a Tensor, an Operation, a Variable or a name"
        )
    if element.graph is not graph:
        op = element.op if isinstance(element, Tensor) else element
        raise InvalidArgumentError(
            f"{what.capitalize()} {element.name!r} (created at {op.source}) is not an element of "
            "this session's graph: it belongs to another graph. Build it inside "
            "`with sess.graph.as_default():` or create the session with graph=.",
            op=op,
        )
    return element


def _feed_value(tensor: Tensor, value: Any) -> Any:
    try:
        array = np.array(value, dtype=tensor.dtype.np)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(
            f"Cannot feed {value!r} to Tensor '{tensor.name}' of dtype {tensor.dtype.name}: {exc}",
            op=tensor.op,
        ) from None
    if not tensor.shape.is_compatible_with(array.shape):
        raise InvalidArgumentError(
            f"Cannot feed value of shape {array.shape} for Tensor '{tensor.name}' (created at "
            f"{tensor.op.source}), which has shape {tensor.shape}",
            op=tensor.op,
        )
    return array


def _flatten_fetches(fetches: Any, graph: Graph) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """Flatten a nested fetch structure; return the elements and how to rebuild the values."""
    if fetches is None:
        raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
    if isinstance(fetches, list | tuple):
        parts = [_flatten_fetches(f, graph) for f in fetches]
        elements = [e for part, _ in parts for e in part]
        sizes = [len(part) for part, _ in parts]
        is_namedtuple = isinstance(fetches, tuple) and hasattr(fetches, "_fields")
        kind = type(fetches)

        def rebuild(values: list[Any]) -> Any:
            out, start = [], 0
            for (_, sub), size in zip(parts, sizes):
                out.append(sub(values[start : start + size]))
                start += size
            if is_namedtuple:
                return kind(*out)
            return out if kind is list else tuple(out)

        return elements, rebuild
    if isinstance(fetches, Mapping):
        keys = list(fetches)
        inner = _flatten_fetches([fetches[k] for k in keys], graph)

        def rebuild_dict(values: list[Any]) -> Any:
            return dict(zip(keys, inner[1](values)))

        return inner[0], rebuild_dict
    element = _resolve(fetches, graph, "fetch")
    return [element], _first


def _first(values: list[Any]) -> Any:
    return values[0]
