"""Dry runs: a run that computes no value and allocates no tensor, for models bigger than this
machine ("will it fit?").

A dry plan is the real plan (same steps, placements, transfers, lifetimes and memory checks)
whose kernels return ``ShapedArray``s. Its shapes are specialized once per plan and set of fed
shapes: each op whose static shape is not fully defined has its shape rule (``OpDef.infer``) run
again with its inputs' specialized shapes, and with the values of the small shape-valued tensors
(``Shape``, ``Size``, what is computed from them and from constants) that construction could not
know; every other tensor keeps its static shape. So a dry kernel is a constant: running a dry plan
costs one call per step, and its modeled timeline is computed once.

Fed values are ShapedArrays, or arrays taken for their shapes; a fed small int or bool array
also gives its value (a fed ``k``, axis or cond predicate), so plans are keyed by those values
too. A cond runs the branch its predicate takes where the dry run knows the predicate's value (a
constant, a comparison of shapes, a fed bool, whether a variable is initialized where an Assign
before in the plan gives it its value: ``initialized_value()``'s cond in an initializer's run).
A shape that only values give (``where`` with one argument of floats, ``unique``) cannot be
specialized: the run fails naming the op, and the tensor whose shape to feed (a ``ShapedArray``
may be fed to any feedable tensor); so does a cond whose predicate is not known.

A while loop runs dry iteration by iteration (``runtime.frames``, as a real one): its control
ops (Enter, Merge, Switch, NextIteration, Exit, LoopCond, a stack's push and pop) run their own
kernels on whatever they are given, its small int and bool ops compute their values for real
from the known values of what they read (a counter compared with a bound that shapes, constants
or fed values give, as ``dynamic_rnn``'s ``time < max_time`` or ``maximum_iterations``), and
every other op gives a new ShapedArray per execution (its shape from its inputs' at run time
where static shapes fall short). A loop whose condition values a dry run does not compute
decide fails naming the loop and what to give it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.dtypes import DType
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops.control_flow_ops import (
    DEAD,
    ENTER_TYPES,
    MERGE_TYPES,
    SWITCH_TYPES,
)
from placeviz.graph.ops.shape_ops import host_ints
from placeviz.graph.ops.stack_ops import Stack
from placeviz.graph.shapes import TensorShape
from placeviz.runtime.plan import Plan
from placeviz.runtime.state import SessionState, VariableSlot

Shape = tuple[int, ...]

# Tensors whose values a dry run computes while specializing shapes: shape-like ones this small.
_MAX_KNOWN_ELEMENTS = 1024
_INDEX_KINDS = (dtypes.int32, dtypes.int64, dtypes.bool)


class ShapedArray:
    """A dry run's value: only a shape and a dtype (``.shape``, ``.dtype``, ``.nbytes``).

    Fetched from a dry run; fed to one in place of an array (an array is taken for its shape)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape: Iterable[int], dtype: Any) -> None:
        dims = tuple(shape)
        if not all(isinstance(d, int | np.integer) and d >= 0 for d in dims):
            raise ValueError(f"A ShapedArray's dimensions must be known and >= 0, got {dims}")
        self.shape: Shape = tuple(int(d) for d in dims)
        self.dtype: DType = dtypes.as_dtype(dtype).base_dtype

    def fresh(self) -> ShapedArray:
        """Another value of this shape and dtype (a loop's op makes one per execution)."""
        made = ShapedArray.__new__(ShapedArray)
        made.shape, made.dtype = self.shape, self.dtype
        return made

    @classmethod
    def like(cls, value: Any, dtype: DType | None = None) -> ShapedArray:
        """The shape (and dtype, unless given) of an array or of another ShapedArray."""
        if isinstance(value, ShapedArray):
            return value if dtype is None or dtype is value.dtype else cls(value.shape, dtype)
        array = np.asarray(value) if not hasattr(value, "shape") else value
        return cls(array.shape, dtype if dtype is not None else dtypes.as_dtype(array.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.size

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ShapedArray):
            return NotImplemented
        return self.shape == other.shape and self.dtype is other.dtype

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype.name))

    def __repr__(self) -> str:
        return f"ShapedArray(shape={self.shape}, dtype={self.dtype.name})"


class DrySlot:
    """A variable's state in dry runs: what a dry initializer assigned, else the shape of the
    value a real run gave it; uninitialized in both, reading it is TF's error."""

    __slots__ = ("_real", "value")

    def __init__(self, real: VariableSlot) -> None:
        self._real = real
        self.value: ShapedArray | None = None

    def read(self) -> ShapedArray:
        if self.value is not None:
            return self.value
        real = self._real.read()  # uninitialized: TF's FailedPreconditionError
        return ShapedArray.like(real, self._real.op.outputs[0].dtype.base_dtype)

    def hold(self, value: ShapedArray) -> ShapedArray:
        self.value = value
        return value


