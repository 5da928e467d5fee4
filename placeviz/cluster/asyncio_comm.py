"""A Dask comm on asyncio's sockets, for a cluster's connections when TLS is off.

Dask's TCP comm reads and writes through Tornado's IOStream, which costs most of a small
message's trip: a round trip between two processes on this machine took ~330 us over it,
~190 us over this comm, ~110 us over bare asyncio streams. A distributed step sends about ten
messages one after another (the step, tensors, control tokens, the replies), so the transport's
latency was most of what a cluster step cost beyond TensorFlow's.

Only the transport is new. Dask's handshake, serialization (``to_frames``/``from_frames``),
rpc, handlers and connection pools run on it unchanged, and a message on the wire is Dask's
``pack_frames`` layout: the number of frames, each frame's length, the frames. Dask finds the
backend by its entry point (``distributed.comm.backends``) in any process that meets an
address of its scheme. TLS stays on Dask's own comm (``security.scheme``).
"""

from __future__ import annotations

import asyncio
import collections
import socket
import struct
import sys
import types
import typing
import weakref
from typing import Any

import dask
from dask.utils import parse_bytes
from distributed.comm.addressing import parse_host_port, unparse_host_port
from distributed.comm.core import BaseListener, Comm, CommClosedError, Connector
from distributed.comm.tcp import BaseTCPBackend, RequireEncryptionMixin, set_tcp_timeout
from distributed.comm.utils import ensure_concrete_host, from_frames, to_frames
from distributed.protocol.utils import host_array, pack_frames_prelude
from distributed.utils import ensure_memoryview
from tornado.netutil import bind_sockets

from placeviz.cluster.security import PLAIN_SCHEME

_PREFIX = f"{PLAIN_SCHEME}://"
_COUNT = struct.Struct("Q")  # pack_frames_prelude's: native byte order
_STAGING = 64 * 1024  # bytes a connection receives into at once
_OWN_BUFFER = 16 * 1024  # a frame this long is received straight into a buffer of its own
_QUEUED = 64  # messages received but not yet read, beyond which the connection stops reading
_WRITE_HIGH = 4 * 1024 * 1024  # bytes waiting to be sent before a writer waits for them
_LOW_WATER = sys.platform == "linux"  # epoll honours a TCP socket's SO_RCVLOWAT


