"""TF1's variable scopes and ``get_variable``: variables named by scope and shared on request.

A variable's name comes from the variable scope alone (name scopes are ignored), so towers built
under different name scopes can share one variable. Whether ``get_variable`` may create or must
find a variable is the scope's ``reuse``: False (create; an existing one is an error), True (find;
a missing one is an error) or ``AUTO_REUSE`` (either). Each graph keeps its own store, in a graph
collection as TensorFlow keeps it, so a fresh default graph starts with no variables.
"""

from __future__ import annotations

import contextlib
import enum
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from placeviz import dtypes
from placeviz.graph.core import Graph, Tensor, get_default_graph, is_tensor_like
from placeviz.graph.initializers import GlorotUniform, Zeros
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.shapes import TensorShape, as_shape
from placeviz.graph.variables import Variable

_STORE_KEY = "__variable_store"


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE
"""``reuse=pv.AUTO_REUSE``: ``get_variable`` creates a variable if missing, else returns it."""

Reuse = bool | _ReuseMode


class VariableScope:
    """Where ``get_variable`` looks: a name prefix, a reuse mode and a default initializer."""

    def __init__(
        self, reuse: Reuse, name: str = "", initializer: Any = None, name_scope: str = ""
    ) -> None:
        self._reuse = reuse
        self._name = name
        self._initializer = initializer
        self._name_scope = name_scope

    @property
    def name(self) -> str:
        return self._name

    @property
    def original_name_scope(self) -> str:
        """The name scope opened when this scope was first entered (``foo/``, or ``foo_1/``)."""
        return self._name_scope

    @property
    def reuse(self) -> Reuse:
        return self._reuse

    @property
    def initializer(self) -> Any:
        return self._initializer

    def reuse_variables(self) -> None:
        """From now on ``get_variable`` in this scope finds variables instead of creating them."""
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self._initializer = initializer

    def __repr__(self) -> str:
        return f"<pv.VariableScope '{self._name}' reuse={self._reuse}>"


class _Store:
    """One graph's variables by full name, its current scope, and how often each scope opened.

    The counts make ``variable_scope(None, default_name=...)`` unique (``layer``, ``layer_1``);
    as in TF, leaving a scope resets the counts of the scopes inside it.
    """

    def __init__(self) -> None:
        self.variables: dict[str, Variable] = {}
        self.current = VariableScope(False)
        self.opened: dict[str, int] = {}

    def open(self, name: str) -> None:
        self.opened[name] = self.opened.get(name, 0) + 1

    def close_subscopes(self, name: str) -> None:
        for key in self.opened:
            if key.startswith(name + "/"):
                self.opened[key] = 0

    def unique_name(self, prefix: str) -> str:
        base = f"{self.current.name}/{prefix}" if self.current.name else prefix
        if not self.opened.get(base):
            return prefix
        index = 1
        while self.opened.get(f"{base}_{index}"):
            index += 1
        return f"{prefix}_{index}"


def _store(graph: Graph) -> _Store:
    found = graph.get_collection(_STORE_KEY)
    if found:
        return found[0]
    store = _Store()
    graph.add_to_collection(_STORE_KEY, store)
    return store


def get_variable_scope() -> VariableScope:
    return _store(get_default_graph()).current


@contextlib.contextmanager
def variable_scope(
    name_or_scope: str | VariableScope | None,
    default_name: str | None = None,
    values: Any = None,
    initializer: Any = None,
    reuse: Reuse | None = None,
) -> Iterator[VariableScope]:
    """Open a variable scope and, as TF1 does, a name scope for the ops created inside.

    A string extends the current scope and inherits its reuse and initializer; re-entering a
    name gives the same variable names but a fresh name scope (``foo_1/``). A ``VariableScope``
    jumps back to that scope, keeping its own reuse unless ``reuse`` is given. ``reuse=False``
    cannot switch off reuse inherited from outside (TF's rule). ``values`` is accepted for TF1's
    signature; placeviz builds into the default graph.
    """
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if reuse is False:
        reuse = None
    if not (reuse is None or reuse is True or reuse is AUTO_REUSE):
        raise ValueError("The reuse parameter must be True or False or None.")
    if isinstance(name_or_scope, VariableScope):
        entered = _jump(name_or_scope, reuse, initializer)
    elif name_or_scope is None:
        if reuse:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        entered = _extend(default_name, reuse, initializer, made_unique=True)
    elif isinstance(name_or_scope, str):
        entered = _extend(name_or_scope, reuse, initializer, made_unique=False)
    else:
        raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
    with entered as scope:
        yield scope


@contextlib.contextmanager
def _jump(target: VariableScope, reuse: Reuse | None, initializer: Any) -> Iterator[VariableScope]:
    """Back into ``target``: its name and name scope, under a new name scope for its last part."""
    graph = get_default_graph()
    store = _store(graph)
    outer = store.current
    last = target.name.split("/")[-1]
    with graph.name_scope(last) if last else contextlib.nullcontext():
        store.current = VariableScope(
            reuse or target.reuse,
            target.name,
            target.initializer if initializer is None else initializer,
            target.original_name_scope,
        )
        store.open(target.name)
        counts = dict(store.opened)
        try:
            yield store.current
        finally:
            store.current = outer
            store.opened = counts


