"""scripts/lab.sh, the README's main job, leaves the tracked notebooks as committed: JupyterLab
works on the student's copy, so what a session saves cannot change what scripts/test.sh reads.

The script runs for real, with a ``python3`` first on PATH that records its arguments instead of
installing placeviz or starting JupyterLab.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "01_where_ops_run.ipynb"
RECORDER = """#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$PYTHON3_CALLS"
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The script and the notebooks as a checkout has them."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "lab.sh", repo / "scripts" / "lab.sh")
    shutil.copytree(ROOT / "notebooks", repo / "notebooks")
    return repo


def run_lab(repo: Path, tmp_path: Path) -> list[str]:
    """Run ``repo``'s lab.sh from elsewhere; the ``python3`` command lines it ran."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "python3"
    fake.write_text(RECORDER)
    fake.chmod(0o755)
    calls = tmp_path / "calls.txt"
    calls.unlink(missing_ok=True)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    env["PYTHON3_CALLS"] = str(calls)
    subprocess.run(
        ["bash", str(repo / "scripts" / "lab.sh"), "--no-browser"],
        cwd=tmp_path,
        env=env,
        check=True,
        timeout=60,
    )
    return calls.read_text().splitlines()


def test_jupyterlab_opens_a_copy_of_the_notebooks(checkout: Path, tmp_path: Path) -> None:
    calls = run_lab(checkout, tmp_path)
    lab = calls[-1].split()
    assert lab[:2] == ["-m", "jupyter"] and "--no-browser" in lab
    opened = checkout / lab[-1]
    assert opened.resolve() != (checkout / "notebooks").resolve()
    originals = sorted(p.name for p in (checkout / "notebooks").iterdir())
    assert sorted(p.name for p in opened.iterdir()) == originals
    for name in originals:
        assert (opened / name).read_bytes() == (checkout / "notebooks" / name).read_bytes()


def test_a_saved_session_stays_in_the_copy(checkout: Path, tmp_path: Path) -> None:
    """A student ran the notebook and saved it (outputs, a file a cell wrote); the next lab.sh
    keeps that work, and the tracked notebook is still the committed one."""
    committed = (checkout / "notebooks" / NOTEBOOK).read_bytes()
    opened = checkout / run_lab(checkout, tmp_path)[-1].split()[-1]
    saved = json.loads((opened / NOTEBOOK).read_text("utf-8"))
    code = next(cell for cell in saved["cells"] if cell["cell_type"] == "code")
    code["execution_count"] = 1
    code["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ran\n"}]
    (opened / NOTEBOOK).write_text(json.dumps(saved), "utf-8")
    (opened / "towers.html").write_text("<html></html>", "utf-8")
    assert checkout / run_lab(checkout, tmp_path)[-1].split()[-1] == opened
    assert json.loads((opened / NOTEBOOK).read_text("utf-8")) == saved
    assert (checkout / "notebooks" / NOTEBOOK).read_bytes() == committed
    assert not (checkout / "notebooks" / "towers.html").exists()


def test_git_ignores_the_copy(checkout: Path, tmp_path: Path) -> None:
    """So `git status` stays clean after the main job."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    opened = run_lab(checkout, tmp_path)[-1].split()[-1]
    for name in (f"{opened}/{NOTEBOOK}", f"{opened}/towers.html"):
        ignored = subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT, check=False)
        assert ignored.returncode == 0, f"{name} is not ignored by git"
    tracked = subprocess.run(
        ["git", "check-ignore", "-q", f"notebooks/{NOTEBOOK}"], cwd=ROOT, check=False
    )
    assert tracked.returncode == 1  # the test can tell: the tracked notebook is not ignored
