"""The differential test with a real card's logical GPUs in the mix (test_differential.py).

Each hypothesis example's simulated GPUs become as many logical GPUs carved from the first card,
so every random program runs on CuPy, across CUDA streams, and must give NumPy's values and the
same placements. Examples: PLACEVIZ_GPU_DIFF_EXAMPLES (default 60).
"""

from __future__ import annotations

import dataclasses
import gc
import os

import pytest
from dag_strategies import Case, DeviceSetup, cases
from hypothesis import HealthCheck, given, note, settings
from test_differential import render, run_case

import placeviz as pv
from placeviz.runtime import session as session_module

pytestmark = pytest.mark.gpu

EXAMPLES = int(os.environ.get("PLACEVIZ_GPU_DIFF_EXAMPLES", "60"))


def on_the_card(setup: DeviceSetup) -> DeviceSetup:
    """The same number of GPUs, all logical GPUs of card 0 (1024 MiB each)."""
    n = setup.n_gpus
    return dataclasses.replace(
        setup, n_physical=1, visible=(0,) if n else (), splits=(n,) if n else ()
    )


def real_setup_program(setup: DeviceSetup) -> str:
    lines = ["gpus = pv.config.list_physical_devices('GPU')"]
    if not setup.n_gpus:
        lines.append("pv.config.set_visible_devices([], 'GPU')")
    else:
        lines.append("pv.config.set_visible_devices(gpus[:1], 'GPU')")
        lines.append(
            "pv.config.set_logical_device_configuration(gpus[0], "
            f"[pv.config.LogicalDeviceConfiguration(memory_limit=1024)] * {setup.n_gpus})"
        )
    if setup.soft and not setup.soft_via_config:
        lines.append("pv.config.set_soft_device_placement(True)")
    return "\n".join(lines)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=cases())
def test_random_programs_on_a_cards_logical_gpus_match_numpy(case: Case) -> None:
    case = dataclasses.replace(case, setup=on_the_card(case.setup))
    os.environ["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"  # the card is shared with other suites
    note(real_setup_program(case.setup))
    note(render(case))
    made: list[pv.Session] = []
    token = session_module.observers.set((made.append,))
    try:
        run_case(case, real_setup_program)
    finally:
        session_module.observers.reset(token)
        for sess in made:  # each maps its GPUs' memory: give it back before the next example
            sess.close()
        gc.collect()
    assert any(d.backend == "cupy" for s in made for d in s.devices) == bool(case.setup.n_gpus)
