"""``pv.layers``: TensorFlow 1's ``tf.layers``; the same classes serve ``pv.keras``."""

from __future__ import annotations

from placeviz.layers.base import Layer
from placeviz.layers.convolutional import Conv2D, conv2d
from placeviz.layers.core import Dense, dense
from placeviz.layers.flatten import Flatten, flatten
from placeviz.layers.normalization import BatchNormalization, batch_normalization
from placeviz.layers.pooling import (
    AveragePooling2D,
    MaxPooling2D,
    average_pooling2d,
    max_pooling2d,
)
