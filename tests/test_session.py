"""Session.run: fetch structures, feeds, defaults, variables, randomness and runtime errors."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import placeviz as pv
from placeviz.runtime.plan import build_plan


def test_fetch_structures() -> None:
    a = pv.constant(1.0, name="a")
    b = pv.constant([1, 2], name="b")
    noop = pv.no_op()
    Pair = namedtuple("Pair", "x y")
    sess = pv.Session()
    assert sess.run([a, b])[0] == 1.0
    assert isinstance(sess.run((a, b)), tuple)
    result = sess.run({"a": a, "nested": [b, (a,)], "op": noop})
    assert result["a"] == 1.0 and result["op"] is None
    np.testing.assert_array_equal(result["nested"][0], [1, 2])
    assert result["nested"][1] == (1.0,)
    assert sess.run(Pair(a, b)).x == 1.0
    assert sess.run("a:0") == 1.0
    assert sess.run("a") is None  # an op name fetches the op
    assert sess.run([a, a]) == [1.0, 1.0]
    with pytest.raises(TypeError, match="None"):
        sess.run(None)


def test_make_callable_runs_what_run_runs_with_positional_feeds() -> None:
    x = pv.placeholder(pv.float32, [None, 2], name="x")
    y = pv.placeholder(pv.float32, [], name="y")
    v = pv.Variable(1.0, name="v")
    total = pv.reduce_sum(x) * y + v
    bump = pv.assign_add(v, 1.0)
    sess = pv.Session()
    sess.run(v.initializer)
    both = sess.make_callable({"total": total, "pair": [x, (total,)]}, [y, x])
    data = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    expected = sess.run({"total": total, "pair": [x, (total,)]}, {x: data, y: 2.0})
    got = both(2.0, data)
    assert got["total"] == expected["total"] == 21.0
    np.testing.assert_array_equal(got["pair"][0], data)
    assert got["pair"][1] == (21.0,)
    step = sess.make_callable(bump)
    assert [step(), step()] == [2.0, 3.0]  # state changes between calls, as with run
    assert sess.make_callable(x, [x])(data) is not data  # a fed value is the caller's own
    with pytest.raises(TypeError, match="2 feed values, not 1"):
        both(2.0)
    with pytest.raises(TypeError, match="accept_options"):
        step(options=pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE))
    traced = sess.make_callable(total, [x, y], accept_options=True)
    metadata = pv.RunMetadata()
    options = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)
    assert traced(data, 1.0, options=options, run_metadata=metadata) == 13.0
    assert metadata.trace is not None and metadata.trace.runs


def test_values_are_numpy_and_owned_by_the_caller() -> None:
    c = pv.constant([1.0, 2.0])
    sess = pv.Session()
    value = sess.run(c)
    assert isinstance(value, np.ndarray) and value.dtype == np.float32
    value[0] = 100.0  # fetched constants are copies: the graph's value is untouched
    np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])
    scalar = sess.run(pv.constant(2.0) * 3.0)
    assert isinstance(scalar, np.float32) and scalar == 6.0


def test_feeds() -> None:
    x = pv.placeholder(pv.float32, shape=[None], name="x")
    y = x * 2.0
    sess = pv.Session()
    np.testing.assert_array_equal(sess.run(y, feed_dict={x: [1, 2, 3]}), [2, 4, 6])
    np.testing.assert_array_equal(sess.run(y, feed_dict={"x:0": [5]}), [10])
    # Any tensor can be fed, which cuts the graph there.
    z = y + 1.0
    np.testing.assert_array_equal(sess.run(z, feed_dict={y: [0.0, 0.0]}), [1, 1])
    with pytest.raises(pv.errors.InvalidArgumentError) as info:
        sess.run(y)
    assert "You must feed a value for placeholder tensor 'x' with dtype float32" in str(info.value)
    assert "test_session.py" in str(info.value)
    with pytest.raises(
        pv.errors.InvalidArgumentError, match=r"Cannot feed value of shape \(2, 2\)"
    ):
        sess.run(y, feed_dict={x: [[1, 2], [3, 4]]})


def test_default_session_eval_and_run() -> None:
    v = pv.Variable(2.0)
    doubled = v * 2.0
    with pv.Session() as sess:
        pv.global_variables_initializer().run()
        assert doubled.eval() == 4.0
        assert v.eval() == 2.0
        assert pv.get_default_session() is sess
    assert pv.get_default_session() is None
    with pytest.raises(ValueError, match="no default session"):
        doubled.eval()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(doubled)


def test_variables_keep_state_per_session() -> None:
    v = pv.Variable(0.0, name="counter")
    inc = v.assign_add(1.0)
    first, second = pv.Session(), pv.Session()
    first.run(v.initializer)
    second.run(v.initializer)
    for _ in range(3):
        first.run(inc)
    assert first.run(v) == 3.0
    assert second.run(v) == 0.0
    assert first.run(v.assign(10.0)) == 10.0
    assert first.run(v) == 10.0


def test_uninitialized_variable_names_the_variable_and_line() -> None:
    v = pv.Variable([1.0, 2.0], name="weights")
    y = v * 2.0
    sess = pv.Session()
    with pytest.raises(pv.errors.FailedPreconditionError) as info:
        sess.run(y)
    message = str(info.value)
    assert "Attempting to use uninitialized value weights" in message
    assert "'weights/read' (Identity)" in message and "test_session.py" in message
    assert "global_variables_initializer" in message
    assert info.value.op is v.op
    sess.run(v.initializer)  # the session is still usable
    np.testing.assert_array_equal(sess.run(y), [2.0, 4.0])


def test_runtime_error_names_the_op_and_leaves_the_session_usable() -> None:
    pv.config.simulate_gpus(1)
    a = pv.placeholder(pv.float32, shape=[None], name="a")
    b = pv.placeholder(pv.float32, shape=[None], name="b")
    total = pv.add(a, b, name="total")
    sess = pv.Session()
    with pytest.raises(pv.errors.InvalidArgumentError) as info:
        sess.run(total, feed_dict={a: [1.0, 2.0], b: [1.0, 2.0, 3.0]})
    message = str(info.value)
    assert "'total' (AddV2)" in message and "test_session.py" in message
    assert "/job:localhost/replica:0/task:0/device:GPU:0" in message
    assert info.value.op is total.op
    np.testing.assert_array_equal(sess.run(total, feed_dict={a: [1.0], b: [2.0]}), [3.0])


def test_fetch_from_another_graph() -> None:
    other = pv.Graph()
    with other.as_default():
        foreign = pv.constant(1.0, name="foreign")
    with pytest.raises(pv.errors.InvalidArgumentError) as info:
        pv.Session().run(foreign)
    assert "'foreign:0'" in str(info.value) and "another graph" in str(info.value)
    assert pv.Session(graph=other).run(foreign) == 1.0


def test_random_ops_draw_anew_each_run_and_follow_seeds() -> None:
    pv.set_random_seed(42)
    r = pv.random_uniform([4])
    s1, s2 = pv.Session(), pv.Session()
    first, again = s1.run(r), s1.run(r)
    assert not np.array_equal(first, again)
    np.testing.assert_array_equal(s2.run(r), first)


def test_control_dependencies_run_first() -> None:
    v = pv.Variable(1.0)
    with pv.control_dependencies([v.assign(5.0)]):
        read = v.read_value()  # a new read op, made inside the block, so it waits for the assign
    sess = pv.Session()
    sess.run(v.initializer)
    assert sess.run(read) == 5.0
    assert read.op.name == "read"  # TF1: RefVariable.read_value is identity(name="read")


def test_cross_device_edges_get_transfers() -> None:
    pv.config.simulate_gpus(2)
    with pv.device("/cpu:0"):
        a = pv.constant([1.0, 2.0])
    with pv.device("/gpu:1"):
        b = a * 2.0
        c = a + 1.0
    d = b + c  # GPU:0
    sess = pv.Session()
    np.testing.assert_array_equal(sess.run(d), [4.0, 7.0])
    plan = build_plan([d], [], sess.placement, {})
    moves = [(t.tensor.name, t.src.name[-5:], t.dst.name[-5:]) for t in plan.all_transfers()]
    # `a` moves to GPU:1 once, shared by both consumers there; b and c move to GPU:0.
    assert sorted(moves) == sorted(
        [(a.name, "CPU:0", "GPU:1"), (b.name, "GPU:1", "GPU:0"), (c.name, "GPU:1", "GPU:0")]
    )


@pytest.mark.gpu
def test_real_gpu_values_come_back_as_numpy() -> None:
    pv.config.reset_devices()
    with pv.device("/cpu:0"):
        a = pv.constant([[1.0, 2.0], [3.0, 4.0]])
    with pv.device("/gpu:0"):
        b = pv.matmul(a, a)
    c = b + 1.0
    value = pv.Session().run(c)
    assert isinstance(value, np.ndarray)
    np.testing.assert_allclose(value, np.array([[7.0, 10.0], [15.0, 22.0]]) + 1.0)


def test_simulated_gpu_memory_is_accounted_against_its_size() -> None:
    pv.config.simulate_gpus(1, memory_limit_mb=8)
    with pv.device("/gpu:0"):
        small = pv.ones([512, 1024]) * 2.0  # 2 MiB each: fits
        big = pv.ones([1024, 1024], name="big") + pv.ones([1024, 1024])  # 3 x 4 MiB: does not
    sess = pv.Session()
    assert sess.run(small).shape == (512, 1024)
    with pytest.raises(pv.errors.ResourceExhaustedError) as info:
        sess.run(big)
    message = str(info.value)
    assert "OOM when allocating tensor" in message
    assert "/job:localhost/replica:0/task:0/device:GPU:0" in message
    assert "4194304 bytes" in message and "limit 8388608 bytes (8 MiB)" in message
    assert "test_session.py" in message and "Largest live tensors: big:0" in message
    assert sess.run(small).sum() == 512 * 1024 * 2  # the session is still usable


@pytest.mark.parametrize("threads", [0, 1], ids=["parallel", "sequential"])
def test_tensors_sized_at_run_time_are_checked_as_they_are_made(threads: int) -> None:
    pv.config.simulate_gpus(1, memory_limit_mb=4)
    with pv.device("/cpu:0"):
        x = pv.placeholder(pv.float32, shape=[None], name="x")
        kept = pv.ones([256, 1024], name="kept")  # 1 MiB, sent to the GPU and held there
    with pv.device("/gpu:0"):
        early = pv.reduce_sum(kept)  # brings kept to the GPU; the last sum keeps it there
        doubled = pv.multiply(x, 2.0, name="doubled")
        total = pv.reduce_sum(doubled * 3.0) + pv.reduce_sum(kept) + early
    config = pv.ConfigProto(inter_op_parallelism_threads=threads)
    sess = pv.Session(config=config)
    small = np.ones(100_000, np.float32)  # 400 KB per tensor
    assert sess.run(total, {x: small}) == 600_000 + 2 * 256 * 1024
    with pytest.raises(pv.errors.ResourceExhaustedError) as info:
        sess.run(total, {x: np.ones(500_000, np.float32)})  # 2 MB each: the second overflows
    message = str(info.value)
    assert "for 'mul' (Mul" in message and "(2000000 bytes)" in message
    assert "limit 4194304 bytes (4 MiB)" in message and "test_session.py" in message
    assert "doubled:0 from 'doubled' (Mul): 2000000 bytes" in message
    assert "kept:0" in message
    assert info.value.op.name == "mul"
    assert sess.run(total, {x: small}) == 600_000 + 2 * 256 * 1024  # nothing left behind


def test_logical_gpu_limits_apply_per_logical_device() -> None:
    pv.config.simulate_gpus(1)
    gpu = pv.config.list_physical_devices("GPU")[0]
    half = pv.config.LogicalDeviceConfiguration(memory_limit=4)
    pv.config.set_logical_device_configuration(gpu, [half, half])
    with pv.device("/gpu:1"):
        fits = pv.ones([1024, 512])  # 2 MiB of 4
        too_big = pv.zeros([1024, 1024]) + 1.0  # 4 MiB + 4 MiB
    sess = pv.Session()
    assert sess.run(fits).shape == (1024, 512)
    with pytest.raises(pv.errors.ResourceExhaustedError, match=r"device:GPU:1.*4 MiB"):
        sess.run(too_big)
