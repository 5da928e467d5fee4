"""``replica_device_setter``: TF1's device function for between-graph replication.

Variables go round-robin to the parameter-server tasks and every other op to the worker. The
function runs after the inner ``device`` scopes, and the fields they set win over its own, so
``with device("/gpu:1")`` inside it gives ``/job:worker/device:GPU:1``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from placeviz.cluster.cluster_spec import ClusterSpec
from placeviz.devices.spec import DeviceSpec
from placeviz.graph.core import Operation

# TF's STANDARD_PS_OPS, less the table and tree resources placeviz does not have.
STANDARD_PS_OPS = ("Variable", "VariableV2", "VarHandleOp")

PsStrategy = Callable[[Operation], int]


class _RoundRobinStrategy:
    """TF's default: the n-th variable created goes to task n mod ps_tasks."""

    def __init__(self, num_tasks: int) -> None:
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, op: Operation) -> int:
        task = self._next_task
        self._next_task = (task + 1) % self._num_tasks
        return task


class _ReplicaDeviceChooser:
    """The device function; its repr is what placement reasons quote."""

    def __init__(
        self,
        ps_tasks: int,
        ps_device: DeviceSpec,
        worker_device: DeviceSpec,
        merge_devices: bool,
        ps_ops: Sequence[str],
        ps_strategy: PsStrategy,
    ) -> None:
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy
        self._ps_choices: dict[str, int] = {}  # variable name -> the task its strategy chose

    def why(self, op_name: str) -> str | None:
        """How the op's ps task was chosen, for ``explain``: round robin counts the variables."""
        task = self._ps_choices.get(op_name)
        if task is None:
            return None
        if not isinstance(self._ps_strategy, _RoundRobinStrategy):
            return f"ps_strategy {self._ps_strategy!r} chose task {task}"
        order = list(self._ps_choices).index(op_name) + 1
        return (
            f"round robin over {self._ps_tasks} ps tasks: variable {order} "
            f"of {len(self._ps_choices)}"
        )

    def __call__(self, op: Operation) -> str:
        current = op.requested_device
        if not self._merge_devices and not current.is_empty:
            return current.to_string()
        if not self._ps_device.is_empty and op.type in self._ps_ops:
            ps_device = self._ps_device
            # A task is chosen only where the op's own job (if any) is the ps job.
            if ps_device.job is not None and current.job in (None, ps_device.job):
                task = self._ps_choices[op.name] = self._ps_strategy(op)
                ps_device = ps_device.replace(task=task)
            return ps_device.merge_from(current).to_string()
        return self._worker_device.merge_from(current).to_string()

    def __repr__(self) -> str:
        return (
            f"replica_device_setter(ps_tasks={self._ps_tasks}, ps_device='{self._ps_device}', "
            f"worker_device='{self._worker_device}')"
        )


def replica_device_setter(
    ps_tasks: int = 0,
    ps_device: str | DeviceSpec | None = "/job:ps",
    worker_device: str | DeviceSpec | None = "/job:worker",
    merge_devices: bool = True,
    cluster: ClusterSpec | dict[Any, Any] | None = None,
    ps_ops: Sequence[str] | None = None,
    ps_strategy: PsStrategy | None = None,
) -> Callable[[Operation], str] | None:
    """A function for ``pv.device(...)``; None when there are no ps tasks, as in TF.

    With ``cluster``, ``ps_tasks`` is the number of tasks of the ps job (the job named in
    ``ps_device``), and None is returned when the cluster has no such job. ``ps_strategy(op)``
    picks the task of each variable (round-robin by default). With ``merge_devices=False`` an op
    that already has a device keeps it untouched.
    """
    if cluster is not None:
        spec = ClusterSpec(cluster)
        ps_job = DeviceSpec.coerce(ps_device).job
        if ps_job not in spec.jobs:
            return None
        ps_tasks = spec.num_tasks(ps_job)
    if ps_tasks == 0:
        return None
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    return _ReplicaDeviceChooser(
        ps_tasks,
        DeviceSpec.coerce(ps_device),
        DeviceSpec.coerce(worker_device),
        merge_devices,
        STANDARD_PS_OPS if ps_ops is None else ps_ops,
        ps_strategy,
    )
