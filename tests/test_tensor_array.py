"""pv.TensorArray beyond what the conformance programs (CPU only) show: where the placer puts an
array and its ops when GPUs exist, that each run gets a fresh array, errors naming the op that
failed, and arrays carried through a while loop's frame runner."""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv

LOCAL = "/job:localhost/replica:0/task:0/device:"


def test_an_array_and_every_op_on_it_go_where_its_first_written_value_is() -> None:
    pv.config.simulate_gpus(2)  # the autouse fixture resets the devices afterwards
    with pv.Graph().as_default():
        with pv.device("/gpu:1"):
            x = pv.constant([[1.0, 2.0], [3.0, 4.0]], name="x") * 2.0
        ta = pv.TensorArray(pv.float32, size=2).unstack(x)
        with pv.device("/cpu:0"):  # a device scope does not split the array from its ops
            row = ta.read(1)
        with pv.Session() as sess:
            np.testing.assert_allclose(sess.run(row), [6.0, 8.0])
            placement = dict(sess.placement)
    for name in ("TensorArray", "TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3"):
        assert placement[name] == f"{LOCAL}GPU:1", name
    assert placement["TensorArrayReadV3"] == f"{LOCAL}GPU:1"


def test_the_ops_inside_a_loop_stay_with_the_array_outside_it() -> None:
    pv.config.simulate_gpus(1)
    with pv.Graph().as_default():
        with pv.device("/gpu:0"):
            out = pv.TensorArray(pv.float32, size=3)
            _, out = pv.while_loop(
                lambda i, ta: i < 3,
                lambda i, ta: (i + 1, ta.write(i, pv.cast(i, pv.float32) * 2.0)),
                [0, out],
            )
            stacked = out.stack()
        with pv.Session() as sess:
            np.testing.assert_allclose(sess.run(stacked), [0.0, 2.0, 4.0])
            placement = dict(sess.placement)
    handle_users = [n for n in placement if "TensorArray" in n]
    assert handle_users
    assert {placement[n] for n in handle_users} == {f"{LOCAL}GPU:0"}


def test_each_run_gets_an_array_of_its_own() -> None:
    with pv.Graph().as_default():
        v = pv.placeholder(pv.float32, [], name="v")
        ta = pv.TensorArray(pv.float32, size=1).write(0, v)
        value = ta.read(0)
        with pv.Session() as sess:  # a write to an array kept from the last run would fail
            assert [sess.run(value, {v: k}) for k in (1.0, 2.0, 3.0)] == [1.0, 2.0, 3.0]


def test_a_second_write_fails_naming_the_op_and_the_index() -> None:
    with pv.Graph().as_default():
        ta = pv.TensorArray(pv.float32, size=2).write(0, 1.0)
        twice = ta.write(0, 2.0, name="again")
        with pv.Session() as sess, pytest.raises(pv.errors.InvalidArgumentError) as caught:
            sess.run(twice.flow)
    assert "index 0 because it has already been written to" in str(caught.value)
    assert caught.value.op.name == "again/again"


def test_reading_an_unwritten_element_of_unknown_shape_fails() -> None:
    with pv.Graph().as_default():
        ta = pv.TensorArray(pv.float32, size=2, infer_shape=False).write(0, [1.0])
        with pv.Session() as sess, pytest.raises(pv.errors.InvalidArgumentError) as caught:
            sess.run(ta.read(1))
    assert "element shape is not fully defined" in str(caught.value)


def test_a_loop_over_a_dynamic_array_and_its_gradient() -> None:
    with pv.Graph().as_default():
        x = pv.constant([0.5, -1.0, 2.0], name="x")
        inputs = pv.TensorArray(pv.float32, size=3).unstack(x)
        squares = pv.TensorArray(pv.float32, size=0, dynamic_size=True)

        def body(i: pv.Tensor, ta: pv.TensorArray) -> tuple:
            value = inputs.read(i)
            return i + 1, ta.write(i, value * value)

        _, squares = pv.while_loop(lambda i, ta: i < 3, body, [0, squares])
        total = pv.reduce_sum(squares.stack())
        (grad,) = pv.gradients(total, [x])
        with pv.Session() as sess:
            value, size, g = sess.run([total, squares.size(), grad])
    assert value == pytest.approx(5.25)
    assert size == 3
    np.testing.assert_allclose(g, [1.0, -2.0, 4.0])


def test_a_write_of_another_dtype_fails_at_run_time_as_in_tf() -> None:
    with pv.Graph().as_default():
        ta = pv.TensorArray(pv.float32, size=1).write(0, pv.constant(1, pv.int32))
        with pv.Session() as sess, pytest.raises(pv.errors.InvalidArgumentError) as caught:
            sess.run(ta.flow)
    assert "TensorArray dtype is float32 but Op is trying to write dtype int32" in str(caught.value)