class _Connection(asyncio.BufferedProtocol):
    """One socket's messages: received into a staging buffer, a long frame straight into its
    own buffer (no copy after the kernel's); sent with the transport's own buffering."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._staging = memoryview(bytearray(_STAGING))
        self._start = 0  # unparsed bytes: staging[start:end]
        self._end = 0
        self._lengths: tuple[int, ...] | None = None  # of the frames of the message under way
        self._frames: list[Any] = []  # its frames received so far
        self._own: memoryview | None = None  # the long frame being received into its buffer
        self._own_filled = 0
        self._messages: collections.deque[list[Any]] = collections.deque()
        self._reading: asyncio.Future[None] | None = None  # a reader waiting for a message
        self._draining: asyncio.Future[None] | None = None  # a writer waiting (flow control)
        self._reading_paused = False
        self.on_made: Any = None  # called with this connection once it is made (a listener's)
        self._socket: Any = None
        self._low_water = 1  # the socket's SO_RCVLOWAT

    # -- asyncio's side ------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = typing.cast(asyncio.Transport, transport)  # uvloop's: not a subclass
        self.transport.set_write_buffer_limits(high=_WRITE_HIGH)
        sock = self._socket = transport.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        set_tcp_timeout(types.SimpleNamespace(socket=sock, closed=lambda: False))  # Dask's
        if self.on_made is not None:
            self.on_made(self)

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._own is not None:
            return self._own[self._own_filled :]
        if len(self._staging) - self._end < _OWN_BUFFER:
            self._make_room()
        return self._staging[self._end :]

    def buffer_updated(self, nbytes: int) -> None:
        if self._own is None:
            self._end += nbytes
        else:
            self._own_filled += nbytes
            if self._own_filled < len(self._own):
                self._wake_when_received(len(self._own) - self._own_filled)
                return
            self._frames.append(self._own)
            self._own = None
            self._wake_when_received(1)
        self._parse()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        for waiter in (self._reading, self._draining):
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def pause_writing(self) -> None:
        self._draining = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        draining, self._draining = self._draining, None
        if draining is not None and not draining.done():
            draining.set_result(None)

    # -- receiving -----------------------------------------------------------------------
    def _make_room(self) -> None:
        """Move the unparsed bytes to the front of the staging buffer, into a larger one when
        they nearly fill it (a message of very many frames)."""
        unparsed = self._end - self._start
        staging = self._staging
        if unparsed > len(staging) - _OWN_BUFFER:
            self._staging = memoryview(bytearray(2 * len(staging)))
        self._staging[:unparsed] = staging[self._start : self._end]
        self._start, self._end = 0, unparsed

    def _parse(self) -> None:
        """Take every complete frame out of the staging buffer; a long frame not yet complete
        gets its own buffer, which the rest of it is received into."""
        staging = self._staging
        while True:
            available = self._end - self._start
            if self._lengths is None:
                if available < _COUNT.size:
                    return
                (count,) = _COUNT.unpack_from(staging, self._start)
                prelude = _COUNT.size * (count + 1)
                if available < prelude:
                    return
                self._lengths = struct.unpack_from(f"{count}Q", staging, self._start + _COUNT.size)
                self._start += prelude
                continue
            if len(self._frames) == len(self._lengths):
                self._deliver(self._frames)
                self._lengths, self._frames = None, []
                continue
            length = self._lengths[len(self._frames)]
            if length >= _OWN_BUFFER and available < length:
                own = host_array(length)
                own[:available] = staging[self._start : self._end]
                self._start = self._end = 0
                self._own, self._own_filled = own, available
                self._wake_when_received(length - available)
                return
            if available < length:
                return
            # writable, as Dask's comm gives them (a small array received is writable too)
            self._frames.append(bytearray(staging[self._start : self._start + length]))
            self._start += length
            if self._start == self._end:
                self._start = self._end = 0

    def _wake_when_received(self, nbytes: int) -> None:
        """Have the event loop told the socket is readable only once ``nbytes`` have come (or
        the receive window is nearly full; Linux caps the mark at half its largest receive
        buffer): a long frame arrives in a read or a few, not in a loop iteration for every
        64 KiB the sender's kernel copied. 1 MB took 2 reads rather than 7."""
        if _LOW_WATER and nbytes != self._low_water and self._socket is not None:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, nbytes)
            self._low_water = nbytes

    def _deliver(self, frames: list[Any]) -> None:
        self._messages.append(frames)
        if len(self._messages) >= _QUEUED and not self._reading_paused:
            assert self.transport is not None
            self.transport.pause_reading()
            self._reading_paused = True
        reading, self._reading = self._reading, None
        if reading is not None and not reading.done():
            reading.set_result(None)

    async def next_message(self) -> list[Any]:
        while not self._messages:
            if self.closed:
                raise CommClosedError("the connection closed")
            self._reading = asyncio.get_running_loop().create_future()
            await self._reading
        frames = self._messages.popleft()
        if self._reading_paused and len(self._messages) < _QUEUED // 2:
            assert self.transport is not None
            self.transport.resume_reading()
            self._reading_paused = False
        return frames

    # -- sending -------------------------------------------------------------------------
    async def send(self, frames: list[Any]) -> int:
        """Hand ``frames`` to the transport as one message: the prelude and runs of short
        frames joined, each long frame as it is (not joined); wait only while more than
        ``_WRITE_HIGH`` bytes are still unsent."""
        transport = self.transport
        if self.closed or transport is None or transport.is_closing():
            raise CommClosedError("the connection closed")
        pieces: list[Any] = []
        short: list[Any] = [pack_frames_prelude(frames)]
        for frame in frames:
            view = ensure_memoryview(frame)
            if view.nbytes < _OWN_BUFFER:
                short.append(view)
                continue
            pieces.append(b"".join(short))
            pieces.append(view)
            short = []
        if short:
            pieces.append(b"".join(short))
        for piece in pieces:
            transport.write(piece)
        if self._draining is not None:
            await self._draining
            if self.closed:
                raise CommClosedError("the connection closed while sending")
        return sum(map(len, pieces))  # bytes, or memoryviews of single bytes


class AsyncioComm(Comm):
    """A Dask comm over one ``_Connection``."""

    def __init__(self, connection: _Connection, local: str, peer: str, deserialize: bool) -> None:
        super().__init__(deserialize=deserialize)
        self._connection = connection
        self._local_addr = local  # the names Dask's connect() reads
        self._peer_addr = peer
        self._shard = parse_bytes(dask.config.get("distributed.comm.shard"))
        transport = connection.transport
        assert transport is not None
        self._finalizer = weakref.finalize(self, transport.abort)  # a comm dropped unclosed

    @property
    def local_address(self) -> str:
        return self._local_addr

    @property
    def peer_address(self) -> str:
        return self._peer_addr

    async def read(self, deserializers: Any = None) -> Any:
        try:
            frames = await self._connection.next_message()
        except CommClosedError as error:
            raise CommClosedError(f"in {self}: {error}") from None
        try:
            return await from_frames(
                frames,
                deserialize=self.deserialize,
                deserializers=deserializers,
                allow_offload=self.allow_offload,
            )
        except EOFError:
            self.abort()
            raise CommClosedError(f"in {self}: a truncated message") from None

    async def write(self, msg: Any, serializers: Any = None, on_error: str = "message") -> int:
        frames = await to_frames(
            msg,
            allow_offload=self.allow_offload,
            serializers=serializers,
            on_error=on_error,
            context={
                "sender": self.local_info,
                "recipient": self.remote_info,
                **self.handshake_options,
            },
            frame_split_size=self._shard,
        )
        try:
            return await self._connection.send(frames)
        except CommClosedError as error:
            raise CommClosedError(f"in {self}: {error}") from None

    async def close(self) -> None:
        """Close once what was written has gone (the transport sends its buffer first)."""
        self._finalizer.detach()
        transport = self._connection.transport
        if transport is not None and not transport.is_closing():
            transport.close()
        self._connection.closed = True

    def abort(self) -> None:
        self._finalizer.detach()
        transport = self._connection.transport
        if transport is not None:
            transport.abort()
        self._connection.closed = True

    def closed(self) -> bool:
        return self._connection.closed


