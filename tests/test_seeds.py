"""Every code example of the seed documents, with the module renamed.

Each test keeps the seed's code as written (``tf`` -> ``pv``) and asserts the values, placements
and log lines the seed shows. The seeds ran on real GPUs; here four simulated H100s stand in.
TensorFlow 2 examples (seed 000) run after ``enable_eager_execution()``. Seed 002's cluster
programs (servers, a session on a target, ops pinned to tasks) run on real task processes in
tests/test_cluster.py; here, run without a cluster, they check that placeviz says what is missing.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import placeviz as tf  # the seeds' code, unchanged but for the module

pytestmark = pytest.mark.usefixtures("gpus4")

# PLACEVIZ_TEST_GPUS=card runs these seeds on four logical GPUs of one real card (conftest's
# gpus4, scripts/gpu_check.sh); the tests that assert the seeds' own machine then fail, as they
# should: it had four physical H100s, and printed float32 digits a GPU's summation order changes.
ON_CARD = os.environ.get("PLACEVIZ_TEST_GPUS") == "card"


def seeds_machine(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(ON_CARD, reason=f"asserts the seeds' machine: {what}", strict=True)


FOUR_CARDS = seeds_machine("four physical GPUs")
H100 = seeds_machine("the H100's name")

LOCAL = "/job:localhost/replica:0/task:0/device:"


def logged_placements(stderr: str) -> dict[str, str]:
    """``name: (Type): device`` lines of the placement log, as a name -> device mapping."""
    found: dict[str, str] = {}
    for line in stderr.splitlines():
        match = re.fullmatch(r"(\S+): \((\w+)\): (/job:\S+)", line)
        if match:
            assert match.group(1) not in found, f"{match.group(1)} logged twice"
            found[match.group(1)] = match.group(3)
    return found


# -- seed 001: TensorFlow's GPU guide (TF1) ----------------------------------------------------
@H100
def test_001_log_device_placement(capsys: pytest.CaptureFixture[str]) -> None:
    # Creates a graph.
    a = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3], name="a")
    b = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2], name="b")
    c = tf.matmul(a, b)
    # Creates a session with log_device_placement set to True.
    sess = tf.Session(config=tf.ConfigProto(log_device_placement=True))
    # Runs the op.
    print(sess.run(c))
    out, err = capsys.readouterr()
    assert out.split() == ["[[22.", "28.]", "[49.", "64.]]"]
    assert "Device mapping:" in err
    assert f"{LOCAL}GPU:0 -> device: 0, name: NVIDIA H100" in err
    assert logged_placements(err) == {
        "a": f"{LOCAL}GPU:0",
        "b": f"{LOCAL}GPU:0",
        "MatMul": f"{LOCAL}GPU:0",
    }
    assert "MatMul: (MatMul): /job:localhost/replica:0/task:0/device:GPU:0" in err.splitlines()


def test_001_manual_placement(capsys: pytest.CaptureFixture[str]) -> None:
    # Creates a graph.
    with tf.device("/cpu:0"):
        a = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3], name="a")
        b = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2], name="b")
    c = tf.matmul(a, b)
    # Creates a session with log_device_placement set to True.
    sess = tf.Session(config=tf.ConfigProto(log_device_placement=True))
    # Runs the op.
    print(sess.run(c))
    out, err = capsys.readouterr()
    assert out.split() == ["[[22.", "28.]", "[49.", "64.]]"]
    assert logged_placements(err) == {
        "b": f"{LOCAL}CPU:0",
        "a": f"{LOCAL}CPU:0",
        "MatMul": f"{LOCAL}GPU:0",
    }
    assert sess.placement.explain("MatMul").kind == "default"
    assert sess.placement.explain("a").kind == "pinned"


def test_001_allow_growth() -> None:
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
    session = tf.Session(config=config)
    assert session.run(tf.constant(2.0) * 3.0) == 6.0


def test_001_unknown_device_is_an_invalid_argument() -> None:
    tf.config.reset_devices()
    tf.config.simulate_gpus(2)  # "a machine with fewer GPUs"
    # Creates a graph.
    with tf.device("/device:GPU:2"):
        a = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3], name="a")
        b = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2], name="b")
        c = tf.matmul(a, b)
    # Creates a session with log_device_placement set to True.
    sess = tf.Session(config=tf.ConfigProto(log_device_placement=True))
    # Runs the op.
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        print(sess.run(c))
    message = str(info.value)
    assert "Cannot assign a device for operation 'a'" in message
    assert "Could not satisfy explicit device specification '/device:GPU:2'" in message
    assert "no devices matching that specification are registered in this process" in message
    assert f"{LOCAL}GPU:1" in message and f"{LOCAL}CPU:0" in message
    assert "test_seeds.py" in message
    assert info.value.op is a.op


def test_001_soft_placement(capsys: pytest.CaptureFixture[str]) -> None:
    tf.config.reset_devices()
    tf.config.simulate_gpus(2)
    # Creates a graph.
    with tf.device("/device:GPU:2"):
        a = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3], name="a")
        b = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2], name="b")
        c = tf.matmul(a, b)
    # Creates a session with allow_soft_placement and log_device_placement set
    # to True.
    sess = tf.Session(config=tf.ConfigProto(allow_soft_placement=True, log_device_placement=True))
    # Runs the op.
    print(sess.run(c))
    out, err = capsys.readouterr()
    assert out.split() == ["[[22.", "28.]", "[49.", "64.]]"]
    assert set(logged_placements(err).values()) == {f"{LOCAL}GPU:0"}
    reason = sess.placement.explain("MatMul")
    assert reason.kind == "soft"
    assert reason.text == (
        "soft placement: /device:GPU:2 does not exist, so GPU:0, the first GPU with a kernel "
        "for MatMul(float32)"
    )


@FOUR_CARDS
def test_001_towers(capsys: pytest.CaptureFixture[str]) -> None:
    # Creates a graph.
    c = []
    for d in ["/device:GPU:2", "/device:GPU:3"]:
        with tf.device(d):
            a = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3])
            b = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2])
            c.append(tf.matmul(a, b))
    with tf.device("/cpu:0"):
        sum = tf.add_n(c)
    # Creates a session with log_device_placement set to True.
    sess = tf.Session(config=tf.ConfigProto(log_device_placement=True))
    # Runs the op.
    print(sess.run(sum))
    out, err = capsys.readouterr()
    assert out.split() == ["[[", "44.", "56.]", "[", "98.", "128.]]"]
    assert logged_placements(err) == {
        "Const_3": f"{LOCAL}GPU:3",
        "Const_2": f"{LOCAL}GPU:3",
        "MatMul_1": f"{LOCAL}GPU:3",
        "Const_1": f"{LOCAL}GPU:2",
        "Const": f"{LOCAL}GPU:2",
        "MatMul": f"{LOCAL}GPU:2",
        "AddN": f"{LOCAL}CPU:0",
    }
    for name in [f"{LOCAL}GPU:{i}" for i in range(4)]:
        assert f"{name} -> device: {name[-1]}" in err


# -- seed 002: Hands-On Machine Learning, chapter 12 -------------------------------------------
def test_002_simple_placement_and_log(capsys: pytest.CaptureFixture[str]) -> None:
    with tf.device("/cpu:0"):
        a = tf.Variable(3.0)
        b = tf.constant(4.0)

    c = a * b
    config = tf.ConfigProto()
    config.log_device_placement = True
    sess = tf.Session(config=config)
    a.initializer.run(session=sess)
    _, err = capsys.readouterr()
    # The book's log, with TensorFlow's default names for its unnamed ops (its 'a' is
    # 'Variable' and its 'b' is 'Const').
    cpu, gpu = f"{LOCAL}CPU:0", f"{LOCAL}GPU:0"
    assert logged_placements(err) == {
        "Variable": cpu,
        "Variable/read": cpu,
        "mul": gpu,
        "Variable/Assign": cpu,
        "Const": cpu,
        "Variable/initial_value": cpu,
    }
    assert sess.run(c) == 12
    # The second run places nothing, so logs nothing.
    assert logged_placements(capsys.readouterr().err) == {}
    assert sess.placement.explain("Variable/read").kind == "colocated"


@FOUR_CARDS
def test_002_a_fraction_of_each_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    config = tf.ConfigProto()
    config.gpu_options.per_process_gpu_memory_fraction = 0.4
    session = tf.Session(config=config)
    # "two such programs can share the same GPU cards (but not three, since 3 x 0.4 > 1)"
    for device in session.devices[1:]:
        assert device.memory_limit == int(0.4 * device.physical.memory_bytes)
        assert session.reserved_bytes(device) == device.memory_limit
    assert session.run(tf.constant(2.0) + 1.0) == 3.0


def test_002_dynamic_placement_function() -> None:
    def variables_on_cpu(op):
        if op.type == "VariableV2":  # the book's "Variable"; TF 2.21 names the op VariableV2
            return "/cpu:0"
        else:
            return "/gpu:0"

    with tf.device(variables_on_cpu):
        a = tf.Variable(3.0)
        b = tf.constant(4.0)
        c = a * b

    sess = tf.Session()
    sess.run(a.initializer)
    assert sess.run(c) == 12.0
    assert sess.placement[a.op.name] == f"{LOCAL}CPU:0"
    assert sess.placement[b.op.name] == f"{LOCAL}GPU:0"
    assert sess.placement[c.op.name] == f"{LOCAL}GPU:0"
    assert sess.placement["Variable/Assign"] == f"{LOCAL}CPU:0"
    reason = sess.placement.explain(a.op.name)
    assert reason.kind == "pinned"
    assert "variables_on_cpu" in reason.text and "which returned '/cpu:0'" in reason.text


def test_002_no_gpu_kernel_for_int32_variable() -> None:
    with tf.device("/gpu:0"):
        i = tf.Variable(3)
    sess = tf.Session()
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(i.initializer)
    message = str(info.value)
    assert message.startswith("Cannot assign a device for operation 'Variable'")
    assert "Could not satisfy explicit device specification '/device:GPU:0'" in message
    assert "because no supported kernel for GPU devices is available" in message
    assert "VariableV2(int32)" in message
    # A float variable is fine, as the book says.
    with tf.device("/gpu:0"):
        f = tf.Variable(3.0)
    sess = tf.Session()
    sess.run(f.initializer)
    assert sess.run(f) == 3.0


def test_002_soft_placement_falls_back_to_cpu() -> None:
    with tf.device("/gpu:0"):
        i = tf.Variable(3)

    config = tf.ConfigProto()
    config.allow_soft_placement = True
    sess = tf.Session(config=config)
    sess.run(i.initializer)  # the placer runs and falls back to /cpu:0
    assert sess.placement["Variable"] == f"{LOCAL}CPU:0"
    reason = sess.placement.explain("Variable")
    assert reason.kind == "soft"
    assert "no GPU kernel for VariableV2(int32)" in reason.text
    assert sess.run(i) == 3


def test_002_control_dependencies() -> None:
    a = tf.constant(1.0)
    b = a + 2.0

    with tf.control_dependencies([a, b]):
        x = tf.constant(3.0)
        y = tf.constant(4.0)

    z = x + y
    assert x.op.control_inputs == [a.op, b.op]
    assert y.op.control_inputs == [a.op, b.op]
    assert z.op.control_inputs == []
    assert tf.Session().run(z) == 7.0


def test_002_pinning_ops_to_tasks_without_a_cluster_says_so() -> None:
    with tf.device("/job:ps/task:0/cpu:0"):
        a = tf.constant(1.0)

    with tf.device("/job:worker/task:0/gpu:1"):
        b = a + 2

    c = a + b
    assert a.op.device == "/job:ps/task:0/device:CPU:0"
    assert b.op.device == "/job:worker/task:0/device:GPU:1"
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"pv.Session\(server.target\)"):
        tf.Session().run(c)


# -- seed 003: Effective TensorFlow, chapter 10 -----------------------------------------------
def test_003_add_on_cpu_and_gpu() -> None:
    with tf.device(tf.DeviceSpec(device_type="CPU", device_index=0)):
        a = tf.random_uniform([1000, 100])
        b = tf.random_uniform([1000, 100])
        c = a + b
    result = tf.Session().run(c)
    assert result.shape == (1000, 100) and result.dtype == np.float32
    assert result.min() >= 0.0 and result.max() < 2.0

    with tf.device(tf.DeviceSpec(device_type="GPU", device_index=0)):
        a = tf.random_uniform([1000, 100])
        b = tf.random_uniform([1000, 100])
        c = a + b
    sess = tf.Session()
    a_val, b_val, c_val = sess.run([a, b, c])
    np.testing.assert_allclose(c_val, a_val + b_val, rtol=1e-6)
    assert sess.placement[c.op.name] == f"{LOCAL}GPU:0"


def test_003_split_over_two_gpus() -> None:
    a = tf.random_uniform([1000, 100])
    b = tf.random_uniform([1000, 100])
    split_a = tf.split(a, 2)
    split_b = tf.split(b, 2)
    split_c = []
    for i in range(2):
        with tf.device(tf.DeviceSpec(device_type="GPU", device_index=i)):
            split_c.append(split_a[i] + split_b[i])
    c = tf.concat(split_c, axis=0)
    sess = tf.Session()
    a_val, b_val, c_val = sess.run([a, b, c])
    np.testing.assert_allclose(c_val, a_val + b_val, rtol=1e-6)
    assert sess.placement[split_c[0].op.name] == f"{LOCAL}GPU:0"
    assert sess.placement[split_c[1].op.name] == f"{LOCAL}GPU:1"


# -- seed 000: TensorFlow 2's GPU guide (device configuration) ---------------------------------
@FOUR_CARDS
def test_000_num_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    print("Num GPUs Available: ", len(tf.config.list_physical_devices("GPU")))
    assert capsys.readouterr().out == "Num GPUs Available:  4\n"


@FOUR_CARDS
def test_000_restrict_to_first_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        # Restrict TensorFlow to only use the first GPU
        try:
            tf.config.set_visible_devices(gpus[0], "GPU")
            logical_gpus = tf.config.list_logical_devices("GPU")
            print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPU")
        except RuntimeError as e:
            # Visible devices must be set before GPUs have been initialized
            print(e)
    assert capsys.readouterr().out == "4 Physical GPUs, 1 Logical GPU\n"


@FOUR_CARDS
def test_000_restrict_after_the_runtime_started(capsys: pytest.CaptureFixture[str]) -> None:
    tf.Session().run(tf.constant(1.0))  # an earlier cell ran with all four GPUs visible
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        # Restrict TensorFlow to only use the first GPU
        try:
            tf.config.set_visible_devices(gpus[0], "GPU")
            logical_gpus = tf.config.list_logical_devices("GPU")
            print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPU")
        except RuntimeError as e:
            # Visible devices must be set before GPUs have been initialized
            print(e)
    assert capsys.readouterr().out == "Visible devices cannot be modified after being initialized\n"
    tf.config.set_visible_devices(gpus, "GPU")  # unchanged, so allowed, as in TensorFlow


@FOUR_CARDS
def test_000_memory_growth(capsys: pytest.CaptureFixture[str]) -> None:
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        try:
            # Currently, memory growth needs to be the same across GPUs
            for gpu in gpus:
                tf.config.experimental.set_memory_growth(gpu, True)
            logical_gpus = tf.config.list_logical_devices("GPU")
            print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs")
        except RuntimeError as e:
            # Memory growth must be set before GPUs have been initialized
            print(e)
    assert capsys.readouterr().out == "4 Physical GPUs, 4 Logical GPUs\n"
    assert all(tf.config.experimental.get_memory_growth(g) for g in gpus)


@FOUR_CARDS
def test_000_limit_memory_of_first_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        # Restrict TensorFlow to only allocate 1GB of memory on the first GPU
        try:
            tf.config.set_logical_device_configuration(
                gpus[0], [tf.config.LogicalDeviceConfiguration(memory_limit=1024)]
            )
            logical_gpus = tf.config.list_logical_devices("GPU")
            print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs")
        except RuntimeError as e:
            # Virtual devices must be set before GPUs have been initialized
            print(e)
    assert capsys.readouterr().out == "4 Physical GPUs, 4 Logical GPUs\n"
    assert tf.Session().devices[1].memory_limit == 1024 << 20


def test_000_two_virtual_gpus_on_one(capsys: pytest.CaptureFixture[str]) -> None:
    tf.config.reset_devices()
    tf.config.simulate_gpus(1)
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        # Create 2 virtual GPUs with 1GB memory each
        try:
            tf.config.set_logical_device_configuration(
                gpus[0],
                [
                    tf.config.LogicalDeviceConfiguration(memory_limit=1024),
                    tf.config.LogicalDeviceConfiguration(memory_limit=1024),
                ],
            )
            logical_gpus = tf.config.list_logical_devices("GPU")
            print(len(gpus), "Physical GPU,", len(logical_gpus), "Logical GPUs")
        except RuntimeError as e:
            # Virtual devices must be set before GPUs have been initialized
            print(e)
    assert capsys.readouterr().out == "1 Physical GPU, 2 Logical GPUs\n"
    names = [d.name for d in tf.config.list_logical_devices("GPU")]
    assert names == ["/device:GPU:0", "/device:GPU:1"]
    # Multi-GPU code runs on the two logical GPUs carved from one card.
    c = []
    for gpu in tf.config.list_logical_devices("GPU"):
        with tf.device(gpu.name):
            a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
            b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
            c.append(tf.matmul(a, b))
    with tf.device("/CPU:0"):
        matmul_sum = tf.add_n(c)
    sess = tf.Session()
    np.testing.assert_array_equal(sess.run(matmul_sum), [[44, 56], [98, 128]])
    assert sess.placement["MatMul_1"] == f"{LOCAL}GPU:1"
    assert sess.placement.device("MatMul_1").physical.index == 0


# -- seed 000 in eager mode: TensorFlow 2 prints values and each op's execution -----------------
EAGER_MATMUL = "pv.Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)\n"


@pytest.fixture
def eager() -> None:
    """TensorFlow 2 runs eagerly; placeviz does after ``enable_eager_execution()`` (TF 1.15's)."""
    tf.enable_eager_execution()


def executed(stderr: str) -> list[tuple[str, str]]:
    found = re.findall(r"^Executing op (\w+) in device (\S+)$", stderr, flags=re.MULTILINE)
    return [(op, device.replace(LOCAL, "")) for op, device in found]


def test_000_logging_device_placement(eager: None, capsys: pytest.CaptureFixture[str]) -> None:
    tf.debugging.set_log_device_placement(True)

    # Create some tensors
    a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    c = tf.matmul(a, b)

    print(c)
    out, err = capsys.readouterr()
    assert out == EAGER_MATMUL
    assert executed(err) == [
        ("_EagerConst", "GPU:0"),
        ("_EagerConst", "GPU:0"),
        ("MatMul", "GPU:0"),
    ]


def test_000_manual_device_placement(eager: None, capsys: pytest.CaptureFixture[str]) -> None:
    tf.debugging.set_log_device_placement(True)

    # Place tensors on the CPU
    with tf.device("/CPU:0"):
        a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    # Run on the GPU
    c = tf.matmul(a, b)
    print(c)
    out, err = capsys.readouterr()
    assert out == EAGER_MATMUL
    assert executed(err) == [("MatMul", "GPU:0")]


def test_000_single_gpu_of_several(eager: None, capsys: pytest.CaptureFixture[str]) -> None:
    tf.debugging.set_log_device_placement(True)

    try:
        # Specify an invalid GPU device
        with tf.device("/device:GPU:2"):
            a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
            b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
            c = tf.matmul(a, b)
    except RuntimeError as e:
        print(e)
    # The seed's machine has four GPUs, so GPU:2 exists and runs all three ops.
    assert executed(capsys.readouterr().err) == [("_EagerConst", "GPU:2")] * 2 + [
        ("MatMul", "GPU:2")
    ]
    np.testing.assert_array_equal(c.numpy(), [[22, 28], [49, 64]])


def test_000_soft_device_placement(eager: None, capsys: pytest.CaptureFixture[str]) -> None:
    tf.config.set_soft_device_placement(True)
    tf.debugging.set_log_device_placement(True)

    # Creates some tensors
    a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    c = tf.matmul(a, b)

    print(c)
    out, err = capsys.readouterr()
    assert out == EAGER_MATMUL
    assert executed(err)[-1] == ("MatMul", "GPU:0")


def test_000_manual_replication(eager: None, capsys: pytest.CaptureFixture[str]) -> None:
    tf.debugging.set_log_device_placement(True)

    gpus = tf.config.list_logical_devices("GPU")
    if gpus:
        # Replicate your computation on multiple GPUs
        c = []
        for gpu in gpus:
            with tf.device(gpu.name):
                a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
                b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
                c.append(tf.matmul(a, b))

        with tf.device("/CPU:0"):
            matmul_sum = tf.add_n(c)

        print(matmul_sum)
    out, err = capsys.readouterr()
    assert out == "pv.Tensor(\n[[ 88. 112.]\n [196. 256.]], shape=(2, 2), dtype=float32)\n"
    matmuls = [device for op, device in executed(err) if op == "MatMul"]
    assert matmuls == ["GPU:0", "GPU:1", "GPU:2", "GPU:3"]
    assert ("AddN", "CPU:0") in executed(err)


def test_000_mirrored_strategy_with_keras(eager: None, capsys: pytest.CaptureFixture[str]) -> None:
    tf.debugging.set_log_device_placement(True)
    gpus = tf.config.list_logical_devices("GPU")
    strategy = tf.distribute.MirroredStrategy(gpus)
    with strategy.scope():
        inputs = tf.keras.layers.Input(shape=(1,))
        predictions = tf.keras.layers.Dense(1)(inputs)
        model = tf.keras.models.Model(inputs=inputs, outputs=predictions)
        model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(learning_rate=0.2))
    err = capsys.readouterr().err
    devices = ", ".join(f"'{LOCAL}GPU:{i}'" for i in range(4))
    assert f"Using MirroredStrategy with devices ({devices})" in err
    # Each variable gets a copy on every GPU, initialized there (TF logs AssignVariableOp).
    assigned = [device for op, device in executed(err) if op == "Assign"]
    assert assigned == [f"GPU:{i}" for i in range(4)] * 2  # kernel, then bias
    # ... and the model trains as one replica per GPU.
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(-1, 1)
    history = model.fit(x, 2 * x - 1, epochs=10, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.01 * history.history["loss"][0]


# -- seed 002: parameter servers -----------------------------------------------------------------
def test_002_replica_device_setter_round_robin() -> None:
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v1 = tf.Variable(1.0)  # pinned to /job:ps/task:0
        v2 = tf.Variable(2.0)  # pinned to /job:ps/task:1
        v3 = tf.Variable(3.0)  # pinned to /job:ps/task:0
        v4 = tf.Variable(4.0)  # pinned to /job:ps/task:1
        v5 = tf.Variable(5.0)  # pinned to /job:ps/task:0
    tasks = [v.op.device for v in (v1, v2, v3, v4, v5)]
    assert tasks == ["/job:ps/task:0", "/job:ps/task:1"] * 2 + ["/job:ps/task:0"]


def test_002_replica_device_setter_nested_scopes() -> None:
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v1 = tf.Variable(1.0)  # pinned to /job:ps/task:0 (+ defaults to /cpu:0)
        v2 = tf.Variable(2.0)  # pinned to /job:ps/task:1 (+ defaults to /cpu:0)
        s = v1 + v2  # pinned to /job:worker (+ defaults to task:0/gpu:0)
        with tf.device("/gpu:1"):
            p1 = 2 * s  # pinned to /job:worker/gpu:1 (+ defaults to /task:0)
            with tf.device("/task:1"):
                p2 = 3 * s  # pinned to /job:worker/task:1/gpu:1
    assert s.op.device == "/job:worker"
    assert p1.op.device == "/job:worker/device:GPU:1"
    assert p2.op.device == "/job:worker/task:1/device:GPU:1"
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"pv.Session\(server.target\)"):
        tf.Session().run(p2)


