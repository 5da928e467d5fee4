"""``%%placement``: run a cell on its own device setup and keep the trace of where its ops ran.

``%load_ext placeviz`` registers it. The cell starts from a fresh default graph; every session the
cell runs is collected (the latest run is the one kept); a cell that runs nothing has its sink
ops run once, so TensorFlow-2-style code without a session still shows its placement.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from IPython.core import magic_arguments
from IPython.core.magic import Magics, cell_magic, magics_class

from placeviz.devices import context as device_context
from placeviz.devices.profiles import DEFAULT_PROFILE
from placeviz.events.trace import Trace
from placeviz.graph import core
from placeviz.runtime import session as session_module
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
        "-o", dest="output", default="_placement", help="variable for the Trace (_placement)"
    )
    @magic_arguments.argument(
        "--no-widget",
        action="store_true",
        help="no inspector, only the text summary (the inspector is not built yet, so for now "
        "the summary is printed either way)",
    )
    @cell_magic
    def placement(self, line: str, cell: str) -> None:
        """Run the cell and record where each op ran; the Trace goes to ``-o VAR``."""
        args = magic_arguments.parse_argstring(self.placement, line)
        shell = self.shell
        assert shell is not None
        with (
            _cell_devices(args.gpus, args.simulate) as note,
            _cell_flags(soft=args.soft, log=args.log),
            _collect_sessions() as sessions,
        ):
            if note:
                print(note)
            core.reset_default_graph()
            filename = shell.compile.cache(cell)
            code = compile(shell.transform_cell(cell), filename, "exec")
            try:
                exec(code, shell.user_ns)
            except BaseException:
                # The runs up to the error, failed one included, stay inspectable.
                latest = _latest_run(sessions)
                if latest is not None:
                    shell.user_ns[args.output] = latest.trace(runs=None)
                raise
            trace = (_latest_run(sessions) or _run_sinks()).trace(runs=None)
        shell.user_ns[args.output] = trace
        if args.trace:
            trace.to_chrome_trace(args.trace)
        print(summary_text(trace))


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


@contextlib.contextmanager
def _collect_sessions() -> Iterator[list[Session]]:
    sessions: list[Session] = []
    session_module.observers.append(sessions.append)
    try:
        yield sessions
    finally:
        session_module.observers.remove(sessions.append)


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
