"""Real GPUs on a card: streams and events, pools, CUDA-event timings, copies, NVML readings.

Every test here needs a CUDA GPU with CuPy (conftest skips them elsewhere). Several GPUs are
logical GPUs carved from the first card, as the seeds do with set_logical_device_configuration.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import EventKind, TimingSource

pytestmark = pytest.mark.gpu

LOCAL = "/job:localhost/replica:0/task:0/device:"
MIB = 1 << 20


def carve(count: int, memory_mb: int = 1024) -> None:
    """``count`` logical GPUs of ``memory_mb`` each from the first card (the others hidden)."""
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_visible_devices(gpus[:1], "GPU")
    pv.config.set_logical_device_configuration(
        gpus[0], [pv.config.LogicalDeviceConfiguration(memory_limit=memory_mb)] * count
    )


def grow() -> pv.ConfigProto:
    return pv.ConfigProto(gpu_options=pv.GPUOptions(allow_growth=True))


def traced() -> tuple[pv.RunOptions, pv.RunMetadata]:
    return pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE), pv.RunMetadata()


def rows(trace: pv.Trace, kind: EventKind) -> list[dict[str, Any]]:
    """The trace's events of ``kind`` as dicts, with device and node names."""
    events = trace.events
    devices = {d["id"]: d["name"] for d in trace.devices}
    nodes = {n["id"]: n["name"] for n in trace.nodes}
    found = []
    for i in np.flatnonzero(events["kind"] == int(kind)):
        found.append(
            {
                "t0": int(events["t0"][i]),
                "t1": int(events["t1"][i]),
                "device": devices.get(int(events["device"][i]), ""),
                "peer": devices.get(int(events["peer"][i]), ""),
                "node": nodes.get(int(events["node"][i]), ""),
                "bytes": int(events["bytes"][i]),
                "source": int(events["source"][i]),
            }
        )
    return found


def op_rows(trace: pv.Trace, name: str) -> list[dict[str, Any]]:
    return [r for r in rows(trace, EventKind.OP) if r["node"] == name]


def chain(x: pv.Tensor, w: pv.Tensor, length: int) -> pv.Tensor:
    for _ in range(length):
        x = pv.matmul(x, w)
    return x


def outer(name: str = "big") -> tuple[pv.Tensor, pv.Tensor]:
    """A [n, 1] x [1, n] product of fed ones: n*n floats, a size known only at run time."""
    column = pv.placeholder(pv.float32, [None, 1], name="column")
    row = pv.transpose(column)
    return column, pv.matmul(column, row, name=name)


def ones(n: int) -> np.ndarray:
    return np.ones((n, 1), np.float32)


def orthogonal(n: int, seed: int) -> np.ndarray:
    """A float32 orthogonal matrix: chained products keep their scale."""
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return q.astype(np.float32)


# -- 1. a stream per logical GPU, events between them ---------------------------------------------
def test_each_logical_gpu_has_its_own_stream_and_pool() -> None:
    carve(4)
    with pv.device("/gpu:3"):
        y = pv.constant(1.0) + 1.0
    with pv.Session() as sess:
        sess.run(y)
        gpus = sess._gpus.gpus
        assert sorted(gpus) == [f"{LOCAL}GPU:{i}" for i in range(4)]
        streams = {g.stream.ptr for g in gpus.values()}
        assert len(streams) == 4 and 0 not in streams  # none is the legacy default stream
        assert len({id(g.pool) for g in gpus.values()}) == 4
        assert all(g.pool.get_limit() == 1024 * MIB for g in gpus.values())


def test_a_chain_across_gpus_waits_on_events_not_the_host() -> None:
    carve(4)
    n = 1024
    x0 = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    w = orthogonal(n, 1)
    x = pv.constant(x0)
    want = x0
    for hop in range(8):  # every product on the next GPU: each hop crosses streams
        with pv.device(f"/gpu:{hop % 4}"):
            x = pv.matmul(x, pv.constant(w))
        want = want @ w
    with pv.Session(config=grow()) as sess:
        got = sess.run(x)
        compiled = next(iter(sess._plans.values()))[0]
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    # each stream waits on an event (bound calls w<n>), the host on none (hw<n>)
    waits = [name for name in compiled._namespace if name.startswith("w")]
    assert len(waits) == 7  # one per hop between GPUs (the first product reads host values)
    host_waits = [name for name in compiled._namespace if name.startswith("hw")]
    assert host_waits == []


