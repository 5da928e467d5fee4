"""``pv.TensorArray``: TensorFlow 1's graph-mode TensorArray, a handle and a flow.

The object the user holds after ``ta = ta.write(...)`` is the same handle with the write's
flow; reads take the flow they must follow. What the Python side knows of the elements (their
dtype and the shape inferred from writes) is shared by every object of one array. A while loop
carries an array as its flow (``while_loop`` converts it there and back). As TF's Python, the
array's ops are colocated with the first value written to it (``colocate_with_first_write_call``)
and the array itself asks for no device; the placer keeps every op reading the handle with it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes, nest
from placeviz.graph.core import Operation, Tensor, get_default_graph, is_tensor_like
from placeviz.graph.ops import (
    array_ops,
    math_ops,
    state_ops,
    tensor_array_ops,  # noqa: F401 (registers the ops)
)
from placeviz.graph.ops._build import make_op
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.shape_ops import constant_value
from placeviz.graph.shapes import TensorShape, as_shape


class TensorArray:
    """TF1's ``tf.TensorArray`` in a graph: a handle, the flow of the last change, and what the
    Python side knows of the elements (their dtype and inferred shape, the array's size)."""

    def __init__(
        self,
        dtype: Any,
        size: Any = None,
        dynamic_size: bool | None = None,
        clear_after_read: bool | None = None,
        tensor_array_name: str | None = None,
        handle: Tensor | None = None,
        flow: Tensor | None = None,
        infer_shape: bool = True,
        element_shape: Any = None,
        colocate_with_first_write_call: bool = True,
        name: str | None = None,
    ) -> None:
        if clear_after_read is None:
            clear_after_read = True
        if flow is not None and (
            not isinstance(flow, Tensor) or flow.dtype.base_dtype is not dtypes.float32
        ):
            raise TypeError(f"Expected `flow` to be a float32 Tensor, but saw: {flow}.")
        if handle is not None and tensor_array_name:
            raise ValueError(
                "Cannot provide both `handle` and `tensor_array_name` arguments at the same time."
            )
        if handle is not None and not isinstance(handle, Tensor):
            raise TypeError(f"Expected `handle` to be a Tensor, but saw: {handle}.")
        if handle is None and size is None:
            raise ValueError("Argument `size` must be provided if handle is not provided.")
        if handle is not None and size is not None:
            raise ValueError(
                "Cannot provide both a `handle` and `size` arguments at the same time."
            )
        if handle is not None and element_shape is not None:
            raise ValueError(
                "Cannot provide both `handle` and `element_shape` arguments at the same time."
            )
        if handle is not None and dynamic_size is not None:
            raise ValueError(
                "Cannot provide both `handle` and `dynamic_size` arguments at the same time."
            )
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        self._size = size
        self._infer_shape = infer_shape
        self._colocate_with_first_write_call = colocate_with_first_write_call
        self._colocate_with: list[Tensor] | None = [] if colocate_with_first_write_call else None
        self._element_shape = [as_shape(element_shape)]
        graph = get_default_graph()
        with graph.name_scope(name or "TensorArray") as scope:
            if handle is not None:
                if flow is None:
                    raise ValueError("flow must not be None if handle is not None.")
                self._handle, self._flow = handle, flow
                return
            attrs = {
                "dtype": self._dtype,
                "element_shape": self._element_shape[0],
                "_element_shape": _handle_data(self._element_shape[0], infer_shape),
                "identical_element_shapes": infer_shape,
                "dynamic_size": self._dynamic_size,
                "clear_after_read": clear_after_read,
                "tensor_array_name": tensor_array_name or "",
            }
            created = contextlib.ExitStack()
            if colocate_with_first_write_call:  # its first write's value decides its device
                created.enter_context(graph.device(None))
                created.enter_context(graph.colocate_with(None, ignore_existing=True))
            with created:
                size_tensor = convert_to_tensor(size, dtype=dtypes.int32, name="size")
                op = make_op("TensorArrayV3", [size_tensor], scope, attrs)
            self._handle, self._flow = op.outputs

    # what TF's TensorArray shows
    @property
    def flow(self) -> Tensor:
        return self._flow

    @property
    def handle(self) -> Tensor:
        return self._handle

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape[0]

    def _with_flow(self, flow: Tensor) -> TensorArray:
        """TF's ``build_ta_with_new_flow``: the same array after a change (its name scope
        ``TensorArray`` is taken, as TF's constructor takes it)."""
        new = TensorArray(
            self._dtype,
            handle=self._handle,
            flow=flow,
            infer_shape=self._infer_shape,
            colocate_with_first_write_call=self._colocate_with_first_write_call,
        )
        new._dynamic_size = self._dynamic_size
        new._size = self._size
        new._colocate_with = self._colocate_with
        new._element_shape = self._element_shape  # shared: a write refines every copy
        return new

    @contextlib.contextmanager
    def _maybe_colocate_with(self, value: Tensor) -> Iterator[None]:
        if self._colocate_with is None:
            yield
            return
        if not self._colocate_with:
            self._colocate_with.append(value)
        with get_default_graph().colocate_with(self._colocate_with[0]):
            yield

    def _check_element_shape(self, shape: TensorShape) -> None:
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self.element_shape} ")
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    def _value(self, value: Any) -> Tensor:
        if not is_tensor_like(value):
            try:
                return convert_to_tensor(value, dtype=self._dtype, name="value")
            except (TypeError, ValueError):
                pass
        return convert_to_tensor(value, name="value")

    def identity(self) -> TensorArray:
        """The array after an Identity of its flow (control dependencies around it apply)."""
        return self._with_flow(state_ops.identity(self._flow))

    def grad(self, source: str, flow: Tensor | None = None, name: str | None = None) -> Any:
        """The gradient's array for ``source`` (TensorArrayGradV3), after ``flow``."""
        flow = self._flow if flow is None else flow
        graph = get_default_graph()
        with graph.name_scope(name or "TensorArrayGrad"), graph.colocate_with(self._handle):
            attrs = {"source": source}
            op = make_op("TensorArrayGradV3", [self._handle, flow], None, attrs)
            with graph.control_dependencies([op.outputs[0]]):
                flow = state_ops.identity(flow, name="gradient_flow")
            grad = TensorArray(
                self._dtype,
                handle=op.outputs[0],
                flow=flow,
                infer_shape=self._infer_shape,
                colocate_with_first_write_call=False,
            )
            grad._element_shape = self._element_shape
            return grad

    def read(self, index: Any, name: str | None = None) -> Tensor:
        with get_default_graph().name_scope(name or "TensorArrayReadV3") as scope:
            index = convert_to_tensor(index, dtype=dtypes.int32, name="index")
            inputs = [self._handle, index, self._flow]
            value = make_op("TensorArrayReadV3", inputs, scope, {"dtype": self._dtype}).outputs[0]
        value.set_shape(self.element_shape)
        return value

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        graph = get_default_graph()
        with graph.name_scope(name or "TensorArrayWrite"):
            value = self._value(value)
            self._check_element_shape(value.shape)
            with (
                self._maybe_colocate_with(value),
                graph.name_scope(name or "TensorArrayWriteV3") as scope,
            ):
                index = convert_to_tensor(index, dtype=dtypes.int32, name="index")
                inputs = [self._handle, index, value, self._flow]
                flow = make_op("TensorArrayWriteV3", inputs, scope)
        return self._with_flow(flow.outputs[0])

    def stack(self, name: str | None = None) -> Tensor:
        """Every element along a new first axis (a gather of ``range(size)``)."""
        graph = get_default_graph()
        with graph.colocate_with(self._handle), graph.name_scope(name or "TensorArrayStack"):
            value = self.gather(math_ops.arange(0, self.size()), name=name)
            size = None if self._dynamic_size else _static_value(self._size)
            if self.element_shape.dims is not None and size is not None:
                value.set_shape([int(size), *self.element_shape.dims])
            return value

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        attrs = {"dtype": self._dtype, "element_shape": self.element_shape}
        with get_default_graph().name_scope(name or "TensorArrayGatherV3") as scope:
            indices = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
            inputs = [self._handle, indices, self._flow]
            op = make_op("TensorArrayGatherV3", inputs, scope, attrs)
        value = op.outputs[0]
        if self.element_shape.dims is not None:
            value.set_shape([None, *self.element_shape.dims])
        return value

    def concat(self, name: str | None = None) -> Tensor:
        attrs = {"dtype": self._dtype, "element_shape_except0": self.element_shape[1:]}
        op = make_op("TensorArrayConcatV3", [self._handle, self._flow], name, attrs)
        value = op.outputs[0]
        if self.element_shape.dims is not None:
            first = None
            size = constant_value(self.size()) if self._infer_shape else None
            if size is not None and self.element_shape.dims[0] is not None:
                first = int(size) * self.element_shape.dims[0]
            value.set_shape([first, *self.element_shape.dims[1:]])
        return value

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """Element ``i`` is ``value[i]`` (a scatter of ``range(len(value))``)."""
        with get_default_graph().name_scope(name or "TensorArrayUnstack"):
            value = self._value(value)
            count = array_ops.shape(value)[0]
            return self.scatter(math_ops.arange(0, count), value, name=name)

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        with get_default_graph().name_scope(name or "TensorArrayScatter"):
            value = self._value(value)
            self._check_element_shape(value.shape[1:])
            with (
                self._maybe_colocate_with(value),
                get_default_graph().name_scope(name or "TensorArrayScatterV3") as scope,
            ):
                indices = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
                inputs = [self._handle, indices, value, self._flow]
                flow = make_op("TensorArrayScatterV3", inputs, scope)
        return self._with_flow(flow.outputs[0])

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        """Element ``i`` is the ``i``-th piece of ``value``, ``lengths[i]`` rows long."""
        with get_default_graph().name_scope(name or "TensorArraySplit"):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            with self._maybe_colocate_with(value):
                lengths_64 = array_ops.cast(lengths, dtypes.int64)
                known = constant_value(lengths_64)
                if value.shape.dims is not None and known is not None:
                    known = np.asarray(known)
                    if known.shape and known.size and known.max() == known.min():
                        rows = TensorShape([int(known[0])])
                        self._check_element_shape(TensorShape([*rows.dims, *value.shape[1:]]))
                inputs = [self._handle, value, lengths_64, self._flow]
                flow = make_op("TensorArraySplitV3", inputs, name or "TensorArraySplitV3")
        return self._with_flow(flow.outputs[0])

    def size(self, name: str | None = None) -> Tensor:
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtype=dtypes.int32)
        op = make_op("TensorArraySizeV3", [self._handle, self._flow], name or "TensorArraySizeV3")
        return op.outputs[0]

    def close(self, name: str | None = None) -> Operation:
        return make_op("TensorArrayCloseV3", [self._handle], name or "TensorArrayCloseV3")


