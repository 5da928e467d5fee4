"""``pv.keras.layers``: ``Input`` and the layers ``pv.layers`` shares (Dense, Conv2D, ...)."""

from __future__ import annotations

from typing import Any

from placeviz import dtypes
from placeviz.graph.core import Tensor
from placeviz.graph.ops import state_ops
from placeviz.layers.base import Layer
from placeviz.layers.convolutional import Conv2D
from placeviz.layers.core import Dense
from placeviz.layers.flatten import Flatten
from placeviz.layers.pooling import AveragePooling2D, MaxPooling2D


def Input(
    shape: Any = None, batch_size: int | None = None, name: str | None = None, dtype: Any = None
) -> Tensor:
    """A symbolic batch of inputs: a placeholder of shape ``[batch_size, *shape]``."""
    dims = [batch_size, *(shape or ())]
    return state_ops.placeholder(dtypes.as_dtype(dtype or "float32"), dims, name=name or "input")


__all__ = [
    "AveragePooling2D",
    "Conv2D",
    "Dense",
    "Flatten",
    "Input",
    "Layer",
    "MaxPooling2D",
]
