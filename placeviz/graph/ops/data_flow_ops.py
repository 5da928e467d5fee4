"""Queues and conditional accumulators (TF's ``data_flow_ops``): state that outlives a run and
that runs on other threads, or other clients of a cluster task, share.

A queue or an accumulator is a resource of the session's state (``SessionState.resource``),
named by its ``shared_name`` or, without one, by its op: every client of a task that names the
same resource uses the one object, as TF's resource manager hands out. Kernels that must wait (a
dequeue of an empty queue, an enqueue into a full one, a take of too few gradients) wait on the
resource's condition, so a run on another thread or from another client wakes them; closing a
queue wakes its waiters with TF's errors.

As TF 2.21's kernels: the queue's handle op, enqueue, dequeue, size and close also run on a GPU
(their handle in host memory), enqueue_many and dequeue_many and every accumulator op only on a
CPU; ``FIFOQueue`` puts its queue on a CPU itself.
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.errors import CancelledError, InvalidArgumentError, OutOfRangeError
from placeviz.graph import cancellation, registry
from placeviz.graph.core import Operation, Tensor, get_default_graph
from placeviz.graph.ops._build import make_op, op_scope
from placeviz.graph.ops.array_ops import cast
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.shape_ops import constant_value
from placeviz.graph.registry import ALL_DEVICES, OpDef, OutputSpec, free_cost
from placeviz.graph.shapes import TensorShape, as_shape

logger = logging.getLogger("placeviz")

# TF's resource manager names an unshared resource ``_<n>_<op name>``, n counting in the process.
_unshared_ids = itertools.count()
CPU_ONLY: Mapping[str, frozenset[dtypes.DType]] = {"CPU": ALL_DEVICES["CPU"]}


def _resource_name(op: Operation) -> str:
    return op.attrs["shared_name"] or f"_{next(_unshared_ids)}_{op.name}"


def _resource_key(op: Operation) -> str:
    """Where the session keeps it: by shared name, else by the op that makes it."""
    return f"{op.attrs['container']}/{op.attrs['shared_name'] or op.name}"


# -- the resources -----------------------------------------------------------------------------
class FIFOQueueResource:
    """TF's ``FIFOQueue``: tuples of arrays, first in first out, at most ``capacity`` of them
    (-1: no bound)."""

    nbytes = 0  # its elements are counted where they were made

    def __init__(self, name: str, capacity: int, shapes: Sequence[TensorShape]) -> None:
        self.name = name
        self.capacity = capacity
        self.shapes = list(shapes)
        self.elements: collections.deque[tuple[Any, ...]] = collections.deque()
        self.closed = False
        self.cancelled = False
        self.changed = threading.Condition()

    def __repr__(self) -> str:
        return f"<FIFOQueue {self.name} size={len(self.elements)}>"

    def reset(self) -> None:
        """Empty and open again, as a queue made anew (``Session.reset``)."""
        with self.changed:
            self.elements.clear()
            self.closed = self.cancelled = False
            self.changed.notify_all()

    def _full(self) -> bool:
        return 0 <= self.capacity <= len(self.elements)

    def enqueue(self, op: Operation, elements: Sequence[tuple[Any, ...]]) -> None:
        """Each element in turn, waiting while the queue is full."""
        for element in elements:
            self._check_shapes(op, element)
        with self.changed:
            for element in elements:
                while not self.closed and self._full():
                    cancellation.wait(self.changed, op)
                if self.cancelled:  # TF's words for an enqueue a close cancelled
                    raise CancelledError(f"Queue '{self.name}' is already closed.", op=op)
                if self.closed:
                    raise CancelledError(f"FIFOQueue '{self.name}' is closed.", op=op)
                self.elements.append(element)
                self.changed.notify_all()

    def dequeue(self, op: Operation, count: int) -> list[tuple[Any, ...]]:
        """``count`` elements, waiting until there are that many or the queue is closed."""
        with self.changed:
            while not self.closed and len(self.elements) < count:
                cancellation.wait(self.changed, op)
            if len(self.elements) < count:
                raise OutOfRangeError(
                    f"FIFOQueue '{self.name}' is closed and has insufficient elements "
                    f"(requested {count}, current size {len(self.elements)})",
                    op=op,
                )
            taken = [self.elements.popleft() for _ in range(count)]
            self.changed.notify_all()
            return taken

    def size(self) -> int:
        with self.changed:
            return len(self.elements)

    def close(self, cancel_pending_enqueues: bool) -> None:
        with self.changed:
            self.closed = True
            self.cancelled = self.cancelled or cancel_pending_enqueues
            self.changed.notify_all()

    def _check_shapes(self, op: Operation, element: tuple[Any, ...]) -> None:
        for index, (value, shape) in enumerate(zip(element, self.shapes)):
            if shape.dims is not None and not shape.is_compatible_with(np.shape(value)):
                raise InvalidArgumentError(
                    f"Shape mismatch in tuple component {index}. Expected {shape}, got "
                    f"{as_shape(np.shape(value))}",
                    op=op,
                )


class AccumulatorResource:
    """TF's ``ConditionalAccumulator``: sums gradients computed at a step no older than its
    global step (staler ones are dropped); a take waits for ``num_required`` of them, returns
    their mean (or sum) and starts the next step."""

    nbytes = 0

    def __init__(self, name: str, shape: TensorShape, reduction: str) -> None:
        self.name = name
        self.shape = shape
        self.reduction = reduction
        self.global_step = 0
        self.count = 0
        self.total: Any = None
        self.changed = threading.Condition()

    def __repr__(self) -> str:
        return f"<ConditionalAccumulator {self.name} count={self.count}>"

    def reset(self) -> None:
        """No gradient and global step 0, as an accumulator made anew (``Session.reset``)."""
        with self.changed:
            self.global_step = self.count = 0
            self.total = None
            self.changed.notify_all()

    def apply(self, op: Operation, xp: Any, local_step: int, gradient: Any) -> None:
        if self.shape.dims is not None and not self.shape.is_compatible_with(gradient.shape):
            raise InvalidArgumentError(
                f"Shape mismatch: expected {self.shape}, got {as_shape(gradient.shape)}", op=op
            )
        with self.changed:
            if local_step < self.global_step:
                return  # stale: silently dropped, as TF's
            if self.count == 0:
                self.total = xp.array(gradient, copy=True)
            else:
                if self.total.shape != gradient.shape:
                    raise InvalidArgumentError(
                        f"Shape mismatch: expected {as_shape(self.total.shape)}, got "
                        f"{as_shape(gradient.shape)}",
                        op=op,
                    )
                self.total += gradient
            self.count += 1
            self.changed.notify_all()

    def take(self, op: Operation, num_required: int) -> Any:
        if num_required < 1:
            raise InvalidArgumentError(
                f"Argument num_required must be positive, but was {num_required}", op=op
            )
        with self.changed:
            while self.count < num_required:
                cancellation.wait(self.changed, op)
            total, count = self.total, self.count
            self.total, self.count = None, 0
            self.global_step += 1
        return total / count if self.reduction == "MEAN" else total

    def num_accumulated(self) -> int:
        with self.changed:
            return self.count

    def set_global_step(self, step: int) -> None:
        with self.changed:
            if step < self.global_step:
                logger.warning(
                    "Attempt to set current_global_step_ to smaller value: "
                    "current_global_step_ = %d >= %d.",
                    self.global_step,
                    step,
                )
            self.global_step = step


# -- shape rules -------------------------------------------------------------------------------
def _check_handle(op_type: str, handle: Tensor) -> None:
    if handle.dtype.base_dtype is not dtypes.resource:
        raise TypeError(
            f"Input 'handle' of '{op_type}' Op has type {handle.dtype.name} that does not match "
            "expected type of resource."
        )


def _queue_shapes(handle: Tensor, types: Sequence[dtypes.DType]) -> list[TensorShape]:
    """The element shapes its queue declares (unknown for a handle from elsewhere)."""
    maker = handle.op
    if maker.type == "FIFOQueueV2" and maker.attrs["shapes"]:
        return list(maker.attrs["shapes"])
    return [TensorShape(None) for _ in types]


def _infer_queue(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    return [(TensorShape([]), dtypes.resource)]


def _no_outputs(op_type: str) -> Any:
    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
        _check_handle(op_type, inputs[0])
        return []

    return infer


def _infer_dequeue(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_handle("QueueDequeueV2", inputs[0])
    types = attrs["component_types"]
    return list(zip(_queue_shapes(inputs[0], types), types))


def _infer_dequeue_many(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_handle("QueueDequeueManyV2", inputs[0])
    types = attrs["component_types"]
    n = constant_value(inputs[1])
    batch = TensorShape([None if n is None else int(n)])
    return [
        (TensorShape(None) if s.dims is None else TensorShape([*batch, *s]), t)
        for s, t in zip(_queue_shapes(inputs[0], types), types)
    ]


def _infer_size(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_handle("QueueSizeV2", inputs[0])
    return [(TensorShape([]), dtypes.int32)]


def _infer_is_closed(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_handle("QueueIsClosedV2", inputs[0])
    return [(TensorShape([]), dtypes.bool)]


def _infer_accumulator(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    return [(TensorShape([2]), dtypes.resource)]  # TF's shape: a vector of 2 (a ref's)


def _infer_take(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_handle("ResourceAccumulatorTakeGradient", inputs[0])
    maker = inputs[0].op
    if maker.type == "ResourceConditionalAccumulator":
        return [(maker.attrs["shape"], attrs["dtype"])]
    return [(TensorShape(None), attrs["dtype"])]


def _infer_count(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_handle("ResourceAccumulatorNumAccumulated", inputs[0])
    return [(TensorShape([]), dtypes.int32)]


# -- kernels -----------------------------------------------------------------------------------
def _handle_kernel(make: Callable[[Operation], Any]) -> Any:
    """The kernel of an op that hands out the session's resource (a queue, an accumulator),
    made on first use by ``make`` and shared by name."""

    def kernel(xp: Any, op: Operation, state: Any) -> Any:
        resource = state.resource(_resource_key(op), lambda: make(op))
        return lambda: resource

    return kernel


_queue_kernel = _handle_kernel(
    lambda op: FIFOQueueResource(_resource_name(op), op.attrs["capacity"], op.attrs["shapes"])
)


def _enqueue_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def enqueue(queue: FIFOQueueResource, *components: Any) -> None:
        # The queue keeps copies: a run may reuse its buffers once the enqueue has read them.
        queue.enqueue(op, [tuple(xp.array(c, copy=True) for c in components)])

    return enqueue


def _enqueue_many_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def enqueue_many(queue: FIFOQueueResource, *components: Any) -> None:
        sizes = {len(c) for c in components}
        if len(sizes) != 1:
            raise InvalidArgumentError(
                "Dimension 0 of the components of an enqueue_many differ: "
                f"{[len(c) for c in components]}",
                op=op,
            )
        (size,) = sizes
        rows = [tuple(xp.array(c[i], copy=True) for c in components) for i in range(size)]
        queue.enqueue(op, rows)

    return enqueue_many


def _dequeue_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def dequeue(queue: FIFOQueueResource) -> tuple[Any, ...]:
        (element,) = queue.dequeue(op, 1)
        return element

    return dequeue


def _dequeue_many_kernel(xp: Any, op: Operation, state: Any) -> Any:
    types = op.attrs["component_types"]

    def dequeue_many(queue: FIFOQueueResource, n: Any) -> tuple[Any, ...]:
        if not queue.shapes:
            raise InvalidArgumentError(
                "FIFOQueue's DequeueMany and DequeueUpTo require the components to have "
                "specified shapes.",
                op=op,
            )
        count = int(n)
        if count < 0:
            raise InvalidArgumentError(
                f"Request dequeue_many of negative number of elements: {count}", op=op
            )
        elements = queue.dequeue(op, count)
        if not elements:
            return tuple(
                xp.zeros((0, *s.as_list()), dtype=t.np) for s, t in zip(queue.shapes, types)
            )
        return tuple(xp.stack(parts) for parts in zip(*elements))

    return dequeue_many


def _size_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda queue: xp.asarray(queue.size(), dtype=np.int32)


def _close_kernel(xp: Any, op: Operation, state: Any) -> Any:
    cancel = bool(op.attrs["cancel_pending_enqueues"])
    return lambda queue: queue.close(cancel)


def _is_closed_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda queue: xp.asarray(queue.closed)


_accumulator_kernel = _handle_kernel(
    lambda op: AccumulatorResource(
        _resource_name(op), op.attrs["shape"], op.attrs["reduction_type"]
    )
)


def _apply_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def apply(accumulator: AccumulatorResource, local_step: Any, gradient: Any) -> None:
        accumulator.apply(op, xp, int(local_step), gradient)

    return apply


def _take_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda accumulator, num_required: accumulator.take(op, int(num_required))


def _count_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda accumulator: xp.asarray(accumulator.num_accumulated(), dtype=np.int32)


def _set_step_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda accumulator, step: accumulator.set_global_step(int(step))


def _declare(
    op_type: str,
    infer: Any,
    kernel: Any,
    supported: Mapping[str, frozenset[dtypes.DType]] = ALL_DEVICES,
    fixed_output: bool = False,
    multi_output: bool = False,
    waits: bool = False,
) -> None:
    registry.register(
        OpDef(
            type=op_type,
            infer=infer,
            kernel=kernel,
            cost=free_cost,
            supported=supported,
            stateful=True,
            fixed_output=fixed_output,
            multi_output=multi_output,
            waits=waits,
        )
    )


# The handle ops hand out the session's resource, fixed once the plan is built (as a variable).
_declare("FIFOQueueV2", _infer_queue, _queue_kernel, fixed_output=True)
# Enqueues wait while a queue is full, dequeues while it is empty, a take until enough
# gradients came: each waits for another run.
_declare("QueueEnqueueV2", _no_outputs("QueueEnqueueV2"), _enqueue_kernel, waits=True)
_declare(
    "QueueEnqueueManyV2",
    _no_outputs("QueueEnqueueManyV2"),
    _enqueue_many_kernel,
    CPU_ONLY,
    waits=True,
)
_declare("QueueDequeueV2", _infer_dequeue, _dequeue_kernel, multi_output=True, waits=True)
_declare(
    "QueueDequeueManyV2",
    _infer_dequeue_many,
    _dequeue_many_kernel,
    CPU_ONLY,
    multi_output=True,
    waits=True,
)
_declare("QueueSizeV2", _infer_size, _size_kernel)
_declare("QueueCloseV2", _no_outputs("QueueCloseV2"), _close_kernel)
_declare("QueueIsClosedV2", _infer_is_closed, _is_closed_kernel)
_declare(
    "ResourceConditionalAccumulator",
    _infer_accumulator,
    _accumulator_kernel,
    CPU_ONLY,
    fixed_output=True,
)
_declare(
    "ResourceAccumulatorApplyGradient",
    _no_outputs("ResourceAccumulatorApplyGradient"),
    _apply_kernel,
    CPU_ONLY,
)
_declare("ResourceAccumulatorTakeGradient", _infer_take, _take_kernel, CPU_ONLY, waits=True)
_declare("ResourceAccumulatorNumAccumulated", _infer_count, _count_kernel, CPU_ONLY)
_declare(
    "ResourceAccumulatorSetGlobalStep",
    _no_outputs("ResourceAccumulatorSetGlobalStep"),
    _set_step_kernel,
    CPU_ONLY,
)


# -- the Python classes ------------------------------------------------------------------------
def _as_type_list(types: Any) -> list[dtypes.DType]:
    if isinstance(types, list | tuple):
        return [dtypes.as_dtype(t) for t in types]
    return [dtypes.as_dtype(types)]


def _as_shape_list(shapes: Any, types: Sequence[dtypes.DType]) -> list[TensorShape]:
    """TF's rule: None, one shape for a one-component queue, or one shape per component."""
    if shapes is None:
        return []
    if isinstance(shapes, TensorShape) or not isinstance(shapes, list | tuple):
        shapes = [shapes]
    elif len(types) == 1 and shapes and not isinstance(shapes[0], list | tuple | TensorShape):
        shapes = [shapes]  # shapes=(2,) of a one-component queue
    elif len(types) == 1 and not shapes:
        shapes = [shapes]  # shapes=() of a one-component queue: a scalar
    result = [as_shape(s) for s in shapes]
    if len(result) != len(types):
        raise ValueError(
            "Queue shapes must have the same length as dtypes, "
            f"received len(shapes)={len(result)}, len(dtypes)={len(types)}"
        )
    if any(not s.is_fully_defined for s in result):
        raise ValueError(f"All shapes must be fully defined: {result}")
    return result


