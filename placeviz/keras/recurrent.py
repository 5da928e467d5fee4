"""Keras's recurrent layers as tf_keras builds them in TF1 graph mode: ``SimpleRNN``, ``LSTM``
and ``GRU`` (the v1 classes ``tf.keras.layers`` names there: ``hard_sigmoid`` gates, LSTM with
``unit_forget_bias``, GRU with the reset gate before the recurrent product, each gate's own
product of the inputs, ``implementation=1``).

Each layer's cell owns ``<layer>/<cell>/kernel``, ``recurrent_kernel`` and ``bias``. As
``backend.rnn``, the layer reads its inputs time major from a TensorArray in a ``while_loop``
and writes each step's output to another (``unroll=True``: one copy of the step per time step
instead); ``go_backwards`` processes the steps last to first, and its sequence of outputs is in
that order. TF's Keras makes resource variables and builds its loop through its own helpers,
so the graph's op names differ from TF's; the weights' names and every value are TF's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from placeviz.graph.core import Tensor
from placeviz.graph.ops import array_ops, clip_ops, math_ops
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.reverse_ops import reverse
from placeviz.graph.shapes import TensorShape
from placeviz.graph.tensor_array import TensorArray
from placeviz.graph.variable_scope import get_variable, variable_scope
from placeviz.graph.while_loop import while_loop
from placeviz.keras import initializers as keras_initializers
from placeviz.layers.base import KerasLayer
from placeviz.layers.core import get_activation, get_initializer


def hard_sigmoid(x: Tensor) -> Tensor:
    """tf_keras's ``hard_sigmoid``: ``clip(0.2 * x + 0.5, 0, 1)``."""
    return clip_ops.clip_by_value(x * 0.2 + 0.5, 0.0, 1.0)


def _activation(name: Any) -> Any:
    return hard_sigmoid if name == "hard_sigmoid" else get_activation(name)


def _initializer(initializer: Any) -> Any:
    if initializer == "orthogonal":
        return keras_initializers.Orthogonal()
    return get_initializer(initializer)


