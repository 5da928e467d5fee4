"""``embedding_lookup`` as TensorFlow builds it, and the ops its partitioned form needs:
DynamicPartition, ParallelDynamicStitch and DynamicStitch.

One params tensor (or variable) is a GatherV2 colocated with it, so the lookup runs where the
table lives, whatever device its reader asked for. A list of params is a table sharded by rows:
the ids are assigned to shards ("mod": id % n; "div": contiguous ranges), split apart with
DynamicPartition, gathered on each shard's device and stitched back in order.

Gradients stay dense: the GatherV2 gradient here is an UnsortedSegmentSum of the table's shape
(TF's is an IndexedSlices of the rows looked up); the values are TF's once densified.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor, get_default_graph
from placeviz.graph.ops import array_ops, clip_ops, constant_op, math_ops, state_ops
from placeviz.graph.ops._build import check_dtype, make_op, same_dtype
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.selection_ops import folded_value
from placeviz.graph.ops.shape_ops import INDEX_DTYPES
from placeviz.graph.registry import OpDef, OutputSpec, memory_cost
from placeviz.graph.shapes import Dim, ShapeError, TensorShape

_NOT_STRINGS = frozenset(d for d in dtypes.ALL if d is not dtypes.string)
# TF registers GPU kernels of both for its number types (the stitch's inputs in host memory).
_KERNELS = {"CPU": frozenset(dtypes.ALL), "GPU": _NOT_STRINGS}


# -- DynamicPartition --------------------------------------------------------------------------
def _infer_partition(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    data, partitions = inputs
    if partitions.dtype.base_dtype is not dtypes.int32:
        raise TypeError(
            f"Input 'partitions' of 'DynamicPartition' Op has type {partitions.dtype.name} that "
            "does not match expected type of int32."
        )
    num = attrs["num_partitions"]
    if num < 1:
        raise ValueError(f"num_partitions must be at least 1, got {num}")
    p_dims, d_dims = partitions.shape.dims, data.shape.dims
    if p_dims is None or d_dims is None:
        return [(TensorShape(None), data.dtype)] * num
    if len(d_dims) < len(p_dims):
        raise ShapeError(f"Shape must be at least rank {len(p_dims)} but is rank {len(d_dims)}")
    for a, b in zip(d_dims, p_dims):
        if a is not None and b is not None and a != b:
            raise ShapeError(f"Dimensions must be equal, but are {a} and {b}")
    return [(TensorShape([None, *d_dims[len(p_dims) :]]), data.dtype)] * num


def _partition_kernel(xp: Any, op: Operation, state: Any) -> Any:
    num = op.attrs["num_partitions"]

    def partition(data: Any, partitions: Any) -> tuple[Any, ...]:
        bad = (partitions < 0) | (partitions >= num)
        if bool(bad.any()):
            flat = partitions.reshape(-1)
            at = int(xp.argmax(bad.reshape(-1)))
            where = np.unravel_index(at, partitions.shape)
            raise InvalidArgumentError(
                f"partitions[{','.join(map(str, where))}] = {int(flat[at])} is not in [0, {num})",
                op=op,
            )
        rows = data.reshape(-1, *data.shape[partitions.ndim :])
        flat = partitions.reshape(-1)
        return tuple(rows[flat == p] for p in range(num))

    return partition


registry.register(
    OpDef(
        type="DynamicPartition",
        infer=_infer_partition,
        kernel=_partition_kernel,
        cost=memory_cost,
        supported=_KERNELS,
        multi_output=True,
    )
)


def dynamic_partition(
    data: Any, partitions: Any, num_partitions: int, name: str | None = None
) -> list[Tensor]:
    """Splits the rows of ``data`` by ``partitions`` (int32 in [0, num_partitions)), keeping
    their order within each piece."""
    tensors = [convert_to_tensor(data), convert_to_tensor(partitions)]
    attrs = {"num_partitions": int(num_partitions)}
    return list(make_op("DynamicPartition", tensors, name or "DynamicPartition", attrs).outputs)


# -- DynamicStitch, ParallelDynamicStitch ------------------------------------------------------
def _infer_stitch(op_type: str) -> Any:
    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
        n = len(inputs) // 2
        indices, data = inputs[:n], inputs[n:]
        for t in indices:
            if t.dtype.base_dtype is not dtypes.int32:
                raise TypeError(
                    f"Input 'indices' of '{op_type}' Op has type {t.dtype.name} that does not "
                    "match expected type of int32."
                )
        dtype = same_dtype(op_type, data, [f"data[{i}]" for i in range(n)])
        extra: TensorShape = TensorShape(None)
        largest, known = -1, True
        for index_t, data_t in zip(indices, data):
            value = folded_value(index_t)
            if value is None:
                known = False
            elif value.size:
                largest = max(largest, int(value.max()))
            i_dims, d_dims = index_t.shape.dims, data_t.shape.dims
            if i_dims is None or d_dims is None:
                continue
            prefix = TensorShape(d_dims[: len(i_dims)])
            if len(d_dims) < len(i_dims) or not prefix.is_compatible_with(index_t.shape):
                raise ShapeError(
                    f"data shape {data_t.shape} must start with indices shape {index_t.shape}"
                )
            rest = TensorShape(d_dims[len(i_dims) :])
            if not extra.is_compatible_with(rest):
                raise ShapeError(f"Dimensions of the stitched values differ: {extra} and {rest}")
            extra = extra.merge_with(rest)
        first: Dim = largest + 1 if known else None
        if extra.dims is None:
            return [(TensorShape(None), dtype)]
        return [(TensorShape([first, *extra.dims]), dtype)]

    return infer


def _stitch_kernel(xp: Any, op: Operation, state: Any) -> Any:
    dtype = op.outputs[0].dtype.np

    def stitch(*inputs: Any) -> Any:
        n = len(inputs) // 2
        indices, data = inputs[:n], inputs[n:]
        rest = data[0].shape[indices[0].ndim :]
        size = 1 + max((int(i.max()) for i in indices if i.size), default=-1)
        out = xp.zeros((size, *rest), dtype=dtype)
        for index, values in zip(indices, data):  # later pieces win, as in DynamicStitch
            if index.ndim > values.ndim or values.shape[: index.ndim] != index.shape:
                raise InvalidArgumentError(
                    f"data.shape {list(values.shape)} does not start with indices.shape "
                    f"{list(index.shape)}",
                    op=op,
                )
            out[index.reshape(-1)] = values.reshape(-1, *rest)
        return out

    return stitch


for _type in ("DynamicStitch", "ParallelDynamicStitch"):
    registry.register(
        OpDef(
            type=_type,
            infer=_infer_stitch(_type),
            kernel=_stitch_kernel,
            cost=memory_cost,
            supported=_KERNELS,
        )
    )


def _stitch(op_type: str, indices: Sequence[Any], data: Sequence[Any], name: str | None) -> Tensor:
    if len(indices) != len(data) or not indices:
        raise ValueError(
            f"{op_type} needs as many data as indices, at least one: got {len(indices)} and "
            f"{len(data)}"
        )
    tensors = [convert_to_tensor(t) for t in (*indices, *data)]
    return make_op(op_type, tensors, name or op_type).outputs[0]


def dynamic_stitch(indices: Sequence[Any], data: Sequence[Any], name: str | None = None) -> Tensor:
    """``merged[indices[i][j]] = data[i][j]``; where indices repeat, the later piece wins."""
    return _stitch("DynamicStitch", indices, data, name)


def parallel_dynamic_stitch(
    indices: Sequence[Any], data: Sequence[Any], name: str | None = None
) -> Tensor:
    """DynamicStitch that TF may run in parallel: which repeated index wins is unspecified."""
    return _stitch("ParallelDynamicStitch", indices, data, name)


# -- embedding_lookup --------------------------------------------------------------------------
def embedding_lookup(
    params: Any,
    ids: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    validate_indices: bool = True,
    max_norm: Any = None,
) -> Tensor:
    """TF1's ``nn.embedding_lookup``: the rows of ``params`` that ``ids`` name, shaped
    ``ids.shape + params.shape[1:]``. Each gather is colocated with its table (a variable's
    gather runs on the variable's device); ``max_norm`` clips each row's L2 norm. The table's
    gradient is dense (an UnsortedSegmentSum), with the values of TF's IndexedSlices densified.
    ``validate_indices`` is ignored, as in TF."""
    if params is None:
        raise ValueError("params must be specified")
    if isinstance(params, list | tuple) and not params:
        raise ValueError("Length of params is currently 0. Need at least one param.")
    tables = list(params) if isinstance(params, list | tuple) else [params]
    graph = get_default_graph()
    with graph.name_scope(name or "embedding_lookup") as scope:
        tables_t = [convert_to_tensor(p, name="params") for p in tables]
        ids_t = convert_to_tensor(ids, name="ids")
        if len(tables_t) == 1:
            # TF's gather refuses other ids before it makes its axis
            check_dtype("indices", ids_t.dtype, INDEX_DTYPES)
            with graph.colocate_with(tables_t[0]):
                found = array_ops.gather(tables_t[0], ids_t, name=scope)
                result = _clip(found, ids_t, max_norm)
            return state_ops.identity(result)
        return _partitioned(graph, tables_t, ids_t, partition_strategy, scope, max_norm)


def _partitioned(
    graph: Any,
    tables: list[Tensor],
    ids: Tensor,
    strategy: str,
    scope: str,
    max_norm: Any,
) -> Tensor:
    n = len(tables)
    flat_ids = array_ops.reshape(ids, [-1])
    original = math_ops.arange(array_ops.size(flat_ids, out_type=dtypes.int32))
    if strategy == "mod":
        assignments = flat_ids % n
        new_ids = flat_ids // n
    elif strategy == "div":
        assignments, new_ids = _div_assignments(graph, tables, flat_ids)
    else:
        raise ValueError(
            f"Unrecognized partition strategy: {strategy}.Must be one of either `mod` or `div`."
        )
    assignments = array_ops.cast(assignments, dtypes.int32)
    gather_ids = dynamic_partition(new_ids, assignments, n)
    positions = dynamic_partition(original, assignments, n)
    pieces = []
    for table, piece_ids in zip(tables, gather_ids):
        with graph.device(None), graph.colocate_with(table):
            pieces.append(array_ops.gather(table, piece_ids))
    stitched = parallel_dynamic_stitch(positions, pieces, name=scope)
    element = tables[0].shape[1:]
    for table in tables[1:]:
        element = element.merge_with(table.shape[1:])
    if element.is_fully_defined:
        element_dims: Any = element.as_list()
    else:
        with graph.colocate_with(tables[0]):
            element_dims = array_ops.shape(tables[0])[1:]
    target = array_ops.concat([array_ops.shape(ids), element_dims], 0)
    result = array_ops.reshape(stitched, target)
    known = ids.shape.dims is not None and element.dims is not None
    result.set_shape(TensorShape([*ids.shape.dims, *element.dims]) if known else None)
    return _clip(result, ids, max_norm)


def _div_assignments(graph: Any, tables: list[Tensor], flat_ids: Tensor) -> tuple[Tensor, Tensor]:
    """TF's "div" strategy: contiguous ranges of ids per shard, the first ``extras`` shards one
    row longer."""
    n = len(tables)
    rows = [t.shape[0] if t.shape.ndims else None for t in tables]
    if None not in rows:
        total = constant_op.constant(sum(rows), flat_ids.dtype)
    else:
        sizes: list[Any] = []
        for table, row in zip(tables, rows):
            if row is not None:
                sizes.append(row)
            else:
                with graph.colocate_with(table):
                    sizes.append(array_ops.shape(table)[0])
        total = math_ops.reduce_sum(array_ops.cast(array_ops.stack(sizes), flat_ids.dtype))
    per_shard = total // n
    extras = total % n
    assignments = math_ops.maximum(flat_ids // (per_shard + 1), (flat_ids - extras) // per_shard)
    new_ids = math_ops.select(
        assignments < extras, flat_ids % (per_shard + 1), (flat_ids - extras) % per_shard
    )
    return assignments, new_ids


def _clip(rows: Tensor, ids: Tensor, max_norm: Any) -> Tensor:
    """TF's ``_clip``: each looked-up row scaled down to L2 norm ``max_norm`` where longer
    (``clip_by_norm`` over the row's own axes)."""
    if max_norm is None:
        return rows
    ids_rank, rows_rank = ids.shape.ndims, rows.shape.ndims
    if not ids_rank or not rows_rank:
        raise ValueError("max_norm needs ids and params of known, non-zero rank")
    return clip_ops.clip_by_norm(rows, max_norm, list(range(ids_rank, rows_rank)))
