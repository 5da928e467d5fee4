"""ConfigProto on a Session: device_count, visible_device_list, memory fraction, the mapping log."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import placeviz as pv
from placeviz.errors import InvalidArgumentError

_GIB = 1 << 30
_MIB = 1 << 20
LOCAL = "/job:localhost/replica:0/task:0/device:"


def gpus_of(sess: pv.Session) -> list:
    return [d for d in sess.devices if d.device_type == "GPU"]


def small_matmul() -> pv.Tensor:
    return pv.matmul(pv.constant([[1.0, 2.0]]), pv.constant([[3.0], [4.0]]))


# -- device_count --------------------------------------------------------------------------------
@pytest.mark.usefixtures("gpus4")
def test_device_count_zero_gpus_leaves_only_the_cpu() -> None:
    product = small_matmul()
    config = pv.ConfigProto(device_count={"GPU": 0})
    with pv.Session(config=config) as sess:
        assert [d.name for d in sess.devices] == [LOCAL + "CPU:0"]
        np.testing.assert_array_equal(sess.run(product), [[11.0]])
        assert sess.placement[product.op.name] == LOCAL + "CPU:0"
        reason = sess.placement.explain(product.op.name)
        assert reason.kind == "default"
        assert "no GPU" in reason.text
    # The process still has its four GPUs; another session sees them.
    assert len(gpus_of(pv.Session())) == 4


@pytest.mark.usefixtures("gpus4")
def test_device_count_one_gpu_of_four() -> None:
    product = small_matmul()
    with pv.Session(config=pv.ConfigProto(device_count={"GPU": 1})) as sess:
        (gpu,) = gpus_of(sess)
        assert gpu.name == LOCAL + "GPU:0"
        assert gpu.physical.index == 0
        sess.run(product)
        assert sess.placement[product.op.name] == LOCAL + "GPU:0"
    with pv.device("/GPU:3"):
        pinned = small_matmul()
    with pytest.raises(InvalidArgumentError, match="GPU:3"):
        pv.Session(config=pv.ConfigProto(device_count={"GPU": 1})).run(pinned)


@pytest.mark.usefixtures("gpus4")
def test_device_count_keys_are_exact_device_types() -> None:
    """TF 2.21: device_count={'cpu': 3} leaves one CPU; the key must be 'CPU' (or 'GPU')."""
    sess = pv.Session(config=pv.ConfigProto(device_count={"gpu": 2, "cpu": 3}))
    assert [d.name for d in sess.devices] == [LOCAL + "CPU:0"] + [
        f"{LOCAL}GPU:{i}" for i in range(4)
    ]


def test_device_count_cpu_makes_that_many_cpu_devices() -> None:
    """TF 2.21's list_devices() for device_count={'CPU': 4}: CPU:0 .. CPU:3 of localhost."""
    with pv.Session(config=pv.ConfigProto(device_count={"CPU": 4})) as sess:
        assert [d.name for d in sess.list_devices()] == [f"{LOCAL}CPU:{i}" for i in range(4)]
        with pv.device("/cpu:3"):
            product = small_matmul()
        np.testing.assert_array_equal(sess.run(product), [[11.0]])
        assert sess.placement[product.op.name] == LOCAL + "CPU:3"


def test_device_count_zero_cpus_is_an_error() -> None:
    """TF 2.21 refuses the session: NotFoundError 'No CPU devices are available in this process'."""
    with pytest.raises(pv.errors.NotFoundError, match="No CPU devices are available"):
        pv.Session(config=pv.ConfigProto(device_count={"CPU": 0}))


# -- visible_device_list -------------------------------------------------------------------------
@pytest.mark.usefixtures("gpus4")
def test_visible_device_list_renumbers() -> None:
    options = pv.GPUOptions(visible_device_list="1,0")
    sess = pv.Session(config=pv.ConfigProto(gpu_options=options))
    gpus = {d.name: d for d in gpus_of(sess)}
    assert sorted(gpus) == [LOCAL + "GPU:0", LOCAL + "GPU:1"]
    assert gpus[LOCAL + "GPU:0"].physical.index == 1
    assert gpus[LOCAL + "GPU:1"].physical.index == 0
    with pv.device("/gpu:0"):
        product = small_matmul()
    np.testing.assert_array_equal(sess.run(product), [[11.0]])
    device = sess.placement.device(product.op.name)
    assert device.name == LOCAL + "GPU:0"
    assert device.physical.name == "/physical_device:GPU:1"


