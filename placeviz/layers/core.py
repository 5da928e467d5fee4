"""``Dense``: ``activation(inputs @ kernel + bias)``, TF1's ``tf.layers.Dense`` and Keras's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from placeviz.graph import initializers
from placeviz.graph.core import Tensor
from placeviz.graph.ops import linalg_ops, loss_ops, math_ops, nn_impl, nn_ops
from placeviz.graph.shapes import TensorShape
from placeviz.graph.variable_scope import get_variable
from placeviz.layers.base import Layer

_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": math_ops.relu,
    "relu6": nn_ops.relu6,
    "elu": nn_ops.elu,
    "selu": nn_ops.selu,
    "softplus": nn_ops.softplus,
    "gelu": nn_impl.gelu,
    "leaky_relu": nn_ops.leaky_relu,
    "sigmoid": math_ops.sigmoid,
    "tanh": math_ops.tanh,
    "softmax": nn_ops.softmax,
}
_INITIALIZERS: dict[str, Callable[[], Any]] = {
    "glorot_uniform": initializers.GlorotUniform,
    "zeros": initializers.Zeros,
    "ones": initializers.Ones,
}


def get_activation(activation: str | Callable[[Tensor], Tensor] | None) -> Any:
    if activation is None or activation == "linear":
        return None
    if callable(activation):
        return activation
    try:
        return _ACTIVATIONS[activation]
    except KeyError:
        known = ", ".join(["linear", *_ACTIVATIONS])
        raise ValueError(f"Unknown activation function: {activation!r}. Known: {known}") from None


def get_initializer(initializer: Any) -> Any:
    if isinstance(initializer, str):
        try:
            return _INITIALIZERS[initializer]()
        except KeyError:
            raise ValueError(
                f"Unknown initializer {initializer!r}; known: {', '.join(_INITIALIZERS)}"
            ) from None
    return initializer


def add_kernel_and_bias(layer: Any, kernel_shape: list[int], outputs: int) -> None:
    """A Dense or convolution layer's ``kernel`` and, with ``use_bias``, its ``bias`` of one
    value per output, made with the layer's initializers and trainable as the layer is."""
    layer.kernel = layer.add_weight(
        get_variable(
            "kernel",
            shape=kernel_shape,
            initializer=layer.kernel_initializer,
            trainable=layer.trainable,
        )
    )
    if layer.use_bias:
        layer.bias = layer.add_weight(
            get_variable(
                "bias",
                shape=[outputs],
                initializer=layer.bias_initializer,
                trainable=layer.trainable,
            )
        )


class Dense(Layer):
    base_name = "dense"

    def __init__(
        self,
        units: int,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        trainable: bool = True,
        name: str | None = None,
        _reuse: Any = None,
    ) -> None:
        super().__init__(name=name, trainable=trainable, _reuse=_reuse)
        if int(units) <= 0:
            raise ValueError(f"units must be a positive integer, got {units!r}")
        self.units = int(units)
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = get_initializer(kernel_initializer or "glorot_uniform")
        self.bias_initializer = get_initializer(bias_initializer or "zeros")
        self.kernel: Any = None
        self.bias: Any = None

    def build(self, input_shape: TensorShape) -> None:
        if input_shape.ndims is None or input_shape.dims[-1] is None:
            raise ValueError(
                "The last dimension of the inputs to `Dense` should be defined. "
                f"Found {input_shape}."
            )
        fan_in = input_shape.dims[-1]
        add_kernel_and_bias(self, [fan_in, self.units], self.units)

    def call(self, inputs: Tensor) -> Tensor:
        """As TF's: a rank-2 input (or one of unknown rank) is a ``MatMul``; a higher rank is a
        ``tensordot`` of its last axis with the kernel, its static shape set from the input's."""
        rank = inputs.shape.ndims
        if rank is None or rank == 2:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:
            outputs = linalg_ops.tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape([*inputs.shape.as_list()[:-1], self.units])
        if self.use_bias:
            outputs = loss_ops.bias_add(outputs, self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs


def dense(
    inputs: Any,
    units: int,
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = "zeros",
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Tensor:
    """TF1's ``tf.layers.dense``: a Dense layer made and called at once."""
    layer = Dense(
        units,
        activation=activation,
        use_bias=use_bias,
        kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer,
        trainable=trainable,
        name=name,
        _reuse=reuse,
    )
    return layer(inputs)