class DryState:
    """A session's variables as dry runs see them, beside (never in) its real state."""

    def __init__(self, real: SessionState) -> None:
        self._real = real
        self._slots: dict[int, DrySlot] = {}

    def slot(self, op: Operation) -> DrySlot:
        found = self._slots.get(op.id)
        if found is None:
            found = self._slots[op.id] = DrySlot(self._real.variable_slot(op))
        return found


class DryPlan:
    """One plan's shapes for one set of fed shapes, and its ops' dry kernels."""

    def __init__(
        self,
        plan: Plan,
        fed_shapes: Sequence[Shape],
        state: DryState,
        known: Sequence[np.ndarray | None] = (),
    ) -> None:
        """``known``: per feed, its value where it is a shape-like array (else None)."""
        self._state = state
        self._shapes: dict[int, Shape] = {}  # tensor id -> shape, where static shapes fall short
        self._values: dict[int, np.ndarray | None] = {}  # known values of shape-like tensors
        self._fed: dict[int, Shape] = {}
        for i, (tensor, shape) in enumerate(zip(plan.feeds, fed_shapes)):
            self._fed[id(tensor)] = self._shapes[id(tensor)] = tuple(shape)
            self._values[id(tensor)] = known[i] if i < len(known) else None
        # ops inside loops (their kernels run once per iteration), by id
        self._looped = {op.id for frame in plan.frames.values() for op in frame.ops}
        # What branches not taken hold: op ids, tensor ids.
        self._dead_ops: set[int] = set()
        self._dead: set[int] = set()
        self._branch: dict[int, bool] = {}  # a Switch's op id -> whether it takes its true branch
        self._assigned: set[int] = set()  # the variables an Assign gave a value so far in order
        for op in plan.ops:
            if op.id in plan.frames:  # a loop: its ops' shapes are found as it runs
                continue
            if self._not_taken(op):
                self._dead_ops.add(op.id)
                self._dead.update(id(t) for t in op.outputs)
                continue
            if op.type == "Assign":
                self._assigned.add(op.inputs[0].op.id)
            if not all(t.shape.is_fully_defined or id(t) in self._fed for t in op.outputs):
                self._specialize(op)
            if op.type in SWITCH_TYPES:
                taken = self._branch[op.id] = self._predicate(op)
                self._dead.add(id(op.outputs[0 if taken else 1]))

    def shape(self, tensor: Tensor) -> Shape:
        """The tensor's shape in this plan's runs (one the plan makes, reads or is fed); in a
        branch not taken, its unknown dimensions are 0 (it holds nothing)."""
        found = self.known_shape(tensor)
        if found is None:
            assert id(tensor) in self._dead, tensor.name
            dims = tensor.shape.dims
            return (0,) if dims is None else tuple(d or 0 for d in dims)
        return found

    def known_shape(self, tensor: Tensor) -> Shape | None:
        """The tensor's shape where the plan knows it (None: ops outside the plan make it)."""
        found = self._shapes.get(id(tensor))
        if found is not None:
            return found
        return tuple(tensor.shape.dims) if tensor.shape.is_fully_defined else None  # type: ignore[arg-type]

    def kernel(self, op: Operation) -> Callable[..., Any]:
        """What the plan calls for ``op``: its outputs' ShapedArrays, made once; a variable's
        dry state; reading a variable checks it holds a value, and Assign gives it one."""
        if op.op_def.ref_output and not op.inputs:
            slot = self._state.slot(op)
            return lambda: slot
        if op.type == "StackV2":  # a real stack: a loop pushes and pops its ShapedArrays
            known = self.value(op.inputs[0])
            size = -1 if known is None else int(host_ints(known)[0])
            name, dtype = op.attrs["stack_name"] or op.name, op.attrs["elem_type"]
            return lambda max_size: Stack(name, dtype, size)
        if op.id in self._looped:
            return self._loop_kernel(op)
        if op.id in self._branch:  # a Switch a run reaches (one in a branch not taken: none)
            return self._switch(op)
        if op.type in MERGE_TYPES:
            return _merge
        outputs = tuple(ShapedArray(self.shape(t), t.dtype) for t in op.outputs)
        result: Any = outputs if op.op_def.multi_output else (outputs[0] if outputs else None)
        if op.type == "Assign":
            return lambda ref, value: ref.hold(result)
        refs = [i for i, t in enumerate(op.inputs) if t.op.op_def.ref_output]
        if not refs or op.type == "IsVariableInitialized":
            return lambda *inputs: result

        def read_then(*inputs: Any) -> Any:
            for i in refs:
                inputs[i].read()
            return result

        return read_then

    def loop_argument(self, tensor: Tensor) -> np.ndarray | None:
        """An outer value a loop reads, where the dry run knows it (a bound its counter is
        compared with): the loop computes with it."""
        if id(tensor) in self._dead:
            return None
        return self.value(tensor)

    def _loop_kernel(self, op: Operation) -> Callable[..., Any]:
        """A loop's op, run once per iteration: a control op's own kernel (a predicate must be
        known), a small int or bool op's value where its inputs are known, else new
        ShapedArrays."""
        own = op.op_def.kernel_for("numpy")
        kind = op.type
        if kind in ("LoopCond", *SWITCH_TYPES):
            return self._decided(op, own(np, op, None))
        if kind in _FORWARDING or kind in ("StackPushV2", "StackPopV2", "ControlTrigger"):
            return own(np, op, None)
        shaped = self._shaped(op)
        if not self._small(op):
            return shaped
        real = own(np, op, None)

        def value_or_shape(*inputs: Any) -> Any:
            if any(isinstance(v, ShapedArray) for v in inputs):
                return shaped(*inputs)
            return real(*inputs)

        return value_or_shape

    def _small(self, op: Operation) -> bool:
        """Whether a loop's op computes a shape-like value (a counter, a comparison)."""
        d = op.op_def
        if d.stateful or d.needs_feed or d.ref_output or not op.outputs:
            return False
        for t in op.outputs:
            if t.dtype.base_dtype not in _INDEX_KINDS:
                return False
            if t.shape.is_fully_defined and t.shape.num_elements() > _MAX_KNOWN_ELEMENTS:
                return False
        return all(not t.op.op_def.ref_output for t in op.inputs)

    def _shaped(self, op: Operation) -> Callable[..., Any]:
        """A loop's op as new ShapedArrays per execution: of its static shapes, or (where they
        fall short) of what its shape rule gives for its inputs' shapes and known values."""
        made = op.op_def.multi_output
        refs = [i for i, t in enumerate(op.inputs) if t.op.op_def.ref_output]
        if all(t.shape.is_fully_defined for t in op.outputs):
            outputs = [ShapedArray(tuple(t.shape.dims), t.dtype) for t in op.outputs]  # type: ignore[arg-type]

            def static(*inputs: Any) -> Any:
                for i in refs:
                    inputs[i].read()
                if made:
                    return tuple(o.fresh() for o in outputs)
                return outputs[0].fresh() if outputs else None

            return static
        infer = op.op_def.run_infer or op.op_def.infer

        def inferred(*inputs: Any) -> Any:
            for i in refs:
                inputs[i].read()
            seen = [_AtRun(t, v) for t, v in zip(op.inputs, inputs)]
            try:
                specs = infer(seen, op.attrs)
            except (ValueError, TypeError, IndexError) as exc:
                raise InvalidArgumentError(
                    f"Dry run: {exc}\n\t[[node '{op.name}' ({op.type}) created at {op.source}]]",
                    op=op,
                ) from None
            outputs = []
            for tensor, (shape, _) in zip(op.outputs, specs):
                if not shape.is_fully_defined:
                    raise _value_dependent(tensor, shape, seen)  # type: ignore[arg-type]
                outputs.append(ShapedArray(tuple(shape.dims), tensor.dtype))  # type: ignore[arg-type]
            return tuple(outputs) if made else (outputs[0] if outputs else None)

        return inferred

    def _decided(self, op: Operation, own: Callable[..., Any]) -> Callable[..., Any]:
        """A loop's LoopCond or Switch: its predicate must be a value the dry run computed."""
        position = 0 if op.type == "LoopCond" else 1

        def decided(*inputs: Any) -> Any:
            if isinstance(inputs[position], ShapedArray):
                raise _undecided(op)
            return own(*inputs)

        return decided

    def _switch(self, op: Operation) -> Callable[..., Any]:
        """A cond's Switch forwards its data (a ShapedArray, or a variable's dry state) to the
        branch its predicate takes."""
        if self._branch[op.id]:
            return lambda data, pred: (DEAD, data)
        return lambda data, pred: (data, DEAD)

    def _predicate(self, switch: Operation) -> bool:
        """A Switch's predicate, where the dry run knows it (a constant, a comparison of shapes,
        a fed bool array)."""
        pred = switch.inputs[1]
        value = self.value(pred)
        if value is None:
            raise InvalidArgumentError(
                f"Dry run: which branch of '{switch.name}' ({switch.type}, created at "
                f"{switch.source}) runs depends on the value of {pred.name}, which a dry run "
                f"does not compute: feed {pred.op.name if pred.op.op_def.needs_feed else pred.name}"
                " a bool array (its value picks the branch)",
                op=switch,
            )
        return bool(value)

    def _not_taken(self, op: Operation) -> bool:
        """Whether ``op`` is in a branch not taken (TensorFlow's rule: an op is dead when any
        input, data or control, is; a Merge when all its inputs are)."""
        if not self._dead:
            return False
        dead = [id(t) in self._dead and id(t) not in self._fed for t in op.inputs]
        if op.type in MERGE_TYPES:
            return all(dead)
        return any(dead) or any(c.id in self._dead_ops for c in op.control_inputs)

    # -- specialization ------------------------------------------------------------------------
    def _specialize(self, op: Operation) -> None:
        live = [t for t in op.inputs if id(t) not in self._dead or op.type not in MERGE_TYPES]
        inputs = [_Specialized(t, self) for t in live]  # a Merge: the branch taken's
        try:
            specs = (op.op_def.run_infer or op.op_def.infer)(inputs, op.attrs)
        except (ValueError, TypeError, IndexError) as exc:
            raise InvalidArgumentError(
                f"Dry run: {exc}\n\t[[node '{op.name}' ({op.type}) created at {op.source}]]",
                op=op,
            ) from None
        for tensor, (shape, _) in zip(op.outputs, specs):
            if id(tensor) in self._fed:
                continue
            if not shape.is_fully_defined:
                value = self.value(tensor)  # a shape-like tensor computed from known values
                if value is None:
                    raise _value_dependent(tensor, shape, inputs)
                shape = TensorShape(value.shape)
            self._shapes[id(tensor)] = tuple(shape.dims)  # type: ignore[arg-type]

    def value(self, tensor: Tensor) -> np.ndarray | None:
        """The tensor's value where shapes and constants give it (a shape-like tensor)."""
        key = id(tensor)
        if key in self._values:
            return self._values[key]
        self._values[key] = found = self._compute(tensor)
        return found

    def _compute(self, tensor: Tensor) -> np.ndarray | None:
        op = tensor.op
        if op.id in self._looped:  # a loop's values change per iteration
            return None
        if op.type == "Const":
            return np.asarray(op.attrs["value"])
        if op.type == "IsVariableInitialized":  # known where the plan itself assigns it first
            return np.asarray(True) if op.inputs[0].op.id in self._assigned else None
        if op.type in ("Shape", "ShapeN", "Size", "Rank"):
            shape = self.known_shape(op.inputs[tensor.value_index if op.type == "ShapeN" else 0])
            if shape is None:
                return None
            found = {"Size": math.prod(shape), "Rank": len(shape)}.get(op.type, shape)
            return np.asarray(found, dtype=tensor.dtype.np)
        own = self.known_shape(tensor)
        if (
            op.op_def.stateful
            or op.op_def.needs_feed
            or op.op_def.ref_output
            or tensor.dtype.base_dtype not in _INDEX_KINDS
            or (own is not None and math.prod(own) > _MAX_KNOWN_ELEMENTS)
        ):
            return None
        values = [self.value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        try:
            result = op.op_def.kernel_for("numpy")(np, op, None)(*values)
        except Exception:  # a kernel that needs more than its inputs (state): value unknown
            return None
        found = np.asarray(result[tensor.value_index] if op.op_def.multi_output else result)
        return found if found.size <= _MAX_KNOWN_ELEMENTS else None


class _Specialized:
    """A tensor as a shape rule sees it in a dry plan: its specialized shape, and (when the dry
    run knows its value) a constant as its op, which ``constant_value`` reads."""

    __slots__ = ("_tensor", "op", "shape")

    def __init__(self, tensor: Tensor, plan: DryPlan) -> None:
        self._tensor = tensor
        known = plan.known_shape(tensor)
        self.shape = tensor.shape if known is None else TensorShape(known)
        value = plan.value(tensor)
        self.op: Any = tensor.op if value is None else _Known(tensor.op, value)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tensor, name)


