"""The dataflow graph: ``Graph``, ``Operation`` and ``Tensor``, named as TensorFlow 1 names them.

A graph only records what to compute and where the user asked for it (``op.device`` is the
*requested* spec). Where each op actually runs is decided later, per session, by the placer.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from placeviz.devices.spec import DeviceSpec
from placeviz.dtypes import DType
from placeviz.errors import (
    DTypeMismatchError,
    InvalidArgumentError,
    OperatorNotAllowedInGraphError,
    describe_op,
)
from placeviz.graph import registry
from placeviz.graph.requests import (
    ControlDependencies,
    DeviceScope,
    Location,
    NamedGroup,
    RequestSource,
    RequestStep,
)
from placeviz.graph.shapes import ShapeError, TensorShape, as_shape, format_dims
from placeviz.graph.source import format_location, user_location

# TensorFlow's rules (ops.py): a node name, and a scope opened inside another scope.
_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


class Tensor:
    """One output of an operation; its value exists only inside a ``Session.run``."""

    __slots__ = ("__weakref__", "_dtype", "_shape", "op", "value_index")
    # As TF's: NumPy defers to the Tensor's operators, so ``array * tensor`` is one Mul op
    # rather than an object array of one op per element.
    __array_priority__ = 100

    def __init__(self, op: Operation, value_index: int, shape: TensorShape, dtype: DType) -> None:
        self.op = op
        self.value_index = value_index
        self._shape = shape
        self._dtype = dtype

    @property
    def name(self) -> str:
        return f"{self.op.name}:{self.value_index}"

    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape: Any) -> None:
        """Refine the static shape (e.g. of a placeholder); it must stay compatible."""
        try:
            self._shape = self._shape.merge_with(as_shape(shape))
        except ShapeError as exc:
            raise ValueError(f"Cannot set the shape of {self.name}: {exc}") from None

    @property
    def device(self) -> str:
        return self.op.device

    @property
    def graph(self) -> Graph:
        return self.op.graph

    def consumers(self) -> list[Operation]:
        """The ops reading this tensor, once per input that reads it (``x * x`` twice), as TF."""
        return [op for op in self.op.graph._ops for t in op.inputs if t is self]

    def eval(self, feed_dict: Mapping[Any, Any] | None = None, session: Any = None) -> Any:
        return _session_for(self, session).run(self, feed_dict=feed_dict)

    def numpy(self) -> Any:
        """The value of a tensor computed eagerly (``pv.enable_eager_execution()``)."""
        value = None if _eager is None else _eager.value(self)
        if value is None:
            raise ValueError(
                f"Tensor '{self.name}' has no value: it is symbolic (graph mode, or it depends on "
                "a placeholder); run it in a pv.Session."
            )
        return value

    def __str__(self) -> str:
        value = None if _eager is None else _eager.value(self)
        if value is None:
            return repr(self)
        # TensorFlow 2's format: the value on its own lines when it has several.
        text = str(value)
        if "\n" in text:
            text = "\n" + text
        dims = tuple(value.shape)
        return f"pv.Tensor({text}, shape={dims}, dtype={self._dtype.name})"

    def __repr__(self) -> str:
        return f"<pv.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __bool__(self) -> bool:
        raise OperatorNotAllowedInGraphError(
            f"Using a symbolic `tf.Tensor` as a Python `bool` is not allowed: '{self.name}' has "
            "a value only when a Session runs it."
        )

    def __iter__(self) -> Iterator[Tensor]:
        raise OperatorNotAllowedInGraphError(
            f"Iterating over a symbolic `tf.Tensor` is not allowed: '{self.name}' has a value "
            "only when a Session runs it; use pv.split or pv.unstack."
        )

    __hash__ = object.__hash__
    # Arithmetic operators (+ - * / @ and unary -) are attached by placeviz.graph.ops.math_ops.


def tensor_bytes(tensor: Tensor) -> int | None:
    """Bytes of a tensor whose static shape is fully known, else None."""
    count = tensor.shape.num_elements()
    return None if count is None else count * tensor.dtype.size


class Operation:
    """A node of the graph: its type, inputs, outputs, requested device and where it was made."""

    __slots__ = (
        "__weakref__",
        "_colocation",
        "_control_flow_context",
        "_device_scopes",
        "_device_text",
        "_requested",
        "attrs",
        "control_inputs",
        "graph",
        "id",
        "inputs",
        "location",
        "name",
        "op_def",
        "outputs",
        "type",
    )

    def __init__(
        self,
        graph: Graph,
        name: str,
        op_def: registry.OpDef,
        inputs: Sequence[Tensor],
        attrs: dict[str, Any],
        location: Location,
    ) -> None:
        self.graph = graph
        self.name = name
        self.type = op_def.type
        self.op_def = op_def
        self.inputs: tuple[Tensor, ...] = tuple(inputs)
        self.outputs: tuple[Tensor, ...] = ()
        self.control_inputs: list[Operation] = []
        self.attrs = attrs
        self.location = location
        self.id = len(graph._ops)
        self._requested = DeviceSpec()
        # The request as a device function or _set_device gave it, which TF keeps unparsed.
        self._device_text: str | None = None
        # The steps that decided the request, innermost first.
        self._device_scopes: tuple[RequestStep, ...] = ()
        self._colocation: tuple[str, ...] = ()
        # The cond branch (or loop) the op was built in: placeviz.graph.control_flow's contexts.
        self._control_flow_context: Any = None

    @property
    def device(self) -> str:
        """The requested device ('' when unconstrained): canonical, except that a string from a
        device function or ``_set_device`` is kept as given, as TensorFlow keeps it."""
        if self._device_text is not None:
            return self._device_text
        return self._requested.to_string()

    @property
    def requested_device(self) -> DeviceSpec:
        return self._requested

    @property
    def source(self) -> str:
        return format_location(self.location)

    @property
    def dtype(self) -> DType | None:
        """The dtype that selects the op's kernel: its first output's, else (or where its op
        says so) its first input's (a base dtype: kernels are registered for float32, also when
        they write a float32_ref)."""
        if self.inputs and self.op_def.kernel_dtype_from_input:
            return self.inputs[0].dtype.base_dtype
        if self.outputs:
            return self.outputs[0].dtype.base_dtype
        if self.inputs:
            return self.inputs[0].dtype.base_dtype
        return None

    def colocation_groups(self) -> list[str]:
        return list(self._colocation) if self._colocation else [f"loc:@{self.name}"]

    def get_attr(self, name: str) -> Any:
        try:
            return self.attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self.name}' has no attr named '{name}'.") from None

    def values(self) -> tuple[Tensor, ...]:
        return self.outputs

    def _set_device(self, device: Any) -> None:
        self._requested = DeviceSpec.coerce(device)
        self._device_text = device if isinstance(device, str) else None
        self._device_scopes = (RequestStep(RequestSource.SET_DEVICE, "", user_location()),)

    def run(self, feed_dict: Mapping[Any, Any] | None = None, session: Any = None) -> None:
        _session_for(self, session).run(self, feed_dict=feed_dict)

    def _update_input(self, index: int, tensor: Tensor) -> None:
        """As TensorFlow's: read ``tensor`` in place of input ``index`` (a cond branch reads an
        outer value through a Switch made after the op)."""
        inputs = list(self.inputs)
        inputs[index] = tensor
        self.inputs = tuple(inputs)
        self.graph._edges_changed += 1

    def _add_control_input(self, op: Operation) -> None:
        """As TensorFlow's: this op waits for ``op``, which may have been created after it."""
        self._add_control_inputs([op])

    def _add_control_inputs(self, ops: Sequence[Operation]) -> None:
        for op in ops:
            if not isinstance(op, Operation):
                raise TypeError(f"op must be an Operation: {op!r}")
            if op.graph is not self.graph:
                raise ValueError(
                    f"Control input '{op.name}' (created at {op.source}) is not an element of "
                    f"the graph of '{self.name}' (created at {self.source})."
                )
            if op not in self.control_inputs:
                self.control_inputs.append(op)
        self.graph._edges_changed += 1

    def __repr__(self) -> str:
        return f"<pv.Operation '{self.name}' type={self.type}>"


