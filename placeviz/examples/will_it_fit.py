"""Models too big to compute here, stepped dry on simulated GPUs (issue 27's "will it fit?").

A dry run (``pv.RunOptions(dry_run=True)``) computes nothing: shapes flow through the ops' shape
rules, each op's time comes from its device's datasheet profile and memory is counted from sizes
by the same allocator model as a real run. So BERT-large's training step, or a GPT-2-XL-sized
decoder's, can be placed, timed and fitted onto cards this machine does not have.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.examples import zoo

# Sizes of the originals: BERT-large (Devlin et al., 2019), GPT-2 XL (Radford et al., 2019).
BERT_LARGE: Mapping[str, int] = {
    "batch": 64,
    "seq": 512,
    "width": 1024,
    "heads": 16,
    "layers": 24,
    "vocab": 30522,
}
GPT2_XL: Mapping[str, int] = {
    "batch": 8,
    "seq": 1024,
    "width": 1600,
    "heads": 25,
    "layers": 48,
    "vocab": 50257,
}
MODELS: Mapping[str, tuple[Callable[..., zoo.Model], Mapping[str, int]]] = {
    "BERT-large": (zoo.bert_encoder, BERT_LARGE),
    "GPT-2 XL": (zoo.gpt_decoder, GPT2_XL),
}


@dataclass
class DryStep:
    """One dry training step: its trace (complete even when the step ran out of memory), the
    error if it did, and the session (for ``explain`` and more steps)."""

    trace: pv.Trace
    error: pv.errors.ResourceExhaustedError | None
    session: pv.Session

    @property
    def fits(self) -> bool:
        return self.error is None

    def gpu_peaks(self) -> dict[str, int]:
        """Bytes each GPU held at its fullest, variables and the step's tensors together."""
        return {
            name.rsplit("/", 1)[-1].replace("device:", ""): summary.peak_memory
            for name, summary in self.trace.summary().items()
            if ":GPU:" in name
        }


def dry_step(
    model: str,
    gpus: int,
    profile: str = "H100",
    placer: str = "simple",
    pin: bool = True,
    memory_limit_mb: int | None = None,
    **sizes: Any,
) -> DryStep:
    """``model`` (a key of ``MODELS``) at its original sizes (or ``sizes``) on ``gpus``
    simulated cards of ``profile``: variables initialized and one fully traced training step,
    both dry. Layer ``l`` goes to GPU ``l * gpus // layers`` as the zoo's scopes say, or with
    ``pin=False`` where ``placer`` puts it; ``memory_limit_mb``: cards smaller than the
    profile's."""
    build, original = MODELS[model]
    pv.config.reset_devices()
    pv.config.simulate_gpus(gpus, profile, memory_limit_mb)
    pv.reset_default_graph()
    built = build(pv, gpus=gpus, pin=pin, **{**original, **sizes})
    sess = pv.Session(config=pv.ConfigProto(dry_run=True, placer=placer))
    sess.run(pv.global_variables_initializer())
    options = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)
    error = None
    try:
        sess.run([built.train_op, built.loss], built.feed, options=options)
    except pv.errors.ResourceExhaustedError as caught:
        error = caught
    return DryStep(sess.trace(runs=1), error, sess)


def bert_large_dry(gpus: int = 8) -> pv.Trace:
    """BERT-large (24 layers, d 1024, 16 heads, seq 512, batch 64, Adam) split over ``gpus``
    simulated H100s, one fully traced training step run dry: shapes, modeled times and memory,
    nothing computed."""
    return dry_step("BERT-large", gpus).trace


def _short(device: str) -> str:
    return device.rsplit("/", 1)[-1].replace("device:", "")


def live_when_it_failed(step: DryStep) -> dict[str, int]:
    """Bytes live on the device a step ran out of memory on, by the type of op that made them
    (``VariableV2``: the weights and the optimizer's slots), when the failing op started."""
    if step.error is None or step.error.op is None:
        raise ValueError("the step did not run out of memory")
    trace = step.trace
    ev = trace.events
    device = next(
        d["id"] for d in trace.devices if d["name"] == step.session.placement[step.error.op.name]
    )
    mine = ev["device"] == device
    ops = np.flatnonzero(mine & (ev["kind"] == int(EventKind.OP)))
    failed_at = int(ev["t0"][ops].max())
    live: dict[int, int] = {}
    for i in np.flatnonzero(
        mine & np.isin(ev["kind"], [int(EventKind.ALLOC), int(EventKind.FREE)])
    ):
        if int(ev["t0"][i]) > failed_at:
            continue
        node = int(ev["node"][i])
        if ev["kind"][i] == int(EventKind.ALLOC):
            live[node] = live.get(node, 0) + int(ev["bytes"][i])
        else:
            live[node] = live.get(node, 0) - int(ev["bytes"][i])
    by_type: dict[str, int] = {}
    for node, size in live.items():
        if size > 0:
            kind = trace.node_type(node)
            by_type[kind] = by_type.get(kind, 0) + size
    return dict(sorted(by_type.items(), key=lambda item: -item[1]))


def scope_devices(trace: pv.Trace) -> dict[str, str]:
    """Each top-level scope of the model (``layer_3``, ``embeddings``) and the device most of
    its ops ran on."""
    names = {d["id"]: _short(d["name"]) for d in trace.devices}
    counts: dict[str, dict[str, int]] = {}
    for node in trace.nodes:
        scope = node["name"].split("/", 1)[0]
        if node["device"] is None or "/" not in node["name"] or scope in _NOT_MODEL_SCOPES:
            continue
        per_device = counts.setdefault(scope, {})
        where = names[node["device"]]
        per_device[where] = per_device.get(where, 0) + 1
    return {scope: max(found, key=found.__getitem__) for scope, found in counts.items()}


_NOT_MODEL_SCOPES = ("gradients", "Adam", "clip_by_global_norm", "global_norm", "save")


def move_scope(step: DryStep, scope: str, device: str) -> pv.Trace:
    """The step predicted with every op of ``scope`` (its variables, and their gradients and
    updates colocated with them) on ``device``."""
    moves = {n["name"]: device for n in step.trace.nodes if n["name"].startswith(f"{scope}/")}
    return step.trace.what_if(moves=moves)
