"""``RNNCell``: one time step of a recurrent network, ``(output, new_state) = cell(x, state)``.

TF1's cells are legacy ``tf.layers`` layers (tf_keras's ``legacy_cells``), and placeviz names
their ops as those do. A cell's first call opens its variable scope (``rnn/basic_lstm_cell``)
and builds its variables there; later calls (the next time step) re-enter that scope's first
name scope with reuse, so step two's ops are ``rnn/basic_lstm_cell/MatMul_1``. A plain
``RNNCell`` (``MultiRNNCell``) first re-enters the variable scope it is called in, which opens
that scope's name once more: its ops are ``rnn/rnn/multi_rnn_cell/...``, as TensorFlow's are.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from placeviz import dtypes, nest
from placeviz.graph.core import Tensor, get_default_graph, is_tensor_like
from placeviz.graph.ops import array_ops, constant_op
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.shape_ops import constant_value
from placeviz.graph.shapes import TensorShape
from placeviz.graph.variable_scope import (
    VariableScope,
    get_variable,
    get_variable_scope,
    reentered,
    variable_scope,
)
from placeviz.layers.base import Layer


class LSTMStateTuple(NamedTuple):
    """An LSTM's state: ``c`` (the memory) and ``h`` (the output), in that order."""

    c: Any
    h: Any

    @property
    def dtype(self) -> dtypes.DType:
        if self.c.dtype != self.h.dtype:
            raise TypeError(
                f"Inconsistent dtypes for internal state: {self.c.dtype} vs {self.h.dtype}"
            )
        return self.c.dtype


class RNNCell(Layer):
    """The abstract cell: ``state_size``, ``output_size``, ``zero_state`` and ``call``."""

    def __init__(
        self, name: str | None = None, dtype: Any = None, trainable: bool = True, _reuse: Any = None
    ) -> None:
        super().__init__(name=name, trainable=trainable, _reuse=_reuse)
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self._called_in: VariableScope | None = None

    @property
    def dtype(self) -> dtypes.DType | None:
        return self._dtype

    @property
    def state_size(self) -> Any:
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self) -> Any:
        raise NotImplementedError("Abstract method")

    def __call__(self, inputs: Any, state: Any) -> Any:  # type: ignore[override]
        if self._called_in is None:
            self._called_in = get_variable_scope()
        with variable_scope(self._called_in):
            return self._layer_call(inputs, state)

    def _layer_call(self, inputs: Any, state: Any) -> Any:
        """A legacy layer's call: the first opens the cell's scope, later ones re-enter it."""
        inputs = convert_to_tensor(inputs)
        if self._scope is None:
            name = self._given_name if self._reuse else None
            with variable_scope(
                name, default_name=self._given_name or self.base_name, reuse=self._reuse
            ) as scope:
                self._scope = scope
                return self._build_and_call_step(inputs, state)
        with reentered(self._scope):
            return self._build_and_call_step(inputs, state)

    def _build_and_call_step(self, inputs: Tensor, state: Any) -> Any:
        self._check_input(inputs)
        if self._dtype is None:
            self._dtype = inputs.dtype.base_dtype
        if not self.built:
            self.build(inputs.shape)
            self.built = True
        return self.call(inputs, state)

    def _check_input(self, inputs: Tensor) -> None:
        """What the cell's ``input_spec`` demands: none for a plain cell."""

    def call(self, inputs: Tensor, state: Any) -> Any:  # type: ignore[override]
        raise NotImplementedError

    def weight(self, name: str, shape: list[int], initializer: Any = None) -> Any:
        """A variable of the cell's scope and dtype, kept among its weights."""
        return self.add_weight(
            get_variable(
                name,
                shape=shape,
                dtype=self._dtype,
                initializer=initializer,
                trainable=self.trainable,
            )
        )

    def get_initial_state(
        self, inputs: Any = None, batch_size: Any = None, dtype: Any = None
    ) -> Any:
        if inputs is not None:
            inputs = convert_to_tensor(inputs, name="inputs")
            batch_size = inputs.shape.dims[0] if inputs.shape.dims else None
            dtype = inputs.dtype
            if batch_size is None:
                batch_size = array_ops.shape(inputs)[0]
        if batch_size is None or dtype is None:
            raise ValueError(
                "batch_size and dtype cannot be None while constructing initial state: "
                f"batch_size={batch_size}, dtype={dtype}"
            )
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """Zeros of ``[batch_size, size]`` for each size of ``state_size``, built as TF builds
        them (a ``Fill`` of a concatenated shape) under ``<Class>ZeroState``."""
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return zero_state_tensors(self.state_size, batch_size, dtype)


class LayerRNNCell(RNNCell):
    """A cell that is a layer itself: it opens no extra scope around its own."""

    def __call__(self, inputs: Any, state: Any) -> Any:  # type: ignore[override]
        return self._layer_call(inputs, state)

    def _check_input(self, inputs: Tensor) -> None:
        """``InputSpec(ndim=2)``, as every TF cell declares, with Keras's words."""
        rank = inputs.shape.ndims
        if rank is not None and rank != 2:
            raise ValueError(
                f'Input 0 of layer "{self.name.split("/")[-1]}" is incompatible with the layer: '
                f"expected ndim=2, found ndim={rank}. Full shape received: "
                f"{tuple(inputs.shape.as_list())}"
            )
        check_floating(inputs.dtype)


def check_floating(dtype: Any) -> None:
    """Cells compute with sigmoid and tanh, which TF has for floats only."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(
            "RNN cell only supports floating point inputs, but received dtype: "
            f"<dtype: '{dtype.name}'>"
        )


def check_input_depth(input_shape: TensorShape) -> int:
    """The input's last dimension, which the kernel's shape needs."""
    depth = input_shape.dims[-1] if input_shape.dims else None
    if depth is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, received shape: {input_shape}")
    return depth


def zero_state_tensors(state_size: Any, batch_size: Any, dtype: Any) -> Any:
    """TF's ``_zero_state_tensors``: per size, ``zeros(concat([batch], [size]))`` with its
    static shape set; TF also builds (and never uses) the static shape's two constants."""

    def zeros(size: Any) -> Tensor:
        value = array_ops.zeros(_shape_vector(batch_size, size), dtype=dtype)
        _shape_vector(batch_size, size, static=True)
        batch = _static_batch(batch_size)
        value.set_shape([batch, *_size_dims(size)])
        return value

    return nest.map_structure(zeros, state_size)


def _shape_vector(batch_size: Any, size: Any, static: bool = False) -> Any:
    """TF's ``_concat(prefix, suffix)``: both as int32 vectors, concatenated when not static."""
    prefix = _vector(batch_size)
    suffix = _vector(size)
    if static:
        return None
    return array_ops.concat((prefix, suffix), 0)


def _vector(value: Any) -> Tensor:
    if is_tensor_like(value):
        tensor = convert_to_tensor(value)
        return array_ops.expand_dims(tensor, 0) if tensor.shape.ndims == 0 else tensor
    dims = _size_dims(value)
    return constant_op.constant(dims, dtypes.int32)


def _size_dims(size: Any) -> list[int]:
    if isinstance(size, TensorShape):
        return [int(d) for d in size.as_list()]  # type: ignore[arg-type]
    if isinstance(size, list | tuple):
        return [int(d) for d in size]
    return [int(size)]


def _static_batch(batch_size: Any) -> int | None:
    if not is_tensor_like(batch_size):
        return int(batch_size)
    value = constant_value(convert_to_tensor(batch_size))
    return None if value is None else int(value)
