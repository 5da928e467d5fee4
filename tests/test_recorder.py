"""The recorder's batches: built from chunks of scalars, lists and arrays, read whole or as rows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placeviz.contract import COLUMN_NAMES, EventKind
from placeviz.events.recorder import DTYPES, Recorder

KINDS = [int(kind) for kind in EventKind]


@st.composite
def chunks(draw: Any) -> tuple[int, dict[str, Any]]:
    """A chunk as the runtime records one: each column a scalar for the whole chunk, a list or
    an array; a column with a contract default may be left out."""
    size = draw(st.integers(1, 6))
    columns: dict[str, Any] = {}
    for name in COLUMN_NAMES:
        if name in ("frame", "iteration") and draw(st.booleans()):
            continue
        bounds = np.iinfo(DTYPES[name])
        values = (
            st.sampled_from(KINDS)
            if name == "kind"
            else st.integers(max(bounds.min, -1), min(bounds.max, 10**12))
        )
        form = draw(st.sampled_from(["scalar", "list", "array"]))
        if form == "scalar":
            columns[name] = draw(values)
        else:
            column = draw(st.lists(values, min_size=size, max_size=size))
            columns[name] = column if form == "list" else np.array(column, np.int64)
    return size, columns


@settings(max_examples=150, deadline=None)
@given(
    st.lists(chunks(), min_size=1, max_size=6),
    st.data(),
    st.lists(st.booleans(), min_size=len(KINDS), max_size=len(KINDS)),
)
def test_rows_are_the_kept_events_of_the_columns(
    recorded: list[tuple[int, dict[str, Any]]], data: Any, kept_kinds: list[bool]
) -> None:
    recorder = Recorder()
    for size, columns in recorded:
        if data.draw(st.booleans()):
            recorder.extend(size, columns)
        else:  # built when read, as a cluster step's
            recorder.extend_later(size, lambda columns=columns: columns)
    since = data.draw(st.integers(0, recorder.total))
    until = data.draw(st.integers(since, recorder.total))
    keep = np.zeros(max(KINDS) + 1, bool)
    keep[KINDS] = kept_kinds
    names = data.draw(st.lists(st.sampled_from(COLUMN_NAMES), min_size=1, unique=True))
    batch = recorder.batch(since, until)
    rows = batch.rows(names, keep)
    columns = batch.columns
    kept = keep[columns["kind"]]
    assert rows.dtype == np.int64
    assert rows.shape == (len(names), int(kept.sum()))
    for row, name in zip(rows, names):
        np.testing.assert_array_equal(row, columns[name][kept].astype(np.int64), err_msg=name)


def test_rows_of_a_traced_run_are_its_op_and_memory_events() -> None:
    import placeviz as pv

    with pv.Graph().as_default():
        x = pv.placeholder(pv.float32, [3, 3])
        total = pv.reduce_sum(pv.matmul(x, x) * 2.0)
        sess = pv.Session()
        sess.trace_level = pv.RunOptions.FULL_TRACE
        sess.run(total, {x: np.ones((3, 3), np.float32)})
    batch = sess.last_run_events()
    keep = np.zeros(max(KINDS) + 1, bool)
    keep[[EventKind.OP, EventKind.ALLOC, EventKind.FREE]] = True
    rows = batch.rows(["kind", "node", "bytes"], keep)
    kinds = set(rows[0].tolist())
    assert kinds == {EventKind.OP, EventKind.ALLOC, EventKind.FREE}
    columns = batch.columns
    kept = keep[columns["kind"]]
    np.testing.assert_array_equal(rows[1], columns["node"][kept])
    assert int(EventKind.RUN) in columns["kind"].tolist()  # recorded, but not a row


def test_events_recorded_for_later_are_built_once_when_read_and_never_if_dropped_unread() -> None:
    built: list[int] = []

    def step(n: int) -> Any:
        def build() -> dict[str, Any]:
            built.append(n)
            return {
                **dict.fromkeys(COLUMN_NAMES, 0),
                "kind": [int(EventKind.OP)] * 3,
                "t0": n,
                "node": [0, 1, 2],
            }

        return build

    recorder = Recorder(max_events=6)
    for n in range(4):
        recorder.extend_later(3, step(n))
        recorder.publish(recorder.total - 3)  # rolls the oldest over past 6 events
    assert len(recorder) == 6 and built == []  # steps 0 and 1 dropped, never built
    batch = recorder.batch()
    assert batch.columns["t0"].tolist() == [2, 2, 2, 3, 3, 3]
    assert recorder.batch(recorder.total - 3).columns["node"].tolist() == [0, 1, 2]
    assert built == [2, 3]  # each once, though read twice

    recorder.extend_later(2, step(4))  # promised 2, makes 3
    with pytest.raises(RuntimeError, match="2 promised"):
        len(recorder.batch(recorder.total - 2).columns)
