"""``Flatten``: each example as one vector, TF1's ``tf.layers.Flatten`` and Keras's."""

from __future__ import annotations

import math
from typing import Any

from placeviz import dtypes
from placeviz.graph.core import Tensor
from placeviz.graph.ops import array_ops, shape_ops
from placeviz.graph.ops.constant_op import constant
from placeviz.layers.base import Layer
from placeviz.layers.convolutional import normalize_data_format


class Flatten(Layer):
    """Keras's graph-mode reshape, keeping as much of the static shape as it can: ``[-1, n]``
    when the example's size is known, ``[batch, -1]`` when the batch is, else the run's batch."""

    base_name = "flatten"

    def __init__(self, data_format: str | None = None, name: str | None = None) -> None:
        super().__init__(name=name)
        self.data_format = normalize_data_format(data_format)

    def call(self, inputs: Tensor) -> Tensor:
        rank = inputs.shape.ndims
        if self.data_format == "NCHW" and rank and rank > 1:
            inputs = array_ops.transpose(inputs, [0, *range(2, rank), 1])
        if rank == 1:
            return array_ops.expand_dims(inputs, axis=1)
        dims = inputs.shape.dims
        if dims is not None and None not in dims[1:]:
            shape = constant([-1, math.prod(dims[1:])], dtypes.int32)  # type: ignore[arg-type]
        elif dims is not None and dims[0] is not None:
            shape = constant([dims[0], -1], dtypes.int32)
        else:
            shape = [shape_ops.shape(inputs)[0], -1]
        return array_ops.reshape(inputs, shape)


def flatten(inputs: Any, name: str | None = None, data_format: str = "channels_last") -> Tensor:
    """TF1's ``tf.layers.flatten``."""
    return Flatten(data_format=data_format, name=name)(inputs)
