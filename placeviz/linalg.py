"""``pv.linalg``: TensorFlow's ``tf.linalg`` names for the rank-N products (``matmul``,
``einsum``, ``tensordot``)."""

from __future__ import annotations

from placeviz.graph.ops.linalg_ops import einsum, tensordot
from placeviz.graph.ops.math_ops import matmul

__all__ = ["einsum", "matmul", "tensordot"]
