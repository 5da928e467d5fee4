"""``pv.test``: TensorFlow's test helpers that placeviz users call (``tf.test``)."""

from __future__ import annotations

from placeviz.cluster.server import create_local_cluster

__all__ = ["create_local_cluster"]
