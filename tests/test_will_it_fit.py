"""``placeviz.examples.will_it_fit`` (notebook 10): dry training steps of the zoo's transformers
and the questions the notebook asks of them, on sizes small enough for a test."""

from __future__ import annotations

import pytest

import placeviz as pv
from placeviz.examples.will_it_fit import dry_step, live_when_it_failed, move_scope, scope_devices

SMALL = {"batch": 4, "seq": 32, "width": 64, "heads": 4, "layers": 4, "vocab": 500}


@pytest.mark.parametrize("model", ["BERT-large", "GPT-2 XL"])
def test_a_dry_step_places_each_layer_on_its_gpu_and_fits(model: str) -> None:
    step = dry_step(model, gpus=2, **SMALL)
    assert step.fits and step.trace.runs[-1]["dry"] is True
    layer = "layer_{}" if model == "BERT-large" else "h{}"
    where = scope_devices(step.trace)
    for index in range(4):
        assert where[layer.format(index)] == f"GPU:{index * 2 // 4}"
    peaks = step.gpu_peaks()
    assert set(peaks) == {"GPU:0", "GPU:1"} and min(peaks.values()) > 0


def test_what_filled_the_card_is_what_was_live_on_it_when_the_step_failed() -> None:
    """On a 16 MiB card the small encoder at batch 64 runs out; what was live there by op type
    adds up to the bytes the error says were in use (variables included)."""
    step = dry_step("BERT-large", gpus=1, memory_limit_mb=16, **{**SMALL, "batch": 64})
    assert not step.fits
    assert isinstance(step.error, pv.errors.ResourceExhaustedError)
    in_use = int(str(step.error).split(" bytes already in use")[0].rsplit(" ", 1)[-1])
    filled = live_when_it_failed(step)
    assert sum(filled.values()) == in_use
    assert list(filled.values()) == sorted(filled.values(), reverse=True)
    assert filled.get("VariableV2", 0) > 0
    with pytest.raises(ValueError, match="did not run out of memory"):
        live_when_it_failed(dry_step("BERT-large", gpus=1, **SMALL))


def test_moving_a_layer_predicts_the_step_with_its_ops_on_the_other_gpu() -> None:
    step = dry_step("BERT-large", gpus=2, **SMALL)
    moved = move_scope(step, "layer_1", "/gpu:1")
    assert (
        moved.prediction.startswith("what if ") and "ops of layer_1/ on /gpu:1" in moved.prediction
    )
    assert scope_devices(moved)["layer_1"] == "GPU:1"
    assert scope_devices(moved)["layer_0"] == "GPU:0"


def test_the_cost_placer_splits_a_model_one_gpu_cannot_hold_into_consecutive_parts() -> None:
    """On 60 MiB GPUs the encoder's step (111 MiB on one GPU) fits only split: its fastest
    schedule (all on GPU:0) would overflow, so the cost placer gives each GPU consecutive
    layers of equal compute, as the pinned split does, and says so."""
    sizes = {**SMALL, "batch": 16, "seq": 64, "width": 128, "vocab": 500}
    step = dry_step("BERT-large", gpus=2, placer="cost", pin=False, memory_limit_mb=60, **sizes)
    assert step.fits
    where = scope_devices(step.trace)
    assert [where[f"layer_{i}"] for i in range(4)] == ["GPU:0", "GPU:0", "GPU:1", "GPU:1"]
    assert max(step.gpu_peaks().values()) <= 60 << 20
    text = step.session.placement.explain("layer_3/attention/MatMul").text
    assert "the 2 GPUs take consecutive parts of the step's ops" in text, text
    assert text.split("its part is on ")[1].startswith("GPU:1"), text