class _Recurrent(KerasLayer):
    """What the three layers share: the weights, the loop over time and the outputs."""

    cell_name = "cell"
    gates = 1
    states = 1

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        recurrent_activation: Any = "hard_sigmoid",
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros",
        return_sequences: bool = False,
        return_state: bool = False,
        go_backwards: bool = False,
        unroll: bool = False,
        trainable: bool = True,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name, trainable=trainable)
        if int(units) <= 0:
            raise ValueError(
                "Received an invalid value for argument `units`, expected a positive integer, "
                f"got {units}."
            )
        self.units = int(units)
        self.activation = _activation(activation)
        self.recurrent_activation = _activation(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializer(kernel_initializer)
        self.recurrent_initializer = _initializer(recurrent_initializer)
        self.bias_initializer = _initializer(bias_initializer)
        self.return_sequences = return_sequences
        self.return_state = return_state
        self.go_backwards = go_backwards
        self.unroll = unroll
        self._final_states: list[Tensor] = []

    def __call__(self, inputs: Any) -> Any:
        """The outputs (all steps' with ``return_sequences``, else the last), followed by the
        final states with ``return_state``."""
        output = super().__call__(inputs)
        return [output, *self._final_states] if self.return_state else output

    def build(self, input_shape: TensorShape) -> None:
        if input_shape.ndims != 3 or input_shape.dims[-1] is None:
            raise ValueError(
                f"Input {input_shape} of layer {self.name} must have rank 3 with a known last "
                "dimension: [batch, timesteps, features]"
            )
        width = self.gates * self.units
        with variable_scope(self.cell_name):
            self.kernel = self.add_weight(
                get_variable(
                    "kernel",
                    shape=[input_shape.dims[-1], width],
                    initializer=self.kernel_initializer,
                    trainable=self.trainable,
                )
            )
            self.recurrent_kernel = self.add_weight(
                get_variable(
                    "recurrent_kernel",
                    shape=[self.units, width],
                    initializer=self.recurrent_initializer,
                    trainable=self.trainable,
                )
            )
            self.bias = None
            if self.use_bias:
                self.bias = self.add_weight(
                    get_variable(
                        "bias",
                        shape=[width],
                        initializer=self._bias_initializer(),
                        trainable=self.trainable,
                    )
                )

    def _bias_initializer(self) -> Any:
        return self.bias_initializer

    def step(self, x: Tensor, states: list[Tensor]) -> tuple[Tensor, list[Tensor]]:
        """One time step: the output and the new states."""
        raise NotImplementedError

    def call(self, inputs: Tensor) -> Tensor:
        steps = array_ops.transpose(inputs, [1, 0, 2])  # time major
        if self.go_backwards:
            steps = reverse(steps, [0])
        batch = array_ops.shape(inputs)[0]
        zeros = array_ops.zeros(array_ops.stack([batch, self.units]), inputs.dtype.base_dtype)
        states = [zeros for _ in range(self.states)]
        run = self._unrolled if self.unroll else self._looped
        outputs, last, states = run(steps, states)
        self._final_states = states
        if not self.return_sequences:
            return last
        return array_ops.transpose(outputs, [1, 0, 2])

    def _unrolled(self, steps: Tensor, states: list[Tensor]) -> tuple[Tensor, Tensor, list[Tensor]]:
        count = steps.shape.dims[0]
        if count is None:
            raise ValueError(
                "Cannot unroll a RNN if the time dimension is undefined. If using a Sequential "
                "model, specify the time dimension by passing an `input_shape` or "
                "`batch_input_shape` argument to your first layer."
            )
        outputs = []
        for x in array_ops.unstack(steps, num=count):
            output, states = self.step(x, states)
            outputs.append(output)
        return array_ops.stack(outputs), outputs[-1], states

    def _looped(self, steps: Tensor, states: list[Tensor]) -> tuple[Tensor, Tensor, list[Tensor]]:
        count = array_ops.shape(steps)[0]
        inputs = TensorArray(steps.dtype, size=count, element_shape=steps.shape[1:])
        inputs = inputs.unstack(steps)
        outputs = TensorArray(steps.dtype, size=count)

        def body(time: Tensor, out: TensorArray, *carried: Tensor) -> Any:
            output, new_states = self.step(inputs.read(time), list(carried))
            for new, old in zip(new_states, carried):
                new.set_shape(old.shape)
            return (time + 1, out.write(time, output), *new_states)

        _, outputs, *states = while_loop(
            lambda time, *_: time < count, body, (0, outputs, *states), parallel_iterations=32
        )
        stacked = outputs.stack()
        last = stacked[-1]
        return stacked, last, states

    def _product(self, x: Tensor, weights: Tensor, gate: int) -> Tensor:
        """``x`` times one gate's columns of ``weights``."""
        u = self.units
        return math_ops.matmul(x, weights[:, gate * u : (gate + 1) * u])

    def _bias(self, value: Tensor, gate: int) -> Tensor:
        if self.bias is None:
            return value
        u = self.units
        return value + self.bias[gate * u : (gate + 1) * u]


class SimpleRNN(_Recurrent):
    """``activation(x @ kernel + bias + h @ recurrent_kernel)``."""

    base_name = "simple_rnn"
    cell_name = "simple_rnn_cell"

    def __init__(self, units: int, activation: Any = "tanh", **kwargs: Any) -> None:
        super().__init__(units, activation=activation, **kwargs)

    def step(self, x: Tensor, states: list[Tensor]) -> tuple[Tensor, list[Tensor]]:
        h = math_ops.matmul(x, self.kernel)
        if self.bias is not None:
            h = h + self.bias
        output = h + math_ops.matmul(states[0], self.recurrent_kernel)
        if self.activation is not None:
            output = self.activation(output)
        return output, [output]


class GRU(_Recurrent):
    """Update gate ``z``, reset gate ``r`` and candidate ``hh`` (the reset gate applied to the
    state before its recurrent product); the new state ``z * h + (1 - z) * hh``."""

    base_name = "gru"
    cell_name = "gru_cell"
    gates = 3

    def step(self, x: Tensor, states: list[Tensor]) -> tuple[Tensor, list[Tensor]]:
        h = states[0]
        x_z, x_r, x_h = (self._bias(self._product(x, self.kernel, g), g) for g in range(3))
        z = self.recurrent_activation(x_z + self._product(h, self.recurrent_kernel, 0))
        r = self.recurrent_activation(x_r + self._product(h, self.recurrent_kernel, 1))
        hh = self._activate(x_h + self._product(r * h, self.recurrent_kernel, 2))
        new = z * h + (1.0 - z) * hh
        return new, [new]

    def _activate(self, value: Tensor) -> Tensor:
        return self.activation(value) if self.activation is not None else value


class LSTM(_Recurrent):
    """Input, forget, cell and output gates; the forget gate's bias starts at one
    (``unit_forget_bias``); states ``[h, c]``."""

    base_name = "lstm"
    cell_name = "lstm_cell"
    gates = 4
    states = 2

    def __init__(self, units: int, unit_forget_bias: bool = True, **kwargs: Any) -> None:
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias

    def _bias_initializer(self) -> Any:
        if not self.unit_forget_bias:
            return self.bias_initializer
        given, u = self.bias_initializer, self.units

        def initializer(shape: Sequence[int], dtype: Any = None, **_: Any) -> Tensor:
            ones = get_initializer("ones")
            parts = [given((u,), dtype), ones((u,), dtype), given((2 * u,), dtype)]
            return array_ops.concat([convert_to_tensor(p, dtype=dtype) for p in parts], 0)

        return initializer

    def step(self, x: Tensor, states: list[Tensor]) -> tuple[Tensor, list[Tensor]]:
        h, c = states
        x_i, x_f, x_c, x_o = (self._bias(self._product(x, self.kernel, g), g) for g in range(4))
        recurrent: Callable[[int], Tensor] = lambda g: self._product(h, self.recurrent_kernel, g)  # noqa: E731
        i = self.recurrent_activation(x_i + recurrent(0))
        f = self.recurrent_activation(x_f + recurrent(1))
        c = f * c + i * self._activate(x_c + recurrent(2))
        o = self.recurrent_activation(x_o + recurrent(3))
        h = o * self._activate(c)
        return h, [h, c]

    def _activate(self, value: Tensor) -> Tensor:
        return self.activation(value) if self.activation is not None else value
