"""``MultiHeadAttention``: Keras's layer, its four projections ``EinsumDense`` weights under
``query``, ``key``, ``value`` and ``attention_output``, each an ``einsum`` plus a bias."""

from __future__ import annotations

import math
from typing import Any

from placeviz.graph.core import Tensor
from placeviz.graph.ops import linalg_ops, nn_ops
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.dropout import dropout
from placeviz.graph.shapes import TensorShape
from placeviz.graph.variable_scope import get_variable, variable_scope
from placeviz.keras import backend
from placeviz.layers.base import KerasLayer
from placeviz.layers.core import get_initializer

# Keras's equations for rank-3 inputs [batch, time, features]: the projections to
# [batch, time, heads, size], the scores [batch, heads, query time, key time], the heads'
# outputs, and the output projection back to [batch, time, features].
_PROJECT = "abc,cde->abde"
_SCORES = "aecd,abcd->acbe"
_COMBINE = "acbe,aecd->abcd"
_OUTPUT = "abcd,cde->abe"


class MultiHeadAttention(KerasLayer):
    """Scaled dot-product attention of ``query`` over ``value`` (``key`` defaults to ``value``),
    ``num_heads`` times in parallel."""

    base_name = "multi_head_attention"

    def __init__(
        self,
        num_heads: int,
        key_dim: int,
        value_dim: int | None = None,
        dropout: float = 0.0,
        use_bias: bool = True,
        output_shape: int | None = None,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        self.num_heads = int(num_heads)
        self.key_dim = int(key_dim)
        self.value_dim = int(value_dim or key_dim)
        self.dropout = float(dropout)
        self.use_bias = use_bias
        self.output_dim = output_shape
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.bias_initializer = get_initializer(bias_initializer)
        self._value: Tensor | None = None
        self._key: Tensor | None = None
        self.projections: dict[str, tuple[Any, Any]] = {}

    def __call__(self, query: Any, value: Any, key: Any = None) -> Tensor:  # type: ignore[override]
        query = convert_to_tensor(query)
        self._value = convert_to_tensor(value)
        self._key = self._value if key is None else convert_to_tensor(key)
        return super().__call__(query)

    def _weights_of(self, scope: str, kernel: list[Any], bias: list[Any]) -> None:
        with variable_scope(scope):
            w = self.add_weight(get_variable("kernel", kernel, initializer=self.kernel_initializer))
            b = None
            if self.use_bias:
                b = self.add_weight(get_variable("bias", bias, initializer=self.bias_initializer))
        self.projections[scope] = (w, b)

    def build(self, input_shape: TensorShape) -> None:
        assert self._value is not None and self._key is not None
        for shape in (input_shape, self._value.shape, self._key.shape):
            if shape.ndims != 3 or shape.dims[-1] is None:
                raise ValueError(
                    "placeviz's MultiHeadAttention takes inputs [batch, time, features] with "
                    f"known features; got {shape}"
                )
        heads, dim = self.num_heads, input_shape.dims[-1]
        self._weights_of("query", [dim, heads, self.key_dim], [heads, self.key_dim])
        self._weights_of(
            "key", [self._key.shape.dims[-1], heads, self.key_dim], [heads, self.key_dim]
        )
        self._weights_of(
            "value", [self._value.shape.dims[-1], heads, self.value_dim], [heads, self.value_dim]
        )
        out = self.output_dim or dim
        self._weights_of("attention_output", [heads, self.value_dim, out], [out])

    def _project(self, scope: str, equation: str, inputs: Tensor) -> Tensor:
        kernel, bias = self.projections[scope]
        outputs = linalg_ops.einsum(equation, inputs, kernel)
        return outputs if bias is None else outputs + bias

    def call(self, inputs: Tensor) -> Tensor:
        assert self._value is not None and self._key is not None
        query = self._project("query", _PROJECT, inputs)
        key = self._project("key", _PROJECT, self._key)
        value = self._project("value", _PROJECT, self._value)
        query = query * (1.0 / math.sqrt(float(self.key_dim)))
        scores = nn_ops.softmax(linalg_ops.einsum(_SCORES, key, query), axis=-1)
        if self.dropout and backend.learning_phase():
            scores = dropout(scores, rate=self.dropout)
        return self._project(
            "attention_output", _OUTPUT, linalg_ops.einsum(_COMBINE, scores, value)
        )