class Graph:
    """A TensorFlow-1-style graph with name, device, colocation and control-dependency scopes."""

    def __init__(self) -> None:
        self._ops: list[Operation] = []
        self._ops_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._device_stack: list[DeviceScope] = []
        self._colocation_stack: list[Operation | NamedGroup] = []
        self._control_stack: list[ControlDependencies | None] = []
        self._collections: dict[Any, list[Any]] = {}
        # variable_creator_scope's creators, innermost last (a distribution strategy mirrors).
        self._variable_creators: list[Callable[..., Any]] = []
        self._finalized = False
        self._edges_changed = 0  # control inputs added to existing ops (plans must be rebuilt)
        # The cond branch or loop body being built (placeviz.graph.control_flow), else None.
        self._control_flow_context: Any = None
        self._unfetchable: set[int] = set()  # op ids inside control flow (TF's prevent_fetching)
        self._unfeedable: set[tuple[int, int]] = set()  # (op id, output) inside while loops
        self.seed: int | None = None

    # -- lookup ------------------------------------------------------------------------------
    @property
    def version(self) -> int:
        """Grows with every op added or edge changed: sessions use it to notice unplaced ops and
        plans made before an edge changed."""
        return len(self._ops) + self._edges_changed

    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    @property
    def operation_count(self) -> int:
        """How many ops the graph has; an op's ``id`` is its number, in creation order."""
        return len(self._ops)

    def operations_from(self, start: int, stop: int | None = None) -> list[Operation]:
        """The ops numbered ``start`` up to ``stop`` (the newest, by default)."""
        return self._ops[start:stop]

    def get_operation_by_name(self, name: str) -> Operation:
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(f"The name '{name}' looks like an Operation name, not a Tensor name.")
        op = self._ops_by_name.get(op_name)
        if op is None:
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. The operation, "
                f"'{op_name}', does not exist in the graph."
            )
        if int(index) >= len(op.outputs):
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. The operation, "
                f"'{op_name}', exists but only has {len(op.outputs)} outputs."
            )
        return op.outputs[int(index)]

    def as_graph_element(self, obj: Any) -> Tensor | Operation:
        if isinstance(obj, str):
            return self.get_tensor_by_name(obj) if ":" in obj else self.get_operation_by_name(obj)
        element = as_graph_element(obj)
        if element.graph is not self:
            raise ValueError(f"{element!r} is not an element of this graph.")
        return element

    # -- collections -------------------------------------------------------------------------
    def add_to_collection(self, key: Any, value: Any) -> None:
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        self._collections.setdefault(key, []).append(value)

    def add_to_collections(self, keys: Any, value: Any) -> None:
        """One string is one key; in any other iterable a repeated key adds once (TF makes a set
        of them, so its order of keys varies between processes; here it is the given order)."""
        for key in (keys,) if isinstance(keys, str) else dict.fromkeys(keys):
            self.add_to_collection(key, value)

    def get_collection(self, key: Any, scope: str | None = None) -> list[Any]:
        """A copy; with ``scope``, only the items whose ``name`` the regex matches at its start
        (TF's ``re.match``: ``"tower_1"`` also keeps ``tower_10/...``; items without a name go)."""
        items = self._collections.get(key, ())
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [item for item in items if hasattr(item, "name") and pattern.match(item.name)]

    def get_collection_ref(self, key: Any) -> list[Any]:
        """The collection itself, to change in place (a strategy replaces copies by a mirror)."""
        return self._collections.setdefault(key, [])

    def get_all_collection_keys(self) -> list[str]:
        """The string keys: internal stores (tuple keys, as TF's variable store) stay hidden."""
        return [key for key in self._collections if isinstance(key, str)]

    def clear_collection(self, key: Any) -> None:
        self._collections.pop(key, None)

    # -- names -------------------------------------------------------------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """TensorFlow's rule: ``MatMul``, ``MatMul_1``, … under the current name scope."""
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{count}"
                count += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{count - 1}"
        return name

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        """Prefix op names; a name ending in '/' re-enters that scope exactly, None or '' resets."""
        old = self._name_stack
        if name:
            pattern = _VALID_SCOPE_NAME if old else _VALID_OP_NAME
            if not pattern.match(name):
                kind = "scope" if old else "root scope"
                raise ValueError(
                    f"'{name}' is not a valid {kind} name. A {kind} name has to match the "
                    f"following pattern: {pattern.pattern}"
                )
        if not name:
            new = returned = ""
        elif name.endswith("/"):  # re-entered: TF hands back the name as given ('/' too)
            new, returned = name[:-1], name
        else:
            new = self.unique_name(name)
            returned = f"{new}/"
        self._name_stack = new
        try:
            yield returned
        finally:
            self._name_stack = old

    def get_name_scope(self) -> str:
        return self._name_stack

    # -- device, colocation and control scopes -----------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function: Any) -> Iterator[None]:
        """Request a device for ops created inside (a spec, a DeviceSpec, a function, or None)."""
        self._device_stack.append(DeviceScope(device_name_or_function, user_location()))
        try:
            yield
        finally:
            self._device_stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Iterator[None]:
        """Place ops created inside together with ``op``; device scopes outside are ignored."""
        if op is None and not ignore_existing:
            raise ValueError(
                "Trying to reset colocation (op is None) but ignore_existing is not True "
                "(colocate_with(None, ignore_existing=True) clears colocation and device scopes)"
            )
        saved_devices = self._device_stack
        saved_colocation = self._colocation_stack
        # As TensorFlow, colocation is stronger than device scopes: they are reset inside.
        self._device_stack = []
        if op is None:
            self._colocation_stack = []
        else:
            target = as_graph_element(op)
            target = target.op if isinstance(target, Tensor) else target
            self._colocation_stack = ([] if ignore_existing else list(saved_colocation)) + [target]
        try:
            yield
        finally:
            self._device_stack = saved_devices
            self._colocation_stack = saved_colocation

    @contextlib.contextmanager
    def colocate_with_name(self, op_name: str) -> Iterator[None]:
        """Colocate ops created inside with an op not made yet (a variable's initial value)."""
        saved = self._colocation_stack
        self._colocation_stack = [*saved, NamedGroup(op_name)]
        try:
            yield
        finally:
            self._colocation_stack = saved

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs: Sequence[Any] | None) -> Iterator[None]:
        """Ops created inside run after ``control_inputs``; None clears outer dependencies and,
        as TensorFlow's, the cond branch being built (its Switches are made outside it)."""
        context = self._control_flow_context
        if control_inputs is None:
            self._control_stack.append(None)
            self._control_flow_context = None
        else:
            deps: list[Operation] = []
            for item in control_inputs:
                element = as_graph_element(item)
                op = element.op if isinstance(element, Tensor) else element
                if op.graph is not self:
                    raise ValueError(f"Control input {op.name!r} is from a different graph.")
                if op not in deps:
                    deps.append(op)
            self._control_stack.append(ControlDependencies(deps))
        try:
            yield
        finally:
            self._control_stack.pop()
            self._control_flow_context = context

    @contextlib.contextmanager
    def as_default(self) -> Iterator[Graph]:
        _graph_stack().append(self)
        try:
            yield self
        finally:
            _graph_stack().pop()

    def prevent_fetching(self, op: Operation) -> None:
        self._unfetchable.add(op.id)

    def is_fetchable(self, element: Tensor | Operation) -> bool:
        op = element.op if isinstance(element, Tensor) else element
        return op.id not in self._unfetchable

    def prevent_feeding(self, tensor: Tensor) -> None:
        self._unfeedable.add((tensor.op.id, tensor.value_index))

    def is_feedable(self, tensor: Tensor) -> bool:
        return (tensor.op.id, tensor.value_index) not in self._unfeedable

    def finalize(self) -> None:
        self._finalized = True

    @property
    def finalized(self) -> bool:
        return self._finalized

    # -- building ----------------------------------------------------------------------------
    def create_op(
        self,
        op_type: str,
        inputs: Sequence[Tensor],
        name: str | None = None,
        attrs: dict[str, Any] | None = None,
    ) -> Operation:
        """Add an op after checking its inputs against its shape/dtype rule."""
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        op_def = registry.get(op_type)
        attrs = attrs or {}
        for tensor in inputs:
            if tensor.graph is not self:
                raise ValueError(
                    f"Tensor '{tensor.name}' must be from the same graph as the {op_type} op "
                    f"being created; it belongs to another graph."
                )
        location = user_location()
        if name and name.endswith("/"):
            op_name = name[:-1]  # from name_scope, which already made it unique
        else:
            name = op_type if name is None else name
            full_name = f"{self._name_stack}/{name}" if self._name_stack else name
            if not _VALID_OP_NAME.match(full_name):
                raise ValueError(
                    f"`{full_name}` is not a valid node name (a {op_type} op created at "
                    f"{format_location(location)}). Accepted names conform to Regex "
                    f"/{_VALID_OP_NAME.pattern}/"
                )
            op_name = self.unique_name(name)
        op = Operation(self, op_name, op_def, inputs, attrs, location)
        try:
            specs = op_def.infer(inputs, attrs)
        except (ShapeError, TypeError, ValueError) as exc:
            shapes = ", ".join(
                "<unknown>" if t.shape.dims is None else format_dims(t.shape.dims) for t in inputs
            )
            error = DTypeMismatchError if isinstance(exc, TypeError) else InvalidArgumentError
            raise error(
                f"{exc} for {describe_op(op)} with input shapes: {shapes or 'none'}", op=op
            ) from None
        op.outputs = tuple(Tensor(op, i, shape, dtype) for i, (shape, dtype) in enumerate(specs))
        self._add_control_inputs(op)
        try:
            self._apply_device_scopes(op)
        except TypeError:
            self._record(op)  # TF records the op before its device functions run: it stays
            raise
        self._apply_colocation(op)
        self._record(op)
        context = self._control_flow_context
        if context is not None:
            op._control_flow_context = context
            context.add_op(op)
        if _eager is not None and self is _global_graph():
            _eager.on_create(op)
        return op

    def _record(self, op: Operation) -> None:
        self._ops.append(op)
        self._ops_by_name[op.name] = op
        for controller in reversed(self._control_stack):
            if controller is None:
                break  # ops made under control_dependencies(None) wait for no outer block
            controller.created.add(op.id)

    def _add_control_inputs(self, op: Operation) -> None:
        """The dependencies of every enclosing block, outermost first (TensorFlow's order), up
        to a ``control_dependencies(None)``."""
        input_ids = {t.op.id for t in op.inputs}
        active: list[ControlDependencies] = []
        for controller in reversed(self._control_stack):
            if controller is None:
                break
            active.append(controller)
        for controller in reversed(active):
            if input_ids & controller.created:
                continue  # an input already waits for this block's dependencies
            for dep in controller.deps:
                if dep.id not in input_ids and dep not in op.control_inputs:
                    op.control_inputs.append(dep)

    def _apply_colocation(self, op: Operation) -> None:
        """As TensorFlow: the colocation target's device, when it has one, replaces the op's."""
        if not self._colocation_stack:
            return
        groups: set[str] = set()
        device_set = False
        for target in reversed(self._colocation_stack):
            groups.update(target.colocation_groups())
            if not device_set and not target._requested.is_empty:
                op._requested = target._requested
                op._device_text = getattr(target, "_device_text", None)
                op._device_scopes = (
                    RequestStep(RequestSource.COLOCATE_WITH, target.name, op.location),
                    *target._device_scopes,
                )
                device_set = True
        op._colocation = tuple(sorted(groups))

    def _apply_device_scopes(self, op: Operation) -> None:
        """TensorFlow's order: innermost scope first; the op's own fields win over outer scopes."""
        current = op._requested
        sources = list(op._device_scopes)
        for scope in reversed(self._device_stack):
            if scope.spec_or_fn is None:
                break
            if isinstance(scope.spec_or_fn, DeviceSpec):
                if scope.spec_or_fn.is_empty:
                    continue
                merged = scope.spec_or_fn.merge_from(current)
                op._device_text = None
                detail = None
            else:
                returned = scope.spec_or_fn(op)
                if not isinstance(returned, str | DeviceSpec):
                    raise TypeError(
                        f"Expected binary or unicode string, got {returned!r}: device function "
                        f"{scope.text} (scope at {format_location(scope.location)}) returned "
                        f"it for op '{op.name}' ({op.type}, created at {op.source}); return a "
                        "device string or a DeviceSpec ('' for no device)"
                    )
                merged = DeviceSpec.coerce(returned)
                op._device_text = returned if isinstance(returned, str) else None
                why = getattr(scope.spec_or_fn, "why", None)
                detail = functools.partial(why, op.name) if why is not None else None
            if merged != current:
                sources.append(RequestStep(scope.source, scope.text, scope.location, detail))
                current = merged
                op._requested = current
        op._device_scopes = tuple(sources)


