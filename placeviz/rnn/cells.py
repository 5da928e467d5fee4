"""TF1's cells: ``BasicRNNCell``, ``BasicLSTMCell``, ``LSTMCell`` and ``GRUCell``.

Each builds the ops TensorFlow's does, in its order and with its names (``kernel`` and ``bias``
variables, one ``MatMul`` of the input and the state concatenated, ``BiasAdd``, then the gates),
so a cell's graph, its gradients and its trained values can be compared with TensorFlow's.
"""

from __future__ import annotations

from typing import Any

from placeviz import dtypes
from placeviz.graph import initializers
from placeviz.graph.core import Tensor
from placeviz.graph.ops import array_ops, clip_ops, constant_op, loss_ops, math_ops
from placeviz.graph.shapes import TensorShape
from placeviz.layers.core import get_activation
from placeviz.rnn.cell import LayerRNNCell, LSTMStateTuple, check_floating, check_input_depth


def _activation(activation: Any) -> Any:
    return get_activation(activation) or math_ops.tanh


class BasicRNNCell(LayerRNNCell):
    """``output = new_state = activation(concat([x, state]) @ kernel + bias)``."""

    base_name = "basic_rnn_cell"

    def __init__(
        self,
        num_units: int,
        activation: Any = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(name=name, dtype=dtype, _reuse=reuse)
        self._num_units = num_units
        self._activation = _activation(activation)

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, input_shape: TensorShape) -> None:
        depth = check_input_depth(input_shape)
        self._kernel = self.weight("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.weight("bias", [self._num_units], initializers.Zeros())

    def call(self, inputs: Tensor, state: Any) -> Any:
        check_floating(state.dtype)
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel)
        gate_inputs = loss_ops.bias_add(gate_inputs, self._bias)
        output = self._activation(gate_inputs)
        return output, output


class BasicLSTMCell(LayerRNNCell):
    """The LSTM without peepholes, clipping or projection; ``forget_bias`` is added to the
    forget gate so a fresh cell remembers. Gates come out of one split in TF's order i, j, f, o."""

    base_name = "basic_lstm_cell"

    def __init__(
        self,
        num_units: int,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation: Any = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(name=name, dtype=dtype, _reuse=reuse)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self) -> Any:
        if self._state_is_tuple:
            return LSTMStateTuple(self._num_units, self._num_units)
        return 2 * self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, input_shape: TensorShape) -> None:
        depth = check_input_depth(input_shape)
        self._kernel = self.weight("kernel", [depth + self._num_units, 4 * self._num_units])
        self._bias = self.weight("bias", [4 * self._num_units], initializers.Zeros())

    def call(self, inputs: Tensor, state: Any) -> Any:
        _check_state_dtypes(state)
        one = constant_op.constant(1, dtype=dtypes.int32)
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(value=state, num_or_size_splits=2, axis=one)
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel)
        gate_inputs = loss_ops.bias_add(gate_inputs, self._bias)
        i, j, f, o = array_ops.split(value=gate_inputs, num_or_size_splits=4, axis=one)
        forget_bias = constant_op.constant(self._forget_bias, dtype=f.dtype)
        add, multiply, sigmoid = math_ops.add, math_ops.multiply, math_ops.sigmoid
        new_c = add(
            multiply(c, sigmoid(add(f, forget_bias))),
            multiply(sigmoid(i), self._activation(j)),
        )
        new_h = multiply(self._activation(new_c), sigmoid(o))
        if self._state_is_tuple:
            return new_h, LSTMStateTuple(new_c, new_h)
        return new_h, array_ops.concat([new_c, new_h], 1)


