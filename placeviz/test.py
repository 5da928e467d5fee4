"""``pv.test``: TensorFlow's test helpers that placeviz users call (``tf.test``)."""

from __future__ import annotations

import itertools

from placeviz.errors import UnavailableError
from placeviz.runtime.config import ConfigProto
from placeviz.train.server import Server, free_port, start_servers


def create_local_cluster(
    num_workers: int,
    num_ps: int,
    protocol: str = "grpc",
    worker_config: ConfigProto | None = None,
    ps_config: ConfigProto | None = None,
) -> tuple[list[Server], list[Server]]:
    """Start ``num_workers`` worker and ``num_ps`` ps tasks on free loopback ports, each its own
    process, all at once; returns (workers, ps_servers), as TensorFlow's helper does.

    A port free when picked is in the range the kernel also hands out to outgoing connections,
    so one of the tasks started first may take it before its own task binds it: then the tasks
    are stopped and the cluster is started again on new ports (three tries)."""
    if num_workers < 1 or num_ps < 0:
        raise ValueError("A local cluster needs at least one worker and no negative ps count")
    for attempt in itertools.count(1):
        cluster = {"worker": [f"localhost:{free_port()}" for _ in range(num_workers)]}
        if num_ps:
            cluster["ps"] = [f"localhost:{free_port()}" for _ in range(num_ps)]
        tasks = [("worker", i, worker_config) for i in range(num_workers)]
        tasks += [("ps", i, ps_config) for i in range(num_ps)]
        servers = [
            Server(cluster, job, index, protocol=protocol, config=config, start=False)
            for job, index, config in tasks
        ]
        try:
            start_servers(servers)
        except UnavailableError:
            if attempt == _TRIES:
                raise
            continue
        return servers[:num_workers], servers[num_workers:]


_TRIES = 3

__all__ = ["create_local_cluster"]
