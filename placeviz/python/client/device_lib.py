"""``device_lib.list_local_devices()``: the devices this process runs on, as TensorFlow lists them.

Listing starts the runtime, as in TensorFlow, so device configuration is locked afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from placeviz.devices import context as device_context
from placeviz.runtime.placement_log import physical_description


@dataclass(frozen=True)
class DeviceAttributes:
    """One device, printed in TensorFlow's protobuf text format."""

    name: str
    device_type: str
    memory_limit: int
    incarnation: int
    physical_device_desc: str

    def __repr__(self) -> str:
        lines = [
            f'name: "{self.name}"',
            f'device_type: "{self.device_type}"',
            f"memory_limit: {self.memory_limit}",
            "locality {",
            "}",
            f"incarnation: {self.incarnation}",
        ]
        if self.physical_device_desc:
            lines.append(f'physical_device_desc: "{self.physical_device_desc}"')
        return "\n".join(lines) + "\n"


def list_local_devices(session_config: object = None) -> list[DeviceAttributes]:
    ctx = device_context.context()
    ctx.initialize()
    return [
        DeviceAttributes(
            name=f"/device:{device.device_type}:{device.index}",
            device_type=device.device_type,
            memory_limit=device.memory_limit,
            incarnation=i + 1,
            physical_device_desc=""
            if device.device_type == "CPU"
            else physical_description(device),
        )
        for i, device in enumerate(ctx.devices())
    ]
