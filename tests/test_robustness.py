"""Bad input and threads: typed errors that name the op, and sessions that stay usable."""

from __future__ import annotations

import re
import threading
import tracemalloc
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import placeviz as pv


@pytest.fixture
def two_gpus() -> Iterator[None]:
    pv.config.simulate_gpus(2)
    yield


def _two_towers() -> pv.Tensor:
    with pv.device("/cpu:0"):
        x = pv.constant([1.0, 2.0], name="x")
    outs = []
    for gpu in range(2):
        with pv.device(f"/gpu:{gpu}"):
            outs.append(x * float(gpu + 2))
    with pv.device("/cpu:0"):
        return pv.add_n(outs, name="total")


# -- threads -------------------------------------------------------------------------------------
def test_ops_added_by_another_thread_while_the_session_places_are_placed_too() -> None:
    """An op created while ``_place`` runs is not in its snapshot: the next run places it."""
    a = pv.constant(1.0, name="a")
    sess = pv.Session()
    added: list[pv.Tensor] = []
    place = sess._placing._placer.place

    def place_while_another_thread_grows_the_graph(ops: Any, placement: Any, index: Any) -> Any:
        result = place(ops, placement, index)
        grower = threading.Thread(target=lambda: added.append(pv.add(a, 2.0, name="late")))
        with sess.graph.as_default():
            grower.start()
            grower.join()
        return result

    sess._placing._placer.place = place_while_another_thread_grows_the_graph  # type: ignore[method-assign]
    assert sess.run(a) == 1.0
    (late,) = added
    assert sess.run(late) == 3.0
    assert sess.placement[late.op.name].endswith("CPU:0")


@pytest.mark.usefixtures("two_gpus")
def test_close_while_another_thread_is_starting_a_run_leaves_no_worker_thread() -> None:
    total = _two_towers()
    before = threading.active_count()
    sess = pv.Session()
    compiling, release = threading.Event(), threading.Event()
    compile_plan = sess._plans.compile

    def slow_compile(*args: Any) -> Any:
        compiling.set()
        release.wait(5.0)
        return compile_plan(*args)

    sess._plans.compile = slow_compile  # type: ignore[method-assign]
    results: list[Any] = []
    runner = threading.Thread(target=lambda: results.append(sess.run(total)))
    runner.start()
    assert compiling.wait(5.0)
    # The closer waits for the run's turn: it says so as it asks for it (the runner already
    # holds the real lock, and releases that one).
    asking = threading.Event()
    turn = sess._turn

    class Announcing:
        def __enter__(self) -> None:
            asking.set()
            turn.acquire()

        def __exit__(self, *exc: object) -> None:
            turn.release()

    sess._turn = Announcing()  # type: ignore[assignment]
    closer = threading.Thread(target=sess.close)
    closer.start()
    assert asking.wait(5.0)
    release.set()
    runner.join(5.0)
    closer.join(5.0)
    np.testing.assert_array_equal(results[0], [5.0, 10.0])
    assert threading.active_count() == before
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(total)


@pytest.mark.usefixtures("two_gpus")
def test_close_while_other_threads_run_in_a_loop_leaves_no_worker_thread() -> None:
    total = _two_towers()
    before = threading.active_count()
    sess = pv.Session()
    errors: list[BaseException] = []

    ran = [threading.Event() for _ in range(3)]

    def loop(index: int) -> None:
        try:
            while True:
                sess.run(total)
                ran[index].set()
        except RuntimeError as exc:
            errors.append(exc)

    runners = [threading.Thread(target=loop, args=(i,)) for i in range(3)]
    for runner in runners:
        runner.start()
    assert all(event.wait(10.0) for event in ran)  # every thread is in its loop
    sess.close()
    for runner in runners:
        runner.join(5.0)
    assert len(errors) == 3 and all("closed Session" in str(e) for e in errors)
    assert threading.active_count() == before


# -- big fills -------------------------------------------------------------------------------------
def test_zeros_bigger_than_a_gpu_cost_nothing_until_run_and_then_fail_typed() -> None:
    """8000x8000 float32 zeros (244 MiB) pinned to a 64 MiB GPU: building the graph allocates
    nothing; the run fails with ResourceExhaustedError naming op, device and bytes, and the
    session still runs what fits."""
    pv.config.simulate_gpus(1, memory_limit_mb=64)
    tracemalloc.start()
    try:
        with pv.device("/gpu:0"):
            big = pv.zeros([8000, 8000], name="big")
            small = pv.ones([10, 10]) * 2.0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    sess = pv.Session()
    with pytest.raises(pv.errors.ResourceExhaustedError) as info:
        sess.run(big)
    message = str(info.value)
    assert "'big'" in message and "GPU:0" in message and "256000000" in message
    assert "test_robustness.py" in message
    assert sess.run(small).sum() == 200.0


def test_zeros_of_a_trillion_elements_build_and_fail_typed_when_run() -> None:
    """TF builds a Fill; its run fails with ResourceExhaustedError naming op, device and bytes
    (placeviz checks static sizes before running, against the host's 1 TiB)."""
    zeros = pv.zeros([10**6, 10**6], name="zeros")
    sess = pv.Session()
    with pytest.raises(pv.errors.ResourceExhaustedError) as info:
        sess.run(zeros)
    message = str(info.value)
    assert "'zeros' (Fill" in message and "CPU:0" in message and "4000000000000 bytes" in message
    assert "test_robustness.py" in message
    np.testing.assert_array_equal(sess.run(pv.ones([2])), [1.0, 1.0])


