"""``dynamic_rnn`` and ``bidirectional_dynamic_rnn``: a cell run over the time steps of a tensor
by a ``while_loop``, so the number of steps may be known only at run time.

The graph is TensorFlow's (rnn.py's ``_dynamic_rnn_loop``): the inputs, time major, are unstacked
into a TensorArray that the loop reads one step at a time; each step's output is written to a
second TensorArray, stacked after the loop. With ``sequence_length`` (checked against the batch
by an ``Assert``), steps past a sequence's length give zeros and keep the state (``_rnn_step``
without conditionals: a Select per step), the loop bounded by the longest sequence.
"""

from __future__ import annotations

from typing import Any

from placeviz import dtypes, nest
from placeviz.graph.core import Tensor, get_default_graph
from placeviz.graph.ops import array_ops, math_ops, selection_ops, state_ops
from placeviz.graph.ops.constant_op import constant, convert_to_tensor
from placeviz.graph.ops.logging_ops import Assert
from placeviz.graph.ops.reverse_ops import reverse, reverse_sequence
from placeviz.graph.shapes import TensorShape
from placeviz.graph.tensor_array import TensorArray
from placeviz.graph.variable_scope import variable_scope
from placeviz.graph.while_loop import while_loop
from placeviz.rnn.cell import _shape_vector
from placeviz.rnn.wrappers import assert_like_rnncell


def _transpose_batch_time(x: Tensor) -> Tensor:
    """TF's ``_transpose_batch_time``: [batch, time, ...] <-> [time, batch, ...], the
    permutation built from the tensor's rank (a tensor of rank below 2 is left as it is)."""
    static = x.shape
    if static.ndims is not None and static.ndims < 2:
        return x
    rank = array_ops.rank(x)
    perm = array_ops.concat(([1, 0], math_ops.arange(2, rank)), axis=0)
    transposed = array_ops.transpose(x, perm)
    if static.dims is not None:
        transposed.set_shape([static.dims[1], static.dims[0], *static.dims[2:]])
    return transposed