def test_independent_gpus_overlap_on_the_card() -> None:
    carve(2)
    n = 2048
    w = orthogonal(n, 2)
    outs = []
    for gpu in range(2):
        with pv.device(f"/gpu:{gpu}"):
            outs.append(chain(pv.constant(w), pv.constant(w), 12))
    with pv.Session(config=grow()) as sess:
        sess.run(outs)  # compiles cuBLAS's and CuPy's kernels
        options, metadata = traced()
        sess.run(outs, options=options, run_metadata=metadata)
    spans = {}
    for row in rows(metadata.trace, EventKind.OP):
        if row["node"].startswith("MatMul"):
            low, high = spans.get(row["device"], (row["t0"], row["t1"]))
            spans[row["device"]] = (min(low, row["t0"]), max(high, row["t1"]))
    (a0, a1), (b0, b1) = spans[f"{LOCAL}GPU:0"], spans[f"{LOCAL}GPU:1"]
    assert max(a0, b0) < min(a1, b1), f"the two GPUs' work did not overlap: {spans}"


def test_values_crossing_gpus_are_never_read_early() -> None:
    """Without the events a consumer would read its producer's buffer before it is written."""
    carve(3)
    n = 512
    rng = np.random.default_rng(3)
    a = rng.standard_normal((n, n)).astype(np.float32)
    w = orthogonal(n, 4)
    with pv.device("/gpu:0"):
        slow = chain(pv.constant(a), pv.constant(w), 30)  # long work on GPU:0
    with pv.device("/gpu:1"):
        moved = slow * 2.0  # waits for GPU:0's last product
    with pv.device("/gpu:2"):
        total = moved + pv.constant(a)
    want = a
    for _ in range(30):
        want = want @ w
    with pv.Session(config=grow()) as sess:
        for _ in range(3):
            np.testing.assert_allclose(sess.run(total), want * 2 + a, rtol=1e-3, atol=1e-3)


def test_a_host_op_after_a_gpu_op_through_a_control_edge_waits_for_it() -> None:
    carve(1)
    n = 2048
    w = orthogonal(n, 5)
    with pv.device("/gpu:0"):
        product = chain(pv.constant(w), pv.constant(w), 6)
    with pv.device("/cpu:0"), pv.control_dependencies([product.op]):
        after = pv.constant(1.0) + 1.0
    with pv.Session(config=grow()) as sess:
        sess.run([after, product])
        options, metadata = traced()
        assert sess.run(after, options=options, run_metadata=metadata) == 2.0
    last_product = max(r["t1"] for r in rows(metadata.trace, EventKind.OP) if "MatMul" in r["node"])
    add = op_rows(metadata.trace, after.op.name)[0]
    assert add["t0"] >= last_product - 2_000  # CUDA event and host clock agree within 2 us


# -- 2. a memory pool per logical GPU ------------------------------------------------------------
def test_a_logical_gpu_runs_out_at_its_own_limit() -> None:
    carve(4, memory_mb=256)
    with pv.device("/gpu:2"):
        size, big = outer()
        total = pv.reduce_sum(big)
    with pv.device("/gpu:0"):
        small = pv.reduce_sum(pv.ones([1024, 1024]))
    with pv.Session(config=grow()) as sess:
        assert sess.run(total, {size: ones(1024)}) == 1024 * 1024
        with pytest.raises(pv.errors.ResourceExhaustedError) as info:
            sess.run(total, {size: ones(16384)})  # 1 GiB on a 256 MiB logical GPU
        text = str(info.value)
        assert "'big'" in text and "MatMul" in text
        assert f"{LOCAL}GPU:2" in text
        assert "1,073,741,824" in text or "1073741824" in text  # the bytes asked for
        assert f"Limit {256 * MIB} bytes (256 MiB)" in text
        assert "Largest live tensors:" in text
        assert info.value.op is not None and info.value.op.name == "big"
        # the session is still usable, on that GPU and the others
        assert sess.run(total, {size: ones(2048)}) == 2048 * 2048
        assert sess.run(small) == 1024 * 1024


def test_tensors_live_in_their_own_logical_gpus_pool() -> None:
    carve(2, memory_mb=512)
    with pv.device("/gpu:1"):
        table = pv.Variable(pv.zeros([1024, 1024]), name="table")  # 4 MiB held for the session
    with pv.Session(config=grow()) as sess:
        sess.run(table.initializer)
        pools = {name: gpu.pool for name, gpu in sess._gpus.gpus.items()}
        assert pools[f"{LOCAL}GPU:1"].used_bytes() >= 4 * MIB
        assert pools[f"{LOCAL}GPU:0"].used_bytes() < 4 * MIB


