"""``pv.nn``: the neural-network ops TensorFlow keeps under ``tf.nn``."""

from placeviz.graph.ops.loss_ops import (
    bias_add,
    log_softmax,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
)
from placeviz.graph.ops.math_ops import relu, sigmoid, tanh
from placeviz.graph.ops.nn_ops import softmax

__all__ = [
    "bias_add",
    "log_softmax",
    "relu",
    "sigmoid",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits",
    "tanh",
]
