"""``Server``: one task of a cluster. Running clusters is a later placeviz feature."""

from __future__ import annotations

from typing import Any

from placeviz.errors import UnimplementedError
from placeviz.train.cluster_spec import ClusterSpec


class Server:
    """Says plainly that placeviz cannot start a cluster task yet, naming the task asked for."""

    def __init__(
        self,
        server_or_cluster_def: ClusterSpec | Any,
        job_name: str | None = None,
        task_index: int | None = None,
        protocol: str | None = None,
        config: Any = None,
        start: bool = True,
    ) -> None:
        task = f"/job:{job_name}/task:{task_index or 0}" if job_name else "a cluster task"
        raise UnimplementedError(
            f"placeviz does not run a cluster yet, so it cannot start the server for {task}. "
            "Pin ops to jobs and tasks to see the requested placement; sessions run in this "
            "process (pv.Session())."
        )