class LSTMCell(LayerRNNCell):
    """The full LSTM: peephole connections (``w_f_diag``, ``w_i_diag``, ``w_o_diag``), the
    memory clipped to ``cell_clip``, and a ``projection/kernel`` of the output to ``num_proj``
    (clipped to ``proj_clip``). ``initializer`` makes the kernels and peepholes."""

    base_name = "lstm_cell"

    def __init__(
        self,
        num_units: int,
        use_peepholes: bool = False,
        cell_clip: float | None = None,
        initializer: Any = None,
        num_proj: int | None = None,
        proj_clip: float | None = None,
        num_unit_shards: int | None = None,
        num_proj_shards: int | None = None,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation: Any = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(name=name, dtype=dtype, _reuse=reuse)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError(
                "LSTMCell: num_unit_shards and num_proj_shards (deprecated in TensorFlow) need "
                "partitioned variables, which placeviz does not have"
            )
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)
        state_h = num_proj or num_units
        self._state_size: Any = (
            LSTMStateTuple(num_units, state_h) if state_is_tuple else num_units + state_h
        )
        self._output_size = state_h

    @property
    def state_size(self) -> Any:
        return self._state_size

    @property
    def output_size(self) -> int:
        return self._output_size

    def build(self, input_shape: TensorShape) -> None:
        depth = check_input_depth(input_shape)
        units, init = self._num_units, self._initializer
        h_depth = units if self._num_proj is None else self._num_proj
        self._kernel = self.weight("kernel", [depth + h_depth, 4 * units], init)
        self._bias = self.weight("bias", [4 * units], initializers.Zeros())
        if self._use_peepholes:
            self._w_f_diag = self.weight("w_f_diag", [units], init)
            self._w_i_diag = self.weight("w_i_diag", [units], init)
            self._w_o_diag = self.weight("w_o_diag", [units], init)
        if self._num_proj is not None:
            self._proj_kernel = self.weight("projection/kernel", [units, self._num_proj], init)

    def call(self, inputs: Tensor, state: Any) -> Any:
        _check_state_dtypes(state)
        num_proj = self._num_units if self._num_proj is None else self._num_proj
        sigmoid, act = math_ops.sigmoid, self._activation
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = array_ops.slice(state, [0, 0], [-1, self._num_units])
            m_prev = array_ops.slice(state, [0, self._num_units], [-1, num_proj])
        lstm_matrix = math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._kernel)
        lstm_matrix = loss_ops.bias_add(lstm_matrix, self._bias)
        i, j, f, o = array_ops.split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        if self._use_peepholes:
            c = sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev + sigmoid(
                i + self._w_i_diag * c_prev
            ) * act(j)
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * act(j)
        if self._cell_clip is not None:
            c = clip_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        gate_o = o + self._w_o_diag * c if self._use_peepholes else o
        m = sigmoid(gate_o) * act(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else array_ops.concat([c, m], 1)
        return m, new_state


class GRUCell(LayerRNNCell):
    """The gated recurrent unit: reset and update gates (``gates/kernel``, its bias starting at
    1) and a candidate (``candidate/kernel``); ``new_h = u * h + (1 - u) * candidate``."""

    base_name = "gru_cell"

    def __init__(
        self,
        num_units: int,
        activation: Any = None,
        reuse: Any = None,
        kernel_initializer: Any = None,
        bias_initializer: Any = None,
        name: str | None = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(name=name, dtype=dtype, _reuse=reuse)
        self._num_units = num_units
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, input_shape: TensorShape) -> None:
        depth = check_input_depth(input_shape)
        units, kernel_init, bias_init = (
            self._num_units,
            self._kernel_initializer,
            self._bias_initializer,
        )
        self._gate_kernel = self.weight("gates/kernel", [depth + units, 2 * units], kernel_init)
        self._gate_bias = self.weight(
            "gates/bias", [2 * units], bias_init or initializers.Constant(1.0, self._dtype)
        )
        self._candidate_kernel = self.weight(
            "candidate/kernel", [depth + units, units], kernel_init
        )
        self._candidate_bias = self.weight(
            "candidate/bias", [units], bias_init or initializers.Zeros()
        )

    def call(self, inputs: Tensor, state: Any) -> Any:
        check_floating(state.dtype)
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel)
        gate_inputs = loss_ops.bias_add(gate_inputs, self._gate_bias)
        value = math_ops.sigmoid(gate_inputs)
        r, u = array_ops.split(value=value, num_or_size_splits=2, axis=1)
        r_state = r * state
        candidate = math_ops.matmul(array_ops.concat([inputs, r_state], 1), self._candidate_kernel)
        candidate = loss_ops.bias_add(candidate, self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


def _check_state_dtypes(state: Any) -> None:
    for tensor in state if isinstance(state, tuple) else (state,):
        check_floating(tensor.dtype)
