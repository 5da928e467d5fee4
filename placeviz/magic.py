"""``%%placement``: run a cell on its own device setup and keep the trace of where its ops ran.

``%load_ext placeviz`` registers it. The cell starts from a fresh default graph; every session the
cell runs is collected (the latest run is the one kept); a cell that runs nothing has its sink
ops run once, so TensorFlow-2-style code without a session still shows its placement.

Runs in the cell are fully traced (as with ``FULL_TRACE``), so memory over time can be shown.
In a kernel the cell's output is what it prints, then a live ``PlacementInspector`` that every
session streams into (``inspector/cell_output.py``); when the cell ends, however it ends, the
inspector is replaced (same display id) by the final placement document as MIME data, so the saved
notebook shows the inspector without a kernel. Outside a kernel (a terminal, or ``--no-widget``)
the cell prints where its ops ran.

The cell's devices, default graph and session observers are its context's own (contextvars), so a
cell run from a thread beside another keeps to its own.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator
from typing import Any

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class

from placeviz.cell_traceback import show_from_cell
from placeviz.devices import context as device_context
from placeviz.devices.profiles import DEFAULT_PROFILE
from placeviz.events.compare import compare
from placeviz.graph import core
from placeviz.inspector.summary import summary_text
from placeviz.runtime import session as session_module
from placeviz.runtime.config import PLACERS, RunOptions
from placeviz.runtime.session import Session


@magics_class
class PlacementMagics(Magics):
    @magic_arguments.magic_arguments()
    @magic_arguments.argument(
        "--gpus", type=int, default=None, help="GPUs for this cell (simulated when none is real)"
    )
    @magic_arguments.argument(
        "--simulate", metavar="PROFILE", default=None, help="simulate GPUs of PROFILE, e.g. H100"
    )
    @magic_arguments.argument(
        "--cluster",
        metavar="SHAPE",
        default=None,
        help="run on a local cluster of task processes, e.g. ps=1,worker=2 (started once per "
        "kernel), or on the running servers of a ClusterSpec variable",
    )
    @magic_arguments.argument(
        "--compare",
        metavar="PLACERS",
        default=None,
        help="run the cell once with each of two placers, e.g. simple,cost, and show both "
        "placements side by side",
    )
    @magic_arguments.argument(
        "--dry-run",
        action="store_true",
        help="every run of the cell is dry: shapes, placement, modeled time and memory, with "
        "nothing computed or allocated (fetches come back as pv.ShapedArray)",
    )
    @magic_arguments.argument("--soft", action="store_true", help="allow soft placement")
    @magic_arguments.argument("--log", action="store_true", help="print the placement log")
    @magic_arguments.argument("--trace", metavar="FILE", help="write a Chrome trace to FILE")
    @magic_arguments.argument(
        "--html", metavar="FILE", help="write the inspector as one standalone HTML file"
    )
    @magic_arguments.argument(
        "-o", dest="output", default="_placement", help="variable for the Trace (_placement)"
    )
    @magic_arguments.argument(
        "--no-widget",
        action="store_true",
        help="no inspector, only the text summary of where the ops ran",
    )
    @cell_magic
    def placement(self, line: str, cell: str) -> None:
        """Run the cell and record where each op ran; the Trace goes to ``-o VAR``."""
        args = magic_arguments.parse_argstring(self.placement, line)
        shell = self.shell
        assert shell is not None
        if args.compare is not None:
            self._compare(args, line, cell)
            return
        sessions: list[Session] = []
        with _cell_setup(args, shell):
            output = _cell_output(sessions) if not args.no_widget and _in_kernel(shell) else None
            shown: Session | None = None
            trace = None
            try:
                with (
                    _collect_sessions(sessions, output.watch if output else None),
                    output.running() if output else contextlib.nullcontext(),
                ):
                    try:
                        # A cell that caught a failed placement shows its graph rather than
                        # running its sinks.
                        shown = _execute_cell(
                            shell,
                            line,
                            cell,
                            lambda: _latest_run(sessions) or _latest_made(sessions) or _run_sinks(),
                        )
                    except BaseException:
                        # The runs up to the error, failed one included, stay inspectable; a
                        # failed placement ran nothing, yet its session shows what was placed.
                        shown = _latest_run(sessions) or _latest_made(sessions)
                        raise
                    finally:
                        if shown is not None:
                            trace = shown.trace(runs=None)
                            shell.user_ns[args.output] = trace
            finally:
                if output:
                    output.finish(shown, trace)  # within the cell's devices, which tables read
        assert trace is not None
        if args.trace:
            trace.to_chrome_trace(args.trace)
        if args.html:
            trace.to_html(args.html)
        if not output:
            print(summary_text(trace))

    def _compare(self, args: Any, line: str, cell: str) -> None:
        """The cell once per placer, each run on a fresh graph, then both placements in one
        view (``pv.compare``); ``-o VAR`` gets the Comparison."""
        shell = self.shell
        assert shell is not None
        if args.trace or args.html:
            raise UsageError(
                "--compare shows two traces, and --trace and --html write one: write either "
                "from the comparison (-o VAR) with VAR.traces[i].to_chrome_trace(path) or "
                "VAR.traces[i].to_html(path)"
            )
        placers = [p.strip() for p in args.compare.split(",")]
        if len(placers) != 2 or any(p not in PLACERS for p in placers):
            raise UsageError(
                f"--compare takes two placers of {', '.join(PLACERS)}, e.g. simple,cost "
                f"(got {args.compare!r})"
            )
        traces = []
        for placer in placers:
            sessions: list[Session] = []
            token = session_module.placer_override.set(placer)
            try:
                with (
                    _cell_setup(args, shell, say=placer == placers[0]),
                    _collect_sessions(sessions),
                ):
                    shown = _execute_cell(
                        shell, line, cell, lambda made=sessions: _latest_run(made) or _run_sinks()
                    )
                    traces.append(shown.trace(runs=None))
            finally:
                session_module.placer_override.reset(token)
        comparison = compare(traces[0], traces[1], labels=placers)
        shell.user_ns[args.output] = comparison
        if args.no_widget or not _in_kernel(shell):
            print(repr(comparison))
        else:
            from IPython.display import display

            display(comparison)


@contextlib.contextmanager
def _cell_setup(args: Any, shell: Any, say: bool = True) -> Iterator[None]:
    """The cell's own devices, cluster, fresh default graph and (``--dry-run``) dry sessions,
    printing what they are."""
    token = session_module.dry_run_override.set(args.dry_run)
    try:
        with (
            _cell_devices(args.gpus, args.simulate, soft=args.soft, log=args.log) as note,
            _cell_cluster(args.cluster, shell.user_ns) as cluster_note,
            core.cell_default_graph(),
        ):
            for said in (note, cluster_note, "Dry runs: nothing is computed" * args.dry_run):
                if said and say:
                    print(said)
            yield
    finally:
        session_module.dry_run_override.reset(token)


def _execute_cell(shell: Any, line: str, cell: str, then: Callable[[], Session]) -> Session:
    """The cell's code, as IPython runs a cell, then ``then`` (the session to show, which may run
    the cell's sinks); an error of either is shown from the cell's own lines and raised on."""
    code = shell.transform_cell(cell)
    filename = _cell_filename(shell, line, code)
    try:
        _run_cell(shell, filename, code)
        return then()
    except BaseException as error:
        show_from_cell(error, filename, shell)
        raise


def _cell_filename(shell: Any, line: str, code: str) -> str:
    """The name the cell's code is compiled under, as IPython names a cell's: from the cell's
    execution count, so ops' sources and tracebacks read ``Cell In[3], line 6``."""
    return shell.compile.cache(f"%%placement {line}\n{code}", _cell_number(shell))


