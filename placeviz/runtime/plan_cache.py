"""A session's compiled plans: one per set of fetches and feeds, checked to fit before it runs.

Compiling builds the plan (pruned, validated, ordered), generates its code, and checks its
memory against every device's limit with the variables the session holds; the peak each device
reached is kept, since ``allow_growth`` reserves memory up to the largest peak so far.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import Any

from placeviz.devices.context import Device
from placeviz.graph.core import Operation, Tensor, tensor_bytes
from placeviz.placement.placer import Placement, PlacementFailure
from placeviz.runtime.backends.cuda_runtime import CudaRuntime
from placeviz.runtime.dry_run import DryPlan, DryState, ShapedArray
from placeviz.runtime.executor import CompiledPlan
from placeviz.runtime.memory import (
    Lifetime,
    Overflow,
    Resident,
    RunTimeCheck,
    fit,
    held_during_loops,
    lifetimes,
    live_tensors,
)
from placeviz.runtime.plan import Plan, build_plan
from placeviz.runtime.plan_codegen import Step
from placeviz.runtime.run_log import Prepared
from placeviz.runtime.state import SessionState
from placeviz.runtime.tracing import PlanColumns
from placeviz.runtime.workers import StreamWorkers

_MAX_CACHED_PLANS = 128


class PlanCache:
    """Compiled plans by key (the newest 128), and the peak bytes each device reached."""

    def __init__(
        self,
        state: SessionState,
        workers: StreamWorkers | None,
        device_ids: Mapping[str, int],
        gpus: CudaRuntime | None = None,
        keep_fetched: bool = False,
    ) -> None:
        """``gpus``: the session's real GPUs, whose streams and pools its plans run on;
        ``keep_fetched``: fetched values stay on their devices after a run (eager mode)."""
        self._gpus = gpus
        self._keep_fetched = keep_fetched
        self._state = state
        self._workers = workers
        self._device_ids = dict(device_ids)
        self._plans: dict[Any, Prepared] = {}
        self._bare: dict[Any, Plan] = {}  # plans run elsewhere (a remote runner's), uncompiled
        self.peak_bytes: dict[str, int] = {}  # per device name, the largest plan's peak so far

    def get(self, key: Any) -> Prepared | None:
        return self._plans.get(key)

    def clear(self) -> None:
        self._plans.clear()
        self._bare.clear()

    def plan(
        self,
        key: Any,
        fetches: Sequence[Tensor | Operation],
        feeds: Sequence[Tensor],
        placement: Placement,
        failures: Mapping[int, PlacementFailure],
    ) -> Plan:
        """The plan of a run another process carries out (built once per key, not compiled)."""
        found = self._bare.get(key)
        if found is None:
            if len(self._bare) >= _MAX_CACHED_PLANS:
                self._bare.pop(next(iter(self._bare)))
            found = self._bare[key] = build_plan(fetches, feeds, placement, failures)
        return found

    def items(self) -> list[tuple[Any, Prepared]]:
        return list(self._plans.items())

    def values(self) -> list[Prepared]:
        return list(self._plans.values())

    def compile(
        self,
        key: Any,
        fetches: Sequence[Tensor | Operation],
        feeds: Sequence[Tensor],
        placement: Placement,
        failures: Mapping[int, PlacementFailure],
        done: Container[int],
        full_trace: bool,
        resident: Sequence[Resident],
        dry: DryState | None = None,
        fed: Sequence[ShapedArray] = (),
        known: Sequence[Any] = (),
    ) -> Prepared:
        """``dry``: compile a dry plan for the shapes ``fed`` (the run's ShapedArray feeds) and
        the ``known`` values of fed shape-like arrays: the same plan, checked and timed the same
        way, on one stream, without GPUs' runtime."""
        plan = build_plan(fetches, feeds, placement, failures, done)
        dynamic = _sizes_known_only_at_run_time_on_gpus(plan)
        shapes = None if dry is None else DryPlan(plan, [v.shape for v in fed], dry, known)
        held: list[Lifetime] = []

        def overflow(steps: Sequence[Step]) -> Overflow | None:
            """Each tensor's lifetime, and the device peaks up to the step that overflows."""
            held.extend(lifetimes(steps, plan.fetches, plan.feeds, self._keep_fetched))
            peaks, found = fit(steps, held, resident)
            for device, peak in peaks.items():
                self.peak_bytes[device] = max(self.peak_bytes.get(device, 0), peak)
            return found

        compiled = CompiledPlan(
            plan,
            self._state,
            full_trace=full_trace,
            workers=self._workers if dry is None else None,
            check_dynamic_memory=dynamic,
            gpus=self._gpus if dry is None else None,
            dry=shapes,
            overflow=overflow,
        )
        compiled.live_tensors = live_tensors(compiled.steps, held)
        if compiled.loop_memory is not None:
            base, largest = held_during_loops(compiled.steps, held, resident)
            compiled.loop_memory.base = {
                (step, device): used
                for step, by_device in base.items()
                for device, used in by_device.items()
            }
            compiled.loop_memory.base_largest = largest
        if dynamic:
            compiled.set_memory_check(
                RunTimeCheck(compiled.steps, held, resident, compiled.byte_offsets)
            )
        prepared = (compiled, PlanColumns(compiled, held, self._device_ids))
        if len(self._plans) >= _MAX_CACHED_PLANS:
            self._plans.pop(next(iter(self._plans)))
        self._plans[key] = prepared
        return prepared


def _sizes_known_only_at_run_time_on_gpus(plan: Plan) -> bool:
    """Whether a GPU in the plan makes or uses a tensor whose size static shapes do not give
    (the run then measures such sizes: to check memory, and to model a simulated GPU's time)."""
    return any(
        _on_gpu(plan.devices[op.id])
        and not op.op_def.ref_output
        and any(tensor_bytes(t) is None for t in (*op.inputs, *op.outputs))
        for op in plan.ops
    )


def _on_gpu(device: Device) -> bool:
    return device.device_type != "CPU"
