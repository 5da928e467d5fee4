"""TensorFlow 1's ``Variable``: a Variable op holding state, with its Assign and read ops."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.graph.core import Graph, Operation, Tensor, executing_eagerly, get_default_graph
from placeviz.graph.graph_keys import GraphKeys
from placeviz.graph.ops import constant_op, math_ops, state_ops
from placeviz.graph.ops.constant_op import convert_to_tensor

GLOBAL_VARIABLES = GraphKeys.GLOBAL_VARIABLES
TRAINABLE_VARIABLES = GraphKeys.TRAINABLE_VARIABLES


class _VariableMeta(type):
    """Routes ``Variable(...)`` through the graph's creator scopes, as TensorFlow does."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        creators = get_default_graph()._variable_creators
        if cls is not Variable or not creators:
            return super().__call__(*args, **kwargs)
        names = ("initial_value", "trainable", "name", "dtype", "collections", "validate_shape")
        kwargs.update(zip(names, args))

        def make(creators: list[Callable[..., Any]], **kw: Any) -> Any:
            if not creators:
                return type.__call__(cls, **kw)
            *outer, innermost = creators
            return innermost(lambda **next_kw: make(outer, **next_kw), **kw)

        return make(list(creators), **kwargs)


@contextlib.contextmanager
def variable_creator_scope(creator: Callable[..., Any]) -> Iterator[None]:
    """Variables made inside go through ``creator(next_creator, **kwargs)`` (innermost first)."""
    creators = get_default_graph()._variable_creators
    creators.append(creator)
    try:
        yield
    finally:
        creators.pop()


@contextlib.contextmanager
def without_variable_creators() -> Iterator[None]:
    """Variables made inside are plain whatever creator scopes surround them.

    An optimizer makes one slot per copy of a mirrored variable itself, so its slots must not
    be mirrored again.
    """
    graph = get_default_graph()
    saved, graph._variable_creators = graph._variable_creators, []
    try:
        yield
    finally:
        graph._variable_creators = saved


def _guard_uninitialized_dependencies(scope: str, value: Tensor) -> Tensor:
    """TF's ``_try_guard_against_uninitialized_dependencies``: an initial value that reads
    another variable reads that variable's ``initialized_value()`` instead, through copies of
    the ops in between named ``<op>_<variable>`` (so initializers can run in any order)."""
    if _has_cycle(value.op, {}):
        return value
    return _safe_tensor(scope, value, {})


def _has_cycle(op: Operation, state: dict[str, bool]) -> bool:
    if op.name in state:
        return state[op.name]
    state[op.name] = True
    if any(_has_cycle(t.op, state) for t in op.inputs):
        return True
    state[op.name] = False
    return False


def _safe_tensor(scope: str, tensor: Tensor, cache: dict[str, Operation]) -> Tensor:
    op = cache.get(tensor.op.name)
    if op is None:
        op = cache[tensor.op.name] = _safe_op(scope, tensor.op, cache)
    return op.outputs[tensor.value_index]