def _cell_number(shell: Any) -> int:
    """The number IPython gave the running cell (its ``In[N]``). Since IPython 9.8 the shell's
    counter already holds the next cell's number while a cell runs; the cell's own is on the
    result IPython fills for it. Where there is none (``run_cell_magic`` called directly, or,
    before 9.8, a cell run without history) the counter is the number IPython caches it under."""
    running = getattr(shell.displayhook, "exec_result", None)
    number = getattr(running, "execution_count", None)
    return shell.execution_count if number is None else int(number)


def _run_cell(shell: Any, filename: str, code: str) -> None:
    """Run the cell's (transformed) code as IPython runs a cell, its lines numbered as the cell's
    (the magic's is line 1)."""
    exec(compile("\n" + code, filename, "exec"), shell.user_ns)


def _cell_output(sessions: list[Session]) -> Any:
    """The cell's output slots, showing its latest session (ipywidgets comes with the jupyter
    extra, which a kernel has; a terminal IPython never gets here)."""
    from placeviz.inspector.cell_output import CellOutput

    return CellOutput(lambda: _latest_run(sessions) or _latest_made(sessions))


def _in_kernel(shell: Any) -> bool:
    """A Jupyter kernel's shell (where widgets have a front end), not a terminal's."""
    return getattr(shell, "kernel", None) is not None