class _Known:
    """An op seen as the constant it computed (``constant_value`` reads Const's ``value``)."""

    __slots__ = ("_op", "attrs")
    type = "Const"
    inputs = ()

    def __init__(self, op: Operation, value: np.ndarray) -> None:
        self._op = op
        self.attrs: Mapping[str, Any] = {**op.attrs, "value": value}

    @property
    def op_def(self) -> registry.OpDef:
        return registry.get("Const")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._op, name)


def _value_dependent(
    tensor: Tensor, shape: TensorShape, inputs: Sequence[_Specialized]
) -> InvalidArgumentError:
    op = tensor.op
    read = ", ".join(f"{t.name} {t.shape}" for t in inputs) or "no inputs"
    dims = ", ".join("n" if d is None else str(d) for d in (shape.dims or ()))
    return InvalidArgumentError(
        f"Dry run: the shape of {tensor.name} ({shape} as far as shapes tell) depends on the "
        f"values of '{op.name}' ({op.type}, created at {op.source}), reading {read}; a dry run "
        f"computes no values. Feed its shape: feed_dict={{'{tensor.name}': "
        f"pv.ShapedArray([{dims}], pv.{tensor.dtype.base_dtype.name})}}",
        op=op,
    )


class _AtRun:
    """A loop's tensor as a shape rule sees it in one execution: the shape of the value it
    holds then, and its value where the dry run computed one."""

    __slots__ = ("_tensor", "op", "shape")

    def __init__(self, tensor: Tensor, value: Any) -> None:
        self._tensor = tensor
        shape = getattr(value, "shape", None)
        self.shape = tensor.shape if shape is None else TensorShape(shape)
        real = isinstance(value, np.ndarray | np.generic)
        self.op: Any = _Known(tensor.op, np.asarray(value)) if real else tensor.op

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tensor, name)


