"""A training step on four logical GPUs of a real card, saved as a placement document.

The document holds CUDA-event timings and the card's NVML readings; photograph it with
``python3 benchmarks/screenshot_inspector.py --document PATH`` where a browser is (the card's
machine need not have one). Run: ``python3 scripts/record_card_trace.py OUT.json``.
"""

from __future__ import annotations

import json
import sys

import placeviz as pv
from placeviz.examples import zoo


def main(path: str) -> None:
    card = pv.config.list_physical_devices("GPU")[0]
    pv.config.set_visible_devices([card], "GPU")
    pv.config.set_logical_device_configuration(
        card, [pv.config.LogicalDeviceConfiguration(memory_limit=4096)] * 4
    )
    model = zoo.cifar10_towers(pv, gpus=4, batch=32)
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        sess.trace_level = pv.RunOptions.FULL_TRACE
        for _ in range(3):
            sess.run([model.train_op, model.loss], model.feed)
        document = sess.trace(runs=2).to_document()
    with open(path, "w", encoding="utf-8") as file:
        json.dump(document, file)
    print(f"wrote {path}: {len(document['nodes'])} ops, {card.description}")


if __name__ == "__main__":
    main(sys.argv[1])
