"""placeviz's Dask comm on asyncio sockets (``asyncio_comm.py``): Dask's rpc and streams over it
between real sockets on loopback, and its framing fed in arbitrary pieces."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomllib
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("distributed")

from distributed.comm import CommClosedError, connect, listen
from distributed.comm.registry import get_backend
from distributed.core import Server, rpc
from distributed.protocol.utils import pack_frames_prelude

from placeviz.cluster import asyncio_comm
from placeviz.cluster.frames import pickled
from placeviz.cluster.security import PLAIN_SCHEME, scheme

ROOT = Path(__file__).resolve().parents[1]


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 30))


def test_dask_finds_the_backend_by_the_scheme_the_cluster_uses() -> None:
    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    declared = entry_points["distributed.comm.backends"]
    assert declared == {PLAIN_SCHEME: "placeviz.cluster.asyncio_comm:AsyncioBackend"}
    assert scheme() == PLAIN_SCHEME
    assert isinstance(get_backend(PLAIN_SCHEME), asyncio_comm.AsyncioBackend)


async def _echo_server() -> Server:
    def echo(value: Any = None) -> Any:
        return pickled(value)  # as a task sends tensors: each array's buffer a frame

    server = Server({"echo": echo})
    await server.listen(f"{PLAIN_SCHEME}://127.0.0.1:0")
    return server


@pytest.mark.parametrize("size", [0, 3, 4_000, 16 * 1024, 300_000, 9_000_000])
def test_an_rpc_returns_arrays_of_every_size_equal_and_writable(size: int) -> None:
    async def main() -> tuple[dict[str, Any], str]:
        server = await _echo_server()
        try:
            sent = {"a": np.arange(size, dtype=np.float32), "b": "text"}
            async with rpc(server.address) as remote:
                return await remote.echo(value=pickled(sent)), server.address
        finally:
            await server.close()

    back, address = run(main())
    assert address.startswith(f"{PLAIN_SCHEME}://127.0.0.1:")
    np.testing.assert_array_equal(back["a"], np.arange(size, dtype=np.float32))
    assert back["a"].flags.writeable
    assert back["b"] == "text"


def test_a_message_of_thousands_of_frames_arrives_whole() -> None:
    """Its prelude alone (8 bytes per frame) outgrows the staging buffer."""
    arrays = [np.full(7, i, np.int64) for i in range(12_000)]

    async def main() -> list[Any]:
        server = await _echo_server()
        try:
            async with rpc(server.address) as remote:
                return await remote.echo(value=pickled(arrays))
        finally:
            await server.close()

    back = run(main())
    assert len(back) == len(arrays)
    assert all(np.array_equal(a, b) for a, b in zip(back, arrays))


def test_messages_written_ahead_of_the_reader_arrive_in_order() -> None:
    """More messages than the connection queues before it stops reading, several of them
    larger than the transport's write buffer limit."""

    async def main() -> list[Any]:
        received: asyncio.Queue[Any] = asyncio.Queue()

        async def handle(comm: Any) -> None:
            await asyncio.sleep(0.2)  # the writer runs ahead
            for _ in range(300):
                received.put_nowait(await comm.read())
            await comm.close()

        listener = listen(f"{PLAIN_SCHEME}://127.0.0.1:0", handle)
        await listener.start()
        comm = await connect(listener.contact_address)
        for index in range(300):
            payload = np.full(1_500_000 if index % 50 == 0 else 10, index, np.int32)
            await comm.write({"index": index, "payload": pickled(payload)})
        got = [await received.get() for _ in range(300)]
        await comm.close()
        listener.stop()
        return got

    got = run(main())
    assert [message["index"] for message in got] == list(range(300))
    assert all((message["payload"] == message["index"]).all() for message in got)


def test_a_closed_peer_ends_reads_and_writes_with_comm_closed_error() -> None:
    async def main() -> None:
        async def handle(comm: Any) -> None:
            comm.abort()

        listener = listen(f"{PLAIN_SCHEME}://127.0.0.1:0", handle)
        await listener.start()
        comm = await connect(listener.contact_address)
        with pytest.raises(CommClosedError):
            await comm.read()
        assert comm.closed()
        with pytest.raises(CommClosedError):
            await comm.write({"after": "close"})
        listener.stop()

    run(main())


