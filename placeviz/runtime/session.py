"""``Session``: the TensorFlow 1 API over four parts, each with one job.

- ``PlacementState`` (placement_state.py): where each op runs, decided once per op;
- ``PlanCache`` (plan_cache.py): compiled plans, checked to fit before they run;
- ``RunLog`` (run_log.py): run records, their events and every placement event;
- ``document_tables`` (document_tables.py): the tables a trace and a live view carry.

The session itself resolves fetches and feeds, takes turns between threads, and runs a plan.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
import traceback
import weakref
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from typing import Any

from placeviz.devices import context as device_context
from placeviz.devices.context import Device
from placeviz.errors import (
    NotFoundError,
)
from placeviz.events.memory_use import peak_bytes
from placeviz.events.recorder import EventBatch, Recorder
from placeviz.events.trace import Trace
from placeviz.graph.cancellation import Cancellation
from placeviz.graph.core import Graph, Operation, Tensor, get_default_graph, session_stack
from placeviz.placement.placer import Placement
from placeviz.runtime import placement_log
from placeviz.runtime.config import ConfigProto, RunMetadata, RunOptions
from placeviz.runtime.document_tables import document_tables
from placeviz.runtime.dry_run import (
    DryState,
    fed_shape,
    known_value,
)
from placeviz.runtime.executor import RunFailure
from placeviz.runtime.fetches import feed_value, flatten_fetches, resolve, value_key
from placeviz.runtime.host_memory import keep_freed_host_memory
from placeviz.runtime.placement_state import PlacementState
from placeviz.runtime.plan_cache import PlanCache
from placeviz.runtime.remote import RemoteEvents, RemoteRunFailed, RemoteRunner, open_runner
from placeviz.runtime.run_log import Prepared, RunLog, clock
from placeviz.runtime.state import SessionState, host_copy
from placeviz.runtime.what_if import WhatIf
from placeviz.runtime.workers import StreamWorkers

_GROWTH_CHUNK = 2 << 20  # allow_growth grows the reservation in chunks of this size


# Called with every new session made in the context (thread, task) that set them: the %%placement
# magic collects its cell's sessions, not those of a cell running beside it.
observers: contextvars.ContextVar[tuple[Callable[[Session], None], ...]] = contextvars.ContextVar(
    "placeviz_session_observers", default=()
)
# The placer of every session made in the context, whatever its config says: the placer
# %%placement --compare runs the cell with.
placer_override: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "placeviz_placer_override", default=None
)
# Whether every run of sessions made in the context is dry, whatever their config says: a
# %%placement --dry-run cell's.
dry_run_override: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "placeviz_dry_run_override", default=False
)
# The target of sessions made without one: a %%placement --cluster cell's cluster.
default_target: contextvars.ContextVar[str] = contextvars.ContextVar(
    "placeviz_default_target", default=""
)


def _named(error: BaseException) -> str:
    """A run's error as its record shows it (an interrupt's words are empty: its type's name)."""
    return str(error) or type(error).__name__


