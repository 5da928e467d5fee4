"""Dry runs on a real card's logical GPUs: nothing is computed or allocated there; a dry run
places as a real run on the card does, and runs out of memory where TensorFlow's allocator would
(the card's runtime holds fed copies until the run ends, so it may run out an op earlier)."""

from __future__ import annotations

import numpy as np
import pytest
from gpu.test_cuda_runtime import carve, grow

import placeviz as pv
from placeviz.devices import cuda

pytestmark = pytest.mark.gpu

DRY = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE, dry_run=True)


def test_a_dry_step_on_the_cards_gpus_places_as_a_real_one_and_allocates_nothing() -> None:
    from placeviz.examples import zoo

    cupy = cuda.cupy_module()
    carve(2)
    model = zoo.cifar10_towers(pv, gpus=2, batch=8)
    init = pv.global_variables_initializer()
    config = pv.ConfigProto(allow_soft_placement=True, dry_run=True)
    before = cupy.get_default_memory_pool().used_bytes()
    with pv.Session(config=config) as dry:
        dry.run(init)
        _, loss = dry.run([model.train_op, model.loss], model.feed)  # the feeds' shapes
        dry_placement = dict(dry.placement)
    assert isinstance(loss, pv.ShapedArray) and loss.shape == ()
    assert cupy.get_default_memory_pool().used_bytes() == before
    config = grow()
    config.allow_soft_placement = True
    with pv.Session(config=config) as real:
        real.run(init)
        _, value = real.run([model.train_op, model.loss], model.feed)
        assert dict(real.placement) == dry_placement
    assert np.isfinite(value)


def test_a_dry_run_runs_out_of_a_small_logical_gpu_of_the_card_too() -> None:
    carve(2, memory_mb=4)
    x = pv.placeholder(pv.float32, [None, 256])
    with pv.device("/gpu:0"):
        h = pv.matmul(x, pv.ones([256, 512]))  # 512 KiB per 256 rows
        y = pv.reduce_sum(pv.nn.relu(h) * h)
    errors = []
    for options in (pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE), DRY):
        with pv.Session(config=grow()) as sess:
            with pytest.raises(pv.errors.ResourceExhaustedError) as caught:
                sess.run(y, {x: np.zeros((1024, 256), np.float32)}, options=options)
            errors.append(caught.value)
    real, dry = errors
    # The dry run frees the fed x after the MatMul, as TensorFlow's allocator would (h, Relu's
    # output and Mul's are 2 MiB each: out at Mul); the card's runtime keeps a fed value's copy
    # until the run ends (other streams may read it), so it runs out one op earlier, at Relu.
    assert (real.op.name, dry.op.name) == ("Relu", "mul")
    assert "limit 4194304 bytes" in str(dry)
