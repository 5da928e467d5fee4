"""Conformance programs: TF1's RNN cells and statically unrolled RNNs (issue 26, the part that
needs no control flow). Weights start from a fixed pattern (an initializer function of the
shape), so forward values, gradients and values after training steps are compared."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.harness import Note, Run, Runs, program
from conformance.programs import family

__all__: list[str] = []

STEPS, BATCH, DEPTH = 3, 2, 3


def _pattern(tf: Any) -> Any:
    """An initializer every variable can share: distinct values of any shape, so a gate taken
    from the wrong slice of the kernel shows in the values."""

    def initializer(shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        n = int(np.prod(shape))
        values = 0.5 * np.sin(np.arange(n) * 0.7 + n)
        return tf.constant(values.reshape(shape), dtype=dtype or tf.float32)

    return initializer


def _inputs(tf: Any, dtype: Any = np.float32, steps: int = STEPS) -> list[Any]:
    data = np.cos(np.arange(steps * BATCH * DEPTH) * 0.9).reshape(steps, BATCH, DEPTH)
    return [tf.constant(data[t].astype(dtype), name=f"x{t}") for t in range(steps)]


def _forward(make_cell: Any, dtype: Any = np.float32) -> Any:
    """The cell unrolled by static_rnn over three steps: every output and the last state."""

    def build(tf: Any) -> Any:
        with tf.variable_scope("model", initializer=_pattern(tf)):
            outputs, state = tf.nn.static_rnn(
                make_cell(tf), _inputs(tf, dtype), dtype=tf.as_dtype(dtype)
            )
        return Runs(tf.global_variables_initializer(), [outputs, state])

    return build


def _cells(tf: Any) -> Any:
    return tf.nn.rnn_cell


family(
    "rnn_forward",
    {
        "basic_rnn": _forward(lambda tf: _cells(tf).BasicRNNCell(4)),
        "basic_rnn_relu": _forward(lambda tf: _cells(tf).BasicRNNCell(4, activation=tf.nn.relu)),
        "basic_lstm": _forward(lambda tf: _cells(tf).BasicLSTMCell(4)),
        "basic_lstm_forget_bias_0": _forward(
            lambda tf: _cells(tf).BasicLSTMCell(4, forget_bias=0.0)
        ),
        "basic_lstm_concatenated_state": _forward(
            lambda tf: _cells(tf).BasicLSTMCell(3, state_is_tuple=False)
        ),
        "basic_lstm_named": _forward(lambda tf: _cells(tf).BasicLSTMCell(2, name="enc")),
        "lstm": _forward(lambda tf: _cells(tf).LSTMCell(4)),
        "lstm_peepholes": _forward(lambda tf: _cells(tf).LSTMCell(4, use_peepholes=True)),
        "lstm_projection": _forward(lambda tf: _cells(tf).LSTMCell(4, num_proj=2)),
        "lstm_clipped": _forward(
            lambda tf: _cells(tf).LSTMCell(
                5, use_peepholes=True, cell_clip=0.3, num_proj=3, proj_clip=0.1
            )
        ),
        "lstm_concatenated_state": _forward(
            lambda tf: _cells(tf).LSTMCell(3, num_proj=2, state_is_tuple=False)
        ),
        "lstm_initializer": _forward(
            lambda tf: _cells(tf).LSTMCell(
                3, use_peepholes=True, initializer=tf.constant_initializer(0.25)
            )
        ),
        "gru": _forward(lambda tf: _cells(tf).GRUCell(4)),
        "gru_initializers": _forward(
            lambda tf: _cells(tf).GRUCell(
                3,
                kernel_initializer=tf.constant_initializer(-0.2),
                bias_initializer=tf.constant_initializer(0.5),
            )
        ),
        "multi_lstm": _forward(
            lambda tf: _cells(tf).MultiRNNCell([_cells(tf).BasicLSTMCell(n) for n in (4, 3)])
        ),
        "multi_mixed": _forward(
            lambda tf: _cells(tf).MultiRNNCell(
                [_cells(tf).GRUCell(3), _cells(tf).LSTMCell(2), _cells(tf).BasicRNNCell(2)]
            )
        ),
        "multi_concatenated_state": _forward(
            lambda tf: _cells(tf).MultiRNNCell(
                [_cells(tf).GRUCell(3), _cells(tf).BasicRNNCell(2)], state_is_tuple=False
            )
        ),
        "residual_gru": _forward(lambda tf: _cells(tf).ResidualWrapper(_cells(tf).GRUCell(3))),
        "residual_fn": _forward(
            lambda tf: _cells(tf).ResidualWrapper(
                _cells(tf).BasicRNNCell(3), residual_fn=lambda i, o: i * o
            )
        ),
        "dropout_keep_all": _forward(
            lambda tf: _cells(tf).DropoutWrapper(_cells(tf).BasicLSTMCell(3))
        ),
        "float64": _forward(lambda tf: _cells(tf).BasicLSTMCell(3), dtype=np.float64),
        "device_wrapper": _forward(
            lambda tf: _cells(tf).DeviceWrapper(_cells(tf).GRUCell(3), "/cpu:0")
        ),
    },
)


# Dropout draws from TensorFlow's generator, which placeviz does not reproduce: the graph and
# the shapes are compared (the seeds each dropout op gets are attrs of the graph).
family(
    "rnn_dropout",
    {
        "all_three": _forward(
            lambda tf: _cells(tf).DropoutWrapper(
                _cells(tf).BasicLSTMCell(4),
                input_keep_prob=0.5,
                output_keep_prob=0.8,
                state_keep_prob=0.7,
                seed=3,
            )
        ),
        "multi_state": _forward(
            lambda tf: _cells(tf).DropoutWrapper(
                _cells(tf).MultiRNNCell([_cells(tf).BasicLSTMCell(3), _cells(tf).GRUCell(2)]),
                state_keep_prob=0.6,
            )
        ),
        "per_layer": _forward(
            lambda tf: _cells(tf).MultiRNNCell(
                [
                    _cells(tf).DropoutWrapper(_cells(tf).GRUCell(3), output_keep_prob=0.5)
                    for _ in range(2)
                ]
            )
        ),
    },
    skip=("values",),
)


# Variational dropout (one mask for every step): the noise is drawn when the wrapper is built,
# so its ops, names and seeds are compared; values only where they do not depend on the draw.
def _variational(tf: Any, cell: Any, **keep: Any) -> Any:
    return _cells(tf).DropoutWrapper(
        cell, variational_recurrent=True, dtype=tf.float32, seed=5, **keep
    )


family(
    "rnn_dropout_variational",
    {
        "output": _forward(
            lambda tf: _variational(tf, _cells(tf).BasicLSTMCell(4), output_keep_prob=0.5)
        ),
        "all_three": _forward(
            lambda tf: _variational(
                tf,
                _cells(tf).BasicLSTMCell(4),
                input_keep_prob=0.6,
                output_keep_prob=0.8,
                state_keep_prob=0.7,
                input_size=tf.TensorShape([DEPTH]),
            )
        ),
        "multi_state": _forward(
            lambda tf: _variational(
                tf,
                _cells(tf).MultiRNNCell([_cells(tf).BasicLSTMCell(3), _cells(tf).GRUCell(2)]),
                state_keep_prob=0.6,
            )
        ),
        "no_seed": _forward(
            lambda tf: _cells(tf).DropoutWrapper(
                _cells(tf).GRUCell(3),
                output_keep_prob=0.5,
                variational_recurrent=True,
                dtype=tf.float32,
            )
        ),
    },
    skip=("values",),
)


@program(cpus=2)
def rnn_dropout_variational_layer_per_device(tf: Any) -> Any:
    """Each layer's wrapper built under its device: the noise is drawn there, beside the
    layer that uses it."""
    cells = tf.nn.rnn_cell
    layers = []
    for device in ("/cpu:0", "/cpu:1"):
        with tf.device(device):
            cell = _variational(tf, cells.BasicLSTMCell(3), output_keep_prob=0.5)
        layers.append(cells.DeviceWrapper(cell, device))
    with tf.variable_scope("lm", initializer=_pattern(tf)):
        outputs, _ = tf.nn.static_rnn(cells.MultiRNNCell(layers), _inputs(tf), dtype=tf.float32)
    return Runs(tf.global_variables_initializer(), [tf.shape(o) for o in outputs])


@program
def rnn_dropout_variational_one_mask_for_every_step(tf: Any) -> Any:
    """What variational means, true whatever the draw: every step and every row of the batch
    zeroes the same units, and a kept unit is the undropped output over ``keep_prob``."""
    cells = tf.nn.rnn_cell
    with tf.variable_scope("m", initializer=_pattern(tf)):
        plain, _ = tf.nn.static_rnn(cells.BasicLSTMCell(4), _inputs(tf), dtype=tf.float32)
    with tf.variable_scope("m", initializer=_pattern(tf), reuse=True):
        wrapped = _variational(tf, cells.BasicLSTMCell(4), output_keep_prob=0.5)
        dropped, _ = tf.nn.static_rnn(wrapped, _inputs(tf), dtype=tf.float32)
    zeros = [tf.equal(d, 0.0) for d in dropped]
    same_mask = [tf.equal(z, zeros[0][:1]) for z in zeros]
    kept_scaled = [
        tf.logical_or(z, tf.abs(d - p / 0.5) < 1e-6) for z, d, p in zip(zeros, dropped, plain)
    ]
    return Runs(tf.global_variables_initializer(), [same_mask, kept_scaled])


@program
def rnn_dropout_variational_keep_fed_one(tf: Any) -> Any:
    """Keep probabilities fed at run time: the noise is built for every part, and fed 1.0 the
    masks keep everything, so the values are the undropped cell's, through training steps."""
    keep = tf.placeholder_with_default(1.0, [], name="keep")
    with tf.variable_scope("m", initializer=_pattern(tf)):
        cell = _variational(
            tf,
            tf.nn.rnn_cell.BasicLSTMCell(3),
            input_keep_prob=keep,
            output_keep_prob=keep,
            state_keep_prob=keep,
            input_size=DEPTH,
        )
        outputs, state = tf.nn.static_rnn(cell, _inputs(tf), dtype=tf.float32)
    loss = tf.reduce_mean(tf.square(outputs[-1] - 0.5), name="loss")
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return Runs(
        tf.global_variables_initializer(),
        [outputs, state],
        step,
        step,
        [loss, tf.trainable_variables()],
    )


