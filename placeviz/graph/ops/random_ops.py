"""Random tensors (``random_uniform``, ``random_normal``, ``truncated_normal``), built of
TensorFlow's ops, and the graph-level seed.

Each run draws new values, as in TensorFlow: the kernel keeps the generator the run state hands
out for the op (seeded from the op's ``seed`` attr and the graph's seed) and draws from it on
every call.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor, get_default_graph, is_tensor_like
from placeviz.graph.ops import constant_op, math_ops
from placeviz.graph.ops._build import make_op, require_dtype, same_dtype, single
from placeviz.graph.ops.array_ops import static_dims, write_only_cost
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.shape_ops import check_shape_tensor, host_ints, shape_from_tensor
from placeviz.graph.registry import OpDef, OutputSpec
from placeviz.graph.shapes import ShapeError

_FLOAT16_STEPS = 2048  # float16 holds every multiple of 1/2048 in [0, 1) exactly


def _supported(allowed: Sequence[dtypes.DType]) -> Mapping[str, frozenset[dtypes.DType]]:
    return {t: frozenset(allowed) for t in registry.DEVICE_TYPES}


def _draw_dtype(dtype: dtypes.DType) -> Any:
    """NumPy's generators make no float16: draw float32 and cast."""
    return dtypes.float32.np if dtype is dtypes.float16 else dtype.np


def _check_seed(seed: Any) -> int | None:
    if seed is None:
        return None
    if not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int or None, got {seed!r}")
    return int(seed)


def _shape_tensor(shape: Any) -> Tensor:
    """The ``shape`` input TensorFlow's random ops take: a tensor, or an int32 Const."""
    if is_tensor_like(shape):
        tensor = convert_to_tensor(shape)
        check_shape_tensor(tensor, "shape")
        return tensor
    return constant_op.constant(static_dims(shape), dtypes.int32, name="shape")


def _infer_draw(op_type: str, allowed: Sequence[dtypes.DType]) -> Any:
    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
        require_dtype(op_type, attrs["dtype"], allowed)
        check_shape_tensor(inputs[0], "shape")
        return single(shape_from_tensor(inputs[0]), attrs["dtype"])

    return infer


def _draw_cost(flops: float) -> Any:
    return lambda op, ins, outs: write_only_cost(op, ins, outs, flops_per_element=flops)


# -- RandomUniform, RandomUniformInt -----------------------------------------------------------
def _uniform_kernel(xp: Any, op: Operation, state: Any) -> Any:
    """Values in [0, 1): the op TF's ``random_uniform`` scales and shifts with Mul and AddV2."""
    gen = state.rng(op)
    dtype = op.outputs[0].dtype
    draw, out = _draw_dtype(dtype), dtype.np
    if dtype is not dtypes.float16:
        return lambda shape: gen.random(host_ints(shape), dtype=draw)

    def uniform_half(shape: Any) -> Any:
        # float32 values just below 1 would round up to 1.0 in float16: keep [0, 1) half-open.
        values = gen.random(host_ints(shape), dtype=draw)
        values *= _FLOAT16_STEPS
        xp.floor(values, out=values)
        values /= _FLOAT16_STEPS
        return values.astype(out)

    return uniform_half


registry.register(
    OpDef(
        type="RandomUniform",
        infer=_infer_draw("RandomUniform", dtypes.FLOATS),
        kernel=_uniform_kernel,
        cost=_draw_cost(4.0),
        supported=_supported(dtypes.FLOATS),
        stateful=True,
    )
)


