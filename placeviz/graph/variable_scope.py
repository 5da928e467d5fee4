"""TF1's variable scopes and ``get_variable``: variables named by scope and shared on request.

A variable's name comes from the variable scope alone (name scopes are ignored), so towers built
under different name scopes can share one variable. Whether ``get_variable`` may create or must
find a variable is the scope's ``reuse``: False (create; an existing one is an error), True (find;
a missing one is an error) or ``AUTO_REUSE`` (either). Each graph keeps its own store, in a graph
collection as TensorFlow keeps it, so a fresh default graph starts with no variables.

A scope's ``custom_getter(getter, name, *args, **kwargs)`` stands between ``get_variable`` and the
store: it may rename, place, wrap or transform what the store's getter returns. A getter set on an
inner scope calls the outer scope's getter as its ``getter`` (TF's ``_maybe_wrap_custom_getter``).
"""

from __future__ import annotations

import contextlib
import enum
import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from placeviz import dtypes
from placeviz.graph.core import Graph, Tensor, get_default_graph, is_tensor_like
from placeviz.graph.initializers import GlorotUniform, Zeros
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.shapes import TensorShape, as_shape
from placeviz.graph.variables import Variable

_STORE_KEY = ("__variable_store",)  # a tuple, as TF's: not among get_all_collection_keys()


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE
"""``reuse=pv.AUTO_REUSE``: ``get_variable`` creates a variable if missing, else returns it."""

Reuse = bool | _ReuseMode


CustomGetter = Callable[..., Any]


class VariableScope:
    """Where ``get_variable`` looks: a name prefix, a reuse mode, default initializer and dtype,
    and the custom getter that variables are fetched through."""

    def __init__(
        self,
        reuse: Reuse,
        name: str = "",
        initializer: Any = None,
        name_scope: str = "",
        custom_getter: CustomGetter | None = None,
        dtype: Any = dtypes.float32,
        caching_device: Any = None,
    ) -> None:
        self._reuse = reuse
        self._name = name
        self._initializer = initializer
        self._name_scope = name_scope
        self._custom_getter = custom_getter
        self._dtype = dtypes.as_dtype(dtype)
        self._caching_device = caching_device

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

    @property
    def custom_getter(self) -> CustomGetter | None:
        return self._custom_getter

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def caching_device(self) -> Any:
        """Where variables made in this scope are read (their ``read`` op); None: beside them."""
        return self._caching_device

    def set_caching_device(self, caching_device: Any) -> None:
        self._caching_device = caching_device

    def reuse_variables(self) -> None:
        """From now on ``get_variable`` in this scope finds variables instead of creating them."""
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self._initializer = initializer

    def set_custom_getter(self, custom_getter: CustomGetter | None) -> None:
        self._custom_getter = custom_getter

    def set_dtype(self, dtype: Any) -> None:
        self._dtype = dtypes.as_dtype(dtype)

    def get_variable(
        self,
        name: str,
        shape: Any = None,
        dtype: Any = None,
        initializer: Any = None,
        trainable: bool | None = None,
        collections: Sequence[str] | None = None,
        validate_shape: bool = True,
        custom_getter: CustomGetter | None = None,
    ) -> Any:
        """``<scope>/<name>`` through ``custom_getter`` (else the scope's), with the scope's
        reuse, initializer and dtype filled in; outside every name scope, as in TF."""
        if custom_getter is None:
            custom_getter = self._custom_getter
        full_name = f"{self._name}/{name}" if self._name else name
        graph = get_default_graph()
        with graph.name_scope(None):
            if dtype is not None and initializer is not None and not callable(initializer):
                given, wanted = _dtype_of(initializer), dtypes.as_dtype(dtype)
                if given is not wanted.base_dtype:
                    raise ValueError(
                        f"Initializer type '{given.name}' and explicit dtype '{wanted.name}' "
                        "don't match."
                    )
            kwargs = {
                "name": full_name,
                "shape": shape,
                "dtype": (self._dtype if dtype is None else dtypes.as_dtype(dtype)).base_dtype,
                "initializer": self._initializer if initializer is None else initializer,
                "reuse": self._reuse,
                "trainable": True if trainable is None else trainable,
                "collections": collections,
                "validate_shape": validate_shape,
                "caching_device": self._caching_device,
            }
            if custom_getter is None:
                return _true_getter(**kwargs)
            if not callable(custom_getter):
                raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
            return custom_getter(getter=_true_getter, **kwargs)

    def __repr__(self) -> str:
        return f"<pv.VariableScope '{self._name}' reuse={self._reuse}>"