# -- eager execution ------------------------------------------------------------------------
class EagerHook(Protocol):
    """What runs ops as they are created in eager mode (placeviz.runtime.eager provides it)."""

    def on_create(self, op: Operation) -> None: ...

    def value(self, tensor: Tensor) -> Any: ...


_eager: EagerHook | None = None


def set_eager_hook(hook: EagerHook | None) -> None:
    global _eager
    _eager = hook


def executing_eagerly() -> bool:
    """True while eager mode is on and ops go to the global default graph (not a user graph)."""
    stack = _graph_stack()
    return _eager is not None and (not stack or stack[-1] is _global_graph())


# -- the default graph and the default session ----------------------------------------------
_state = threading.local()
_global_default_graph: Graph | None = None
# A %%placement cell's global default graph: context-local, so a cell running beside another (in
# a thread) keeps building its own graph, reset_default_graph() included.
_cell_default_graph: contextvars.ContextVar[list[Graph] | None] = contextvars.ContextVar(
    "placeviz_cell_default_graph", default=None
)


def _graph_stack() -> list[Graph]:
    stack = getattr(_state, "graphs", None)
    if stack is None:
        stack = _state.graphs = []
    return stack


def get_default_graph() -> Graph:
    stack = _graph_stack()
    if stack:
        return stack[-1]
    return _global_graph()