def _infer_uniform_int(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    shape, low, high = inputs
    check_shape_tensor(shape, "shape")
    for what, tensor in (("minval", low), ("maxval", high)):
        if tensor.shape.ndims not in (None, 0):
            raise ShapeError(f"{what} must be 0-D, got shape {tensor.shape}")
    dtype = same_dtype("RandomUniformInt", [low, high], ("minval", "maxval"))
    require_dtype("RandomUniformInt", dtype, (dtypes.int32, dtypes.int64))
    return single(shape_from_tensor(shape), dtype)


def _uniform_int_kernel(xp: Any, op: Operation, state: Any) -> Any:
    gen = state.rng(op)
    out = op.outputs[0].dtype.np

    def uniform_int(shape: Any, low: Any, high: Any) -> Any:
        if int(low) >= int(high):
            raise InvalidArgumentError(f"Need minval < maxval: {int(low)} >= {int(high)}", op=op)
        return gen.integers(int(low), int(high), size=host_ints(shape), dtype=out)

    return uniform_int


registry.register(
    OpDef(
        type="RandomUniformInt",
        infer=_infer_uniform_int,
        kernel=_uniform_int_kernel,
        cost=_draw_cost(4.0),
        supported=_supported((dtypes.int32, dtypes.int64)),
        stateful=True,
    )
)


def random_uniform(
    shape: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Values in [minval, maxval), built as TensorFlow builds them: a RandomUniform in [0, 1)
    scaled by ``maxval - minval`` and shifted by ``minval`` (left as it is for the default
    range), or a RandomUniformInt for integer dtypes, which need an explicit ``maxval``."""
    target = dtypes.as_dtype(dtype)
    if target not in dtypes.NUMBERS or target.is_bool:
        raise ValueError(
            f"Argument `dtype` got invalid value {target.name}. Accepted dtypes are floating "
            "point and int32/int64 types."
        )
    if maxval is None:
        if target.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {target.name}")
        maxval = 1
    seed = _check_seed(seed)
    graph = get_default_graph()
    with graph.name_scope(name or "random_uniform") as scope:
        shape_t = _shape_tensor(shape)
        unit = (
            not target.is_integer
            and isinstance(minval, int)
            and minval == 0
            and isinstance(maxval, int)
            and maxval == 1
        )
        if unit:
            attrs = {"dtype": target, "seed": seed}
            return make_op("RandomUniform", [shape_t], "RandomUniform", attrs).outputs[0]
        low = convert_to_tensor(minval, dtype=target, name="min")
        high = convert_to_tensor(maxval, dtype=target, name="max")
        if target.is_integer:
            op = make_op("RandomUniformInt", [shape_t, low, high], scope, {"seed": seed})
            return op.outputs[0]
        attrs = {"dtype": target, "seed": seed}
        unit_draw = make_op("RandomUniform", [shape_t], "RandomUniform", attrs).outputs[0]
        span = math_ops.subtract(high, low, name="sub")
        return math_ops.add(math_ops.multiply(unit_draw, span, name="mul"), low, name=scope)


# -- RandomStandardNormal ----------------------------------------------------------------------
def _normal_kernel(xp: Any, op: Operation, state: Any) -> Any:
    gen = state.rng(op)
    dtype = op.outputs[0].dtype
    draw, out = _draw_dtype(dtype), dtype.np
    return lambda shape: gen.standard_normal(host_ints(shape), dtype=draw).astype(out, copy=False)


registry.register(
    OpDef(
        type="RandomStandardNormal",
        infer=_infer_draw("RandomStandardNormal", dtypes.FLOATS),
        kernel=_normal_kernel,
        cost=_draw_cost(16.0),
        supported=_supported(dtypes.FLOATS),
        stateful=True,
    )
)


# -- TruncatedNormal ---------------------------------------------------------------------------
_TRUNCATE_AT = 2.0  # TF's kTruncateValue: standard normal draws kept strictly inside (-2, 2)


def _truncated_normal_kernel(xp: Any, op: Operation, state: Any) -> Any:
    """Rejection sampling as TF's TruncatedNormal: redraw every value outside (-2, 2) until none is
    left (each round redraws about 4.6% of the previous one)."""
    gen = state.rng(op)
    dtype = op.outputs[0].dtype
    draw, out = _draw_dtype(dtype), dtype.np

    def truncated_normal(shape: Any) -> Any:
        values = gen.standard_normal(host_ints(shape), dtype=draw)
        rejected = xp.abs(values) >= _TRUNCATE_AT
        while rejected.any():
            values[rejected] = gen.standard_normal(int(rejected.sum()), dtype=draw)
            rejected = xp.abs(values) >= _TRUNCATE_AT
        return values.astype(out, copy=False)

    return truncated_normal


registry.register(
    OpDef(
        type="TruncatedNormal",
        infer=_infer_draw("TruncatedNormal", dtypes.FLOATS),
        kernel=_truncated_normal_kernel,
        cost=_draw_cost(20.0),
        supported=_supported(dtypes.FLOATS),
        stateful=True,
    )
)


def _scaled_normal(
    op_type: str,
    default_name: str,
    shape: Any,
    mean: Any,
    stddev: Any,
    dtype: Any,
    seed: int | None,
    name: str | None,
) -> Tensor:
    """``op_type``'s standard draw scaled by ``stddev`` (Mul) and shifted by ``mean`` (AddV2), as
    TensorFlow builds ``random_normal`` and ``truncated_normal``."""
    target = dtypes.as_dtype(dtype)
    seed = _check_seed(seed)
    graph = get_default_graph()
    with graph.name_scope(name or default_name) as scope:
        shape_t = _shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=target, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=target, name="stddev")
        attrs = {"dtype": target, "seed": seed}
        draw = make_op(op_type, [shape_t], op_type, attrs)
        scaled = math_ops.multiply(draw.outputs[0], stddev_t, name="mul")
        return math_ops.add(scaled, mean_t, name=scope)


def random_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    return _scaled_normal(
        "RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed, name
    )


def truncated_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Normal values more than two standard deviations from ``mean`` dropped and redrawn."""
    return _scaled_normal(
        "TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed, name
    )


def set_random_seed(seed: int | None) -> None:
    """The graph-level seed: with it, ops without their own seed repeat across sessions."""
    get_default_graph().seed = _check_seed(seed)