def _safe_op(scope: str, op: Operation, cache: dict[str, Operation]) -> Operation:
    if op.type == "IsVariableInitialized":
        return op
    if op.type == "VariableV2":
        graph = op.graph
        for key in (GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
            for variable in graph.get_collection(key):
                if getattr(variable, "name", None) == f"{op.name}:0":
                    return variable.initialized_value().op
        return op
    inputs = [_safe_tensor(scope, t, cache) for t in op.inputs]
    if all(new is old for new, old in zip(inputs, op.inputs)):
        return op
    op_type = "Switch" if op.type == "RefSwitch" else op.type
    copy = op.graph.create_op(op_type, inputs, name=f"{op.name}_{scope}", attrs=dict(op.attrs))
    copy._colocation = op._colocation  # TF copies the node's attrs, its _class among them
    return copy


class Variable(metaclass=_VariableMeta):
    """``Variable(initial_value)`` creates the ops TensorFlow 1 creates for it.

    For ``Variable(3.0, name="a")``: ``a/initial_value`` (Const), ``a`` (Variable), ``a/Assign``
    (its initializer) and ``a/read`` (Identity, what ``a * b`` actually consumes). The Variable op
    and its Assign and read ops are colocated, so the placer keeps them on one device.
    """

    def __init__(
        self,
        initial_value: Any = None,
        trainable: bool = True,
        name: str | None = None,
        dtype: Any = None,
        collections: Sequence[str] | None = None,
        validate_shape: bool = True,
        caching_device: Any = None,
    ) -> None:
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if collections is None:
            collections = [GLOBAL_VARIABLES]
        if not isinstance(collections, list | tuple | set):
            raise ValueError(
                "collections argument to Variable constructor must be a list, tuple, or set. "
                f"Got {collections} of type {type(collections)}"
            )
        if trainable and TRAINABLE_VARIABLES not in collections:
            collections = [*collections, TRAINABLE_VARIABLES]
        graph = get_default_graph()
        # As TF's init_scope: a variable never waits for the control dependencies around it.
        with graph.control_dependencies(None), graph.name_scope(name or "Variable") as scope:
            if callable(initial_value):
                with graph.name_scope("Initializer"), _initializer_placement(graph, scope[:-1]):
                    initial_value = initial_value()
            self._initial_value = convert_to_tensor(
                initial_value, dtype=dtype, name="initial_value"
            )
            if self._initial_value.op._control_flow_context is not None:
                raise ValueError(
                    f"Initializer for variable {scope[:-1]} is from inside a control-flow "
                    "construct, such as a loop or conditional. When creating a variable inside "
                    "a loop or conditional, use a lambda as the initializer."
                )
            shape = self._initial_value.shape if validate_shape else None
            self._variable_op = state_ops.variable_op(shape, self._initial_value.dtype, name=scope)
            self._ref = self._variable_op.outputs[0]
            guarded = _guard_uninitialized_dependencies(scope, self._initial_value)
            with graph.colocate_with(self._variable_op):
                self._initializer = state_ops.assign(
                    self._ref, guarded, validate_shape=validate_shape, name="Assign"
                ).op
            # A caching device (static_rnn sets one) reads the variable where the device scopes
            # say, not colocated with it: TF's RefVariable snapshot.
            with (
                graph.device(caching_device)
                if caching_device is not None
                else graph.colocate_with(self._variable_op)
            ):
                self._snapshot = state_ops.read_variable(self._ref)
        self._graph = graph
        self.trainable = trainable
        graph.add_to_collections(collections, self)

    # -- what TensorFlow exposes ---------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._ref.name

    @property
    def op(self) -> Operation:
        return self._variable_op

    @property
    def dtype(self) -> Any:
        """``float32_ref`` in graph mode, as TF1's reference variables; eager TF 2's variables
        (resource variables) have the value's dtype."""
        dtype = self._ref.dtype
        return dtype.base_dtype if executing_eagerly() else dtype

    @property
    def shape(self) -> Any:
        return self._ref.shape

    def get_shape(self) -> Any:
        return self._ref.shape

    @property
    def device(self) -> str:
        return self._variable_op.device

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def initializer(self) -> Operation:
        return self._initializer

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    def value(self) -> Tensor:
        return self._current_value()

    def initialized_value(self) -> Tensor:
        """The value once initialized, else the initial value: TF1's
        ``cond(is_variable_initialized(v), v.read_value, lambda: v.initial_value)``, built
        outside any control dependencies, so one variable can start from another's value."""
        from placeviz.graph.control_flow import cond

        with self._graph.as_default(), self._graph.control_dependencies(None):
            return cond(
                state_ops.is_variable_initialized(self._ref),
                self.read_value,
                lambda: self._initial_value,
            )

    def _current_value(self) -> Tensor:
        """The ``read`` snapshot; in eager mode a fresh read, since each op runs only once."""
        return self.read_value() if executing_eagerly() else self._snapshot

    def numpy(self) -> Any:
        """The variable's current value (eager mode)."""
        if not executing_eagerly():
            raise ValueError(
                f"Variable '{self.name}' has a value only in a session in graph mode; run "
                "it in a pv.Session (or enable eager execution)."
            )
        return self.read_value().numpy()

    def read_value(self) -> Tensor:
        """A fresh read, named ``read`` in the current scope (TF1's RefVariable.read_value)."""
        with self._graph.as_default():
            return state_ops.read_variable(self._ref)

    def assign(self, value: Any, name: str | None = None) -> Tensor:
        return state_ops.assign(self._ref, value, name=name)

    def assign_add(self, delta: Any, name: str | None = None) -> Tensor:
        return state_ops.assign_add(self._ref, delta, name=name)

    def assign_sub(self, delta: Any, name: str | None = None) -> Tensor:
        return state_ops.assign_sub(self._ref, delta, name=name)

    def eval(self, session: Any = None) -> Any:
        return self._snapshot.eval(session=session)

    def _as_graph_element(self) -> Tensor:
        """The reference tensor in graph mode (TF1's RefVariable); eager mode has only values."""
        return self._current_value() if executing_eagerly() else self._ref

    def _as_tensor(self) -> Tensor:
        return self._current_value()

    def __repr__(self) -> str:
        text = f"<pv.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}"
        if executing_eagerly() and self._graph is get_default_graph():
            value = np.asarray(self.numpy())
            text += f", numpy={value.item()!r}" if value.ndim == 0 else f", numpy={value!r}"
        return text + ">"

    __hash__ = object.__hash__


def _initializer_placement(graph: Graph, variable_name: str) -> Any:
    """TF1 colocates the initial value with its variable; eager TF 2 runs it where it stands.

    Inside an outer ``colocate_with`` (an optimizer's slot, made beside its variable) that
    colocation alone holds, as in TensorFlow, where the colocation stack overrides the
    variable's own ``loc:@`` attribute. (In eager mode the initializer runs before the variable
    exists, so it cannot follow it.)
    """
    if executing_eagerly():
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    stack.enter_context(graph.device(None))
    if not graph._colocation_stack:
        stack.enter_context(graph.colocate_with_name(variable_name))
    return stack


def _delegate(method: str) -> Any:
    def call(self: Variable, *args: Any) -> Any:
        return getattr(self._current_value(), method)(*args)

    call.__name__ = method
    return call


for _method in math_ops.OPERATOR_METHODS:
    setattr(Variable, _method, _delegate(_method))


def global_variables(scope: str | None = None) -> list[Variable]:
    """The default graph's variables; ``scope`` keeps those whose name it matches (``re.match``)."""
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def trainable_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope: str | None = None) -> list[Variable]:
    """Per-process variables (``collections=[pv.GraphKeys.LOCAL_VARIABLES]``), e.g. counters."""
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def variables_initializer(var_list: Sequence[Variable], name: str = "init") -> Operation:
    if not var_list:
        return state_ops.no_op(name=name)
    return state_ops.group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer() -> Operation:
    return variables_initializer(global_variables(), name="init")


def local_variables_initializer() -> Operation:
    return variables_initializer(local_variables(), name="init")


def report_uninitialized_variables(
    var_list: Sequence[Variable] | None = None, name: str = "report_uninitialized_variables"
) -> Tensor:
    """The names of the variables in ``var_list`` (every global and local one by default)
    holding no value yet, a string vector computed on the CPU as TF1's."""
    from placeviz.graph.ops import array_ops, selection_ops

    graph = get_default_graph()
    if var_list is None:
        var_list = global_variables() + local_variables()
    with graph.name_scope(name):
        initialized = [state_ops.is_variable_initialized(v) for v in var_list]
        with graph.device("/cpu:0"):
            if not var_list:
                return constant_op.constant([], dtype=dtypes.string)
            uninitialized = math_ops.logical_not(array_ops.stack(initialized))
            names = constant_op.constant([v.op.name for v in var_list])
            return selection_ops.boolean_mask(names, uninitialized)
