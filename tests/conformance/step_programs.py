"""Training steps whose executed ops are recorded from TensorFlow (scripts/record_tf_step_ops.py)
besides the zoo's: each is written once against the module ``tf`` (``tf.compat.v1`` there,
``placeviz`` in tests/test_unread_ops.py) and returns its graph's train op, loss and feed.

Neither TensorFlow nor placeviz is imported here.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def mlp(tf: Any) -> tuple[Any, Any, dict[Any, np.ndarray]]:
    """A 12-6-3 MLP's Adam step on a softmax cross-entropy: its first layer's input gradient
    and the labels' gradient are read by nothing."""
    tf.set_random_seed(3)
    x = tf.placeholder(tf.float32, [4, 12])
    labels = tf.placeholder(tf.float32, [4, 3])
    hidden = tf.layers.dense(x, 6, activation=tf.nn.relu)
    logits = tf.layers.dense(hidden, 3)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    rng = np.random.default_rng(0)
    feed = {x: rng.random((4, 12), np.float32), labels: np.eye(3, dtype=np.float32)[[0, 1, 2, 0]]}
    return train, loss, feed


STEP_PROGRAMS = {"mlp": mlp}