# -- run-time allocation failures ----------------------------------------------------------------
@pytest.mark.parametrize("device", ["/cpu:0", "/gpu:0"])
def test_a_failed_run_time_allocation_is_resource_exhausted_naming_op_device_and_bytes(
    device: str,
) -> None:
    """A fill whose size only the run knows asks NumPy for 10^14 floats; the run raises
    ResourceExhaustedError (TF's OOM wording), not a bare MemoryError, and the session lives."""
    pv.config.simulate_gpus(1)
    dims = pv.placeholder(pv.int64, [2], name="dims")
    with pv.device(device):
        huge = pv.fill(dims, 1.0, name="huge")
    sess = pv.Session()
    with pytest.raises(pv.errors.ResourceExhaustedError) as info:
        sess.run(huge, {dims: [10**7, 10**7]})
    message = str(info.value)
    assert message.startswith("OOM when allocating tensor with shape[10000000,10000000]")
    assert "400000000000000 bytes" in message
    assert "'huge' (Fill)" in message and "test_robustness.py" in message
    assert device.upper()[1:] in message.upper()
    assert info.value.op is huge.op
    np.testing.assert_array_equal(sess.run(huge, {dims: [1, 2]}), [[1.0, 1.0]])


# -- wrong types for run and session arguments ---------------------------------------------------
def test_feeding_an_int32_placeholder_a_value_out_of_its_range_names_the_placeholder() -> None:
    """TF 2.21 wraps these silently (2**40 fed to int32 reads as 0); placeviz raises a typed
    error naming the placeholder and its line, and the session stays usable."""
    x = pv.placeholder(pv.int32, [None], name="x")
    y = x + 1
    sess = pv.Session()
    for value in ([2**40], np.array([2**40]), np.array([-(2**33)], np.int64)):
        with pytest.raises(pv.errors.InvalidArgumentError) as info:
            sess.run(y, {x: value})
        message = str(info.value)
        assert "'x:0'" in message and "int32" in message and "out of bounds" in message
        assert "test_robustness.py" in message
        assert info.value.op is x.op
    # In range, a wider integer array is converted; floats truncate, as in TF.
    np.testing.assert_array_equal(sess.run(y, {x: np.array([5, -7], np.int64)}), [6, -6])
    np.testing.assert_array_equal(sess.run(y, {x: [1.5]}), [2])


def test_feed_values_of_the_wrong_type_get_tensorflows_error_classes() -> None:
    """TF 2.21: ['a'] for int32 raises ValueError, [None] a TypeError."""
    x = pv.placeholder(pv.int32, [None], name="x")
    sess = pv.Session()
    with pytest.raises(ValueError, match=r"Cannot feed \['a'\] to Tensor 'x:0'") as info:
        sess.run(x, {x: ["a"]})
    assert isinstance(info.value, pv.errors.InvalidArgumentError)
    with pytest.raises(TypeError, match=r"Cannot feed \[None\] to Tensor 'x:0'") as info:
        sess.run(x, {x: [None]})
    assert isinstance(info.value, pv.errors.InvalidArgumentError)
    np.testing.assert_array_equal(sess.run(x, {x: [3]}), [3])


@pytest.mark.parametrize(
    ("argument", "value"),
    [("options", "full"), ("options", {"trace_level": 3}), ("run_metadata", 3)],
)
def test_run_arguments_of_the_wrong_type_are_type_errors_naming_them(
    argument: str, value: Any
) -> None:
    x = pv.constant(1.0)
    sess = pv.Session()
    with pytest.raises(TypeError, match=f"Argument `{argument}` must be a pv.Run"):
        sess.run(x, **{argument: value})
    assert sess.run(x) == 1.0


@pytest.mark.parametrize("feed_dict", [[("x", [1])], "x:0", 3])
def test_a_feed_dict_that_is_not_a_mapping_is_a_type_error_naming_it(feed_dict: Any) -> None:
    """TF 2.21 raises TypeError ("'dict' must be a dictionary or collection.Mapping")."""
    x = pv.placeholder(pv.int32, [None], name="x")
    sess = pv.Session()
    with pytest.raises(TypeError, match="`feed_dict` must be a dictionary"):
        sess.run(x + 1, feed_dict=feed_dict)
    np.testing.assert_array_equal(sess.run(x + 1, feed_dict={x: [1]}), [2])


def test_a_config_that_is_not_a_config_proto_is_tensorflows_type_error() -> None:
    """TF 2.21: Argument `config` must be a tf.ConfigProto, but got "str"."""
    with pytest.raises(
        TypeError, match=re.escape('Argument `config` must be a pv.ConfigProto, but got "str"')
    ):
        pv.Session(config="log_device_placement")


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: pv.ConfigProto(device_count="GPU"), "ConfigProto.device_count"),
        (lambda: pv.ConfigProto(device_count={"GPU": "1"}), "ConfigProto.device_count"),
        (lambda: pv.ConfigProto(inter_op_parallelism_threads="2"), "inter_op_parallelism"),
        (lambda: pv.ConfigProto(allow_soft_placement="yes"), "ConfigProto.allow_soft_placement"),
        (lambda: pv.ConfigProto(gpu_options={"allow_growth": True}), "ConfigProto.gpu_options"),
        (lambda: pv.GPUOptions(per_process_gpu_memory_fraction="0.5"), "GPUOptions.per_process"),
        (lambda: pv.GPUOptions(visible_device_list=[0, 1]), "GPUOptions.visible_device_list"),
    ],
)
def test_config_fields_of_the_wrong_type_are_type_errors_naming_the_field(
    make: Any, field: str
) -> None:
    with pytest.raises(TypeError, match=field):
        make()


def test_an_unknown_trace_level_label_is_a_value_error() -> None:
    """TF 2.21: RunOptions(trace_level='full') raises ValueError 'unknown enum label'."""
    with pytest.raises(ValueError, match="unknown enum label 'full'"):
        pv.RunOptions(trace_level="full")
