"""docs/api.md is what scripts/generate_api_docs.py writes from the namespaces and the registry."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import placeviz as pv
from placeviz import dtypes
from placeviz.api import reference
from placeviz.api.namespaces import NAMESPACES, module_name
from placeviz.graph import registry

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "generate_api_docs.py"
SECTION = re.compile(r"^### `(pv(?:\.[\w.]+)?)`\n\n[^\n]*\n\n(.*?)\n(?=\n|$)", re.M | re.S)


def listed() -> dict[str, list[str]]:
    """Each namespace's section of the committed docs/api.md -> the names it lists."""
    text = reference.PATH.read_text("utf-8")
    return {
        title.replace("pv", "placeviz", 1): re.findall(r"`(\w+)`", body)
        for title, body in SECTION.findall(text)
    }


def check(path: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``generate_api_docs.py --check`` in a fresh interpreter: the reference is what
    ``import placeviz`` gives, without the op types other tests register in this one."""
    point = f"reference.PATH = Path({str(path)!r}); " if path else ""
    code = (
        "import runpy, sys; from pathlib import Path; from placeviz.api import reference; "
        f"{point}sys.argv = ['generate_api_docs.py', '--check']; "
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_docs_api_md_is_what_the_generator_writes() -> None:
    result = check()
    assert result.returncode == 0, result.stderr


def test_the_check_fails_on_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "api.md"
    stale.write_text(reference.PATH.read_text("utf-8") + "edited by hand\n", encoding="utf-8")
    result = check(stale)
    assert result.returncode == 1
    assert "is stale: run python3 scripts/generate_api_docs.py" in result.stderr


def test_every_namespace_has_a_section_and_every_listed_name_resolves() -> None:
    sections = listed()
    assert list(sections) == [module_name(path) for path in NAMESPACES]
    for name, names in sections.items():
        module = importlib.import_module(name)
        assert names, name
        missing = [n for n in names if not hasattr(module, n)]
        assert not missing, f"{name} lists {missing}"


def test_the_reference_lists_each_op_type_with_its_devices_and_dtypes() -> None:
    text = reference.PATH.read_text("utf-8")
    assert (
        "| `BatchMatMulV2` | float16, float32, float64, int32, int64 | float16, float32, float64 |"
        in text
    )
    assert "| `SaveV2` | float16, float32, float64, int32, int64, bool, string | — |" in text
    rows = re.findall(r"^\| `(\w+)` \|", text, re.M)
    assert rows == sorted(rows) and {"Conv2D", "MatMul", "VariableV2"} <= set(rows)
    for op_type in rows:
        registry.get(op_type)  # raises for a type no longer registered


def test_a_new_op_type_or_name_changes_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The staleness check can fail: what the code declares shows in the generated text."""
    before = reference.markdown()
    fake = registry.OpDef(
        "Conv3D",
        infer=lambda inputs, attrs: [],
        kernel=lambda xp, op, state: lambda: None,
        supported={"CPU": frozenset({dtypes.float32})},
    )
    monkeypatch.setitem(registry._REGISTRY, "Conv3D", fake)
    assert "| `Conv3D` | float32 | — |" in reference.markdown()
    monkeypatch.setattr(pv.nn, "conv3d", object(), raising=False)
    monkeypatch.setattr(pv.nn, "__all__", [*pv.nn.__all__, "conv3d"])
    assert "`conv3d`," in reference.markdown() and "`conv3d`" not in before
