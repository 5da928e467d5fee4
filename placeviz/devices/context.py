"""The process-wide device context: which devices exist, which are visible, how they are split.

This is TensorFlow 2's ``tf.config`` state. It starts unlocked; the first ``Session.run``
initializes the runtime, after which visibility, memory growth and logical (virtual) devices can no
longer change, with TensorFlow's error wording. placeviz's one extension is simulated GPUs, for
machines without one: they are physical devices like real ones and are labelled wherever listed.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from placeviz.devices import cuda
from placeviz.devices.profiles import DEFAULT_PROFILE, PROFILES, GPUProfile, get_profile
from placeviz.devices.spec import DeviceSpec

_MIB = 1 << 20
# What a process-wide CPU device accounts against: the host's memory is not modeled as a limit.
_HOST_MEMORY_BYTES = 1 << 40


@dataclass(frozen=True)
class PhysicalDevice:
    """A device of the machine, named as TensorFlow names it: ``/physical_device:GPU:0``."""

    name: str
    device_type: str
    index: int = 0
    memory_bytes: int = _HOST_MEMORY_BYTES
    description: str = "host"
    simulated: bool = False
    profile: GPUProfile | None = field(default=None, compare=False)
    cuda_ordinal: int | None = None
    pci_bus_id: str = ""
    compute_capability: str = ""

    def __repr__(self) -> str:
        extra = (
            f", simulated={self.profile.name if self.profile else True!r}" if self.simulated else ""
        )
        return f"PhysicalDevice(name={self.name!r}, device_type={self.device_type!r}{extra})"


@dataclass(frozen=True)
class LogicalDevice:
    """A device the runtime uses, named ``/device:GPU:0``; several may share one physical GPU."""

    name: str
    device_type: str
    simulated: bool = field(default=False, compare=False)

    def __repr__(self) -> str:
        extra = ", simulated=True" if self.simulated else ""
        return f"LogicalDevice(name={self.name!r}, device_type={self.device_type!r}{extra})"


@dataclass(frozen=True)
class LogicalDeviceConfiguration:
    """One logical device carved from a physical one; ``memory_limit`` is in MiB."""

    memory_limit: int | None = None
    experimental_priority: int | None = None
    experimental_device_ordinal: int | None = None


VirtualDeviceConfiguration = LogicalDeviceConfiguration


@dataclass(frozen=True)
class Device:
    """A runtime device of one session: full name, where it lives and what it may hold."""

    spec: DeviceSpec
    physical: PhysicalDevice
    memory_limit: int
    logical: bool  # carved from a physical device that has several logical devices

    @functools.cached_property
    def name(self) -> str:
        """The full name, formatted once: plans and traces ask for it per op."""
        return self.spec.to_string()

    @property
    def device_type(self) -> str:
        return self.spec.device_type or ""

    @property
    def index(self) -> int:
        return self.spec.device_index or 0

    @property
    def simulated(self) -> bool:
        return self.physical.simulated

    @property
    def kind(self) -> str:
        """'simulated', 'logical' or 'real' — how the inspector and the log label the device."""
        if self.physical.simulated:
            return "simulated"
        return "logical" if self.logical else "real"

    @property
    def backend(self) -> str:
        return "cupy" if self.physical.cuda_ordinal is not None else "numpy"

    def with_spec(self, spec: DeviceSpec, memory_limit: int | None = None) -> Device:
        limit = self.memory_limit if memory_limit is None else memory_limit
        return Device(spec, self.physical, limit, self.logical)


class DeviceContext:
    """What ``pv.config`` reads and writes. One per process (``context()``)."""

    def __init__(self) -> None:
        self._simulation: tuple[int, str, int | None] | None = None
        self._physical: list[PhysicalDevice] | None = None
        # The same devices as a set: membership checks stay constant-time with 20,000 GPUs.
        self._known: frozenset[PhysicalDevice] = frozenset()
        self._visible: dict[str, list[PhysicalDevice]] = {}
        self._logical: dict[str, list[LogicalDeviceConfiguration]] = {}
        self._memory_growth: dict[str, bool] = {}
        self._initialized = False
        self.soft_placement = False
        self.log_device_placement = False

    # -- physical devices ----------------------------------------------------------------------
    def simulate_gpus(
        self, n: int, profile: str = DEFAULT_PROFILE, memory_limit_mb: int | None = None
    ) -> None:
        """Replace the machine's GPUs with ``n`` simulated ones of a datasheet profile."""
        self._check_unlocked("Physical")
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"simulate_gpus needs a number of GPUs >= 0, got {n!r}")
        get_profile(profile)
        self._simulation = (n, profile, memory_limit_mb)
        self._physical = None
        self._visible.clear()
        self._logical.clear()
        self._memory_growth.clear()

    def simulation(self) -> tuple[int, str] | None:
        """The simulated GPUs this context has (count, profile), or None (real GPUs, if any)."""
        found = self._simulation or _simulation_from_environment()
        return (found[0], found[1]) if found else None

    def provide_gpus(
        self, wanted: int, profile: str = DEFAULT_PROFILE, simulate: bool = False
    ) -> str:
        """Give this context ``wanted`` GPUs, and say how (placeviz only; the CLI and the magic).

        Real GPUs when there are enough; logical GPUs carved from the first real one when there
        are fewer (the others hidden); simulated GPUs of ``profile`` when there is none.
        """
        real = 0 if simulate else len(cuda.discover())
        if real == 0:
            self.simulate_gpus(wanted, profile)
            return f"{wanted} simulated {profile} GPU(s)"
        gpus = self.list_physical_devices("GPU")
        if real >= wanted:
            self.set_visible_devices(gpus[:wanted], "GPU")
            return f"{wanted} real GPU(s)"
        share = int(gpus[0].memory_bytes // wanted) >> 20
        self.set_visible_devices(gpus[:1], "GPU")
        self.set_logical_device_configuration(
            gpus[0], [LogicalDeviceConfiguration(memory_limit=share) for _ in range(wanted)]
        )
        return f"{wanted} logical GPUs carved from 1 real GPU ({share} MiB each)"

    def list_physical_devices(self, device_type: str | None = None) -> list[PhysicalDevice]:
        return _of_type(self._discover(), device_type)

    def _discover(self) -> list[PhysicalDevice]:
        if self._physical is None:
            cpu = PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")
            self._physical = [cpu, *self._gpus()]
            self._known = frozenset(self._physical)
        return self._physical

    def _gpus(self) -> list[PhysicalDevice]:
        simulation = self._simulation or _simulation_from_environment()
        if simulation is not None:
            n, profile_name, memory_limit_mb = simulation
            profile = get_profile(profile_name)
            memory = memory_limit_mb * _MIB if memory_limit_mb else profile.memory_bytes
            return [
                PhysicalDevice(
                    name=f"/physical_device:GPU:{i}",
                    device_type="GPU",
                    index=i,
                    memory_bytes=memory,
                    description=f"{profile.full_name} (simulated)",
                    simulated=True,
                    profile=profile,
                    pci_bus_id=f"simulated:{i}",
                    compute_capability=profile.compute_capability,
                )
                for i in range(n)
            ]
        return [
            PhysicalDevice(
                name=f"/physical_device:GPU:{i}",
                device_type="GPU",
                index=i,
                memory_bytes=info.memory_bytes,
                description=info.name,
                profile=_profile_for(info.name),
                cuda_ordinal=info.ordinal,
                pci_bus_id=info.pci_bus_id,
                compute_capability=info.compute_capability,
            )
            for i, info in enumerate(cuda.discover())
        ]

    # -- visibility ----------------------------------------------------------------------------
    def set_visible_devices(
        self, devices: PhysicalDevice | Iterable[PhysicalDevice], device_type: str | None = None
    ) -> None:
        chosen = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
        for device in chosen:
            self._require_known(device)
        types = {device_type.upper()} if device_type else {d.device_type for d in chosen}
        if "CPU" in types and not any(d.device_type == "CPU" for d in chosen):
            raise ValueError("CPU must always be visible")
        wanted = {kind: [d for d in chosen if d.device_type == kind] for kind in types}
        if all(self.get_visible_devices(kind) == devs for kind, devs in wanted.items()):
            return  # TensorFlow accepts a call that changes nothing, even after initialization
        self._check_unlocked("Visible")
        self._visible.update(wanted)

    def get_visible_devices(self, device_type: str | None = None) -> list[PhysicalDevice]:
        chosen = {kind: set(devices) for kind, devices in self._visible.items()}
        visible = [
            d for d in self._discover() if d.device_type not in chosen or d in chosen[d.device_type]
        ]
        return _of_type(visible, device_type)

    # -- memory growth and logical devices -----------------------------------------------------
    def set_memory_growth(self, device: PhysicalDevice, enable: bool) -> None:
        self._require_known(device)
        if device.device_type == "GPU" and self.get_memory_growth(device) == bool(enable):
            return  # unchanged: allowed even after initialization, as in TensorFlow
        self._check_unlocked("Physical")
        if device.device_type != "GPU":
            raise ValueError(f"Cannot set memory growth on non-GPU devices: {device.name}")
        if self._logical.get(device.name) and enable:
            raise ValueError("Cannot set memory growth on device when virtual devices configured")
        self._memory_growth[device.name] = bool(enable)

    def get_memory_growth(self, device: PhysicalDevice) -> bool:
        self._require_known(device)
        if device.device_type != "GPU":
            raise ValueError(f"Cannot get memory growth on non-GPU devices: {device.name}")
        return self._memory_growth.get(device.name, forced_memory_growth())

    def set_logical_device_configuration(
        self, device: PhysicalDevice, logical_devices: Sequence[LogicalDeviceConfiguration] | None
    ) -> None:
        self._require_known(device)
        configs = list(logical_devices or [])
        if configs == (self._logical.get(device.name) or []):
            return  # unchanged: allowed even after initialization, as in TensorFlow
        self._check_unlocked("Virtual")
        if device.device_type == "GPU":
            if configs and self._memory_growth.get(device.name):
                raise ValueError(
                    "Cannot set memory growth on device when virtual devices configured"
                )
            for config in configs:
                if config.memory_limit is None or config.memory_limit <= 0:
                    raise ValueError(
                        "Setting memory limit is required for GPU virtual devices; got "
                        f"{config.memory_limit!r} for {device.name}"
                    )
            total = sum((c.memory_limit or 0) * _MIB for c in configs)
            if total > device.memory_bytes:
                raise ValueError(
                    f"Logical devices of {device.name} ask for {total // _MIB} MiB in all, more "
                    f"than its {device.memory_bytes // _MIB} MiB"
                )
        self._logical[device.name] = configs

    def get_logical_device_configuration(
        self, device: PhysicalDevice
    ) -> list[LogicalDeviceConfiguration] | None:
        self._require_known(device)
        return list(self._logical[device.name]) if self._logical.get(device.name) else None

    def list_logical_devices(self, device_type: str | None = None) -> list[LogicalDevice]:
        return [
            LogicalDevice(name=d.spec.to_string(), device_type=d.device_type, simulated=d.simulated)
            for d in self.devices(local_prefix=False)
            if device_type is None or d.device_type == device_type.upper()
        ]

    def devices(self, local_prefix: bool = True) -> list[Device]:
        """The runtime devices: each visible physical device, split as configured, numbered."""
        base = _process_task if local_prefix else DeviceSpec()
        counters: dict[str, int] = {}
        result = []
        for physical in self.get_visible_devices():
            configs = self._logical.get(physical.name) or [LogicalDeviceConfiguration()]
            for config in configs:
                index = counters.get(physical.device_type, 0)
                counters[physical.device_type] = index + 1
                spec = base.replace(device_type=physical.device_type, device_index=index)
                limit = config.memory_limit * _MIB if config.memory_limit else physical.memory_bytes
                result.append(Device(spec, physical, limit, logical=len(configs) > 1))
        return result

    # -- the initialized lock ------------------------------------------------------------------
    @property
    def initialized(self) -> bool:
        return self._initialized

    def initialize(self) -> None:
        """Lock the configuration, as TensorFlow does when the runtime starts."""
        if self._initialized:
            return
        growth = {self.get_memory_growth(d) for d in self.get_visible_devices("GPU")}
        if len(growth) > 1:
            raise ValueError("Memory growth cannot differ between GPU devices")
        self._initialized = True

    def _check_unlocked(self, what: str) -> None:
        if self._initialized:
            raise RuntimeError(f"{what} devices cannot be modified after being initialized")

    def _require_known(self, device: PhysicalDevice) -> None:
        self._discover()
        if device not in self._known:
            raise ValueError(f"Unrecognized device: {device!r}")


def forced_memory_growth() -> bool:
    """TF_FORCE_GPU_ALLOW_GROWTH=true: every GPU allocator grows, logical GPUs' too (they have
    no memory growth setting of their own)."""
    return os.environ.get("TF_FORCE_GPU_ALLOW_GROWTH", "").lower() == "true"


def _of_type(devices: list[PhysicalDevice], device_type: str | None) -> list[PhysicalDevice]:
    if device_type is None:
        return list(devices)
    wanted = device_type.upper()
    return [d for d in devices if d.device_type == wanted]


def _simulation_from_environment() -> tuple[int, str, int | None] | None:
    count = os.environ.get("PLACEVIZ_SIMULATED_GPUS", "").strip()
    if not count:
        return None
    if not count.isdigit():
        raise ValueError(f"PLACEVIZ_SIMULATED_GPUS must be a number of GPUs, got {count!r}")
    profile = os.environ.get("PLACEVIZ_SIMULATED_PROFILE", DEFAULT_PROFILE)
    get_profile(profile)
    return int(count), profile, None


def _profile_for(gpu_name: str) -> GPUProfile | None:
    """The datasheet profile of a real GPU, used where placeviz models its speed."""
    upper = gpu_name.upper()
    for key in sorted(PROFILES, key=len, reverse=True):
        if key in upper:
            return PROFILES[key]
    return None


_CONTEXT = DeviceContext()
# The cluster task this process is (a `placeviz server` process sets it); outside a cluster every
# process is TensorFlow's /job:localhost/replica:0/task:0.
_process_task = DeviceSpec(job="localhost", replica=0, task=0)
# A %%placement cell's own context: context-local, so a cell running beside another (in a thread)
# keeps its devices, and the process's stay as they were.
_CELL_CONTEXT: contextvars.ContextVar[DeviceContext | None] = contextvars.ContextVar(
    "placeviz_cell_device_context", default=None
)


def context() -> DeviceContext:
    return _CELL_CONTEXT.get() or _CONTEXT


@contextlib.contextmanager
def use(cell_context: DeviceContext) -> Iterator[DeviceContext]:
    """Make ``cell_context`` the device context of the caller's context (thread, task) while
    inside (a magic's own setup)."""
    token = _CELL_CONTEXT.set(cell_context)
    try:
        yield cell_context
    finally:
        _CELL_CONTEXT.reset(token)


def process_task() -> DeviceSpec:
    """The job, replica and task that prefix this process's device names."""
    return _process_task


def set_process_task(job: str, task: int) -> None:
    """Name this process's devices ``/job:<job>/replica:0/task:<task>/...`` (a cluster task)."""
    global _process_task
    _process_task = DeviceSpec(job=job, replica=0, task=task)


def reset() -> None:
    """Forget the device configuration and the initialized lock (tests, notebooks' magics)."""
    global _CONTEXT
    _CONTEXT = DeviceContext()
