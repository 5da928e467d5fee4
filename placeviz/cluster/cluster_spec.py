"""``ClusterSpec``: the jobs of a TensorFlow cluster and the network address of each task.

placeviz does not run on a cluster yet; a ClusterSpec describes one (for example to size
``replica_device_setter``), with ``tf.train.ClusterSpec``'s API and checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Address = str | bytes
Tasks = Sequence[Address] | Mapping[int, Address]


@dataclass(frozen=True)
class JobDef:
    """One job of a ``ClusterDef``: its name and task index -> address (TF's JobDef proto)."""

    name: Any
    tasks: Mapping[int, Address]


@dataclass(frozen=True)
class ClusterDef:
    """A plain mirror of TF's ``ClusterDef`` proto: ``job`` is the jobs sorted by name, as TF
    writes them, each with its tasks sorted by index. placeviz has no protobufs."""

    job: tuple[JobDef, ...]


class ClusterSpec:
    """``ClusterSpec({"ps": ["ps0:2222"], "worker": {0: "w0:2222", 2: "w2:2222"}})``.

    A job's tasks are a list (task i at position i) or a dict from task index to address, so a
    job may leave indices out. Jobs keep the order they were given in.
    """

    def __init__(self, cluster: Mapping[Any, Tasks] | ClusterSpec | ClusterDef) -> None:
        if isinstance(cluster, ClusterSpec):
            self._jobs = {job: dict(tasks) for job, tasks in cluster._jobs.items()}
        elif isinstance(cluster, ClusterDef):
            self._jobs = {job.name: dict(job.tasks) for job in cluster.job}
        elif isinstance(cluster, Mapping):
            self._jobs = {_check_job(job): _indexed(job, tasks) for job, tasks in cluster.items()}
        else:
            raise TypeError(
                "`cluster` must be a dictionary mapping one or more job names to lists of "
                f"network addresses, a ClusterSpec or a ClusterDef; got {type(cluster).__name__}"
            )

    @property
    def jobs(self) -> list[Any]:
        return list(self._jobs)

    def num_tasks(self, job_name: Any) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: Any) -> list[int]:
        return sorted(self._job(job_name))

    def task_address(self, job_name: Any, task_index: int) -> Address:
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name: Any) -> list[Address | None]:
        """Addresses by task index; as in TF, a list with None where a sparse job has no task."""
        job = self._job(job_name)
        return [job.get(i) for i in range(max(job, default=-1) + 1)]

    def as_dict(self) -> dict[Any, list[Address | None] | dict[int, Address]]:
        """Each job as a list of addresses when its indices are 0..n-1, else as a dict."""
        result: dict[Any, list[Address | None] | dict[int, Address]] = {}
        for name, job in self._jobs.items():
            indices = sorted(job)
            if indices and indices[-1] + 1 == len(indices):
                result[name] = self.job_tasks(name)
            else:
                result[name] = {i: job[i] for i in indices}
        return result

    def as_cluster_def(self) -> ClusterDef:
        """The cluster as TF's ``ClusterDef`` (a plain structure; ``ClusterSpec`` takes it back)."""
        return ClusterDef(
            tuple(
                JobDef(name, {i: self._jobs[name][i] for i in sorted(self._jobs[name])})
                for name in sorted(self._jobs)
            )
        )

    def _job(self, job_name: Any) -> dict[int, Address]:
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClusterSpec):
            return NotImplemented
        return self._jobs == other._jobs

    __hash__ = None  # type: ignore[assignment]  # equal by value, so unhashable, as TF's

    def __repr__(self) -> str:
        items = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{k!r}: {items[k]!r}" for k in sorted(items)) + "})"


def _check_job(job: Any) -> Any:
    if not isinstance(job, str | bytes):
        raise TypeError(f"Job name {job!r} must be bytes or unicode")
    return job


def _indexed(job: Any, tasks: Any) -> dict[int, Address]:
    if isinstance(tasks, list | tuple):
        indexed = dict(enumerate(tasks))
    elif isinstance(tasks, Mapping):
        indexed = {int(i): address for i, address in tasks.items()}
    else:
        raise TypeError(
            f"The tasks for job {job!r} must be a list or a dictionary from integers to strings."
        )
    for address in indexed.values():
        if not isinstance(address, str | bytes):
            raise TypeError(f"Task address {address!r} must be bytes or unicode")
    return indexed
