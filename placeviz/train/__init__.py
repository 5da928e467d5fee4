"""TensorFlow 1's ``tf.train``: optimizers, the global step, device setters and cluster specs."""

from __future__ import annotations