@program(error=["When variational_recurrent=True, dtype must be provided"])
def rnn_error_variational_without_dtype(tf: Any) -> Any:
    return tf.nn.rnn_cell.DropoutWrapper(
        tf.nn.rnn_cell.GRUCell(2), output_keep_prob=0.5, variational_recurrent=True
    )


@program(error=["input_size must be provided"])
def rnn_error_variational_input_dropout_without_input_size(tf: Any) -> Any:
    return tf.nn.rnn_cell.DropoutWrapper(
        tf.nn.rnn_cell.GRUCell(2), input_keep_prob=0.5, variational_recurrent=True, dtype=tf.float32
    )


@program
def rnn_initial_state_given(tf: Any) -> Any:
    cell = tf.nn.rnn_cell.BasicLSTMCell(3)
    c = tf.constant(np.full((BATCH, 3), 0.5, np.float32), name="c0")
    h = tf.constant(np.full((BATCH, 3), -0.5, np.float32), name="h0")
    with tf.variable_scope("m", initializer=_pattern(tf)):
        outputs, state = tf.nn.static_rnn(
            cell, _inputs(tf), initial_state=tf.nn.rnn_cell.LSTMStateTuple(c, h)
        )
    return Runs(tf.global_variables_initializer(), [outputs, state])