def test_without_allow_growth_each_logical_gpu_maps_its_limit_up_front() -> None:
    carve(2, memory_mb=512)
    with pv.device("/gpu:0"):
        y = pv.constant(2.0) * 3.0
    with pv.Session() as sess:
        assert sess.run(y) == 6.0
        for gpu in sess._gpus.gpus.values():
            assert gpu.pool.total_bytes() >= 512 * MIB
        document = sess.trace().to_document()
    reserved = {d["name"]: d["reserved"] for d in document["devices"]}
    assert reserved[f"{LOCAL}GPU:0"] >= 512 * MIB


def test_with_allow_growth_the_pools_take_only_what_runs_need() -> None:
    carve(2, memory_mb=512)
    with pv.device("/gpu:0"):
        y = pv.constant(2.0) * 3.0
    with pv.Session(config=grow()) as sess:
        assert sess.run(y) == 6.0
        for gpu in sess._gpus.gpus.values():
            assert gpu.pool.total_bytes() < 16 * MIB


def test_per_process_gpu_memory_fraction_caps_the_card() -> None:
    import cupy

    card = cupy.cuda.runtime.memGetInfo()[1]
    with pv.device("/gpu:0"):
        size, big = outer()
        total = pv.reduce_sum(big)
    options = pv.GPUOptions(allow_growth=True, per_process_gpu_memory_fraction=0.02)
    with pv.Session(config=pv.ConfigProto(gpu_options=options)) as sess:
        device = sess.devices[1]
        card_bytes = pv.config.list_physical_devices("GPU")[0].memory_bytes
        assert device.memory_limit == int(card_bytes * 0.02)
        assert sess._gpus.gpu(device).pool.get_limit() == device.memory_limit
        assert sess.run(total, {size: ones(1024)}) == 1024 * 1024
        side = int((card * 0.03 / 4) ** 0.5)  # 3% of the card: over its 2%
        with pytest.raises(pv.errors.ResourceExhaustedError, match="'big'"):
            sess.run(total, {size: ones(side)})


def test_a_closed_session_gives_the_card_its_memory_back() -> None:
    import cupy

    carve(2, memory_mb=2048)
    with pv.device("/gpu:1"):
        y = pv.constant(1.0) + 1.0
    free_before = cupy.cuda.runtime.memGetInfo()[0]
    with pv.Session() as sess:  # maps 2 x 2 GiB up front
        sess.run(y)
        assert cupy.cuda.runtime.memGetInfo()[0] < free_before - 3 * 1024 * MIB
    assert cupy.cuda.runtime.memGetInfo()[0] > free_before - 256 * MIB


# -- 3. CUDA-event timings, pinned and device-to-device copies -----------------------------------
def test_gpu_ops_are_timed_by_cuda_events_and_host_ops_by_the_clock() -> None:
    carve(1)
    with pv.device("/cpu:0"):
        a = pv.constant(np.ones((256, 256), np.float32), name="a")
        host = pv.reduce_sum(a, name="host_sum")
    with pv.device("/gpu:0"):
        b = pv.matmul(a, a, name="product")
    with pv.Session(config=grow()) as sess:
        options, metadata = traced()
        sess.run([b, host], options=options, run_metadata=metadata)
    trace = metadata.trace
    assert op_rows(trace, "product")[0]["source"] == int(TimingSource.CUDA_EVENT)
    assert op_rows(trace, "host_sum")[0]["source"] == int(TimingSource.CLOCK)
    document = trace.to_document()
    assert document["timing_sources"][str(int(TimingSource.CUDA_EVENT))] == "cuda-event"


def test_a_large_matmul_takes_its_time_on_the_card_not_at_launch() -> None:
    """A host clock around an asynchronous launch would see microseconds; the events see the
    product itself: 2 * 8192**3 flops cannot run in under 0.5 ms on any card of today."""
    carve(1)
    n = 8192
    x = pv.placeholder(pv.float32, [n, n], name="x")
    with pv.device("/gpu:0"):
        product = pv.matmul(x, x, name="product")
        total = pv.reduce_sum(product)
    feed = {x: np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)}
    with pv.Session(config=grow()) as sess:
        sess.run(total, feed)
        options, metadata = traced()
        sess.run(total, feed, options=options, run_metadata=metadata)
    run = metadata.trace.runs[-1]
    row = op_rows(metadata.trace, "product")[0]
    assert row["t1"] - row["t0"] > 500_000
    assert run["t0"] - 50_000 <= row["t0"] <= row["t1"] <= run["t1"]


