"""The local clusters ``%%placement --cluster ps=1,worker=2`` runs cells on: started once per
kernel (per shape) and reused, so a notebook pays for a cluster's start (its processes) once."""

from __future__ import annotations

import re
from dataclasses import dataclass

from placeviz.cluster.cluster_spec import ClusterSpec
from placeviz.cluster.server import Server, create_local_cluster
from placeviz.devices import context as device_context
from placeviz.runtime.config import ConfigProto

_SHAPE = re.compile(r"^\s*(ps|worker)\s*=\s*(\d+)\s*$")


@dataclass
class LocalCluster:
    spec: ClusterSpec
    workers: list[Server]
    ps: list[Server]

    @property
    def target(self) -> str:
        """Where a cell's sessions run by default: the first worker, TF's chief."""
        return self.workers[0].target

    def stop(self) -> None:
        for server in [*self.workers, *self.ps]:
            server.stop()


_clusters: dict[tuple[int, int, tuple[int, str] | None], LocalCluster] = {}  # by shape


def parse_shape(text: str) -> tuple[int, int]:
    """'ps=1,worker=2' -> (1, 2)."""
    counts = {"ps": 0, "worker": 1}
    for part in text.split(","):
        match = _SHAPE.match(part)
        if match is None:
            raise ValueError(
                f"--cluster {text!r}: write the tasks of each job as ps=N,worker=M "
                "(or name a ClusterSpec variable whose servers run)"
            )
        counts[match[1]] = int(match[2])
    if counts["worker"] < 1:
        raise ValueError(f"--cluster {text!r}: a cluster needs at least one worker")
    return counts["ps"], counts["worker"]


def local_cluster(ps: int, workers: int) -> LocalCluster:
    """The kernel's cluster of this shape (ps tasks without GPUs, workers with the simulated
    GPUs of the current device context, if any: they are part of its key), started when it is
    not running."""
    key = (ps, workers, device_context.context().simulation())
    found = _clusters.get(key)
    if found is not None and all(s.running for s in [*found.workers, *found.ps]):
        return found
    if found is not None:
        found.stop()
    no_gpu = ConfigProto(device_count={"GPU": 0})
    started, ps_servers = create_local_cluster(workers, ps, ps_config=no_gpu)
    made = _clusters[key] = LocalCluster(started[0].cluster_spec, started, ps_servers)
    return made


def stop_local_clusters() -> None:
    """Stop every cluster the magic started (the kernel's exit does it too)."""
    while _clusters:
        _clusters.popitem()[1].stop()