# A loop's ops that forward what they are given (their own kernels run in a dry loop).
_FORWARDING = (
    ENTER_TYPES
    | MERGE_TYPES
    | {
        "Exit",
        "RefExit",
        "NextIteration",
        "RefNextIteration",
        "Identity",
    }
)


def _undecided(op: Operation) -> InvalidArgumentError:
    """A dry loop whose condition (or a cond inside it) values decide."""
    frame = op._control_flow_context
    loop = getattr(frame, "name", "the loop")
    pred = op.inputs[0 if op.type == "LoopCond" else 1]
    return InvalidArgumentError(
        f"Dry run: how many times '{loop}' runs depends on the values of '{op.name}' "
        f"({op.type}, created at {op.source}), reading {pred.name}, which a dry run does not "
        "compute: give the loop a bound the dry run knows (pv.while_loop(..., "
        "maximum_iterations=n) with a constant or fed n, or a condition comparing a counter "
        "with a shape or a fed int) and feed the ints and bools it reads",
        op=op,
    )


_MERGE_INDEX = ShapedArray((), dtypes.int32)


def _merge(*values: Any) -> tuple[Any, Any]:
    """A cond's Merge: what the branch taken made (the generated plan skips a Merge whose
    inputs are all dead)."""
    for value in values:
        if value is not DEAD:
            return value, _MERGE_INDEX
    return DEAD, DEAD


