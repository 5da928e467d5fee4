"""``pv.test``: TensorFlow's test helpers that placeviz users call (``tf.test``)."""

from __future__ import annotations

from placeviz.runtime.config import ConfigProto
from placeviz.train.server import Server, free_port


def create_local_cluster(
    num_workers: int,
    num_ps: int,
    protocol: str = "grpc",
    worker_config: ConfigProto | None = None,
    ps_config: ConfigProto | None = None,
) -> tuple[list[Server], list[Server]]:
    """Start ``num_workers`` worker and ``num_ps`` ps tasks on free loopback ports, each its own
    process; returns (workers, ps_servers), as TensorFlow's helper does."""
    if num_workers < 1 or num_ps < 0:
        raise ValueError("A local cluster needs at least one worker and no negative ps count")
    cluster = {"worker": [f"localhost:{free_port()}" for _ in range(num_workers)]}
    if num_ps:
        cluster["ps"] = [f"localhost:{free_port()}" for _ in range(num_ps)]
    workers = [
        Server(cluster, "worker", i, protocol=protocol, config=worker_config)
        for i in range(num_workers)
    ]
    ps_servers = [
        Server(cluster, "ps", i, protocol=protocol, config=ps_config) for i in range(num_ps)
    ]
    return workers, ps_servers
