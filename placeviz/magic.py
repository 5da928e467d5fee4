"""``%%placement``: run a cell on its own device setup and keep the trace of where its ops ran.

``%load_ext placeviz`` registers it. The cell starts from a fresh default graph; every session the
cell runs is collected (the latest run is the one kept); a cell that runs nothing has its sink
ops run once, so TensorFlow-2-style code without a session still shows its placement.

Runs in the cell are fully traced (as with ``FULL_TRACE``), so memory over time can be shown.
In a kernel the cell's output is a live ``PlacementInspector`` that every session streams into;
when the cell ends it is replaced (same display id) by the final placement document as MIME data,
so the saved notebook shows the inspector without a kernel. Outside a kernel (a terminal, or
``--no-widget``) the cell prints where its ops ran.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from IPython.core import magic_arguments
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.display import display

from placeviz.devices import context as device_context
from placeviz.devices.profiles import DEFAULT_PROFILE
from placeviz.events.html import MIME_TYPE
from placeviz.events.trace import RUNS_LISTED, Trace
from placeviz.graph import core
from placeviz.runtime import session as session_module
from placeviz.runtime.config import RunOptions
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
        live = None if args.no_widget or not _in_kernel(shell) else _LiveOutput()
        with (
            _cell_devices(args.gpus, args.simulate) as note,
            _cell_flags(soft=args.soft, log=args.log),
            _collect_sessions(live.watch if live else None) as sessions,
        ):
            if note:
                print(note)
            if live:
                live.show()
            core.reset_default_graph()
            filename = shell.compile.cache(cell)
            code = compile(shell.transform_cell(cell), filename, "exec")
            try:
                exec(code, shell.user_ns)
            except BaseException:
                # The runs up to the error, failed one included, stay inspectable.
                latest = _latest_run(sessions)
                trace = latest.trace(runs=None) if latest is not None else None
                if trace is not None:
                    shell.user_ns[args.output] = trace
                if live:
                    # A failed placement ran nothing, yet its session shows what was placed.
                    live.finish(latest or _latest_made(sessions), trace)
                raise
            # A cell that caught a failed placement shows its graph rather than running its sinks.
            shown = _latest_run(sessions) or _latest_made(sessions) or _run_sinks()
            trace = shown.trace(runs=None)
            if live:
                live.finish(shown, trace)  # within the cell's devices, which the tables read
        shell.user_ns[args.output] = trace
        if args.trace:
            trace.to_chrome_trace(args.trace)
        if args.html:
            trace.to_html(args.html)
        if not live:
            print(summary_text(trace))


class _LiveOutput:
    """The cell's output while it runs (a streaming inspector) and after (the document)."""

    def __init__(self) -> None:
        # ipywidgets comes with the jupyter extra; a terminal IPython never gets here.
        from placeviz.inspector.widget import PlacementInspector

        self.inspector = PlacementInspector()
        self.handle: Any = None

    def show(self) -> None:
        self.handle = display(self.inspector, display_id=True)

    def watch(self, session: Session) -> None:
        self.inspector.watch(session)

    def finish(self, session: Session | None, trace: Trace | None) -> None:
        """Replace the live view by the final document, which the notebook keeps; ``trace`` is
        the session's whole trace when the cell already made it."""
        self.inspector.stop()
        if session is None:
            bundle = {"text/plain": "no session ran"}
        else:
            trace = _shown_trace(session, trace)
            bundle = {MIME_TYPE: trace.to_document(), "text/plain": summary_text(trace)}
        self.handle.update(bundle, raw=True)
        self.inspector.close()


# Above this many events the saved output keeps the latest run's events only (all are in VAR).
SHOWN_EVENTS = 250_000


def _shown_trace(session: Session, whole: Trace | None) -> Trace:
    """What the cell's output keeps: every run (``whole``, made here if not given), or, for long
    loops, the latest run in full and the records of the runs before it."""
    if len(session.recorder) <= SHOWN_EVENTS:
        return whole if whole is not None else session.trace(runs=None)
    trace = session.trace(runs=1)
    trace.runs = session.latest_runs(RUNS_LISTED)
    return trace


def _in_kernel(shell: Any) -> bool:
    """A Jupyter kernel's shell (where widgets have a front end), not a terminal's."""
    return getattr(shell, "kernel", None) is not None


def summary_text(trace: Trace) -> str:
    """Where the ops ran: one line per device that ran any, with its op count and busy time."""
    lines = []
    for name, stats in trace.summary().items():
        if stats.ops:
            lines.append(f"{name}: {stats.ops} ops, busy {stats.busy_s * 1e3:.3f} ms")
    return "\n".join(lines) or "no ops ran"


@contextlib.contextmanager
def _cell_devices(gpus: int | None, profile: str | None) -> Iterator[str]:
    """The cell's own device setup (when asked for), independent of the process-wide one."""
    if gpus is None and profile is None:
        yield ""
        return
    process = device_context.context()
    cell = device_context.DeviceContext()
    cell.soft_placement = process.soft_placement
    cell.log_device_placement = process.log_device_placement
    wanted = 1 if gpus is None else gpus
    note = cell.provide_gpus(wanted, profile or DEFAULT_PROFILE, simulate=profile is not None)
    with device_context.use(cell):
        yield f"placeviz: {note} for this cell"


@contextlib.contextmanager
def _cell_flags(soft: bool, log: bool) -> Iterator[None]:
    """``--soft`` and ``--log`` hold for the cell only."""
    ctx = device_context.context()
    saved = ctx.soft_placement, ctx.log_device_placement
    ctx.soft_placement = ctx.soft_placement or soft
    ctx.log_device_placement = ctx.log_device_placement or log
    try:
        yield
    finally:
        ctx.soft_placement, ctx.log_device_placement = saved


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
    also: Callable[[Session], None] | None = None,
) -> Iterator[list[Session]]:
    """Every session created while the cell runs (each also handed to ``also``)."""
    sessions: list[Session] = []

    def observe(session: Session) -> None:
        session.trace_level = RunOptions.FULL_TRACE  # the inspector shows memory over time
        sessions.append(session)
        if also is not None:
            also(session)

    session_module.observers.append(observe)
    try:
        yield sessions
    finally:
        session_module.observers.remove(observe)


def _run_sinks() -> Session:
    """Run every op nothing consumes once, as TensorFlow 2 code without a session would."""
    graph = core.get_default_graph()
    consumed = {t.op._id for op in graph.get_operations() for t in op.inputs}
    consumed.update(c._id for op in graph.get_operations() for c in op.control_inputs)
    sinks = [op for op in graph.get_operations() if op._id not in consumed]
    session = Session(graph=graph)
    if sinks:
        session.run(sinks)
    return session


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(PlacementMagics)
