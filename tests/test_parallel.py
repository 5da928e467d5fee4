"""The parallel runtime: one stream per device, cancellation, interrupts, no leaks."""

from __future__ import annotations

import _thread
import gc
import itertools
import threading
import time
import tracemalloc
from collections.abc import Iterator

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.graph import registry
from placeviz.graph.ops._build import make_op, single

# -- test-only ops: a kernel that sleeps (releasing the GIL, like a long GPU kernel) and one that
# -- fails after a delay. Registered once for this module.


def _infer_same(inputs, attrs):  # type: ignore[no-untyped-def]
    return single(inputs[0].shape, inputs[0].dtype)


SLEPT: list[str] = []  # names of the sleep ops that finished, in order
SLEPT_AT: dict[str, tuple[int, int]] = {}  # each sleep op's last run: when it began and ended


def _sleep_kernel(xp, op, state):  # type: ignore[no-untyped-def]
    seconds = op.attrs["seconds"]

    def sleep(x):  # type: ignore[no-untyped-def]
        start = time.perf_counter_ns()
        time.sleep(seconds)
        SLEPT.append(op.name)
        SLEPT_AT[op.name] = (start, time.perf_counter_ns())
        return x

    return sleep


def _explode_kernel(xp, op, state):  # type: ignore[no-untyped-def]
    seconds = op.attrs["seconds"]

    def explode(x):  # type: ignore[no-untyped-def]
        time.sleep(seconds)
        raise RuntimeError("the kernel exploded")

    return explode


registry.register(registry.OpDef(type="TestSleep", infer=_infer_same, kernel=_sleep_kernel))
registry.register(registry.OpDef(type="TestExplode", infer=_infer_same, kernel=_explode_kernel))


def sleep(x: pv.Tensor, seconds: float, name: str = "Sleep") -> pv.Tensor:
    return make_op("TestSleep", [x], name, {"seconds": seconds}).outputs[0]


def explode(x: pv.Tensor, seconds: float, name: str = "Explode") -> pv.Tensor:
    return make_op("TestExplode", [x], name, {"seconds": seconds}).outputs[0]


@pytest.fixture(autouse=True)
def two_gpus() -> Iterator[None]:
    pv.config.simulate_gpus(2)
    yield


def _two_sleepy_towers(seconds: float) -> pv.Tensor:
    with pv.device("/cpu:0"):
        x = pv.constant([1.0, 2.0], name="x")
    outs = []
    for gpu in range(2):
        with pv.device(f"/gpu:{gpu}"):
            outs.append(sleep(x * 2.0, seconds, name=f"sleep_{gpu}"))
    with pv.device("/cpu:0"):
        return pv.add_n(outs, name="total")


def test_devices_run_in_parallel() -> None:
    """The two GPUs' sleeps overlap (as the kernels saw them: simulated GPUs' traces are
    modeled); with one inter-op thread they take turns."""
    total = _two_sleepy_towers(0.2)
    parallel = pv.Session()
    np.testing.assert_array_equal(parallel.run(total), [4.0, 8.0])
    (a0, a1), (b0, b1) = SLEPT_AT["sleep_0"], SLEPT_AT["sleep_1"]
    assert a0 < b1 and b0 < a1
    serial = pv.Session(config=pv.ConfigProto(inter_op_parallelism_threads=1))
    np.testing.assert_array_equal(serial.run(total), [4.0, 8.0])
    (a0, a1), (b0, b1) = sorted([SLEPT_AT["sleep_0"], SLEPT_AT["sleep_1"]])
    assert a1 <= b0
    parallel.close()
    serial.close()


def _slow_chain_beside_a_failure(
    steps: int, step_seconds: float, fails_after: float
) -> tuple[pv.Tensor, pv.Tensor, pv.Tensor, pv.Tensor]:
    """x; sleeps slow_0..slow_{steps-1} in a chain on GPU:0; 'boom' failing on GPU:1; both."""
    with pv.device("/cpu:0"):
        x = pv.constant([1.0, 2.0], name="x")
    with pv.device("/gpu:0"):
        slow = x
        for i in range(steps):
            slow = sleep(slow, step_seconds, name=f"slow_{i}")
    with pv.device("/gpu:1"):
        boom = explode(x + 1.0, fails_after, name="boom")
    with pv.device("/cpu:0"):
        both = pv.add(slow, boom, name="both")
    return x, slow, boom, both