def test_host_copies_go_through_pinned_buffers_and_are_timed() -> None:
    import cupy

    carve(1)
    x = pv.placeholder(pv.float32, [512, 512], name="x")
    with pv.device("/gpu:0"):
        y = pv.multiply(x, 2.0, name="double")
    with pv.device("/cpu:0"):
        z = pv.add(y, 1.0, name="host_add")  # y crosses back to the host
    feed = np.random.default_rng(6).standard_normal((512, 512)).astype(np.float32)
    with pv.Session(config=grow()) as sess:
        options, metadata = traced()
        got_y, got_z = sess.run([y, z], {x: feed}, options=options, run_metadata=metadata)
    np.testing.assert_array_equal(got_y, feed * 2)
    np.testing.assert_allclose(got_z, feed * 2 + 1, rtol=1e-6)
    attributes = cupy.cuda.runtime.pointerGetAttributes(got_y.ctypes.data)
    assert attributes.type == cupy.cuda.runtime.memoryTypeHost  # pinned host memory
    moves = rows(metadata.trace, EventKind.TRANSFER)
    to_host = [m for m in moves if m["device"].endswith("CPU:0") and m["peer"].endswith("GPU:0")]
    assert to_host and all(m["bytes"] == 512 * 512 * 4 and m["t1"] > m["t0"] for m in to_host)


def test_logical_gpus_of_one_card_copy_between_their_pools_and_time_it() -> None:
    carve(2)
    n = 1024
    a = np.random.default_rng(7).standard_normal((n, n)).astype(np.float32)
    with pv.device("/gpu:0"):
        made = pv.multiply(pv.constant(a), 3.0, name="made")
    with pv.device("/gpu:1"):
        used = pv.add(made, 1.0, name="used")
    with pv.Session(config=grow()) as sess:
        sess.run(used)
        options, metadata = traced()
        got = sess.run(used, options=options, run_metadata=metadata)
    np.testing.assert_allclose(got, a * 3 + 1, rtol=1e-6)
    moves = [
        m
        for m in rows(metadata.trace, EventKind.TRANSFER)
        if m["device"].endswith("GPU:1") and m["peer"].endswith("GPU:0")
    ]
    assert len(moves) == 1
    assert moves[0]["bytes"] == n * n * 4
    assert moves[0]["source"] == int(TimingSource.CUDA_EVENT)
    assert moves[0]["t1"] > moves[0]["t0"]


def test_a_failed_run_still_has_every_launched_step_timed() -> None:
    carve(2, memory_mb=256)
    with pv.device("/gpu:0"):
        before = pv.matmul(pv.ones([512, 512]), pv.ones([512, 512]), name="before")
    with pv.device("/gpu:1"), pv.control_dependencies([before.op]):
        size, big = outer()
    with pv.Session(config=grow()) as sess:
        with pytest.raises(pv.errors.ResourceExhaustedError):
            sess.run([big, before], {size: ones(16384)})
        trace = sess.trace()
    assert trace.runs[-1]["status"] == "error"
    assert op_rows(trace, "before")[0]["source"] == int(TimingSource.CUDA_EVENT)
    assert op_rows(trace, "big"), "the failing op is in the trace"


# -- 4. the card's own memory reading -------------------------------------------------------------
def test_runs_record_the_cards_memory_reading() -> None:
    carve(2, memory_mb=2048)
    n = 4096
    w = orthogonal(n, 8)
    with pv.device("/gpu:1"):
        out = pv.reduce_sum(chain(pv.constant(w), pv.constant(w), 20))
    with pv.Session() as sess:
        options, metadata = traced()
        sess.run(out, options=options, run_metadata=metadata)
    readings = rows(metadata.trace, EventKind.CARD_MEMORY)
    assert len(readings) >= 2  # at the run's start and end, and every 10 ms between
    assert {r["device"] for r in readings} == {f"{LOCAL}GPU:0"}  # the card's first device
    assert all(r["bytes"] >= 4 * 1024 * MIB for r in readings)  # its two mapped pools at least
    run = metadata.trace.runs[-1]
    assert all(run["t0"] <= r["t0"] <= run["t1"] for r in readings)
    assert metadata.trace.to_document()["event_kinds"][str(int(EventKind.CARD_MEMORY))] == (
        "card_memory"
    )


