"""Every test starts with a fresh default graph and an unlocked device context."""

from __future__ import annotations

import importlib.util

import pytest

import placeviz as pv


def _has_real_gpu() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    from placeviz.devices import cuda

    return bool(cuda.discover())


HAS_GPU = _has_real_gpu()


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("PLACEVIZ_SIMULATED_GPUS", raising=False)
    monkeypatch.delenv("PLACEVIZ_SIMULATED_PROFILE", raising=False)
    monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)
    pv.config.reset_devices()
    pv.disable_eager_execution()
    pv.reset_default_graph()
    yield
    pv.disable_eager_execution()
    pv.config.reset_devices()


@pytest.fixture
def gpus4() -> None:
    """Four simulated H100s, as the seeds' multi-GPU examples assume."""
    pv.config.simulate_gpus(4)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="needs a real CUDA GPU with CuPy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
