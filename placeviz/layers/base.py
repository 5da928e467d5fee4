"""``Layer``: a callable that owns variables under its own variable scope.

Every call is remembered on its output tensor (layer and input), so a functional model can be
rebuilt on other inputs: once per replica of a MirroredStrategy, for instance.
"""

from __future__ import annotations

import weakref
from typing import Any

from placeviz.graph.core import Tensor
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.shapes import TensorShape
from placeviz.graph.variable_scope import VariableScope, reentered, variable_scope

# output tensor -> (layer, input tensor): the functional graph of layer calls.
_CALLS: weakref.WeakKeyDictionary[Tensor, tuple[Layer, Tensor]] = weakref.WeakKeyDictionary()


def layer_call(tensor: Tensor) -> tuple[Layer, Tensor] | None:
    """The layer call that produced ``tensor``, if a layer did."""
    return _CALLS.get(tensor)


class Layer:
    """Builds its variables on the first call (when the input shape is known), reuses them after."""

    base_name = "layer"
    # tf.layers' (legacy) layers call again inside their first name scope (dense/MatMul_1);
    # Keras's open a fresh one for each call (dense_1/MatMul)
    reenters_first_scope = True

    def __init__(self, name: str | None = None, trainable: bool = True, _reuse: Any = None) -> None:
        self._given_name = name
        self.trainable = trainable
        self._reuse = _reuse
        self._scope: VariableScope | None = None
        self.built = False
        self._weights: list[Any] = []

    @property
    def name(self) -> str:
        if self._scope is not None:
            return self._scope.name
        return self._given_name or self.base_name

    @property
    def weights(self) -> list[Any]:
        return list(self._weights)

    @property
    def trainable_weights(self) -> list[Any]:
        return list(self._weights) if self.trainable else []

    trainable_variables = trainable_weights
    variables = weights

    def add_weight(self, variable: Any) -> Any:
        self._weights.append(variable)
        return variable

    def __call__(self, inputs: Any) -> Tensor:
        tensor = convert_to_tensor(inputs)
        if self._scope is None:
            with variable_scope(
                self._given_name, default_name=self.base_name, reuse=self._reuse
            ) as scope:
                self._scope = scope
                outputs = self._build_and_call(tensor)
        elif self.reenters_first_scope:
            with reentered(self._scope):
                outputs = self._build_and_call(tensor)
        else:
            with variable_scope(self._scope, reuse=True):
                outputs = self._build_and_call(tensor)
        _CALLS[outputs] = (self, tensor)
        return outputs

    def _build_and_call(self, tensor: Tensor) -> Tensor:
        if not self.built:
            self.build(tensor.shape)
            self.built = True
        return self.call(tensor)

    def build(self, input_shape: TensorShape) -> None:
        """Create the variables, knowing the input's shape."""

    def call(self, inputs: Tensor) -> Tensor:
        raise NotImplementedError


class KerasLayer(Layer):
    """A Keras layer: each call after the first opens a name scope of its own (``dense_1/``)."""

    reenters_first_scope = False
