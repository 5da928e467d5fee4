"""pv.config: physical and logical devices, visibility, memory growth and the initialized lock."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import placeviz as pv
from placeviz.devices.context import PhysicalDevice
from placeviz.devices.profiles import PROFILES, get_profile
from placeviz.errors import InvalidArgumentError

_GIB = 1 << 30
_MIB = 1 << 20
LDC = pv.config.LogicalDeviceConfiguration
VISIBLE_LOCKED = "Visible devices cannot be modified after being initialized"
PHYSICAL_LOCKED = "Physical devices cannot be modified after being initialized"
VIRTUAL_LOCKED = "Virtual devices cannot be modified after being initialized"


def run_small_graph() -> None:
    """Start the runtime the way user code does: the first Session.run of any graph."""
    total = pv.constant(1.0) + pv.constant(2.0)
    assert pv.Session().run(total) == 3.0


def seed_logical_gpus() -> None:
    """The seed's virtual-GPU snippet, word for word but for the module name."""
    gpus = pv.config.list_physical_devices("GPU")
    if gpus:
        # Create 2 virtual GPUs with 1GB memory each
        try:
            pv.config.set_logical_device_configuration(
                gpus[0],
                [
                    pv.config.LogicalDeviceConfiguration(memory_limit=1024),
                    pv.config.LogicalDeviceConfiguration(memory_limit=1024),
                ],
            )
            logical_gpus = pv.config.list_logical_devices("GPU")
            print(len(gpus), "Physical GPU,", len(logical_gpus), "Logical GPUs")
        except RuntimeError as e:
            # Virtual devices must be set before GPUs have been initialized
            print(e)


# -- physical devices ----------------------------------------------------------------------------
def test_without_simulation_there_is_only_the_cpu() -> None:
    devices = pv.config.list_physical_devices()
    assert [(d.name, d.device_type, d.simulated) for d in devices] == [
        ("/physical_device:CPU:0", "CPU", False)
    ]
    assert pv.config.list_physical_devices("GPU") == []
    assert [d.name for d in pv.config.list_logical_devices()] == ["/device:CPU:0"]


def test_simulated_gpus_are_physical_devices_labelled_simulated() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    assert [g.name for g in gpus] == ["/physical_device:GPU:0", "/physical_device:GPU:1"]
    assert [g.index for g in gpus] == [0, 1]
    for gpu in gpus:
        assert gpu.device_type == "GPU"
        assert gpu.simulated is True
        assert "simulated" in repr(gpu)
        assert gpu.memory_bytes == 80 * _GIB
        assert gpu.description == "NVIDIA H100 SXM5 80GB (simulated)"
    cpu = pv.config.list_physical_devices("CPU")[0]
    assert "simulated" not in repr(cpu)
    assert [d.device_type for d in pv.config.list_physical_devices()] == ["CPU", "GPU", "GPU"]


def test_filter_by_type_is_case_insensitive() -> None:
    pv.config.simulate_gpus(2)
    assert pv.config.list_physical_devices("gpu") == pv.config.list_physical_devices("GPU")
    assert len(pv.config.list_physical_devices("gpu")) == 2
    assert [d.name for d in pv.config.list_physical_devices("cpu")] == ["/physical_device:CPU:0"]
    assert pv.config.list_physical_devices("TPU") == []
    assert [d.name for d in pv.config.list_logical_devices("gpu")] == [
        "/device:GPU:0",
        "/device:GPU:1",
    ]
    assert pv.config.experimental.list_physical_devices("gpu") == pv.config.list_physical_devices(
        "GPU"
    )


def test_simulate_gpus_with_a_profile_and_a_memory_limit() -> None:
    pv.config.simulate_gpus(3, profile="K40", memory_limit_mb=2048)
    gpus = pv.config.list_physical_devices("GPU")
    assert len(gpus) == 3
    assert {g.memory_bytes for g in gpus} == {2048 * _MIB}
    assert {g.description for g in gpus} == {"Tesla K40c (simulated)"}
    assert {g.compute_capability for g in gpus} == {"3.5"}


