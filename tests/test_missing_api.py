"""A name TensorFlow 1 has and placeviz lacks says so and points to docs/api.md; any other
missing name (a typo) keeps Python's wording; hasattr and getattr's default keep working."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

import placeviz as pv
from placeviz.api import tf1_names
from placeviz.api.namespaces import NAMESPACES, module_name, tf_name

ROOT = Path(__file__).resolve().parents[1]


def namespace(path: str) -> ModuleType:
    return importlib.import_module(module_name(path))


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("nn", "conv3d"),
        ("nn", "ctc_loss"),
        ("", "image"),
        ("", "scan"),
        ("train", "AdagradDAOptimizer"),
        ("keras.layers", "ConvLSTM2D"),
        ("math", "acos"),
        ("layers", "Conv3D"),
    ],
)
def test_a_tf1_name_placeviz_lacks_is_reported_as_not_implemented(path: str, name: str) -> None:
    module = namespace(path)
    assert name in tf1_names.in_namespace(path), "not a TF 1 name: choose another"
    assert name not in vars(module), "placeviz implements it now: choose another"
    with pytest.raises(AttributeError) as caught:
        getattr(module, name)
    message = str(caught.value)
    assert message.startswith(f"module {module.__name__!r} has no attribute {name!r}: ")
    assert f"does not implement TensorFlow 1's {tf_name(path, name)} " in message
    assert f"({tf_name(path, name, compat=True)})" in message
    assert "docs/api.md" in message
    assert caught.value.name == name
    assert not hasattr(module, name)


def test_the_message_names_the_full_tf_name() -> None:
    with pytest.raises(AttributeError, match=r"tf\.nn\.conv3d \(tf\.compat\.v1\.nn\.conv3d\)"):
        pv.nn.conv3d  # noqa: B018


@pytest.mark.parametrize(
    ("module", "name"),
    [(pv.nn, "conv2dd"), (pv, "placeholdr"), (pv.train, "AdamOptimiser"), (pv.keras.layers, "foo")],
)
def test_a_name_tensorflow_lacks_too_keeps_pythons_message(module: ModuleType, name: str) -> None:
    with pytest.raises(AttributeError) as caught:
        getattr(module, name)
    assert str(caught.value) == f"module {module.__name__!r} has no attribute {name!r}"
    assert (caught.value.name, caught.value.obj) == (name, module)  # Python suggests a spelling
    assert not hasattr(module, name)
    assert getattr(module, name, "default") == "default"


@pytest.mark.parametrize("path", NAMESPACES, ids=lambda p: module_name(p))
def test_every_namespace_reports_tf1_names_it_lacks(path: str) -> None:
    """The hook is on every declared namespace; one TF has no counterpart of keeps Python's."""
    module = namespace(path)
    lacking = sorted(tf1_names.in_namespace(path) - set(dir(module)))
    name = lacking[0] if lacking else "not_a_tensorflow_name"
    with pytest.raises(AttributeError) as caught:
        getattr(module, name)
    assert ("docs/api.md" in str(caught.value)) == bool(lacking), str(caught.value)


@pytest.mark.parametrize(
    ("module", "name"),
    [(pv, "placeholder"), (pv.nn, "conv2d"), (pv.train, "AdamOptimizer"), (pv, "nn")],
)
def test_implemented_names_are_found(module: ModuleType, name: str) -> None:
    assert hasattr(module, name)
    assert getattr(module, name, None) is not None


def test_the_lazily_imported_inspector_still_resolves_and_is_listed() -> None:
    assert "PlacementInspector" in dir(pv)
    assert pv.PlacementInspector.__name__ == "PlacementInspector"


def test_private_names_never_read_the_recorded_names() -> None:
    with pytest.raises(AttributeError, match=r"^module 'placeviz' has no attribute '__wrapped__'$"):
        pv.__wrapped__  # noqa: B018


def test_the_recorded_names_are_sorted_unique_and_in_the_package() -> None:
    lines = [line for line in tf1_names.FILE.read_text("utf-8").splitlines() if line]
    names = [line for line in lines if not line.startswith("#")]
    assert names == sorted(set(names))
    assert tf1_names.FILE.parent == Path(pv.__file__).parent / "api"
    assert {"nn.conv2d", "train.AdamOptimizer", "placeholder"} <= tf1_names.recorded()


def test_import_placeviz_reads_no_names_and_a_miss_needs_no_tensorflow() -> None:
    """``import placeviz`` stays fast: the recorded names are read on the first TF 1 miss, and
    neither that nor the import brings in TensorFlow, Dask or plotly."""
    code = textwrap.dedent(
        """
        import sys
        import placeviz as pv
        from placeviz.api import tf1_names
        assert tf1_names.recorded.cache_info().currsize == 0
        try:
            pv.nn.conv3d  # noqa: B018
        except AttributeError as error:
            assert "docs/api.md" in str(error)
        heavy = ("tensorflow", "dask", "distributed", "plotly", "cupy")
        print(sorted(m for m in sys.modules if m.split(".")[0] in heavy))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
