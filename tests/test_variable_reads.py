"""Variable reads behave as TF1's reference variables: a read ordered after an assign sees it.

``v/read`` forwards the variable's buffer and Assign writes in place, so what decides the value
an op sees is when the op runs, not when ``v/read`` ran. TensorFlow 2.21 (``tf.compat.v1`` with
``disable_v2_behavior()``) prints 5.0 for both fetches of the first test.
"""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv

SEQUENTIAL = pv.ConfigProto(inter_op_parallelism_threads=1)
PARALLEL = pv.ConfigProto()


@pytest.mark.parametrize("config", [SEQUENTIAL, PARALLEL], ids=["sequential", "parallel"])
def test_read_after_assign_by_control_dependency_sees_the_new_value(
    config: pv.ConfigProto,
) -> None:
    v = pv.Variable(1.0)
    update = pv.assign(v, 5.0)
    with pv.control_dependencies([update]):
        copied = pv.identity(v)
        added = v + 0.0
    with pv.Session(config=config) as sess:
        sess.run(v.initializer)
        assert sess.run([copied, added]) == [5.0, 5.0]


@pytest.mark.usefixtures("gpus4")
def test_read_on_another_device_after_assign_sees_the_new_value() -> None:
    with pv.device("/gpu:1"):
        v = pv.Variable(np.ones(3, np.float32))
    update = pv.assign_add(v, np.full(3, 2.0, np.float32))
    with pv.control_dependencies([update]), pv.device("/cpu:0"):
        doubled = v * 2.0
    with pv.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(doubled), [6.0, 6.0, 6.0])
        np.testing.assert_array_equal(sess.run(doubled), [10.0, 10.0, 10.0])


def test_a_fetched_value_is_a_snapshot_that_later_assigns_do_not_change() -> None:
    v = pv.Variable(np.zeros(2, np.float32))
    step = pv.assign_add(v, np.ones(2, np.float32))
    with pv.Session() as sess:
        sess.run(v.initializer)
        before = sess.run(v)
        read = sess.run(v.value())
        sess.run(step)
        np.testing.assert_array_equal(before, [0.0, 0.0])
        np.testing.assert_array_equal(read, [0.0, 0.0])
        np.testing.assert_array_equal(sess.run(v), [1.0, 1.0])


def test_assign_never_writes_into_the_initial_value_it_was_given() -> None:
    initial = pv.constant([1.0, 2.0])
    v = pv.Variable(initial)
    step = pv.assign_add(v, [10.0, 10.0])
    with pv.Session() as sess:
        sess.run(v.initializer)
        sess.run(step)
        np.testing.assert_array_equal(sess.run(initial), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(v), [11.0, 12.0])


def test_assign_of_another_shape_replaces_the_buffer() -> None:
    v = pv.Variable(np.zeros(2, np.float32), validate_shape=False)
    grow = pv.assign(v, np.ones(3, np.float32), validate_shape=False)
    with pv.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(grow), [1.0, 1.0, 1.0])
        np.testing.assert_array_equal(sess.run(v), [1.0, 1.0, 1.0])


def test_control_input_added_to_an_earlier_op_orders_the_run() -> None:
    """Creation order is not always a topological order: TF1's ``op._add_control_input``."""
    v = pv.Variable(1.0)
    read = pv.identity(v, name="read_later")
    update = pv.assign(v, 7.0)
    with pv.Session(config=SEQUENTIAL) as sess:
        sess.run(v.initializer)
        assert sess.run(read) == 1.0
        read.op._add_control_input(update.op)  # after a plan for `read` was cached
        assert read.op.control_inputs == [update.op]
        assert sess.run(read) == 7.0


def test_add_control_input_checks_its_argument() -> None:
    a = pv.constant(1.0)
    with pytest.raises(TypeError, match="must be an Operation"):
        a.op._add_control_input(a)
    with pv.Graph().as_default():
        other = pv.constant(2.0)
    with pytest.raises(ValueError, match="not an element of the graph"):
        a.op._add_control_input(other.op)


@pytest.mark.usefixtures("gpus4")
@pytest.mark.parametrize("config", [SEQUENTIAL, PARALLEL], ids=["sequential", "parallel"])
def test_read_in_a_mirrored_replica_after_its_merge_sees_the_update(
    config: pv.ConfigProto,
) -> None:
    strategy = pv.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
    with strategy.scope():
        w = pv.Variable(np.full((2, 1), 3.0, np.float32), name="w")
    opt = pv.train.GradientDescentOptimizer(0.5)
    x = pv.constant(np.ones((1, 2), np.float32))

    def step() -> pv.Tensor:
        loss = pv.reduce_sum(pv.matmul(x, w))  # d loss / d w = 1 per replica, summed: 2
        train = opt.minimize(loss)
        with pv.control_dependencies([train]):
            return pv.identity(w)

    after = strategy.run(step)
    with pv.Session(config=config) as sess:
        sess.run(pv.global_variables_initializer())
        for value in sess.run(list(after.values)):
            np.testing.assert_array_equal(value, [[2.0], [2.0]])