def dynamic_rnn(
    cell: Any,
    inputs: Any,
    sequence_length: Any = None,
    initial_state: Any = None,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[Any, Any]:
    """``(outputs, state)``: the cell over every time step of ``inputs`` (``[batch, time,
    depth]``, or ``[time, batch, depth]`` with ``time_major``), outputs in the same layout."""
    assert_like_rnncell("cell", cell)
    with variable_scope(scope or "rnn") as varscope:
        if varscope.caching_device is None:
            varscope.set_caching_device(lambda op: op.device)
        flat_input = nest.flatten(inputs)
        if not time_major:
            flat_input = [convert_to_tensor(x) for x in flat_input]
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = array_ops.cast(sequence_length, dtypes.int32)
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError(
                    "sequence_length must be a vector of length batch_size, but saw shape: "
                    f"{sequence_length.shape}"
                )
            sequence_length = state_ops.identity(sequence_length, name="sequence_length")
        batch_size = _best_effort_input_batch_size(flat_input)
        if initial_state is not None:
            state = initial_state
        else:
            if not dtype:
                raise ValueError("If there is no initial_state, you must give a dtype.")
            state = cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
        if sequence_length is not None:
            check = _assert_has_shape(sequence_length, [batch_size])
            with get_default_graph().control_dependencies([check]):
                sequence_length = state_ops.identity(sequence_length, name="CheckSeqLen")
        inputs = nest.pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(
            cell, inputs, state, parallel_iterations, swap_memory, sequence_length, dtype
        )
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _assert_has_shape(x: Tensor, shape: list[Any]) -> Any:
    x_shape = array_ops.shape(x)
    packed = array_ops.stack(shape)
    return Assert(
        math_ops.reduce_all(math_ops.equal(x_shape, packed)),
        [f"Expected shape for Tensor {x.name} is ", packed, " but saw shape: ", x_shape],
    )


def _best_effort_input_batch_size(flat_input: list[Tensor]) -> Any:
    for x in flat_input:
        if x.shape.ndims is None:
            continue
        if x.shape.ndims < 2:
            raise ValueError(
                f"Input tensor should have rank >= 2. Received input={x} of rank {x.shape.ndims}"
            )
        if x.shape.dims[1] is not None:
            return x.shape.dims[1]
    return array_ops.shape(flat_input[0])[1]


def _infer_state_dtype(explicit: Any, state: Any) -> dtypes.DType:
    if explicit is not None:
        return dtypes.as_dtype(explicit)
    flat = nest.flatten(state)
    first = flat[0].dtype.base_dtype
    if any(s.dtype.base_dtype is not first for s in flat):
        raise ValueError(
            f"State has tensors of different inferred_dtypes. Unable to infer a "
            f"single representative dtype. Dtypes received: {[s.dtype for s in flat]}"
        )
    return first


def _dynamic_rnn_loop(
    cell: Any,
    inputs: Any,
    state: Any,
    parallel_iterations: int,
    swap_memory: bool,
    sequence_length: Tensor | None,
    dtype: Any,
) -> tuple[Any, Any]:
    """TF's ``_dynamic_rnn_loop``: ``inputs`` are time major."""
    flat_input = nest.flatten(inputs)
    flat_output_size = nest.flatten(cell.output_size)
    input_shape = array_ops.shape(flat_input[0])
    time_steps = input_shape[0]
    batch_size = _best_effort_input_batch_size(flat_input)
    got_shapes = []
    for x in flat_input:
        if x.shape.ndims is not None and x.shape.ndims < 3:
            raise ValueError(f"Shape {x.shape} must have rank at least 3")
        got_shapes.append(x.shape)
    const_time_steps, const_batch_size = (got_shapes[0].dims or (None, None))[:2]
    for shape in got_shapes:
        if not TensorShape(shape.dims[2:] if shape.dims else None).is_fully_defined:
            raise ValueError(
                "Input size (depth of inputs) must be accessible via shape inference, but saw "
                "value None."
            )
        if shape.dims[0] != const_time_steps:
            raise ValueError(
                "Time steps is not the same for all the elements in the input in a batch."
            )
        if shape.dims[1] != const_batch_size:
            raise ValueError("Batch_size is not the same for all the elements in the input.")
    state_dtype = _infer_state_dtype(dtype, state)
    flat_zero_output = [
        array_ops.zeros(_shape_vector(batch_size, size), state_dtype) for size in flat_output_size
    ]
    zero_output = nest.pack_sequence_as(cell.output_size, flat_zero_output)
    if sequence_length is not None:
        math_ops.reduce_min(sequence_length)  # TF builds it for the conditional copy it skips
        max_sequence_length: Any = math_ops.reduce_max(sequence_length)
    else:
        max_sequence_length = time_steps
    time = constant(0, dtype=dtypes.int32, name="time")
    with get_default_graph().name_scope("dynamic_rnn") as base_name:
        pass

    def create_ta(name: str, element_shape: Any, ta_dtype: Any) -> TensorArray:
        return TensorArray(
            dtype=ta_dtype,
            size=time_steps,
            element_shape=element_shape,
            tensor_array_name=base_name + name,
        )

    output_ta = tuple(
        create_ta(f"output_{i}", TensorShape([const_batch_size, *_dims(size)]), state_dtype)
        for i, size in enumerate(flat_output_size)
    )
    input_ta = tuple(
        create_ta(f"input_{i}", x.shape[1:], x.dtype) for i, x in enumerate(flat_input)
    )
    input_ta = tuple(ta.unstack(x) for ta, x in zip(input_ta, flat_input))

    def time_step(time: Tensor, output_ta_t: Any, state: Any) -> Any:
        input_t = tuple(ta.read(time) for ta in input_ta)
        for x, shape in zip(input_t, got_shapes):
            x.set_shape(shape[1:])
        packed_input = nest.pack_sequence_as(inputs, list(input_t))
        if sequence_length is not None:
            output, new_state = _rnn_step(
                time, sequence_length, zero_output, state, lambda: cell(packed_input, state)
            )
        else:
            output, new_state = cell(packed_input, state)
        flat_output = nest.flatten(output)
        output_ta_t = tuple(ta.write(time, out) for ta, out in zip(output_ta_t, flat_output))
        return (time + 1, output_ta_t, new_state)

    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_sequence_length))
    _, output_final_ta, final_state = while_loop(
        lambda time, *_: time < loop_bound,
        time_step,
        (time, output_ta, state),
        parallel_iterations=parallel_iterations,
        maximum_iterations=time_steps,
        swap_memory=swap_memory,
    )
    final_outputs = tuple(ta.stack() for ta in output_final_ta)
    for output, size in zip(final_outputs, flat_output_size):
        _static_shape_constants([const_time_steps, const_batch_size], size)
        output.set_shape([const_time_steps, const_batch_size, *_dims(size)])
    return nest.pack_sequence_as(cell.output_size, list(final_outputs)), final_state