def _global_graph() -> Graph:
    cell = _cell_default_graph.get()
    if cell is not None:
        return cell[0]
    global _global_default_graph
    if _global_default_graph is None:
        _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph() -> None:
    """Start a fresh global default graph (not allowed inside a ``with g.as_default()``)."""
    if _graph_stack():
        raise AssertionError(
            "Do not use reset_default_graph() inside a `with graph.as_default()` block or while "
            "a default session is open."
        )
    global _global_default_graph
    _global_default_graph = Graph()
    cell = _cell_default_graph.get()
    if cell is not None:
        cell[0] = _global_default_graph


@contextlib.contextmanager
def cell_default_graph() -> Iterator[None]:
    """A fresh global default graph for a %%placement cell, kept for the caller's context, so that
    a cell running beside it (in a thread) cannot take it away. It is the process's too, from the
    start (threads the cell starts see no context of its) and after the block."""
    global _global_default_graph
    cell = [Graph()]
    _global_default_graph = cell[0]
    token = _cell_default_graph.set(cell)
    try:
        yield
    finally:
        _cell_default_graph.reset(token)
        _global_default_graph = cell[0]


def session_stack() -> list[Any]:
    """Sessions entered with ``with sess.as_default()`` (or ``with Session() as sess``)."""
    stack = getattr(_state, "sessions", None)
    if stack is None:
        stack = _state.sessions = []
    return stack