def test_002_cluster_spec_of_machines() -> None:
    """The seed's spec names machines; it sizes replica_device_setter without any running (the
    programs that run on a cluster are in tests/test_cluster.py, on loopback)."""
    cluster_spec = tf.train.ClusterSpec(
        {
            "ps": [
                "machine-a.example.com:2221",  # /job:ps/task:0
            ],
            "worker": [
                "machine-a.example.com:2222",  # /job:worker/task:0
                "machine-b.example.com:2222",  # /job:worker/task:1
            ],
        }
    )
    assert cluster_spec.num_tasks("worker") == 2
    with tf.device(tf.train.replica_device_setter(cluster=cluster_spec)):
        v = tf.Variable(1.0)
    assert v.op.device == "/job:ps/task:0"
    with pytest.raises(ValueError, match="grpc://host:port"):
        tf.Session("machine-b.example.com:2222")


# -- seed 003: a polynomial fit, on one GPU and split over two -----------------------------------
def polynomial_model(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    w = tf.get_variable("w", shape=[3, 1])
    f = tf.stack([tf.square(x), x, tf.ones_like(x)], 1)
    yhat = tf.squeeze(tf.matmul(f, w), 1)
    loss = tf.square(yhat - y)
    return loss


def make_parallel(fn, num_gpus, **kwargs):  # type: ignore[no-untyped-def]  # the seed's code
    in_splits = {}
    for k, v in kwargs.items():
        in_splits[k] = tf.split(v, num_gpus)
    out_split = []
    for i in range(num_gpus):
        with tf.device(tf.DeviceSpec(device_type="GPU", device_index=i)):  # noqa: SIM117 (seed)
            with tf.variable_scope(tf.get_variable_scope(), reuse=tf.AUTO_REUSE):
                out_split.append(fn(**{k: v[i] for k, v in in_splits.items()}))
    return tf.concat(out_split, axis=0)


def fit_polynomial(parallel: bool) -> tuple[np.ndarray, tf.Session]:
    np.random.seed(3)
    x = tf.placeholder(tf.float32)
    y = tf.placeholder(tf.float32)
    if parallel:
        loss = make_parallel(polynomial_model, 2, x=x, y=y)
        train_op = tf.train.AdamOptimizer(0.1).minimize(
            tf.reduce_mean(loss), colocate_gradients_with_ops=True
        )
    else:
        loss = polynomial_model(x, y)
        train_op = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_mean(loss))

    def generate_data():  # type: ignore[no-untyped-def]
        x_val = np.random.uniform(-10.0, 10.0, size=100)
        y_val = 5 * np.square(x_val) + 3
        return x_val, y_val

    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    for _ in range(1000):
        x_val, y_val = generate_data()
        _, loss_val = sess.run([train_op, loss], {x: x_val, y: y_val})
    _, loss_val = sess.run([train_op, loss], {x: x_val, y: y_val})  # noqa: RUF059 (seed)
    (w,) = sess.run(tf.contrib.framework.get_variables_by_name("w"))
    return w.ravel(), sess


