"""MirroredStrategy: mirrored variables, one replica per device, reductions, synced training."""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv

LOCAL = "/job:localhost/replica:0/task:0/device:"
pytestmark = pytest.mark.usefixtures("gpus4")


def test_default_devices_are_every_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    strategy = pv.distribute.MirroredStrategy()
    assert strategy.num_replicas_in_sync == 4
    assert strategy.extended.worker_devices == tuple(f"{LOCAL}GPU:{i}" for i in range(4))
    assert "INFO:placeviz:Using MirroredStrategy with devices" in capsys.readouterr().err
    two = pv.distribute.MirroredStrategy(["/gpu:0", "/cpu:0"])
    assert two.extended.worker_devices == (f"{LOCAL}GPU:0", f"{LOCAL}CPU:0")
    with pytest.raises(ValueError, match="twice"):
        pv.distribute.MirroredStrategy(["/gpu:1", "/device:GPU:1"])


def test_variables_in_scope_get_one_equal_copy_per_device() -> None:
    strategy = pv.distribute.MirroredStrategy(["/gpu:1", "/gpu:3"])
    with strategy.scope():
        assert pv.distribute.in_cross_replica_context()
        w = pv.get_variable("w", shape=[4, 2])  # random (glorot) initial value
    assert isinstance(w, pv.distribute.MirroredVariable)
    assert [v.op.name for v in w.values] == ["w", "w/replica_1"]
    assert pv.global_variables() == [w] and pv.trainable_variables() == [w]
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    first, second = sess.run(list(w.values))
    np.testing.assert_array_equal(first, second)
    assert sess.placement["w"] == f"{LOCAL}GPU:1"
    assert sess.placement["w/replica_1"] == f"{LOCAL}GPU:3"
    assert not pv.distribute.in_cross_replica_context()


def test_run_builds_each_replica_on_its_device_and_reduce_combines() -> None:
    strategy = pv.distribute.MirroredStrategy(["/gpu:0", "/gpu:1", "/gpu:2"])
    parts = pv.distribute.PerReplica([pv.constant([1.0, 2.0]), pv.constant([3.0]), pv.constant([])])

    def replica_fn(x: pv.Tensor) -> pv.Tensor:
        ctx = pv.distribute.get_replica_context()
        return x * float(ctx.replica_id_in_sync_group + 1)

    result = strategy.run(replica_fn, args=(parts,))
    assert len(result.values) == 3
    sess = pv.Session()
    for i, tensor in enumerate(result.values):
        assert sess.run(tensor).tolist() == [[1.0, 2.0], [6.0], []][i]
        assert sess.placement[tensor.op.name] == f"{LOCAL}GPU:{i}"
    assert sess.run(strategy.reduce("SUM", result, axis=0)) == 9.0
    assert sess.run(strategy.reduce("MEAN", result, axis=0)) == 3.0
    scalars = strategy.run(lambda: pv.constant(2.0))
    assert sess.run(strategy.reduce(pv.distribute.ReduceOp.MEAN, scalars)) == 2.0
    assert sess.run(strategy.reduce("SUM", scalars)) == 6.0


def test_training_in_replicas_keeps_copies_equal_to_single_device_training() -> None:
    rng = np.random.default_rng(0)
    x_all = rng.normal(size=(12, 3)).astype(np.float32)
    y_all = x_all @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    strategy = pv.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
    with strategy.scope():
        w = pv.Variable(np.zeros((3, 1), np.float32), name="w")
    shards = [pv.constant(x_all[:6]), pv.constant(x_all[6:])]
    targets = [pv.constant(y_all[:6]), pv.constant(y_all[6:])]
    opt = pv.train.GradientDescentOptimizer(0.1)

    def step(x: pv.Tensor, y: pv.Tensor) -> pv.Operation:
        loss = pv.reduce_sum(pv.square(pv.matmul(x, w) - y)) / 12.0
        return opt.minimize(loss)

    train = strategy.group(
        strategy.run(
            step, args=(pv.distribute.PerReplica(shards), pv.distribute.PerReplica(targets))
        )
    )
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    reference = np.zeros((3, 1), np.float32)
    for _ in range(5):
        sess.run(train)
        grad = 2 * x_all.T @ (x_all @ reference - y_all) / 12.0
        reference = reference - np.float32(0.1) * grad
        first, second = sess.run(list(w.values))
        np.testing.assert_array_equal(first, second)
        np.testing.assert_allclose(first, reference, rtol=1e-5, atol=1e-6)
    update = "GradientDescent/update_w/replica_1/ApplyGradientDescent"
    assert sess.placement[update] == f"{LOCAL}GPU:1"


