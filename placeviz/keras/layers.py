"""``pv.keras.layers``: ``Input``, the layers ``pv.layers`` shares (Dense, Conv2D, ...) and
Keras's own, which build for training inside ``fit`` and for inference elsewhere."""

from __future__ import annotations

from typing import Any

from placeviz import dtypes
from placeviz.graph.core import Tensor
from placeviz.graph.ops import math_ops, state_ops
from placeviz.graph.ops.dropout import dropout
from placeviz.keras import backend
from placeviz.keras.attention import MultiHeadAttention
from placeviz.keras.embedding import Embedding
from placeviz.keras.normalization import BatchNormalization, LayerNormalization
from placeviz.keras.recurrent import GRU, LSTM, SimpleRNN
from placeviz.layers import convolutional, core, pooling
from placeviz.layers.base import KerasLayer
from placeviz.layers.convolutional import normalize_data_format
from placeviz.layers.core import get_activation
from placeviz.layers.flatten import Flatten as LegacyFlatten

# tf.layers' classes as Keras has them: the same layers, named as Keras names their calls
Layer = KerasLayer


class Conv2D(KerasLayer, convolutional.Conv2D):
    __doc__ = convolutional.Conv2D.__doc__


class Dense(KerasLayer, core.Dense):
    __doc__ = core.Dense.__doc__


class Flatten(KerasLayer, LegacyFlatten):
    __doc__ = LegacyFlatten.__doc__


class AveragePooling2D(KerasLayer, pooling.AveragePooling2D):
    __doc__ = pooling.AveragePooling2D.__doc__


class MaxPooling2D(KerasLayer, pooling.MaxPooling2D):
    __doc__ = pooling.MaxPooling2D.__doc__


def Input(
    shape: Any = None, batch_size: int | None = None, name: str | None = None, dtype: Any = None
) -> Tensor:
    """A symbolic batch of inputs: a placeholder of shape ``[batch_size, *shape]``."""
    dims = [batch_size, *(shape or ())]
    return state_ops.placeholder(dtypes.as_dtype(dtype or "float32"), dims, name=name or "input")


class Dropout(KerasLayer):
    """Zeroes a ``rate`` share of its inputs (scaling the rest up) in ``fit``; the identity in
    ``predict`` and ``evaluate``."""

    base_name = "dropout"

    def __init__(
        self, rate: float, noise_shape: Any = None, seed: int | None = None, name: str | None = None
    ) -> None:
        super().__init__(name=name)
        if not 0 <= rate <= 1:
            raise ValueError(
                f"Invalid value {rate} received for `rate`, expected a value between 0 and 1."
            )
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def __call__(self, inputs: Any, training: bool | None = None) -> Tensor:  # type: ignore[override]
        """``training`` overrides the learning phase for this call, as in Keras."""
        if training is None:
            return super().__call__(inputs)
        with backend.learning_phase_scope(training):
            return super().__call__(inputs)

    def call(self, inputs: Tensor) -> Tensor:
        if backend.learning_phase() and self.rate > 0:
            return dropout(inputs, rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)
        return state_ops.identity(inputs)


class Activation(KerasLayer):
    base_name = "activation"

    def __init__(self, activation: Any, name: str | None = None) -> None:
        super().__init__(name=name)
        self.activation = get_activation(activation)

    def call(self, inputs: Tensor) -> Tensor:
        return inputs if self.activation is None else self.activation(inputs)


class GlobalAveragePooling2D(KerasLayer):
    """The mean of each channel over the spatial axes."""

    base_name = "global_average_pooling2d"

    def __init__(
        self, data_format: str | None = None, keepdims: bool = False, name: str | None = None
    ) -> None:
        super().__init__(name=name)
        self.data_format = normalize_data_format(data_format)
        self.keepdims = keepdims

    def call(self, inputs: Tensor) -> Tensor:
        axes = [2, 3] if self.data_format == "NCHW" else [1, 2]
        return math_ops.reduce_mean(inputs, axis=axes, keepdims=self.keepdims)


__all__ = [
    "GRU",
    "LSTM",
    "Activation",
    "AveragePooling2D",
    "BatchNormalization",
    "Conv2D",
    "Dense",
    "Dropout",
    "Embedding",
    "Flatten",
    "GlobalAveragePooling2D",
    "Input",
    "Layer",
    "LayerNormalization",
    "MaxPooling2D",
    "MultiHeadAttention",
    "SimpleRNN",
]
