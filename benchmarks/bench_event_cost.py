"""Cost per recorded event (issue 3's target: <= 0.5 us per event).

Measures, in one process: recording a real run (record_run on a 2,000-step plan with FULL_TRACE:
ops plus allocations and frees); and the same followed by reading every event back as NumPy
columns (``batch``), since the recorder keeps chunks and materializes them when read.
Run: python benchmarks/bench_event_cost.py
"""

from __future__ import annotations

import time

import numpy as np

import placeviz as pv
from placeviz.events.recorder import Recorder
from placeviz.runtime.tracing import record_run


def per_event_record_run(repeats: int, read_back: bool) -> tuple[float, int]:
    graph = pv.Graph()
    with graph.as_default(), pv.device("/cpu:0"):
        x = pv.constant(np.ones((8, 8), dtype=np.float32))
        for _ in range(2000):
            x = x * 1.0
    sess = pv.Session(graph=graph)
    full = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)
    sess.run(x, options=full)
    compiled, columns = sess._plans[("full trace", x)]
    recorder = Recorder(max_events=10**9)
    before = len(recorder)
    start = time.perf_counter()
    for run in range(repeats):
        record_run(recorder, compiled, columns, run, 0, 10**9, None, feeds=())
    if read_back:
        assert len(recorder.batch()) == len(recorder)
    elapsed = time.perf_counter() - start
    events = len(recorder) - before
    return elapsed / events, events // repeats


def main() -> None:
    record, per_run = min(per_event_record_run(20, read_back=False) for _ in range(3))
    both, _ = min(per_event_record_run(20, read_back=True) for _ in range(3))
    print(f"record_run, FULL_TRACE ({per_run} events/run)  {record * 1e6:6.3f} us/event")
    print(f"record_run and read back as NumPy columns   {both * 1e6:6.3f} us/event")
    print("target <= 0.5 us/event")


if __name__ == "__main__":
    main()