def _static_value(value: Any) -> Any:
    """TF's ``constant_value`` of a size given as a tensor or a Python number."""
    if value is None or not isinstance(value, Tensor):
        return value
    return constant_value(value)


def _handle_data(shape: TensorShape, identical: bool) -> TensorShape | None:
    """What TF's shape function tells the ops on a handle of its elements' shape."""
    return shape if shape.is_fully_defined or identical else None


# -- while loops carry a TensorArray as its flow ------------------------------------------------
def to_flow(value: Any) -> Any:
    """TF's ``_convert_tensorarray_to_flow``."""
    return value.flow if isinstance(value, TensorArray) else value


def from_flow(like: Any, value: Any) -> Any:
    """TF's ``_convert_flow_to_tensorarray``: ``value`` as the array ``like`` was."""
    if isinstance(like, TensorArray) and isinstance(value, Tensor):
        return like._with_flow(value)
    return value


def carry_tensor_arrays(
    loop: Callable[..., Any],
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Sequence[Any],
    options: dict[str, Any],
) -> Any:
    """TF's ``while_loop`` over loop variables some of which are TensorArrays: ``loop`` carries
    their flows, ``cond`` and ``body`` see arrays, and the loop's result holds arrays again."""
    template = list(loop_vars)

    def arrays(values: Sequence[Any]) -> list[Any]:
        return nest.map_structure(from_flow, template, list(values))

    def flows(values: Any) -> Any:
        return nest.map_structure(to_flow, values)

    result = loop(
        lambda *a: cond(*arrays(a)),
        lambda *a: flows(body(*arrays(a))),
        flows(loop_vars),
        **options,
    )
    if len(template) == 1 and not options.get("return_same_structure"):
        return arrays([result])[0]
    return nest.map_structure(lambda value, like: from_flow(like, value), result, loop_vars)
