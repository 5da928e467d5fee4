"""``static_rnn`` and ``static_bidirectional_rnn``: a cell unrolled over a Python list of
time steps, one copy of its ops per step, sharing its variables (no control flow)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from placeviz import dtypes, nest
from placeviz.graph.control_flow import cond
from placeviz.graph.core import is_tensor_like
from placeviz.graph.ops import array_ops, math_ops, selection_ops
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.shapes import TensorShape
from placeviz.graph.variable_scope import variable_scope
from placeviz.rnn.cell import zero_state_tensors
from placeviz.rnn.wrappers import assert_like_rnncell


def static_rnn(
    cell: Any,
    inputs: Sequence[Any],
    initial_state: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Any], Any]:
    """``state = initial_state or cell.zero_state(batch, dtype)``, then for each input
    ``output, state = cell(input, state)``; returns the outputs and the last state.

    As TensorFlow's, it runs in variable scope ``scope or "rnn"``, reads the cell's variables
    where the step's device scopes say (a caching device, not beside the variable), and
    checks that every input is at least a matrix whose feature sizes are known.
    """
    assert_like_rnncell("cell", cell)
    if not nest.is_nested(inputs):
        raise TypeError(f"Argument `inputs` must be a sequence. Received: {inputs}")
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")
    outputs = []
    with variable_scope(scope or "rnn") as varscope:
        if varscope.caching_device is None:
            varscope.set_caching_device(lambda op: op.device)
        flat_inputs = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        batch_size = _batch_size(flat_inputs)
        if initial_state is not None:
            state = initial_state
        else:
            if not dtype:
                raise ValueError(
                    "If no initial_state is provided, argument `dtype` must be specified"
                )
            state = cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
        if sequence_length is not None:
            lengths = _SequenceLengths(sequence_length, cell, batch_size, dtype or state)
        for time, step_input in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            if sequence_length is not None:
                output, state = lengths.step(time, state, lambda x=step_input, s=state: cell(x, s))
            else:
                output, state = cell(step_input, state)
            outputs.append(output)
    return outputs, state


class _SequenceLengths:
    """TF's ``static_rnn`` with ``sequence_length``: each step is a cond (``_rnn_step``): past
    every sequence's end, zeros and the state as it was; before any ends, the cell's result;
    in between, per batch row, whichever the row's length says (``Select``)."""

    def __init__(self, sequence_length: Any, cell: Any, batch_size: Any, dtype: Any) -> None:
        lengths = convert_to_tensor(sequence_length, name="sequence_length")
        if lengths.shape.ndims not in (None, 1):
            raise ValueError(
                f"Argument `sequence_length` must be a vector of length {batch_size}. "
                f"Received sequence_length={sequence_length}."
            )
        state_dtype = dtype if not nest.is_nested(dtype) and not is_tensor_like(dtype) else None
        if state_dtype is None:
            state_dtype = nest.flatten(dtype)[0].dtype
        self.zero_output = zero_state_tensors(cell.output_size, batch_size, state_dtype)
        self.lengths = array_ops.cast(lengths, dtypes.int32)
        self.shortest = math_ops.reduce_min(self.lengths)
        self.longest = math_ops.reduce_max(self.lengths)

    def step(self, time: int, state: Any, call_cell: Any) -> tuple[Any, Any]:
        flat_state = nest.flatten(state)
        flat_zero = nest.flatten(self.zero_output)
        copy = time >= self.lengths

        def copy_one_through(old: Any, new: Any) -> Any:
            if new.shape.ndims == 0:
                return new
            with new.graph.colocate_with(new.op):
                return selection_ops.where(copy, old, new)

        def some_through(new_output: list[Any], new_state: list[Any]) -> list[Any]:
            return [copy_one_through(z, o) for z, o in zip(flat_zero, new_output)] + [
                copy_one_through(s, n) for s, n in zip(flat_state, new_state)
            ]

        def maybe_copy_some_through() -> list[Any]:
            new_output, new_state = call_cell()
            flat_output, flat_new_state = nest.flatten(new_output), nest.flatten(new_state)
            return cond(
                time < self.shortest,
                lambda: flat_output + flat_new_state,
                lambda: some_through(flat_output, flat_new_state),
            )

        result = cond(time >= self.longest, lambda: flat_zero + flat_state, maybe_copy_some_through)
        final_output, final_state = result[: len(flat_zero)], result[len(flat_zero) :]
        for tensor, like in zip(final_output, flat_zero):
            tensor.set_shape(like.shape)
        for tensor, like in zip(final_state, flat_state):
            tensor.set_shape(like.shape)
        return (
            nest.pack_sequence_as(self.zero_output, final_output),
            nest.pack_sequence_as(state, final_state),
        )


def _batch_size(flat_inputs: list[Any]) -> Any:
    """TF's checks and batch size: every input at least a matrix (a vector passes, for TF's
    embedding wrappers) with known feature sizes and the first input's batch size; an int
    where shapes know it, else the first input's run-time ``shape[0]``."""
    first = flat_inputs[0]
    if first.shape.ndims != 1:
        fixed = _with_rank_at_least(first.shape, 2)[0]
        for tensor in flat_inputs:
            dims = _with_rank_at_least(tensor.shape, 2)
            if fixed is not None and dims[0] is not None and dims[0] != fixed:
                raise ValueError(f"Dimensions {fixed} and {dims[0]} are not compatible")
            for i, size in enumerate(dims[1:]):
                if size is None:
                    raise ValueError(
                        f"Input size (dimension {i} of input {tensor}) must be accessible via "
                        "shape inference, but saw value None."
                    )
    else:
        fixed = first.shape.dims[0]
    return fixed if fixed is not None else array_ops.shape(first)[0]


def _with_rank_at_least(shape: TensorShape, rank: int) -> tuple[Any, ...]:
    if shape.dims is None:
        raise ValueError(f"Shape {shape} must have rank at least {rank}: its rank is unknown")
    if len(shape.dims) < rank:
        raise ValueError(f"Shape {shape} must have rank at least {rank}")
    return shape.dims


def static_bidirectional_rnn(
    cell_fw: Any,
    cell_bw: Any,
    inputs: Sequence[Any],
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Any], Any, Any]:
    """A forward RNN (scope ``fw``) and one over the reversed inputs (``bw``), under
    ``bidirectional_rnn``; each step's output is both directions' concatenated."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    if not nest.is_nested(inputs):
        raise TypeError(f"inputs must be a sequence. Received: {inputs}")
    if not inputs:
        raise ValueError("inputs must not be empty")
    if sequence_length is not None:
        raise NotImplementedError(
            "static_bidirectional_rnn(sequence_length=...) reverses each sequence within its "
            "length (TF's ReverseSequence), which placeviz does not have: pad the sequences, or "
            "leave sequence_length out"
        )
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(
                cell_fw, inputs, initial_state_fw, dtype, sequence_length, scope=fw_scope
            )
        with variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq(inputs)
            tmp, state_bw = static_rnn(
                cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length, scope=bw_scope
            )
    output_bw = _reverse_seq(tmp)
    flat = [
        array_ops.concat([fw, bw], 1)
        for fw, bw in zip(nest.flatten(output_fw), nest.flatten(output_bw), strict=True)
    ]
    return nest.pack_sequence_as(output_fw, flat), state_fw, state_bw


def _reverse_seq(inputs: Sequence[Any]) -> list[Any]:
    """The time steps in reverse (TF's ``_reverse_seq`` without sequence lengths)."""
    return list(reversed(list(inputs)))
