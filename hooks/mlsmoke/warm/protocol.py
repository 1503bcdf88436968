"""Messages between a hook and the warm worker: one JSON object a line, over a Unix
socket, with file descriptors passed alongside (SCM_RIGHTS)."""

from __future__ import annotations

import array
import json
import socket
from typing import Any

MAX_FDS = 8
_CHUNK = 65536


class Connection:
    """A socket read and written as JSON lines; ``receive`` returns None at its end."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = b""
        self._fds: list[int] = []

    def send(self, message: dict[str, Any], fds: list[int] | None = None) -> None:
        data = (json.dumps(message) + "\n").encode()
        if fds:
            ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
            sent = self.sock.sendmsg([data], ancillary)
            data = data[sent:]
        self.sock.sendall(data)

    def receive(self) -> dict[str, Any] | None:
        """The next message (None when the other side is gone)."""
        while b"\n" not in self._buffer:
            if not self.fill():
                return None
        return self.pop()

    def fill(self) -> bool:
        """Read what is there (blocking for some); False at the end of the stream."""
        try:
            data, ancillary, _, _ = self.sock.recvmsg(
                _CHUNK, socket.CMSG_SPACE(MAX_FDS * array.array("i").itemsize)
            )
        except (ConnectionError, OSError):
            return False
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds = array.array("i")
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
                self._fds += list(fds)
        self._buffer += data
        return bool(data)

    def pop(self) -> dict[str, Any] | None:
        """A complete message already read, if there is one."""
        line, newline, rest = self._buffer.partition(b"\n")
        if not newline:
            return None
        self._buffer = rest
        try:
            message = json.loads(line)
        except ValueError:
            return {}
        return message if isinstance(message, dict) else {}

    def take_fds(self) -> list[int]:
        fds, self._fds = self._fds, []
        return fds

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
