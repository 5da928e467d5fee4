"""Running a graph on the tasks of a cluster, on Dask distributed.

Each task (``/job:ps/task:0``) is one process: a Dask worker named after the task, listening on
the address the ``ClusterSpec`` gives it (``task.py``). One Dask scheduler per cluster ties them
together (``coordinator.py``). A session on a target (``master.py``) places the graph over every
task's devices, cuts the plan into per-task partitions (``partition.py``), ships the ops each task
needs (``graph_def.py``) and runs each partition as a Dask task pinned to its worker, so tensors
cross between tasks only by Dask's worker-to-worker transfers.

Imported only when a cluster is used: ``import placeviz`` needs no Dask.
"""
