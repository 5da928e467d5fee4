"""Every test starts with a fresh default graph and an unlocked device context."""

from __future__ import annotations

import gc
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from jupyter_helpers import build_wheel, kernel_variables

import placeviz as pv


def _has_real_gpu() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    from placeviz.devices import cuda

    return bool(cuda.discover())


HAS_GPU = _has_real_gpu()
ROOT = Path(__file__).resolve().parents[1]


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


@pytest.fixture(scope="session")
def kernel_environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Variables under which a Jupyter kernel a test starts runs this interpreter on this
    checkout, with no user config. A fresh venv may have no ``python3`` kernelspec and a user's
    may point at another Python, so a private one goes first on ``JUPYTER_PATH``."""
    base = tmp_path_factory.mktemp("kernel-env")
    variables = kernel_variables(base, sys.executable, "Python 3 (placeviz tests)")
    # The user's entries stay after the private one.
    variables["JUPYTER_PATH"] = os.pathsep.join(
        filter(None, [variables["JUPYTER_PATH"], os.environ.get("JUPYTER_PATH")])
    )
    # The kernel imports this checkout's placeviz, as pytest does.
    variables["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
    )
    return variables


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """placeviz's wheel, built once for the tests that install it."""
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture
def kernel_env(kernel_environment: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels started by this test (nbclient's) run this interpreter on this checkout."""
    for name, value in kernel_environment.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def gpus4(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Four simulated H100s, as the seeds' multi-GPU examples assume; with
    PLACEVIZ_TEST_GPUS=card, four logical GPUs of 4 GiB carved from the real card instead."""
    if os.environ.get("PLACEVIZ_TEST_GPUS") != "card":
        pv.config.simulate_gpus(4)
        yield
        return
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true")  # open sessions map nothing up front
    card = pv.config.list_physical_devices("GPU")[0]
    pv.config.set_visible_devices([card], "GPU")
    pv.config.set_logical_device_configuration(
        card, [pv.config.LogicalDeviceConfiguration(memory_limit=4096)] * 4
    )
    yield
    gc.collect()  # sessions left open map their GPUs' memory until collected


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="needs a real CUDA GPU with CuPy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