def test_a_failing_kernel_cancels_the_run_quickly_and_leaves_no_threads() -> None:
    x, slow, boom, both = _slow_chain_beside_a_failure(40, 0.05, 0.05)  # two seconds of sleeps
    with pv.device("/cpu:0"):
        on_cpu = x + 0.0  # x is a constant, which costs no step: the CPU needs an op to start
    sess = pv.Session()
    sess.run([slow, boom.op.inputs[0], on_cpu])  # start the session's workers
    threads_before = threading.active_count()
    SLEPT.clear()
    with pytest.raises(pv.errors.InvalidArgumentError) as info:
        sess.run(both)
    # the run raises once every stream stopped: GPU:0's chain stopped short of its 40 steps
    assert len([name for name in SLEPT if name.startswith("slow_")]) < 40
    message = str(info.value)
    assert "RuntimeError: the kernel exploded" in message and "'boom' (TestExplode)" in message
    assert "device:GPU:1" in message
    assert info.value.op is boom.op
    time.sleep(0.2)  # the stream on GPU:0 stops at its next step
    assert threading.active_count() == threads_before
    np.testing.assert_array_equal(sess.run(x + 1.0), [2.0, 3.0])  # still usable
    trace = sess.trace(runs=2)
    failed = [r for r in trace.runs if r["status"] == "error"]
    assert len(failed) == 1 and "exploded" in failed[0]["error"]
    sess.close()


def test_a_failed_run_raises_once_every_stream_stopped_and_its_trace_has_their_steps() -> None:
    _, _, _, both = _slow_chain_beside_a_failure(10, 0.2, 0.3)  # boom fails while slow_1 runs
    sess = pv.Session()
    SLEPT.clear()
    with pytest.raises(pv.errors.InvalidArgumentError):
        sess.run(both)
    # slow_1 was running when boom failed: the run waited for it; slow_2 never began.
    assert SLEPT == ["slow_0", "slow_1"]
    time.sleep(0.3)
    assert SLEPT == ["slow_0", "slow_1"]
    events = sess.trace(runs=1).events
    ids = {op.id: op.name for op in pv.get_default_graph().get_operations()}
    ran = {ids[int(node)] for node in events["node"][events["kind"] == int(EventKind.OP)]}
    assert {"slow_0", "slow_1", "boom"} <= ran and "slow_2" not in ran
    sess.close()


def test_runs_from_several_threads_take_turns_and_each_is_traced_whole() -> None:
    total = _two_sleepy_towers(0.002)
    sess = pv.Session()
    sess.trace_level = pv.RunOptions.FULL_TRACE
    results: list[np.ndarray] = []

    def loop() -> None:
        for _ in range(30):
            results.append(sess.run(total))

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        # Interleaved runs of one plan queued their streams' jobs crosswise on the workers and
        # waited on each other for ever.
        assert not thread.is_alive(), "runs from several threads deadlocked"
    assert len(results) == 90
    for value in results:
        np.testing.assert_allclose(value, [4.0, 8.0])
    trace = sess.trace(runs=None)
    assert sorted(run["id"] for run in trace.runs) == list(range(90))
    spans = sorted((run["t0"], run["t1"]) for run in trace.runs)
    assert all(end <= next_start for (_, end), (next_start, _) in itertools.pairwise(spans))
    events = trace.events
    by_id = {run["id"]: (run["t0"], run["t1"]) for run in trace.runs}
    ops = events["kind"] == int(EventKind.OP)
    per_run = np.bincount(events["run"][ops], minlength=90)
    assert per_run.min() == per_run.max() >= 5  # each run's steps, once: none lost or mixed
    for run, t0, t1 in zip(events["run"][ops], events["t0"][ops], events["t1"][ops]):
        start, end = by_id[int(run)]
        assert start <= t0 <= t1 <= end
    sess.close()


def test_failing_runs_do_not_leak_memory() -> None:
    big = np.ones((1024, 1024), dtype=np.float32)  # 4 MiB per tensor
    with pv.device("/gpu:0"):
        a = pv.constant(big) * 2.0
    with pv.device("/gpu:1"):
        b = explode(pv.constant(big) + 1.0, 0.0)
    with pv.device("/cpu:0"):
        c = a + b
    sess = pv.Session()
    with pytest.raises(pv.errors.InvalidArgumentError):
        sess.run(c)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(5):
        with pytest.raises(pv.errors.InvalidArgumentError):
            sess.run(c)
    time.sleep(0.1)
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 2 << 20, f"{grown} bytes still held after 5 failed runs"
    sess.close()