@program
def rnn_unknown_batch_size(tf: Any) -> Any:
    """A batch known only at run time: the zero state's shape is built from ``tf.shape``."""
    xs = [tf.placeholder(tf.float32, [None, DEPTH], name=f"x{t}") for t in range(2)]
    with tf.variable_scope("m", initializer=_pattern(tf)):
        outputs, state = tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(3), xs, dtype=tf.float32)
    feed = {x: np.full((4, DEPTH), 0.1 * (i + 1), np.float32) for i, x in enumerate(xs)}
    return Runs(tf.global_variables_initializer(), Run([outputs, state], feed))


@program
def rnn_named_scope_and_two_rnns(tf: Any) -> Any:
    """An encoder and a decoder in their own scopes; the decoder starts from the encoder."""
    with tf.variable_scope("s2s", initializer=_pattern(tf)):
        _, state = tf.nn.static_rnn(
            tf.nn.rnn_cell.GRUCell(3), _inputs(tf), dtype=tf.float32, scope="encoder"
        )
        outputs, _ = tf.nn.static_rnn(
            tf.nn.rnn_cell.GRUCell(3), _inputs(tf, steps=2), initial_state=state, scope="decoder"
        )
    return Runs(tf.global_variables_initializer(), outputs)


@program
def rnn_cell_called_by_hand(tf: Any) -> Any:
    """A cell called twice outside static_rnn: the second call reuses its variables."""
    cell = tf.nn.rnn_cell.BasicLSTMCell(3)
    xs = _inputs(tf, steps=2)
    with tf.variable_scope("m", initializer=_pattern(tf)):
        state = cell.zero_state(BATCH, tf.float32)
        out1, state = cell(xs[0], state)
        out2, state = cell(xs[1], state)
    return Runs(
        tf.global_variables_initializer(),
        [out1, out2, state],
        Note(variables=[v.name for v in tf.global_variables()]),
    )


