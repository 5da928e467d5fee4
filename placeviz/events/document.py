"""Checking a placement document against its schema and its own cross-references.

The JSON Schema (``schema/placeviz-1.schema.json``) fixes the shape; ``validate`` adds what a schema
cannot say: every column has the same length and every id points at something that exists.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

SCHEMA_FILE = "placeviz-1.schema.json"


class DocumentError(ValueError):
    """A placement document that does not match schema ``placeviz/1``."""


@cache
def schema() -> dict[str, Any]:
    text = resources.files("placeviz.events").joinpath("schema", SCHEMA_FILE).read_text("utf-8")
    return json.loads(text)


def validate(document: dict[str, Any]) -> None:
    """Raise DocumentError naming the first problem; needs ``jsonschema`` (placeviz[test])."""
    try:
        import jsonschema
    except ImportError as exc:  # pragma: no cover - the test extra installs it
        raise ImportError("Validating documents needs jsonschema: pip install jsonschema") from exc
    try:
        jsonschema.validate(document, schema())
    except jsonschema.ValidationError as exc:
        path = "/".join(str(p) for p in exc.absolute_path)
        raise DocumentError(f"{path or 'document'}: {exc.message}") from None
    events = document["events"]
    lengths = {name: len(column) for name, column in events.items()}
    if len(set(lengths.values())) > 1:
        raise DocumentError(f"events columns differ in length: {lengths}")
    device_ids = {d["id"] for d in document["devices"]}
    node_ids = {n["id"] for n in document["nodes"]}
    for node in document["nodes"]:
        if node["device"] is not None and node["device"] not in device_ids:
            raise DocumentError(f"node {node['name']!r} names unknown device {node['device']}")
    for edge in document["edges"]:
        if edge["src"] not in node_ids or edge["dst"] not in node_ids:
            raise DocumentError(f"edge {edge['src']} -> {edge['dst']} names an unknown node")
    for column, known in (("device", device_ids), ("node", node_ids)):
        unknown = {v for v in events[column] if v >= 0} - known
        if unknown:
            raise DocumentError(f"events name unknown {column} ids {sorted(unknown)[:5]}")
