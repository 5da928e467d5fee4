"""Every conformance program on a real card, against the same program on the CPU.

With a GPU present, TensorFlow's rule puts every op that has a GPU kernel on GPU:0 unless asked
otherwise, so each program's ops run on CuPy here. Their values must be the CPU's (the
conformance tests check the CPU's against TensorFlow's). A program that raises on the CPU has
nothing to compare and is skipped.
"""

from __future__ import annotations

import dataclasses

import pytest
from conformance.compare import differences
from conformance.harness import PROGRAMS, Backend, collect
from conformance.test_conformance import KNOWN_DIFFERENCES

import placeviz as pv

pytestmark = pytest.mark.gpu


# Programs whose values on a card are rightly not the CPU's, with why.
CARD_VALUES_DIFFER = {
    "while_ref_variable_on_other_cpu": (
        "the loop reads v/read, which forwards the variable's buffer on the CPU (each iteration "
        "sees the last assign), but reaches GPU:0 through one copy made when the loop starts, "
        "as TensorFlow's Recv does: on a card the loop doubles the value it entered with"
    ),
    **dict.fromkeys(
        [name for name in PROGRAMS if name.startswith("denormal_")],
        "the CPU flushes denormals to zero as TensorFlow's CPU kernels do; CuPy's kernels keep "
        "them (what TensorFlow's GPU kernels do was not recorded: its CPU build has none)",
    ),
}


def _placement(sess: pv.Session) -> dict[str, str]:
    return dict(sess.placement)


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in KNOWN_DIFFERENCES])
def test_the_cards_values_are_the_cpus(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Sessions the programs make themselves (MonitoredTrainingSession's) would map the whole
    # card up front, as TensorFlow's do; the suite's processes share the card.
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    if name in CARD_VALUES_DIFFER:
        pytest.skip(CARD_VALUES_DIFFER[name])
    program = PROGRAMS[name]
    # errors always (the card must not raise where the CPU did not); values unless skipped
    kept = ("error", *(f for f in program.facts if f == "values"))
    program = dataclasses.replace(program, facts=kept)
    pv.config.simulate_gpus(0)
    on_cpu = collect(program, Backend(pv, _placement))
    if on_cpu["error"] is not None:
        pytest.skip("raises on the CPU: nothing to compare")
    pv.config.reset_devices()
    grow = {"gpu_options": pv.GPUOptions(allow_growth=True)}
    on_gpu = collect(program, Backend(pv, _placement, grow))
    on_card = [d for d in on_gpu.get("ops", {}).values() if "GPU" in str(d.get("assigned", ""))]
    found = differences(program, on_cpu, on_gpu)
    assert not found, f"{name}: the card differs from the CPU ({len(on_card)} ops on it):\n  " + (
        "\n  ".join(found)
    )