class Session:
    """A TensorFlow 1 session: ``with pv.Session(config=...) as sess: sess.run(fetches)``.

    Placements stick: each op is placed the first time a run happens after it was created (the
    whole graph at once, as TensorFlow's placer does) and keeps its device for the session's life.
    """

    # Whether fetched values stay on their devices after a run (eager mode keeps them).
    keeps_fetched_values = False

    def __init__(
        self,
        target: str = "",
        graph: Graph | None = None,
        config: ConfigProto | None = None,
        *,
        _state: SessionState | None = None,
    ) -> None:
        """``_state``: variables shared with other sessions (a cluster task's, by name)."""
        keep_freed_host_memory()
        self.graph = graph if graph is not None else get_default_graph()
        _require_type("config", config, ConfigProto)
        self.config = config or ConfigProto()
        # The devices a session runs on are those of the context it was made in (a magic's cell
        # may have its own), also when it is used or traced after that context has ended; a
        # session on a target runs on every task of the target's cluster.
        ctx = self._context = device_context.context()
        self._remote: RemoteRunner | None = None
        local = missing_tasks = None
        target = target or default_target.get()
        if target not in ("", "local"):
            self._remote = open_runner(target)
            self._devices = list(self._remote.devices)
            local, missing_tasks = self._remote.local_task, self._remote.missing_tasks
        else:
            self._devices = _session_devices(ctx.devices(), self.config)
        device_ids = self._device_ids = {device.name: i for i, device in enumerate(self._devices)}
        log = self._logs_placement(ctx)
        soft = self.config.allow_soft_placement or ctx.soft_placement
        self._placing = PlacementState(
            self.graph,
            self._devices,
            device_ids,
            soft,
            log,
            local,
            placer_override.get() or self.config.placer,
            missing_tasks,
        )
        self._done_ops: Container[int] = frozenset()  # eager mode: ops that already ran
        self._state = _state if _state is not None else SessionState()
        # Dry runs: every run's (ConfigProto.dry_run), and what they assigned to variables.
        self._dry_runs = self.config.dry_run or dry_run_override.get()
        self._dry_state = DryState(self._state)
        # inter_op_parallelism_threads=1 runs every device's ops on the calling thread.
        parallel = self.config.inter_op_parallelism_threads != 1
        self._workers = StreamWorkers() if parallel else None
        if self._workers is not None:
            # A session dropped without close() still stops its threads.
            weakref.finalize(self, self._workers.close)
        # Real GPUs: a stream and a memory pool per logical GPU, and the cards' own readings
        # (none for a session whose runs are all dry: it never touches a card).
        self._gpus: Any = None
        self._card_sampler: Any = None
        cards = any(d.backend == "cupy" for d in self._devices)
        if self._remote is None and not self._dry_runs and cards:
            from placeviz.runtime.backends.cuda_runtime import CudaRuntime
            from placeviz.runtime.backends.nvml import CardSampler

            self._gpus = CudaRuntime(self._devices, lambda d: not self._grows(d))
            self._card_sampler = CardSampler.for_devices(self._devices)
            if self._card_sampler is not None:  # a session dropped without close() stops it too
                weakref.finalize(self, self._card_sampler.close)
        self._plans = PlanCache(
            self._state, self._workers, device_ids, self._gpus, self.keeps_fetched_values
        )
        self._log = RunLog()
        self._threadpools: Any = None  # threadpoolctl's controller, made when first needed
        self._closed = False
        # One run at a time: a plan's clocks, the recorder and the run records are the session's
        # own, and a trace whose runs interleave could not say which step belongs to which run.
        self._turn = threading.RLock()
        self._cancellation = Cancellation()  # close() ends runs whose kernels wait
        # The trace level of runs given no RunOptions (the %%placement magic traces fully, so
        # its inspector has memory to show).
        self.trace_level: int = RunOptions.NO_TRACE
        self._default_contexts: list[Any] = []
        if log:
            placement_log.write(placement_log.device_mapping(self._devices))
        for observe in observers.get():
            observe(self)

    def _logs_placement(self, ctx: device_context.DeviceContext) -> bool:
        return self.config.log_device_placement or ctx.log_device_placement

    # -- what the session knows ----------------------------------------------------------------
    @property
    def placement(self) -> Placement:
        """Op name -> assigned device; ``sess.placement.explain(name)`` says why."""
        return self._placing.placement

    @property
    def last_run(self) -> dict[str, Any] | None:
        """The record of the latest run (id, t0, t1, status, error, fetches), or None."""
        return self._log.last

    @property
    def run_in_flight(self) -> int | None:
        """The id of the run going on now, if any (cheap: ``progress`` says how far it got)."""
        return self._log.in_flight

    def progress(self) -> dict[str, Any] | None:
        """The run in flight, if any: its id and the node ids of its ops waiting, running and
        done (for a live view, from another thread; the run itself does nothing for it)."""
        return self._log.progress()

    def latest_runs(self, count: int) -> list[dict[str, Any]]:
        """Records of the newest ``count`` finished runs, oldest first."""
        return self._log.latest(count)

    def runs_since(self, run_id: int) -> list[dict[str, Any]]:
        """Records of the finished runs with ids from ``run_id`` on."""
        return self._log.since(run_id)

    @property
    def devices(self) -> list[Device]:
        return list(self._devices)

    def list_devices(self) -> list[Device]:
        return list(self._devices)

    # -- running -------------------------------------------------------------------------------
    @property
    def recorder(self) -> Recorder:
        """Every event of this session's runs (subscribe to stream them)."""
        return self._log.recorder

    def last_run_events(self) -> EventBatch:
        """The events of the newest finished run, columns not yet built (a cluster task reports
        some of them)."""
        return self._log.last_run_batch()

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
        with self._turn, self._cancellation:
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
        if options is not None or run_metadata is not None:
            _require_type("options", options, RunOptions)
            _require_type("run_metadata", run_metadata, RunMetadata)
        level = self.trace_level if options is None else options.trace_level
        full = level >= RunOptions.FULL_TRACE
        dry = self._dry_runs or (options is not None and options.dry_run)
        if (
            not feed_dict
            and not full
            and not dry
            and type(fetches) is Tensor
            and self._placing.current
        ):
            prepared = self._plans.get(fetches)
            if prepared is not None:
                return self._execute(prepared, (), run_metadata)[0]
        elements, rebuild = flatten_fetches(fetches, self.graph)
        unique = list(dict.fromkeys(elements))
        feeds, values, known = self._feeds(feed_dict or {}, dry)
        fed = dict(zip(feeds, values))
        if all(type(e) is Tensor and e in fed for e in unique):
            # As TensorFlow: nothing to compute (no fetches, or every one fed), nothing placed
            return rebuild([host_copy(fed[e]) for e in elements])
        key = _plan_key(unique, feeds)
        if full:
            key = ("full trace", key)
        if dry:  # a dry plan's shapes are its feeds' (and its fed shape-like values')
            key = ("dry", key, tuple(v.shape for v in values), value_key(known))
        if not self._placing.current:
            self._place(fed, [e.op if isinstance(e, Tensor) else e for e in unique])
        if self._remote is not None and not dry:  # a dry run computes nothing, so runs here
            results = self._run_remote(key, unique, feeds, values, full)
            if run_metadata is not None:
                run_metadata.trace = self.trace(runs=1)
            by_element = dict(zip(unique, results))
            return rebuild([by_element[e] for e in elements])
        prepared = self._prepared(key, unique, feeds, full, values if dry else None, known)
        results = self._execute(prepared, values, run_metadata)
        by_element = dict(zip(unique, results))
        return rebuild([by_element[e] for e in elements])

    def _prepared(
        self,
        key: Any,
        fetches: list[Any],
        feeds: list[Tensor],
        full: bool,
        dry_values: list[Any] | None = None,
        known: tuple[Any, ...] = (),
    ) -> Prepared:
        """The compiled plan of ``key``, compiled now if it is not cached (a dry one for the
        shapes of ``dry_values``)."""
        prepared = self._plans.get(key)
        if prepared is None:
            prepared = self._plans.compile(
                key,
                fetches,
                feeds,
                self._placing.placement,
                self._placing.failures,
                self._done_ops,
                full,
                self._placing.resident(),
                self._dry_state if dry_values is not None else None,
                dry_values or (),
                known,
            )
        return prepared

    def _place(
        self, fed: Mapping[Tensor, Any] | None = None, fetched: Sequence[Operation] = ()
    ) -> None:
        self._context.initialize()
        if self._placing.update(self._log, fed, fetched):
            self._plans.clear()  # a control input was added to an op that plans may hold

    def _execute(
        self, prepared: Prepared, values: Any, run_metadata: RunMetadata | None
    ) -> tuple[Any, ...]:
        """Run a compiled plan and record it, also when it fails (traces are always complete)."""
        compiled = prepared[0]
        if compiled.full_trace:
            self._placing.record_variables(self._log)
        run = self._log.start(prepared)
        failure: RunFailure | None = None
        sampler = self._card_sampler
        if sampler is not None:
            sampler.start()
        try:
            with self._intra_op_limit():
                results = compiled.run(values)
        except RunFailure as caught:
            failure = caught
        except KeyboardInterrupt:
            readings = sampler.stop() if sampler is not None else ()
            self._log.finish(
                prepared, run, compiled.interrupted_step, "KeyboardInterrupt", values, readings
            )
            raise
        readings = sampler.stop() if sampler is not None else ()
        if failure is None:
            self._log.finish(prepared, run, None, None, values, readings)
        else:
            self._log.finish(
                prepared, run, failure.failed_step, str(failure.error), values, readings
            )
        if run_metadata is not None:
            run_metadata.trace = self.trace(runs=1)
        if failure is not None:
            # Raised outside the handler, so the error keeps no frame of the run (and no
            # tensor) alive through its __context__.
            traceback.clear_frames(failure.__traceback__)
            cause = failure.__cause__  # what the kernel raised, when the error wraps it
            raise failure.error from (None if cause is failure.error else cause)
        return results

    def _run_remote(
        self,
        key: Any,
        fetches: list[Tensor | Operation],
        feeds: list[Tensor],
        values: list[Any],
        full_trace: bool,
    ) -> list[Any]:
        """Hand the run to the target's runner and record it, also when it fails; with
        ``full_trace`` the remote processes record memory too."""
        assert self._remote is not None
        placement = self._placing.placement
        plan = self._plans.plan(key, fetches, feeds, placement, self._placing.failures)
        t0 = clock()
        # Other threads' runs go on while this one waits for other processes (a chief's queue
        # runner beside its training loop, as TF's sessions allow); the log is kept in turn.
        try:
            with _released(self._turn):
                remote = self._remote.run(
                    plan,
                    values,
                    self.graph,
                    lambda op: _assigned(placement, op),
                    full_trace,
                    self._device_ids,
                )
        except RemoteRunFailed as failed:
            self._log.add_run(t0, clock(), _named(failed.error), plan.fetches, failed.events)
            raise failed.error from None
        except (Exception, KeyboardInterrupt) as error:
            self._log.add_run(t0, clock(), _named(error), plan.fetches, RemoteEvents.none())
            raise
        self._log.add_run(t0, clock(), None, plan.fetches, remote.events)
        if full_trace:  # only a fully traced run records memory, so only its events are read
            peaks = self._plans.peak_bytes
            for device, peak in peak_bytes(self._log.last_run_batch().columns).items():
                name = self._devices[device].name
                peaks[name] = max(peaks.get(name, 0), peak)
        fed = dict(zip(map(id, feeds), values))
        return [
            host_copy(fed[id(f)] if id(f) in fed else remote.values[id(f)])
            if isinstance(f, Tensor)
            else None
            for f in fetches
        ]

    def _intra_op_limit(self) -> contextlib.AbstractContextManager[Any]:
        """``intra_op_parallelism_threads``: the threads a multi-threaded kernel (BLAS) may use."""
        threads = self.config.intra_op_parallelism_threads
        if threads <= 0:
            return contextlib.nullcontext()
        if self._threadpools is None:
            from threadpoolctl import ThreadpoolController

            self._threadpools = ThreadpoolController()
        return self._threadpools.limit(limits=threads)

    def trace(self, runs: int | None = 1) -> Trace:
        """A Trace of the last ``runs`` runs (None: every event still recorded)."""
        kept, columns = self._log.events(runs)
        predictor = WhatIf(self.graph, self._devices)
        return Trace(**self.tables(runs=kept), events=columns, predictor=predictor)

    def tables(self, runs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The document's tables (devices, nodes, edges, runs) as they stand now, without events:
        what a live view needs whenever the graph, its placement or the run list changed."""
        return document_tables(
            self.graph,
            self._placing.placement,
            self._placing.failures,
            self._devices,
            self.reserved_bytes,
            self._log.records() if runs is None else runs,
            self._process_of,
        )

    def _process_of(self, device: Device) -> tuple[int, str | None]:
        """The process that runs ``device``'s ops: this one, or its cluster task's."""
        if self._remote is None:
            return os.getpid(), None
        return self._remote.process_of(device)

    def reserved_bytes(self, device: Device) -> int:
        """Memory the runtime holds on ``device``, as TensorFlow's allocator would.

        By default nearly all of a GPU is mapped up front (its limit: the card, its logical
        share, or ``per_process_gpu_memory_fraction`` of it). With ``allow_growth`` (or
        ``set_memory_growth``) it grows to the largest peak so far in 2 MiB chunks and is
        never given back. The host's memory is not reserved.
        """
        peak = self._plans.peak_bytes.get(device.name, 0)
        if device.device_type != "GPU":
            return peak
        if self._gpus is not None and device in self._gpus:  # a real GPU: what its pool holds
            return int(self._gpus.gpu(device).pool.total_bytes())
        if not self._grows(device):
            return device.memory_limit
        return min(-(-peak // _GROWTH_CHUNK) * _GROWTH_CHUNK, device.memory_limit)

    def _grows(self, device: Device) -> bool:
        """Whether ``device``'s memory is taken as needed rather than mapped up front."""
        # A cluster task's GPU: its own process reserves its memory (not this one's context).
        if self._remote is not None or self.config.gpu_options.allow_growth:
            return True
        if device.logical:
            return device_context.forced_memory_growth()
        return self._context.get_memory_growth(device.physical)

    def _feeds(
        self, feed_dict: Mapping[Any, Any], dry: bool = False
    ) -> tuple[list[Tensor], list[Any], tuple[Any, ...]]:
        """The fed tensors, their values (a dry run's: ShapedArrays) and, in a dry run, the
        values of fed shape-like arrays (``dry_run.known_value``: a fed ``k`` or predicate)."""
        if not isinstance(feed_dict, Mapping):
            raise TypeError(
                "Argument `feed_dict` must be a dictionary (a Mapping from tensors to values), "
                f"not {type(feed_dict).__name__!r}"
            )
        pairs = []
        for key, value in feed_dict.items():
            tensor = self._fed_tensor(key)
            if dry:
                pairs.append((tensor, fed_shape(tensor, value), known_value(tensor, value)))
            else:
                pairs.append((tensor, feed_value(tensor, value), None))
        pairs.sort(key=lambda p: id(p[0]))
        known = tuple(k for _, _, k in pairs) if dry else ()
        return [t for t, _, _ in pairs], [v for _, v, _ in pairs], known

    def _fed_tensor(self, key: Any) -> Tensor:
        """The tensor a feed's key names, if it may be fed."""
        tensor = resolve(key, self.graph, "feed")
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Cannot feed Operation '{tensor.name}'; feed one of its tensors.")
        if not self.graph.is_feedable(tensor):
            raise ValueError(
                f"Tensor {tensor.name} may not be fed. It is made inside a while loop "
                f"(created at {tensor.op.source}), once per iteration: feed a value the "
                "loop reads from outside instead."
            )
        return tensor

    def make_callable(
        self,
        fetches: Any,
        feed_list: Sequence[Any] | None = None,
        accept_options: bool = False,
        *,
        _given_feeds: bool = False,
    ) -> Callable[..., Any]:
        """A function of the ``feed_list`` values that runs ``fetches`` (TF's ``make_callable``):
        fetches and feeds are resolved once, and the plan compiled at the first call is run
        directly by every later one. With ``accept_options`` it takes ``options`` and
        ``run_metadata`` keywords as ``run`` does. ``_given_feeds``: the caller hands over arrays
        of the feeds' dtypes that nothing else holds (a cluster task's received tensors), used
        as they are rather than copied."""
        elements, rebuild = flatten_fetches(fetches, self.graph)
        unique = list(dict.fromkeys(elements))
        given = [self._fed_tensor(key) for key in feed_list or ()]
        order = sorted(range(len(given)), key=lambda i: id(given[i]))
        feeds = [given[i] for i in order]
        key = _plan_key(unique, feeds)
        targets = [e.op if isinstance(e, Tensor) else e for e in unique]
        all_fed = all(type(e) is Tensor and e in feeds for e in unique)

        def call(
            *args: Any, options: RunOptions | None = None, run_metadata: RunMetadata | None = None
        ) -> Any:
            if len(args) != len(given):
                raise TypeError(f"This callable takes {len(given)} feed values, not {len(args)}")
            if (options is not None or run_metadata is not None) and not accept_options:
                raise TypeError("This callable was made with accept_options=False")
            level = self.trace_level if options is None else options.trace_level
            dry = self._dry_runs or (options is not None and options.dry_run)
            if dry or self._remote is not None or level >= RunOptions.FULL_TRACE:
                feed_dict = {given[i]: args[i] for i in range(len(given))}
                return self.run(fetches, feed_dict, options, run_metadata)
            with self._turn, self._cancellation:
                if self._closed:
                    raise RuntimeError("Attempted to use a closed Session.")
                values = [args[i] if _given_feeds else feed_value(given[i], args[i]) for i in order]
                if all_fed:  # as run(): nothing to compute, nothing placed
                    fed = dict(zip(feeds, values))
                    return rebuild([host_copy(fed[e]) for e in elements])
                if not self._placing.current:
                    self._place(dict(zip(feeds, values)), targets)
                prepared = self._prepared(key, unique, feeds, False)
                by_element = dict(zip(unique, self._execute(prepared, values, run_metadata)))
                return rebuild([by_element[e] for e in elements])

        return call

    # -- lifetime ------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the session's worker threads once the run in flight (if any) has ended.

        Later runs raise; a run another thread had begun (placing, compiling) would otherwise
        start fresh workers after they were stopped, and leave them running.
        """
        self._closed = True
        self._cancellation.cancel()  # a run waiting on a queue or an accumulator ends
        with self._turn:
            self._plans.clear()
            if self._workers is not None:
                self._workers.close()
            if self._remote is not None:
                self._remote.close()
            if self._gpus is not None:
                self._gpus.release()
            if self._card_sampler is not None:
                self._card_sampler.close()

    @staticmethod
    def reset(target: str, containers: list[str] | None = None, config: Any = None) -> None:
        """Forget every variable on every task of ``target``'s cluster (TF's ``Session.reset``;
        placeviz keeps all variables in one container, so ``containers`` clears them all)."""
        runner = open_runner(target)
        try:
            runner.reset()
        finally:
            runner.close()

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


@contextlib.contextmanager
def _released(lock: threading.RLock) -> Iterator[None]:
    """``lock`` let go for the block and held again after it, however the block ends."""
    lock.release()
    try:
        yield
    finally:
        lock.acquire()


def _plan_key(fetches: list[Any], feeds: list[Tensor]) -> Any:
    """What a compiled plan is cached under: a lone fetch without feeds by itself (the fast
    path of ``run`` looks it up so), else the fetches and feeds."""
    return fetches[0] if len(fetches) == 1 and not feeds else (tuple(fetches), tuple(feeds))


def _assigned(placement: Placement, op: Operation) -> str:
    """The device the master chose for ``op`` (its request where its group failed)."""
    return placement.get(op.name, op.device)


def _require_type(argument: str, value: Any, kind: type) -> None:
    """TF's wording for a session argument of the wrong type (None means the default)."""
    if value is not None and not isinstance(value, kind):
        raise TypeError(
            f'Argument `{argument}` must be a pv.{kind.__name__}, but got "{type(value).__name__}"'
        )


def _session_devices(devices: list[Device], config: ConfigProto) -> list[Device]:
    """Apply ``device_count``, ``visible_device_list`` and the GPU memory fraction."""
    options = config.gpu_options
    gpus = [d for d in devices if d.device_type == "GPU"]
    others = [d for d in devices if d.device_type != "GPU"]
    if options.visible_device_list:
        order: dict[int, None] = {}  # insertion-ordered, with constant-time duplicate checks
        for item in options.visible_device_list.split(","):
            item = item.strip()
            if not item.isdigit():
                raise ValueError(f"Invalid visible_device_list entry {item!r}")
            if int(item) in order:
                raise ValueError(
                    f"visible_device_list contained a duplicate entry: "
                    f"{options.visible_device_list}"
                )
            order[int(item)] = None
        physical = list(dict.fromkeys(d.physical.index for d in gpus))
        for index in order:
            if index >= len(physical):
                raise ValueError(
                    f"visible_device_list names GPU {index}, but this process sees "
                    f"{len(physical)} GPU(s)"
                )
        by_card: dict[int, list[Device]] = {}
        for device in gpus:
            by_card.setdefault(device.physical.index, []).append(device)
        gpus = [d for index in order for d in by_card[physical[index]]]
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