def test_nothing_listening_fails_the_connection_within_its_timeout() -> None:
    async def main() -> None:
        listener = listen(f"{PLAIN_SCHEME}://127.0.0.1:0", lambda comm: None)
        await listener.start()
        address = listener.contact_address
        listener.stop()
        await asyncio.sleep(0.05)
        with pytest.raises(OSError, match="Timed out trying to connect"):
            await connect(address, timeout=0.5)

    run(main())


def test_it_refuses_plain_text_where_encryption_is_required() -> None:
    async def main() -> None:
        with pytest.raises(RuntimeError, match="encryption required"):
            await connect(f"{PLAIN_SCHEME}://127.0.0.1:9", require_encryption=True)

    run(main())


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(
        st.lists(st.sampled_from([0, 1, 7, 100, 16 * 1024 - 1, 16 * 1024, 70_000]), max_size=5),
        min_size=1,
        max_size=4,
    ),
    cuts=st.lists(st.integers(1, 90_000), max_size=40),
)
def test_the_framing_reassembles_messages_however_the_bytes_are_split(
    lengths: list[list[int]], cuts: list[int]
) -> None:
    """Messages in Dask's ``pack_frames`` layout, received in arbitrary pieces (each piece no
    larger than the buffer the connection offers), come out frame for frame."""
    rng = np.random.default_rng(len(cuts))
    messages = [[rng.bytes(n) for n in message] for message in lengths]
    stream = b"".join(pack_frames_prelude(m) + b"".join(m) for m in messages)
    connection = asyncio_comm._Connection()
    position, pieces = 0, iter(cuts)
    while position < len(stream):
        buffer = connection.get_buffer(-1)
        size = min(next(pieces, 1 << 30), len(buffer), len(stream) - position)
        buffer[:size] = stream[position : position + size]
        connection.buffer_updated(size)
        position += size

    async def read_all() -> list[list[bytes]]:
        return [[bytes(f) for f in await connection.next_message()] for _ in messages]

    assert run(read_all()) == messages


def _tcp_pair() -> tuple[socket.socket, socket.socket]:
    """Two connected TCP sockets on loopback (``socketpair`` makes Unix ones)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        ours = socket.create_connection(server.getsockname())
        theirs, _ = server.accept()
    return ours, theirs


@pytest.mark.skipif(not asyncio_comm._LOW_WATER, reason="SO_RCVLOWAT with epoll: Linux")
def test_the_socket_wakes_its_reader_only_once_the_rest_of_a_long_frame_has_come() -> None:
    """While a long frame arrives, the receiving socket's low-water mark is what is left of it
    (so the event loop wakes once, not for every 64 KiB the kernel copied; bytes already
    queued wait for the rest); after it, 1."""
    frame = bytes(range(256)) * 4000  # 1,024,000 bytes
    sent_first = 100_000

    async def main() -> tuple[list[int], list[bytes]]:
        loop = asyncio.get_running_loop()
        ours, theirs = _tcp_pair()
        _transport, connection = await loop.create_connection(asyncio_comm._Connection, sock=ours)
        stream = pack_frames_prelude([b"head", frame]) + b"head" + frame
        theirs.sendall(stream[: len(stream) - len(frame) + sent_first])
        while connection._own is None:  # its first bytes came with the prelude
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # the rest of what was sent is queued on the socket
        low_water = ours.getsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT)
        marks = [len(frame) - connection._own_filled - low_water]
        theirs.sendall(stream[len(stream) - len(frame) + sent_first :])
        frames = await connection.next_message()
        marks.append(ours.getsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT))
        theirs.close()
        return marks, [bytes(f) for f in frames]

    marks, frames = run(main())
    assert frames == [b"head", frame]
    assert marks == [0, 1]  # the rest of the frame; then 1 again
