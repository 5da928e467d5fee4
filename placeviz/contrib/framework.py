"""``pv.contrib.framework``: finding variables by name."""

from __future__ import annotations

from placeviz.graph.core import get_default_graph
from placeviz.graph.variables import GLOBAL_VARIABLES, Variable


def get_variables(scope: str | None = None, suffix: str | None = None) -> list[Variable]:
    """Global variables whose op name starts with ``scope`` and ends with ``suffix``."""
    found = get_default_graph().get_collection(GLOBAL_VARIABLES)
    if scope:
        found = [v for v in found if v.op.name.startswith(scope)]
    if suffix:
        found = [v for v in found if v.op.name.endswith(suffix)]
    return found


def get_variables_by_name(given_name: str, scope: str | None = None) -> list[Variable]:
    """Variables named ``given_name`` in any scope (``w`` finds ``w`` and ``tower/w``)."""
    return [
        v
        for v in get_variables(scope)
        if v.op.name == given_name or v.op.name.endswith("/" + given_name)
    ]