@pytest.mark.parametrize("parallel", [False, True], ids=["one_gpu", "two_gpus"])
def test_003_polynomial_fit_recovers_the_weights(parallel: bool) -> None:
    w, sess = fit_polynomial(parallel)
    assert w[0] == pytest.approx(5.0, abs=0.05)
    assert w[1] == pytest.approx(0.0, abs=0.05)
    if parallel:
        # colocate_gradients_with_ops: each tower's gradient ops run on that tower's GPU.
        assert sess.placement["gradients/MatMul_grad/MatMul"] == f"{LOCAL}GPU:0"
        assert sess.placement["gradients/MatMul_1_grad/MatMul"] == f"{LOCAL}GPU:1"
        assert sess.placement["gradients/Square_3_grad/Mul"] == f"{LOCAL}GPU:1"
        assert [v.op.name for v in tf.trainable_variables()] == ["w"]  # one w, shared


# -- seed 004: linear regression pinned to the CPU, trained -------------------------------------
@H100
def test_004_list_local_devices(capsys: pytest.CaptureFixture[str]) -> None:
    from placeviz.python.client import device_lib

    print(device_lib.list_local_devices())
    out = capsys.readouterr().out
    names = re.findall(r'^(?:\[|, )?name: "(\S+)"$', out, flags=re.MULTILINE)
    assert names == ["/device:CPU:0"] + [f"/device:GPU:{i}" for i in range(4)]
    assert out.count('device_type: "GPU"') == 4
    assert 'physical_device_desc: "device: 3, name: NVIDIA H100' in out