def _wrap_custom_getter(inner: CustomGetter | None, outer: CustomGetter | None) -> Any:
    """An inner scope's getter, given the outer scope's bound to the store's getter as its own
    ``getter``: the inner getter runs first and the store's getter last."""
    if inner is None or outer is None:
        return inner if outer is None else outer

    def wrapped(getter: CustomGetter, *args: Any, **kwargs: Any) -> Any:
        return inner(functools.partial(outer, getter), *args, **kwargs)

    return wrapped


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
    custom_getter: CustomGetter | None = None,
    reuse: Reuse | None = None,
    dtype: Any = None,
) -> Iterator[VariableScope]:
    """Open a variable scope and, as TF1 does, a name scope for the ops created inside.

    A string extends the current scope and inherits its reuse, initializer, dtype and custom
    getter; re-entering a name gives the same variable names but a fresh name scope (``foo_1/``).
    A ``VariableScope`` jumps back to that scope, keeping its own settings unless new ones are
    given. ``reuse=False`` cannot switch off reuse inherited from outside (TF's rule). A
    ``custom_getter`` composes with the one already in force. ``values`` is accepted for TF1's
    signature; placeviz builds into the default graph.
    """
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if reuse is False:
        reuse = None
    if not (reuse is None or reuse is True or reuse is AUTO_REUSE):
        raise ValueError("The reuse parameter must be True or False or None.")
    settings = _Settings(reuse, initializer, custom_getter, dtype)
    if isinstance(name_or_scope, VariableScope):
        entered = _jump(name_or_scope, settings)
    elif name_or_scope is None:
        if reuse:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        entered = _extend(default_name, settings, made_unique=True)
    elif isinstance(name_or_scope, str):
        entered = _extend(name_or_scope, settings, made_unique=False)
    else:
        raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
    with entered as scope:
        yield scope


class _Settings(NamedTuple):
    """What ``variable_scope`` was given; None keeps what the scope inherits."""

    reuse: Reuse | None
    initializer: Any
    custom_getter: CustomGetter | None
    dtype: Any

    def applied_to(self, base: VariableScope, name: str, name_scope: str) -> VariableScope:
        return VariableScope(
            self.reuse or base.reuse,
            name,
            base.initializer if self.initializer is None else self.initializer,
            name_scope,
            _wrap_custom_getter(self.custom_getter, base.custom_getter),
            base.dtype if self.dtype is None else self.dtype,
            base.caching_device,
        )


@contextlib.contextmanager
def _jump(target: VariableScope, settings: _Settings) -> Iterator[VariableScope]:
    """Back into ``target``: its name and name scope, under a new name scope for its last part."""
    graph = get_default_graph()
    store = _store(graph)
    last = target.name.split("/")[-1]
    entered = settings.applied_to(target, target.name, target.original_name_scope)
    with graph.name_scope(last) if last else contextlib.nullcontext(), _inside(store, entered):
        yield store.current


@contextlib.contextmanager
def reentered(target: VariableScope) -> Iterator[VariableScope]:
    """Back into ``target`` with reuse, inside the very name scope it first opened: how TF1's
    legacy layers call again (``dense/MatMul_1``), opening no new one (no ``dense_1/``)."""
    graph = get_default_graph()
    store = _store(graph)
    reused = _Settings(True, None, None, None)
    entered = reused.applied_to(target, target.name, target.original_name_scope)
    with graph.name_scope(target.original_name_scope or None), _inside(store, entered):
        yield store.current


@contextlib.contextmanager
def _inside(store: _Store, scope: VariableScope) -> Iterator[None]:
    """``scope`` is the current one (its name counted as opened) while the block runs."""
    outer = store.current
    store.current = scope
    store.open(scope.name)
    counts = dict(store.opened)
    try:
        yield
    finally:
        store.current = outer
        store.opened = counts