def test_the_cards_reading_grows_with_what_a_run_allocates() -> None:
    carve(1, memory_mb=8192)
    with pv.device("/gpu:0"):
        size, big = outer()
        total = pv.reduce_sum(big)
    with pv.Session(config=grow()) as sess:
        options, metadata = traced()
        sess.run(total, {size: ones(256)}, options=options, run_metadata=metadata)
        small = max(r["bytes"] for r in rows(metadata.trace, EventKind.CARD_MEMORY))
        sess.run(total, {size: ones(32768)}, options=options, run_metadata=metadata)  # 4 GiB
        large = max(r["bytes"] for r in rows(metadata.trace, EventKind.CARD_MEMORY))
    assert large - small >= 3 * 1024 * MIB


# -- 5. the seeds' training step on four logical GPUs ---------------------------------------------
def test_a_tower_training_step_on_four_logical_gpus_matches_the_cpu() -> None:
    from placeviz.examples import zoo

    def losses(real: bool) -> list[float]:
        pv.config.reset_devices()
        pv.reset_default_graph()
        if real:
            carve(4)
        else:
            pv.config.simulate_gpus(4)
        pv.set_random_seed(1)  # the same initial variables, made on the CPU both times
        model = zoo.cifar10_towers(pv, gpus=4, batch=8)
        found = []
        with pv.Session(config=pv.ConfigProto(allow_soft_placement=True)) as sess:
            sess.run(pv.global_variables_initializer())
            for _ in range(3):
                _, loss = sess.run([model.train_op, model.loss], model.feed)
                found.append(float(loss))
            kinds = {d.kind for d in sess.devices if d.device_type == "GPU"}
        assert kinds == ({"logical"} if real else {"simulated"})
        return found

    np.testing.assert_allclose(losses(True), losses(False), rtol=2e-3)


def test_values_a_plan_builds_when_compiled_are_on_the_card_before_its_first_run() -> None:
    """A constant is made once, on CuPy's default stream; the GPUs' streams do not wait for
    that stream, so the plan waits for it when compiled (a first run once read zeros)."""
    carve(2)
    with pv.device("/gpu:1"):
        big = pv.ones([4096, 4096], pv.float64, name="big_ones")
        total = pv.reduce_sum(big)
    for _ in range(3):
        with pv.Session(config=grow()) as sess:
            assert sess.run(total) == 4096 * 4096
            np.testing.assert_array_equal(sess.run(big)[:2, :3], np.ones((2, 3)))


def test_op_types_no_conformance_program_puts_on_a_gpu_match_the_cpu() -> None:
    """Every other op type with a GPU kernel runs on the card in test_conformance_on_gpu.py."""

    def run(real: bool) -> tuple[list[np.ndarray], set[str]]:
        pv.config.reset_devices()
        pv.reset_default_graph()
        if real:
            carve(1)
        x = pv.placeholder(pv.float32, None, name="x")  # unknown rank: ReducedShape, Rank
        fetches = [pv.rank(x), pv.gradients(pv.reduce_sum(x, axis=[1]), [x])[0]]
        feed = {x: np.random.default_rng(9).standard_normal((3, 4, 5)).astype(np.float32)}
        with pv.Session(config=grow()) as sess:
            values = sess.run(fetches, feed)
            on_gpu = {
                op.type
                for op in sess.graph.get_operations()
                if sess.placement.device(op.name).device_type == "GPU"
            }
        return values, on_gpu

    on_card, types = run(real=True)
    assert {"Rank", "ReducedShape"} <= types
    for got, want in zip(on_card, run(real=False)[0]):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_value_fed_to_one_gpu_is_read_by_another_only_once_it_is_there() -> None:
    """No step makes a feed, so no step's event orders its copy onto the card: the run makes
    the other GPUs' streams wait for it (a stale value of the last run was once read)."""
    carve(2)
    n = 4096  # 64 MiB: the copy onto GPU:0 outlasts GPU:1's launch
    with pv.device("/gpu:0"):
        x = pv.placeholder(pv.float32, [n, n], name="x")
    with pv.device("/gpu:1"):
        total = pv.reduce_sum(x * 1.0, axis=1)
    rng = np.random.default_rng(11)
    with pv.Session(config=grow()) as sess:
        for _ in range(4):
            value = rng.standard_normal((n, n)).astype(np.float32)
            np.testing.assert_allclose(sess.run(total, {x: value}), value.sum(axis=1), atol=1e-2)