@pytest.mark.usefixtures("gpus4")
def test_visible_device_list_with_spaces() -> None:
    options = pv.GPUOptions(visible_device_list=" 3 , 2 ")
    sess = pv.Session(config=pv.ConfigProto(gpu_options=options))
    assert [d.physical.index for d in gpus_of(sess)] == [3, 2]


@pytest.mark.usefixtures("gpus4")
@pytest.mark.parametrize("entries", ["a", "1,", "-1", "0,x", "4", "0,7", "1,1", "0,2,0"])
def test_bad_visible_device_list_raises(entries: str) -> None:
    options = pv.GPUOptions(visible_device_list=entries)
    with pytest.raises(ValueError):
        pv.Session(config=pv.ConfigProto(gpu_options=options))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.permutations(range(4)).flatmap(lambda p: st.integers(1, 4).map(lambda n: p[:n])))
def test_visible_device_list_maps_session_ids_to_physical_ids(order: list[int]) -> None:
    pv.config.reset_devices()
    pv.config.simulate_gpus(4)
    options = pv.GPUOptions(visible_device_list=",".join(map(str, order)))
    gpus = gpus_of(pv.Session(config=pv.ConfigProto(gpu_options=options)))
    assert [d.index for d in gpus] == list(range(len(order)))
    assert [d.physical.index for d in gpus] == order


def test_visible_device_list_keeps_logical_devices_together() -> None:
    pv.config.simulate_gpus(2)
    physical = pv.config.list_physical_devices("GPU")
    pv.config.set_logical_device_configuration(
        physical[0],
        [pv.config.LogicalDeviceConfiguration(1024), pv.config.LogicalDeviceConfiguration(1024)],
    )
    options = pv.GPUOptions(visible_device_list="1,0")
    gpus = gpus_of(pv.Session(config=pv.ConfigProto(gpu_options=options)))
    assert [(d.index, d.physical.index, d.memory_limit) for d in gpus] == [
        (0, 1, 80 * _GIB),
        (1, 0, _GIB),
        (2, 0, _GIB),
    ]


# -- GPU memory ----------------------------------------------------------------------------------
@pytest.mark.usefixtures("gpus4")
def test_per_process_gpu_memory_fraction() -> None:
    options = pv.GPUOptions(per_process_gpu_memory_fraction=0.4)
    sess = pv.Session(config=pv.ConfigProto(gpu_options=options))
    gpus = gpus_of(sess)
    assert len(gpus) == 4
    for gpu in gpus:
        assert gpu.memory_limit == int(0.4 * gpu.physical.memory_bytes)
        assert gpu.memory_limit == int(0.4 * 80 * _GIB)
    (cpu,) = [d for d in sess.devices if d.device_type == "CPU"]
    assert cpu.memory_limit == cpu.physical.memory_bytes
    # Without the option a GPU may use all of its memory.
    assert {d.memory_limit for d in gpus_of(pv.Session())} == {80 * _GIB}


def test_memory_fraction_follows_the_card() -> None:
    pv.config.simulate_gpus(1, profile="T4")
    options = pv.GPUOptions(per_process_gpu_memory_fraction=0.5)
    (gpu,) = gpus_of(pv.Session(config=pv.ConfigProto(gpu_options=options)))
    assert gpu.memory_limit == 8 * _GIB


def test_logical_device_limits_win_over_the_memory_fraction() -> None:
    pv.config.simulate_gpus(3)
    physical = pv.config.list_physical_devices("GPU")
    ldc = pv.config.LogicalDeviceConfiguration
    pv.config.set_logical_device_configuration(physical[0], [ldc(1024), ldc(1024)])
    pv.config.set_logical_device_configuration(physical[1], [ldc(2048)])
    options = pv.GPUOptions(per_process_gpu_memory_fraction=0.4)
    gpus = gpus_of(pv.Session(config=pv.ConfigProto(gpu_options=options)))
    assert [d.memory_limit for d in gpus] == [_GIB, _GIB, 2 * _GIB, int(0.4 * 80 * _GIB)]


@pytest.mark.parametrize("fraction", [-0.1, 1.5])
def test_memory_fraction_out_of_range(fraction: float) -> None:
    with pytest.raises(ValueError, match="per_process_gpu_memory_fraction"):
        pv.GPUOptions(per_process_gpu_memory_fraction=fraction)


# -- the device mapping log ----------------------------------------------------------------------
@pytest.mark.usefixtures("gpus4")
def test_device_mapping_lists_each_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    pv.Session(config=pv.ConfigProto(log_device_placement=True))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "Device mapping:"
    mapping = lines[1:]
    assert len(mapping) == 4
    for i, line in enumerate(mapping):
        assert line.startswith(f"{LOCAL}GPU:{i} -> device: {i}, name: NVIDIA H100 SXM5 80GB")
        assert "(simulated)" in line
        assert "compute capability: 9.0" in line
    assert not any("CPU" in line for line in mapping)