@seeds_machine("float32 digits printed by CPU kernels")
def test_004_linear_regression_matches_numpy_step_by_step(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tf.reset_default_graph()

    with tf.device("/device:cpu:0"):
        # create w and b init 0.0
        w = tf.Variable(0.0, name="weight")
        b = tf.Variable(0.0, name="bias")

        # create input and out
        x = tf.placeholder(dtype=tf.float32, shape=[None])
        out = tf.placeholder(dtype=tf.float32, shape=[None])

        # create loss and opt
        y = w * x + b

    loss = tf.reduce_mean(tf.square(y - out))
    optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.01)
    train_op = optimizer.minimize(loss)

    config = tf.ConfigProto()
    config.log_device_placement = True

    xs = np.array([1, 23, 4, 5, 7, 5, 7], np.float32)
    outs = np.array([3, 5, 7, 9, 11, 13, 15], np.float32)
    ref_w, ref_b, lr = np.float32(0), np.float32(0), np.float32(0.01)
    # train model (the seed runs 100,000 steps; 300 show the same thing)
    with tf.Session(config=config) as sess:
        tf.global_variables_initializer().run(session=sess)
        for i in range(300):
            _, loss_val, w_val, b_val = sess.run(
                [train_op, loss, w, b],
                feed_dict={x: [1, 23, 4, 5, 7, 5, 7], out: [3, 5, 7, 9, 11, 13, 15]},
            )  # 注意 输入的数据 形状要一致,避免输出与预测值得形状不一致问题
            if i % 100 == 0:
                print("Step {}: loss = {}, w = {}, b = {}".format(i, loss_val, w_val, b_val))  # noqa: UP032
            # NumPy: the loss fetched with train_op is the one the step started from; w and b
            # are fetched as the variables themselves (TF1's reference tensors), so, as in
            # TF 2.21, they hold the step's update when the run ends.
            residual = ref_w * xs + ref_b - outs
            assert loss_val == pytest.approx(np.mean(np.square(residual)), rel=1e-4), i
            ref_w = ref_w - lr * np.mean(2 * residual * xs)
            ref_b = ref_b - lr * np.mean(2 * residual)
            assert w_val == pytest.approx(ref_w, rel=1e-4, abs=1e-6), i
            assert b_val == pytest.approx(ref_b, rel=1e-4, abs=1e-6), i
    out_text, err = capsys.readouterr()
    # TF 2.21 prints "Step 0: loss = 97.0, w = 1.2514286041259766, b = 0.17999999225139618".
    assert out_text.splitlines()[0] == (
        "Step 0: loss = 97.0, w = 1.2514286041259766, b = 0.17999999225139618"
    )
    assert len(out_text.splitlines()) == 3
    placed = logged_placements(err)
    for name in (
        "weight",
        "bias",
        "mul",
        "add",
        "GradientDescent/update_weight/ApplyGradientDescent",
    ):
        assert placed[name] == f"{LOCAL}CPU:0", name
    assert placed["Mean"] == f"{LOCAL}GPU:0"
