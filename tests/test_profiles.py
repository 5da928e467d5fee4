"""GPU profiles: the table is sane and lookups forgive case but not unknown names."""

from __future__ import annotations

import dataclasses

import pytest

from placeviz.devices.profiles import DEFAULT_PROFILE, PROFILES, GPUProfile, get_profile

NUMERIC_FIELDS = (
    "fp32_flops",
    "fp16_flops",
    "memory_bytes",
    "memory_bandwidth",
    "host_link_bandwidth",
    "peer_link_bandwidth",
    "launch_latency_s",
)


@pytest.mark.parametrize("profile", PROFILES.values(), ids=lambda p: p.name)
def test_figures_are_positive_and_fp16_is_not_slower(profile: GPUProfile) -> None:
    for name in NUMERIC_FIELDS:
        assert getattr(profile, name) > 0, name
    assert isinstance(profile.memory_bytes, int)
    assert profile.fp16_flops >= profile.fp32_flops
    assert profile.launch_latency_s < 1e-3
    major, minor = profile.compute_capability.split(".")
    assert major.isdigit()
    assert minor.isdigit()


def test_table_is_keyed_by_upper_case_name_and_names_are_unique() -> None:
    assert all(key == profile.name.upper() for key, profile in PROFILES.items())
    full_names = [profile.full_name.upper() for profile in PROFILES.values()]
    assert len(set(full_names)) == len(full_names)


def test_table_covers_the_seeds_and_current_cards() -> None:
    wanted = {"H100", "H100 PCIE", "H200", "A100", "A100 40GB", "V100", "L4", "T4"}
    assert wanted | {"K40", "K20M", "K520"} <= PROFILES.keys()
    assert DEFAULT_PROFILE.upper() in PROFILES
    assert get_profile("K40").full_name == "Tesla K40c"
    assert get_profile("K20m").full_name == "Tesla K20m"
    assert get_profile("K520").full_name == "GRID K520"


@pytest.mark.parametrize("profile", PROFILES.values(), ids=lambda p: p.name)
def test_every_profile_says_which_datasheet_its_figures_come_from(profile: GPUProfile) -> None:
    assert "datasheet" in profile.source or "specification" in profile.source


def test_a_real_card_is_timed_with_its_own_profile() -> None:
    from placeviz.devices.context import _profile_for

    assert _profile_for("NVIDIA H100 PCIe").name == "H100 PCIe"
    assert _profile_for("NVIDIA H100 80GB HBM3").name == "H100"
    assert _profile_for("NVIDIA L4").name == "L4"


def test_table_is_read_only() -> None:
    with pytest.raises(TypeError):
        PROFILES["X"] = PROFILES["H100"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        PROFILES["H100"].fp32_flops = 1.0  # type: ignore[misc]


@pytest.mark.parametrize("name", ["h100", "H100", "k20M", "Tesla K40c", "grid k520"])
def test_get_profile_is_case_insensitive_and_takes_full_names(name: str) -> None:
    profile = get_profile(name)
    assert name.upper() in (profile.name.upper(), profile.full_name.upper())


def test_get_profile_lists_known_names_on_unknown_one() -> None:
    with pytest.raises(ValueError) as info:
        get_profile("GTX 480")
    message = str(info.value)
    assert "'GTX 480'" in message
    for profile in PROFILES.values():
        assert profile.name in message


@pytest.mark.parametrize(
    ("field", "value"),
    [("fp32_flops", 0.0), ("memory_bytes", -1), ("launch_latency_s", float("nan")), ("name", "")],
)
def test_profile_rejects_non_positive_figures_and_empty_names(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(PROFILES["T4"], **{field: value})
