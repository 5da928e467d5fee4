"""What /proc says about the processes a cluster test starts."""

from __future__ import annotations

import os
import socket
from pathlib import Path


def listening(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket process ``pid`` listens on."""
    inodes = {
        os.readlink(fd)[8:-1]
        for fd in Path(f"/proc/{pid}/fd").iterdir()
        if os.readlink(fd).startswith("socket:[")
    }
    found = []
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
            host, port = fields[1].split(":")
            found.append((socket.inet_ntoa(bytes.fromhex(host)[::-1]), int(port, 16)))
    return found
