"""``MirroredStrategy``: one replica per device, variables mirrored on every device.

Simplified compared with TensorFlow: replicas are built one after another in this thread (not
in one thread each), the cross-device sum is an AddN on every device (not NCCL), and a merge
call's result must be an op. Everything is placed with ordinary device scopes, so the placement
log and the inspector show each replica's ops and each copy of each variable on its device.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from placeviz.devices import context as device_context
from placeviz.devices.spec import DeviceSpec
from placeviz.distribute import context
from placeviz.distribute.context import ReplicaContext
from placeviz.distribute.values import MirroredVariable, PerReplica
from placeviz.graph.core import Operation, Tensor, get_default_graph
from placeviz.graph.ops import array_ops, math_ops, shape_ops, state_ops
from placeviz.graph.variables import GLOBAL_VARIABLES, TRAINABLE_VARIABLES, variable_creator_scope

_LOCAL = DeviceSpec(job="localhost", replica=0, task=0)


class ReduceOp:
    SUM = "SUM"
    MEAN = "MEAN"


class StrategyExtended:
    def __init__(self, devices: tuple[str, ...]) -> None:
        self.worker_devices = devices


class MirroredStrategy:
    """``MirroredStrategy(devices=None)``: every GPU by default (the CPU when there is none)."""

    def __init__(self, devices: Sequence[Any] | None = None, cross_device_ops: Any = None) -> None:
        self._devices = _canonical_devices(devices)
        self.extended = StrategyExtended(self._devices)
        sys.stderr.write(f"INFO:placeviz:Using MirroredStrategy with devices {self._devices!r}\n")

    @property
    def num_replicas_in_sync(self) -> int:
        return len(self._devices)

    # -- scope: mirrored variables ------------------------------------------------------------
    @contextlib.contextmanager
    def scope(self) -> Iterator[MirroredStrategy]:
        """Variables created inside get one copy per device."""
        context.push_strategy(self)
        try:
            with variable_creator_scope(self._create_variable):
                yield self
        finally:
            context.pop_strategy(self)

    def _create_variable(self, next_creator: Callable[..., Any], **kwargs: Any) -> Any:
        graph = get_default_graph()
        copies: list[Any] = []
        for i, device in enumerate(self._devices):
            with graph.device(device):
                if i == 0:
                    copies.append(next_creator(**kwargs))
                    continue
                primary = copies[0]
                with graph.name_scope(None):
                    copies.append(
                        next_creator(
                            **{
                                **kwargs,
                                # Every copy starts from the primary's value, so they agree.
                                "initial_value": lambda p=primary: state_ops.identity(
                                    p.initial_value
                                ),
                                "name": f"{primary.op.name}/replica_{i}",
                            }
                        )
                    )
        mirrored = MirroredVariable(copies)
        # The collections hold the mirror in place of its copies, as in TensorFlow.
        for key in (GLOBAL_VARIABLES, TRAINABLE_VARIABLES, *(kwargs.get("collections") or ())):
            members = graph.get_collection_ref(key)
            found = [v for v in members if any(v is c for c in copies)]
            for copy in found:
                members.remove(copy)
            if found and not any(m is mirrored for m in members):
                members.append(mirrored)
        return mirrored

    # -- run: one replica per device ----------------------------------------------------------
    def run(self, fn: Callable[..., Any], args: Sequence[Any] = (), kwargs: Any = None) -> Any:
        """Build ``fn`` once per replica on its device; the result is per replica."""
        kwargs = kwargs or {}
        graph = get_default_graph()
        replicas = [ReplicaContext(self, i) for i in range(len(self._devices))]
        results = []
        for i, (device, replica) in enumerate(zip(self._devices, replicas)):
            context.set_replica_context(replica)
            try:
                # The default strategy's one replica keeps whatever device scope surrounds it.
                with (
                    graph.device(device) if device else contextlib.nullcontext(),
                    graph.name_scope(f"replica_{i}") if i else contextlib.nullcontext(),
                ):
                    results.append(fn(*_select(args, i), **_select_dict(kwargs, i)))
            finally:
                context.set_replica_context(None)
        self._merge(replicas)
        return results[0] if len(results) == 1 else PerReplica(results)

    def _merge(self, replicas: list[ReplicaContext]) -> None:
        merges = [r.merges for r in replicas]
        for calls in zip(*merges, strict=True):
            merge_fn, _, _ = calls[0]
            per_replica = [PerReplica(values) for values in zip(*(args for _, args, _ in calls))]
            merged = merge_fn(self, *per_replica)
            for _, _, waiter in calls:
                waiter._add_control_input(merged)

    def experimental_local_results(self, value: Any) -> tuple[Any, ...]:
        return value.values if isinstance(value, PerReplica | MirroredVariable) else (value,)

    def group(self, value: Any, name: str | None = None) -> Operation:
        return state_ops.group(*self.experimental_local_results(value), name=name)

    # -- reduce: across replicas ----------------------------------------------------------------
    def reduce(self, reduce_op: str, value: Any, axis: int | None = None) -> Tensor:
        """SUM or MEAN of a per-replica value over replicas (and over ``axis`` of each)."""
        op = str(getattr(reduce_op, "value", reduce_op)).upper()
        if op not in (ReduceOp.SUM, ReduceOp.MEAN):
            raise ValueError(f"reduce_op must be 'SUM' or 'MEAN', got {reduce_op!r}")
        values = list(self.experimental_local_results(value))
        if axis is None:
            total = math_ops.add_n(values) if len(values) > 1 else values[0]
            return total / float(len(values)) if op == ReduceOp.MEAN else total
        sums = [math_ops.reduce_sum(v, axis=axis) for v in values]
        total = math_ops.add_n(sums) if len(sums) > 1 else sums[0]
        if op == ReduceOp.SUM:
            return total
        # Elements reduced per replica: its size over the size of what the reduction left.
        counts = [
            array_ops.cast(shape_ops.size(v), total.dtype)
            / array_ops.cast(shape_ops.size(s), total.dtype)
            for v, s in zip(values, sums)
        ]
        return total / (math_ops.add_n(counts) if len(counts) > 1 else counts[0])

    def __repr__(self) -> str:
        return f"MirroredStrategy(devices={self._devices!r})"


def _canonical_devices(devices: Sequence[Any] | None) -> tuple[str, ...]:
    if devices is None:
        found = device_context.context().list_logical_devices("GPU")
        devices = [d.name for d in found] or ["/device:CPU:0"]
    names = []
    for device in devices:
        spec = DeviceSpec.coerce(getattr(device, "name", device))
        names.append(_LOCAL.merge_from(spec).to_string())
    if not names:
        raise ValueError("MirroredStrategy needs at least one device.")
    if len(set(names)) != len(names):
        raise ValueError(f"MirroredStrategy got a device twice: {names}")
    return tuple(names)


def _select(args: Sequence[Any], i: int) -> list[Any]:
    return [a.values[i] if isinstance(a, PerReplica) else a for a in args]


def _select_dict(kwargs: dict[str, Any], i: int) -> dict[str, Any]:
    return {k: v.values[i] if isinstance(v, PerReplica) else v for k, v in kwargs.items()}


class _DefaultStrategy(MirroredStrategy):
    """What code sees outside any scope: one replica, on whatever device the code asks for."""

    def __init__(self) -> None:
        self._devices = ("",)
        self.extended = StrategyExtended(self._devices)


_DEFAULT: list[_DefaultStrategy] = []


def default_strategy() -> MirroredStrategy:
    if not _DEFAULT:
        _DEFAULT.append(_DefaultStrategy())
    return _DEFAULT[0]


context.set_default_strategy(default_strategy)
