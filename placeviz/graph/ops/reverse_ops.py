"""TF's reversals: ``reverse`` (ReverseV2) flips whole axes, ``reverse_sequence``
(ReverseSequence) flips the first ``seq_lengths[b]`` steps of each batch entry along a time axis,
as ``bidirectional_dynamic_rnn`` reads its inputs backwards."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops._build import make_op, op_scope
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.shape_ops import constant_value, host_ints, run_ints
from placeviz.graph.registry import OpDef, OutputSpec, memory_cost
from placeviz.graph.shapes import ShapeError, normalize_axis

_INDEX = (dtypes.int32, dtypes.int64)


def _index_dtype(op_type: str, arg: str, tensor: Tensor) -> None:
    if tensor.dtype.base_dtype not in _INDEX:
        raise TypeError(
            f"Value passed to parameter '{arg}' has DataType {tensor.dtype.name} not in list of "
            "allowed values: int32, int64"
        )


def _infer_reverse(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    tensor, axis = inputs
    _index_dtype("ReverseV2", "axis", axis)
    if axis.shape.ndims not in (None, 1):
        raise ShapeError(f"Shape must be rank 1 but is rank {axis.shape.ndims}")
    value = constant_value(axis)
    rank = tensor.shape.ndims
    if value is not None and rank is not None:
        seen = set()
        for a in host_ints(value):
            index = normalize_axis(a, rank)
            if index in seen:
                raise ShapeError(f"axis {a} specified more than once.")
            seen.add(index)
    return [(tensor.shape, tensor.dtype.base_dtype)]


def _reverse_kernel(xp: Any, op: Operation, state: Any) -> Any:
    ints = run_ints()

    def reverse(x: Any, axis: Any) -> Any:
        axes = tuple(a % x.ndim for a in ints(axis)) if x.ndim else ()
        return xp.flip(x, axis=axes) if axes else x

    return reverse


def _infer_reverse_sequence(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    tensor, lengths = inputs
    _index_dtype("ReverseSequence", "seq_lengths", lengths)
    if lengths.shape.ndims not in (None, 1):
        raise ShapeError(f"Shape must be rank 1 but is rank {lengths.shape.ndims}")
    seq, batch = attrs["seq_dim"], attrs["batch_dim"]
    rank = tensor.shape.ndims
    if rank is not None:
        if batch >= rank:
            raise ShapeError(f"batch_dim must be < input rank: {batch} vs. {rank}")
        if seq >= rank:
            raise ShapeError(f"seq_dim must be < input rank: {seq} vs. {rank}")
        known = tensor.shape.dims[batch]
        count = lengths.shape.dims[0] if lengths.shape.dims else None
        if known is not None and count is not None and known != count:
            raise ShapeError(f"Dimensions must be equal, but are {count} and {known}")
    return [(tensor.shape, tensor.dtype.base_dtype)]


def _reverse_sequence_kernel(xp: Any, op: Operation, state: Any) -> Any:
    seq, batch = op.attrs["seq_dim"], op.attrs["batch_dim"]

    def reverse_sequence(x: Any, lengths: Any) -> Any:
        if seq == batch:
            raise InvalidArgumentError(f"batch_dim == seq_dim == {seq}", op=op)
        counts = list(host_ints(lengths))
        if len(counts) != x.shape[batch]:
            raise InvalidArgumentError(
                f"Length of seq_lens != input.dims({batch}), ({len(counts)} vs. {x.shape[batch]})",
                op=op,
            )
        out = x.copy()
        for b, n in enumerate(counts):
            if n < 0:
                raise InvalidArgumentError(f"seq_lens({b}) < 0", op=op)
            if n > x.shape[seq]:
                raise InvalidArgumentError(f"seq_lens({b}) > input.dims({seq})", op=op)
            index: list[Any] = [slice(None)] * x.ndim
            index[batch] = b
            index[seq] = slice(0, n)
            source = list(index)
            source[seq] = slice(n - 1, None, -1) if n else slice(0, 0)
            out[tuple(index)] = x[tuple(source)]
        return out

    return reverse_sequence


registry.register(
    OpDef(type="ReverseV2", infer=_infer_reverse, kernel=_reverse_kernel, cost=memory_cost)
)
registry.register(
    OpDef(
        type="ReverseSequence",
        infer=_infer_reverse_sequence,
        kernel=_reverse_sequence_kernel,
        cost=memory_cost,
    )
)


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """``tensor`` with the axes in ``axis`` flipped (TF's ``reverse``, ``reverse_v2``)."""
    with op_scope(name or "ReverseV2", [tensor]) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        axes = convert_to_tensor(axis, name="axis")
        return make_op("ReverseV2", [x, axes], scope).outputs[0]


def reverse_sequence(
    input: Any,
    seq_lengths: Any,
    seq_axis: int | None = None,
    batch_axis: int | None = None,
    name: str | None = None,
    seq_dim: int | None = None,
    batch_dim: int | None = None,
) -> Tensor:
    """Each batch entry's first ``seq_lengths[b]`` steps along ``seq_axis`` reversed, the
    rest as they are."""
    seq = seq_axis if seq_axis is not None else seq_dim
    batch = batch_axis if batch_axis is not None else batch_dim
    if seq is None:
        raise ValueError("seq_axis (seq_dim) must be given")
    with op_scope(name or "ReverseSequence", [input, seq_lengths]) as scope:
        x = convert_to_tensor(input, name="input")
        lengths = convert_to_tensor(seq_lengths, name="seq_lengths")
        attrs = {"seq_dim": int(seq), "batch_dim": int(batch or 0)}
        return make_op("ReverseSequence", [x, lengths], scope, attrs).outputs[0]
