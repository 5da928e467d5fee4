"""``pv.layers``: TensorFlow 1's ``tf.layers`` (Dense); the same classes serve ``pv.keras``."""

from __future__ import annotations

from placeviz.layers.base import Layer
from placeviz.layers.core import Dense, dense