def get_default_session() -> Any:
    stack = session_stack()
    return stack[-1] if stack else None


def _session_for(element: Tensor | Operation, session: Any) -> Any:
    session = session if session is not None else get_default_session()
    if session is None:
        raise ValueError(
            f"Cannot evaluate '{element.name}': no default session is registered. Use "
            "`with pv.Session():` or pass session= explicitly."
        )
    return session


def is_tensor_like(value: Any) -> bool:
    """A Tensor, or what stands for one (a Variable: it has ``_as_graph_element``)."""
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element")


def as_value_element(obj: Any) -> Tensor | Operation:
    """What ``obj`` stands for as an operand: a Variable's current value (its ``read``, TF1's
    tensor conversion of a RefVariable), else its graph element."""
    to_tensor: Callable[[], Any] | None = getattr(obj, "_as_tensor", None)
    return to_tensor() if to_tensor is not None else as_graph_element(obj)


def as_graph_element(obj: Any) -> Tensor | Operation:
    """The Tensor or Operation behind ``obj``; a TF1 Variable's is its reference tensor (the
    VariableV2 op's output), so ``sess.run(v)``, ``control_dependencies([v])`` and
    ``colocate_with(v)`` name the variable op itself, as in TF."""
    if isinstance(obj, Tensor | Operation):
        return obj
    to_element: Callable[[], Any] | None = getattr(obj, "_as_graph_element", None)
    if to_element is not None:
        return to_element()
    raise TypeError(f"Can not convert a {type(obj).__name__} into a Tensor or Operation.")
