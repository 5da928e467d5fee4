"""``Conv2D``: ``activation(conv2d(inputs, kernel) + bias)``, TF1's ``tf.layers.Conv2D`` and
Keras's, with its ops named as theirs (``conv2d/Conv2D``, ``conv2d/BiasAdd``)."""

from __future__ import annotations

from typing import Any

from placeviz.graph.core import Tensor
from placeviz.graph.ops import conv_ops, loss_ops
from placeviz.graph.shapes import TensorShape
from placeviz.layers.base import Layer
from placeviz.layers.core import add_kernel_and_bias, get_activation, get_initializer

# Keras's data_format names -> TensorFlow's for rank-4 tensors.
DATA_FORMATS = {"channels_last": "NHWC", "channels_first": "NCHW"}


def normalize_tuple(value: Any, name: str) -> tuple[int, int]:
    """Keras's ``normalize_tuple`` for two spatial dimensions: an int serves both."""
    values = (value, value) if isinstance(value, int) else tuple(value)
    if len(values) != 2 or not all(isinstance(v, int) for v in values):
        raise ValueError(f"The `{name}` argument must be a tuple of 2 integers. Received: {value}")
    return values  # type: ignore[return-value]


def normalize_padding(padding: str) -> str:
    if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
        raise ValueError(
            'The `padding` argument must be a list/tuple or one of "valid", "same" (or '
            f'"causal", only for `Conv1D). Received: {padding}'
        )
    return padding.upper()


def normalize_data_format(data_format: str | None) -> str:
    fmt = (data_format or "channels_last").lower()
    if fmt not in DATA_FORMATS:
        raise ValueError(
            'The `data_format` argument must be one of "channels_first", "channels_last". '
            f"Received: {data_format}"
        )
    return DATA_FORMATS[fmt]


class Conv2D(Layer):
    base_name = "conv2d"

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        data_format: str | None = "channels_last",
        dilation_rate: Any = (1, 1),
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        trainable: bool = True,
        name: str | None = None,
        _reuse: Any = None,
    ) -> None:
        super().__init__(name=name, trainable=trainable, _reuse=_reuse)
        if int(filters) <= 0:
            raise ValueError(
                "Invalid value for argument `filters`. Expected a strictly positive value. "
                f"Received filters={filters}."
            )
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, "kernel_size")
        self.strides = normalize_tuple(strides, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, "dilation_rate")
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = get_initializer(kernel_initializer or "glorot_uniform")
        self.bias_initializer = get_initializer(bias_initializer or "zeros")
        self.kernel: Any = None
        self.bias: Any = None

    def build(self, input_shape: TensorShape) -> None:
        if input_shape.ndims is not None and input_shape.ndims < 4:
            raise ValueError(
                f'Input 0 of layer "{self.name}" is incompatible with the layer: expected '
                f"min_ndim=4, found ndim={input_shape.ndims}. Full shape received: {input_shape}"
            )
        axis = 1 if self.data_format == "NCHW" else 3
        channels = input_shape.dims[axis]
        if channels is None:
            raise ValueError(
                "The channel dimension of the inputs should be defined. The input_shape "
                f"received is {input_shape}, where axis {axis} (0-based) is the channel "
                "dimension, which found to be `None`."
            )
        add_kernel_and_bias(self, [*self.kernel_size, channels, self.filters], self.filters)

    def call(self, inputs: Tensor) -> Tensor:
        """As Keras's: ``tf.nn.convolution`` named after the class, then ``bias_add``."""
        outputs = conv_ops.convolution(
            inputs,
            self.kernel,
            padding=self.padding,
            strides=list(self.strides),
            dilations=list(self.dilation_rate),
            data_format=self.data_format,
            name="Conv2D",
        )
        if self.use_bias:
            outputs = loss_ops.bias_add(outputs, self.bias, data_format=self.data_format)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs


def conv2d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = (1, 1),
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = "zeros",
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Tensor:
    """TF1's ``tf.layers.conv2d``: a Conv2D layer made and called at once."""
    layer = Conv2D(
        filters,
        kernel_size,
        strides=strides,
        padding=padding,
        data_format=data_format,
        dilation_rate=dilation_rate,
        activation=activation,
        use_bias=use_bias,
        kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer,
        trainable=trainable,
        name=name,
        _reuse=reuse,
    )
    return layer(inputs)