def test_simulate_gpus_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"known profiles: .*H100"):
        pv.config.simulate_gpus(1, profile="GTX9000")
    with pytest.raises(ValueError):
        pv.config.simulate_gpus(-1)
    pv.config.simulate_gpus(0)
    assert pv.config.list_physical_devices("GPU") == []


def test_environment_simulation_is_read_at_the_first_listing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PLACEVIZ_SIMULATED_GPUS", "3")
    gpus = pv.config.list_physical_devices("GPU")
    assert [g.name for g in gpus] == [f"/physical_device:GPU:{i}" for i in range(3)]
    assert all(g.simulated for g in gpus)
    assert {g.memory_bytes for g in gpus} == {get_profile("H100").memory_bytes}


def test_environment_simulation_with_a_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLACEVIZ_SIMULATED_GPUS", "2")
    monkeypatch.setenv("PLACEVIZ_SIMULATED_PROFILE", "T4")
    gpus = pv.config.list_physical_devices("GPU")
    assert len(gpus) == 2
    for gpu in gpus:
        assert gpu.memory_bytes == 16 * _GIB
        assert "Tesla T4" in gpu.description
        assert get_profile("T4").full_name in gpu.description
        assert "(simulated)" in gpu.description
        assert gpu.compute_capability == "7.5"


def test_environment_profile_may_be_a_full_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLACEVIZ_SIMULATED_GPUS", "1")
    monkeypatch.setenv("PLACEVIZ_SIMULATED_PROFILE", "tesla k40c")
    (gpu,) = pv.config.list_physical_devices("GPU")
    assert gpu.description == "Tesla K40c (simulated)"
    assert gpu.memory_bytes == 12 * _GIB