@program
def rnn_zero_states(tf: Any) -> Any:
    cells = tf.nn.rnn_cell
    multi = cells.MultiRNNCell([cells.BasicLSTMCell(2), cells.GRUCell(3)])
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    return Run(
        [
            multi.zero_state(2, tf.float32),
            cells.LSTMCell(3, num_proj=2).zero_state(1, tf.float64),
            cells.GRUCell(2).zero_state(tf.shape(x)[0], tf.float32),
            cells.DeviceWrapper(cells.BasicRNNCell(2), "/cpu:0").zero_state(2, tf.float32),
        ],
        {x: np.zeros((3, 2), np.float32)},
    )


@program
def rnn_cell_sizes(tf: Any) -> Any:
    cells = tf.nn.rnn_cell

    def sizes(cell: Any) -> Any:
        return [str(cell.state_size), str(cell.output_size)]

    return Note(
        basic_rnn=sizes(cells.BasicRNNCell(3)),
        basic_lstm=sizes(cells.BasicLSTMCell(3)),
        basic_lstm_concat=sizes(cells.BasicLSTMCell(3, state_is_tuple=False)),
        lstm_proj=sizes(cells.LSTMCell(4, num_proj=2)),
        gru=sizes(cells.GRUCell(5)),
        multi=sizes(cells.MultiRNNCell([cells.GRUCell(2), cells.BasicLSTMCell(3)])),
        wrapped=sizes(cells.DropoutWrapper(cells.ResidualWrapper(cells.LSTMCell(4)))),
    )


@program
def rnn_bidirectional(tf: Any) -> Any:
    with tf.variable_scope("m", initializer=_pattern(tf)):
        outputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(
            tf.nn.rnn_cell.BasicLSTMCell(3),
            tf.nn.rnn_cell.GRUCell(2),
            _inputs(tf),
            dtype=tf.float32,
        )
    return Runs(tf.global_variables_initializer(), [outputs, state_fw, state_bw])


# -- a layer per device: DeviceWrapper ---------------------------------------------------------


def _layer_per_device(tf: Any, devices: list[str], train: bool = False) -> Any:
    """An LSTM with one layer per device, as tensorflow/nmt builds it; trained or not."""
    cells = tf.nn.rnn_cell
    stack = cells.MultiRNNCell(
        [cells.DeviceWrapper(cells.BasicLSTMCell(3), device) for device in devices]
    )
    with tf.variable_scope("lm", initializer=_pattern(tf)):
        outputs, state = tf.nn.static_rnn(stack, _inputs(tf), dtype=tf.float32)
    if not train:
        return Runs(tf.global_variables_initializer(), [outputs, state])
    loss = tf.reduce_mean(tf.square(outputs[-1] - 0.5), name="loss")
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return Runs(tf.global_variables_initializer(), step, step, [loss, tf.global_variables()])


family(
    "rnn_layer_per_device",
    {
        "two_cpus": lambda tf: _layer_per_device(tf, ["/cpu:0", "/cpu:1"]),
        "two_cpus_trained": lambda tf: _layer_per_device(tf, ["/cpu:1", "/cpu:0"], train=True),
        "device_function": lambda tf: _layer_per_device(
            tf, [lambda op: "/cpu:1", lambda op: "/cpu:0"]
        ),
    },
    cpus=2,
)


@program(soft=True)
def rnn_layer_per_gpu_soft_placement(tf: Any) -> Any:
    """No GPU in the session: soft placement puts each layer on the CPU."""
    return _layer_per_device(tf, ["/gpu:0", "/gpu:1"], train=True)


