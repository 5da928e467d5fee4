"""Models too big to compute here, stepped dry on simulated GPUs (issue 27's "will it fit?")."""

from __future__ import annotations

import placeviz as pv
from placeviz.examples import zoo


def bert_large_dry(gpus: int = 8) -> pv.Trace:
    """BERT-large (24 layers, d 1024, 16 heads, seq 512, batch 64, Adam) split over ``gpus``
    simulated H100s, one fully traced training step run dry: shapes, modeled times and memory,
    nothing computed."""
    pv.config.reset_devices()
    pv.config.simulate_gpus(gpus)
    pv.reset_default_graph()
    model = zoo.bert_encoder(
        pv, gpus=gpus, batch=64, seq=512, width=1024, heads=16, layers=24, vocab=30522
    )
    sess = pv.Session(config=pv.ConfigProto(dry_run=True))
    sess.run(pv.global_variables_initializer())
    options = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)
    sess.run([model.train_op, model.loss], model.feed, options=options)
    return sess.trace(runs=1)