@pytest.mark.parametrize("value", ["two", "-1", "1.5", "2 GPUs"])
def test_bad_environment_count_raises(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("PLACEVIZ_SIMULATED_GPUS", value)
    with pytest.raises(ValueError, match="PLACEVIZ_SIMULATED_GPUS"):
        pv.config.list_physical_devices()


def test_unknown_environment_profile_lists_the_known_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PLACEVIZ_SIMULATED_GPUS", "1")
    monkeypatch.setenv("PLACEVIZ_SIMULATED_PROFILE", "RTX9999")
    with pytest.raises(ValueError, match="RTX9999") as info:
        pv.config.list_physical_devices("GPU")
    for name in PROFILES.values():
        assert name.name in str(info.value)


def test_simulate_gpus_overrides_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLACEVIZ_SIMULATED_GPUS", "4")
    pv.config.simulate_gpus(1, profile="A100")
    (gpu,) = pv.config.list_physical_devices("GPU")
    assert gpu.description == "NVIDIA A100 SXM4 80GB (simulated)"


# -- visibility ----------------------------------------------------------------------------------
def test_set_visible_devices_keeps_one_gpu() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_visible_devices(gpus[0], "GPU")
    logical_gpus = pv.config.list_logical_devices("GPU")
    assert [(d.name, d.device_type) for d in logical_gpus] == [("/device:GPU:0", "GPU")]
    assert pv.config.get_visible_devices("GPU") == [gpus[0]]
    # Hiding does not remove the device from the machine.
    assert pv.config.list_physical_devices("GPU") == gpus
    assert [d.name for d in pv.Session().devices] == [
        "/job:localhost/replica:0/task:0/device:CPU:0",
        "/job:localhost/replica:0/task:0/device:GPU:0",
    ]


def test_visible_gpu_is_renumbered_from_zero() -> None:
    pv.config.simulate_gpus(3)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_visible_devices([gpus[2]], "GPU")
    assert [d.name for d in pv.config.list_logical_devices("GPU")] == ["/device:GPU:0"]
    (gpu,) = [d for d in pv.Session().devices if d.device_type == "GPU"]
    assert gpu.index == 0
    assert gpu.physical == gpus[2]


def test_hiding_all_gpus() -> None:
    pv.config.simulate_gpus(2)
    pv.config.set_visible_devices([], "GPU")
    assert pv.config.list_logical_devices("GPU") == []
    assert pv.config.get_visible_devices("GPU") == []
    assert [d.name for d in pv.config.list_logical_devices()] == ["/device:CPU:0"]
    with pv.Session() as sess:
        product = pv.matmul(pv.constant([[1.0, 2.0]]), pv.constant([[3.0], [4.0]]))
        np.testing.assert_array_equal(sess.run(product), [[11.0]])
        assert sess.placement[product.op.name].endswith("/device:CPU:0")


def test_device_type_of_set_visible_devices_is_case_insensitive() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_visible_devices(gpus[1:], "gpu")
    assert pv.config.get_visible_devices("GPU") == gpus[1:]
    pv.config.set_visible_devices([], "gpu")
    assert pv.config.list_logical_devices("GPU") == []


def test_visible_devices_can_be_changed_again_before_initialization() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_visible_devices([], "GPU")
    pv.config.set_visible_devices(gpus, "GPU")
    assert len(pv.config.list_logical_devices("GPU")) == 2


def test_cpu_cannot_be_hidden() -> None:
    pv.config.simulate_gpus(1)
    gpus = pv.config.list_physical_devices("GPU")
    with pytest.raises(ValueError, match="CPU"):
        pv.config.set_visible_devices([], "CPU")
    with pytest.raises(ValueError, match="CPU"):
        pv.config.set_visible_devices(gpus, "CPU")
    assert [d.name for d in pv.config.list_logical_devices("CPU")] == ["/device:CPU:0"]


def test_unknown_device_is_rejected() -> None:
    pv.config.simulate_gpus(2)
    stranger = PhysicalDevice(name="/physical_device:GPU:9", device_type="GPU", index=9)
    with pytest.raises(ValueError, match="Unrecognized device"):
        pv.config.set_visible_devices(stranger, "GPU")
    with pytest.raises(ValueError, match="Unrecognized device"):
        pv.config.experimental.set_memory_growth(stranger, True)
    with pytest.raises(ValueError, match="Unrecognized device"):
        pv.config.experimental.get_memory_growth(stranger)
    with pytest.raises(ValueError, match="Unrecognized device"):
        pv.config.set_logical_device_configuration(stranger, [LDC(memory_limit=1024)])
    assert len(pv.config.list_logical_devices("GPU")) == 2


# -- logical devices -----------------------------------------------------------------------------
def test_seed_example_splits_one_gpu_into_two(capsys: pytest.CaptureFixture[str]) -> None:
    pv.config.simulate_gpus(1)
    seed_logical_gpus()
    assert capsys.readouterr().out == "1 Physical GPU, 2 Logical GPUs\n"
    logical_gpus = pv.config.list_logical_devices("GPU")
    assert all(isinstance(d, pv.config.LogicalDevice) for d in logical_gpus)
    assert [(d.name, d.device_type) for d in logical_gpus] == [
        ("/device:GPU:0", "GPU"),
        ("/device:GPU:1", "GPU"),
    ]


def test_logical_numbering_follows_physical_order() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_logical_device_configuration(
        gpus[0], [LDC(memory_limit=1024), LDC(memory_limit=1024)]
    )
    assert [d.name for d in pv.config.list_logical_devices("GPU")] == [
        "/device:GPU:0",
        "/device:GPU:1",
        "/device:GPU:2",
    ]
    devices = {d.name.rsplit("device:", 1)[-1]: d for d in pv.Session().devices}
    assert sorted(devices) == ["CPU:0", "GPU:0", "GPU:1", "GPU:2"]
    for name in ("GPU:0", "GPU:1"):
        device = devices[name]
        assert device.memory_limit == _GIB
        assert device.logical is True
        assert device.kind == "simulated"  # simulated wins over logical
        assert device.physical == gpus[0]
        assert device.physical.name == "/physical_device:GPU:0"
    whole = devices["GPU:2"]
    assert whole.physical == gpus[1]
    assert whole.logical is False
    assert whole.memory_limit == gpus[1].memory_bytes
    assert whole.kind == "simulated"
    assert devices["CPU:0"].kind == "real"


def test_ops_on_logical_gpus_run_on_their_parent() -> None:
    pv.config.simulate_gpus(1)
    seed_logical_gpus()
    with pv.device("/GPU:1"):
        total = pv.add(pv.constant(2.0), pv.constant(5.0))
    with pv.Session() as sess:
        assert sess.run(total) == 7.0
        device = sess.placement.device(total.op.name)
    assert device.name == "/job:localhost/replica:0/task:0/device:GPU:1"
    assert device.physical.name == "/physical_device:GPU:0"
    assert device.logical is True


def test_cpu_can_be_split_without_memory_limits() -> None:
    cpu = pv.config.list_physical_devices("CPU")[0]
    pv.config.set_logical_device_configuration(cpu, [LDC(), LDC()])
    assert [d.name for d in pv.config.list_logical_devices("CPU")] == [
        "/device:CPU:0",
        "/device:CPU:1",
    ]


def test_logical_limits_over_the_card_memory_are_rejected() -> None:
    pv.config.simulate_gpus(1, memory_limit_mb=4096)
    (gpu,) = pv.config.list_physical_devices("GPU")
    with pytest.raises(ValueError, match="4096"):
        pv.config.set_logical_device_configuration(
            gpu, [LDC(memory_limit=3000), LDC(memory_limit=3000)]
        )
    with pytest.raises(ValueError):
        pv.config.set_logical_device_configuration(gpu, [LDC(memory_limit=4097)])
    assert pv.config.get_logical_device_configuration(gpu) is None
    assert len(pv.config.list_logical_devices("GPU")) == 1
    # Exactly the card's memory is fine.
    pv.config.set_logical_device_configuration(
        gpu, [LDC(memory_limit=2048), LDC(memory_limit=2048)]
    )
    assert len(pv.config.list_logical_devices("GPU")) == 2


@pytest.mark.parametrize("limit", [None, 0, -5])
def test_gpu_logical_devices_need_a_memory_limit(limit: int | None) -> None:
    pv.config.simulate_gpus(1)
    (gpu,) = pv.config.list_physical_devices("GPU")
    with pytest.raises(ValueError, match="memory limit"):
        pv.config.set_logical_device_configuration(gpu, [LDC(memory_limit=limit)])
    assert pv.config.get_logical_device_configuration(gpu) is None


def test_logical_device_configuration_round_trip() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    assert pv.config.get_logical_device_configuration(gpus[0]) is None
    configs = [LDC(memory_limit=512), LDC(memory_limit=2048)]
    pv.config.set_logical_device_configuration(gpus[0], configs)
    assert pv.config.get_logical_device_configuration(gpus[0]) == configs
    assert pv.config.get_virtual_device_configuration(gpus[0]) == configs
    assert pv.config.get_logical_device_configuration(gpus[1]) is None
    # A later call replaces the configuration; an empty one removes it.
    pv.config.set_virtual_device_configuration(gpus[0], [pv.config.VirtualDeviceConfiguration(64)])
    assert pv.config.get_logical_device_configuration(gpus[0]) == [LDC(memory_limit=64)]
    pv.config.set_logical_device_configuration(gpus[0], [])
    assert pv.config.get_logical_device_configuration(gpus[0]) is None
    assert len(pv.config.list_logical_devices("GPU")) == 2


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(st.integers(1, 4096), min_size=0, max_size=3), min_size=1, max_size=4))
def test_logical_devices_are_numbered_in_physical_order(splits: list[list[int]]) -> None:
    pv.config.reset_devices()
    pv.config.simulate_gpus(len(splits))
    gpus = pv.config.list_physical_devices("GPU")
    for gpu, limits in zip(gpus, splits):
        if limits:
            pv.config.set_logical_device_configuration(gpu, [LDC(memory_limit=m) for m in limits])
    expected = []  # (physical index, memory limit, logical) per logical GPU, in order
    for gpu, limits in zip(gpus, splits):
        if not limits:
            expected.append((gpu.index, gpu.memory_bytes, False))
        else:
            expected.extend((gpu.index, m * _MIB, len(limits) > 1) for m in limits)
    logical = pv.config.list_logical_devices("GPU")
    assert [d.name for d in logical] == [f"/device:GPU:{i}" for i in range(len(expected))]
    session_gpus = [d for d in pv.Session().devices if d.device_type == "GPU"]
    assert [d.index for d in session_gpus] == list(range(len(expected)))
    assert [(d.physical.index, d.memory_limit, d.logical) for d in session_gpus] == expected
    assert all(d.kind == "simulated" for d in session_gpus)