# TensorFlow assigns no op when one cannot be placed; placeviz keeps those it placed.
@program(error=["Cannot assign a device for operation", "GPU:1"], skip=("assigned",))
def rnn_error_layer_on_missing_gpu(tf: Any) -> Any:
    """The second layer asks for a GPU the session lacks, without soft placement."""
    cells = tf.nn.rnn_cell
    stack = cells.MultiRNNCell(
        [cells.DeviceWrapper(cells.GRUCell(2), device) for device in ("/cpu:0", "/gpu:1")]
    )
    outputs, _ = tf.nn.static_rnn(stack, _inputs(tf), dtype=tf.float32)
    return Run(outputs[-1])


# -- training: values after a few steps --------------------------------------------------------


def _trained(make_cell: Any, optimizer: Any, steps: int = 3) -> Any:
    def build(tf: Any) -> Any:
        with tf.variable_scope("m", initializer=_pattern(tf)):
            outputs, _ = tf.nn.static_rnn(make_cell(tf), _inputs(tf), dtype=tf.float32)
        target = tf.constant(np.linspace(-0.5, 0.5, BATCH * 2).reshape(BATCH, 2), tf.float32)
        logits = tf.layers.dense(
            outputs[-1], 2, kernel_initializer=tf.constant_initializer(0.3), name="head"
        )
        loss = tf.reduce_mean(tf.square(logits - target), name="loss")
        step = optimizer(tf).minimize(loss)
        return Runs(
            tf.global_variables_initializer(), *[step] * steps, [loss, tf.trainable_variables()]
        )

    return build


def _sgd(tf: Any) -> Any:
    return tf.train.GradientDescentOptimizer(0.5)


def _adam(tf: Any) -> Any:
    return tf.train.AdamOptimizer(0.05)


family(
    "rnn_train",
    {
        "basic_rnn_sgd": _trained(lambda tf: _cells(tf).BasicRNNCell(3), _sgd),
        "basic_lstm_sgd": _trained(lambda tf: _cells(tf).BasicLSTMCell(3), _sgd),
        "basic_lstm_adam": _trained(lambda tf: _cells(tf).BasicLSTMCell(3), _adam),
        "lstm_peepholes_projection_sgd": _trained(
            lambda tf: _cells(tf).LSTMCell(4, use_peepholes=True, num_proj=3, cell_clip=0.5),
            _sgd,
        ),
        "gru_adam": _trained(lambda tf: _cells(tf).GRUCell(3), _adam),
        "multi_lstm_adam": _trained(
            lambda tf: _cells(tf).MultiRNNCell([_cells(tf).BasicLSTMCell(3) for _ in range(2)]),
            _adam,
        ),
        "residual_multi_sgd": _trained(
            lambda tf: _cells(tf).MultiRNNCell(
                [_cells(tf).GRUCell(3), _cells(tf).ResidualWrapper(_cells(tf).GRUCell(3))]
            ),
            _sgd,
        ),
        "concatenated_state_momentum": _trained(
            lambda tf: _cells(tf).BasicLSTMCell(2, state_is_tuple=False),
            lambda tf: tf.train.MomentumOptimizer(0.3, 0.9),
        ),
    },
)


@program
def rnn_gradients_of_outputs(tf: Any) -> Any:
    """``tf.gradients`` of the last output through time, to the inputs and every weight."""
    xs = _inputs(tf)
    with tf.variable_scope("m", initializer=_pattern(tf)):
        outputs, state = tf.nn.static_rnn(tf.nn.rnn_cell.LSTMCell(3), xs, dtype=tf.float32)
    loss = tf.reduce_sum(outputs[-1] * state.c)
    grads = tf.gradients(loss, xs + tf.trainable_variables())
    return Runs(tf.global_variables_initializer(), grads)


@program
def rnn_bidirectional_trained(tf: Any) -> Any:
    with tf.variable_scope("m", initializer=_pattern(tf)):
        outputs, _, _ = tf.nn.static_bidirectional_rnn(
            tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(2), _inputs(tf), dtype=tf.float32
        )
    loss = tf.reduce_mean(tf.square(tf.add_n(outputs)), name="loss")
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return Runs(tf.global_variables_initializer(), step, step, [loss, tf.trainable_variables()])


# -- errors ------------------------------------------------------------------------------------


@program(error=["must be a sequence"])
def rnn_error_inputs_not_a_sequence(tf: Any) -> Any:
    return tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), tf.zeros([3, 2, 2]), dtype=tf.float32)


@program(error=["argument `dtype` must be specified"])
def rnn_error_no_dtype_nor_initial_state(tf: Any) -> Any:
    return tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), _inputs(tf))