def test_device_mapping_follows_the_session_config(capsys: pytest.CaptureFixture[str]) -> None:
    pv.config.simulate_gpus(3, profile="K40")
    options = pv.GPUOptions(visible_device_list="2,0")
    pv.Session(config=pv.ConfigProto(log_device_placement=True, gpu_options=options))
    lines = capsys.readouterr().err.splitlines()
    assert lines[1:] == [
        f"{LOCAL}GPU:0 -> device: 2, name: Tesla K40c (simulated), pci bus id: simulated:2, "
        "compute capability: 3.5",
        f"{LOCAL}GPU:1 -> device: 0, name: Tesla K40c (simulated), pci bus id: simulated:0, "
        "compute capability: 3.5",
    ]


def test_device_mapping_labels_logical_devices(capsys: pytest.CaptureFixture[str]) -> None:
    pv.config.simulate_gpus(1)
    (gpu,) = pv.config.list_physical_devices("GPU")
    ldc = pv.config.LogicalDeviceConfiguration
    pv.config.set_logical_device_configuration(gpu, [ldc(1024), ldc(512)])
    pv.Session(config=pv.ConfigProto(log_device_placement=True))
    mapping = capsys.readouterr().err.splitlines()[1:]
    assert len(mapping) == 2
    assert all("-> device: 0," in line for line in mapping)
    assert mapping[0].endswith("logical device with 1024 MiB")
    assert mapping[1].endswith("logical device with 512 MiB")


@pytest.mark.usefixtures("gpus4")
def test_session_log_lines_name_the_assigned_device(capsys: pytest.CaptureFixture[str]) -> None:
    config = pv.ConfigProto(log_device_placement=True, allow_soft_placement=True)
    with pv.device("/device:GPU:9"):
        product = pv.matmul(pv.constant([[2.0]], name="x"), pv.constant([[3.0]], name="y"))
    sess = pv.Session(config=config)
    capsys.readouterr()
    np.testing.assert_array_equal(sess.run(product), [[6.0]])
    np.testing.assert_array_equal(sess.run(product), [[6.0]])
    lines = capsys.readouterr().err.splitlines()
    assert lines == [  # TensorFlow's placer decides (and logs) the generators x and y last
        f"{product.op.name}: (MatMul): {LOCAL}GPU:0",
        f"x: (Const): {LOCAL}GPU:0",
        f"y: (Const): {LOCAL}GPU:0",
    ]


def test_no_gpu_mapping(capsys: pytest.CaptureFixture[str]) -> None:
    pv.Session(config=pv.ConfigProto(log_device_placement=True))
    assert capsys.readouterr().err.splitlines() == ["Device mapping:", "no known devices."]


# -- targets -------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["grpc://x.invalid:1", "grpc://localhost:1"])
def test_a_target_where_no_server_answers_is_unavailable(target: str) -> None:
    pytest.importorskip("distributed")
    with pytest.raises(pv.errors.UnavailableError, match="No placeviz server answers"):
        pv.Session(target=target)


@pytest.mark.parametrize("target", ["localhost:2222", "http://localhost:2222", "grpc://"])
def test_a_target_must_be_a_grpc_address(target: str) -> None:
    with pytest.raises(ValueError, match="grpc://host:port"):
        pv.Session(target=target)


def test_local_targets_are_accepted() -> None:
    total = pv.constant(1.0) + pv.constant(1.0)
    assert pv.Session(target="").run(total) == 2.0
    assert pv.Session(target="local").run(total) == 2.0


# -- many devices ----------------------------------------------------------------------------------
def test_thousands_of_gpus_are_listed_made_visible_and_run_on() -> None:
    """Listing, visibility, device_count, visible_device_list and the first run of 6,000
    simulated GPUs (benchmarks/bench_device_startup.py measures the per-device cost)."""
    count = 6000
    pv.config.simulate_gpus(count)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_visible_devices(gpus, "GPU")
    pv.config.experimental.set_memory_growth(gpus[-1], False)
    visible = ",".join(str(i) for i in reversed(range(count)))
    config = pv.ConfigProto(
        device_count={"GPU": count}, gpu_options=pv.GPUOptions(visible_device_list=visible)
    )
    with pv.device("/GPU:0"):
        value = pv.constant(2.0) * 3.0
    with pv.Session(config=config) as sess:
        assert sess.run(value) == 6.0
        # visible_device_list's first entry is the last card
        assert sess.devices[1].physical.index == count - 1
        assert len(sess.devices) == count + 1
