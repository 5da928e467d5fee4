"""The session Keras models run in, and which of their variables it has initialized."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

from placeviz.graph.core import executing_eagerly, get_default_graph, get_default_session
from placeviz.graph.variables import variables_initializer
from placeviz.runtime.eager import eager_session
from placeviz.runtime.session import Session

_sessions: weakref.WeakKeyDictionary[Any, Session] = weakref.WeakKeyDictionary()
_initialized: weakref.WeakKeyDictionary[Session, set[int]] = weakref.WeakKeyDictionary()


def get_session() -> Session:
    """The eager session, else the default session, else one session per graph (TF1 Keras)."""
    if executing_eagerly():
        return eager_session()
    session = get_default_session()
    if session is not None:
        return session
    graph = get_default_graph()
    if graph not in _sessions:
        _sessions[graph] = Session(graph=graph)
    return _sessions[graph]


def initialize(session: Session, variables: Iterable[Any]) -> None:
    """Run the initializers of ``variables`` this session has not initialized through Keras.

    In eager mode variables are initialized when created, so there is nothing to run.
    """
    if executing_eagerly():
        return
    done = _initialized.setdefault(session, set())
    fresh = [v for v in variables if id(v) not in done]
    if fresh:
        session.run(variables_initializer(fresh))
        done.update(id(v) for v in fresh)


_LEARNING_PHASE: list[bool] = [False]


def learning_phase() -> bool:
    """Whether layers are being built for training (``fit``) or inference (``predict``)."""
    return _LEARNING_PHASE[-1]


@contextlib.contextmanager
def learning_phase_scope(training: bool) -> Iterator[None]:
    """Builds the layer calls inside for training or for inference; placeviz decides this when
    the graph is built, where TF1 Keras feeds a ``keras_learning_phase`` tensor at run time."""
    _LEARNING_PHASE.append(bool(training))
    try:
        yield
    finally:
        _LEARNING_PHASE.pop()


__all__ = ["get_session", "learning_phase", "learning_phase_scope"]