class FIFOQueue:
    """``tf.compat.v1.FIFOQueue``: a queue of tuples of tensors, first in first out, shared by
    ``shared_name`` across sessions (and the clients of a cluster task)."""

    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any = None,
        names: Sequence[str] | None = None,
        shared_name: str | None = None,
        name: str = "fifo_queue",
    ) -> None:
        self._dtypes = _as_type_list(dtypes)
        declared = _as_shape_list(shapes, self._dtypes)
        if names is not None and len(names) != len(self._dtypes):
            raise ValueError(
                "Queue names must have the same length as dtypes,"
                f"received len(names)={len(names)},len {len(self._dtypes)}"
            )
        self._names = list(names) if names is not None else None
        graph = get_default_graph()
        attrs = {
            "component_types": self._dtypes,
            "shapes": declared,
            "capacity": int(capacity),
            "container": "",
            "shared_name": shared_name or "",
        }
        # TF's init_scope (no control dependencies) and device("CPU") around the queue.
        with graph.control_dependencies(None), graph.device("CPU"):
            self._queue_ref = make_op("FIFOQueueV2", [], name, attrs).outputs[0]
        self._shapes = declared or [TensorShape(None) for _ in self._dtypes]
        self._name = self._queue_ref.op.name.split("/")[-1]

    @property
    def queue_ref(self) -> Tensor:
        return self._queue_ref

    @property
    def name(self) -> str:
        return self._queue_ref.op.name

    @property
    def dtypes(self) -> list[dtypes.DType]:
        return list(self._dtypes)

    @property
    def shapes(self) -> list[TensorShape]:
        return list(self._shapes)

    @property
    def names(self) -> list[str] | None:
        return self._names

    def _components(self, vals: Any) -> list[Tensor]:
        """TF's ``_check_enqueue_dtypes``: the values as tensors of the queue's dtypes."""
        if self._names is not None:
            if not isinstance(vals, dict):
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals):
                raise ValueError(
                    f"Keys in dictionary to enqueue do not match names of Queue.  "
                    f"Dictionary: {sorted(vals)}, Queue: {sorted(self._names)}"
                )
            vals = [vals[k] for k in self._names]
        elif isinstance(vals, dict):
            raise ValueError("Queue must have names to enqueue a dictionary")
        elif not isinstance(vals, list | tuple):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} tensors to enqueue, got {len(vals)}")
        return [
            convert_to_tensor(v, dtype=t, name=f"component_{i}")
            for i, (v, t) in enumerate(zip(vals, self._dtypes))
        ]

    def enqueue(self, vals: Any, name: str | None = None) -> Operation:
        """One element; waits while the queue is full."""
        with op_scope(name or f"{self._name}_enqueue") as scope:
            components = self._components(vals)
            for value, shape in zip(components, self._shapes):
                _assert_compatible(value.shape, shape)
            attrs = {"Tcomponents": self._dtypes, "timeout_ms": -1}
            return make_op("QueueEnqueueV2", [self._queue_ref, *components], scope, attrs)

    def enqueue_many(self, vals: Any, name: str | None = None) -> Operation:
        """The rows of ``vals`` (sliced along dimension 0), one element each."""
        with op_scope(name or f"{self._name}_EnqueueMany") as scope:
            components = self._components(vals)
            for value, shape in zip(components, self._shapes):
                if value.shape.ndims == 0:
                    raise ValueError(f"Shape {value.shape} must have rank at least 1")
                if value.shape.dims is not None:
                    _assert_compatible(TensorShape(value.shape.dims[1:]), shape)
            attrs = {"Tcomponents": self._dtypes, "timeout_ms": -1}
            return make_op("QueueEnqueueManyV2", [self._queue_ref, *components], scope, attrs)

    def _returned(self, op: Operation) -> Any:
        if self._names is not None:
            return dict(zip(self._names, op.outputs))
        return op.outputs[0] if len(op.outputs) == 1 else list(op.outputs)

    def dequeue(self, name: str | None = None) -> Any:
        """One element (a tensor, a list, or a dict by name); waits while the queue is empty,
        and raises OutOfRangeError once it is closed and empty."""
        attrs = {"component_types": self._dtypes, "timeout_ms": -1}
        op = make_op("QueueDequeueV2", [self._queue_ref], name or f"{self._name}_Dequeue", attrs)
        return self._returned(op)

    def dequeue_many(self, n: Any, name: str | None = None) -> Any:
        """``n`` elements stacked along a new dimension 0."""
        with op_scope(name or f"{self._name}_DequeueMany") as scope:
            count = convert_to_tensor(n, dtype=dtypes.int32, name="n")
            attrs = {"component_types": self._dtypes, "timeout_ms": -1}
            op = make_op("QueueDequeueManyV2", [self._queue_ref, count], scope, attrs)
        return self._returned(op)

    def size(self, name: str | None = None) -> Tensor:
        return make_op("QueueSizeV2", [self._queue_ref], name or f"{self._name}_Size").outputs[0]

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> Operation:
        """No more enqueues; dequeues take what is left, then raise OutOfRangeError."""
        attrs = {"cancel_pending_enqueues": cancel_pending_enqueues}
        return make_op("QueueCloseV2", [self._queue_ref], name or f"{self._name}_Close", attrs)

    def is_closed(self, name: str | None = None) -> Tensor:
        op_name = name or f"{self._name}_Is_Closed"
        return make_op("QueueIsClosedV2", [self._queue_ref], op_name).outputs[0]


