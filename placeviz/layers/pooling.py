"""``MaxPooling2D`` and ``AveragePooling2D``: TF1's ``tf.layers`` pooling and Keras's, one
MaxPool or AvgPool op in the layer's scope."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from placeviz.graph.core import Tensor
from placeviz.graph.ops import conv_ops
from placeviz.layers.base import Layer
from placeviz.layers.convolutional import (
    normalize_data_format,
    normalize_padding,
    normalize_tuple,
)


class _Pooling2D(Layer):
    """A window of ``pool_size`` every ``strides`` (``pool_size`` when not given)."""

    pool: Callable[..., Tensor]

    def __init__(
        self,
        pool_size: Any,
        strides: Any = None,
        padding: str = "valid",
        data_format: str | None = "channels_last",
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        self.pool_size = normalize_tuple(pool_size, "pool_size")
        self.strides = normalize_tuple(pool_size if strides is None else strides, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)

    def call(self, inputs: Tensor) -> Tensor:
        channels_first = self.data_format == "NCHW"
        ksize = [1, 1, *self.pool_size] if channels_first else [1, *self.pool_size, 1]
        strides = [1, 1, *self.strides] if channels_first else [1, *self.strides, 1]
        return type(self).pool(inputs, ksize, strides, self.padding, data_format=self.data_format)


class MaxPooling2D(_Pooling2D):
    base_name = "max_pooling2d"
    pool = staticmethod(conv_ops.max_pool)


class AveragePooling2D(_Pooling2D):
    base_name = "average_pooling2d"
    pool = staticmethod(conv_ops.avg_pool)


def max_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """TF1's ``tf.layers.max_pooling2d``."""
    return MaxPooling2D(pool_size, strides, padding, data_format, name)(inputs)


def average_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """TF1's ``tf.layers.average_pooling2d``."""
    return AveragePooling2D(pool_size, strides, padding, data_format, name)(inputs)
