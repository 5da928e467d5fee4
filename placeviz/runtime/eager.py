"""Eager execution, TensorFlow 2 style: each op runs as soon as it is created.

placeviz keeps building the graph while it executes, so the inspector can still draw what ran
and where. An op runs at creation when everything it reads has a value; ops downstream of a
placeholder (a Keras ``Input``) stay symbolic and run in a session, as Keras's functional models
do. Each op runs once, in program order, in one session per graph (placements stick); its outputs
are kept and fed to the ops that consume them. ``pv.debugging.set_log_device_placement(True)``
prints TensorFlow 2's line for every op executed.
"""

from __future__ import annotations

import weakref
from typing import Any

from placeviz.devices import context as device_context
from placeviz.graph import core
from placeviz.graph.core import Graph, Operation, Tensor
from placeviz.runtime import placement_log
from placeviz.runtime.session import Session


class EagerSession(Session):
    """The session behind eager execution: it logs executions, not placements, and never runs
    an op again for a control edge on it (eager ops run once, in program order). The outputs
    it fetches stay on their devices: later ops read them there."""

    keeps_fetched_values = True

    def __init__(self, graph: Graph, executed: set[int]) -> None:
        super().__init__(graph=graph)
        self._done_ops = executed

    def _logs_placement(self, ctx: device_context.DeviceContext) -> bool:
        return False


class _GraphRunner:
    """Runs the ops of one graph as they are created and keeps their outputs."""

    def __init__(self, graph: Graph) -> None:
        self._executed: set[int] = set()  # op ids that ran (or, for variables, exist)
        self.session = EagerSession(graph, self._executed)
        self._values: dict[Tensor, Any] = {}

    def on_create(self, op: Operation) -> None:
        if op.op_def.needs_feed or not self._ready(op):
            return
        if op.op_def.ref_output:
            # A variable's value lives in the session; the ops that read or assign it run.
            self._executed.add(op.id)
            return
        feeds = {t: self._values[t] for t in op.inputs if not t.op.op_def.ref_output}
        fetches = list(op.outputs)
        results = self.session.run(fetches if fetches else op, feed_dict=feeds)
        self._executed.add(op.id)
        for tensor, value in zip(fetches, results or ()):
            self._values[tensor] = value
        if device_context.context().log_device_placement:
            self._log(op)

    def _ready(self, op: Operation) -> bool:
        executed = self._executed
        return all(t.op.id in executed for t in op.inputs) and all(
            c.id in executed for c in op.control_inputs
        )

    def _log(self, op: Operation) -> None:
        device = self.session.placement.device(op.name)
        op_type = op.type
        if op_type == "Const":
            if device.device_type == "CPU":
                return  # made in host memory; TensorFlow runs nothing for it
            op_type = "_EagerConst"  # TensorFlow's name for copying a constant to a device
        placement_log.write(f"Executing op {op_type} in device {device.name}")

    def value(self, tensor: Tensor) -> Any:
        return self._values.get(tensor)


class EagerContext:
    """One runner per graph that ops are created in while eager mode is on."""

    def __init__(self) -> None:
        self._runners: weakref.WeakKeyDictionary[Graph, _GraphRunner] = weakref.WeakKeyDictionary()

    def runner(self, graph: Graph) -> _GraphRunner:
        found = self._runners.get(graph)
        if found is None:
            found = self._runners[graph] = _GraphRunner(graph)
        return found

    def on_create(self, op: Operation) -> None:
        self.runner(op.graph).on_create(op)

    def value(self, tensor: Tensor) -> Any:
        found = self._runners.get(tensor.graph)
        return None if found is None else found.value(tensor)


def enable_eager_execution() -> None:
    """Run ops as they are created (TensorFlow 2's default; TF 1.15's switch of the same name)."""
    if not isinstance(core._eager, EagerContext):
        core.set_eager_hook(EagerContext())


def disable_eager_execution() -> None:
    core.set_eager_hook(None)


def eager_session(graph: Graph | None = None) -> Session:
    """The session eager ops of ``graph`` run in (for running its symbolic parts, e.g. Keras)."""
    hook = core._eager
    if not isinstance(hook, EagerContext):
        raise RuntimeError("Eager execution is not enabled; call pv.enable_eager_execution().")
    return hook.runner(graph or core.get_default_graph()).session
