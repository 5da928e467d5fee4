"""``tf.random``: the random tensors under their TF 2 names, as ``tf.compat.v1.random`` has them."""

from placeviz.graph.ops.random_ops import random_normal as normal
from placeviz.graph.ops.random_ops import random_uniform as uniform
from placeviz.graph.ops.random_ops import set_random_seed, truncated_normal

__all__ = ["normal", "set_random_seed", "truncated_normal", "uniform"]
