"""``pv.nn``: the neural-network ops TensorFlow keeps under ``tf.nn``."""

from placeviz.graph.ops.math_ops import relu, sigmoid, tanh
from placeviz.graph.ops.nn_ops import softmax

__all__ = ["relu", "sigmoid", "softmax", "tanh"]