@program(error=["is not an RNNCell", "'output_size' property is missing"])
def rnn_error_not_a_cell(tf: Any) -> Any:
    return tf.nn.static_rnn("lstm", _inputs(tf), dtype=tf.float32)


@program(error=["must not be empty"])
def rnn_error_no_inputs(tf: Any) -> Any:
    return tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), [], dtype=tf.float32)


@program(error=["is not an RNNCell"])
def rnn_error_wrapper_of_not_a_cell(tf: Any) -> Any:
    return tf.nn.rnn_cell.DeviceWrapper(object(), "/cpu:0")


@program(error=["must have rank at least 2"])
def rnn_error_vector_steps(tf: Any) -> Any:
    xs = [tf.zeros([2, 3]), tf.zeros([3])]
    return tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), xs, dtype=tf.float32)


@program(error=["are not compatible"])
def rnn_error_batch_sizes_differ(tf: Any) -> Any:
    xs = [tf.zeros([2, 3]), tf.zeros([4, 3])]
    return tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), xs, dtype=tf.float32)


@program(error=["must be accessible via shape inference"])
def rnn_error_unknown_input_depth(tf: Any) -> Any:
    xs = [tf.placeholder(tf.float32, [2, None]) for _ in range(2)]
    return tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), xs, dtype=tf.float32)


@program(error=["expected ndim=2, found ndim=3"])
def rnn_error_cell_input_rank_3(tf: Any) -> Any:
    cell = tf.nn.rnn_cell.BasicLSTMCell(2)
    return cell(tf.zeros([2, 3, 4]), cell.zero_state(2, tf.float32))


@program(error=["RNN cell only supports floating point inputs"])
def rnn_error_integer_inputs(tf: Any) -> Any:
    cell = tf.nn.rnn_cell.GRUCell(2)
    return cell(tf.zeros([2, 3], tf.int32), cell.zero_state(2, tf.float32))


@program(error=["MatMul", "8", "7"])
def rnn_error_state_of_the_wrong_size(tf: Any) -> Any:
    """A state 5 wide for a 4-unit LSTM: the kernel (built from the input) does not fit."""
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    state = tf.nn.rnn_cell.LSTMStateTuple(tf.zeros([2, 5]), tf.zeros([2, 5]))
    return cell(tf.zeros([2, 3]), state)


@program(error=["Expected state to be a tuple of length 2"])
def rnn_error_multi_cell_state_not_a_tuple(tf: Any) -> Any:
    cells = tf.nn.rnn_cell
    multi = cells.MultiRNNCell([cells.GRUCell(2), cells.GRUCell(2)])
    return multi(tf.zeros([2, 3]), tf.zeros([2, 4]))


@program(error=["Must specify at least one cell"])
def rnn_error_multi_cell_of_no_cells(tf: Any) -> Any:
    return tf.nn.rnn_cell.MultiRNNCell([])


@program(error=["state_is_tuple is not set"])
def rnn_error_multi_cell_concatenates_tuple_states(tf: Any) -> Any:
    cells = tf.nn.rnn_cell
    return cells.MultiRNNCell([cells.BasicLSTMCell(2)], state_is_tuple=False)


@program(error=["Parameter output_keep_prob must be between 0 and 1"])
def rnn_error_keep_prob_above_one(tf: Any) -> Any:
    return tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(2), output_keep_prob=1.5)


@program
def rnn_sequence_length(tf: Any) -> Any:
    """Steps past a sequence's length copy its state through: TF picks them with tf.cond."""
    with tf.variable_scope("m", initializer=_pattern(tf)):
        outputs, state = tf.nn.static_rnn(
            tf.nn.rnn_cell.GRUCell(2), _inputs(tf), dtype=tf.float32, sequence_length=[1, 3]
        )
    return Runs(tf.global_variables_initializer(), [outputs, state])


# -- dynamic_rnn: the cell in a while loop -------------------------------------------------------


def _batch_major(tf: Any, steps: int = STEPS) -> Any:
    data = np.cos(np.arange(steps * BATCH * DEPTH) * 0.9).reshape(BATCH, steps, DEPTH)
    return tf.constant(data.astype(np.float32), name="x")