@contextlib.contextmanager
def _cell_devices(gpus: int | None, profile: str | None, soft: bool, log: bool) -> Iterator[str]:
    """The cell's own device setup when asked for (else the process's devices, with the cell's
    ``--soft`` and ``--log`` flags); the process's is left as it was."""
    process = device_context.context()
    if gpus is None and profile is None:
        if not (soft or log):
            yield ""
            return
        cell = copy.copy(process)  # the process's configuration, the cell's own flags
        note = ""
    else:
        cell = device_context.DeviceContext()
        simulate = profile is not None
        given = cell.provide_gpus(1 if gpus is None else gpus, profile or DEFAULT_PROFILE, simulate)
        note = f"placeviz: {given} for this cell"
    cell.soft_placement = process.soft_placement or soft
    cell.log_device_placement = process.log_device_placement or log
    with device_context.use(cell):
        yield note
    if not note and cell.initialized:
        process.initialize()  # a session ran on the process's devices: they are locked, as in TF


@contextlib.contextmanager
def _cell_cluster(shape: str | None, names: dict[str, Any]) -> Iterator[str]:
    """Sessions the cell makes without a target run on the cluster ``shape`` names: a local one
    of that shape (reused from an earlier cell) or a ClusterSpec variable's running servers (its
    first worker, else its first task, is the target). The cluster's spec is ``_cluster``."""
    if shape is None:
        yield ""
        return
    from placeviz.cluster.cluster_spec import ClusterSpec
    from placeviz.cluster.local import local_cluster, parse_shape
    from placeviz.cluster.master import ClusterMaster

    given = names.get(shape.strip())
    if isinstance(given, ClusterSpec):
        spec = given
        job = "worker" if "worker" in spec.jobs else spec.jobs[0]
        target = f"grpc://{spec.task_address(job, spec.task_indices(job)[0])}"
        started = ""
    else:
        ps, workers = parse_shape(shape)
        cluster = local_cluster(ps, workers)
        spec, target = cluster.spec, cluster.target
        pids = ", ".join(f"{s.task} {s.pid}" for s in [*cluster.ps, *cluster.workers])
        started = f" (task processes: {pids})"
    master = ClusterMaster(target)  # fails here, typed, when no server answers
    dashboard = master.dashboard
    master.close()
    names["_cluster"] = spec
    token = session_module.default_target.set(target)
    try:
        yield (
            f"placeviz: sessions run on the cluster {spec.as_dict()}{started}; "
            f"without a target on {target}; Dask dashboard {dashboard}"
        )
    finally:
        session_module.default_target.reset(token)


def _latest_run(sessions: list[Session]) -> Session | None:
    """The session whose last run ended last (the one the cell's output shows)."""
    ran = [s for s in sessions if s.last_run is not None]
    return max(ran, key=lambda s: s.last_run["t1"]) if ran else None  # type: ignore[index]


def _latest_made(sessions: list[Session]) -> Session | None:
    """The last session made, for a cell none of whose runs started (placement failed): its
    graph is still worth showing."""
    return sessions[-1] if sessions else None


@contextlib.contextmanager
def _collect_sessions(
    sessions: list[Session], also: Callable[[Session], None] | None = None
) -> Iterator[None]:
    """Every session the cell's context creates goes to ``sessions`` (and to ``also``)."""

    def observe(session: Session) -> None:
        session.trace_level = RunOptions.FULL_TRACE  # the inspector shows memory over time
        sessions.append(session)
        if also is not None:
            also(session)

    token = session_module.observers.set((*session_module.observers.get(), observe))
    try:
        yield
    finally:
        session_module.observers.reset(token)


def _run_sinks() -> Session:
    """Run every op nothing consumes once, as TensorFlow 2 code without a session would."""
    graph = core.get_default_graph()
    consumed = {t.op.id for op in graph.get_operations() for t in op.inputs}
    consumed.update(c.id for op in graph.get_operations() for c in op.control_inputs)
    sinks = [op for op in graph.get_operations() if op.id not in consumed]
    session = Session(graph=graph)
    if sinks:
        session.run(sinks)
    return session


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(PlacementMagics)
