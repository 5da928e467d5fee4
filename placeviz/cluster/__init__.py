"""Running a graph on the tasks of a cluster, on Dask distributed.

Each task (``/job:ps/task:0``) is one process (``process.py``): a Dask worker named after the
task, listening on the address the ``ClusterSpec`` (``cluster_spec.py``) gives it, started by a
``Server`` (``server.py``, forked by ``launcher.py``); what it runs is ``task.py``'s. One Dask
scheduler per cluster ties them together (``coordinator.py``). A session on a target hands its
runs to the master (``master.py``): the plan is cut into per-task stages (``partition.py``,
``program.py``), each task gets the ops it needs (``graph_def.py``) and its share of a run once,
and a step is one message to each task, which sends its tensors straight to the tasks that read
them (``steps.py``).

Imported only when a cluster is used: ``import placeviz`` needs no Dask.
"""