def _address_of(sock_name: Any) -> str:
    return _PREFIX + unparse_host_port(*sock_name[:2])


class AsyncioConnector(Connector, RequireEncryptionMixin):
    prefix, encrypted = _PREFIX, False  # what Dask's encryption check reads

    async def connect(self, address: str, deserialize: bool = True, **connection_args: Any) -> Comm:
        self._check_encryption(address, connection_args)
        host, port = parse_host_port(address)
        loop = asyncio.get_running_loop()
        try:
            transport, connection = await loop.create_connection(_Connection, host, port)
        except OSError as error:  # refused, unreachable: Dask's connect() tries again
            raise CommClosedError(f"connecting to {_PREFIX}{address}: {error}") from error
        local = _address_of(transport.get_extra_info("sockname"))
        return AsyncioComm(connection, local, _PREFIX + address, deserialize)


class AsyncioListener(BaseListener, RequireEncryptionMixin):
    """Accepts connections on one port (every address family of its host), hands each to
    Dask's handshake and then to ``comm_handler``."""

    prefix, encrypted = _PREFIX, False  # Dask's worker names its address with the prefix

    def __init__(
        self,
        address: str,
        comm_handler: Any,
        deserialize: bool = True,
        allow_offload: bool = True,
        default_host: str | None = None,
        default_port: int = 0,
        **connection_args: Any,
    ) -> None:
        super().__init__()
        self._check_encryption(address, connection_args)
        self.ip, self.port = parse_host_port(address, default_port)
        self.comm_handler = comm_handler
        self.deserialize = deserialize
        self.allow_offload = allow_offload
        self.default_host = default_host
        self._servers: list[asyncio.AbstractServer] = []
        self._sockets: list[socket.socket] = []
        self._handling: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        backlog = int(dask.config.get("distributed.comm.socket-backlog"))
        # Tornado's binder gives every address family of the host the same port, also port 0.
        self._sockets = bind_sockets(self.port, address=self.ip or None, backlog=backlog)
        for sock in self._sockets:
            self._servers.append(await loop.create_server(self._accepted, sock=sock))

    def _accepted(self) -> _Connection:
        connection = _Connection()
        connection.on_made = self._made
        return connection

    def _made(self, connection: _Connection) -> None:
        task = asyncio.ensure_future(self._handle(connection))
        self._handling.add(task)
        task.add_done_callback(self._handling.discard)

    async def _handle(self, connection: _Connection) -> None:
        transport = connection.transport
        assert transport is not None
        if not self._servers:  # stopped after accepting it: no handshake would answer
            transport.abort()
            return
        local = _address_of(transport.get_extra_info("sockname"))
        comm = AsyncioComm(
            connection, local, _address_of(transport.get_extra_info("peername")), self.deserialize
        )
        comm.allow_offload = self.allow_offload
        try:
            await self.on_connection(comm)
        except CommClosedError:
            return
        await self.comm_handler(comm)

    def stop(self) -> None:
        servers, self._servers = self._servers, []
        for server in servers:
            server.close()

    def get_host_port(self) -> tuple[str, int]:
        if not self._sockets:
            raise ValueError("invalid operation on a listener that has not started")
        return self._sockets[0].getsockname()[:2]

    @property
    def listen_address(self) -> str:
        return _PREFIX + unparse_host_port(*self.get_host_port())

    @property
    def contact_address(self) -> str:
        host, port = self.get_host_port()
        return _PREFIX + unparse_host_port(ensure_concrete_host(host, self.default_host), port)


class AsyncioBackend(BaseTCPBackend):
    """What Dask's comm registry asks of a backend; addresses are handled as Dask's TCP's."""

    _connector_class = AsyncioConnector
    _listener_class = AsyncioListener
