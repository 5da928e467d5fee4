"""Every code example of the seeds appears in a teaching notebook.

The seeds' examples are kept, runnable, in tests/test_seeds.py. For each of its tests this table
names the lines that make the example; each must be in that file (so the table follows the
conformance tests) and in a notebook's code. Lines compare with whitespace, comments and the kind
of quotes ignored, so a notebook may format the seed's code as the seed did.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED_TESTS = ROOT / "tests" / "test_seeds.py"

EXAMPLES: dict[str, tuple[str, ...]] = {
    "test_001_log_device_placement": (
        "sess = tf.Session(config=tf.ConfigProto(log_device_placement=True))",
        'b = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2], name="b")',
    ),
    "test_001_manual_placement": (
        'with tf.device("/cpu:0"):\n'
        '    a = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3], name="a")',
    ),
    "test_001_allow_growth": ("config.gpu_options.allow_growth = True",),
    "test_001_unknown_device_is_an_invalid_argument": ('with tf.device("/device:GPU:2"):',),
    "test_001_soft_placement": (
        "tf.Session(config=tf.ConfigProto(allow_soft_placement=True, log_device_placement=True))",
    ),
    "test_001_towers": (
        'for d in ["/device:GPU:2", "/device:GPU:3"]:',
        'with tf.device("/cpu:0"):\n    sum = tf.add_n(c)',
    ),
    "test_002_simple_placement_and_log": (
        'with tf.device("/cpu:0"):\n    a = tf.Variable(3.0)\n    b = tf.constant(4.0)',
        "a.initializer.run(session=sess)",
    ),
    "test_002_a_fraction_of_each_gpu": (
        "config.gpu_options.per_process_gpu_memory_fraction = 0.4",
    ),
    "test_002_dynamic_placement_function": (
        "def variables_on_cpu(op):",
        "with tf.device(variables_on_cpu):",
    ),
    "test_002_no_gpu_kernel_for_int32_variable": (
        'with tf.device("/gpu:0"):\n    i = tf.Variable(3)',
        "sess.run(i.initializer)",
    ),
    "test_002_soft_placement_falls_back_to_cpu": (
        "config.allow_soft_placement = True\nsess = tf.Session(config=config)",
    ),
    "test_002_control_dependencies": (
        "with tf.control_dependencies([a, b]):\n    x = tf.constant(3.0)\n    y = tf.constant(4.0)",
    ),
    "test_002_pinning_ops_to_tasks_without_a_cluster_says_so": (
        'with tf.device("/job:ps/task:0/cpu:0"):\n    a = tf.constant(1.0)',
        'with tf.device("/job:worker/task:0/gpu:1"):\n    b = a + 2',
    ),
    "test_003_add_on_cpu_and_gpu": (
        'with tf.device(tf.DeviceSpec(device_type="CPU", device_index=0)):',
        "a = tf.random_uniform([1000, 100])",
    ),
    "test_003_split_over_two_gpus": (
        "split_a = tf.split(a, 2)",
        "c = tf.concat(split_c, axis=0)",
    ),
    "test_000_num_gpus": (
        'print("Num GPUs Available: ", len(tf.config.list_physical_devices("GPU")))',
    ),
    "test_000_restrict_to_first_gpu": ('tf.config.set_visible_devices(gpus[0], "GPU")',),
    "test_000_restrict_after_the_runtime_started": (
        'print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPU")',
    ),
    "test_000_memory_growth": ("tf.config.experimental.set_memory_growth(gpu, True)",),
    "test_000_limit_memory_of_first_gpu": (
        "gpus[0], [tf.config.LogicalDeviceConfiguration(memory_limit=1024)]",
    ),
    "test_000_two_virtual_gpus_on_one": (
        'print(len(gpus), "Physical GPU,", len(logical_gpus), "Logical GPUs")',
    ),
    "test_000_logging_device_placement": ("tf.debugging.set_log_device_placement(True)",),
    "test_000_manual_device_placement": (
        'with tf.device("/CPU:0"):\n    a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])',
    ),
    "test_000_single_gpu_of_several": (
        'with tf.device("/device:GPU:2"):\n    a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])',
        "except RuntimeError as e:\n    print(e)",
    ),
    "test_000_soft_device_placement": ("tf.config.set_soft_device_placement(True)",),
    "test_000_manual_replication": (
        "for gpu in gpus:\n    with tf.device(gpu.name):",
        'with tf.device("/CPU:0"):\n    matmul_sum = tf.add_n(c)',
    ),
    "test_000_mirrored_strategy_with_keras": (
        "strategy = tf.distribute.MirroredStrategy(gpus)",
        'model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(learning_rate=0.2))',
    ),
    "test_002_replica_device_setter_round_robin": (
        "with tf.device(tf.train.replica_device_setter(ps_tasks=2)):\n    v1 = tf.Variable(1.0)",
        "v5 = tf.Variable(5.0)",
    ),
    "test_002_replica_device_setter_nested_scopes": ('with tf.device("/task:1"):\n    p2 = 3 * s',),
    "test_002_cluster_spec_of_machines": ('"machine-b.example.com:2222",',),
    "test_003_polynomial_fit_recovers_the_weights": (
        "f = tf.stack([tf.square(x), x, tf.ones_like(x)], 1)",
        "in_splits[k] = tf.split(v, num_gpus)",
        "minimize(tf.reduce_mean(loss), colocate_gradients_with_ops=True)",
    ),
    "test_004_list_local_devices": ("print(device_lib.list_local_devices())",),
    "test_004_linear_regression_matches_numpy_step_by_step": (
        'w = tf.Variable(0.0, name="weight")',
        "optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.01)",
        "tf.global_variables_initializer().run(session=sess)",
    ),
}


def plain(code: str) -> str:
    """Code without comments, whitespace, trailing commas' layout or the kind of quotes."""
    code = re.sub(r"#[^\n]*", "", code)
    return re.sub(r"\s+", "", code).replace("'", '"')


@functools.cache
def seeds_code() -> str:
    return plain(SEED_TESTS.read_text("utf-8"))


@functools.cache
def notebook_code() -> dict[str, str]:
    found = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text("utf-8"))["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        found[path.name] = plain("\n".join(code))
    return found


def seed_tests() -> list[str]:
    tree = ast.parse(SEED_TESTS.read_text("utf-8"))
    return [
        n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
    ]


def test_every_seed_test_is_in_the_table() -> None:
    assert sorted(seed_tests()) == sorted(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_seed_example_is_in_the_conformance_tests_and_a_notebook(name: str) -> None:
    for line in EXAMPLES[name]:
        wanted = plain(line)
        assert wanted in seeds_code(), f"{name}: not in test_seeds.py: {line}"
        assert any(wanted in code for code in notebook_code().values()), (
            f"{name}: no notebook has: {line}"
        )
