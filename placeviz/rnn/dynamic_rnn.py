"""``dynamic_rnn`` and ``bidirectional_dynamic_rnn``: a cell run over the time steps of a tensor
by a ``while_loop``, so the number of steps may be known only at run time.

The values are TensorFlow's: the same cell calls in the same order, steps past a sequence's
length giving zeros and keeping the state (TF's ``_rnn_step`` without conditionals: a Select
per step), the loop bounded by the longest sequence. TensorFlow collects each step's output in
a TensorArray; placeviz has no TensorArray ops, so the loop grows an output tensor by one time
step per iteration (a loop variable with shape invariant ``[None, batch, size]``) and pads it
with zeros to the input's length: the graph's op names under the RNN's scope differ from TF's.
"""

from __future__ import annotations

from typing import Any

from placeviz import dtypes
from placeviz.graph.core import Tensor
from placeviz.graph.ops import array_ops, math_ops, selection_ops, state_ops
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.shapes import TensorShape
from placeviz.graph.variable_scope import variable_scope
from placeviz.graph.while_loop import while_loop
from placeviz.rnn import nest
from placeviz.rnn.cell import zero_state_tensors
from placeviz.rnn.wrappers import assert_like_rnncell


def _transpose_batch_time(x: Tensor) -> Tensor:
    """[batch, time, ...] <-> [time, batch, ...]."""
    rank = x.shape.ndims
    if rank is None or rank < 2:
        raise ValueError(
            f"Expected input tensor {x} to have rank at least 2, but saw shape: {x.shape}"
        )
    return array_ops.transpose(x, [1, 0, *range(2, rank)])


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
        flat_input = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        if sequence_length is not None:
            lengths = array_ops.cast(convert_to_tensor(sequence_length), dtypes.int32)
            if lengths.shape.ndims not in (None, 1):
                raise ValueError(
                    "sequence_length must be a vector of length batch_size, but saw shape: "
                    f"{lengths.shape}"
                )
            lengths = state_ops.identity(lengths, name="sequence_length")
        else:
            lengths = None
        batch_size = _batch_size(flat_input)
        if initial_state is not None:
            state = initial_state
        else:
            if not dtype:
                raise ValueError("If there is no initial_state, you must give a dtype.")
            state = cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
        outputs, final_state = _loop(
            cell, flat_input, state, lengths, batch_size, parallel_iterations or 32
        )
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _batch_size(flat_input: list[Tensor]) -> Any:
    for x in flat_input:
        if x.shape.ndims is None:
            continue
        if x.shape.ndims < 2:
            raise ValueError(f"Input {x} must have rank at least 2, but saw shape: {x.shape}")
        if x.shape.dims[1] is not None:
            return x.shape.dims[1]
    return array_ops.shape(flat_input[0])[1]


def _loop(
    cell: Any,
    flat_input: list[Tensor],
    state: Any,
    lengths: Tensor | None,
    batch_size: Any,
    parallel_iterations: int,
) -> tuple[Any, Any]:
    first = flat_input[0]
    time_steps = first.shape.dims[0] if first.shape.dims and first.shape.dims[0] else None
    steps: Any = time_steps if time_steps is not None else array_ops.shape(first)[0]
    state_dtype = nest.flatten(state)[0].dtype.base_dtype
    flat_output_size = nest.flatten(cell.output_size)
    zero_output = zero_state_tensors(cell.output_size, batch_size, state_dtype)
    flat_zero = nest.flatten(zero_output)
    if lengths is not None:
        longest = math_ops.reduce_max(lengths)
        bound: Any = math_ops.minimum(steps, math_ops.maximum(1, longest))
    else:
        bound = steps
    grown = [
        array_ops.zeros([0, *_static(batch_size), *_dims(size)], dtype=state_dtype)
        for size in flat_output_size
    ]
    inputs_structure = flat_input

    def body(time: Tensor, collected: list[Tensor], state: Any) -> Any:
        step_input = [array_ops.gather(x, time) for x in inputs_structure]
        for x, source in zip(step_input, inputs_structure):
            x.set_shape(source.shape[1:])
        step = step_input[0] if len(step_input) == 1 else step_input
        output, new_state = cell(step, state)
        flat_output, flat_state = nest.flatten(output), nest.flatten(new_state)
        if lengths is not None:
            copy = time >= lengths
            flat_output = [selection_ops.where(copy, z, o) for z, o in zip(flat_zero, flat_output)]
            flat_state = [
                s if n.shape.ndims == 0 else selection_ops.where(copy, s, n)
                for s, n in zip(nest.flatten(state), flat_state)
            ]
        collected = [
            array_ops.concat([c, array_ops.expand_dims(o, 0)], 0)
            for c, o in zip(collected, flat_output)
        ]
        return [time + 1, collected, nest.pack_sequence_as(state, flat_state)]

    invariants = [
        TensorShape([]),
        [TensorShape([None, *c.shape.dims[1:]]) for c in grown],
        [s.shape for s in nest.flatten(state)],
    ]
    _, collected, final_state = while_loop(
        lambda time, *_: time < bound,
        body,
        [0, grown, state],
        shape_invariants=invariants,
        parallel_iterations=parallel_iterations,
        maximum_iterations=steps,
    )
    outputs = []
    for c, size in zip(collected, flat_output_size):
        missing = steps - array_ops.shape(c)[0]
        padding = array_ops.zeros(
            array_ops.concat([array_ops.expand_dims(missing, 0), array_ops.shape(c)[1:]], 0),
            dtype=state_dtype,
        )
        padded = array_ops.concat([c, padding], 0)
        padded.set_shape([time_steps, *_static(batch_size), *_dims(size)])
        outputs.append(padded)
    return nest.pack_sequence_as(cell.output_size, outputs), final_state


def _static(batch_size: Any) -> list[Any]:
    return [batch_size if isinstance(batch_size, int) else None]


def _dims(size: Any) -> list[int]:
    if isinstance(size, TensorShape):
        return [int(d) for d in size.as_list()]  # type: ignore[arg-type]
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
    """A forward ``dynamic_rnn`` (scope ``fw``) and one over the time-reversed inputs (``bw``)
    under ``bidirectional_rnn``: ``((output_fw, output_bw), (state_fw, state_bw))``."""
    if sequence_length is not None:
        raise NotImplementedError(
            "bidirectional_dynamic_rnn(sequence_length=...) reverses each sequence within its "
            "length (TF's ReverseSequence), which placeviz does not have: pad the sequences, "
            "or leave sequence_length out"
        )
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw,
                inputs,
                initial_state=initial_state_fw,
                dtype=dtype,
                parallel_iterations=parallel_iterations,
                time_major=time_major,
                scope=fw_scope,
            )
        time_axis = 0 if time_major else 1

        def reverse(x: Any) -> Any:
            x = convert_to_tensor(x)
            count = array_ops.shape(x)[time_axis]
            backwards = math_ops.arange(count - 1, -1, -1)
            return array_ops.gather(x, backwards, axis=time_axis)

        with variable_scope("bw") as bw_scope:
            reversed_inputs = nest.map_structure(reverse, inputs)
            tmp, state_bw = dynamic_rnn(
                cell_bw,
                reversed_inputs,
                initial_state=initial_state_bw,
                dtype=dtype,
                parallel_iterations=parallel_iterations,
                time_major=time_major,
                scope=bw_scope,
            )
    output_bw = nest.map_structure(reverse, tmp)
    return (output_fw, output_bw), (state_fw, state_bw)