def test_a_mirrored_variable_is_updated_everywhere_or_not_at_all() -> None:
    strategy = pv.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
    with strategy.scope():
        v = pv.Variable(1.0, name="v")
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    sess.run(v.assign_add(2.0))
    assert sess.run(list(v.values)) == [3.0, 3.0]
    with pytest.raises(ValueError, match="aggregation"):
        strategy.run(lambda: v.assign(0.0))


def test_the_seed_keras_model_trains_mirrored_on_four_gpus() -> None:
    pv.enable_eager_execution()
    gpus = pv.config.list_logical_devices("GPU")
    strategy = pv.distribute.MirroredStrategy(gpus)
    with strategy.scope():
        inputs = pv.keras.layers.Input(shape=(1,))
        predictions = pv.keras.layers.Dense(1)(inputs)
        model = pv.keras.models.Model(inputs=inputs, outputs=predictions)
        model.compile(loss="mse", optimizer=pv.keras.optimizers.SGD(learning_rate=0.2))
    x = np.random.default_rng(1).uniform(-1, 1, size=(256, 1)).astype(np.float32)
    history = model.fit(x, 3 * x + 2, epochs=15, batch_size=64, verbose=0)
    assert history.history["loss"][-1] < 1e-4 < history.history["loss"][0]
    kernel, bias = model.layers[0].kernel, model.layers[0].bias
    kernels = [k.numpy() for k in kernel.values]
    assert all(np.array_equal(k, kernels[0]) for k in kernels)
    assert kernels[0].item() == pytest.approx(3.0, abs=0.01)
    assert bias.numpy().item() == pytest.approx(2.0, abs=0.01)
    placement = pv.keras.backend.get_session().placement
    assert {placement[k.op.name] for k in kernel.values} == {f"{LOCAL}GPU:{i}" for i in range(4)}
    np.testing.assert_allclose(model.predict([[1.0]]), [[5.0]], atol=0.02)


def test_tf1_dense_and_keras_dense_share_variables_by_scope() -> None:
    x = pv.placeholder(pv.float32, [None, 2])
    first = pv.layers.dense(x, 3, name="hidden", reuse=pv.AUTO_REUSE)
    second = pv.keras.layers.Dense(3, name="hidden", _reuse=pv.AUTO_REUSE)(x)
    names = [v.op.name for v in pv.trainable_variables()]
    assert names == ["hidden/kernel", "hidden/bias"]
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    a, b = sess.run([first, second], {x: [[1.0, 2.0]]})
    np.testing.assert_array_equal(a, b)


def test_an_unknown_activation_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="Unknown activation"):
        pv.keras.layers.Dense(1, activation="swishy")


def test_keras_without_a_strategy_trains_where_the_device_scope_says() -> None:
    with pv.device("/cpu:0"):
        inputs = pv.keras.layers.Input(shape=(2,))
        model = pv.keras.models.Model(inputs, pv.keras.layers.Dense(1)(inputs))
        model.compile(loss="mse", optimizer=pv.keras.optimizers.SGD(learning_rate=0.1))
        x = np.random.default_rng(2).normal(size=(64, 2)).astype(np.float32)
        history = model.fit(x, x @ np.array([[1.0], [-1.0]], np.float32), epochs=30, verbose=0)
    assert history.history["loss"][-1] < 0.01 * history.history["loss"][0]
    placement = pv.keras.backend.get_session().placement
    training = [op.name for op in pv.get_default_graph().get_operations()]
    training = [name for name in training if name.startswith("training/")]
    assert training and all(placement[name] == f"{LOCAL}CPU:0" for name in training)


def test_slots_of_mirrored_variables_are_one_per_copy_also_inside_the_scope() -> None:
    strategy = pv.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
    opt = pv.train.MomentumOptimizer(0.1, 0.9)
    with strategy.scope():
        w = pv.Variable([1.0, 2.0], name="w")
        strategy.run(lambda: opt.minimize(pv.reduce_sum(pv.square(w))))
    slots = opt.variables()
    assert [s.op.name for s in slots] == ["w/Momentum", "w/replica_1/Momentum"]
    assert all(isinstance(s, pv.Variable) for s in slots)
    assert pv.global_variables() == [w, *slots]
