"""TensorFlow's side of bench_cluster.py: the same MLP Adam step on `tf.test.create_local_cluster`
(or in one process), timed the same way; prints one JSON line that bench_cluster.py reads.

Runs only with TensorFlow's python (TF is never a dependency of placeviz); bench_cluster.py starts
it with `--tf-python`. The cluster's servers live in this process, so they end with it. With
`--processes` each task is instead a `tf.distribute.Server` in a process of its own, this process
only the client, as placeviz's tasks are and as a real cluster runs (they end with this process).

Run: /work/tfvenv/bin/python benchmarks/tf_cluster_step.py --workers 2 --ps 2 [--steps 30]
     [--processes]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

# Read by TensorFlow's import: no GPUs, quiet, and tf_keras behind tf.compat.v1.layers.
os.environ["CUDA_VISIBLE_DEVICES"] = ""
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_USE_LEGACY_KERAS"] = "1"

import tensorflow
from _cluster_graph import RESULT_MARKER, build, inputs, timed_steps

# One task of a cluster, in a process of its own: argv is the cluster spec (JSON), job, index.
# It ends when its stdin closes: when the client ends, however it ends (TF servers have no stop).
SERVER = """
import json, os, sys, threading
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
import tensorflow
tf = tensorflow.compat.v1
tf.disable_v2_behavior()
spec, job, index = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
config = tf.ConfigProto(device_count={"GPU": 0})
server = tf.train.Server(tf.train.ClusterSpec(spec), job_name=job, task_index=index, config=config)
print("ready", flush=True)
server.join()
"""


def server_processes(workers: int, ps: int) -> tuple[dict[str, list[str]], list[subprocess.Popen]]:
    """A `tf.distribute.Server` process per task on loopback, each once it said it is ready;
    each ends with this process."""
    import portpicker

    spec = {
        "worker": [f"localhost:{portpicker.pick_unused_port()}" for _ in range(workers)],
        "ps": [f"localhost:{portpicker.pick_unused_port()}" for _ in range(ps)],
    }
    tasks = [
        subprocess.Popen(
            [sys.executable, "-c", SERVER, json.dumps(spec), job, str(index)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for job, addresses in spec.items()
        for index in range(len(addresses))
    ]
    for task in tasks:
        assert task.stdout is not None
        if task.stdout.readline().strip() != "ready":
            raise SystemExit(f"a TensorFlow server exited {task.wait()} before it was ready")
    return spec, tasks


def kernel_times(tf: Any, sess: Any, graph: Any, train: Any, feed: dict, steps: int) -> dict:
    """How long each op of the graph ran in a traced step, by name (the median over ``steps``
    steps traced after the timed ones): what TF's kernels take. Its _Send/_Recv and RecvTensor
    (waits for other tasks) are not ops of the graph and are left out; an op TF fused into
    another (MatMul, BiasAdd and Relu as one _FusedMatMul) counts under the fused node's name."""
    names = {op.name for op in graph.get_operations()}
    ran: dict[str, list[int]] = {}
    for _ in range(steps):
        metadata = tf.RunMetadata()
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        sess.run(train, feed, options=options, run_metadata=metadata)
        step: dict[str, int] = {}
        for device in metadata.step_stats.dev_stats:
            for node in device.node_stats:
                if node.node_name in names:
                    took = (node.op_end_rel_micros - node.op_start_rel_micros) * 1000
                    step[node.node_name] = step.get(node.node_name, 0) + took
        for name, took in step.items():
            ran.setdefault(name, []).append(took)
    return {name: int(statistics.median(times)) for name, times in ran.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="0: one process, no cluster")
    parser.add_argument("--ps", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--widths", default="784,256,256,10")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--processes", action="store_true", help="a server process per task")
    args = parser.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    tf = tensorflow.compat.v1
    # TF 1 behaviour whole, not just graph mode: reference variables (VariableV2, ApplyAdam), as
    # placeviz builds; graph mode alone would make resource variables, a different step.
    tf.disable_v2_behavior()
    cpu_only = tf.ConfigProto(device_count={"GPU": 0})

    target, spec, started = "", None, None
    servers: list[subprocess.Popen] = []  # should this process end early, their stdin closes
    if args.workers and args.processes:
        start = time.perf_counter()
        addresses, servers = server_processes(args.workers, args.ps)
        started = time.perf_counter() - start
        target, spec = f"grpc://{addresses['worker'][0]}", tf.train.ClusterSpec(addresses)
    elif args.workers:
        start = time.perf_counter()
        workers, _ = tensorflow.test.create_local_cluster(
            args.workers, args.ps, worker_config=cpu_only, ps_config=cpu_only
        )
        started = time.perf_counter() - start
        target, spec = workers[0].target, tf.train.ClusterSpec(workers[0].server_def.cluster)
    graph, x, y, train, init = build(tf, widths, args.batch, spec)
    data, labels = inputs(widths, args.batch)
    with tf.Session(target, graph=graph, config=cpu_only) as sess:
        sess.run(init)
        times = timed_steps(sess, train, {x: data, y: labels}, args.steps, args.warmup)
        kernels = kernel_times(tf, sess, graph, train, {x: data, y: labels}, args.steps)
    result = {
        "version": f"tensorflow {tensorflow.__version__}",
        "start_seconds": started,
        "step_seconds": statistics.median(times),
        "ops": len(graph.get_operations()),
        "kernel_ns": kernels,
    }
    print(RESULT_MARKER + json.dumps(result), flush=True)
    sys.stdout.flush()
    for server in servers:
        server.kill()
        server.wait()
    # The in-process gRPC servers have no stop; leave at once rather than wait on their shutdown.
    os._exit(0)


if __name__ == "__main__":
    main()
