"""The contract is declared once (placeviz/contract.py); the files generated from it must match."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from placeviz import contract
from placeviz.events import document
from placeviz.events.recorder import DTYPES
from placeviz.inspector.encoding import WIRE_DTYPES


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


def test_the_runtime_reads_its_columns_from_the_contract() -> None:
    assert tuple(DTYPES) == contract.COLUMN_NAMES == tuple(WIRE_DTYPES)
    schema = document.schema()
    required = [n for n in contract.COLUMN_NAMES if n not in contract.COLUMN_DEFAULTS]
    assert schema["properties"]["events"]["required"] == required
    assert json.loads(Path(next(iter(contract.generated_files()))).read_text()) == schema


def test_typescript_declares_every_kind_with_its_code() -> None:
    ts = contract.typescript()
    for kind in contract.EventKind:
        assert f"{kind.name}: {int(kind)}" in ts
    for reason in contract.ReasonKind:
        assert f"'{reason.value}'" in ts
