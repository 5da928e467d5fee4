"""Where each op of a session's graph runs: decided when a run first follows the op's creation,
then kept for the session's life (placements stick, as in TensorFlow)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from placeviz.devices.context import Device
from placeviz.devices.spec import DeviceSpec
from placeviz.graph.core import Graph, Operation, Tensor, tensor_bytes
from placeviz.placement.colocation import ColocationIndex
from placeviz.placement.cost_placer import CostPlacer
from placeviz.placement.placer import Placement, PlacementFailure, SimplePlacer
from placeviz.runtime import placement_log
from placeviz.runtime.cost_model import RooflineCostModel
from placeviz.runtime.memory import Resident
from placeviz.runtime.run_log import RunLog


class PlacementState:
    """The session's placement of one graph, its failed groups, and the variables it placed."""

    def __init__(
        self,
        graph: Graph,
        devices: Sequence[Device],
        device_ids: dict[str, int],
        soft: bool,
        log: bool,
        local: DeviceSpec | None = None,
        placer: str = "simple",
        missing_tasks: Mapping[str, str] | None = None,
    ) -> None:
        """``missing_tasks``: the tasks of the session's cluster that do not run (name ->
        address), which a request may name but no run can use."""
        self.graph = graph
        self.placement = Placement()
        self.failures: dict[int, PlacementFailure] = {}
        self.variables: list[Operation] = []  # placed ops whose output is a variable's state
        self._cost_model: RooflineCostModel | None = None
        if placer == "cost":
            self._cost_model = RooflineCostModel(devices)
            self._placer: SimplePlacer = CostPlacer(devices, soft, self._cost_model, local)
        else:
            self._placer = SimplePlacer(devices, soft=soft, local=local)
        self._placer.missing_tasks = missing_tasks or {}
        self._device_ids = device_ids
        self._log = log
        self._version = -1  # the graph's version this placement covers
        self._edges_changed = 0
        # Ops are taken in once: their colocation groups are kept up to date, and each update
        # decides only the ops made since (and those whose group failed), so placing costs
        # what was added, not the whole graph (eager mode places once per op).
        self._groups = ColocationIndex()
        self._seen = 0
        self._undecided: list[Operation] = []
        self._variables_recorded = 0  # self.variables[:n] have their ALLOC event

    @property
    def current(self) -> bool:
        """No op was added, and no edge changed, since the last ``update``."""
        return self._version == self.graph.version

    def update(
        self,
        run_log: RunLog,
        fed: Mapping[Tensor, Any] | None = None,
        fetched: Sequence[Operation] = (),
    ) -> bool:
        """Place the ops made since the last update; True when an existing op's edges changed
        (so plans compiled before are stale). ``fed``: the run's feeds, whose sizes the cost
        model gives the dimensions the graph leaves unknown; ``fetched``: the ops the run
        fetches, the step the cost placer plans for unless the run only initializes."""
        if self._cost_model is not None and fed:
            self._cost_model.learn_sizes(fed)
        if isinstance(self._placer, CostPlacer):
            self._placer.fetched = fetched
        graph = self.graph
        edges_changed = graph._edges_changed
        count = graph.operation_count  # ops another thread adds from here on are placed next time
        new = graph.operations_from(self._seen, count)
        self._groups.add(new)
        self._seen = count
        pending = self._undecided + new
        decisions, self.failures = self._placer.place(pending, self.placement, self._groups)
        if isinstance(self._placer, CostPlacer):
            self.placement.schedule_order.update(self._placer.order)
        self._undecided = [op for op in pending if op.id in self.failures]
        for op, device, reason in decisions:
            self.placement.record(op, device, reason)
            if op.op_def.ref_output and not op.inputs:  # a variable, not a RefSwitch of one
                self.variables.append(op)
        run_log.record_placements(
            [op.id for op, _, _ in decisions],
            [self._device_ids[device.name] for _, device, _ in decisions],
        )
        self._version = count + edges_changed
        stale = edges_changed != self._edges_changed
        self._edges_changed = edges_changed
        if self._log and decisions:
            lines = placement_log.ignored_requests(decisions)
            lines += placement_log.placement_lines((op, device) for op, device, _ in decisions)
            placement_log.write("\n".join(lines))
        return stale

    def record_variables(self, run_log: RunLog) -> None:
        """Record the memory of the variables placed since the last call (a fully traced run
        is about to start: its memory events are drawn on top of what the variables hold)."""
        new = self._resident_of(self.variables[self._variables_recorded :])
        self._variables_recorded = len(self.variables)
        if new:
            run_log.record_variables(
                [r.op.id for r in new],
                [self._device_ids[r.device.name] for r in new],
                [r.bytes for r in new],
            )

    def resident(self) -> list[Resident]:
        """Every placed variable holds its value on its device for the session's life."""
        return self._resident_of(self.variables)

    def _resident_of(self, variables: Sequence[Operation]) -> list[Resident]:
        held = []
        for op in variables:
            size = tensor_bytes(op.outputs[0])
            if size:
                held.append(Resident(self.placement.device(op.name), size, op))
        return held
