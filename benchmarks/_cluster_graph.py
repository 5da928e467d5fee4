"""The graph, feeds and timing loop of bench_cluster.py, written once against a framework module
bound to `tf` (placeviz, or TensorFlow's `tf.compat.v1`), so both frameworks build and time the
same step. Only NumPy is imported here: TensorFlow's python runs it without placeviz's packages."""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import numpy as np

RESULT_MARKER = "BENCH-RESULT "


def inputs(widths: list[int], batch: int) -> tuple[np.ndarray, np.ndarray]:
    """The batch and its one-hot labels, from one NumPy seed, so both frameworks get the same."""
    rng = np.random.default_rng(0)
    data = rng.random((batch, widths[0]), dtype=np.float32)
    labels = np.eye(widths[-1], dtype=np.float32)[rng.integers(0, widths[-1], batch)]
    return data, labels


def build(tf: ModuleType, widths: list[int], batch: int, spec: Any) -> tuple:
    """The MLP's Adam step; with a cluster spec, variables go to ps tasks by
    `replica_device_setter` and the rest to the default worker, as TF 1 training scripts did."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        with tf.device(tf.train.replica_device_setter(cluster=spec) if spec else None):
            x = tf.placeholder(tf.float32, [batch, widths[0]])
            labels = tf.placeholder(tf.float32, [batch, widths[-1]])
            h = x
            for i, width in enumerate(widths[1:]):
                last = i == len(widths) - 2
                h = tf.layers.dense(h, width, activation=None if last else tf.nn.relu)
            loss = tf.reduce_mean(
                tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=h)
            )
            step = tf.train.get_or_create_global_step()
            train = tf.train.AdamOptimizer(1e-3).minimize(loss, global_step=step)
            init = tf.global_variables_initializer()
    return graph, x, labels, train, init


def timed_steps(sess: Any, train: Any, feed: dict, steps: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        sess.run(train, feed)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        sess.run(train, feed)
        times.append(time.perf_counter() - start)
    return times