def _rnn_step(
    time: Tensor, sequence_length: Tensor, zero_output: Any, state: Any, call_cell: Any
) -> tuple[Any, Any]:
    """TF's ``_rnn_step(skip_conditionals=True)``: past its length, a sequence's output is
    zeros and its state is kept (a Select colocated with the new value)."""
    flat_state = nest.flatten(state)
    flat_zero_output = nest.flatten(zero_output)
    copy_cond = time >= sequence_length

    def copy_one_through(old: Tensor, new: Tensor) -> Tensor:
        if old.shape.ndims == 0:
            return new
        with get_default_graph().colocate_with(new):
            return selection_ops.where(copy_cond, old, new)

    new_output, new_state = call_cell()
    nest.map_structure(lambda a, b: None, zero_output, new_output)
    flat_new_output = [
        copy_one_through(z, n) for z, n in zip(flat_zero_output, nest.flatten(new_output))
    ]
    flat_new_state = [copy_one_through(s, n) for s, n in zip(flat_state, nest.flatten(new_state))]
    for output, zero in zip(flat_new_output, flat_zero_output):
        output.set_shape(zero.shape)
    for substate, old in zip(flat_new_state, flat_state):
        substate.set_shape(old.shape)
    return (
        nest.pack_sequence_as(zero_output, flat_new_output),
        nest.pack_sequence_as(state, flat_new_state),
    )


def _static_shape_constants(prefix: list[Any], size: Any) -> None:
    """TF's ``_concat(prefix, size, static=True)`` builds (and never uses) a Const of each
    part whose dimensions are all known."""
    for dims in (prefix, _dims(size)):
        if all(d is not None for d in dims):
            constant(dims, dtype=dtypes.int32)


def _dims(size: Any) -> list[Any]:
    if isinstance(size, TensorShape):
        return list(size.as_list())
    return [int(size)]


def bidirectional_dynamic_rnn(
    cell_fw: Any,
    cell_bw: Any,
    inputs: Any,
    sequence_length: Any = None,
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """A forward ``dynamic_rnn`` (scope ``fw``) and one over the time-reversed inputs (``bw``;
    each sequence reversed within its length) under ``bidirectional_rnn``:
    ``((output_fw, output_bw), (state_fw, state_bw))``."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw,
                inputs,
                sequence_length=sequence_length,
                initial_state=initial_state_fw,
                dtype=dtype,
                parallel_iterations=parallel_iterations,
                swap_memory=swap_memory,
                time_major=time_major,
                scope=fw_scope,
            )
        time_axis = 0 if time_major else 1
        batch_axis = 1 if time_major else 0

        def reverse_each(structure: Any) -> Any:
            def flip(x: Any) -> Tensor:
                if sequence_length is not None:
                    return reverse_sequence(
                        x, sequence_length, seq_axis=time_axis, batch_axis=batch_axis
                    )
                return reverse(x, axis=[time_axis])

            return nest.map_structure(flip, structure)

        with variable_scope("bw") as bw_scope:
            tmp, state_bw = dynamic_rnn(
                cell_bw,
                reverse_each(inputs),
                sequence_length=sequence_length,
                initial_state=initial_state_bw,
                dtype=dtype,
                parallel_iterations=parallel_iterations,
                swap_memory=swap_memory,
                time_major=time_major,
                scope=bw_scope,
            )
    output_bw = reverse_each(tmp)
    return (output_fw, output_bw), (state_fw, state_bw)