@contextlib.contextmanager
def _extend(name: str, settings: _Settings, made_unique: bool) -> Iterator[VariableScope]:
    """A scope inside the current one, inheriting its settings."""
    graph = get_default_graph()
    store = _store(graph)
    outer = store.current
    with graph.name_scope(name) if name else contextlib.nullcontext("") as name_scope:
        if made_unique:
            name = store.unique_name(name)
        full_name = f"{outer.name}/{name}" if outer.name else name
        store.current = settings.applied_to(outer, full_name, name_scope)
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
    trainable: bool | None = None,
    collections: Sequence[str] | None = None,
    validate_shape: bool = True,
    custom_getter: CustomGetter | None = None,
) -> Any:
    """The variable ``<scope>/<name>``: created, or found when the scope reuses variables.

    ``initializer`` is an initializer (object, class or callable ``(shape, dtype,
    partition_info=None)``), used with ``shape``; or a tensor or Python/NumPy value, which gives
    the shape itself. Without one, float variables get ``glorot_uniform_initializer()`` and
    others zeros. ``dtype`` defaults to the scope's (float32), except that a value initializer
    gives its own. ``custom_getter`` replaces the scope's getter for this call. What a custom
    getter returns is returned, variable or not.
    """
    return get_variable_scope().get_variable(
        name, shape, dtype, initializer, trainable, collections, validate_shape, custom_getter
    )


def _true_getter(
    name: str,
    shape: Any = None,
    dtype: Any = dtypes.float32,
    initializer: Any = None,
    reuse: Reuse | None = None,
    trainable: bool = True,
    collections: Sequence[str] | None = None,
    validate_shape: bool = True,
    caching_device: Any = None,
) -> Variable:
    """The store's getter, what a custom getter calls as ``getter``: finds or makes ``name``."""
    graph = get_default_graph()
    store = _store(graph)
    target = dtypes.as_dtype(dtype)
    from_value = initializer is not None and not callable(initializer)
    if shape is not None and from_value:
        raise ValueError("If initializer is a constant, do not specify shape.")
    found = store.variables.get(name)
    if found is not None:
        _check_reuse(found, name, as_shape(shape), target, reuse)
        return found
    if reuse is True:
        raise ValueError(
            f"Variable {name} does not exist, or was not created with pv.get_variable(). "
            "Did you mean to set reuse=pv.AUTO_REUSE in VarScope?"
        )
    if from_value:
        initial_value, variable_dtype = initializer, None
    else:
        initial_value, variable_dtype = _recipe(name, shape, target, initializer)
    variable = Variable(
        initial_value,
        trainable=trainable,
        name=name,
        dtype=variable_dtype,
        collections=collections,
        validate_shape=validate_shape,
        caching_device=caching_device,
    )
    store.variables[name] = variable
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


def _recipe(
    name: str, shape: Any, dtype: dtypes.DType, initializer: Any
) -> tuple[Callable[[], Tensor], dtypes.DType | None]:
    """The no-argument callable ``Variable`` runs under ``<name>/Initializer``, and the dtype
    the variable is given (none for a no-argument initializer: its value's own, as in TF)."""
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
    parameters = inspect.signature(initializer).parameters
    if not known.is_fully_defined:
        if not parameters:  # a value maker: it knows its shape
            return initializer, None
        raise ValueError(
            "The initializer passed is not valid. It should be a callable with no arguments and "
            "the shape should not be provided or an instance of `tf.keras.initializers.*' and "
            "`shape` should be fully defined."
        )
    dims = known.as_list()
    if "partition_info" in parameters:
        return lambda: initializer(dims, dtype=dtype, partition_info=None), dtype
    return lambda: initializer(dims, dtype=dtype), dtype


def _dtype_of(value: Any) -> dtypes.DType:
    """The dtype a value initializer would have, without adding a Const to the graph."""
    if is_tensor_like(value):
        return convert_to_tensor(value).dtype
    return dtypes.infer_dtype(value)