# -- memory growth -------------------------------------------------------------------------------
def test_memory_growth_set_and_get() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    assert pv.config.experimental.get_memory_growth(gpus[0]) is False
    pv.config.experimental.set_memory_growth(gpus[0], True)
    assert pv.config.experimental.get_memory_growth(gpus[0]) is True
    assert pv.config.experimental.get_memory_growth(gpus[1]) is False
    pv.config.experimental.set_memory_growth(gpus[0], False)
    assert pv.config.experimental.get_memory_growth(gpus[0]) is False


def test_force_gpu_allow_growth_environment_sets_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    assert [pv.config.experimental.get_memory_growth(g) for g in gpus] == [True, True]
    pv.config.experimental.set_memory_growth(gpus[1], False)
    assert pv.config.experimental.get_memory_growth(gpus[1]) is False
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "false")
    assert pv.config.experimental.get_memory_growth(gpus[0]) is False


def test_memory_growth_only_for_gpus() -> None:
    pv.config.simulate_gpus(1)
    cpu = pv.config.list_physical_devices("CPU")[0]
    with pytest.raises(ValueError, match="non-GPU"):
        pv.config.experimental.set_memory_growth(cpu, True)
    with pytest.raises(ValueError, match="non-GPU"):
        pv.config.experimental.get_memory_growth(cpu)


