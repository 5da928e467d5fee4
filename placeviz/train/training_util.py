"""The global step: one int64 counter per graph that ``minimize(global_step=...)`` increments."""

from __future__ import annotations

from placeviz import dtypes
from placeviz.graph.core import Graph, get_default_graph
from placeviz.graph.graph_keys import GraphKeys
from placeviz.graph.ops import array_ops
from placeviz.graph.variables import GLOBAL_VARIABLES, Variable

GLOBAL_STEP = GraphKeys.GLOBAL_STEP


def get_global_step(graph: Graph | None = None) -> Variable | None:
    found = (graph or get_default_graph()).get_collection(GLOBAL_STEP)
    if len(found) > 1:
        raise TypeError("There should be only one global step, found several in the collection")
    return found[0] if found else None


def create_global_step(graph: Graph | None = None) -> Variable:
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return Variable(
            lambda: array_ops.zeros([], dtype=dtypes.int64),
            trainable=False,
            name=GLOBAL_STEP,
            dtype=dtypes.int64,
            collections=[GLOBAL_VARIABLES, GLOBAL_STEP],
        )


def get_or_create_global_step(graph: Graph | None = None) -> Variable:
    existing = get_global_step(graph)
    return existing if existing is not None else create_global_step(graph)