def test_keyboard_interrupt_stops_every_worker() -> None:
    with pv.device("/cpu:0"):
        x = pv.constant([1.0], name="x")
    chains = []
    for gpu in range(2):
        with pv.device(f"/gpu:{gpu}"):
            h = x
            for i in range(100):
                h = sleep(h, 0.02, name=f"chain{gpu}_{i}")  # two seconds each
            chains.append(h)
    with pv.device("/cpu:0"):
        total = pv.add_n(chains)
    threads_before = threading.active_count()
    sess = pv.Session()
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    SLEPT.clear()
    with pytest.raises(KeyboardInterrupt):
        sess.run(total)
    assert len([name for name in SLEPT if name.startswith("chain")]) < 200  # both chains cut short
    timer.join()
    np.testing.assert_array_equal(sess.run(x * 2.0), [2.0])  # still usable
    sess.close()
    assert threading.active_count() == threads_before


def test_control_dependencies_across_devices_are_honoured() -> None:
    with pv.device("/gpu:0"):
        first = sleep(pv.constant([1.0]), 0.1, name="first")
    with pv.device("/gpu:1"), pv.control_dependencies([first]):
        second = pv.constant([2.0], name="second") * 1.0
    sess = pv.Session()
    sess.run([second, first])
    trace = sess.trace()
    ev = trace.events
    times = {
        trace.node_name(int(ev["node"][i])): (int(ev["t0"][i]), int(ev["t1"][i]))
        for i in range(len(trace))
        if ev["kind"][i] == int(EventKind.OP)
    }
    assert times["second"][0] >= times["first"][1]
    sess.close()


def test_closing_the_session_stops_its_workers() -> None:
    before = threading.active_count()
    sess = pv.Session()
    sess.run(_two_sleepy_towers(0.0))
    assert threading.active_count() > before
    sess.close()
    assert threading.active_count() == before


def test_a_session_dropped_without_close_stops_its_workers() -> None:
    before = threading.active_count()
    for _ in range(3):
        pv.Session().run(_two_sleepy_towers(0.0))
    gc.collect()
    deadline = time.monotonic() + 5.0
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() == before


def test_an_interrupted_run_is_still_in_the_trace() -> None:
    with pv.device("/cpu:0"):
        x = h = pv.placeholder(pv.float32, [1], name="x")  # fed: nothing to fold
        for i in range(50):
            h = sleep(h, 0.02, name=f"step_{i}")
    sess = pv.Session(config=pv.ConfigProto(inter_op_parallelism_threads=1))
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sess.run(h, {x: [1.0]})
    timer.join()
    trace = sess.trace()
    assert trace.runs[0]["status"] == "error" and trace.runs[0]["error"] == "KeyboardInterrupt"
    ran = (trace.events["kind"] == int(EventKind.OP)).sum()
    assert 3 <= ran < 50  # the steps that ran before the interrupt, and the interrupted one
    sess.close()


def _infer_blas_threads(inputs, attrs):  # type: ignore[no-untyped-def]
    return single(inputs[0].shape, pv.int32)


def _blas_threads_kernel(xp, op, state):  # type: ignore[no-untyped-def]
    from threadpoolctl import threadpool_info

    def threads(x):  # type: ignore[no-untyped-def]
        blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
        return np.full(x.shape, max(blas, default=-1), dtype=np.int32)

    return threads


registry.register(
    registry.OpDef(type="TestBlasThreads", infer=_infer_blas_threads, kernel=_blas_threads_kernel)
)


def test_intra_op_parallelism_threads_limits_blas_threads_during_runs() -> None:
    from threadpoolctl import threadpool_info

    before = max(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
    if before == 1:
        pytest.skip("BLAS uses one thread here, so a limit of one cannot be told apart")
    with pv.device("/cpu:0"):
        seen = make_op("TestBlasThreads", [pv.constant([0.0])], "threads").outputs[0]
    limited = pv.Session(config=pv.ConfigProto(intra_op_parallelism_threads=1))
    assert limited.run(seen)[0] == 1
    after = max(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
    assert after == before  # restored after the run
    assert pv.Session().run(seen)[0] == before