def test_memory_growth_and_virtual_devices_exclude_each_other() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_logical_device_configuration(gpus[0], [LDC(memory_limit=1024)] * 2)
    with pytest.raises(ValueError, match="virtual devices"):
        pv.config.experimental.set_memory_growth(gpus[0], True)
    pv.config.experimental.set_memory_growth(gpus[1], True)
    with pytest.raises(ValueError, match="memory growth"):
        pv.config.set_logical_device_configuration(gpus[1], [LDC(memory_limit=1024)])
    assert pv.config.get_logical_device_configuration(gpus[1]) is None


def test_memory_growth_differing_between_gpus_fails_at_initialization() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.experimental.set_memory_growth(gpus[0], True)  # setting it is not the error
    total = pv.constant(1.0) + pv.constant(2.0)
    sess = pv.Session()
    with pytest.raises(ValueError, match="Memory growth cannot differ between GPU devices"):
        sess.run(total)
    # The failed start did not lock the configuration: fixing it lets a new session run.
    pv.config.experimental.set_memory_growth(gpus[1], True)
    assert pv.Session().run(total) == 3.0
    with pytest.raises(RuntimeError, match=PHYSICAL_LOCKED):
        pv.config.experimental.set_memory_growth(gpus[1], False)


def test_memory_growth_of_a_hidden_gpu_does_not_count() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.experimental.set_memory_growth(gpus[0], True)
    pv.config.set_visible_devices(gpus[0], "GPU")
    run_small_graph()


def test_memory_growth_differing_from_the_environment_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.experimental.set_memory_growth(gpus[1], False)
    with pytest.raises(ValueError, match="Memory growth cannot differ"):
        run_small_graph()