@contextlib.contextmanager
def _extend(
    name: str, reuse: Reuse | None, initializer: Any, made_unique: bool
) -> Iterator[VariableScope]:
    """A scope inside the current one, inheriting its reuse and initializer."""
    graph = get_default_graph()
    store = _store(graph)
    outer = store.current
    with graph.name_scope(name) if name else contextlib.nullcontext("") as name_scope:
        if made_unique:
            name = store.unique_name(name)
        full_name = f"{outer.name}/{name}" if outer.name else name
        store.current = VariableScope(
            reuse or outer.reuse,
            full_name,
            outer.initializer if initializer is None else initializer,
            name_scope,
        )
        store.open(full_name)
        try:
            yield store.current
        finally:
            store.current = outer
            store.close_subscopes(full_name)


def get_variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    trainable: bool = True,
    collections: Sequence[str] | None = None,
) -> Variable:
    """The variable ``<scope>/<name>``: created, or found when the scope reuses variables.

    ``initializer`` is an initializer (object, class or callable ``(shape, dtype,
    partition_info=None)``), used with ``shape``; or a tensor or Python/NumPy value, which gives
    the shape itself. Without one, float variables get ``glorot_uniform_initializer()`` and
    others zeros. ``dtype`` defaults to float32, except that a value initializer gives its own.
    """
    graph = get_default_graph()
    store = _store(graph)
    scope = store.current
    full_name = f"{scope.name}/{name}" if scope.name else name
    if dtype is not None and initializer is not None and not callable(initializer):
        given, wanted = _dtype_of(initializer), dtypes.as_dtype(dtype)
        if given is not wanted:
            raise ValueError(
                f"Initializer type '{given.name}' and explicit dtype '{wanted.name}' don't match."
            )
    if initializer is None:
        initializer = scope.initializer
    from_value = initializer is not None and not callable(initializer)
    if dtype is not None:
        target = dtypes.as_dtype(dtype)
    else:
        target = _dtype_of(initializer) if from_value else dtypes.float32
    if shape is not None and from_value:
        raise ValueError("If initializer is a constant, do not specify shape.")
    found = store.variables.get(full_name)
    if found is not None:
        _check_reuse(found, full_name, as_shape(shape), target, scope.reuse)
        return found
    if scope.reuse is True:
        raise ValueError(
            f"Variable {full_name} does not exist, or was not created with pv.get_variable(). "
            "Did you mean to set reuse=pv.AUTO_REUSE in VarScope?"
        )
    initial_value = initializer if from_value else _recipe(full_name, shape, target, initializer)
    with graph.name_scope(None):
        variable = Variable(
            initial_value,
            trainable=trainable,
            name=full_name,
            dtype=None if from_value else target,
            collections=collections,
        )
    store.variables[full_name] = variable
    return variable


def _check_reuse(
    found: Variable, name: str, shape: TensorShape, dtype: dtypes.DType, reuse: Reuse
) -> None:
    if not reuse:
        raise ValueError(
            f"Variable {name} already exists, disallowed. Did you mean to set reuse=True or "
            f"reuse=pv.AUTO_REUSE in VarScope? Originally defined at:\n\n  {found.op.source}"
        )
    if not shape.is_compatible_with(found.shape):
        raise ValueError(
            f"Trying to share variable {name}, but specified shape {shape} and found shape "
            f"{found.shape}."
        )
    if dtype.base_dtype is not found.dtype.base_dtype:
        raise ValueError(
            f"Trying to share variable {name}, but specified dtype {dtype.name} and found dtype "
            f"{found.dtype.name}."
        )


def _recipe(name: str, shape: Any, dtype: dtypes.DType, initializer: Any) -> Callable[[], Tensor]:
    """The no-argument callable ``Variable`` runs under ``<name>/Initializer``."""
    if initializer is None and shape is None:  # TF's words
        raise ValueError(
            f"Variable {name} did not get an initializer, so its `shape` argument must be "
            "specified."
        )
    if initializer is None:
        initializer = GlorotUniform() if dtype.is_floating else Zeros()
    if isinstance(initializer, type):
        initializer = initializer()
    known = as_shape(shape)
    if not known.is_fully_defined:
        raise ValueError(
            f"Shape of a new variable ({name}) must be fully defined, but instead was {known}."
        )
    dims = known.as_list()
    if "partition_info" in inspect.signature(initializer).parameters:
        return lambda: initializer(dims, dtype=dtype, partition_info=None)
    return lambda: initializer(dims, dtype=dtype)


def _dtype_of(value: Any) -> dtypes.DType:
    """The dtype a value initializer would have, without adding a Const to the graph."""
    if is_tensor_like(value):
        return convert_to_tensor(value).dtype
    return dtypes.infer_dtype(value)