def _dynamic(make_cell: Any, **options: Any) -> Any:
    def build(tf: Any) -> Any:
        inputs = _batch_major(tf)
        if options.get("time_major"):
            inputs = tf.transpose(inputs, [1, 0, 2])
        with tf.variable_scope("model", initializer=_pattern(tf)):
            outputs, state = tf.nn.dynamic_rnn(make_cell(tf), inputs, dtype=tf.float32, **options)
        return Runs(tf.global_variables_initializer(), [outputs, state])

    return build


def _leaves(state: Any) -> list[Any]:
    if isinstance(state, (list, tuple)):
        return [leaf for item in state for leaf in _leaves(item)]
    return [state]


def _dynamic_train(make_cell: Any, **options: Any) -> Any:
    def build(tf: Any) -> Any:
        with tf.variable_scope("model", initializer=_pattern(tf)):
            outputs, state = tf.nn.dynamic_rnn(
                make_cell(tf), _batch_major(tf), dtype=tf.float32, **options
            )
        loss = tf.reduce_mean(tf.square(outputs - 0.1))
        for part in _leaves(state):
            loss += tf.reduce_mean(part)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        return Runs(tf.global_variables_initializer(), train, train, Run(loss))

    return build


family(
    "rnn_dynamic",
    {
        "basic_rnn": _dynamic(lambda tf: _cells(tf).BasicRNNCell(4)),
        "gru": _dynamic(lambda tf: _cells(tf).GRUCell(3)),
        "basic_lstm": _dynamic(lambda tf: _cells(tf).BasicLSTMCell(4)),
        "lstm_peepholes": _dynamic(lambda tf: _cells(tf).LSTMCell(3, use_peepholes=True)),
        "multi_cell": _dynamic(
            lambda tf: _cells(tf).MultiRNNCell([_cells(tf).GRUCell(3), _cells(tf).GRUCell(2)])
        ),
        "time_major": _dynamic(lambda tf: _cells(tf).GRUCell(3), time_major=True),
        "sequence_length": _dynamic(lambda tf: _cells(tf).GRUCell(2), sequence_length=[1, 3]),
        "sequence_length_all_short": _dynamic(
            lambda tf: _cells(tf).BasicLSTMCell(2), sequence_length=[2, 1]
        ),
        "sequence_length_time_major": _dynamic(
            lambda tf: _cells(tf).BasicRNNCell(3), sequence_length=[3, 2], time_major=True
        ),
        "parallel_iterations": _dynamic(lambda tf: _cells(tf).GRUCell(2), parallel_iterations=1),
        "train_gru": _dynamic_train(lambda tf: _cells(tf).GRUCell(3)),
        "train_lstm_lengths": _dynamic_train(
            lambda tf: _cells(tf).BasicLSTMCell(2), sequence_length=[3, 2]
        ),
        "train_basic_rnn": _dynamic_train(lambda tf: _cells(tf).BasicRNNCell(3)),
    },
)


def rnn_dynamic_initial_state(tf: Any) -> Any:
    with tf.variable_scope("model", initializer=_pattern(tf)):
        cell = _cells(tf).GRUCell(2)
        start = tf.constant(np.full((BATCH, 2), 0.3, dtype=np.float32))
        outputs, state = tf.nn.dynamic_rnn(cell, _batch_major(tf), initial_state=start)
    return Runs(tf.global_variables_initializer(), [outputs, state])