# -- the initialized lock ------------------------------------------------------------------------
def test_configuration_is_locked_after_the_first_run() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    run_small_graph()
    with pytest.raises(RuntimeError, match=VISIBLE_LOCKED):
        pv.config.set_visible_devices(gpus[0], "GPU")
    with pytest.raises(RuntimeError, match=PHYSICAL_LOCKED):
        pv.config.experimental.set_memory_growth(gpus[0], True)
    with pytest.raises(RuntimeError, match=VIRTUAL_LOCKED):
        pv.config.set_logical_device_configuration(gpus[0], [LDC(memory_limit=1024)] * 2)
    with pytest.raises(RuntimeError, match=PHYSICAL_LOCKED):
        pv.config.simulate_gpus(4)
    # Nothing changed, and reading is still allowed.
    assert len(pv.config.list_logical_devices("GPU")) == 2
    assert pv.config.experimental.get_memory_growth(gpus[0]) is False
    assert pv.config.get_logical_device_configuration(gpus[0]) is None


def test_seed_try_except_prints_the_error_after_initialization(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pv.config.simulate_gpus(1)
    run_small_graph()
    seed_logical_gpus()
    assert capsys.readouterr().out == VIRTUAL_LOCKED + "\n"
    assert len(pv.config.list_logical_devices("GPU")) == 1


def test_seed_memory_growth_snippet_after_initialization(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pv.config.simulate_gpus(2)
    run_small_graph()
    gpus = pv.config.list_physical_devices("GPU")
    if gpus:
        try:
            # Currently, memory growth needs to be the same across GPUs
            for gpu in gpus:
                pv.config.experimental.set_memory_growth(gpu, True)
            logical_gpus = pv.config.list_logical_devices("GPU")
            print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs")
        except RuntimeError as e:
            # Memory growth must be set before GPUs have been initialized
            print(e)
    assert capsys.readouterr().out == PHYSICAL_LOCKED + "\n"


def test_configuration_is_allowed_before_any_run(capsys: pytest.CaptureFixture[str]) -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    assert len(pv.config.list_logical_devices()) == 3
    sess = pv.Session()  # creating a session does not start the runtime
    total = pv.constant(1.0) + pv.constant(2.0)
    pv.config.set_visible_devices(gpus[0], "GPU")
    pv.config.experimental.set_memory_growth(gpus[0], True)
    pv.config.set_visible_devices(gpus, "GPU")
    pv.config.experimental.set_memory_growth(gpus[0], False)
    seed_logical_gpus()
    assert capsys.readouterr().out == "2 Physical GPU, 3 Logical GPUs\n"
    # The session keeps the devices it was created with; its first run locks the rest.
    assert len([d for d in sess.devices if d.device_type == "GPU"]) == 2
    assert sess.run(total) == 3.0
    with pytest.raises(RuntimeError, match=VISIBLE_LOCKED):
        pv.config.set_visible_devices(gpus[0], "GPU")


def test_reset_devices_unlocks() -> None:
    pv.config.simulate_gpus(2)
    run_small_graph()
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_visible_devices(gpus[1], "GPU")
    pv.config.experimental.set_memory_growth(gpus[1], True)
    assert [d.name for d in pv.config.list_logical_devices("GPU")] == ["/device:GPU:0"]


def test_reset_devices_forgets_the_configuration() -> None:
    pv.config.simulate_gpus(2)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_visible_devices([], "GPU")
    pv.config.set_soft_device_placement(True)
    pv.config.reset_devices()
    assert pv.config.list_physical_devices("GPU") == []
    assert pv.config.get_soft_device_placement() is False
    pv.config.simulate_gpus(2)
    assert pv.config.get_visible_devices("GPU") == gpus


# -- soft placement and the placement log --------------------------------------------------------
def test_soft_device_placement_set_and_get() -> None:
    assert pv.config.get_soft_device_placement() is False
    pv.config.set_soft_device_placement(True)
    assert pv.config.get_soft_device_placement() is True
    pv.config.set_soft_device_placement(False)
    assert pv.config.get_soft_device_placement() is False


def test_soft_placement_applies_to_sessions_created_afterwards() -> None:
    pv.config.simulate_gpus(2)
    with pv.device("/device:GPU:7"):
        product = pv.matmul(pv.constant([[1.0, 2.0]]), pv.constant([[3.0], [4.0]]))
    before = pv.Session()
    pv.config.set_soft_device_placement(True)
    after = pv.Session()
    np.testing.assert_array_equal(after.run(product), [[11.0]])
    reason = after.placement.explain(product.op.name)
    assert reason.kind == "soft"
    assert after.placement[product.op.name] == "/job:localhost/replica:0/task:0/device:GPU:0"
    with pytest.raises(InvalidArgumentError, match="GPU:7"):
        before.run(product)


def test_hard_placement_on_a_missing_gpu_fails() -> None:
    pv.config.simulate_gpus(2)
    with pv.device("/device:GPU:7"):
        product = pv.matmul(pv.constant([[1.0]]), pv.constant([[2.0]]))
    with pytest.raises(InvalidArgumentError, match="GPU:7"):
        pv.Session().run(product)


def test_log_device_placement_writes_each_op_once(capsys: pytest.CaptureFixture[str]) -> None:
    pv.config.simulate_gpus(2)
    quiet = pv.Session()
    pv.debugging.set_log_device_placement(True)
    assert pv.debugging.get_log_device_placement() is True
    a = pv.constant([[1.0, 2.0]], name="a")
    with pv.device("/cpu:0"):
        b = pv.constant([[3.0], [4.0]], name="b")
    product = pv.matmul(a, b, name="product")
    quiet.run(product)
    assert capsys.readouterr().err == ""
    sess = pv.Session()
    for _ in range(3):
        sess.run(product)
    err = capsys.readouterr().err
    assert err.count("Device mapping:") == 1
    gpu0 = "/job:localhost/replica:0/task:0/device:GPU:0"
    cpu0 = "/job:localhost/replica:0/task:0/device:CPU:0"
    assert f"{gpu0} -> device: 0, name: NVIDIA H100 SXM5 80GB (simulated)" in err
    lines = err.splitlines()
    assert lines.count(f"a: (Const): {gpu0}") == 1
    assert lines.count(f"b: (Const): {cpu0}") == 1
    assert lines.count(f"product: (MatMul): {gpu0}") == 1
    # An op created later is logged at its first placement, the others are not repeated.
    doubled = pv.multiply(product, 2.0, name="doubled")
    np.testing.assert_array_equal(sess.run(doubled), [[22.0]])
    lines = capsys.readouterr().err.splitlines()
    assert f"doubled: (Mul): {gpu0}" in lines
    assert not any(line.startswith(("a:", "b:", "product:")) for line in lines)
    assert "Device mapping:" not in lines


def test_turning_the_log_off_again(capsys: pytest.CaptureFixture[str]) -> None:
    pv.debugging.set_log_device_placement(True)
    pv.Session().run(pv.add(pv.constant(1.0), 1.0, name="loud"))
    assert any(line.startswith("loud: (AddV2)") for line in capsys.readouterr().err.splitlines())
    pv.debugging.set_log_device_placement(False)
    assert pv.debugging.get_log_device_placement() is False
    pv.Session().run(pv.add(pv.constant(1.0), 1.0, name="quiet"))
    assert "quiet" not in capsys.readouterr().err


def test_logical_devices_of_simulated_gpus_are_labelled() -> None:
    pv.config.simulate_gpus(1)
    (gpu,) = pv.config.list_logical_devices("GPU")
    assert gpu.simulated and "simulated=True" in repr(gpu)
    (cpu,) = pv.config.list_logical_devices("CPU")
    assert (
        not cpu.simulated and repr(cpu) == "LogicalDevice(name='/device:CPU:0', device_type='CPU')"
    )
