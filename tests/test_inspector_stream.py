"""The live stream: binary encoding, throttling in the kernel, and completeness of what it sends."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import placeviz as pv
from placeviz.contract import COLUMN_NAMES as COLUMNS
from placeviz.contract import RUNS_LISTED, EventKind
from placeviz.events.recorder import DTYPES
from placeviz.inspector.encoding import WIRE_DTYPES, decode_events, encode_events
from placeviz.inspector.stream import LiveStream

Sent = list[tuple[dict[str, Any], list[memoryview]]]


def _sink() -> tuple[Sent, Any]:
    sent: Sent = []
    return sent, lambda content, buffers: sent.append((content, [bytes(b) for b in buffers]))


@settings(max_examples=50, deadline=None)
@given(
    st.integers(0, 40).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.integers(0, 2**40), min_size=n, max_size=n),
            st.lists(st.integers(-1, 2**31 - 1), min_size=n, max_size=n),
            st.lists(st.integers(0, 2**50), min_size=n, max_size=n),
        )
    ),
    st.integers(0, 2**40),
)
def test_encoding_round_trips_every_column(data: tuple, origin: int) -> None:
    n, t0, node, nbytes = data
    columns = {name: np.zeros(n, DTYPES[name]) for name in COLUMNS}
    columns["kind"][:] = int(EventKind.OP)
    columns["t0"][:] = np.array(t0, dtype=np.int64) + origin
    columns["t1"][:] = columns["t0"] + 7
    columns["node"][:] = node
    columns["bytes"][:] = nbytes
    columns["device"][:] = -1
    buffers = encode_events(columns, origin)
    assert [b.nbytes for b in buffers] == [n * WIRE_DTYPES[name].itemsize for name in COLUMNS]
    back = decode_events([bytes(b) for b in buffers])
    assert back["t0"].tolist() == [float(t) for t in t0]
    assert back["t1"].tolist() == [float(t + 7) for t in t0]
    assert back["node"].tolist() == node
    assert back["bytes"].tolist() == [float(b) for b in nbytes]
    assert back["device"].tolist() == [-1] * n


def _towers_session() -> tuple[pv.Session, Any]:
    from placeviz.examples.towers import build_towers

    pv.reset_default_graph()
    total = build_towers()
    return pv.Session(config=pv.ConfigProto(allow_soft_placement=True)), total


def _events_by_run(columns: dict[str, np.ndarray]) -> dict[int, dict[str, list]]:
    """Events split by their run column (-1: not a run's, e.g. placement)."""
    return {
        int(run): {name: columns[name][columns["run"] == run].tolist() for name in COLUMNS}
        for run in np.unique(columns["run"])
    }


def test_a_fast_loop_is_sent_at_most_twenty_times_a_second_each_run_listed() -> None:
    sent, send = _sink()
    session, total = _towers_session()
    stream = LiveStream(send, origin_ns=0, max_rate=20.0)
    stream.watch(session)
    began = time.monotonic()
    for _ in range(300):
        session.run(total)
    elapsed = time.monotonic() - began
    stream.close()
    # One update may go at once, then one per interval (the last one at close).
    assert len(sent) <= math.ceil(elapsed * 20) + 2
    assert len(sent) < 300
    runs = [run["id"] for content, _ in sent for run in content.get("runs", [])]
    assert runs == list(range(300))
    recorded = session.trace(runs=None).events
    streamed_total = sum(content["count"] + content.get("skipped", 0) for content, _ in sent)
    assert streamed_total == len(recorded["kind"])
    # What is sent of a run is all of it, as recorded; the last run always is.
    by_run = _events_by_run(recorded)
    sent_runs = []
    for _, buffers in sent:
        for run, events in _events_by_run(decode_events(buffers)).items():
            for name in ("kind", "node", "device", "bytes"):
                assert events[name] == by_run[run][name], (run, name)
            sent_runs.append(run)
    assert sent_runs[-1] == 299 and sorted(set(sent_runs)) == sorted(sent_runs)


def test_an_update_sends_the_newest_run_whole_and_counts_those_it_skips() -> None:
    sent, send = _sink()
    session, total = _towers_session()
    stream = LiveStream(send, origin_ns=0, max_rate=1e-6)  # only explicit flushes send
    stream.watch(session)
    session.run(total)
    stream.flush()  # a run longer than the interval: sent whole
    for _ in range(3):
        session.run(total)
    stream.flush()  # three runs in one interval: the third's events, the records of all
    stream.close()
    first, second = (content for content, _ in sent)
    assert [run["id"] for run in first["runs"]] == [0] and "skipped" not in first
    assert [run["id"] for run in second["runs"]] == [1, 2, 3]
    recorded = _events_by_run(session.trace(runs=None).events)
    assert set(_events_by_run(decode_events(sent[1][1]))) == {3}
    assert second["count"] == len(recorded[3]["kind"])
    assert second["skipped"] == len(recorded[1]["kind"]) + len(recorded[2]["kind"])


def test_the_first_update_carries_the_tables_and_a_new_session_resets_the_view() -> None:
    sent, send = _sink()
    first, total = _towers_session()
    stream = LiveStream(send, origin_ns=time.perf_counter_ns())
    stream.watch(first)
    first.run(total)
    second = pv.Session(config=pv.ConfigProto(allow_soft_placement=True))
    stream.watch(second)
    second.run(total)
    stream.close()
    tables = [content for content, _ in sent if "tables" in content]
    assert tables[0].get("reset") is True
    names = {node["name"] for node in tables[0]["tables"]["nodes"]}
    assert names == {op.name for op in pv.get_default_graph().get_operations()}
    assert [c.get("reset", False) for c in tables] == [True, True]
    assert len(tables) == 2  # a second run of an already placed graph sends no tables


def test_updates_go_out_while_the_cell_runs_not_only_at_close() -> None:
    sent, send = _sink()
    session, total = _towers_session()
    stream = LiveStream(send, origin_ns=0, max_rate=20.0)
    stream.watch(session)
    session.run(total)
    deadline = time.monotonic() + 2.0
    while not sent and time.monotonic() < deadline:
        time.sleep(0.01)  # the ticker sends within an interval (50 ms)
    assert sent and sent[0][0]["count"] > 0
    stream.close()


def test_a_long_run_reports_which_ops_wait_run_and_are_done_while_it_runs() -> None:
    sent, send = _sink()
    pv.reset_default_graph()
    x = pv.random_uniform([1200, 1200], seed=1)
    for _ in range(8):
        x = pv.matmul(x, x) * 1e-3  # ~0.1 s each on this machine's CPU
    session = pv.Session()
    stream = LiveStream(send, origin_ns=0, max_rate=50.0)
    stream.watch(session)
    session.run(x)
    stream.close()
    snapshots = [c["progress"] for c, _ in sent if c.get("progress")]
    assert snapshots, "no progress was sent during an ~1 s run"
    ids = {op.name: op.id for op in pv.get_default_graph().get_operations()}
    matmuls = {ids["MatMul"], *(ids[f"MatMul_{i}"] for i in range(1, 8))}
    for snapshot in snapshots:
        assert len(snapshot["running"]) == 1  # one stream: one op at a time
        everything = snapshot["waiting"] + snapshot["running"] + snapshot["done"]
        assert sorted(everything) == sorted(set(everything)) and matmuls <= set(everything)
    done = [len(s["done"]) for s in snapshots]
    assert done == sorted(done) and done[-1] > done[0]  # ops finish as the run goes on
    last = [c for c, _ in sent if "progress" in c][-1]
    assert last["progress"] is None  # the run ended: the view drops its snapshot


def test_a_view_that_starts_on_a_long_history_gets_the_newest_run_records_only() -> None:
    x = pv.constant([1.0, 2.0])
    y = x * 2.0
    session = pv.Session()
    for _ in range(RUNS_LISTED + 5):
        session.run(y)
    sent, send = _sink()
    stream = LiveStream(send, origin_ns=0, max_rate=1e-6)  # only explicit flushes send
    stream.watch(session)
    session.run(y)
    stream.flush()
    session.run(y)
    stream.close()
    first, second = (content for content, _ in sent)
    assert first["reset"] is True
    assert [run["id"] for run in first["runs"]] == list(range(6, RUNS_LISTED + 6))
    assert [run["id"] for run in second["runs"]] == [RUNS_LISTED + 6]


def test_a_second_session_placed_before_a_flush_still_sends_its_runs() -> None:
    sent, send = _sink()
    first, total = _towers_session()
    stream = LiveStream(send, origin_ns=0, max_rate=1e-6)  # only explicit flushes send
    stream.watch(first)
    for _ in range(3):
        first.run(total)
    stream.flush()
    second = pv.Session(config=pv.ConfigProto(allow_soft_placement=True))
    stream.watch(second)
    second._place()  # its placement is published before its first run ends
    stream.flush()
    for _ in range(3):
        second.run(total)
    stream.close()
    runs = [[run["id"] for run in content.get("runs", [])] for content, _ in sent]
    assert runs == [[0, 1, 2], [], [0, 1, 2]]
