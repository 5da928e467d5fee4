"""Datasheet figures of real GPUs, used to give simulated GPUs believable sizes and speeds.

Units: FLOP/s, bytes, bytes/s, seconds. Capacities are binary (a "16 GB" card has 16 GiB, as its
memory chips do); bandwidths are decimal, as datasheets quote them. ``host_link_bandwidth`` is one
direction of the PCIe link to the host: half the bidirectional figure datasheets print;
``peer_link_bandwidth`` is one direction of the link to another card of the same kind (NVLink
where the card has it, else the same PCIe link through the host's switch), also half the
datasheet's total.
``launch_latency_s`` is a typical kernel-launch overhead, not a datasheet figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType

_GIB = 1 << 30
_TERA = 1e12
_GIGA = 1e9
# One direction of an x16 link, per PCIe generation.
_PCIE2_X16 = 8 * _GIGA
_PCIE3_X16 = 16 * _GIGA
_PCIE4_X16 = 32 * _GIGA
_PCIE5_X16 = 64 * _GIGA
_LAUNCH_LATENCY_S = 5e-6


@dataclass(frozen=True)
class GPUProfile:
    """The figures a cost model needs to time kernels and transfers on a simulated GPU."""

    name: str
    full_name: str
    fp32_flops: float
    fp16_flops: float
    memory_bytes: int
    memory_bandwidth: float
    host_link_bandwidth: float
    peer_link: str  # what joins two such cards in one machine: "NVLink 4" or "PCIe 5.0 x16"
    peer_link_bandwidth: float
    launch_latency_s: float
    compute_capability: str
    source: str  # where the figures come from: the datasheet and its column

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, str) and not value:
                raise ValueError(f"GPUProfile {field.name} must not be empty")
            if not isinstance(value, str) and not value > 0:
                raise ValueError(f"GPUProfile {field.name} must be positive, got {value!r}")


_TABLE = (
    GPUProfile(
        name="H100",
        full_name="NVIDIA H100 SXM5 80GB",
        fp32_flops=67 * _TERA,
        fp16_flops=989.4 * _TERA,
        memory_bytes=80 * _GIB,
        memory_bandwidth=3.35 * _TERA,
        host_link_bandwidth=_PCIE5_X16,
        peer_link="NVLink 4",
        peer_link_bandwidth=450 * _GIGA,
        launch_latency_s=_LAUNCH_LATENCY_S,
        compute_capability="9.0",
        source=(
            "NVIDIA H100 Tensor Core GPU datasheet, SXM5 column (FP16 tensor: dense, i.e. "
            "half of the with-sparsity figure)."
        ),
    ),
    GPUProfile(
        name="H100 PCIe",
        full_name="NVIDIA H100 PCIe 80GB",
        fp32_flops=51 * _TERA,
        fp16_flops=756 * _TERA,
        memory_bytes=80 * _GIB,
        memory_bandwidth=2.0 * _TERA,
        host_link_bandwidth=_PCIE5_X16,
        peer_link="PCIe 5.0 x16",
        peer_link_bandwidth=_PCIE5_X16,
        launch_latency_s=_LAUNCH_LATENCY_S,
        compute_capability="9.0",
        source=(
            "NVIDIA H100 Tensor Core GPU datasheet, PCIe column (FP16 tensor: dense; the "
            "optional NVLink bridge between pairs of cards is not assumed)."
        ),
    ),
    GPUProfile(
        name="H200",
        full_name="NVIDIA H200 SXM 141GB",
        fp32_flops=67 * _TERA,
        fp16_flops=989.4 * _TERA,
        memory_bytes=141 * _GIB,
        memory_bandwidth=4.8 * _TERA,
        host_link_bandwidth=_PCIE5_X16,
        peer_link="NVLink 4",
        peer_link_bandwidth=450 * _GIGA,
        launch_latency_s=_LAUNCH_LATENCY_S,
        compute_capability="9.0",
        source="NVIDIA H200 Tensor Core GPU datasheet, SXM column (FP16 tensor: dense).",
    ),
    GPUProfile(
        name="A100",
        full_name="NVIDIA A100 SXM4 80GB",
        fp32_flops=19.5 * _TERA,
        fp16_flops=312 * _TERA,
        memory_bytes=80 * _GIB,
        memory_bandwidth=2039 * _GIGA,
        host_link_bandwidth=_PCIE4_X16,
        peer_link="NVLink 3",
        peer_link_bandwidth=300 * _GIGA,
        launch_latency_s=_LAUNCH_LATENCY_S,
        compute_capability="8.0",
        source=(
            "NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM column (FP16 tensor: dense)."
        ),
    ),
    GPUProfile(
        name="A100 40GB",
        full_name="NVIDIA A100 SXM4 40GB",
        fp32_flops=19.5 * _TERA,
        fp16_flops=312 * _TERA,
        memory_bytes=40 * _GIB,
        memory_bandwidth=1555 * _GIGA,
        host_link_bandwidth=_PCIE4_X16,
        peer_link="NVLink 3",
        peer_link_bandwidth=300 * _GIGA,
        launch_latency_s=_LAUNCH_LATENCY_S,
        compute_capability="8.0",
        source="NVIDIA A100 Tensor Core GPU datasheet, A100 40GB SXM column (FP16 tensor: dense).",
    ),
    GPUProfile(
        name="V100",
        full_name="Tesla V100-SXM2-16GB",
        fp32_flops=15.7 * _TERA,
        fp16_flops=125 * _TERA,
        memory_bytes=16 * _GIB,
        memory_bandwidth=900 * _GIGA,
        host_link_bandwidth=_PCIE3_X16,
        peer_link="NVLink 2",
        peer_link_bandwidth=150 * _GIGA,
        launch_latency_s=_LAUNCH_LATENCY_S,
        compute_capability="7.0",
        source="NVIDIA Tesla V100 datasheet, SXM2 16GB (FP16: tensor-core peak).",
    ),
    GPUProfile(
        name="T4",
        full_name="Tesla T4",
        fp32_flops=8.1 * _TERA,
        fp16_flops=65 * _TERA,
        memory_bytes=16 * _GIB,
        memory_bandwidth=320 * _GIGA,
        host_link_bandwidth=_PCIE3_X16,
        peer_link="PCIe 3.0 x16",
        peer_link_bandwidth=_PCIE3_X16,
        launch_latency_s=_LAUNCH_LATENCY_S,
        compute_capability="7.5",
        source="NVIDIA T4 Tensor Core GPU datasheet (FP16: mixed-precision tensor-core peak).",
    ),
    GPUProfile(
        name="L4",
        full_name="NVIDIA L4",
        fp32_flops=30.3 * _TERA,
        fp16_flops=121 * _TERA,
        memory_bytes=24 * _GIB,
        memory_bandwidth=300 * _GIGA,
        host_link_bandwidth=_PCIE4_X16,
        peer_link="PCIe 4.0 x16",
        peer_link_bandwidth=_PCIE4_X16,
        launch_latency_s=_LAUNCH_LATENCY_S,
        compute_capability="8.9",
        source=(
            "NVIDIA L4 Tensor Core GPU datasheet (FP16 tensor: dense, half of the "
            "with-sparsity 242 TFLOPS)."
        ),
    ),
    GPUProfile(
        name="K40",
        full_name="Tesla K40c",
        fp32_flops=4.29 * _TERA,
        fp16_flops=4.29 * _TERA,
        memory_bytes=12 * _GIB,
        memory_bandwidth=288 * _GIGA,
        host_link_bandwidth=_PCIE3_X16,
        peer_link="PCIe 3.0 x16",
        peer_link_bandwidth=_PCIE3_X16,
        launch_latency_s=_LAUNCH_LATENCY_S,
        compute_capability="3.5",
        source=(
            "NVIDIA Tesla K40 GPU accelerator board specification, K40c (Kepler has no FP16 "
            "arithmetic, so FP16 runs at the FP32 rate; peak at base clock)."
        ),
    ),
    GPUProfile(
        name="K20m",
        full_name="Tesla K20m",
        fp32_flops=3.52 * _TERA,
        fp16_flops=3.52 * _TERA,
        memory_bytes=5 * _GIB,
        memory_bandwidth=208 * _GIGA,
        host_link_bandwidth=_PCIE2_X16,
        peer_link="PCIe 2.0 x16",
        peer_link_bandwidth=_PCIE2_X16,
        launch_latency_s=_LAUNCH_LATENCY_S,
        compute_capability="3.5",
        source=(
            "NVIDIA Tesla K20/K20X GPU accelerators board specification, K20m (no FP16 arithmetic)."
        ),
    ),
    GPUProfile(
        name="K520",
        full_name="GRID K520",
        fp32_flops=2.458 * _TERA,
        fp16_flops=2.458 * _TERA,
        memory_bytes=4 * _GIB,
        memory_bandwidth=160 * _GIGA,
        host_link_bandwidth=_PCIE3_X16,
        peer_link="PCIe 3.0 x16",
        peer_link_bandwidth=_PCIE3_X16,
        launch_latency_s=_LAUNCH_LATENCY_S,
        compute_capability="3.0",
        source=(
            "NVIDIA GRID K520 datasheet: the board carries two GK104 GPUs; one of them, as "
            "CUDA (and an AWS g2 instance) shows it: 1536 cores at 800 MHz, 4 GB, 160 GB/s. "
            "No FP16 arithmetic."
        ),
    ),
)


@dataclass(frozen=True)
class HostProfile:
    """What the cost-model placer assumes of the host CPU, with a GPU profile's field names so
    one roofline times both: a few cores of a server running NumPy (BLAS for products, one core
    for elementwise ops), and placeviz's own dispatch per op instead of a kernel launch. Typical
    figures, not measured: the placer compares orders of magnitude, and a CPU op's time in a run
    is always measured."""

    name: str = "host CPU"
    source: str = "typical figures for a few server cores running NumPy and BLAS, not a datasheet"
    fp32_flops: float = 100 * _GIGA
    fp16_flops: float = 10 * _GIGA  # NumPy has no float16 arithmetic: it converts to float32
    memory_bandwidth: float = 20 * _GIGA
    # A small op's whole cost in a traced run: placeviz's step, NumPy's call and the clock reads
    # (2-5 µs measured; a GPU's kernel launch is 5 µs).
    launch_latency_s: float = 4e-6


HOST_PROFILE = HostProfile()


def _index(profiles: Iterable[GPUProfile], key_of: str) -> Mapping[str, GPUProfile]:
    table: dict[str, GPUProfile] = {}
    for profile in profiles:
        key = getattr(profile, key_of).upper()
        if key in table:
            raise ValueError(f"Two GPU profiles share the {key_of} {key!r}")
        table[key] = profile
    return MappingProxyType(table)


PROFILES: Mapping[str, GPUProfile] = _index(_TABLE, "name")
_BY_FULL_NAME = _index(_TABLE, "full_name")
DEFAULT_PROFILE = "H100"


def get_profile(name: str) -> GPUProfile:
    """Look a profile up by short name ("K40") or full name ("Tesla K40c"), as seeds name either."""
    key = name.upper()
    profile = PROFILES.get(key) or _BY_FULL_NAME.get(key)
    if profile is None:
        known = ", ".join(p.name for p in PROFILES.values())
        raise ValueError(f"Unknown GPU profile {name!r}; known profiles: {known}")
    return profile