def rnn_dynamic_bidirectional(tf: Any) -> Any:
    with tf.variable_scope("model", initializer=_pattern(tf)):
        (out_fw, out_bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(
            _cells(tf).GRUCell(2), _cells(tf).GRUCell(3), _batch_major(tf), dtype=tf.float32
        )
    return Runs(tf.global_variables_initializer(), [out_fw, out_bw, st_fw, st_bw])


program(rnn_dynamic_initial_state)
program(rnn_dynamic_bidirectional)


def rnn_dynamic_bidirectional_lengths(tf: Any) -> Any:
    """Each sequence reversed within its length (ReverseSequence), trained two steps."""
    with tf.variable_scope("model", initializer=_pattern(tf)):
        (out_fw, out_bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(
            _cells(tf).GRUCell(2),
            _cells(tf).BasicRNNCell(2),
            _batch_major(tf),
            sequence_length=[2, 3],
            dtype=tf.float32,
        )
    loss = tf.reduce_mean(tf.square(out_fw - out_bw)) + tf.reduce_mean(st_fw * st_bw)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return Runs(tf.global_variables_initializer(), [out_fw, out_bw], train, train, Run(loss))


def rnn_dynamic_multi_input(tf: Any) -> Any:
    """A tuple of inputs: one input TensorArray each, the cell given the tuple per step."""

    class GRUCell(_cells(tf).GRUCell):  # type: ignore[misc]  (named as the cell it extends)
        def __call__(self, inputs: Any, state: Any) -> Any:
            return super().__call__(tf.concat(list(inputs), 1), state)

    x = _batch_major(tf)
    with tf.variable_scope("model", initializer=_pattern(tf)):
        outputs, state = tf.nn.dynamic_rnn(GRUCell(2), (x, x * 2.0), dtype=tf.float32)
    return Runs(tf.global_variables_initializer(), [outputs, state])


def rnn_dynamic_fed_steps(tf: Any) -> Any:
    """Time steps known only at run time: the TensorArrays' size is the fed input's."""
    x = tf.placeholder(tf.float32, [BATCH, None, DEPTH], name="x")
    with tf.variable_scope("model", initializer=_pattern(tf)):
        outputs, state = tf.nn.dynamic_rnn(_cells(tf).BasicRNNCell(2), x, dtype=tf.float32)
    data = np.cos(np.arange(BATCH * 5 * DEPTH) * 0.3).reshape(BATCH, 5, DEPTH)
    return Runs(
        tf.global_variables_initializer(),
        Run([outputs, state], {x: data[:, :2]}),
        Run([outputs, state], {x: data}),
    )


def rnn_dynamic_wrong_lengths(tf: Any) -> Any:
    """A sequence_length vector of the wrong size fails the run at the Assert."""
    lengths = tf.placeholder(tf.int32, [None], name="lengths")
    with tf.variable_scope("model", initializer=_pattern(tf)):
        outputs, _ = tf.nn.dynamic_rnn(
            _cells(tf).BasicRNNCell(2), _batch_major(tf), sequence_length=lengths, dtype=tf.float32
        )
    return Runs(tf.global_variables_initializer(), Run(outputs, {lengths: [1, 2, 3]}))


def rnn_dynamic_rank_two_input(tf: Any) -> Any:
    with tf.variable_scope("model"):
        return tf.nn.dynamic_rnn(
            _cells(tf).BasicRNNCell(2), tf.zeros([2, 3]), dtype=tf.float32, time_major=True
        )


program(rnn_dynamic_bidirectional_lengths)
program(rnn_dynamic_multi_input)
program(rnn_dynamic_fed_steps)
program(rnn_dynamic_wrong_lengths, error=("assertion failed", "Expected shape"))
program(rnn_dynamic_rank_two_input, error=("rank at least 3",))


# -- reversals -----------------------------------------------------------------------------------
def _reversal(tf: Any, make: Any) -> Any:
    x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 4, 3) / 5.0, name="x")
    y = make(tf, x)
    return [y, tf.gradients(tf.reduce_sum(y * tf.range(3.0)), x)]


family(
    "reverse",
    {
        "axis": lambda tf: _reversal(tf, lambda tf, x: tf.reverse(x, axis=[1])),
        "two_axes": lambda tf: _reversal(tf, lambda tf, x: tf.reverse(x, axis=[0, -1])),
        "sequence": lambda tf: _reversal(
            tf, lambda tf, x: tf.reverse_sequence(x, [3, 1], seq_axis=1, batch_axis=0)
        ),
        "sequence_time_major": lambda tf: _reversal(
            tf, lambda tf, x: tf.reverse_sequence(x, [4, 0, 2, 1], seq_axis=0, batch_axis=1)
        ),
        "sequence_int64_lengths": lambda tf: tf.reverse_sequence(
            tf.constant([[1, 2, 3], [4, 5, 6]]), tf.constant([2, 3], tf.int64), 1, 0
        ),
    },
)
family(
    "reverse_error",
    {
        "sequence_too_long": lambda tf: tf.reverse_sequence(
            tf.constant([[1, 2, 3], [4, 5, 6]]),
            tf.placeholder_with_default([2, 4], [2]),
            seq_axis=1,
            batch_axis=0,
        ),
        "sequence_count": lambda tf: tf.reverse_sequence(
            tf.constant([[1, 2, 3], [4, 5, 6]]),
            tf.placeholder_with_default([2, 1, 1], [None]),
            seq_axis=1,
            batch_axis=0,
        ),
    },
    error=("seq_len",),
)