def _assert_compatible(shape: TensorShape, declared: TensorShape) -> None:
    if not shape.is_compatible_with(declared):
        raise ValueError(f"Shapes {_tuple(shape)} and {_tuple(declared)} are incompatible")


def _tuple(shape: TensorShape) -> str:
    """TF's TensorShape repr in its messages: ``(1, 2)``, ``(2,)``, ``()``."""
    if shape.dims is None:
        return "<unknown>"
    return str(tuple(shape.dims))


class ConditionalAccumulator:
    """``tf.compat.v1.ConditionalAccumulator``: averages the gradients applied at its step;
    staler ones are dropped."""

    def __init__(
        self,
        dtype: Any,
        shape: Any = None,
        shared_name: str | None = None,
        name: str = "conditional_accumulator",
        reduction_type: str = "MEAN",
    ) -> None:
        if reduction_type not in ("MEAN", "SUM"):
            raise ValueError(
                f"Value for attr 'reduction_type' of \"{reduction_type}\" is not in the list "
                'of allowed values: "MEAN", "SUM"'
            )
        self._dtype = dtypes.as_dtype(dtype)
        self._shape = as_shape(shape) if shape is not None else TensorShape(None)
        attrs = {
            "dtype": self._dtype,
            "shape": self._shape,
            "container": "",
            "shared_name": shared_name or "",
            "reduction_type": reduction_type,
        }
        self._accumulator_ref = make_op("ResourceConditionalAccumulator", [], name, attrs).outputs[
            0
        ]
        self._name = self._accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self) -> Tensor:
        return self._accumulator_ref

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    def num_accumulated(self, name: str | None = None) -> Tensor:
        op_name = name or f"{self._name}_NumAccumulated"
        return make_op(
            "ResourceAccumulatorNumAccumulated", [self._accumulator_ref], op_name
        ).outputs[0]

    def set_global_step(self, new_global_step: Any, name: str | None = None) -> Operation:
        """Gradients computed before ``new_global_step`` are dropped from now on."""
        step = cast(convert_to_tensor(new_global_step), dtypes.int64)
        return make_op(
            "ResourceAccumulatorSetGlobalStep",
            [self._accumulator_ref, step],
            name or "ResourceAccumulatorSetGlobalStep",
        )

    def apply_grad(self, grad: Any, local_step: Any = 0, name: str | None = None) -> Operation:
        """Adds ``grad``, computed at ``local_step``, unless that is older than the
        accumulator's step."""
        gradient = convert_to_tensor(grad, dtype=self._dtype)
        _assert_compatible(gradient.shape, self._shape)
        step = cast(convert_to_tensor(local_step), dtypes.int64)
        return make_op(
            "ResourceAccumulatorApplyGradient",
            [self._accumulator_ref, step, gradient],
            name or "ResourceAccumulatorApplyGradient",
            {"dtype": self._dtype},
        )

    def take_grad(self, num_required: Any, name: str | None = None) -> Tensor:
        """The mean of the gradients applied, once ``num_required`` are in; the accumulator
        then starts over, one step later."""
        with op_scope(name or "ResourceAccumulatorTakeGradient") as scope:
            required = convert_to_tensor(num_required, dtype=dtypes.int32, name="num_required")
            op = make_op(
                "ResourceAccumulatorTakeGradient",
                [self._accumulator_ref, required],
                scope,
                {"dtype": self._dtype},
            )
        return op.outputs[0]
