"""A real JupyterLab and a real browser (Debian's chromium, driven by Playwright) for the e2e tests.

The browser is always ``/usr/bin/chromium``, never one Playwright downloads. Under CI
(``CI=true``) a missing browser, Playwright or built extension fails the tests: CI installs all
three, so their absence is a broken set-up, not a reason to pass. Elsewhere they skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
from jupyter_helpers import install_without_node, kernel_variables

from benchmarks._chromium import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


@pytest.fixture
def keep_screenshot() -> Any:
    """``keep_screenshot(locator, name)``: with PLACEVIZ_SCREENSHOTS naming a folder, a PNG of
    ``locator`` kept there as ``name`` (docs/images is taken this way, to be looked at)."""
    folder = os.environ.get("PLACEVIZ_SCREENSHOTS")

    def keep(locator: Any, name: str) -> None:
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            locator.screenshot(path=str(Path(folder) / f"{name}.png"))

    return keep


def unavailable(reason: str) -> NoReturn:
    """Skip, except under CI, where what the e2e tests need must be there."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true, so the browser tests must run)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless chromium context with a fresh profile per test module (closed after it)."""
    if not Path(CHROMIUM).exists():
        unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is missing (pip install -e '.[test]')")
    profile = Path(os.environ.get("TMPDIR", "/tmp")) / f"placeviz-chromium-{uuid.uuid4().hex}"
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        context.set_default_timeout(30_000)
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A new tab that fails the test on any uncaught page error or dialog (alert, confirm)."""
    tab = browser.new_page()
    problems: list[str] = []
    tab.on("pageerror", lambda error: problems.append(f"page error: {error}"))

    def on_dialog(dialog: Any) -> None:
        problems.append(f"{dialog.type} dialog: {dialog.message}")
        dialog.dismiss()

    tab.on("dialog", on_dialog)
    tab.problems = problems
    yield tab
    tab.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def standalone_bundle() -> None:
    """The built inspector bundle that ``Trace.to_html`` inlines."""
    from placeviz.events.html import BundleMissingError, bundle

    try:
        bundle()
    except BundleMissingError as error:
        unavailable(str(error))


@dataclass
class Lab:
    """A running JupyterLab: where it listens, its token, its root directory."""

    url: str
    token: str
    root: Path
    process: subprocess.Popen[bytes]
    log: Path

    def api(self, method: str, path: str, body: Any = None) -> Any:
        """Call the Jupyter server's REST API; returns the decoded JSON (None when empty)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
        return json.loads(text) if text else None

    def page_url(self, path: str = "lab") -> str:
        return f"{self.url}/{path}?token={self.token}"

    def shut_down_kernels(self) -> None:
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")
        deadline = time.monotonic() + 30
        while self.api("GET", "/api/kernels") and time.monotonic() < deadline:
            time.sleep(0.2)


def wait_until_ready(lab: Lab, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited early:\n{lab.log.read_text()[-4000:]}")
        try:
            lab.api("GET", "/api/status")
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    raise RuntimeError(f"jupyter lab not ready in {timeout}s:\n{lab.log.read_text()[-4000:]}")


def installed_lab_extensions(lab: Lab) -> list[str]:
    """Names of the prebuilt (federated) extensions the lab page will load."""
    request = urllib.request.Request(lab.page_url())
    with urllib.request.urlopen(request, timeout=30) as response:
        html = response.read().decode("utf-8")
    match = re.search(
        r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
        html,
        flags=re.DOTALL,
    )
    if not match:
        return []
    config = json.loads(match.group(1))
    return [extension["name"] for extension in config.get("federated_extensions", [])]


@contextlib.contextmanager
def running_lab(base: Path, python: str, env: dict[str, str]) -> Iterator[Lab]:
    """``jupyter lab`` of interpreter ``python`` on a free local port with a token, rooted in
    ``base/root``, with ``env`` as its whole environment."""
    root = base / "root"
    root.mkdir()
    settings = base / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # No news or update checks: the test machine has no network, and the toasts cover the page.
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    token = uuid.uuid4().hex
    port = free_port()
    log = base / "lab.log"
    command = [
        python,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.allow_root=True",  # CI runs as root
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, to run commands
        f"--LabApp.user_settings_dir={base / 'settings'}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
        "--LabApp.news_url=None",
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=base
        )
    server = Lab(f"http://127.0.0.1:{port}", token, root, process, log)
    try:
        wait_until_ready(server)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def lab(
    tmp_path_factory: pytest.TempPathFactory, browser: Any, kernel_environment: dict[str, str]
) -> Iterator[Lab]:
    """This checkout's ``jupyter lab`` (see ``running_lab``)."""
    env = dict(os.environ)
    env.update(kernel_environment)
    for name in ("PLACEVIZ_SIMULATED_GPUS", "PLACEVIZ_SIMULATED_PROFILE"):
        env.pop(name, None)
    with running_lab(tmp_path_factory.mktemp("lab"), sys.executable, env) as server:
        if "placeviz" not in installed_lab_extensions(server):
            unavailable(
                "placeviz's JupyterLab extension is not installed "
                "(pip install -e '.[test]' builds it with npm)"
            )
        yield server


@pytest.fixture(scope="module")
def wheel_lab(tmp_path_factory: pytest.TempPathFactory, browser: Any, wheel: Path) -> Iterator[Lab]:
    """JupyterLab in a fresh venv that has placeviz only from its wheel, run with nothing but the
    venv on PATH (no node or npm): a user's machine without Node (``install_without_node``)."""
    base = tmp_path_factory.mktemp("wheel-lab")
    python, env = install_without_node(wheel, base)
    env.update(kernel_variables(base, python, "Python 3 (the wheel's venv)"))
    (base / "lab").mkdir()
    with running_lab(base / "lab", python, env) as server:
        assert "placeviz" in installed_lab_extensions(server)  # the wheel's, from the venv
        yield server