def known_value(tensor: Tensor, value: Any) -> np.ndarray | None:
    """A fed value a dry run keeps: a small int or bool array (a shape, an axis, a ``k``, a
    cond's predicate), whose value shapes and branches may depend on; else None."""
    if isinstance(value, ShapedArray) or tensor.dtype.base_dtype not in _INDEX_KINDS:
        return None
    array = np.asarray(value, dtype=tensor.dtype.base_dtype.np)
    return array if array.size <= _MAX_KNOWN_ELEMENTS else None


def fed_shape(tensor: Tensor, value: Any) -> ShapedArray:
    """A dry run's feed: a ShapedArray or an array, checked against the tensor as a real feed."""
    dtype = tensor.dtype.base_dtype
    shaped = ShapedArray.like(value, None if isinstance(value, ShapedArray) else dtype)
    if shaped.dtype is not dtype:
        raise InvalidArgumentError(
            f"Cannot feed {value!r} to Tensor '{tensor.name}' of dtype {dtype.name} (created at "
            f"{tensor.op.source})",
            op=tensor.op,
        )
    check_fed_shape(tensor, shaped.shape)
    return ShapedArray(shaped.shape, dtype)


def check_fed_shape(tensor: Tensor, shape: tuple[int, ...]) -> None:
    """A fed value's shape must fit the tensor's (a real feed's and a dry feed's alike)."""
    if not tensor.shape.is_compatible_with(shape):
        raise InvalidArgumentError(
            f"Cannot feed value of shape {shape} for Tensor '{tensor.name}' (created at "
            f"{tensor.op.source}), which has shape {tensor.shape}",
            op=tensor.op,
        )
