"""The contract is declared once (placeviz/contract.py); the files generated from it must match."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from placeviz import contract


@pytest.mark.parametrize("path", sorted(contract.generated_files()), ids=lambda p: Path(p).name)
def test_the_generated_file_is_what_the_contract_writes(path: str) -> None:
    committed = Path(path).read_text("utf-8")
    assert committed == contract.generated_files()[path], (
        f"{path} drifted from placeviz/contract.py: run python3 scripts/generate_contract.py"
    )


def test_a_new_column_changes_the_generated_typescript(monkeypatch: pytest.MonkeyPatch) -> None:
    """The drift test can fail: a column added to the contract shows in the generated file."""
    before = contract.generated_files()
    extra = contract.Column("lane", np.int16, "<i2", "a test column")
    monkeypatch.setattr(contract, "EVENT_COLUMNS", (*contract.EVENT_COLUMNS, extra))
    monkeypatch.setattr(contract, "COLUMN_NAMES", (*contract.COLUMN_NAMES, "lane"))
    after = contract.generated_files()
    changed = [Path(path).name for path in before if before[path] != after[path]]
    assert changed == ["contract.gen.ts"]
    assert "lane: Int16Array; // a test column" in after[next(p for p in after if p.endswith("ts"))]


def test_a_real_run_records_and_sends_the_columns_the_schema_requires() -> None:
    """What a run records is what the contract declares, and survives the wire's types: the
    recorder's columns (names, dtypes), the live view's buffers decoded with the contract's
    little-endian types, and the document's schema (the JSON file generated from it)."""
    import placeviz as pv
    from placeviz.inspector.encoding import decode_events, encode_events

    with pv.Graph().as_default():
        x = pv.placeholder(pv.float32, [2, 2])
        total = pv.reduce_sum(pv.matmul(x, x) + 1.0)
        sess = pv.Session()
        sess.trace_level = pv.RunOptions.FULL_TRACE
        sess.run(total, {x: np.ones((2, 2), np.float32)})
    columns = sess.recorder.batch(0).columns
    assert list(columns) == [c.name for c in contract.EVENT_COLUMNS]
    for column in contract.EVENT_COLUMNS:
        assert columns[column.name].dtype == np.dtype(column.dtype), column.name
    origin = int(columns["t0"].min())
    decoded = decode_events([bytes(b) for b in encode_events(columns, origin)])
    for name, values in columns.items():
        expected = np.maximum(values - origin, 0) if name in ("t0", "t1") else values
        np.testing.assert_array_equal(decoded[name], expected, err_msg=name)
    kinds = set(columns["kind"].tolist())
    assert {int(contract.EventKind.RUN), int(contract.EventKind.OP)} <= kinds
    schema = json.loads(Path(next(iter(contract.generated_files()))).read_text())
    required = schema["properties"]["events"]["required"]
    document_events = sess.trace(runs=None).to_document()["events"]
    assert set(required) <= set(document_events)
