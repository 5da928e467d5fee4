"""The golden documents vitest renders are what placeviz writes: valid, and of today's structure.

Wall-clock times and process ids differ from run to run, so the comparison leaves them out;
everything else a view reads (devices, nodes with their reasons, edges, run outcomes, how many
events of each kind) must be the same as when the documents were written
(scripts/write_golden_documents.py).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from placeviz.events.document import validate
from placeviz.examples.documents import GOLDEN, GOLDEN_FOLDER


def structure(document: dict[str, Any]) -> dict[str, Any]:
    events = document["events"]
    return {
        "devices": [{k: v for k, v in d.items() if k != "pid"} for d in document["devices"]],
        "nodes": document["nodes"],
        "edges": document["edges"],
        "runs": [
            (r["id"], r["status"], r.get("error"), r.get("fetches")) for r in document["runs"]
        ],
        "events": Counter(zip(events["kind"], events["device"], events["node"], strict=True)),
    }


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_golden_document_is_what_placeviz_writes_now(name: str) -> None:
    committed = json.loads((GOLDEN_FOLDER / f"{name}.json").read_text("utf-8"))
    validate(committed)
    now = json.loads(json.dumps(GOLDEN[name]().to_document()))
    assert structure(committed) == structure(now), (
        f"{name}.json is stale: run python3 scripts/write_golden_documents.py"
    )
