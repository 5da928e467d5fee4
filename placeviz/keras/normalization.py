"""Keras's ``BatchNormalization`` (training from the learning phase) and ``LayerNormalization``."""

from __future__ import annotations

from typing import Any

from placeviz.graph import initializers
from placeviz.graph.core import Tensor
from placeviz.graph.ops import array_ops, nn_impl
from placeviz.graph.shapes import TensorShape
from placeviz.graph.variable_scope import get_variable
from placeviz.keras import backend
from placeviz.layers import normalization
from placeviz.layers.base import KerasLayer
from placeviz.layers.core import get_initializer


class BatchNormalization(KerasLayer, normalization.BatchNormalization):
    """tf.layers' BatchNormalization, in training when ``fit`` builds it unless told otherwise."""

    def __call__(self, inputs: Any, training: Any = None) -> Tensor:
        return super().__call__(inputs, backend.learning_phase() if training is None else training)


class LayerNormalization(KerasLayer):
    """Normalizes each example over ``axis`` with its own mean and variance, then scales by
    ``gamma`` and shifts by ``beta`` (both shaped like the normalized axes)."""

    base_name = "layer_normalization"

    def __init__(
        self,
        axis: int | list[int] | tuple[int, ...] = -1,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = "zeros",
        gamma_initializer: Any = "ones",
        trainable: bool = True,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name, trainable=trainable)
        self.axis = [axis] if isinstance(axis, int) else list(axis)
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = get_initializer(beta_initializer) or initializers.Zeros()
        self.gamma_initializer = get_initializer(gamma_initializer) or initializers.Ones()
        self.gamma: Any = None
        self.beta: Any = None

    def build(self, input_shape: TensorShape) -> None:
        rank = input_shape.ndims
        if rank is None:
            raise ValueError("LayerNormalization needs inputs of known rank.")
        self.axis = sorted(a + rank if a < 0 else a for a in self.axis)
        for a in self.axis:
            if not 0 <= a < rank:
                raise ValueError(f"Invalid axis: {a}")
        shape = [input_shape.dims[a] for a in self.axis]
        if self.scale:
            self.gamma = self.add_weight(
                get_variable("gamma", shape, initializer=self.gamma_initializer)
            )
        if self.center:
            self.beta = self.add_weight(
                get_variable("beta", shape, initializer=self.beta_initializer)
            )

    def call(self, inputs: Tensor) -> Tensor:
        mean, variance = nn_impl.moments(inputs, self.axis, keep_dims=True)
        rank = inputs.shape.ndims
        assert rank is not None
        shape = [inputs.shape.dims[a] if a in self.axis else 1 for a in range(rank)]

        def broadcast(weight: Any) -> Any:
            return None if weight is None else array_ops.reshape(weight, shape)

        return nn_impl.batch_normalization(
            inputs,
            mean,
            variance,
            offset=broadcast(self.beta),
            scale=broadcast(self.gamma),
            variance_epsilon=self.epsilon,
        )
