"""The folder where this machine's clusters meet: each cluster's scheduler record and logs, the
TLS certificates, and the locks that keep two processes from starting one thing twice."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def rendezvous_dir() -> Path:
    path = Path(tempfile.gettempdir()) / f"placeviz-{os.getuid()}" / "clusters"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


@contextlib.contextmanager
def locked(key: str) -> Iterator[Path]:
    """Hold ``key``'s lock; yields the path of its record (``key.json``)."""
    directory = rendezvous_dir()
    with open(directory / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield directory / f"{key}.json"
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
